//! The shared-server broker: one process per user that owns the language
//! servers of every checkout, so that runs on one checkout share one server
//! per (entry, project root, effective configuration) instead of each
//! starting its own.
//!
//! - The socket: `lsp-broker-<version>.sock` in `$XDG_RUNTIME_DIR/agent-tools`
//!   (else `/tmp/agent-tools-<uid>`), a folder of mode 0700 that only its
//!   owner may use; a connection of another user is refused by its peer
//!   credentials too. One broker per folder holds `lsp-broker.lock`.
//! - A run connects and sends one frame, an [`Attach`]: the server's
//!   command, its whole environment, its settings. Their hash is the key:
//!   runs share a server only when every part is the same. The broker
//!   answers with the server's pid and how many runs share it, then the
//!   connection carries the run's LSP session ([`mux`]).
//! - Lifetime: a server without runs is stopped after the idle timeout its
//!   runs asked for; the broker exits when it has had no server and no
//!   connection for [`LINGER`]. Its servers run under keepers it owns, so
//!   its death (even by SIGKILL) ends them, and the runs' connections close.
//!
//! What is never shared: ledgers, baselines, notices, request ids and
//! previews stay in the run (the broker routes, it does not remember a
//! run's state); debug adapters and eval kernels are not brokered.

pub mod docs;
pub mod mux;

use mux::SharedServer;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::ffi::OsString;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;

/// The notification a run gets before its connection closes because the
/// server ended (a connection that closes without it lost the broker).
pub const SERVER_GONE: &str = "$/broker/serverGone";

/// How an attach that failed begins (the supervisor falls back to a
/// server of the run's own).
pub const ATTACH_FAILED: &str = "cannot attach to the shared server: ";

/// How long a broker with nothing to do stays for a run that may come.
pub const LINGER: Duration = Duration::from_secs(2);

/// How long the handshake may take on either side.
const HANDSHAKE_BOUND: Duration = Duration::from_secs(10);

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

    fn lock(&self) -> PathBuf {
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

fn uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// The broker: its servers by key.
#[derive(Default)]
pub struct Broker {
    servers: Mutex<HashMap<String, Arc<SharedServer>>>,
    connections: AtomicUsize,
    next_run: AtomicU64,
    /// Starts are one at a time, so two runs never start two servers.
    starting: tokio::sync::Mutex<()>,
}

impl Broker {
    /// Every server, with how many runs share it.
    pub fn servers(&self) -> Vec<(String, u32, usize)> {
        self.servers
            .lock()
            .expect("servers")
            .values()
            .map(|s| (s.command.name.clone(), s.pid, s.runs()))
            .collect()
    }

    /// What `doctor` shows: each server, its root, pid and runs.
    fn status(&self) -> Value {
        let mut servers: Vec<Value> = self
            .servers
            .lock()
            .expect("servers")
            .values()
            .filter(|s| s.gone().is_none())
            .map(|s| {
                json!({"name": s.command.name, "root": s.command.root, "pid": s.pid, "runs": s.runs()})
            })
            .collect();
        servers.sort_by_key(|s| s["pid"].as_u64());
        json!({ "servers": servers, "pid": std::process::id() })
    }

    async fn server_for(&self, attach: &Attach) -> Result<Arc<SharedServer>, String> {
        let key = attach.key();
        let _one = self.starting.lock().await;
        if let Some(s) = self.servers.lock().expect("servers").get(&key) {
            if s.gone().is_none() {
                return Ok(s.clone());
            }
        }
        let server =
            SharedServer::start(key.clone(), attach.command.clone(), attach.settings.clone())?;
        self.servers
            .lock()
            .expect("servers")
            .insert(key.clone(), server.clone());
        let idle = Duration::from_millis(attach.idle_ms.max(1));
        tokio::spawn(keep_server(server.clone(), idle));
        Ok(server)
    }

    /// Serve `listener` until the broker has had nothing to do for
    /// `linger`.
    pub async fn serve(self: Arc<Self>, listener: UnixListener, linger: Duration) {
        let mut quiet_since = Instant::now();
        let tick = (linger / 4).clamp(Duration::from_millis(20), Duration::from_millis(500));
        loop {
            tokio::select! {
                conn = listener.accept() => {
                    if let Ok((stream, _)) = conn {
                        self.connections.fetch_add(1, Ordering::SeqCst);
                        let me = self.clone();
                        tokio::spawn(async move {
                            me.connection(stream).await;
                            me.connections.fetch_sub(1, Ordering::SeqCst);
                        });
                    }
                }
                () = tokio::time::sleep(tick) => {}
            }
            self.servers
                .lock()
                .expect("servers")
                .retain(|_, s| s.gone().is_none());
            let busy = self.connections.load(Ordering::SeqCst) > 0
                || !self.servers.lock().expect("servers").is_empty();
            if busy {
                quiet_since = Instant::now();
            } else if quiet_since.elapsed() >= linger {
                return;
            }
        }
    }

    /// One run's connection: the handshake, then its session.
    async fn connection(&self, stream: UnixStream) {
        match stream.peer_cred() {
            Ok(cred) if cred.uid() == uid() => {}
            _ => return,
        }
        let (read, mut write) = stream.into_split();
        let mut read = tokio::io::BufReader::new(read);
        let first = tokio::time::timeout(HANDSHAKE_BOUND, crate::transport::read_frame(&mut read));
        let attach: Attach = match first.await {
            Ok(Ok(Some(v))) if v.get("status").is_some() => {
                let _ = crate::transport::write_frame(&mut write, &self.status()).await;
                return;
            }
            Ok(Ok(Some(v))) => match serde_json::from_value(v["attach"].clone()) {
                Ok(a) => a,
                Err(e) => {
                    let refused = json!({"refused": format!("not an attach: {e}")});
                    let _ = crate::transport::write_frame(&mut write, &refused).await;
                    return;
                }
            },
            _ => return,
        };
        let server = match self.server_for(&attach).await {
            Ok(s) => s,
            Err(why) => {
                let _ = crate::transport::write_frame(&mut write, &json!({"refused": why})).await;
                return;
            }
        };
        let run = self.next_run.fetch_add(1, Ordering::SeqCst) + 1;
        let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
        server.attach(run, tx);
        tracing::info!(run, run_pid = attach.run_pid, server = %attach.command.name, pid = server.pid, "a run attached");
        let attached = Attached {
            pid: server.pid,
            runs: server.runs(),
        };
        if crate::transport::write_frame(&mut write, &json!({ "attached": attached }))
            .await
            .is_err()
        {
            server.detach(run);
            return;
        }
        let writer = tokio::spawn(async move {
            while let Some(msg) = rx.recv().await {
                if crate::transport::write_frame(&mut write, &msg)
                    .await
                    .is_err()
                {
                    break;
                }
            }
        });
        loop {
            match crate::transport::read_frame(&mut read).await {
                Ok(Some(msg)) => server.from_run(run, msg),
                Err(crate::transport::FrameError::BadBody { .. }) => {}
                Ok(None) | Err(_) => break,
            }
        }
        server.detach(run);
        writer.abort();
    }
}

/// Until the server is gone: stop it once it has had no run for `idle`,
/// and end a preview held past its bound.
async fn keep_server(server: Arc<SharedServer>, idle: Duration) {
    let tick = (idle / 4).clamp(Duration::from_millis(20), Duration::from_secs(1));
    let mut gone = server.subscribe_gone();
    loop {
        tokio::select! {
            () = tokio::time::sleep(tick) => {}
            _ = gone.wait_for(Option::is_some) => return,
        }
        server.expire_preview();
        if server.unused_for().is_some_and(|t| t >= idle) {
            tracing::info!(pid = server.pid, "stopping an unused shared server");
            server.stop();
        }
    }
}

/// Run a broker on `paths` until it has nothing to do: `Ok(false)` when
/// another broker holds the folder already.
pub async fn run(paths: &BrokerPaths, linger: Duration) -> Result<bool, String> {
    paths.prepare()?;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(paths.lock())
        .map_err(|e| format!("cannot open {}: {e}", paths.lock().display()))?;
    if lock.try_lock().is_err() {
        return Ok(false);
    }
    let socket = paths.socket();
    let _ = std::fs::remove_file(&socket);
    let listener = UnixListener::bind(&socket)
        .map_err(|e| format!("cannot listen on {}: {e}", socket.display()))?;
    let _ = std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o700));
    Arc::new(Broker::default()).serve(listener, linger).await;
    // Removed while the lock is held: a broker starting now waits for it.
    let _ = std::fs::remove_file(&socket);
    drop(lock);
    Ok(true)
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

