//! Connecting to an adapter: over its stdio, to a TCP port something already
//! listens on (delve attach), or by starting it and connecting to the address
//! it prints (`dlv dap --listen 127.0.0.1:0`).
//!
//! Invariants: every connect and every wait for the address line is
//! bounded; what the adapter prints before it is ready is kept in its log and
//! quoted when it fails; the adapter's stderr is captured, never left to
//! fill a pipe.

use super::lines::{capture_lines, Stream};
use super::{LaunchPlan, SessionLimits};
use crate::catalog::Connect;
use crate::protocol::AdapterEvent;
use crate::transport::DapClient;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tool_core::process::{capture_into, ChildProcess, ChildSpec, Io, SharedOutput};
use tool_core::ToolError;

/// A DAP connection and what keeps it fed.
pub(crate) struct Connection {
    /// The adapter process, when we started it.
    pub child: Option<ChildProcess>,
    pub client: DapClient,
    pub events: mpsc::UnboundedReceiver<AdapterEvent>,
    /// Output capture tasks.
    pub tasks: Vec<JoinHandle<()>>,
}

/// Where the adapter's output goes.
pub(crate) struct Sinks<'a> {
    /// The debuggee's output (a TCP adapter's stdout after the address).
    pub output: &'a std::sync::Arc<super::lines::LineOutput>,
    pub adapter_log: &'a SharedOutput,
}

/// Reach the adapter `plan` names, as its spec says.
pub(crate) async fn connect(
    plan: &LaunchPlan,
    limits: &SessionLimits,
    adapter_command: &str,
    sinks: Sinks<'_>,
) -> Result<Connection, ToolError> {
    if plan.adapter.spec.connect == Connect::Jdwp {
        let started =
            crate::session::jdwp::start(plan, limits, sinks.output, sinks.adapter_log).await?;
        return Ok(Connection {
            child: started.child,
            client: started.client,
            events: started.events,
            tasks: started.tasks,
        });
    }
    if plan.adapter.spec.connect == Connect::Inspector {
        let started =
            crate::session::inspector::start(plan, limits, sinks.output, sinks.adapter_log).await?;
        return Ok(Connection {
            child: started.child,
            client: started.client,
            events: started.events,
            tasks: started.tasks,
        });
    }
    if let Some(port) = plan.connect_to {
        return connect_to_port(port, limits).await;
    }
    let mut child = spawn_adapter(plan)?;
    let stdout = child.stdout.take().expect("stdout piped");
    let stderr = child.stderr.take().expect("stderr piped");
    let stdin = child.stdin.take().expect("stdin piped");
    let mut tasks = Vec::new();
    match plan.adapter.spec.connect {
        Connect::Stdio => {
            tasks.push(capture_into(stderr, sinks.adapter_log.clone()));
            let (client, events) = DapClient::start(BufReader::new(stdout), stdin);
            Ok(Connection {
                child: Some(child),
                client,
                events,
                tasks,
            })
        }
        Connect::TcpListen => {
            // Its stdout and stderr are the debuggee's once the address line
            // is read.
            tasks.push(capture_lines(
                stderr,
                sinks.output.clone(),
                Stream::AdapterStderr,
            ));
            let mut lines = BufReader::new(stdout);
            let addr = tokio::time::timeout(limits.request, async {
                let mut line = String::new();
                loop {
                    line.clear();
                    if lines.read_line(&mut line).await.ok()? == 0 {
                        return None;
                    }
                    sinks
                        .adapter_log
                        .lock()
                        .expect("log lock")
                        .push(line.as_bytes());
                    if let Some(addr) = listen_address(&line) {
                        return Some(addr);
                    }
                }
            })
            .await
            .ok()
            .flatten();
            let Some(addr) = addr else {
                let log = sinks.adapter_log.lock().expect("log lock").tail(2000);
                return Err(ToolError::failed(format!(
                    "`{adapter_command}` did not print the address it listens on; its output: {}",
                    log.trim()
                )));
            };
            // The debuggee inherits the adapter's stdin: the launch's
            // `stdin` text, then end of file (at once, with none).
            match plan.adapter_stdin.clone() {
                None => drop(stdin),
                Some(text) => tasks.push(tokio::spawn(async move {
                    use tokio::io::AsyncWriteExt;
                    let mut stdin = stdin;
                    // A program that exits before reading it all closes the
                    // pipe: nothing to report then.
                    let _ = stdin.write_all(text.as_bytes()).await;
                })),
            }
            tasks.push(capture_lines(
                lines,
                sinks.output.clone(),
                Stream::AdapterStdout,
            ));
            let stream = tokio::net::TcpStream::connect(&addr).await.map_err(|e| {
                ToolError::failed(format!("cannot connect to the adapter at {addr}: {e}"))
            })?;
            let (r, w) = stream.into_split();
            let (client, events) = DapClient::start(BufReader::new(r), w);
            Ok(Connection {
                child: Some(child),
                client,
                events,
                tasks,
            })
        }
        Connect::Inspector | Connect::Jdwp => unreachable!("started above"),
    }
}

