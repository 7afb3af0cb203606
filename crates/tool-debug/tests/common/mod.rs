//! Shared setup of the integration tests: a temporary copy of a fixture
//! project as the workspace, a supervisor whose PATH has the fixtures, and a
//! `call` that returns the answer's text.
#![allow(dead_code)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tool_core::{CallContext, Tool, ToolError, ToolOutput, Workspace};
use tool_debug::{DebugConfig, DebugSupervisor, DebugTool};

pub(crate) fn fixture(name: &str) -> PathBuf {
    test_support::project::fixture("debug", name)
}

/// A temporary copy of `tests/fixtures/debug/<name>`.
pub(crate) fn copy_fixture(name: &str) -> tempfile::TempDir {
    test_support::project::copy_fixture("debug", name)
}

/// The config every test uses: the fixtures on PATH, Go offline.
pub(crate) fn config() -> DebugConfig {
    DebugConfig {
        search_path: Some(test_support::fixtures::path_env()),
        env: vec![
            ("GOPROXY".into(), "off".into()),
            ("GOFLAGS".into(), "-mod=mod".into()),
            ("GOTOOLCHAIN".into(), "local".into()),
        ],
        default_wait: Duration::from_secs(30),
        ..DebugConfig::default()
    }
}

pub(crate) struct Bench {
    /// The workspace root, shown as `<root>` in snapshots.
    pub root: PathBuf,
    pub supervisor: Arc<DebugSupervisor>,
    pub tool: DebugTool,
    pub conversation: String,
}

pub(crate) fn bench(root: &Path, cfg: DebugConfig) -> Bench {
    let supervisor = DebugSupervisor::new(cfg);
    let conversation = "conversation-1".to_string();
    let tool = supervisor.tool(Workspace::new(root).unwrap(), &conversation);
    Bench {
        root: root.to_path_buf(),
        supervisor,
        tool,
        conversation,
    }
}

impl Bench {
    pub(crate) async fn try_call(&self, args: Value) -> Result<ToolOutput, ToolError> {
        let r = tokio::time::timeout(
            Duration::from_secs(150),
            self.tool.call(&CallContext::new(), args.clone()),
        )
        .await
        .unwrap_or_else(|_| panic!("debug call {args} hung"));
        match &r {
            Ok(out) => eprintln!("--> {args}\n{}\n", out.joined_text()),
            Err(e) => eprintln!("--> {args}\nERR {e}\n"),
        }
        r
    }

    pub(crate) async fn call(&self, args: Value) -> (String, Value) {
        let out = self
            .try_call(args.clone())
            .await
            .unwrap_or_else(|e| panic!("{args} failed: {e}"));
        (out.joined_text(), out.structured.unwrap_or(Value::Null))
    }

    pub(crate) async fn err(&self, args: Value) -> ToolError {
        match self.try_call(args.clone()).await {
            Ok(out) => panic!("{args} should fail, got:\n{}", out.joined_text()),
            Err(e) => e,
        }
    }

    /// Every process of the session, recorded before it ends.
    pub(crate) async fn processes(&self) -> Vec<u32> {
        self.supervisor.live_processes(&self.conversation).await
    }
}

/// `text` with the workspace root (and its canonical form) as `<root>`, so a
/// snapshot does not depend on where the temporary copy was made.
pub(crate) fn normalized(b: &Bench, text: &str) -> String {
    let mut out = text.to_string();
    let canonical = b.root.canonicalize().unwrap_or_else(|_| b.root.clone());
    for root in [canonical, b.root.clone()] {
        out = out.replace(root.to_str().expect("a UTF-8 root"), "<root>");
    }
    out
}

/// Check model-facing text against its snapshot, the root normalized.
pub(crate) fn check(b: &Bench, text: &str, expected: expect_test::Expect) {
    expected.assert_eq(&normalized(b, text));
}

