//! The second backend: Node.js programs under the V8 inspector, driven
//! through the same session, ops and answers as the DAP adapters.
//!
//! The seam: Node speaks no DAP, so this module is a DAP adapter that runs
//! inside this process. [`start`] runs `node --inspect-brk=127.0.0.1:0`,
//! reads the inspector's address from its stderr, connects a WebSocket
//! ([`cdp`]), and serves DAP on one end of an in-memory pipe
//! ([`bridge`]); the session's [`crate::transport::DapClient`] gets the
//! other end, exactly as it gets an adapter's stdout. Nothing above the
//! transport knows which backend it drives. An attach reaches a Node.js
//! started with `--inspect` through its `/json/list` instead.
//!
//! Invariants: the Node process is the session's adapter process (its own
//! process group, killed with the session, watched for its exit); the wait
//! for the address line is bounded and quotes what Node printed when it
//! fails; Node's own inspector lines (`Debugger attached.`, …) reach
//! neither the program's output nor the adapter log.

pub mod bridge;
pub mod cdp;
pub mod render;
pub mod sourcemap;

use crate::adapters::node;
use crate::session::inproc::{started, Started};
use crate::session::lines::{LineOutput, Stream};
use crate::session::{LaunchPlan, SessionLimits};
use serde_json::Value;
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tool_core::process::SharedOutput;
use tool_core::ToolError;

/// Start the program of `plan` under Node's inspector and serve DAP for it.
pub(crate) async fn start(
    plan: &LaunchPlan,
    limits: &SessionLimits,
    output: &Arc<LineOutput>,
    adapter_log: &SharedOutput,
) -> Result<Started, ToolError> {
    if plan.request == "attach" {
        return attach(plan, limits).await;
    }
    let node_binary = plan
        .adapter
        .command
        .first()
        .ok_or_else(|| ToolError::failed("the node entry has no command line"))?;
    let args = &plan.arguments;
    let line = node::command_line(node_binary, args);
    let cwd = args.get("cwd").and_then(Value::as_str).map_or_else(
        || plan.adapter.project_dir.clone(),
        std::path::PathBuf::from,
    );
    let spec = crate::session::inproc::debuggee_spec(plan, &line, &cwd);
    let mut child = spec.spawn().map_err(|e| {
        ToolError::failed(format!(
            "{e}; check `debug adapters` for what resolves here"
        ))
    })?;
    let stdout = child.stdout.take().expect("stdout piped");
    let stderr = child.stderr.take().expect("stderr piped");
    let stdin = child.stdin.take().expect("stdin piped");
    let mut stderr = BufReader::new(stderr);
    let url = tokio::time::timeout(limits.request, async {
        let mut line = String::new();
        loop {
            line.clear();
            if stderr.read_line(&mut line).await.ok()? == 0 {
                return None;
            }
            if let Some(url) = node::inspector_url(&line) {
                return Some(url);
            }
            if !node::is_inspector_line(&line) {
                adapter_log.lock().expect("log lock").push(line.as_bytes());
            }
        }
    })
    .await
    .ok()
    .flatten();
    let Some(url) = url else {
        let log = adapter_log.lock().expect("log lock").tail(2000);
        child.terminate(std::time::Duration::from_millis(200)).await;
        return Err(ToolError::failed(format!(
            "`{}` did not print the address of its inspector within {} ms; its output: {}",
            node_binary.to_string_lossy(),
            limits.request.as_millis(),
            log.trim()
        )));
    };
    let (drained_tx, drained) = watch::channel(0usize);
    let drained_tx = Arc::new(drained_tx);
    let mut tasks = vec![
        capture(
            stdout,
            output.clone(),
            Stream::AdapterStdout,
            drained_tx.clone(),
        ),
        capture(stderr, output.clone(), Stream::AdapterStderr, drained_tx),
    ];
    tasks.extend(crate::session::inproc::feed_stdin(
        plan.adapter_stdin.clone(),
        stdin,
    ));
    let (cdp_client, cdp_events) =
        match cdp::CdpClient::connect(&url, limits.request, limits.request).await {
            Ok(c) => c,
            Err(why) => {
                child.terminate(std::time::Duration::from_millis(200)).await;
                for t in &tasks {
                    t.abort();
                }
                return Err(ToolError::failed(why));
            }
        };
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    tasks.extend(bridge::Bridge::spawn(
        cdp_client, cdp_events, theirs, drained,
    ));
    Ok(started(Some(child), ours, tasks))
}

