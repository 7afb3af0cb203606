//! The [`QuestionPort`] trait: how a harness shows a card to a human and
//! gets the answer back.

use crate::{Answer, Card};
use async_trait::async_trait;

/// A way to put a card in front of a human.
///
/// Contract:
/// - `ask` shows the card in `card.target` and resolves with the human's
///   answer. It may return [`Answer::Expired`] itself, but need not: the
///   caller drops the future when `card.expires_in` has passed, so a port must
///   tidy up on drop (close the dialog, print "expired") rather than rely on
///   being polled to the end.
/// - With nobody to ask, return [`Answer::NoHuman`] at once. Never wait for a
///   human to appear, and never answer on the human's behalf.
/// - An answer must fit the card: chosen labels are the card's option labels
///   (one unless `multi_select`), text only when `allow_free_text`. The
///   caller refuses any other answer.
#[async_trait]
pub trait QuestionPort: Send + Sync {
    /// Show `card` and wait for its answer.
    async fn ask(&self, card: &Card) -> Answer;

    /// Whether a human can be reached right now. When false, callers fail
    /// at once without numbering or showing a card.
    fn human_attached(&self) -> bool {
        true
    }

    /// What this port is, for `doctor` and messages ("terminal", "MCP
    /// elicitation").
    fn describe(&self) -> String;
}
