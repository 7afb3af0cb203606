use super::*;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

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
async fn kill_and_terminate_reach_the_whole_group() {
    let (mut child, parent, grandchild) = family().await;
    child.kill().await;
    assert!(gone(&[parent, grandchild]).await);

    let (mut child, parent, grandchild) = family().await;
    child.terminate(Duration::from_millis(500)).await;
    assert!(gone(&[parent, grandchild]).await);
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
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .await
        .unwrap();
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
