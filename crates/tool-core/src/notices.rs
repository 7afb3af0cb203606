//! The run's notice board: news that reaches the model without being asked
//! for (a background worker finished, late diagnostics arrived).
//!
//! A component posts a [`Notice`] — its source, a level, one text, when — on
//! the run's [`NoticeBoard`], which it got from its binding
//! ([`Registry::notices`](crate::Registry::notices)) or from a call
//! ([`CallContext::notices`](crate::CallContext::notices)). The notice then:
//! - rides on the next result of any tool in the run, once, appended after
//!   the tool's own text in a labelled block ([`NoticeBoard::take_block`],
//!   done by the Registry for outermost calls only, so a bridged call never
//!   swallows a notice the model would not see);
//! - goes to every live subscriber as it is posted (the MCP host sends it as
//!   a `notifications/message` log notification).
//!
//! Invariants: a notice is delivered in a result at most once; notices are
//! delivered in the order they were posted; a notice withdrawn before any
//! result carried it (its news was told another way, such as the answer of
//! `vibe_wait`) is never appended; pending notices are capped at
//! [`MAX_PENDING`], the oldest dropped first and the drop counted in the block.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};
use tokio::sync::broadcast;

/// Notices kept for the next result before the oldest is dropped.
pub const MAX_PENDING: usize = 50;
/// Notices a slow subscriber may lag behind before it misses some.
const SUBSCRIBER_BACKLOG: usize = 256;

/// How much a notice matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum NoticeLevel {
    /// Expected news (a worker finished well).
    Info,
    /// Something went wrong somewhere else (a worker failed or was lost).
    Warning,
}

impl NoticeLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeLevel::Info => "info",
            NoticeLevel::Warning => "warning",
        }
    }
}

impl fmt::Display for NoticeLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One piece of news for the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    /// Who posted it (`vibe`, `lsp`): the MCP logger name.
    pub source: String,
    pub level: NoticeLevel,
    pub text: String,
    /// When it was posted.
    pub posted_at: SystemTime,
    posted: Instant,
    /// Set by posters that may withdraw it ([`NoticeBoard::withdraw`]).
    key: Option<String>,
}

impl Notice {
    /// How long ago it was posted.
    pub fn age(&self) -> std::time::Duration {
        self.posted.elapsed()
    }
}

#[derive(Default)]
struct Pending {
    notices: VecDeque<Notice>,
    /// Dropped for the cap since the last block.
    dropped: usize,
}

struct BoardInner {
    pending: Mutex<Pending>,
    live: broadcast::Sender<Notice>,
}

/// One run's notice board. Cheap to clone: clones are the same board.
#[derive(Clone)]
pub struct NoticeBoard {
    inner: Arc<BoardInner>,
}

impl Default for NoticeBoard {
    fn default() -> Self {
        let (live, _) = broadcast::channel(SUBSCRIBER_BACKLOG);
        NoticeBoard {
            inner: Arc::new(BoardInner {
                pending: Mutex::new(Pending::default()),
                live,
            }),
        }
    }
}

impl fmt::Debug for NoticeBoard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NoticeBoard")
            .field("pending", &self.pending_count())
            .finish_non_exhaustive()
    }
}

impl NoticeBoard {
    pub fn new() -> Self {
        Self::default()
    }

    /// Post a notice for the next result and for every subscriber.
    pub fn post(&self, source: &str, level: NoticeLevel, text: impl Into<String>) {
        self.post_keyed(source, level, text, None);
    }

    /// [`post`](Self::post) with a key that [`withdraw`](Self::withdraw)
    /// can name later.
    pub fn post_keyed(
        &self,
        source: &str,
        level: NoticeLevel,
        text: impl Into<String>,
        key: Option<String>,
    ) {
        let notice = Notice {
            source: source.to_string(),
            level,
            text: text.into(),
            posted_at: SystemTime::now(),
            posted: Instant::now(),
            key,
        };
        tracing::info!(source, level = %level, text = %notice.text, "notice posted");
        {
            let mut pending = self.inner.pending.lock().expect("notices lock");
            if pending.notices.len() >= MAX_PENDING {
                pending.notices.pop_front();
                pending.dropped += 1;
            }
            pending.notices.push_back(notice.clone());
        }
        // No subscriber is not an error: the notice still waits for a result.
        let _ = self.inner.live.send(notice);
    }