/// Wait (bounded) until none of `pids` is alive; false if one survived.
pub(crate) async fn all_gone(pids: &[u32]) -> bool {
    for _ in 0..150 {
        if pids.iter().all(|p| !tool_core::process::pid_alive(*p)) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    eprintln!(
        "alive: {:?}",
        pids.iter()
            .filter(|p| tool_core::process::pid_alive(**p))
            .collect::<Vec<_>>()
    );
    false
}

/// Assert the session's adapter group and recorded processes are all dead.
pub(crate) async fn assert_no_orphans(b: &Bench, recorded: &[u32]) {
    assert!(all_gone(recorded).await, "a debug process survived");
    if let Some(pid) = b.supervisor.adapter_pid(&b.conversation).await {
        assert!(
            tool_core::process::group_members(pid).is_empty(),
            "the adapter's process group is not empty"
        );
    }
    assert!(
        b.processes().await.is_empty(),
        "the session still has live processes"
    );
}

/// The `frame_id` of the first frame of a structured stack answer.
pub(crate) fn first_frame(stack: &Value) -> u64 {
    stack["frames"][0]["frame_id"].as_u64().expect("a frame id")
}

/// `text` with the run of `part` characters after each `before` replaced
/// by `with`.
pub(crate) fn masked_after(text: &str, before: &str, with: &str, part: fn(char) -> bool) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(before) {
        let (head, tail) = rest.split_at(at + before.len());
        out.push_str(head);
        let n = tail.chars().take_while(|c| part(*c)).count();
        if n > 0 {
            out.push_str(with);
        }
        rest = &tail[n..];
    }
    out.push_str(rest);
    out
}

/// `text` with the number after each `before` replaced by `with`
/// (`thread 4242` → `thread N`): ids the OS or the adapter hand out.
pub(crate) fn masked_numbers(text: &str, before: &str, with: &str) -> String {
    masked_after(text, before, with, |c| c.is_ascii_digit())
}

/// Model-facing text as a snapshot shows it: the root as `<root>`, the
/// fixtures' folder as `<fixtures>`, the checkout as `<checkout>`, thread
/// ids as `N`, pids as `PID`, debugpy's version as `VERSION`, and lines
/// without trailing spaces.
pub(crate) fn masked(b: &Bench, text: &str) -> String {
    let text = normalized(b, text)
        .replace(
            &test_support::fixtures::dir().display().to_string(),
            "<fixtures>",
        )
        .replace(
            &test_support::fixtures::workspace_root()
                .display()
                .to_string(),
            "<checkout>",
        );
    let text = masked_numbers(&text, "thread ", "N");
    let text = masked_numbers(&text, "pid ", "PID");
    let text = masked_after(&text, "debugpy ", "VERSION", |c| {
        c.is_ascii_digit() || c == '.'
    });
    text.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
}

/// An adapter's lines in an `adapters` answer: its own and the indented
/// ones under it (the other adapters' depend on what the machine has).
pub(crate) fn adapter_lines(text: &str, adapter: &str) -> String {
    let own = format!("{adapter} ");
    let lines: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with(&own))
        .take_while(|l| l.starts_with(&own) || l.starts_with(' '))
        .collect();
    lines.join("\n")
}

/// `status` with no session and no breakpoint: what each adapter's
/// exception filters are, as announced when tested.
pub(crate) async fn assert_status_without_session(b: &Bench) {
    let (text, _) = b.call(serde_json::json!({"op": "status"})).await;
    expect_test::expect![[r#"
        debug status  no session; 0 breakpoints set
        launch a program to start one
        debugpy: exception filters (as the adapter announced when tested): raised, uncaught (on by default), userUnhandled
        lldb: exception filters (as the adapter announced when tested): cpp_catch, cpp_throw, objc_catch, objc_throw, swift_catch, swift_throw
        delve: exception filters (as the adapter announced when tested): unrecovered-panic (on by default), runtime-fatal-throw (on by default)
        node: exception filters (as the adapter announced when tested): all, uncaught (on by default)
        java: exception filters (as the adapter announced when tested): caught, uncaught (on by default)"#]].assert_eq(&text);
}