/// A debug server someone else started (a headless `dlv`).
async fn connect_to_port(port: u16, limits: &SessionLimits) -> Result<Connection, ToolError> {
    // An attach's handshake bound is its wait bound: connecting is part of it.
    let within = limits.request.min(limits.handshake);
    let stream = tokio::time::timeout(
        within,
        tokio::net::TcpStream::connect(("127.0.0.1", port)),
    )
    .await
    .map_err(|_| {
        ToolError::timed_out(format!(
            "connecting to 127.0.0.1:{port} did not finish within {} ms; is the debug server listening there?",
            within.as_millis()
        ))
    })?
    .map_err(|e| {
        ToolError::failed(format!(
            "cannot connect to 127.0.0.1:{port}: {e}; start the debug server first (e.g. `dlv --headless --listen 127.0.0.1:{port} debug`)"
        ))
    })?;
    let (r, w) = stream.into_split();
    let (client, events) = DapClient::start(BufReader::new(r), w);
    Ok(Connection {
        child: None,
        client,
        events,
        tasks: Vec::new(),
    })
}

/// Start the adapter process with its environment, every stream piped.
fn spawn_adapter(plan: &LaunchPlan) -> Result<ChildProcess, ToolError> {
    let (program, args) = plan
        .adapter
        .command
        .split_first()
        .ok_or_else(|| ToolError::failed("the adapter has no command line"))?;
    let mut spec = ChildSpec::new(program)
        .args(args)
        .cwd(&plan.adapter.project_dir)
        .env("PATH", adapter_path(plan))
        .stdin(Io::Pipe)
        .stdout(Io::Pipe)
        .stderr(Io::Pipe);
    for (k, v) in plan.adapter.env.iter().chain(&plan.env) {
        spec = spec.env(k, v);
    }
    spec.spawn().map_err(|e| {
        ToolError::failed(format!(
            "{e}; check `debug adapters` for what resolves here"
        ))
    })
}

/// The adapter's PATH: the search path, behind the adapter's own prefix.
fn adapter_path(plan: &LaunchPlan) -> std::ffi::OsString {
    match &plan.adapter.path_prefix {
        None => plan.search_path.clone(),
        Some(prefix) => {
            let mut p = prefix.clone().into_os_string();
            p.push(":");
            p.push(&plan.search_path);
            p
        }
    }
}

/// Whether a TCP socket of this machine listens on `port` (any address), by
/// the kernel's socket tables; `None` where they cannot be read. Asking
/// this instead of connecting leaves a debug server alone: a headless `dlv`
/// or an `lldb-server` ends when its first client goes away.
pub fn port_listened_on(port: u16) -> Option<bool> {
    tool_core::process::procfs::tcp_listeners(port).map(|inodes| !inodes.is_empty())
}

/// Refuse at once when nothing listens on `port`, with the error a
/// connection gets (a connection to a port nobody listens on disturbs no
/// one). Where the socket tables cannot be read, the attach itself tells.
pub async fn refuse_closed_port(port: u16) -> Result<(), ToolError> {
    if port_listened_on(port) != Some(false) {
        return Ok(());
    }
    let tried = tokio::time::timeout(
        std::time::Duration::from_millis(500),
        tokio::net::TcpStream::connect(("127.0.0.1", port)),
    )
    .await;
    let why = match tried {
        Ok(Err(e)) => e.to_string(),
        // It started listening in between: let the attach go on.
        Ok(Ok(_)) => return Ok(()),
        Err(_) => "no answer within 500 ms".to_string(),
    };
    Err(ToolError::failed(format!(
        "cannot connect to 127.0.0.1:{port}: {why}; nothing listens there: start the debuggee's debug server first (e.g. `python -m debugpy --listen 127.0.0.1:{port} --wait-for-client prog.py`, `dlv --headless --listen 127.0.0.1:{port} debug`)"
    )))
}

/// `DAP server listening at: 127.0.0.1:40123` → `127.0.0.1:40123`.
pub fn listen_address(line: &str) -> Option<String> {
    let lower = line.to_ascii_lowercase();
    let at = lower.find("listening at")?;
    let rest = line[at + "listening at".len()..].trim_start_matches([':', ' ']);
    let addr = rest.split_whitespace().next()?;
    addr.rsplit_once(':')
        .filter(|(_, port)| port.parse::<u16>().is_ok())
        .map(|_| addr.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses_are_read() {
        assert_eq!(
            listen_address("DAP server listening at: 127.0.0.1:33101\n").as_deref(),
            Some("127.0.0.1:33101")
        );
        assert_eq!(
            listen_address("API server listening at: [::1]:40000").as_deref(),
            Some("[::1]:40000")
        );
        assert!(listen_address("hello").is_none());
    }

    #[test]
    fn a_listening_port_is_told_from_a_closed_one() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        assert_eq!(port_listened_on(port), Some(true));
        drop(l);
        assert_eq!(port_listened_on(port), Some(false));
    }
}
