//! The server's process: started through tool-core's child helper with
//! piped stdio (its stderr kept in a ring for error messages), and watched
//! so that its exit closes the connection at once with the exit status.

use super::{Shared, StartSpec};
use crate::jsonrpc::JsonRpc;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::oneshot;
use tool_core::process::{ChildProcess as Child, ChildSpec, Io, OutputRing, SharedOutput};

/// A started server process, its stdio taken.
pub(super) struct ServerProcess {
    pub child: Child,
    pub pgid: u32,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub stderr: SharedOutput,
    /// The folder of this process's own, removed once it is dropped.
    pub own_dir: Option<tool_core::scratch::ScratchDir>,
}

/// The placeholder of a command's argument for the server's own folder
/// (see [`crate::ServerEntry::commands`]).
const OWN_DIR: &str = "{own_dir}";

/// Start `spec`'s program in the root, with its stdio piped.
pub(super) fn spawn(spec: &StartSpec) -> Result<ServerProcess, String> {
    let in_args = spec.args.iter().any(|a| a.contains(OWN_DIR));
    let own_dir = if spec.own_dir_env.is_empty() && !in_args {
        None
    } else {
        Some(
            tool_core::scratch::ScratchDir::create("lsp")
                .map_err(|e| format!("cannot make {}'s own folder: {e}", spec.name))?,
        )
    };
    let args: Vec<String> = match &own_dir {
        Some(dir) => spec
            .args
            .iter()
            .map(|a| a.replace(OWN_DIR, &dir.path().to_string_lossy()))
            .collect(),
        None => spec.args.clone(),
    };
    let mut child_spec = ChildSpec::new(&spec.program)
        .args(&args)
        .cwd(&spec.root)
        .stdin(Io::Pipe)
        .stdout(Io::Pipe)
        .stderr(Io::Pipe);
    if let Some(p) = &spec.path_env {
        child_spec = child_spec.env("PATH", p);
    }
    for (var, value) in &spec.env {
        child_spec = child_spec.env(var, value);
    }
    if let Some(dir) = &own_dir {
        for var in &spec.own_dir_env {
            child_spec = child_spec.env(var, dir.path());
        }
    }
    let mut child = child_spec
        .spawn()
        .map_err(|e| format!("cannot start `{}`: {e}", child_spec.display()))?;
    let pgid = child.pid();
    let stdin = child.stdin.take().expect("piped stdin");
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    let stderr_ring: SharedOutput = Arc::new(Mutex::new(OutputRing::new(16 * 1024)));
    tool_core::process::capture_into(stderr, stderr_ring.clone());
    Ok(ServerProcess {
        child,
        pgid,
        stdin,
        stdout,
        stderr: stderr_ring,
        own_dir,
    })
}

/// Own the process: close `rpc` when it exits (with its status and last
/// words), or stop it when the returned sender fires or is dropped.
pub(super) fn watch_exit(
    mut child: Child,
    rpc: JsonRpc,
    shared: Arc<Shared>,
) -> oneshot::Sender<()> {
    let (kill_tx, kill_rx) = oneshot::channel::<()>();
    tokio::spawn(async move {
        tokio::select! {
            status = child.wait() => {
                let status = match status {
                    Ok(s) => tool_core::process::describe_exit(s),
                    Err(e) => format!("wait failed: {e}"),
                };
                // Let stderr drain so the reason carries its last words.
                tokio::time::sleep(Duration::from_millis(30)).await;
                rpc.close(format!("{status}{}", shared.stderr_tail()));
            }
            _ = kill_rx => {
                child.terminate(Duration::from_millis(500)).await;
                rpc.close("it was stopped".into());
            }
        }
    });
    kill_tx
}
