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
    start_broker_lingering(idle, Duration::from_millis(200))
}

/// A broker that stays `linger` once it has nothing to do.
fn start_broker_lingering(idle: Duration, linger: Duration) -> Running {
    let dir = tempfile::tempdir().unwrap();
    let paths = BrokerPaths {
        dir: dir.path().join("broker"),
    };
    paths.prepare().unwrap();
    let listener = tokio::net::UnixListener::bind(paths.socket()).unwrap();
    let broker = Arc::new(Broker::default());
    let serving = tokio::spawn(broker.clone().serve(listener, linger));
    Running {
        broker,
        route: BrokerRoute {
            paths,
            launcher: None,
            idle,
            memory_ceiling_mb: None,
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

/// A run's supervisor sharing through `broker`, with its notice board and
/// its memory ceiling for every server.
fn shared_run(
    root: &Path,
    broker: &Running,
    ceiling_mb: u64,
) -> (lsp_session::LspSupervisor, tool_core::notices::NoticeBoard) {
    let timeouts = lsp_session::Timeouts {
        // Its keeper looks every 5 s (a quarter, at most 5 s).
        idle: Duration::from_mins(1),
        ..Default::default()
    };
    let sup = lsp_session::LspSupervisor::new(Workspace::new(root).unwrap(), Default::default())
        .with_path(Some(fixtures::path_env()))
        .with_timeouts(timeouts)
        .with_memory_ceiling_mb(ceiling_mb)
        .with_broker(broker.route.clone());
    let board = tool_core::notices::NoticeBoard::new();
    sup.set_notice_board(board.clone());
    (sup, board)
}

/// The run's hover through its supervisor (starting or attaching), and
/// the server's pid.
async fn run_hover(sup: &lsp_session::LspSupervisor, file: &Path) -> (String, u32) {
    let target = sup.target_for(file).await.unwrap();
    let answer = hover(&PYTHON, &target.client, file).await;
    (answer, target.client.pid())
}

/// Every run of digits of `text` as `N` (pids, MiB and ages vary).
fn digits_masked(text: &str) -> String {
    let mut out = String::new();
    let mut in_number = false;
    for c in text.chars() {
        if !c.is_ascii_digit() {
            out.push(c);
        } else if !in_number {
            out.push('N');
        }
        in_number = c.is_ascii_digit();
    }
    out
}

/// The notices on `board`, digits masked.
fn notices(board: &tool_core::notices::NoticeBoard) -> Vec<String> {
    board
        .take()
        .0
        .iter()
        .map(|n| digits_masked(&n.text))
        .collect()
}

/// The runs' notices, each run's once, within `bound`.
async fn told(boards: &[&tool_core::notices::NoticeBoard], bound: Duration) -> Vec<Vec<String>> {
    wait_until("every run is told", bound, || {
        boards.iter().all(|b| b.pending_count() > 0)
    })
    .await;
    boards.iter().map(|b| notices(b)).collect()
}

/// The broker keeps a shared server under the lowest ceiling its runs ask
/// for: a third run with a ceiling of 10 MiB (node alone takes more)
/// attaches, the broker stops the server, each run is told once, `status`
/// says why, and the next calls share a new server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_server_over_its_ceiling_is_stopped_for_every_run_each_told() {
    let Some(_) = fixtures::require(PYTHON.programs) else {
        return;
    };
    let (dir, file) = project_file(&PYTHON);
    // It stays while the runs call again (no launcher starts another).
    let broker = start_broker_lingering(Duration::from_secs(5), Duration::from_mins(1));
    let (a, a_board) = shared_run(dir.path(), &broker, 8192);
    let (b, b_board) = shared_run(dir.path(), &broker, 8192);
    let (answer, pid) = run_hover(&a, &file).await;
    assert!(answer.contains(PYTHON.expect), "{answer}");
    assert_eq!(run_hover(&b, &file).await.1, pid);
    let (tiny, tiny_board) = shared_run(dir.path(), &broker, 10);
    // Its start may itself be cut short by the stop; it is told either way.
    let _ = tiny.target_for(&file).await;
    let each = told(&[&a_board, &b_board], Duration::from_secs(30)).await;
    expect_test::expect![[r#"
        [
            [
                "lsp: python at . (shared, pid N) used N MiB, over its memory ceiling of N MiB: the broker stopped it for every run attached; the next call that needs it starts it afresh",
            ],
            [
                "lsp: python at . (shared, pid N) used N MiB, over its memory ceiling of N MiB: the broker stopped it for every run attached; the next call that needs it starts it afresh",
            ],
        ]
    "#]]
    .assert_debug_eq(&each);
    let status = a.status_lines().await;
    let line = status.iter().find(|l| l.starts_with("python at ")).unwrap();
    expect_test::expect![[r#"python at . (basedpyright-langserver --stdio): stopped: it went over its memory ceiling (last N s ago: N MiB > N MiB); the next call that needs it starts it again"#]]
        .assert_eq(&digits_masked(line));
    wait_until("the old server is gone", Duration::from_secs(10), || {
        !tool_core::process::pid_alive(pid)
    })
    .await;
    tiny.shutdown().await;
    // The next calls: one new server for both, under their own ceiling.
    let (answer, again) = run_hover(&a, &file).await;
    assert!(answer.contains(PYTHON.expect), "{answer}");
    assert_ne!(again, pid);
    assert_eq!(run_hover(&b, &file).await.1, again);
    assert_eq!((notices(&a_board), notices(&b_board)), (vec![], vec![]));
    drop(tiny_board);
    a.shutdown().await;
    b.shutdown().await;
}

/// `reload` in one run restarts the shared server for all: the run that
/// asked says how many others were told, each other run is told once, and
/// its next call attaches to the new server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_in_one_run_restarts_the_shared_server_for_all_each_told() {
    let Some(_) = fixtures::require(PYTHON.programs) else {
        return;
    };
    let (dir, file) = project_file(&PYTHON);
    let broker = start_broker(Duration::from_secs(5));
    let runs: Vec<_> = (0..3)
        .map(|_| shared_run(dir.path(), &broker, 8192))
        .collect();
    let mut pids = Vec::new();
    for (sup, _) in &runs {
        pids.push(run_hover(sup, &file).await.1);
    }
    let pid = pids[0];
    assert_eq!(pids, vec![pid; 3]);
    let lines = runs[0].0.reload(None).await.unwrap();
    let new_pid = runs[0].0.pids().await[0];
    assert_ne!(new_pid, pid);
    expect_test::expect![[r#"python at .: restarted (basedpyright-langserver --stdio, pid NEW); it was shared: the 2 other runs attached to it were told"#]]
        .assert_eq(&lines.join("\n").replace(&new_pid.to_string(), "NEW"));
    let each = told(&[&runs[1].1, &runs[2].1], Duration::from_secs(30)).await;
    expect_test::expect![[r#"
        [
            [
                "lsp: python at . (shared, pid N) was restarted by another run's `reload`; the next call attaches to the new one",
            ],
            [
                "lsp: python at . (shared, pid N) was restarted by another run's `reload`; the next call attaches to the new one",
            ],
        ]
    "#]]
    .assert_debug_eq(&each);
    assert!(
        runs[0].1.take().0.is_empty(),
        "the run that reloaded is not told"
    );
    for (sup, _) in &runs[1..] {
        let (answer, now) = run_hover(sup, &file).await;
        assert!(answer.contains(PYTHON.expect), "{answer}");
        assert_eq!(now, new_pid);
    }
    assert!(!tool_core::process::pid_alive(pid));
    for (sup, _) in &runs {
        sup.shutdown().await;
    }
}
