//! Fault suite, files (issue 13 items 1, 2, 3 and 8): hostile files and
//! races against the release binary, driven through `agent-tools batch`
//! over stdin (one JSON call per line, one result per line).
//!
//! Every answer is awaited with a bound, so a wedged host fails the test
//! instead of hanging it; the host is killed when a test ends.

use serde_json::{json, Value};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};
use test_support::cli::stdout_lines;
use tool_core::process::procfs;

/// One `agent-tools batch` process.
struct Host {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

/// A PATH with the system's tools but no language server.
const PLAIN_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

impl Host {
    fn start(root: &Path, path_env: &std::ffi::OsStr) -> Host {
        let mut child = Command::new(tests::built_agent_tools_bin())
            .args(["batch", "-", "--surface", "exec", "--root"])
            .arg(root)
            .env("PATH", path_env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = stdout_lines(&mut child);
        Host {
            child,
            stdin,
            lines,
        }
    }

    /// One call and its answer, with how long the answer took.
    fn call_timed(&mut self, tool: &str, args: Value) -> (Value, Duration) {
        let line = json!({"tool": tool, "args": args}).to_string();
        let start = Instant::now();
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
        match self.lines.recv_timeout(Duration::from_secs(30)) {
            Ok(answer) => (serde_json::from_str(&answer).unwrap(), start.elapsed()),
            Err(RecvTimeoutError::Timeout) => panic!("no answer within 30 s to {line}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the host exited on {line}"),
        }
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        self.call_timed(tool, args).0
    }

    /// Resident memory of the host, in KiB.
    fn rss_kib(&self) -> u64 {
        procfs::rss_kib(self.child.id()).unwrap()
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn error_message(answer: &Value) -> String {
    assert_eq!(answer["ok"], false, "expected a refusal: {answer}");
    answer["error"]["message"].as_str().unwrap().to_string()
}

fn text(answer: &Value) -> String {
    assert_eq!(answer["ok"], true, "expected success: {answer}");
    answer["content"][0]["text"].as_str().unwrap().to_string()
}

/// Swap `a` and `b` atomically (`renameat2(RENAME_EXCHANGE)`).
fn exchange(a: &Path, b: &Path) -> bool {
    let a = std::ffi::CString::new(a.as_os_str().as_bytes()).unwrap();
    let b = std::ffi::CString::new(b.as_os_str().as_bytes()).unwrap();
    // SAFETY: two valid NUL-terminated paths.
    unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        ) == 0
    }
}

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap_or_default(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Item 1: a thread keeps exchanging `d` (a folder of the workspace) with a
/// symlink to a folder outside, while `write`, `edit`, `read`, `ast_grep`,
/// `ast_edit` and `resolve` accept work on files under `d`. Nothing outside
/// may change, and no outside content may appear in an answer.
#[test]
fn a_symlink_swap_race_never_escapes() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let d = ws.path().join("d");
    std::fs::create_dir(&d).unwrap();
    std::fs::write(d.join("f.txt"), "x\n").unwrap();
    std::fs::write(d.join("code.py"), "foo(1)\n").unwrap();
    std::fs::write(outside.path().join("f.txt"), "x SECRET\n").unwrap();
    std::fs::write(
        outside.path().join("code.py"),
        "foo(1, \"SECRET\")\nbar(1, \"SECRET\")\n",
    )
    .unwrap();
    let link = ws.path().join("d.link");
    std::os::unix::fs::symlink(outside.path(), &link).unwrap();
    let before = snapshot(outside.path());

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let swapper = {
        let (stop, swaps, d, link) = (stop.clone(), swaps.clone(), d.clone(), link.clone());
        std::thread::spawn(move || {
            let mut n: u32 = 0;
            while !stop.load(Ordering::Relaxed) {
                assert!(exchange(&d, &link), "exchange failed");
                swaps.fetch_add(1, Ordering::Relaxed);
                // Stay a varying while in each state (the link 0 to 255 µs,
                // the folder 0.2 to 1.2 ms), so calls meet the folder, the
                // link, and the switch between them.
                n = n.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                let link_now = swaps.load(Ordering::Relaxed) % 2 == 1;
                let micros = if link_now {
                    u64::from(n >> 24)
                } else {
                    200 + u64::from(n >> 22)
                };
                std::thread::sleep(Duration::from_micros(micros));
            }
            // Leave the real folder at `d`.
            if std::fs::symlink_metadata(&d)
                .unwrap()
                .file_type()
                .is_symlink()
            {
                assert!(exchange(&d, &link));
            }
        })
    };

    let mut host = Host::start(ws.path(), PLAIN_PATH.as_ref());
    const ROUNDS: usize = 2000;
    let mut calls = std::collections::BTreeMap::<&str, usize>::new();
    let mut succeeded = std::collections::BTreeMap::<&str, usize>::new();
    let mut escapes = Vec::new();
    let mut foo = true;
    let started = Instant::now();
    for i in 0..ROUNDS {
        let (from, to) = if foo {
            ("foo($$$A)", "bar($$$A)")
        } else {
            ("bar($$$A)", "foo($$$A)")
        };
        let steps: Vec<(&str, Value)> = vec![
            (
                "write",
                json!({"path": "d/f.txt", "content": format!("x {i}\n")}),
            ),
            (
                "edit",
                json!({"path": "d/f.txt", "old_string": "x", "new_string": "y"}),
            ),
            ("read", json!({"path": "d/f.txt"})),
            ("ast_grep", json!({"pattern": from, "path": "d"})),
        ];
        let mut record = |tool: &'static str, answer: &Value| {
            *calls.entry(tool).or_default() += 1;
            if answer["ok"] == true {
                *succeeded.entry(tool).or_default() += 1;
            }
            if answer.to_string().contains("SECRET") {
                escapes.push(format!("{tool}: {answer}"));
            }
        };
        for (tool, args) in steps {
            let answer = host.call(tool, args);
            record(tool, &answer);
        }
        // Stage (retrying while the link is in the way), then accept while
        // the swapping goes on.
        // (Bounded by time, not tries: under load the swapping thread may
        // sleep long in the link state.)
        let give_up = Instant::now() + Duration::from_secs(10);
        while Instant::now() < give_up {
            let answer = host.call(
                "ast_edit",
                json!({"pattern": from, "rewrite": to, "path": "d"}),
            );
            record("ast_edit", &answer);
            let Some(id) = answer["structured"]["edit_id"].as_str() else {
                continue;
            };
            let answer = host.call("resolve", json!({"edit_id": id, "action": "accept"}));
            record("resolve", &answer);
            if answer["ok"] == true {
                foo = !foo;
            }
            break;
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    let after = snapshot(outside.path());
    println!(
        "race: {ROUNDS} rounds in {:.1} s, {} swaps; calls {calls:?}; succeeded {succeeded:?}; escapes {}",
        started.elapsed().as_secs_f64(),
        swaps.load(Ordering::Relaxed),
        escapes.len()
    );
    assert_eq!(after, before, "the folder outside changed");
    assert!(escapes.is_empty(), "outside content answered: {escapes:?}");
    for tool in ["write", "edit", "read", "ast_grep", "ast_edit", "resolve"] {
        assert!(calls[tool] >= ROUNDS, "{tool}: {} calls", calls[tool]);
        // The race was real: both outcomes happened.
        assert!(
            succeeded.get(tool).copied().unwrap_or(0) > 0,
            "{tool} never succeeded"
        );
        assert!(succeeded[tool] < calls[tool], "{tool} never met the link");
    }
    // The host still serves.
    let read = text(&host.call("read", json!({"path": "d/f.txt"})));
    assert!(read.starts_with("     1\t"), "{read}");
}

/// Item 2: a FIFO, a socket and a character device given to every tool
/// that takes a file; each is refused within a second, naming its kind, and
/// the host keeps serving.
#[test]
fn special_files_are_refused_at_once_by_every_file_tool() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("ok.py"), "foo(1)\n").unwrap();
    let fifo = ws.path().join("pipe.py");
    let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let _socket = std::os::unix::net::UnixListener::bind(ws.path().join("sock.py")).unwrap();
    let dev = ws.path().join("zero.py");
    let c = std::ffi::CString::new(dev.as_os_str().as_bytes()).unwrap();
    // /dev/zero's numbers; mknod needs CAP_MKNOD (CI runs as root).
    // SAFETY: a valid path.
    let have_dev =
        unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 5)) } == 0;
    let mut specials = vec![("pipe.py", "FIFO"), ("sock.py", "socket")];
    if have_dev {
        specials.push(("zero.py", "character device"));
    } else {
        println!("skipping the character device: mknod needs CAP_MKNOD here");
    }

    let mut host = Host::start(ws.path(), PLAIN_PATH.as_ref());
    // What each tool says of each special file (the character device only
    // where mknod works: its answers are compared on their own).
    let (mut said, mut device) = (Vec::new(), Vec::new());
    for (name, kind) in &specials {
        let calls = [
            ("read", json!({"path": name})),
            ("write", json!({"path": name, "content": "x"})),
            (
                "edit",
                json!({"path": name, "old_string": "a", "new_string": "b"}),
            ),
            ("ast_grep", json!({"pattern": "foo($A)", "path": name})),
            (
                "ast_edit",
                json!({"pattern": "foo($A)", "rewrite": "bar($A)", "path": name}),
            ),
            ("lsp", json!({"op": "diagnostics", "file": name})),
        ];
        for (tool, args) in calls {
            let (answer, took) = host.call_timed(tool, args);
            let msg = error_message(&answer);
            println!("{tool} {name}: {} ms: {msg}", took.as_millis());
            assert!(took < Duration::from_secs(1), "{tool} {name} took {took:?}");
            let line = format!("{tool} {name}: {msg}");
            if *kind == "character device" {
                device.push(line);
            } else {
                said.push(line);
            }
        }
    }
    expect_test::expect![[r#"
        read pipe.py: bad arguments: `pipe.py` is a FIFO (named pipe), not a regular file; these tools work on regular files only
        write pipe.py: bad arguments: `pipe.py` is a FIFO (named pipe), not a regular file; these tools work on regular files only
        edit pipe.py: bad arguments: `pipe.py` is a FIFO (named pipe), not a regular file; these tools work on regular files only
        ast_grep pipe.py: bad arguments: `pipe.py` is a FIFO (named pipe), not a regular file or a directory; give a source file or a folder
        ast_edit pipe.py: bad arguments: `pipe.py` is a FIFO (named pipe), not a regular file or a directory; give a source file or a folder
        lsp pipe.py: bad arguments: `pipe.py` is a FIFO (named pipe), not a regular file; these tools work on regular files only
        read sock.py: bad arguments: `sock.py` is a socket, not a regular file; these tools work on regular files only
        write sock.py: bad arguments: `sock.py` is a socket, not a regular file; these tools work on regular files only
        edit sock.py: bad arguments: `sock.py` is a socket, not a regular file; these tools work on regular files only
        ast_grep sock.py: bad arguments: `sock.py` is a socket, not a regular file or a directory; give a source file or a folder
        ast_edit sock.py: bad arguments: `sock.py` is a socket, not a regular file or a directory; give a source file or a folder
        lsp sock.py: bad arguments: `sock.py` is a socket, not a regular file; these tools work on regular files only"#]].assert_eq(&said.join("\n"));
    if have_dev {
        expect_test::expect![[r#"
            read zero.py: bad arguments: `zero.py` is a character device, not a regular file; these tools work on regular files only
            write zero.py: bad arguments: `zero.py` is a character device, not a regular file; these tools work on regular files only
            edit zero.py: bad arguments: `zero.py` is a character device, not a regular file; these tools work on regular files only
            ast_grep zero.py: bad arguments: `zero.py` is a character device, not a regular file or a directory; give a source file or a folder
            ast_edit zero.py: bad arguments: `zero.py` is a character device, not a regular file or a directory; give a source file or a folder
            lsp zero.py: bad arguments: `zero.py` is a character device, not a regular file; these tools work on regular files only"#]].assert_eq(&device.join("\n"));
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert_eq!(
        text(&host.call("read", json!({"path": "ok.py"}))),
        "     1\tfoo(1)"
    );
}

/// Item 3: a 200 MB `.py` is refused by `edit` from its size alone, fast
/// and without the host reading it (it used to be read whole for the
/// diagnostics-on-write baseline first); `write` over it does not read it
/// either. With the fixtures' Python server on PATH when there is one.
#[test]
fn a_200_mb_edit_is_refused_from_the_handle_size() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("pyproject.toml"),
        "[project]\nname = \"big\"\n",
    )
    .unwrap();
    let big = std::fs::File::create(ws.path().join("big.py")).unwrap();
    big.set_len(200 * 1024 * 1024).unwrap();
    drop(big);
    let mut host = Host::start(ws.path(), &test_support::fixtures::path_env());
    host.call("read", json!({"path": "."}));
    let (answer, took) = host.call_timed(
        "edit",
        json!({"path": "big.py", "old_string": "a", "new_string": "b"}),
    );
    let rss = host.rss_kib();
    println!(
        "200 MB edit refused in {} ms, host RSS {rss} KiB",
        took.as_millis()
    );
    expect_test::expect![[r#"bad arguments: `big.py` is 209715200 bytes, over the 20 MiB these tools handle; look at it with a search tool or a script instead"#]]
        .assert_eq(&error_message(&answer));
    assert!(took < Duration::from_millis(500), "{took:?}");
    assert!(rss < 50 * 1024, "RSS {rss} KiB");

    let (answer, took) = host.call_timed("write", json!({"path": "big.py", "content": "x = 1\n"}));
    let rss = host.rss_kib();
    println!(
        "write over it in {} ms, host RSS {rss} KiB",
        took.as_millis()
    );
    expect_test::expect!["wrote big.py (1 line, 6 bytes; replaced; it had 209715200 bytes)"]
        .assert_eq(&text(&answer));
    assert!(rss < 50 * 1024, "RSS {rss} KiB");
}

/// Item 8: a trailing `/` names a directory; `write` and `edit` refuse it
/// and create nothing.
#[test]
fn a_trailing_slash_is_a_directory_path() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes"), "a\n").unwrap();
    let mut host = Host::start(ws.path(), PLAIN_PATH.as_ref());
    let answer = host.call("write", json!({"path": "fresh/", "content": "x"}));
    expect_test::expect![[
        r#"bad arguments: `fresh/` is a directory path; give a file (without the trailing `/`)"#
    ]]
    .assert_eq(&error_message(&answer));
    assert!(!ws.path().join("fresh").exists());
    let answer = host.call(
        "edit",
        json!({"path": "notes/", "old_string": "a", "new_string": "b"}),
    );
    expect_test::expect![[
        r#"bad arguments: `notes/` is a directory path; give a file (without the trailing `/`)"#
    ]]
    .assert_eq(&error_message(&answer));
    assert_eq!(
        std::fs::read_to_string(ws.path().join("notes")).unwrap(),
        "a\n"
    );
}

/// Item 8: temporary files a killed run of ours left behind are swept when
/// a host starts; files that only look similar are not touched.
#[test]
fn stale_temp_files_of_ours_are_swept_at_start() {
    let ws = tempfile::tempdir().unwrap();
    let mut gone = Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    std::fs::create_dir_all(ws.path().join("src/deep")).unwrap();
    let stale = [
        format!("src/deep/.agent-tools-{dead}-3.tmp"),
        format!("src/.a.py.{dead}.0.agent-tools.tmp"),
    ];
    let kept = ["src/.agent-tools-notes.tmp", "src/notes.tmp"];
    for f in stale.iter().map(String::as_str).chain(kept) {
        std::fs::write(ws.path().join(f), "x").unwrap();
    }
    let mut host = Host::start(ws.path(), PLAIN_PATH.as_ref());
    host.call("read", json!({"path": "."}));
    // The start-up sweep runs beside the first calls.
    let deadline = Instant::now() + Duration::from_secs(10);
    while stale.iter().any(|f| ws.path().join(f).exists()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for f in &stale {
        assert!(!ws.path().join(f).exists(), "{f} was not swept");
    }
    for f in kept {
        assert!(ws.path().join(f).exists(), "{f} was removed");
    }
}

/// Item 3: a `write`/`edit` of a `.py` that is refused answers at once in a
/// fresh run, with a language server available (it used to wait for the
/// server's start and diagnostics first).
#[test]
fn a_refused_py_write_never_waits_for_a_language_server() {
    if test_support::fixtures::require(&["basedpyright-langserver"]).is_none() {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("pyproject.toml"),
        "[project]\nname = \"app\"\n",
    )
    .unwrap();
    std::fs::write(ws.path().join("app.py"), "x: int = 1\n").unwrap();
    let mut host = Host::start(ws.path(), &test_support::fixtures::path_env());
    let (answer, took) = host.call_timed(
        "edit",
        json!({"path": "app.py", "old_string": "not there", "new_string": "y"}),
    );
    println!("first refused .py edit: {} ms", took.as_millis());
    expect_test::expect!["bad arguments: `old_string` was not found in app.py; read the file again and copy the text exactly, whitespace included"].assert_eq(&error_message(&answer));
    assert!(took < Duration::from_secs(1), "{took:?}");
    let (answer, took) = host.call_timed("write", json!({"path": "app.py/", "content": "x"}));
    println!("first refused .py write: {} ms", took.as_millis());
    expect_test::expect![
        "bad arguments: `app.py/` is a directory path; give a file (without the trailing `/`)"
    ]
    .assert_eq(&error_message(&answer));
    assert!(took < Duration::from_secs(1), "{took:?}");
}