    /// Drop the pending notices posted with `key`: their news reached the
    /// model another way. Subscribers already had them.
    pub fn withdraw(&self, key: &str) {
        let mut pending = self.inner.pending.lock().expect("notices lock");
        pending.notices.retain(|n| n.key.as_deref() != Some(key));
    }

    /// Every notice posted from now on, as it is posted.
    pub fn subscribe(&self) -> broadcast::Receiver<Notice> {
        self.inner.live.subscribe()
    }

    pub fn pending_count(&self) -> usize {
        self.inner
            .pending
            .lock()
            .expect("notices lock")
            .notices
            .len()
    }

    /// Take the pending notices (oldest first) and how many were dropped for
    /// the cap; afterwards none is pending.
    pub fn take(&self) -> (Vec<Notice>, usize) {
        let mut pending = self.inner.pending.lock().expect("notices lock");
        let dropped = std::mem::take(&mut pending.dropped);
        (pending.notices.drain(..).collect(), dropped)
    }

    /// The pending notices as the block appended to a result, taking them;
    /// `None` when none is pending.
    pub fn take_block(&self) -> Option<String> {
        let (notices, dropped) = self.take();
        if notices.is_empty() && dropped == 0 {
            return None;
        }
        Some(block(&notices, dropped))
    }
}

/// The labelled block of notices appended after a tool's own text.
pub fn block(notices: &[Notice], dropped: usize) -> String {
    let mut out = format!(
        "--- {} from elsewhere in this run (not part of this result) ---",
        crate::format::plural(notices.len(), "notice", "notices")
    );
    if dropped > 0 {
        out.push_str(&format!(
            "\n({dropped} older notices were dropped: at most {MAX_PENDING} are kept)"
        ));
    }
    for n in notices {
        out.push_str(&format!(
            "\n[{} {}, {:.1} s ago] {}",
            n.source,
            n.level,
            n.age().as_secs_f64(),
            n.text
        ));
    }
    out
}

/// `text` with each notice line's age replaced by `…`, so tests (here and
/// in other crates) can compare a result with its notices exactly.
pub fn mask_ages(text: &str) -> String {
    text.lines()
        .map(|l| match (l.find(", "), l.find(" s ago]")) {
            (Some(a), Some(b)) if l.starts_with('[') && a < b => {
                format!("{}, …{}", &l[..a], &l[b + 6..])
            }
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::mask_ages as without_ages;

    #[test]
    fn pending_notices_are_taken_once_in_order() {
        let board = NoticeBoard::new();
        assert_eq!(board.take_block(), None);
        board.post("vibe", NoticeLevel::Info, "w1 done");
        board.post("lsp", NoticeLevel::Warning, "late diagnostics");
        let block = board.take_block().expect("two pending");
        expect_test::expect![[r#"
            --- 2 notices from elsewhere in this run (not part of this result) ---
            [vibe info, …] w1 done
            [lsp warning, …] late diagnostics"#]]
        .assert_eq(&without_ages(&block));
        assert_eq!(board.take_block(), None, "a notice is delivered once");
    }

    #[test]
    fn a_withdrawn_notice_is_never_appended() {
        let board = NoticeBoard::new();
        board.post_keyed("vibe", NoticeLevel::Info, "w1 done", Some("w1".into()));
        board.post_keyed("vibe", NoticeLevel::Info, "w2 done", Some("w2".into()));
        board.withdraw("w1");
        let (notices, dropped) = board.take();
        let texts: Vec<&str> = notices.iter().map(|n| n.text.as_str()).collect();
        assert_eq!((texts, dropped), (vec!["w2 done"], 0));
    }

    #[test]
    fn the_oldest_are_dropped_over_the_cap_and_counted() {
        let board = NoticeBoard::new();
        for i in 0..MAX_PENDING + 3 {
            board.post("vibe", NoticeLevel::Info, format!("n{i}"));
        }
        let (notices, dropped) = board.take();
        assert_eq!(dropped, 3);
        assert_eq!(notices.len(), MAX_PENDING);
        assert_eq!(notices[0].text, "n3");
    }

    #[tokio::test]
    async fn subscribers_get_each_notice_as_it_is_posted() {
        let board = NoticeBoard::new();
        let mut rx = board.subscribe();
        board.post("vibe", NoticeLevel::Warning, "w3 lost");
        let got = rx.recv().await.unwrap();
        assert_eq!(
            (got.source.as_str(), got.level, got.text.as_str()),
            ("vibe", NoticeLevel::Warning, "w3 lost")
        );
        assert_eq!(board.pending_count(), 1, "the result still gets it");
    }
}
