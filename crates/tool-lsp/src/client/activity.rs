//! What a server reports of its work: `$/progress` runs (begun, ended,
//! the last few remembered) and rust-analyzer's `experimental/serverStatus`,
//! from which the client tells whether it is still indexing.

use std::collections::BTreeMap;
use std::time::Instant;

/// What indexing the server reports.
#[derive(Debug, Default)]
pub(super) struct Activity {
    /// `$/progress` tokens begun and not ended, with their title.
    pub(super) tokens: BTreeMap<String, String>,
    /// rust-analyzer's `experimental/serverStatus`.
    pub(super) quiescent: Option<bool>,
    pub(super) status_message: Option<String>,
    pub(super) busy_since: Option<Instant>,
    /// Whether the server ever reported progress or status.
    pub(super) ever_reported: bool,
    /// The last progress runs: token, when begun, when ended.
    pub(super) history: Vec<ProgressRun>,
}

/// One `$/progress` run, begin to end.
#[derive(Debug, Clone)]
pub struct ProgressRun {
    pub token: String,
    pub title: String,
    pub begun: Instant,
    pub ended: Option<Instant>,
}

/// How many finished progress runs are remembered.
pub(super) const PROGRESS_HISTORY: usize = 64;

impl Activity {
    pub(super) fn busy(&self) -> bool {
        !self.tokens.is_empty() || self.quiescent == Some(false)
    }
    pub(super) fn describe(&self) -> String {
        let mut parts: Vec<String> = self.tokens.values().cloned().collect();
        if self.quiescent == Some(false) {
            parts.push(
                self.status_message
                    .clone()
                    .unwrap_or_else(|| "server not quiescent".into()),
            );
        }
        parts.join("; ")
    }
}
