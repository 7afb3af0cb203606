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
    /// The human answered a multi-question card: one entry per question in
    /// card order (a question left blank has neither choices nor text), and
    /// a note typed for the whole card.
    AnsweredAll {
        answers: Vec<QuestionAnswer>,
        note: Option<String>,
    },
    /// The human declined to choose and asked to talk it over first. Never
    /// an answer, never an approval.
    Discuss,
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

/// The answer to one question of a multi-question card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QuestionAnswer {
    pub id: String,
    pub choices: Vec<String>,
    pub text: Option<String>,
}

impl QuestionAnswer {
    /// Whether the question got neither a choice nor (non-blank) text.
    pub fn is_blank(&self) -> bool {
        self.choices.is_empty() && self.text.as_deref().is_none_or(|t| t.trim().is_empty())
    }
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
