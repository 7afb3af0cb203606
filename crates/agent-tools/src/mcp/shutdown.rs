//! The end of a run: noticing that the client is gone, and making sure no
//! child process outlives the server.
//!
//! Every child runs under a keeper (tool-core's `process`) that kills its
//! whole tree when its owner is dropped or this process dies, however; the
//! sweep here is the last line behind them. The server makes itself a child
//! subreaper, so a process whose parent died is re-parented to it instead of
//! to init, and the sweep finds every descendant among its direct children.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, ReadBuf};
use tool_core::process::signals::{self, Signal};
use tool_core::process::{pid_alive, procfs};
use tool_core::CancellationToken;

/// A reader that cancels a token when it reaches end of input: the client
/// closed our stdin, so the run is over even while calls are in flight.
pub struct EofSignal<R> {
    inner: R,
    on_eof: CancellationToken,
}

impl<R> EofSignal<R> {
    pub fn new(inner: R, on_eof: CancellationToken) -> Self {
        EofSignal { inner, on_eof }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for EofSignal<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        match &poll {
            Poll::Ready(Ok(())) if buf.filled().len() == before && buf.remaining() > 0 => {
                tracing::info!("stdin closed: the client is gone");
                self.on_eof.cancel();
            }
            Poll::Ready(Err(e)) => {
                tracing::info!(error = %e, "stdin failed: the client is gone");
                self.on_eof.cancel();
            }
            _ => {}
        }
        poll
    }
}

/// Re-parent orphaned descendants to this process (Linux), so the final
/// sweep can find them.
pub fn become_subreaper() {
    if let Err(e) = signals::become_subreaper() {
        tracing::warn!(error = %e, "cannot become a child subreaper");
    }
}

/// `(pid, pgid)` of every live direct child of this process.
pub fn live_children() -> Vec<(u32, u32)> {
    procfs::children(std::process::id())
        .into_iter()
        .map(|s| (s.pid, s.pgrp))
        .collect()
}

fn signal_all(children: &[(u32, u32)], sig: Signal) {
    let own_group = signals::own_group();
    for &(pid, pgid) in children {
        if pgid != own_group {
            let _ = signals::send_group(pgid, sig);
        }
        let _ = signals::send(pid, sig);
    }
}

/// Stop every child still running: SIGTERM to each one's process group,
/// then SIGKILL to what is left after `grace`. Returns how many there were.
pub async fn sweep_children(grace: Duration) -> usize {
    let first = live_children();
    if first.is_empty() {
        return 0;
    }
    tracing::info!(
        count = first.len(),
        "stopping child processes left at shutdown"
    );
    signal_all(&first, Signal::Terminate);
    let deadline = tokio::time::Instant::now() + grace;
    while tokio::time::Instant::now() < deadline {
        if first.iter().all(|(pid, _)| !pid_alive(*pid)) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Whatever is left, and anything re-parented to us meanwhile.
    let mut left = live_children();
    left.extend(first.iter().filter(|(pid, _)| pid_alive(*pid)));
    if !left.is_empty() {
        signal_all(&left, Signal::Kill);
    }
    first.len()
}
