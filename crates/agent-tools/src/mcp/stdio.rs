//! The host's stdio, with our line filter in front of rmcp: one task reads
//! the client's bytes and frames them ([`super::framing`]), answers lines
//! that are not JSON or are over the cap itself, and hands the rest to rmcp
//! through an in-memory pipe; rmcp's output comes back through another pipe
//! and goes out, with our own answers, through one writer task.
//!
//! Invariants:
//! - every message rmcp would answer without the request's id, and every
//!   request before `initialize`, is answered here ([`super::framing::Session`]);
//! - every line on stdout is whole: rmcp's messages and ours are queued as
//!   complete lines to the single writer, so they never interleave;
//! - no more than [`MAX_LINE`] bytes of one input line are ever held;
//! - the end of stdin ends the run (through [`EofSignal`]), as before the
//!   filter; a failed stdout ends it too;
//! - a slow client slows us down instead of growing a queue: every queue
//!   is bounded.

use super::framing::{
    judge, oversize_reply, parse_error_reply, Framed, LineSplitter, Route, Session, Verdict,
    MAX_LINE,
};
use super::shutdown::EofSignal;
use rmcp::service::RoleServer;
use rmcp::transport::async_rw::AsyncRwTransport;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tool_core::CancellationToken;

/// How much of the input is read at a time.
const READ_CHUNK: usize = 64 * 1024;
/// The in-memory pipes to and from rmcp.
const PIPE_BYTES: usize = 64 * 1024;
/// Whole lines waiting for stdout.
const QUEUED_LINES: usize = 64;

/// The transport rmcp serves on: the filtered input, and the pipe its
/// output goes through.
pub type FilteredTransport =
    AsyncRwTransport<RoleServer, tokio::io::DuplexStream, tokio::io::DuplexStream>;

/// The tasks behind a [`filter`]ed transport.
pub struct Pumps {
    input: JoinHandle<()>,
    rmcp_output: JoinHandle<()>,
    writer: JoinHandle<()>,
}

impl Pumps {
    /// Once rmcp has stopped: stop reading input, and let what is queued
    /// reach the client (within `within`).
    pub async fn finish(self, within: Duration) {
        self.input.abort();
        let drained = async {
            let _ = self.rmcp_output.await;
            let _ = self.writer.await;
        };
        if tokio::time::timeout(within, drained).await.is_err() {
            tracing::warn!("output still queued at shutdown was dropped");
        }
    }
}

/// Put the line filter between the client (`input`, `output`) and rmcp.
/// The end of `input` or a failed `output` cancels `run`.
pub fn filter<R, W>(input: R, output: W, run: CancellationToken) -> (FilteredTransport, Pumps)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (rmcp_in, to_rmcp) = tokio::io::duplex(PIPE_BYTES);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(PIPE_BYTES);
    let (lines, queued) = mpsc::channel::<Vec<u8>>(QUEUED_LINES);
    let input = EofSignal::new(input, run.clone());
    let pumps = Pumps {
        input: tokio::spawn(pump_input(input, to_rmcp, lines.clone())),
        rmcp_output: tokio::spawn(pump_rmcp_output(from_rmcp, lines)),
        writer: tokio::spawn(write_lines(queued, output, run)),
    };
    // rmcp's own cap counts the `\n` that ends each line we hand it.
    let transport =
        AsyncRwTransport::new_server(rmcp_in, rmcp_out).with_max_line_length(MAX_LINE + 1);
    (transport, pumps)
}

/// Read the client's input, answer what rmcp would drop, forward the rest.
async fn pump_input<R, P>(mut input: R, mut to_rmcp: P, answers: mpsc::Sender<Vec<u8>>)
where
    R: AsyncRead + Unpin,
    P: AsyncWrite + Unpin,
{
    let mut splitter = LineSplitter::new(MAX_LINE);
    let mut session = Session::default();
    let mut chunk = vec![0u8; READ_CHUNK];
    let mut framed = Vec::new();
    loop {
        let n = match input.read(&mut chunk).await {
            Ok(n) => n,
            Err(e) => {
                tracing::info!(error = %e, "reading stdin failed");
                0
            }
        };
        if n == 0 {
            framed.extend(splitter.finish());
        } else {
            splitter.push(&chunk[..n], &mut framed);
        }
        for line in framed.drain(..) {
            if !handle(line, &mut session, &mut to_rmcp, &answers).await {
                return;
            }
        }
        if n == 0 {
            // Dropping the pipe tells rmcp the input ended.
            return;
        }
    }
}

/// Deal with one framed line; false once nobody is listening any more.
async fn handle<P: AsyncWrite + Unpin>(
    line: Framed,
    session: &mut Session,
    to_rmcp: &mut P,
    answers: &mpsc::Sender<Vec<u8>>,
) -> bool {
    let answer = match &line {
        Framed::Oversize { len } => {
            tracing::warn!(len, "an input line over the limit was discarded");
            oversize_reply(*len)
        }
        Framed::Line(bytes) => match judge(bytes) {
            Verdict::Blank => return true,
            Verdict::Json(message) => match session.route(message) {
                Route::Answer(answer) => answer,
                Route::Drop(why) => {
                    tracing::warn!(why, "an input message was dropped");
                    return true;
                }
                Route::Forward => {
                    let sent = async {
                        to_rmcp.write_all(message).await?;
                        to_rmcp.write_all(b"\n").await?;
                        to_rmcp.flush().await
                    };
                    return sent.await.is_ok();
                }
            },
            Verdict::NotJson(why) => {
                tracing::warn!(%why, "an input line is not JSON");
                parse_error_reply(&why)
            }
        },
    };
    answers.send(answer).await.is_ok()
}

/// rmcp's output, as whole lines, into the writer's queue.
async fn pump_rmcp_output<P: AsyncRead + Unpin>(from_rmcp: P, lines: mpsc::Sender<Vec<u8>>) {
    let mut from_rmcp = BufReader::new(from_rmcp);
    loop {
        let mut line = Vec::new();
        match from_rmcp.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if !line.ends_with(b"\n") {
                    line.push(b'\n');
                }
                if lines.send(line).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// The one writer of stdout: whole lines, flushed when the queue is empty.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut queued: mpsc::Receiver<Vec<u8>>,
    mut output: W,
    run: CancellationToken,
) {
    while let Some(line) = queued.recv().await {
        let mut written = output.write_all(&line).await;
        if written.is_ok() && queued.is_empty() {
            written = output.flush().await;
        }
        if let Err(e) = written {
            tracing::info!(error = %e, "stdout failed: the client is gone");
            run.cancel();
            return;
        }
    }
    let _ = output.flush().await;
}
