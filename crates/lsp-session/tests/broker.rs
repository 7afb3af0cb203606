//! The shared-server broker with a real basedpyright: runs attached to one
//! broker share one server process, answer as a private server does, keep
//! answering when one of them goes, never see another run's speculative
//! text, and the server ends within the idle timeout after the last run.

use lsp_session::broker::{Broker, BrokerPaths, BrokerRoute};
use lsp_session::client::{LspClient, StartSpec};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use test_support::{fixtures, project};
use tool_core::Workspace;

const SOURCE: &str = "def greet(name: str) -> str:\n    return name\n\n\nx = greet('a')\n";

/// A server, a project for it, and the hover on `greet` in a call.
struct Case {
    programs: &'static [&'static str],
    args: &'static [&'static str],
    files: &'static [(&'static str, &'static str)],
    file: &'static str,
    language_id: &'static str,
    /// The hover's position (0-based line, character).
    at: (u32, u32),
    /// What the hover shows once the server has indexed.
    expect: &'static str,
}

const PYTHON: Case = Case {
    programs: &["basedpyright-langserver"],
    args: &["--stdio"],
    files: &[("pyproject.toml", ""), ("a.py", SOURCE)],
    file: "a.py",
    language_id: "python",
    at: (4, 5),
    expect: "def greet(name: str) -> str",
};

const TYPESCRIPT: Case = Case {
    programs: &["typescript-language-server"],
    args: &["--stdio"],
    files: &[
        ("tsconfig.json", "{\"compilerOptions\": {\"strict\": true}}\n"),
        (
            "a.ts",
            "export function greet(name: string): string {\n  return name;\n}\n\nexport const x = greet(\"a\");\n",
        ),
    ],
    file: "a.ts",
    language_id: "typescript",
    at: (4, 17),
    expect: "function greet(name: string): string",
};

