//! [`CommandBackend`]: each run is one command line (per tier) started in
//! the workspace through tool-core's child-process helper. The brief goes to
//! its stdin; its stdout is the result, its stderr the diagnostics.

use crate::{RunOutcome, WorkerBackend, WorkerRun, WorkerTier};
use async_trait::async_trait;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tool_core::process::{capture_into, ChildSpec, Io, OutputRing};
use tool_core::CancellationToken;

/// Bytes of stdout kept as a run's result (the end of it: the final words).
const RESULT_BYTES: usize = 16 * 1024;
/// Bytes of stderr kept for a failure message.
const STDERR_TAIL: usize = 2 * 1024;
/// How long a cancelled run gets to exit on SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_millis(500);
/// How long to drain output after the command exited, when something it
/// started still holds the pipes open.
const DRAIN: Duration = Duration::from_millis(500);

/// Runs a worker as `sh -c COMMAND` in the workspace, one command per tier.
///
/// The command sees the brief on stdin and `VIBE_WORKER_ID`,
/// `VIBE_WORKER_LABEL`, `VIBE_WORKER_TIER` and `VIBE_WORKER_RUN` in its
/// environment. A non-zero exit is a failed run, with the stderr tail.
/// Whatever the command leaves running when it exits is killed, wherever it
/// moved (another process group or session).
#[derive(Debug, Clone)]
pub struct CommandBackend {
    workdir: PathBuf,
    fast: Option<String>,
    good: Option<String>,
    env: Vec<(OsString, OsString)>,
}

impl CommandBackend {
    pub fn new(workdir: impl AsRef<Path>) -> Self {
        CommandBackend {
            workdir: workdir.as_ref().to_path_buf(),
            fast: None,
            good: None,
            env: Vec::new(),
        }
    }

    /// The command line of the `fast` tier (a shell command).
    pub fn fast(mut self, command: impl Into<String>) -> Self {
        self.fast = Some(command.into());
        self
    }

    /// The command line of the `good` tier (a shell command).
    pub fn good(mut self, command: impl Into<String>) -> Self {
        self.good = Some(command.into());
        self
    }

    /// An extra environment variable for every run (`PATH`, an API key name).
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    pub fn command(&self, tier: WorkerTier) -> Option<&str> {
        match tier {
            WorkerTier::Fast => self.fast.as_deref(),
            WorkerTier::Good => self.good.as_deref(),
        }
    }
}

fn ring(capacity: usize) -> Arc<Mutex<OutputRing>> {
    Arc::new(Mutex::new(OutputRing::new(capacity)))
}

/// The kept end of a ring, saying how much was dropped before it.
fn kept(ring: &Mutex<OutputRing>) -> String {
    let ring = ring.lock().expect("output lock");
    let chunk = ring.read_since(0);
    if chunk.dropped > 0 {
        format!(
            "… ({} earlier bytes not kept)\n{}",
            chunk.dropped, chunk.text
        )
    } else {
        chunk.text
    }
}

