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
pub struct ServerProcess {
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
    let how = Launch {
        name: &spec.name,
        program: &spec.program,
        args: &spec.args,
        root: &spec.root,
        own_dir_env: &spec.own_dir_env,
    };
    how.spawn(|mut child_spec| {
        if let Some(p) = &spec.path_env {
            child_spec = child_spec.env("PATH", p);
        }
        for (var, value) in &spec.env {
            child_spec = child_spec.env(var, value);
        }
        child_spec
    })
}

/// Start a shared server as the broker does: the attaching run's whole
/// environment, nothing of the broker's.
pub fn spawn_server(command: &crate::broker_link::ServerCommand) -> Result<ServerProcess, String> {
    let how = Launch {
        name: &command.name,
        program: &command.program,
        args: &command.args,
        root: &command.root,
        own_dir_env: &command.own_dir_env,
    };
    how.spawn(|mut child_spec| {
        child_spec = child_spec.env_clear();
        for (var, value) in &command.env {
            child_spec = child_spec.env(var, value);
        }
        child_spec
    })
}

/// What both kinds of start share.
struct Launch<'a> {
    name: &'a str,
    program: &'a std::path::Path,
    args: &'a [String],
    root: &'a std::path::Path,
    own_dir_env: &'a [String],
}

impl Launch<'_> {
    fn spawn(&self, env: impl FnOnce(ChildSpec) -> ChildSpec) -> Result<ServerProcess, String> {
        let in_args = self.args.iter().any(|a| a.contains(OWN_DIR));
        let own_dir = if self.own_dir_env.is_empty() && !in_args {
            None
        } else {
            Some(
                tool_core::scratch::ScratchDir::create("lsp")
                    .map_err(|e| format!("cannot make {}'s own folder: {e}", self.name))?,
            )
        };
        let args: Vec<String> = match &own_dir {
            Some(dir) => self
                .args
                .iter()
                .map(|a| a.replace(OWN_DIR, &dir.path().to_string_lossy()))
                .collect(),
            None => self.args.to_vec(),
        };
        let mut child_spec = env(ChildSpec::new(self.program)
            .args(&args)
            .cwd(self.root)
            .stdin(Io::Pipe)
            .stdout(Io::Pipe)
            .stderr(Io::Pipe));
        if let Some(dir) = &own_dir {
            for var in self.own_dir_env {
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
}

/// How a client reaches its server: a process of its own, or a
/// connection to the broker's shared server.
pub(super) enum Link {
    Own(Box<ServerProcess>),
    Shared(tokio::net::UnixStream, crate::broker_link::Attached),
}

/// Attach to the broker's server for `spec`: the same command, the run's
/// whole environment as the server would get it, the same settings.
pub(super) async fn attach_shared(
    spec: &StartSpec,
    route: &crate::broker_link::BrokerRoute,
) -> Result<Link, String> {
    let mut env: std::collections::BTreeMap<String, String> = std::env::vars_os()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        })
        .collect();
    match &spec.path_env {
        Some(p) => env.insert("PATH".into(), p.to_string_lossy().into_owned()),
        None => env.remove("PATH"),
    };
    for (k, v) in &spec.env {
        env.insert(k.clone(), v.to_string_lossy().into_owned());
    }
    let attach = crate::broker_link::Attach {
        command: crate::broker_link::ServerCommand {
            name: spec.name.clone(),
            program: spec.program.clone(),
            args: spec.args.clone(),
            root: spec.root.clone(),
            env: env.into_iter().collect(),
            own_dir_env: spec.own_dir_env.clone(),
        },
        initialization_options: spec.initialization_options.clone(),
        settings: spec.settings.clone(),
        idle_ms: u64::try_from(route.idle.as_millis()).unwrap_or(u64::MAX),
        memory_ceiling_mb: route.memory_ceiling_mb,
        run_pid: std::process::id(),
    };
    let (stream, attached) = crate::broker_link::attach(route, &attach)
        .await
        .map_err(|e| format!("{}{e}", crate::broker_link::ATTACH_FAILED))?;
    Ok(Link::Shared(stream, attached))
}

/// Own the link to a shared server: close `rpc` (so the broker sees the
/// run detach) when the returned sender fires or is dropped.
pub(super) fn watch_detach(rpc: JsonRpc) -> oneshot::Sender<()> {
    let (kill_tx, kill_rx) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let mut closed = rpc.subscribe_closed();
        tokio::select! {
            _ = kill_rx => rpc.close("it was detached from the shared server".into()),
            _ = closed.wait_for(Option::is_some) => {}
        }
    });
    kill_tx
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
