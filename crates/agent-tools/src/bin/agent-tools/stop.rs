//! The signals that end a run: SIGTERM, SIGINT and SIGHUP, listened for by
//! `mcp` and `batch` alike. Once one arrives the command drops its toolset,
//! so every child process (and everything it started) is killed.

use tokio::signal::unix::{signal, Signal, SignalKind};

/// Listening for the signals that end a run.
pub(crate) struct StopSignals {
    term: Signal,
    int: Signal,
    hup: Signal,
}

impl StopSignals {
    pub(crate) fn install() -> Result<Self, String> {
        let listen = |kind: SignalKind| signal(kind).map_err(|e| e.to_string());
        Ok(StopSignals {
            term: listen(SignalKind::terminate())?,
            int: listen(SignalKind::interrupt())?,
            hup: listen(SignalKind::hangup())?,
        })
    }

    /// The next of them to arrive: its number and name.
    pub(crate) async fn recv(&mut self) -> (i32, &'static str) {
        tokio::select! {
            _ = self.term.recv() => (SignalKind::terminate().as_raw_value(), "SIGTERM"),
            _ = self.int.recv() => (SignalKind::interrupt().as_raw_value(), "SIGINT"),
            _ = self.hup.recv() => (SignalKind::hangup().as_raw_value(), "SIGHUP"),
        }
    }
}
