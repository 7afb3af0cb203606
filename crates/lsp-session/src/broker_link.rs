//! The run's side of the shared-server broker (the `broker` module): where
//! the broker listens, what a run sends to attach and what it gets back,
//! starting a broker when none listens, and `doctor`'s question to it. The
//! client attaches through it; nothing here knows a server session.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::ffi::OsString;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::net::UnixStream;

/// The notification a run gets before its connection closes because the
/// server ended (a connection that closes without it lost the broker):
/// `{"reason": text, "end": ServerEnd}`.
pub const SERVER_GONE: &str = "$/broker/serverGone";

/// The request of a run's `reload`: the broker answers `{"pid", "others"}`
/// (the old server and how many other runs it tells), then stops the
/// server; the next attach starts a new one.
pub const RELOAD: &str = "$/broker/reload";

/// Why a shared server ended, as its runs are told.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum ServerEnd {
    /// It exited on its own (a crash): how.
    Exited { how: String },
    /// The broker stopped it: unused past the idle timeout, or the broker
    /// itself ended.
    Stopped,
    /// Its processes' resident memory passed the lowest ceiling its runs
    /// asked for.
    OverCeiling { rss_mb: u64, ceiling_mb: u64 },
    /// A run's `reload` restarted it.
    Reloaded,
}

impl ServerEnd {
    /// What a run says of it.
    pub fn describe(&self) -> String {
        match self {
            ServerEnd::Exited { how } => how.clone(),
            ServerEnd::Stopped => "it was stopped by the broker".into(),
            ServerEnd::OverCeiling { rss_mb, ceiling_mb } => format!(
                "it used {rss_mb} MiB, over its memory ceiling of {ceiling_mb} MiB: the broker stopped it"
            ),
            ServerEnd::Reloaded => "another run's `reload` restarted it".into(),
        }
    }
}

/// How an attach that failed begins (the supervisor falls back to a
/// server of the run's own).
pub const ATTACH_FAILED: &str = "cannot attach to the shared server: ";
/// How long the handshake may take on either side.
pub(crate) const HANDSHAKE_BOUND: Duration = Duration::from_secs(10);

/// How long a run waits for a broker it started to listen.
const START_BOUND: Duration = Duration::from_secs(10);
/// How a server is started: what a run would start itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerCommand {
    pub name: String,
    pub program: PathBuf,
    pub args: Vec<String>,
    pub root: PathBuf,
    /// The whole environment of the server (the run's, with its `PATH` and
    /// the entry's variables in place), sorted.
    pub env: Vec<(String, String)>,
    /// Variables set to a new folder of the server's own.
    pub own_dir_env: Vec<String>,
}

/// What a run sends first.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Attach {
    pub command: ServerCommand,
    pub initialization_options: Option<Value>,
    pub settings: Option<Value>,
    /// How long the server may stay unused after its last run detached.
    pub idle_ms: u64,
    /// The run's memory ceiling for this server in MiB (the broker applies
    /// the lowest its runs asked for).
    #[serde(default)]
    pub memory_ceiling_mb: Option<u64>,
    /// The run's pid, for the broker's log.
    pub run_pid: u32,
}

impl Attach {
    /// The sharing key: a hash of everything that makes the server what it
    /// is (not the run's pid or idle timeout).
    pub fn key(&self) -> String {
        use std::hash::{Hash, Hasher};
        let text = json!([self.command, self.initialization_options, self.settings]).to_string();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut h);
        format!("{:016x}", h.finish())
    }
}

/// What the broker answers an attach with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attached {
    /// The server's pid (its process group).
    pub pid: u32,
    /// How many runs share it, this one included.
    pub runs: usize,
}

/// Where a broker listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerPaths {
    pub dir: PathBuf,
}

