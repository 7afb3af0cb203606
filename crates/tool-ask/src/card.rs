//! The card a human sees: what is asked, where, and which answers it accepts.
//!
//! A [`QuestionDraft`] is checked before anything is shown; only a valid draft
//! becomes a numbered [`Card`].

use serde::Serialize;
use std::collections::HashSet;
use std::time::Duration;
use tool_core::{Tier, ToolError};

/// Where cards are shown: a conversation pane of an embedding UI, the
/// terminal of the binary, an MCP client's elicitation dialog. The port uses
/// it to put the card in the right place; the answer does not depend on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TargetSpace {
    /// A stable id the port understands (a conversation id, `terminal`).
    pub id: String,
    /// What a person would call it, for messages.
    pub label: String,
}

impl TargetSpace {
    pub fn new(id: impl Into<String>, label: impl Into<String>) -> Self {
        TargetSpace {
            id: id.into(),
            label: label.into(),
        }
    }

    /// The controlling terminal of this process.
    pub fn terminal() -> Self {
        TargetSpace::new("terminal", "this terminal")
    }
}

/// One numbered choice on a card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CardOption {
    pub label: String,
    pub description: Option<String>,
    /// The asker's recommendation (at most one per question); shown as such,
    /// never chosen on the human's behalf.
    pub recommended: bool,
}

impl CardOption {
    pub fn new(label: impl Into<String>) -> Self {
        CardOption {
            label: label.into(),
            description: None,
            recommended: false,
        }
    }

    pub fn described(label: impl Into<String>, description: impl Into<String>) -> Self {
        CardOption {
            label: label.into(),
            description: Some(description.into()),
            recommended: false,
        }
    }
}

/// The most questions one card holds.
pub const MAX_QUESTIONS: usize = 4;
/// The most options one question offers.
pub const MAX_OPTIONS: usize = 12;
/// The longest header of a question, in characters.
pub const MAX_HEADER: usize = 30;

/// One question of a multi-question card. A typed answer is always possible.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CardQuestion {
    /// What the answer is keyed by (unique on the card).
    pub id: String,
    /// A short title for the question (at most [`MAX_HEADER`] characters).
    pub header: String,
    pub question: String,
    /// Shown numbered from 1 in this order; at most [`MAX_OPTIONS`].
    pub options: Vec<CardOption>,
    /// Whether several options may be chosen.
    pub multi: bool,
}

/// Why the card is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CardKind {
    /// The model called `ask_user`.
    Question,
    /// The Registry asks before a write or exec tool runs. The options are
    /// always [`CardKind::APPROVE`] and [`CardKind::DENY`].
    Approval { tool: String, tier: Tier },
}

impl CardKind {
    pub const APPROVE: &'static str = "approve";
    pub const DENY: &'static str = "deny";
}

/// A card that passed validation and was given its number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Card {
    /// Per run, increasing from 1, shared by questions and approvals.
    pub number: u64,
    pub kind: CardKind,
    pub target: TargetSpace,
    pub question: String,
    pub context: Option<String>,
    /// Shown numbered from 1 in this order.
    pub options: Vec<CardOption>,
    pub allow_free_text: bool,
    pub multi_select: bool,
    /// The questions of a multi-question card, answered together; empty for
    /// the single-question form (`question` and `options` above). With
    /// questions, `question` is the card's title.
    pub questions: Vec<CardQuestion>,
    /// The answer is masked on input and kept out of every log line.
    pub secret: bool,
    /// How long the card waits for an answer before it expires.
    #[serde(serialize_with = "as_secs")]
    pub expires_in: Duration,
}

fn as_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

impl Card {
    /// The option labels, in order.
    pub fn labels(&self) -> impl Iterator<Item = &str> {
        self.options.iter().map(|o| o.label.as_str())
    }

    /// The option shown as number `n` (1-based).
    pub fn option_number(&self, n: usize) -> Option<&CardOption> {
        n.checked_sub(1).and_then(|i| self.options.get(i))
    }
}

/// A card before validation and numbering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuestionDraft {
    pub kind: CardKind,
    pub question: String,
    pub context: Option<String>,
    pub options: Vec<CardOption>,
    pub allow_free_text: bool,
    pub multi_select: bool,
    pub questions: Vec<CardQuestion>,
    pub secret: bool,
}

impl QuestionDraft {
    /// A question with no options yet.
    pub fn question(question: impl Into<String>) -> Self {
        QuestionDraft {
            kind: CardKind::Question,
            question: question.into(),
            context: None,
            options: Vec::new(),
            allow_free_text: false,
            multi_select: false,
            questions: Vec::new(),
            secret: false,
        }
    }

