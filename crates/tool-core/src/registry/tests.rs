use super::*;
use crate::{schema_for, Surface};
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// A test tool that records how many of its calls overlap.
struct Probe {
    name: &'static str,
    tier: Tier,
    parallel_safe: bool,
    running: AtomicUsize,
    max_running: AtomicUsize,
}

impl Probe {
    fn new(name: &'static str, tier: Tier, parallel_safe: bool) -> Arc<Self> {
        Arc::new(Probe {
            name,
            tier,
            parallel_safe,
            running: AtomicUsize::new(0),
            max_running: AtomicUsize::new(0),
        })
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoArgs {}

#[async_trait]
impl Tool for Probe {
    fn spec(&self) -> ToolSpec {
        let mut s = ToolSpec::new(self.name, "probe", self.tier, schema_for::<NoArgs>());
        s.parallel_safe = self.parallel_safe;
        s
    }
    async fn call(&self, _cx: &CallContext, _args: Value) -> Result<ToolOutput, ToolError> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_running.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(100)).await;
        self.running.fetch_sub(1, Ordering::SeqCst);
        Ok(ToolOutput::text(self.name))
    }
}

struct Deny;
#[async_trait]
impl Approver for Deny {
    async fn approve(&self, _r: &ApprovalRequest) -> Approval {
        Approval::Denied {
            reason: "not today".into(),
        }
    }
}

fn registry() -> Registry {
    let r = Registry::new();
    r.register(Probe::new("look", Tier::Read, true)).unwrap();
    r.register(Probe::new("edit", Tier::Write, true)).unwrap();
    r.register(Probe::new("run", Tier::Exec, false)).unwrap();
    r
}

#[tokio::test]
async fn read_only_surface_sees_and_calls_only_read_tools() {
    let r = registry();
    r.set_approver(Some(Arc::new(AllowAll)));
    let names: Vec<_> = r
        .specs(Surface::READ_ONLY)
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["look"]);
    assert_eq!(r.specs(Surface::FULL).len(), 3);

    let hidden = r
        .call(Surface::READ_ONLY, "edit", json!({}), CallContext::new())
        .await
        .unwrap_err();
    let unknown = r
        .call(Surface::READ_ONLY, "nosuch", json!({}), CallContext::new())
        .await
        .unwrap_err();
    // Same words apart from the name itself.
    assert_eq!(
        hidden.to_string().replace("`edit`", "`X`"),
        unknown.to_string().replace("`nosuch`", "`X`")
    );
    assert!(hidden.to_string().starts_with("unknown tool"));
}

#[tokio::test]
async fn write_tools_need_an_approver_and_its_yes() {
    let r = registry();
    let err = r
        .call(Surface::FULL, "edit", json!({}), CallContext::new())
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::Refused(_)));
    expect_test::expect!["refused: `edit` is a write tool and needs approval, but no approver is attached to this run; ask the operator to attach one or use a read-tier tool"].assert_eq(&err.to_string());

    r.set_approver(Some(Arc::new(Deny)));
    let err = r
        .call(Surface::FULL, "edit", json!({}), CallContext::new())
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("denied `edit`: not today"),
        "{err}"
    );

    // Read tools never ask.
    assert!(r
        .call(Surface::FULL, "look", json!({}), CallContext::new())
        .await
        .is_ok());

    r.set_approver(Some(Arc::new(AllowAll)));
    assert!(r
        .call(Surface::FULL, "edit", json!({}), CallContext::new())
        .await
        .is_ok());
}

#[tokio::test]
async fn serial_tools_never_overlap_parallel_ones_do() {
    let r = Registry::new();
    let serial = Probe::new("serial", Tier::Read, false);
    let parallel = Probe::new("parallel", Tier::Read, true);
    r.register(serial.clone()).unwrap();
    r.register(parallel.clone()).unwrap();
    let mut calls = Vec::new();
    for name in [
        "serial", "serial", "serial", "parallel", "parallel", "parallel",
    ] {
        let r = r.clone();
        calls.push(tokio::spawn(async move {
            r.call(Surface::FULL, name, json!({}), CallContext::new())
                .await
        }));
    }
    for c in calls {
        c.await.unwrap().unwrap();
    }
    assert_eq!(serial.max_running.load(Ordering::SeqCst), 1);
    assert!(parallel.max_running.load(Ordering::SeqCst) >= 2);
}

