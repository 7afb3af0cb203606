//! A kernel process: one interpreter running the embedded driver, its pipes,
//! and the tasks that read them.
//!
//! Invariant: the kernel leads its own process group (through
//! tool_core::process), so dropping a [`KernelProcess`] kills the interpreter
//! and everything a cell started.

use crate::config::{EvalConfig, Language};
use crate::interpreter::{self, Interpreter};
use crate::protocol::{
    DriverMessage, MarkerScanner, OutputPiece, Variable, INTERRUPTS_FD, REPLIES_FD, REQUESTS_FD,
};
use crate::sandbox::Sandbox;
use serde_json::Value;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;
use tokio::sync::mpsc;
use tool_core::process::{ChildProcess, ChildSpec, ExtraPipe, Io};

/// How long a kernel may take to list its variables.
const INSPECT_TIMEOUT: Duration = Duration::from_secs(10);

const PYTHON_DRIVER: &str = include_str!("drivers/kernel.py");
const JAVASCRIPT_DRIVER: &str = include_str!("drivers/kernel.js");

/// Which of the cell's streams a piece came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Whose output a piece of text is, by the frame markers around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame {
    /// Written between `begin;N` and `end;N`: cell N's.
    Cell(u64),
    /// Written outside every frame: by something an earlier cell left
    /// running (a timer, a thread, a background process) after it ended.
    Between,
}

/// Everything the reading tasks report, in arrival order.
#[derive(Debug)]
pub enum KernelEvent {
    Message(DriverMessage),
    /// Text of a stream, with the frame it was written in.
    Text(Stream, Frame, Vec<u8>),
    /// A marker of a stream (never `OutputPiece::Text`).
    Output(Stream, OutputPiece),
    /// The reply pipe closed: the driver is gone.
    RepliesClosed,
    StreamClosed(Stream),
}

/// A started kernel.
pub struct KernelProcess {
    pub language: Language,
    pub interpreter: Interpreter,
    /// The interpreter's own version, as the driver reported it.
    pub version: String,
    pub executable: String,
    /// How long it took from spawn to the driver's ready message.
    pub startup: Duration,
    pub(crate) child: ChildProcess,
    requests: pipe::Sender,
    interrupts: Option<pipe::Sender>,
    events: mpsc::UnboundedReceiver<KernelEvent>,
    /// Events that arrived while the host waited for something else (an
    /// inspect answer); the next cell reads them first.
    stashed: VecDeque<KernelEvent>,
    cells: u64,
    pub(crate) exited: Option<std::process::ExitStatus>,
}

impl std::fmt::Debug for KernelProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelProcess")
            .field("language", &self.language)
            .field("pid", &self.child.pid())
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

/// Why a kernel could not start.
#[derive(Debug, Clone)]
pub struct StartError(pub String);

/// Starts kernels for one run: where (the root, the sandbox) and on what
/// (the interpreter lookup, the config).
pub struct KernelFactory {
    root: PathBuf,
    config: EvalConfig,
    sandbox: Option<Arc<dyn Sandbox>>,
}

impl std::fmt::Debug for KernelFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelFactory")
            .field("root", &self.root)
            .field("sandbox", &self.sandbox.as_ref().map(|s| s.describe()))
            .finish_non_exhaustive()
    }
}

