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

fn spec(program: &Path, root: &Path, broker: Option<BrokerRoute>) -> StartSpec {
    StartSpec {
        name: "basedpyright".into(),
        program: program.to_path_buf(),
        args: vec!["--stdio".into()],
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
        broker,
    }
}

/// The hover on `greet` in the call, as text, with the disk's text synced
/// first.
async fn hover(client: &LspClient, file: &Path) -> String {
    client.sync_file(file, "python").await.unwrap();
    hover_as_is(client, file).await
}

/// The hover on `greet` in the call, with whatever text the run sent last.
async fn hover_as_is(client: &LspClient, file: &Path) -> String {
    let uri = lsp_session::client::file_uri(file);
    let answer = client
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": 4, "character": 5}}),
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

fn project_file() -> (tempfile::TempDir, PathBuf) {
    let dir = project::with_files("broker", &[("pyproject.toml", ""), ("a.py", SOURCE)]);
    let file = dir.path().join("a.py");
    (dir, file)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_runs_share_one_server_and_answer_as_a_private_one() {
    let Some(program) = fixtures::require(&["basedpyright-langserver"]) else {
        return;
    };
    let (dir, file) = project_file();
    let private = LspClient::start(spec(&program, dir.path(), None))
        .await
        .unwrap();
    let expected = hover(&private, &file).await;
    assert!(
        expected.contains("def greet(name: str) -> str"),
        "{expected}"
    );
    let broker = start_broker(Duration::from_millis(300));

    let runs: Vec<Arc<LspClient>> = futures::future::join_all(
        (0..4).map(|_| LspClient::start(spec(&program, dir.path(), Some(broker.route.clone())))),
    )
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
        assert_eq!(hover(run, &file).await, expected);
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
        assert_eq!(hover(run, &file).await, expected);
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
async fn a_preview_in_one_run_is_never_seen_by_anothers_query() {
    let Some(program) = fixtures::require(&["basedpyright-langserver"]) else {
        return;
    };
    let (dir, file) = project_file();
    let broker = start_broker(Duration::from_millis(300));
    let a = LspClient::start(spec(&program, dir.path(), Some(broker.route.clone())))
        .await
        .unwrap();
    let b = Arc::new(
        LspClient::start(spec(&program, dir.path(), Some(broker.route.clone())))
            .await
            .unwrap(),
    );
    assert_eq!(a.pid(), b.pid());
    let on_disk = hover(&b, &file).await;
    assert!(on_disk.contains("name: str"), "{on_disk}");

    // A previews a text the disk does not have.
    let speculative = SOURCE.replace("name: str", "name: int");
    a.sync_text(&file, "python", speculative).await;
    let seen_by_a = hover_as_is(&a, &file).await;
    assert!(seen_by_a.contains("name: int"), "{seen_by_a}");

    // B's query meanwhile waits for the preview to end.
    let (b2, file2) = (b.clone(), file.clone());
    let query = tokio::spawn(async move { hover(&b2, &file2).await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!query.is_finished(), "B was answered during A's preview");
    a.sync_file(&file, "python").await.unwrap();
    let seen_by_b: String = tokio::time::timeout(Duration::from_mins(1), query)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(seen_by_b, on_disk);
    a.stop().await;
    b.stop().await;
}