impl BrokerPaths {
    /// The user's broker folder: `$AGENT_TOOLS_BROKER_DIR`, else
    /// `$XDG_RUNTIME_DIR/agent-tools`, else `/tmp/agent-tools-<uid>`.
    pub fn for_user() -> BrokerPaths {
        let dir = if let Some(d) = std::env::var_os("AGENT_TOOLS_BROKER_DIR") {
            PathBuf::from(d)
        } else if let Some(d) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
            PathBuf::from(d).join("agent-tools")
        } else {
            PathBuf::from(format!("/tmp/agent-tools-{}", uid()))
        };
        BrokerPaths { dir }
    }

    pub fn socket(&self) -> PathBuf {
        self.dir
            .join(format!("lsp-broker-{}.sock", env!("CARGO_PKG_VERSION")))
    }

    pub(crate) fn lock(&self) -> PathBuf {
        self.dir.join("lsp-broker.lock")
    }

    /// Make the folder (mode 0700), or check that an existing one is the
    /// user's own and closed to others.
    pub fn prepare(&self) -> Result<(), String> {
        let _ = std::fs::create_dir_all(&self.dir);
        let meta = std::fs::symlink_metadata(&self.dir)
            .map_err(|e| format!("cannot make the broker folder {}: {e}", self.dir.display()))?;
        if !meta.is_dir() || meta.uid() != uid() {
            return Err(format!(
                "the broker folder {} is not a folder of this user's own",
                self.dir.display()
            ));
        }
        if meta.mode() & 0o077 != 0 {
            std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| format!("cannot close {} to others: {e}", self.dir.display()))?;
        }
        Ok(())
    }
}

pub(crate) fn uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}
/// The command that starts a broker, set once by the binary.
static LAUNCHER: std::sync::OnceLock<Vec<OsString>> = std::sync::OnceLock::new();

/// Say how a broker is started (`agent-tools lsp-broker`): the binary
/// calls this once; without it a run only attaches to a broker that runs.
pub fn set_launcher(command: Vec<OsString>) {
    let _ = LAUNCHER.set(command);
}

/// The command that starts a broker, if the binary said.
pub fn launcher() -> Option<Vec<OsString>> {
    LAUNCHER.get().cloned()
}

/// The `doctor` lines of sharing: off, or the broker's servers (asked of
/// it, bounded), or that none runs.
pub fn doctor_lines(shared: bool) -> Vec<String> {
    if !shared {
        return Vec::new();
    }
    let paths = BrokerPaths::for_user();
    let socket = paths.socket();
    let head = format!(
        "shared servers on: runs attach through the broker at {}",
        socket.display()
    );
    match status_blocking(&socket) {
        Err(why) => vec![format!(
            "{head}; no broker runs now ({why}); the first run that needs a server starts it"
        )],
        Ok(answer) => {
            let servers = answer["servers"].as_array().cloned().unwrap_or_default();
            let mut lines = vec![format!(
                "{head}; the broker runs (pid {}) with {} server{}",
                answer["pid"],
                servers.len(),
                if servers.len() == 1 { "" } else { "s" }
            )];
            lines.extend(servers.iter().map(|s| {
                format!(
                    "shared {} at {}: pid {}, {} run{} attached",
                    s["name"].as_str().unwrap_or_default(),
                    s["root"].as_str().unwrap_or_default(),
                    s["pid"],
                    s["runs"],
                    if s["runs"] == json!(1) { "" } else { "s" }
                )
            }));
            lines
        }
    }
}

/// Ask the broker at `socket` for its servers (blocking, bounded).
fn status_blocking(socket: &Path) -> Result<Value, String> {
    use std::io::{Read, Write};
    let mut stream = std::os::unix::net::UnixStream::connect(socket).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(HANDSHAKE_BOUND))
        .map_err(|e| e.to_string())?;
    let body = json!({"status": {}}).to_string();
    write!(stream, "Content-Length: {}\r\n\r\n{body}", body.len()).map_err(|e| e.to_string())?;
    let mut answer = Vec::new();
    stream
        .read_to_end(&mut answer)
        .map_err(|e| format!("the broker did not answer: {e}"))?;
    let text = String::from_utf8_lossy(&answer);
    let (_, body) = text
        .split_once("\r\n\r\n")
        .ok_or("the broker's answer has no frame")?;
    serde_json::from_str(body).map_err(|e| format!("the broker's answer is not JSON: {e}"))
}