impl KernelFactory {
    pub fn new(
        root: impl Into<PathBuf>,
        config: EvalConfig,
        sandbox: Option<Arc<dyn Sandbox>>,
    ) -> Self {
        KernelFactory {
            root: root.into(),
            config,
            sandbox,
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn config(&self) -> &EvalConfig {
        &self.config
    }

    pub fn sandbox(&self) -> Option<&Arc<dyn Sandbox>> {
        self.sandbox.as_ref()
    }

    /// The interpreter a kernel for `language` would run on.
    pub fn interpreter(&self, language: Language) -> Result<Interpreter, String> {
        interpreter::resolve(language, &self.config, &self.root, None)
    }

    /// The command that starts a kernel, before the sandbox wraps it.
    fn command(&self, language: Language, interp: &Interpreter) -> ChildSpec {
        let mut spec = ChildSpec::new(&interp.program)
            .cwd(&self.root)
            .stdin(Io::Null)
            .stdout(Io::Pipe)
            .stderr(Io::Pipe)
            .extra_pipe(ExtraPipe::ToChild(REQUESTS_FD))
            .extra_pipe(ExtraPipe::FromChild(REPLIES_FD))
            .extra_pipe(ExtraPipe::ToChild(INTERRUPTS_FD));
        spec = match language {
            Language::Python => spec
                .args(["-u", "-c", PYTHON_DRIVER])
                .env("PYTHONUNBUFFERED", "1")
                .env("MPLBACKEND", "Agg"),
            Language::Javascript => spec.args(["-e", JAVASCRIPT_DRIVER]),
        };
        // A kernel on a virtualenv's python behaves as if it were activated, so
        // `!pip` and `!python` in a cell mean that environment too.
        if let Some(venv) = interp.virtualenv() {
            let mut dirs = vec![venv.join("bin")];
            if let Some(p) = std::env::var_os("PATH") {
                dirs.extend(std::env::split_paths(&p));
            }
            if let Ok(path) = std::env::join_paths(dirs) {
                spec = spec.env("PATH", path);
            }
            spec = spec.env("VIRTUAL_ENV", venv);
        }
        for k in &self.config.env_remove {
            spec = spec.env_remove(k);
        }
        for (k, v) in &self.config.env {
            spec = spec.env(k, v);
        }
        match &self.sandbox {
            Some(sb) => sb.wrap(spec),
            None => spec,
        }
    }

    /// Start a kernel and wait for its driver to say it is ready.
    pub async fn start(&self, language: Language) -> Result<KernelProcess, StartError> {
        let interp = self.interpreter(language).map_err(StartError)?;
        let spec = self.command(language, &interp);
        let started = Instant::now();
        let mut child = spec.spawn().map_err(|e| {
            StartError(format!(
                "cannot start the {language} kernel on {}: {e}",
                interp.program.display()
            ))
        })?;
        let requests = child.take_writer(REQUESTS_FD).expect("requests pipe");
        let replies = child.take_reader(REPLIES_FD).expect("replies pipe");
        let interrupts = child.take_writer(INTERRUPTS_FD);
        let (tx, mut events) = mpsc::unbounded_channel();
        spawn_reply_reader(replies, tx.clone());
        if let Some(out) = child.stdout.take() {
            spawn_stream_reader(out, Stream::Stdout, tx.clone());
        }
        if let Some(err) = child.stderr.take() {
            spawn_stream_reader(err, Stream::Stderr, tx);
        }
        let pid = child.pid();
        tracing::debug!(%language, pid, program = %interp.program.display(), "kernel starting");

        // Wait for `ready`; keep what it printed in case it never comes.
        let deadline = tokio::time::Instant::now() + self.config.start_timeout();
        let mut early = Vec::new();
        let mut exited = None;
        let ready = loop {
            tokio::select! {
                ev = events.recv() => match ev {
                    Some(KernelEvent::Message(DriverMessage::Ready { version, executable, .. })) => {
                        break Some((version, executable));
                    }
                    Some(KernelEvent::Text(_, _, t)) => early.extend(t),
                    Some(KernelEvent::RepliesClosed) | None => {
                        // Collect the last words before reporting.
                        exited = tokio::time::timeout(Duration::from_secs(2), child.wait()).await.ok().and_then(Result::ok);
                        while let Ok(ev) = events.try_recv() {
                            if let KernelEvent::Text(_, _, t) = ev { early.extend(t) }
                        }
                        break None;
                    }
                    Some(_) => {}
                },
                () = tokio::time::sleep_until(deadline) => break None,
            }
        };
        let Some((version, executable)) = ready else {
            let said = String::from_utf8_lossy(&early);
            let said = tool_core::format::cap_chars(said.trim(), 2000);
            let how = match exited {
                Some(status) => format!("it exited ({})", describe_exit(status)),
                None => format!(
                    "it did not answer within {} s",
                    self.config.start_timeout().as_secs_f64()
                ),
            };
            child.kill().await;
            return Err(StartError(format!(
                "the {language} kernel on {} did not start: {how}{}; check that this interpreter runs here{}",
                interp.program.display(),
                if said.is_empty() { String::new() } else { format!(". It printed:\n{said}\n") },
                if language == Language::Python { " (Python 3.8 or newer), or set [eval] python" } else { " (Node.js 16 or newer), or set [eval] node" },
            )));
        };
        let startup = started.elapsed();
        tracing::info!(%language, pid, ms = startup.as_millis() as u64, %version, "kernel ready");
        Ok(KernelProcess {
            language,
            interpreter: interp,
            version,
            executable,
            startup,
            child,
            requests,
            interrupts,
            events,
            stashed: VecDeque::new(),
            cells: 0,
            exited: None,
        })
    }
}

impl KernelProcess {
    pub fn pid(&self) -> u32 {
        self.child.pid()
    }

    /// The number the next cell gets (1 for the first cell of this kernel).
    pub(crate) fn next_cell(&mut self) -> u64 {
        self.cells += 1;
        self.cells
    }

    /// The next event, stashed ones first. Cancel-safe.
    pub(crate) async fn next_event(&mut self) -> Option<KernelEvent> {
        if let Some(ev) = self.stashed.pop_front() {
            return Some(ev);
        }
        self.events.recv().await
    }

    /// The user's variables (at most `max` described), asked of the driver
    /// between cells. Everything else that arrives meanwhile is kept for the
    /// next cell.
    pub async fn inspect(&mut self, max: usize) -> Result<(Vec<Variable>, usize), String> {
        self.send(&serde_json::json!({"type": "inspect", "max": max}))
            .await
            .map_err(|e| format!("the kernel is not reachable ({e})"))?;
        let deadline = tokio::time::Instant::now() + INSPECT_TIMEOUT;
        loop {
            match tokio::time::timeout_at(deadline, self.events.recv()).await {
                Err(_) => {
                    return Err(format!(
                        "the kernel did not answer within {} s (is something an earlier cell started keeping it busy?)",
                        INSPECT_TIMEOUT.as_secs()
                    ))
                }
                Ok(None) => return Err("the kernel is gone".into()),
                Ok(Some(KernelEvent::Message(DriverMessage::Inspect {
                    variables,
                    total,
                    error,
                }))) => {
                    return match error {
                        Some(e) => Err(format!("the kernel could not list its variables: {e}")),
                        None => Ok((variables, total)),
                    }
                }
                Ok(Some(KernelEvent::RepliesClosed)) => {
                    self.stashed.push_back(KernelEvent::RepliesClosed);
                    return Err("the kernel is gone".into());
                }
                Ok(Some(ev)) => self.stashed.push_back(ev),
            }
        }
    }

    /// Send one request line to the driver.
    pub(crate) async fn send(&mut self, msg: &Value) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(msg).map_err(std::io::Error::other)?;
        line.push(b'\n');
        self.requests.write_all(&line).await
    }

    /// Interrupt the running cell: SIGINT to the group (as a terminal's
    /// Ctrl-C would, so a subprocess the cell waits on stops too), plus a byte
    /// on the interrupt pipe for a driver that cannot take signals mid-script.
    pub(crate) async fn interrupt(&mut self) {
        let _ = self
            .child
            .signal_group(tool_core::process::Signal::Interrupt);
        if let Some(w) = &mut self.interrupts {
            if self.language == Language::Javascript {
                let _ = w.write_all(b"i").await;
            }
        }
    }

    /// Kill the whole group now.
    pub(crate) async fn kill(&mut self) {
        self.child.kill().await;
    }
}

/// How a kernel ended, in words: tool-core's wording, with what a crash of a
/// kernel most often means.
pub fn describe_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    let said = tool_core::process::describe_exit(status);
    let hint = match status.signal() {
        Some(libc::SIGSEGV) => ", a crash in native code",
        Some(libc::SIGKILL) => ", often the out-of-memory killer",
        Some(libc::SIGABRT) => ", an abort in native code",
        _ => "",
    };
    format!("{said}{hint}")
}