    /// Check the draft before anything is shown, and tidy it (trimmed text,
    /// empty context and descriptions dropped). Each error says how to fix
    /// the call.
    pub fn validate(mut self) -> Result<QuestionDraft, ToolError> {
        self.question = self.question.trim().to_string();
        if self.question.is_empty() && self.questions.is_empty() {
            return Err(ToolError::bad_args(
                "`question` is empty; write the question the operator should answer (or give `questions`)",
            ));
        }
        self.context = self
            .context
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty());
        check_options(&mut self.options, "options")?;
        if !self.questions.is_empty() {
            return self.validate_questions();
        }
        if self.secret && (!self.options.is_empty() || !self.allow_free_text) {
            return Err(ToolError::bad_args(
                "`secret` asks for a typed answer that is masked and kept out of logs: drop the \
                 options and set allow_free_text: true",
            ));
        }
        if self.multi_select && self.options.is_empty() {
            return Err(ToolError::bad_args(
                "`multi_select` needs `options` to choose from; add options or drop multi_select",
            ));
        }
        if self.options.is_empty() && !self.allow_free_text {
            return Err(ToolError::bad_args(
                "with no `options` the operator could only type an answer, but `allow_free_text` \
                 is false; add options or set allow_free_text: true",
            ));
        }
        Ok(self)
    }

    fn validate_questions(mut self) -> Result<QuestionDraft, ToolError> {
        if !self.options.is_empty() || self.multi_select || self.allow_free_text || self.secret {
            return Err(ToolError::bad_args(
                "with `questions`, give options per question (and `multi` there); `options`, \
                 `multi_select`, `allow_free_text` and `secret` belong to the single-question form \
                 (a typed answer is always possible on a question)",
            ));
        }
        if self.questions.len() > MAX_QUESTIONS {
            return Err(ToolError::bad_args(format!(
                "`questions` has {}; a card holds at most {MAX_QUESTIONS} — ask the rest on another card",
                self.questions.len()
            )));
        }
        let mut ids = HashSet::new();
        for (i, q) in self.questions.iter_mut().enumerate() {
            q.id = q.id.trim().to_string();
            q.header = q.header.trim().to_string();
            q.question = q.question.trim().to_string();
            if q.id.is_empty() {
                return Err(ToolError::bad_args(format!(
                    "`questions[{i}].id` is empty; give every question an id to key its answer"
                )));
            }
            if q.id.starts_with('_')
                || !q
                    .id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(ToolError::bad_args(format!(
                    "`questions[{i}].id` `{}`: use letters, digits, - and _ (not first)",
                    q.id
                )));
            }
            if !ids.insert(q.id.clone()) {
                return Err(ToolError::bad_args(format!(
                    "question id `{}` appears more than once; ids must be unique",
                    q.id
                )));
            }
            if q.header.is_empty() || q.header.chars().count() > MAX_HEADER {
                return Err(ToolError::bad_args(format!(
                    "`questions[{i}].header` must be 1–{MAX_HEADER} characters (a short title)"
                )));
            }
            if q.question.is_empty() {
                return Err(ToolError::bad_args(format!(
                    "`questions[{i}].question` is empty; write the question"
                )));
            }
            check_options(&mut q.options, &format!("questions[{i}].options"))?;
            if q.multi && q.options.is_empty() {
                return Err(ToolError::bad_args(format!(
                    "`questions[{i}].multi` needs options to choose from"
                )));
            }
        }
        Ok(self)
    }
}

/// Tidy and check one list of options: labels non-empty and unique, at most
/// [`MAX_OPTIONS`], at most one recommended.
fn check_options(options: &mut [CardOption], field: &str) -> Result<(), ToolError> {
    if options.len() > MAX_OPTIONS {
        return Err(ToolError::bad_args(format!(
            "`{field}` has {}; at most {MAX_OPTIONS} options fit a card",
            options.len()
        )));
    }
    if options.iter().filter(|o| o.recommended).count() > 1 {
        return Err(ToolError::bad_args(format!(
            "`{field}` marks more than one option recommended; mark at most one"
        )));
    }
    let mut seen = HashSet::new();
    for (i, option) in options.iter_mut().enumerate() {
        option.label = option.label.trim().to_string();
        if option.label.is_empty() {
            return Err(ToolError::bad_args(format!(
                "`{field}[{i}].label` is empty; give every option a short label"
            )));
        }
        if !seen.insert(option.label.to_lowercase()) {
            return Err(ToolError::bad_args(format!(
                "option label `{}` appears more than once; option labels must be unique",
                option.label
            )));
        }
        option.description = option
            .description
            .take()
            .map(|d| d.trim().to_string())
            .filter(|d| !d.is_empty());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draft(options: &[&str]) -> QuestionDraft {
        let mut d = QuestionDraft::question("Which one?");
        d.options = options.iter().map(|l| CardOption::new(*l)).collect();
        d
    }

    #[test]
    fn valid_drafts_are_tidied() {
        let mut d = draft(&[" a ", "b"]);
        d.context = Some("  ".into());
        d.options[1].description = Some(" why b ".into());
        let d = d.validate().unwrap();
        assert_eq!(d.options[0].label, "a");
        assert_eq!(d.options[1].description.as_deref(), Some("why b"));
        assert_eq!(d.context, None);
    }

    #[test]
    fn every_rule_has_its_own_message() {
        let msg = |d: QuestionDraft| d.validate().unwrap_err().to_string();
        let mut empty = draft(&["a"]);
        empty.question = "  ".into();
        expect_test::expect!["bad arguments: `question` is empty; write the question the operator should answer (or give `questions`)"].assert_eq(&msg(empty));
        expect_test::expect![
            "bad arguments: `options[1].label` is empty; give every option a short label"
        ]
        .assert_eq(&msg(draft(&["a", ""])));
        expect_test::expect!["bad arguments: option label `yes` appears more than once; option labels must be unique"].assert_eq(&msg(draft(&["Yes", "yes"])));
        let mut multi = draft(&[]);
        multi.multi_select = true;
        multi.allow_free_text = true;
        expect_test::expect!["bad arguments: `multi_select` needs `options` to choose from; add options or drop multi_select"].assert_eq(&msg(multi));
        expect_test::expect!["bad arguments: with no `options` the operator could only type an answer, but `allow_free_text` is false; add options or set allow_free_text: true"].assert_eq(&msg(draft(&[])));
    }
}