#[async_trait]
impl WorkerBackend for CommandBackend {
    async fn run(&self, run: WorkerRun, cancel: CancellationToken) -> RunOutcome {
        let Some(command) = self.command(run.tier) else {
            return RunOutcome::Failed {
                why: format!("no command is configured for the {} tier", run.tier),
                output: String::new(),
            };
        };
        let mut spec = ChildSpec::new("sh")
            .arg("-c")
            .arg(command)
            .cwd(&self.workdir)
            .stdin(Io::Pipe)
            .stdout(Io::Pipe)
            .stderr(Io::Pipe)
            .env("VIBE_WORKER_ID", &run.worker_id)
            .env(crate::WORKER_MARKER, &run.worker_id)
            .env("VIBE_WORKER_LABEL", &run.label)
            .env("VIBE_WORKER_TIER", run.tier.as_str())
            .env("VIBE_WORKER_RUN", run.run.to_string());
        for (k, v) in &self.env {
            spec = spec.env(k, v);
        }
        let mut child = match spec.spawn() {
            Ok(c) => c,
            Err(e) => {
                return RunOutcome::Failed {
                    why: format!("cannot start the {} worker command: {e}", run.tier),
                    output: String::new(),
                }
            }
        };
        tracing::info!(worker = %run.worker_id, run = run.run, pid = child.pid(), "worker run started");
        run.processes.publish(child.probe());
        let stdout = ring(RESULT_BYTES);
        let stderr = ring(STDERR_TAIL);
        let mut readers = Vec::new();
        if let Some(out) = child.stdout.take() {
            readers.push(capture_into(out, stdout.clone()));
        }
        if let Some(err) = child.stderr.take() {
            readers.push(capture_into(err, stderr.clone()));
        }
        // Written from its own task so a command that never reads its stdin
        // cannot stall the run; dropping the pipe is its end of file.
        let writer = child.stdin.take().map(|mut stdin| {
            let brief = run.brief.clone();
            tokio::spawn(async move {
                let _ = stdin.write_all(brief.as_bytes()).await;
                let _ = stdin.shutdown().await;
            })
        });

        let status = tokio::select! {
            s = child.wait() => s,
            () = cancel.cancelled() => {
                let stopped = child.terminate(STOP_GRACE).await;
                if let Some(w) = writer { w.abort(); }
                let _ = tokio::time::timeout(DRAIN, join_readers(&mut readers)).await;
                for r in &readers { r.abort(); }
                return RunOutcome::Cancelled {
                    output: kept(&stdout),
                    killed: Some(stopped.killed),
                    survivors: stopped.survivors,
                };
            }
        };
        // The command is gone; drain what it wrote, then make sure nothing it
        // started lingers (holding the pipes open or not).
        let _ = tokio::time::timeout(DRAIN, join_readers(&mut readers)).await;
        child.kill().await;
        for r in &readers {
            r.abort();
        }
        if let Some(w) = writer {
            w.abort();
        }
        let output = kept(&stdout);
        match status {
            Ok(s) if s.success() => RunOutcome::Done { output },
            Ok(s) => {
                use std::os::unix::process::ExitStatusExt;
                // Through `sh -c`, a command killed by signal N shows as
                // exit status 128 + N.
                let by_signal = s.signal().or(s
                    .code()
                    .filter(|c| (129..=192).contains(c))
                    .map(|c| c - 128));
                let how = match (s.code(), by_signal) {
                    (Some(code), Some(sig)) => {
                        let name = tool_core::process::signal_name(sig)
                            .map(|n| format!(" ({n})"))
                            .unwrap_or_default();
                        format!("was killed by signal {sig}{name} (exit status {code})")
                    }
                    _ => format!("ended ({})", tool_core::process::describe_exit(s)),
                };
                let tail = stderr.lock().expect("output lock").tail(STDERR_TAIL);
                let tail = tail.trim_end();
                if tail.is_empty() || by_signal.is_some() {
                    // It did not end on its own terms, or said nothing.
                    let said = if tail.is_empty() {
                        " without a word (nothing on stderr)".to_string()
                    } else {
                        format!("; stderr tail:\n{tail}")
                    };
                    let why = format!("the worker command {how}{said}");
                    return RunOutcome::Lost { why, output };
                }
                let why = format!("the worker command {how}; stderr tail:\n{tail}");
                RunOutcome::Failed { why, output }
            }
            Err(e) => RunOutcome::Failed {
                why: format!("waiting for the worker command failed: {e}"),
                output,
            },
        }
    }

    fn tiers(&self) -> Vec<WorkerTier> {
        [WorkerTier::Fast, WorkerTier::Good]
            .into_iter()
            .filter(|t| self.command(*t).is_some())
            .collect()
    }

    fn describe(&self) -> Vec<String> {
        [WorkerTier::Fast, WorkerTier::Good]
            .into_iter()
            .map(|t| match self.command(t) {
                Some(c) => format!("{t}: sh -c {c:?} in {}", self.workdir.display()),
                None => format!("{t}: not configured"),
            })
            .collect()
    }
}

/// Wait for every reader task to end.
async fn join_readers(readers: &mut [tokio::task::JoinHandle<()>]) {
    for r in readers.iter_mut() {
        let _ = r.await;
    }
}