fn spawn_reply_reader(replies: pipe::Receiver, tx: mpsc::UnboundedSender<KernelEvent>) {
    tokio::spawn(async move {
        let mut lines = BufReader::with_capacity(64 * 1024, replies).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<DriverMessage>(&line) {
                Ok(msg) => {
                    if tx.send(KernelEvent::Message(msg)).is_err() {
                        break;
                    }
                }
                Err(e) => tracing::warn!(error = %e, "unreadable message from the kernel"),
            }
        }
        let _ = tx.send(KernelEvent::RepliesClosed);
    });
}

/// How much one read of a cell's stream takes at most. A flood arrives in
/// few large pieces, so capping it as it streams costs little per byte.
const STREAM_READ: usize = 1 << 20;
/// The pipe size asked for the cell's streams (Linux caps it, by default at
/// 1 MiB for unprivileged processes): fewer wake-ups on both sides.
const STREAM_PIPE_SIZE: libc::c_int = 1 << 20;

fn spawn_stream_reader<R>(mut reader: R, stream: Stream, tx: mpsc::UnboundedSender<KernelEvent>)
where
    R: tokio::io::AsyncRead + std::os::fd::AsRawFd + Unpin + Send + 'static,
{
    // SAFETY: F_SETPIPE_SZ on a descriptor we own; failure leaves the size as is.
    unsafe { libc::fcntl(reader.as_raw_fd(), libc::F_SETPIPE_SZ, STREAM_PIPE_SIZE) };
    tokio::spawn(async move {
        let mut scanner = MarkerScanner::default();
        let mut buf = vec![0u8; STREAM_READ];
        let mut pieces = Vec::new();
        let mut frame = Frame::Between;
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    scanner.feed(&buf[..n], &mut pieces);
                    if !send_framed(&tx, stream, &mut frame, &mut pieces) {
                        return;
                    }
                }
            }
        }
        scanner.finish(&mut pieces);
        send_framed(&tx, stream, &mut frame, &mut pieces);
        let _ = tx.send(KernelEvent::StreamClosed(stream));
    });
}

/// Send `pieces` on, text tagged with the frame it sits in; false once the
/// receiver is gone.
fn send_framed(
    tx: &mpsc::UnboundedSender<KernelEvent>,
    stream: Stream,
    frame: &mut Frame,
    pieces: &mut Vec<OutputPiece>,
) -> bool {
    for p in pieces.drain(..) {
        let ev = match p {
            OutputPiece::Text(t) => KernelEvent::Text(stream, *frame, t),
            OutputPiece::Begin { cell } => {
                *frame = Frame::Cell(cell);
                KernelEvent::Output(stream, p)
            }
            OutputPiece::End { .. } => {
                *frame = Frame::Between;
                KernelEvent::Output(stream, p)
            }
            OutputPiece::Display { .. } | OutputPiece::Skipped { .. } => {
                KernelEvent::Output(stream, p)
            }
        };
        if tx.send(ev).is_err() {
            return false;
        }
    }
    true
}