const RUST: Case = Case {
    programs: &["rust-analyzer"],
    args: &[],
    files: &[
        (
            "Cargo.toml",
            "[package]\nname = \"shared\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        ),
        (
            "src/lib.rs",
            "pub fn greet(name: &str) -> String {\n    name.to_string()\n}\n\npub fn x() -> String { greet(\"a\") }\n",
        ),
    ],
    file: "src/lib.rs",
    language_id: "rust",
    at: (4, 24),
    expect: "pub fn greet(name: &str) -> String",
};

fn spec(case: &Case, program: &Path, root: &Path, broker: Option<BrokerRoute>) -> StartSpec {
    StartSpec {
        name: case.programs[0].into(),
        program: program.to_path_buf(),
        args: case.args.iter().map(|a| (*a).to_string()).collect(),
        root: root.to_path_buf(),
        workspace: Workspace::new(root).unwrap(),
        path_env: Some(fixtures::path_env()),
        initialization_options: None,
        settings: None,
        init_timeout: Duration::from_mins(1),
        started_message: None,
        settle: Duration::ZERO,
        own_dir_env: Vec::new(),
        env: Vec::new(),
        ready_probe: None,
        change_diagnostics_delay: Duration::ZERO,
        diagnosis_progress: None,
        broker,
    }
}

/// The hover at the case's position, as text, with the disk's text synced
/// first; asked again while the server is still indexing (an empty or
/// partial answer), at most two minutes.
async fn hover(case: &Case, client: &LspClient, file: &Path) -> String {
    client.sync_file(file, case.language_id).await.unwrap();
    let until = Instant::now() + Duration::from_mins(2);
    loop {
        let answer = hover_as_is(case, client, file).await;
        if answer.contains(case.expect) || Instant::now() > until {
            return answer;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The hover with whatever text the run sent last.
async fn hover_as_is(case: &Case, client: &LspClient, file: &Path) -> String {
    let uri = lsp_session::client::file_uri(file);
    let (line, character) = case.at;
    let answer = client
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
            Duration::from_mins(1),
        )
        .await
        .unwrap();
    answer["contents"]["value"]
        .as_str()
        .map_or_else(|| answer.to_string(), str::to_string)
}

async fn wait_until(what: &str, bound: Duration, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + bound;
    while !done() {
        assert!(Instant::now() < until, "{what}: not within {bound:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

struct Running {
    broker: Arc<Broker>,
    route: BrokerRoute,
    serving: tokio::task::JoinHandle<()>,
    _dir: tempfile::TempDir,
}

fn start_broker(idle: Duration) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let paths = BrokerPaths {
        dir: dir.path().join("broker"),
    };
    paths.prepare().unwrap();
    let listener = tokio::net::UnixListener::bind(paths.socket()).unwrap();
    let broker = Arc::new(Broker::default());
    let serving = tokio::spawn(broker.clone().serve(listener, Duration::from_millis(200)));
    Running {
        broker,
        route: BrokerRoute {
            paths,
            launcher: None,
            idle,
        },
        serving,
        _dir: dir,
    }
}

fn project_file(case: &Case) -> (tempfile::TempDir, PathBuf) {
    let dir = project::with_files("broker", case.files);
    let file = dir.path().join(case.file);
    (dir, file)
}

/// Four runs of `case` share one server, answer as a private server does,
/// keep answering when one goes, and the server ends after the last.
async fn four_runs_share_one_server(case: &Case) {
    let Some(program) = fixtures::require(case.programs) else {
        return;
    };
    let (dir, file) = project_file(case);
    let private = LspClient::start(spec(case, &program, dir.path(), None))
        .await
        .unwrap();
    let expected = hover(case, &private, &file).await;
    assert!(expected.contains(case.expect), "{expected}");
    let broker = start_broker(Duration::from_millis(300));

    let runs: Vec<Arc<LspClient>> =
        futures::future::join_all((0..4).map(|_| {
            LspClient::start(spec(case, &program, dir.path(), Some(broker.route.clone())))
        }))
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let pids: std::collections::BTreeSet<u32> = runs.iter().map(|r| r.pid()).collect();
    assert_eq!(pids.len(), 1, "one server for four runs: {pids:?}");
    let shared_pid = runs[0].pid();
    assert_ne!(shared_pid, private.pid());
    assert_eq!(broker.broker.servers().len(), 1);
    assert_eq!(broker.broker.servers()[0].2, 4);
    assert_eq!(runs[3].shared_runs().await, Some(4));
    for run in &runs {
        assert_eq!(hover(case, run, &file).await, expected);
    }
    private.stop().await;

    // One run goes without a word (as a killed run's socket closes): the
    // others keep answering from the same server.
    let mut runs = runs;
    drop(runs.remove(0));
    wait_until(
        "the broker sees the run go",
        Duration::from_secs(30),
        || broker.broker.servers().first().map(|s| s.2) == Some(3),
    )
    .await;
    for run in &runs {
        assert_eq!(hover(case, run, &file).await, expected);
        assert!(run.gone().is_none());
    }

    // The last run's end: the server stops after the idle timeout, and the
    // broker, with nothing left, ends.
    for run in runs {
        run.stop().await;
    }
    wait_until("the server stops", Duration::from_secs(30), || {
        !tool_core::process::pid_alive(shared_pid)
    })
    .await;
    tokio::time::timeout(Duration::from_secs(30), broker.serving)
        .await
        .expect("the broker ends with nothing to do")
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_runs_share_one_basedpyright() {
    four_runs_share_one_server(&PYTHON).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_runs_share_one_typescript_language_server() {
    four_runs_share_one_server(&TYPESCRIPT).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_runs_share_one_rust_analyzer() {
    four_runs_share_one_server(&RUST).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_preview_in_one_run_is_never_seen_by_anothers_query() {
    let case = &PYTHON;
    let Some(program) = fixtures::require(case.programs) else {
        return;
    };
    let (dir, file) = project_file(case);
    let broker = start_broker(Duration::from_millis(300));
    let a = LspClient::start(spec(case, &program, dir.path(), Some(broker.route.clone())))
        .await
        .unwrap();
    let b = Arc::new(
        LspClient::start(spec(case, &program, dir.path(), Some(broker.route.clone())))
            .await
            .unwrap(),
    );
    assert_eq!(a.pid(), b.pid());
    let on_disk = hover(case, &b, &file).await;
    assert!(on_disk.contains("name: str"), "{on_disk}");

    // A previews a text the disk does not have.
    let speculative = SOURCE.replace("name: str", "name: int");
    a.sync_text(&file, "python", speculative).await;
    let seen_by_a = hover_as_is(case, &a, &file).await;
    assert!(seen_by_a.contains("name: int"), "{seen_by_a}");

    // B's query meanwhile waits for the preview to end.
    let (b2, file2) = (b.clone(), file.clone());
    let query = tokio::spawn(async move { hover(case, &b2, &file2).await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!query.is_finished(), "B was answered during A's preview");
    // The broker's own question (status) is not held up by the preview.
    assert_eq!(b.shared_runs().await, Some(2));
    a.sync_file(&file, "python").await.unwrap();
    let seen_by_b: String = tokio::time::timeout(Duration::from_mins(1), query)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(seen_by_b, on_disk);
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_crash_is_told_to_every_run_and_the_next_start_is_shared_again() {
    let case = &PYTHON;
    let Some(program) = fixtures::require(case.programs) else {
        return;
    };
    let (dir, file) = project_file(case);
    let broker = start_broker(Duration::from_secs(5));
    let start = || LspClient::start(spec(case, &program, dir.path(), Some(broker.route.clone())));
    let (a, b) = (start().await.unwrap(), start().await.unwrap());
    let pid = a.pid();
    assert_eq!(b.pid(), pid);
    tool_core::process::signals::send_group(pid, tool_core::process::Signal::Kill).unwrap();
    wait_until(
        "both runs see the server go",
        Duration::from_secs(30),
        || a.gone().is_some() && b.gone().is_some(),
    )
    .await;
    for run in [&a, &b] {
        let why = run.gone().unwrap();
        assert!(why.starts_with("the shared server ended ("), "{why}");
        assert!(run.crashed() && !run.broker_lost());
    }
    // The runs' restarts: one new server for both.
    let (c, d) = (start().await.unwrap(), start().await.unwrap());
    assert_ne!(c.pid(), pid);
    assert_eq!(c.pid(), d.pid());
    assert!(hover(case, &d, &file).await.contains(case.expect));
    c.stop().await;
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_run_attaches_to_a_server_that_said_it_started_before_it_came() {
    // biome is taken as started only once it logs so: a run that attaches
    // later gets that message replayed.
    let case = Case {
        programs: &["biome"],
        args: &["lsp-proxy"],
        files: &[("biome.json", "{}\n"), ("a.js", "let x = 1;\n")],
        file: "a.js",
        language_id: "javascript",
        at: (0, 4),
        expect: "",
    };
    let Some(program) = fixtures::require(case.programs) else {
        return;
    };
    let (dir, _file) = project_file(&case);
    let broker = start_broker(Duration::from_secs(5));
    let started = |route: BrokerRoute| {
        let mut spec = spec(&case, &program, dir.path(), Some(route));
        spec.started_message = Some("Server initialized with PID".into());
        spec.own_dir_env = vec!["XDG_CACHE_HOME".into()];
        LspClient::start(spec)
    };
    let first = started(broker.route.clone()).await.unwrap();
    let later = started(broker.route.clone()).await.unwrap();
    assert_eq!(first.pid(), later.pid());
    first.stop().await;
    later.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_attaches_after_the_indexing_knows_it_is_done() {
    // rust-analyzer is waited for until it reports its indexing: a run
    // that attaches after it gets the last report replayed instead of
    // waiting out its whole grace period.
    let case = &RUST;
    let Some(program) = fixtures::require(case.programs) else {
        return;
    };
    let (dir, file) = project_file(case);
    let broker = start_broker(Duration::from_secs(5));
    let start = || {
        let mut spec = spec(case, &program, dir.path(), Some(broker.route.clone()));
        spec.settle = Duration::from_mins(2);
        LspClient::start(spec)
    };
    let first = start().await.unwrap();
    first.sync_file(&file, case.language_id).await.unwrap();
    first.wait_until_idle(Duration::from_mins(3)).await.unwrap();
    assert!(!first.progress_runs("").is_empty());
    assert!(first.busy().is_none());

    let later = start().await.unwrap();
    assert_eq!(later.pid(), first.pid());
    let replayed = later.progress_runs("");
    assert!(
        !replayed.is_empty() && replayed.iter().all(|r| r.ended.is_some()),
        "{replayed:?}"
    );
    assert!(later.busy().is_none() && !later.not_quiescent());
    assert!(hover(case, &later, &file).await.contains(case.expect));
    first.stop().await;
    later.stop().await;
}