/// How a run reaches the broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerRoute {
    pub paths: BrokerPaths,
    /// The command that starts a broker when none listens (`None`: only
    /// attach to one that runs).
    pub launcher: Option<Vec<OsString>>,
    /// How long a server may stay unused after the run's detach (the run's
    /// idle timeout).
    pub idle: Duration,
    /// The memory ceiling in MiB the run asks the broker to keep its
    /// server under (the entry's own, else the run's).
    pub memory_ceiling_mb: Option<u64>,
}

/// Connect to the broker (starting it when none listens) and attach.
pub async fn attach(
    route: &BrokerRoute,
    attach: &Attach,
) -> Result<(UnixStream, Attached), String> {
    let socket = route.paths.socket();
    let stream = match UnixStream::connect(&socket).await {
        Ok(s) => s,
        Err(first) => {
            let Some(launcher) = &route.launcher else {
                return Err(format!(
                    "no broker listens on {}: {first}",
                    socket.display()
                ));
            };
            route.paths.prepare()?;
            start_broker(launcher)?;
            wait_connect(&socket).await?
        }
    };
    handshake(stream, attach).await
}

fn start_broker(launcher: &[OsString]) -> Result<(), String> {
    let (program, args) = launcher.split_first().ok_or("an empty broker command")?;
    // In `/`: the broker outlives the run, and the run's folder may go.
    let spec = tool_core::process::ChildSpec::new(program)
        .args(args)
        .cwd("/");
    tool_core::process::spawn_detached(&spec)
        .map(|_| ())
        .map_err(|e| format!("cannot start the broker (`{}`): {e}", spec.display()))
}

pub(crate) async fn wait_connect(socket: &Path) -> Result<UnixStream, String> {
    let deadline = Instant::now() + START_BOUND;
    loop {
        match UnixStream::connect(socket).await {
            Ok(s) => return Ok(s),
            Err(e) if Instant::now() >= deadline => {
                return Err(format!(
                    "the broker it started did not listen on {} within {} s: {e}",
                    socket.display(),
                    START_BOUND.as_secs()
                ))
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

async fn handshake(
    mut stream: UnixStream,
    attach: &Attach,
) -> Result<(UnixStream, Attached), String> {
    let exchange = async {
        crate::transport::write_frame(&mut stream, &json!({ "attach": attach }))
            .await
            .map_err(|e| format!("writing to the broker failed: {e}"))?;
        // Read unbuffered up to the end of the answer's frame: what follows
        // is the session's.
        let answer = read_one_frame(&mut stream).await?;
        if let Some(why) = answer["refused"].as_str() {
            return Err(format!("the broker refused: {why}"));
        }
        serde_json::from_value::<Attached>(answer["attached"].clone())
            .map_err(|e| format!("the broker's answer could not be read: {e}"))
    };
    let attached = tokio::time::timeout(HANDSHAKE_BOUND, exchange)
        .await
        .map_err(|_| {
            format!(
                "the broker did not answer within {} s",
                HANDSHAKE_BOUND.as_secs()
            )
        })??;
    Ok((stream, attached))
}

/// One frame read byte by byte, so nothing after it is consumed.
pub(crate) async fn read_one_frame(stream: &mut UnixStream) -> Result<Value, String> {
    use tokio::io::AsyncReadExt;
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let b = stream
            .read_u8()
            .await
            .map_err(|e| format!("the broker closed the connection: {e}"))?;
        head.push(b);
        if head.len() > 1024 {
            return Err("the broker's answer has no frame header".into());
        }
    }
    let head = String::from_utf8_lossy(&head);
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length:"))
        .and_then(|n| n.trim().parse().ok())
        .ok_or("the broker's answer has no Content-Length")?;
    let mut body = vec![0; len];
    stream
        .read_exact(&mut body)
        .await
        .map_err(|e| format!("the broker closed the connection: {e}"))?;
    serde_json::from_slice(&body).map_err(|e| format!("the broker's answer is not JSON: {e}"))
}
