use super::*;
use std::os::unix::process::ExitStatusExt;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// Start `sh -c` that forks a sleeping grandchild and prints both pids.
async fn family() -> (ChildProcess, u32, u32) {
    let mut child = ChildSpec::new("sh")
        .arg("-c")
        .arg("sleep 300 & echo $$ $!; wait")
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = lines.next_line().await.unwrap().unwrap();
    let mut it = line.split_whitespace().map(|p| p.parse::<u32>().unwrap());
    let (parent, grandchild) = (it.next().unwrap(), it.next().unwrap());
    assert_eq!(parent, child.pid());
    assert!(pid_alive(parent) && pid_alive(grandchild));
    (child, parent, grandchild)
}

async fn all_stdout(child: &mut ChildProcess) -> String {
    let mut out = String::new();
    let mut stdout = child.stdout.take().unwrap();
    stdout.read_to_string(&mut out).await.unwrap();
    out
}

async fn gone(pids: &[u32]) -> bool {
    for _ in 0..100 {
        if pids.iter().all(|p| !pid_alive(*p)) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test]
async fn dropping_the_owner_kills_child_and_grandchild() {
    let (child, parent, grandchild) = family().await;
    assert_eq!(group_members(parent).len(), 2);
    drop(child);
    assert!(
        gone(&[parent, grandchild]).await,
        "a process survived its owner"
    );
}

#[tokio::test]
async fn a_probe_lists_the_tree_with_command_lines_until_it_is_gone() {
    let (mut child, parent, grandchild) = family().await;
    let probe = child.probe();
    // The shell's child is listed with the shell's command line until it
    // has exec'd `sleep`: wait for that (bounded), then compare.
    let mut listed = probe.listed();
    for _ in 0..250 {
        if listed.iter().any(|p| p.command == "sleep 300") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        listed = probe.listed();
    }
    assert_eq!(
        listed,
        [
            ProcessLine {
                pid: parent,
                command: "sh -c sleep 300 & echo $$ $!; wait".into(),
            },
            ProcessLine {
                pid: grandchild,
                command: "sleep 300".into(),
            },
        ]
    );
    child.kill().await;
    assert_eq!(probe.listed(), []);
}

#[tokio::test]
async fn kill_and_terminate_reach_the_whole_group() {
    let (mut child, parent, grandchild) = family().await;
    let stopped = child.kill().await;
    assert_eq!((stopped.killed, stopped.survivors), (2, vec![]));
    assert_eq!(stopped.status.and_then(|s| s.signal()), Some(libc::SIGKILL));
    assert!(gone(&[parent, grandchild]).await);

    let (mut child, parent, grandchild) = family().await;
    let stopped = child.terminate(Duration::from_millis(500)).await;
    assert_eq!((stopped.killed, stopped.survivors), (2, vec![]));
    assert_eq!(stopped.status.and_then(|s| s.signal()), Some(libc::SIGTERM));
    assert!(gone(&[parent, grandchild]).await);
}

/// Start `sh` with three escapees, and return their pids: a `setsid`
/// child, a double-forked grandchild, and a double-forked `setsid` one.
async fn escapees() -> (ChildProcess, Vec<u32>) {
    let mut child = ChildSpec::new("sh")
        .arg("-c")
        .arg(
            "setsid sleep 300 & echo $!; (sleep 300 & echo $!); (setsid sleep 300 & echo $!); wait",
        )
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut pids = vec![child.pid()];
    for _ in 0..3 {
        pids.push(lines.next_line().await.unwrap().unwrap().parse().unwrap());
    }
    // The double-forked ones were orphaned: they belong to the keeper now,
    // not to init.
    for &p in &pids[2..] {
        for _ in 0..100 {
            if procfs::stat(p).map(|s| s.ppid) == Some(child.keeper_pid()) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(procfs::stat(p).unwrap().ppid, child.keeper_pid());
    }
    assert!(pids.iter().all(|p| pid_alive(*p)));
    let mut tree: Vec<u32> = child.tree().iter().map(|s| s.pid).collect();
    tree.sort_unstable();
    let mut want = pids.clone();
    want.sort_unstable();
    assert_eq!(tree, want);
    (child, pids)
}

#[tokio::test]
async fn setsid_and_double_forked_descendants_die_with_the_owner() {
    let (child, pids) = escapees().await;
    let keeper = child.keeper_pid();
    drop(child);
    assert!(gone(&pids).await, "survivors: {:?}", alive(&pids));
    assert!(gone(&[keeper]).await, "the keeper outlived its tree");
}

#[tokio::test]
async fn kill_reaches_setsid_and_double_forked_descendants_and_counts_them() {
    let (mut child, pids) = escapees().await;
    let stopped = child.kill().await;
    assert_eq!((stopped.killed, stopped.survivors), (4, vec![]));
    assert!(alive(&pids).is_empty(), "survivors: {:?}", alive(&pids));
    // Nothing left to kill the second time.
    assert_eq!(child.kill().await.killed, 0);
}

#[tokio::test]
async fn what_the_program_leaves_behind_dies_when_it_exits() {
    let mut child = ChildSpec::new("sh")
        .arg("-c")
        .arg("setsid sleep 300 & echo $!")
        .spawn()
        .unwrap();
    let out = all_stdout(&mut child).await;
    let status = child.wait().await.unwrap();
    assert_eq!(status.code(), Some(0));
    // wait() returns once the tree is gone.
    assert!(!pid_alive(out.trim().parse().unwrap()));
}

#[tokio::test]
async fn the_programs_exit_status_is_reported_as_its_own() {
    let code = ChildSpec::new("sh")
        .arg("-c")
        .arg("exit 3")
        .spawn()
        .unwrap();
    let signalled = ChildSpec::new("sh")
        .arg("-c")
        .arg("kill -TERM $$")
        .spawn()
        .unwrap();
    for (mut child, code, signal) in [
        (code, Some(3), None),
        (signalled, None, Some(libc::SIGTERM)),
    ] {
        let status = child.wait().await.unwrap();
        assert_eq!((status.code(), status.signal()), (code, signal), "{status}");
    }
}

#[tokio::test]
async fn an_interrupt_sent_to_the_pid_reaches_the_program() {
    let mut child = ChildSpec::new("sh")
        .arg("-c")
        .arg("trap 'echo interrupted; exit 7' INT; echo ready; while :; do sleep 0.02; done")
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(lines.next_line().await.unwrap().unwrap(), "ready");
    child.signal(Signal::Interrupt).unwrap();
    assert_eq!(lines.next_line().await.unwrap().unwrap(), "interrupted");
    assert_eq!(child.wait().await.unwrap().code(), Some(7));
}

#[tokio::test]
async fn a_signal_to_the_keeper_ends_the_tree() {
    // As the MCP host's final sweep does: SIGTERM to each direct child.
    let (mut child, pids) = escapees().await;
    signals::send(child.keeper_pid(), Signal::Terminate).unwrap();
    let status = tokio::time::timeout(Duration::from_secs(5), child.wait())
        .await
        .expect("the keeper ended the tree")
        .unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    assert!(alive(&pids).is_empty(), "survivors: {:?}", alive(&pids));
}

fn alive(pids: &[u32]) -> Vec<u32> {
    pids.iter().copied().filter(|p| pid_alive(*p)).collect()
}

/// The variable that turns this test binary into a host that starts a tree
/// and waits to be killed (see [`host_helper`]).
const HOST_MARKER: &str = "AGENT_TOOLS_PROCESS_TEST_MARKER";

/// Not a test of its own: run by [`no_process_survives_a_sigkilled_host`]
/// as a separate process, with the marker set.
#[test]
#[ignore = "a helper process for no_process_survives_a_sigkilled_host"]
fn host_helper() {
    if std::env::var_os(HOST_MARKER).is_none() {
        return;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (_child, pids) = escapees().await;
        println!("ready {}", pids.len());
        tokio::time::sleep(Duration::from_mins(10)).await;
    });
}

#[test]
fn no_process_survives_a_sigkilled_host() {
    use std::io::BufRead;
    let marker = format!("{}-{:?}", std::process::id(), std::time::SystemTime::now());
    let mut host = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "process::tests::host_helper",
            "--ignored",
            "--nocapture",
        ])
        .env(HOST_MARKER, &marker)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(host.stdout.take().unwrap());
    let mut line = String::new();
    while !line.starts_with("ready") {
        line.clear();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "the helper host ended early"
        );
    }
    // The host, its keeper and the four processes of the tree.
    assert_eq!(procfs::with_environment(HOST_MARKER, &marker).len(), 6);
    signals::send(host.id(), Signal::Kill).unwrap();
    host.wait().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    let mut survivors = procfs::with_environment(HOST_MARKER, &marker);
    while !survivors.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        survivors = procfs::with_environment(HOST_MARKER, &marker);
    }
    let described: Vec<String> = survivors
        .iter()
        .map(|p| format!("{p}: {}", procfs::cmdline(*p).unwrap_or_default()))
        .collect();
    assert!(
        survivors.is_empty(),
        "survivors of a SIGKILLed host: {described:?}"
    );
}