async fn wait_connect(socket: &Path) -> Result<UnixStream, String> {
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
async fn read_one_frame(stream: &mut UnixStream) -> Result<Value, String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_folder_is_closed_to_others() {
        let dir = tempfile::tempdir().unwrap();
        let paths = BrokerPaths {
            dir: dir.path().join("b"),
        };
        std::fs::create_dir(&paths.dir).unwrap();
        std::fs::set_permissions(&paths.dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        paths.prepare().unwrap();
        let mode = std::fs::metadata(&paths.dir).unwrap().mode() & 0o777;
        assert_eq!(format!("{mode:o}"), "700");
        // A file where the folder should be is refused, and left alone.
        let file = BrokerPaths {
            dir: dir.path().join("f"),
        };
        std::fs::write(&file.dir, "x").unwrap();
        let why = file.prepare().unwrap_err();
        assert!(why.ends_with("is not a folder of this user's own"), "{why}");
        assert_eq!(std::fs::read_to_string(&file.dir).unwrap(), "x");
    }

    #[tokio::test]
    async fn a_broker_refuses_what_is_not_an_attach_and_ends_when_idle() {
        let dir = tempfile::tempdir().unwrap();
        let paths = BrokerPaths {
            dir: dir.path().join("b"),
        };
        let serving = tokio::spawn({
            let paths = paths.clone();
            async move { run(&paths, Duration::from_millis(300)).await }
        });
        let socket = paths.socket();
        let mut stream = wait_connect(&socket).await.unwrap();
        let mode = std::fs::metadata(&socket).unwrap().mode() & 0o777;
        assert_eq!(format!("{mode:o}"), "700");
        // A second broker on the same folder steps aside.
        assert_eq!(run(&paths, Duration::from_millis(10)).await, Ok(false));
        crate::transport::write_frame(&mut stream, &json!({"attach": {"command": 1}}))
            .await
            .unwrap();
        let answer = read_one_frame(&mut stream).await.unwrap();
        expect_test::expect![[r#"{"refused":"not an attach: invalid type: integer `1`, expected struct ServerCommand"}"#]]
            .assert_eq(&answer.to_string());
        drop(stream);
        let ended = tokio::time::timeout(Duration::from_secs(30), serving).await;
        assert_eq!(ended.unwrap().unwrap(), Ok(true));
        assert!(!socket.exists());
    }
}
