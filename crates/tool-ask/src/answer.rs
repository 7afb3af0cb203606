//! What comes back from a card.

use serde::Serialize;

/// The outcome of one card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Answer {
    /// The human answered: the chosen option labels (in card order) and/or
    /// the text they typed.
    Answered {
        choices: Vec<String>,
        text: Option<String>,
    },
    /// The human chose not to answer.
    Skipped,
    /// The human declined the question (an MCP elicitation's "decline").
    Declined,
    /// The human dismissed the question without answering (an MCP
    /// elicitation's "cancel").
    Cancelled,
    /// Nobody answered before the card expired.
    Expired,
    /// No human can see this card (no terminal, the UI is gone); `why` says
    /// which.
    NoHuman { why: String },
}

impl Answer {
    /// An answer choosing these option labels.
    pub fn choose<I, S>(labels: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Answer::Answered {
            choices: labels.into_iter().map(Into::into).collect(),
            text: None,
        }
    }

    /// An answer typed as free text.
    pub fn typed(text: impl Into<String>) -> Self {
        Answer::Answered {
            choices: Vec::new(),
            text: Some(text.into()),
        }
    }

    pub fn no_human(why: impl Into<String>) -> Self {
        Answer::NoHuman { why: why.into() }
    }
}
