//! What a server reports of its work: `$/progress` runs (begun, ended,
//! the last few remembered) and rust-analyzer's `experimental/serverStatus`,
//! from which the client tells whether it is still indexing.

use std::collections::BTreeMap;
use std::time::Instant;

/// What indexing the server reports.
#[derive(Debug, Default)]
pub(super) struct Activity {
    /// `$/progress` tokens begun and not ended, with what they said.
    pub(super) tokens: BTreeMap<String, Said>,
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
    /// Whether it reported anything between its begin and end
    /// (rust-analyzer's `cargo check` reports each crate it checked).
    pub reported: bool,
    /// The `source` of every diagnostic published while it ran, or after
    /// its end before another run of its token began.
    pub sources_published: std::collections::BTreeSet<String>,
}

impl ProgressRun {
    /// Whether the run did work a check's result can be read from: it
    /// reported progress, or a diagnostic of one of `sources` (any source
    /// when none are named) was published during it or after its end
    /// (rust-analyzer publishes a failed check's results, which come with
    /// no report, as late as just after the end). rust-analyzer ends a
    /// `cargo check` run cancelled by its restart with the same `end` as a
    /// finished one; the cancelled one did neither.
    pub fn did_work(&self, sources: &[String]) -> bool {
        self.reported
            || self
                .sources_published
                .iter()
                .any(|s| sources.is_empty() || sources.contains(s))
    }
}

/// What a progress run said: its title (at `begin`), its last message.
#[derive(Debug, Default)]
pub(super) struct Said {
    pub(super) title: String,
    pub(super) message: Option<String>,
}

impl Said {
    /// `title (message)`, or whichever of the two is not empty
    /// (basedpyright's title is empty: "1 file to analyze").
    fn describe(&self) -> String {
        let title = self.title.trim();
        match self
            .message
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty())
        {
            Some(m) if title.is_empty() => m.to_string(),
            Some(m) => format!("{title} ({m})"),
            None if title.is_empty() => "working".to_string(),
            None => title.to_string(),
        }
    }
}

/// How many finished progress runs are remembered.
pub(super) const PROGRESS_HISTORY: usize = 64;

impl Activity {
    pub(super) fn busy(&self) -> bool {
        !self.tokens.is_empty() || self.quiescent == Some(false)
    }
    pub(super) fn describe(&self) -> String {
        let mut parts: Vec<String> = self.tokens.values().map(Said::describe).collect();
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

#[cfg(test)]
mod tests {
    use super::Said;

    #[test]
    fn a_run_says_its_title_and_message_or_whichever_it_has() {
        let said = |title: &str, message: Option<&str>| {
            Said {
                title: title.into(),
                message: message.map(String::from),
            }
            .describe()
        };
        assert_eq!(said("indexing", Some("1/2")), "indexing (1/2)");
        assert_eq!(said("", Some("1 file to analyze")), "1 file to analyze");
        assert_eq!(
            said("Loading (workspace)", Some("3/4")),
            "Loading (workspace) (3/4)"
        );
        assert_eq!(said("indexing", None), "indexing");
        assert_eq!(said(" ", Some(" ")), "working");
    }
}