/// Attach to a Node.js someone started with `--inspect=127.0.0.1:PORT`:
/// its WebSocket address from the inspector's `/json/list`, then the same
/// bridge, with no process of ours (its output stays where it goes).
async fn attach(plan: &LaunchPlan, limits: &SessionLimits) -> Result<Started, ToolError> {
    let port = plan
        .arguments
        .get("port")
        .and_then(Value::as_u64)
        .and_then(|p| u16::try_from(p).ok())
        .ok_or_else(|| ToolError::bad_args("attaching to Node.js needs `port`"))?;
    let url = tokio::time::timeout(limits.request, target_url(port))
        .await
        .map_err(|_| {
            ToolError::timed_out(format!(
                "the inspector at 127.0.0.1:{port} did not list its targets within {} ms; is it a Node.js started with --inspect=127.0.0.1:{port}?",
                limits.request.as_millis()
            ))
        })?
        .map_err(ToolError::failed)?;
    let (cdp_client, cdp_events) = cdp::CdpClient::connect(&url, limits.request, limits.request)
        .await
        .map_err(ToolError::failed)?;
    // Nothing of its output reaches us: the pipes count as drained.
    let (_, drained) = watch::channel(2usize);
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let tasks = bridge::Bridge::spawn(cdp_client, cdp_events, theirs, drained);
    Ok(started(None, ours, tasks))
}

/// The `webSocketDebuggerUrl` of the first target the inspector on `port`
/// lists (`GET /json/list`); `Err` says what answered instead.
async fn target_url(port: u16) -> Result<String, String> {
    use tokio::io::AsyncWriteExt;
    let mut tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .map_err(|e| format!("cannot connect to 127.0.0.1:{port}: {e}"))?;
    // Node builds the WebSocket address from the Host it is asked by.
    let request = format!("GET /json/list HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    tcp.write_all(request.as_bytes())
        .await
        .map_err(|e| format!("cannot ask 127.0.0.1:{port} for its targets: {e}"))?;
    // Read up to the end of the body its Content-Length gives (Node keeps
    // the connection open after answering).
    let mut answer = Vec::new();
    let mut buf = [0u8; 8192];
    let text = loop {
        let n = tcp
            .read(&mut buf)
            .await
            .map_err(|e| format!("cannot read the targets of 127.0.0.1:{port}: {e}"))?;
        answer.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&answer).into_owned();
        let whole = text.split_once("\r\n\r\n").is_some_and(|(head, body)| {
            head.lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
                .is_some_and(|len| body.len() >= len)
        });
        if n == 0 || whole || answer.len() > 1 << 20 {
            break text;
        }
    };
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v.as_array()?
                .iter()
                .find_map(|t| t.get("webSocketDebuggerUrl")?.as_str().map(String::from))
        })
        .ok_or_else(|| {
            format!(
                "127.0.0.1:{port} is not a Node.js inspector (no target in its /json/list: {}); start the program with node --inspect=127.0.0.1:{port}",
                tool_core::format::cap_chars(text.lines().next().unwrap_or("no answer"), 120)
            )
        })
}

/// Copy one of Node's pipes into the program's output as `stream`,
/// without Node's own inspector lines (they say nothing the session does
/// not know); count the pipe as drained at its end.
fn capture<R>(
    mut reader: R,
    out: Arc<LineOutput>,
    stream: Stream,
    drained: Arc<watch::Sender<usize>>,
) -> JoinHandle<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        let mut buf = vec![0u8; 8192];
        // Whether the last piece ended a line: only a whole line can be
        // one of Node's own.
        let mut at_line_start = true;
        loop {
            let n = match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let mut kept = Vec::with_capacity(n);
            for piece in buf[..n].split_inclusive(|b| *b == b'\n') {
                let whole = piece.ends_with(b"\n");
                let own = at_line_start
                    && whole
                    && stream == Stream::AdapterStderr
                    && node::is_inspector_line(&String::from_utf8_lossy(piece));
                if !own {
                    kept.extend_from_slice(piece);
                }
                at_line_start = whole;
            }
            out.push(stream, &kept);
        }
        drained.send_modify(|n| *n += 1);
    })
}
