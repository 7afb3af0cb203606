//! Progress of a long call, sent as MCP progress notifications when the
//! client gave a progress token.
//!
//! Tools report through [`tool_core::ProgressSink`], which is synchronous, so
//! reports go through a channel to one forwarding task per call: they reach
//! the client in order, with a progress value that always increases (the MCP
//! spec requires it), and stop the moment the call is answered.

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::mpsc;
use tool_core::{CancellationToken, Progress, ProgressSink};

/// The sink a call's tool reports into.
pub struct McpProgress {
    tx: mpsc::UnboundedSender<Progress>,
}

impl ProgressSink for McpProgress {
    fn report(&self, progress: Progress) {
        let _ = self.tx.send(progress);
    }
}

/// The forwarding side of one call's progress; dropping it (or calling
/// [`finish`](Self::finish)) stops every later report.
pub struct ProgressForwarder {
    done: CancellationToken,
}

impl ProgressForwarder {
    /// Start forwarding reports for `token` to `peer`.
    pub fn start(peer: Peer<RoleServer>, token: ProgressToken) -> (Self, McpProgress) {
        let (tx, mut rx) = mpsc::unbounded_channel::<Progress>();
        let done = CancellationToken::new();
        let stop = done.clone();
        tokio::spawn(async move {
            let mut last = 0.0f64;
            loop {
                let p = tokio::select! {
                    () = stop.cancelled() => break,
                    p = rx.recv() => match p { Some(p) => p, None => break },
                };
                let (value, total) = match p.done {
                    Some(d) if d > last => (d, p.total),
                    _ => (last + 1.0, None),
                };
                last = value;
                let mut param = ProgressNotificationParam::new(token.clone(), value);
                param.total = total;
                if !p.message.is_empty() {
                    param.message = Some(p.message);
                }
                if peer.notify_progress(param).await.is_err() {
                    break;
                }
            }
        });
        (ProgressForwarder { done }, McpProgress { tx })
    }

    pub fn finish(&self) {
        self.done.cancel();
    }
}

impl Drop for ProgressForwarder {
    fn drop(&mut self) {
        self.done.cancel();
    }
}
