//! The shared-server broker: one process per user that owns the language
//! servers of every checkout, so that runs on one checkout share one server
//! per (entry, project root, effective configuration) instead of each
//! starting its own.
//!
//! - The socket: `lsp-broker-<version>.sock` in `$XDG_RUNTIME_DIR/agent-tools`
//!   (else `/tmp/agent-tools-<uid>`), a folder of mode 0700 that only its
//!   owner may use; a connection of another user is refused by its peer
//!   credentials too. One broker per folder holds `lsp-broker.lock`.
//! - A run connects (`broker_link`, the run's side) and sends one frame,
//!   an [`Attach`]: the server's command, its whole environment, its
//!   settings. Their hash is the key:
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

pub use crate::broker_link::{
    attach, doctor_lines, launcher, set_launcher, Attach, Attached, BrokerPaths, BrokerRoute,
    ServerCommand, ServerEnd, ATTACH_FAILED, RELOAD, SERVER_GONE,
};
use crate::broker_link::{uid, HANDSHAKE_BOUND};
use mux::SharedServer;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;

/// How long a broker with nothing to do stays for a run that may come.
pub const LINGER: Duration = Duration::from_secs(2);
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
            // One being stopped (a `reload`, its ceiling) is not attached
            // to: the run gets a new server.
            if s.gone().is_none() && !s.stopping() {
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
        server.lower_ceiling(attach.memory_ceiling_mb);
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

/// Until the server is gone: stop it once it has had no run for `idle` or
/// once its processes' resident memory passes the ceiling its runs asked
/// for, and end a preview held past its bound.
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
            server.stop(ServerEnd::Stopped);
            continue;
        }
        if let Some(ceiling_mb) = server.ceiling_mb() {
            let rss_mb = tool_core::process::group_rss_kib(server.pid) / 1024;
            if rss_mb > ceiling_mb {
                tracing::warn!(
                    pid = server.pid,
                    rss_mb,
                    ceiling_mb,
                    "a shared server passed its memory ceiling"
                );
                server.stop(ServerEnd::OverCeiling { rss_mb, ceiling_mb });
            }
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
#[cfg(test)]
mod tests {
    use super::*;
    use crate::broker_link::{read_one_frame, wait_connect};
    use std::os::unix::fs::MetadataExt;

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