#[tokio::test]
async fn extra_pipes_carry_data_both_ways_apart_from_stdout() {
    // The child reads a line on fd 3, writes it upper-cased to fd 4, and
    // writes something else to stdout.
    let mut child = ChildSpec::new("sh")
        .arg("-c")
        .arg("read line <&3; echo \"$line\" | tr a-z A-Z >&4; echo on-stdout")
        .extra_pipe(ExtraPipe::ToChild(3))
        .extra_pipe(ExtraPipe::FromChild(4))
        .spawn()
        .unwrap();
    let mut to = child.take_writer(3).unwrap();
    let from = child.take_reader(4).unwrap();
    to.write_all(b"hello\n").await.unwrap();
    drop(to);
    let mut got = String::new();
    BufReader::new(from).read_line(&mut got).await.unwrap();
    assert_eq!(got, "HELLO\n");
    let out = all_stdout(&mut child).await;
    assert_eq!(out, "on-stdout\n");
    assert!(child.wait().await.unwrap().success());
}

#[tokio::test]
async fn a_missing_program_is_a_clear_error() {
    let err = ChildSpec::new("/nonexistent/prog").spawn().unwrap_err();
    assert!(
        err.to_string().contains("cannot start `/nonexistent/prog`"),
        "{err}"
    );
}

