//! The MCP host: one run's tools served over MCP on stdio (`agent-tools mcp`).
//!
//! One process is one run. Every resource the run binds (language servers,
//! the debug session, kernels, workers) belongs to this process and is shut
//! down, with every child process, when the client disconnects or the process
//! is signalled.
//!
//! - [`catalog`]: specs → MCP tools, annotations from the tier;
//! - [`results`]: outputs and errors → `tools/call` answers;
//! - [`progress`]: progress notifications for long calls;
//! - [`notices`]: the run's notices as log notifications, as they are posted;
//! - [`client`]: the connected client, elicitation, the elicitation approver;
//! - [`host`]: the server handler;
//! - [`shutdown`]: noticing the client left, and the final child sweep;
//! - [`framing`]: input lines with a cap, judged before rmcp sees them;
//! - [`stdio`]: the line filter between stdio and rmcp, and the one writer
//!   of stdout;
//! - [`config`]: the `[mcp]` config section;
//! - `ask` (with the `ask` feature): `ask_user` over elicitation.
//!
//! Logs never go to stdout here: stdout is the protocol.

#[cfg(feature = "ask")]
pub mod ask;
pub mod catalog;
pub mod client;
pub mod config;
pub mod framing;
pub mod host;
pub mod notices;
pub mod progress;
pub mod results;
pub mod shutdown;
pub mod stdio;

pub use client::{ClientLink, ElicitationApprover};
pub use config::{ApprovalPolicy, McpConfig};
pub use host::McpHost;

use rmcp::ServiceExt;
use std::time::Duration;
use tool_core::CancellationToken;

/// How a served session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionEnd {
    /// The client closed the connection.
    ClientClosed,
    /// `stop` was cancelled (a signal).
    Stopped,
}

/// Serve `host` on this process's stdin and stdout until the client leaves
/// or `stop` is cancelled. Calls still in flight are cancelled. The caller
/// drops the run's resources afterwards and sweeps the children
/// ([`shutdown::sweep_children`]).
pub async fn serve_stdio(host: McpHost, stop: CancellationToken) -> Result<SessionEnd, String> {
    shutdown::become_subreaper();
    let (reader, writer) = rmcp::transport::stdio_pipes();
    serve_on(host, reader, writer, stop).await
}

/// [`serve_stdio`] on any pair of streams (tests use in-memory pipes).
pub async fn serve_on<R, W>(
    host: McpHost,
    input: R,
    output: W,
    stop: CancellationToken,
) -> Result<SessionEnd, String>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let run = host.run_token();
    let (transport, pumps) = stdio::filter(input, output, run.clone());
    let end = serve_filtered(host, transport, stop).await;
    pumps.finish(Duration::from_millis(500)).await;
    end
}

async fn serve_filtered(
    host: McpHost,
    transport: stdio::FilteredTransport,
    stop: CancellationToken,
) -> Result<SessionEnd, String> {
    let run = host.run_token();
    let stop_for_run = {
        let run = run.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            stop.cancelled().await;
            run.cancel();
        })
    };
    let served = host.serve_with_ct(transport, run.clone()).await;
    let service = match served {
        Ok(s) => s,
        Err(e) => {
            stop_for_run.abort();
            if stop.is_cancelled() {
                return Ok(SessionEnd::Stopped);
            }
            if run.is_cancelled() {
                return Ok(SessionEnd::ClientClosed);
            }
            return Err(format!("the MCP handshake failed: {e}"));
        }
    };
    let waiting = service.waiting();
    tokio::pin!(waiting);
    tokio::select! {
        _ = &mut waiting => {}
        () = run.cancelled() => {
            // Let the service loop wind down briefly; calls were cancelled
            // with `run` and nobody is left to read their answers.
            let _ = tokio::time::timeout(Duration::from_millis(500), &mut waiting).await;
        }
    }
    run.cancel();
    stop_for_run.abort();
    Ok(if stop.is_cancelled() {
        SessionEnd::Stopped
    } else {
        SessionEnd::ClientClosed
    })
}

#[cfg(test)]
mod tests;