#[tokio::test]
async fn tools_come_and_go_while_the_run_goes_on() {
    let r = registry();
    assert!(r.register(Probe::new("look", Tier::Read, true)).is_err());
    r.unregister("look").unwrap();
    assert!(r.specs(Surface::FULL).iter().all(|s| s.name != "look"));
    let err = r
        .call(Surface::FULL, "look", json!({}), CallContext::new())
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::UnknownTool { .. }));
    r.register(Probe::new("look", Tier::Read, true)).unwrap();
    assert!(r.contains("look"));
}

#[tokio::test]
async fn the_tool_sees_the_surface_and_registry_it_was_called_through() {
    struct Bridge;
    #[async_trait]
    impl Tool for Bridge {
        fn spec(&self) -> ToolSpec {
            ToolSpec::new("bridge", "b", Tier::Read, schema_for::<NoArgs>())
        }
        async fn call(&self, cx: &CallContext, _a: Value) -> Result<ToolOutput, ToolError> {
            assert_eq!(cx.call_stack, ["bridge"]);
            let r = cx.registry().expect("bound");
            // A nested call keeps the caller's surface: `edit` stays hidden.
            r.call(cx.surface(), "edit", json!({}), cx.nested()).await
        }
    }
    let r = registry();
    r.set_approver(Some(Arc::new(AllowAll)));
    r.register(Arc::new(Bridge)).unwrap();
    let err = r
        .call(Surface::READ_ONLY, "bridge", json!({}), CallContext::new())
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::UnknownTool { .. }), "{err}");
}

use crate::notices::mask_ages as without_ages;

#[tokio::test]
async fn a_posted_notice_rides_on_the_next_result_of_any_tool_once() {
    let r = registry();
    let board = r.notices();
    board.post(
        "vibe",
        crate::NoticeLevel::Info,
        "w1 \"tests\" done: all pass",
    );
    let out = r
        .call(Surface::READ_ONLY, "look", json!({}), CallContext::new())
        .await
        .unwrap();
    expect_test::expect![[r#"
        look
        --- 1 notice from elsewhere in this run (not part of this result) ---
        [vibe info, …] w1 "tests" done: all pass"#]]
    .assert_eq(&without_ages(&out.joined_text()));
    let again = r
        .call(Surface::READ_ONLY, "look", json!({}), CallContext::new())
        .await
        .unwrap();
    assert_eq!(again.joined_text(), "look", "delivered once");
}

#[tokio::test]
async fn a_bridged_call_and_a_failed_call_leave_the_notice_for_the_next_result() {
    struct Bridge;
    #[async_trait]
    impl Tool for Bridge {
        fn spec(&self) -> ToolSpec {
            ToolSpec::new("bridge", "b", Tier::Read, schema_for::<NoArgs>())
        }
        async fn call(&self, cx: &CallContext, _a: Value) -> Result<ToolOutput, ToolError> {
            let r = cx.registry().expect("bound");
            // The tool posts through its call's handle.
            cx.notices().expect("bound").post(
                "bridge",
                crate::NoticeLevel::Warning,
                "posted mid-call",
            );
            let inner = r.call(cx.surface(), "look", json!({}), cx.nested()).await?;
            Ok(ToolOutput::text(format!(
                "inner said: {}",
                inner.joined_text()
            )))
        }
    }
    let r = registry();
    r.register(Arc::new(Bridge)).unwrap();
    // Refused (no approver): the notice stays pending.
    r.notices()
        .post("vibe", crate::NoticeLevel::Info, "before the refusal");
    r.call(Surface::FULL, "edit", json!({}), CallContext::new())
        .await
        .unwrap_err();
    let out = r
        .call(Surface::READ_ONLY, "bridge", json!({}), CallContext::new())
        .await
        .unwrap();
    expect_test::expect![[r#"
        inner said: look
        --- 2 notices from elsewhere in this run (not part of this result) ---
        [vibe info, …] before the refusal
        [bridge warning, …] posted mid-call"#]]
    .assert_eq(&without_ages(&out.joined_text()));
}