#[tokio::test]
async fn captured_output_is_bounded() {
    let ring: SharedOutput = Arc::new(Mutex::new(OutputRing::new(1000)));
    let mut child = ChildSpec::new("sh")
        .arg("-c")
        .arg("i=0; while [ $i -lt 500 ]; do echo line-$i; i=$((i+1)); done")
        .spawn()
        .unwrap();
    let task = capture_into(child.stdout.take().unwrap(), ring.clone());
    child.wait().await.unwrap();
    task.await.unwrap();
    let ring = ring.lock().unwrap();
    assert!(ring.written() > 4000);
    let all = ring.read_since(0);
    assert!(all.text.len() <= 1000);
    assert!(all.text.ends_with("line-499\n"));
    assert_eq!(all.dropped, ring.written() - 1000);
    assert_eq!(ring.read_since(all.cursor).text, "");
}

#[test]
fn ring_cursor_returns_only_what_is_new() {
    let mut r = OutputRing::new(10);
    r.push(b"abc");
    let c1 = r.read_since(0);
    assert_eq!((c1.text.as_str(), c1.dropped), ("abc", 0));
    r.push(b"defghijklm");
    let c2 = r.read_since(c1.cursor);
    assert_eq!(c2.text, "defghijklm");
    r.push(b"no");
    let c3 = r.read_since(c1.cursor);
    assert_eq!((c3.text.as_str(), c3.dropped), ("fghijklmno", 2));
    assert_eq!(r.tail(3), "mno");
}

#[test]
fn wrapping_puts_the_wrapper_first() {
    let spec = ChildSpec::new("python3").arg("-c").arg("1").wrapped_in(&[
        "bwrap".into(),
        "--ro-bind".into(),
        "/".into(),
        "/".into(),
    ]);
    assert_eq!(spec.display(), "bwrap --ro-bind / / python3 -c 1");
}

#[test]
fn the_process_listening_on_a_port_is_found_and_is_not_traced() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let me = std::process::id();
    assert_eq!(procfs::tcp_listeners(port).map(|i| i.len()), Some(1));
    assert_eq!(procfs::listening_on(port), vec![me]);
    assert_eq!(procfs::tracer(me), None);
    assert!(procfs::threads(me).contains(&me));
    assert_eq!(procfs::traced_by(me), Vec::<u32>::new());
    drop(listener);
    assert_eq!(procfs::listening_on(port), Vec::<u32>::new());
}

#[test]
fn a_process_proportional_share_is_at_most_its_resident_memory() {
    let me = std::process::id();
    let (rss, pss) = (procfs::rss_kib(me).unwrap(), procfs::pss_kib(me).unwrap());
    assert!(pss > 0 && pss <= rss, "pss {pss} KiB, rss {rss} KiB");
    // A pid that cannot be a process.
    assert_eq!(procfs::pss_kib(u32::MAX), None);
}
