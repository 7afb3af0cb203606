//! The [`AskDesk`]: one run's port, target space, card numbering and expiry,
//! shared by `ask_user` and the approval gate so their cards are numbered in
//! one sequence.

use crate::{Answer, Card, QuestionAnswer, QuestionDraft, QuestionPort, TargetSpace};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tool_core::ToolError;

/// How long a card waits for an answer unless the harness says otherwise.
pub const DEFAULT_EXPIRY: Duration = Duration::from_mins(5);

/// Where one run's cards go. Cheap to clone: clones share the numbering.
#[derive(Clone)]
pub struct AskDesk {
    port: Arc<dyn QuestionPort>,
    target: TargetSpace,
    expiry: Duration,
    last_number: Arc<AtomicU64>,
}

impl fmt::Debug for AskDesk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AskDesk")
            .field("port", &self.port.describe())
            .field("target", &self.target)
            .field("expiry", &self.expiry)
            .finish_non_exhaustive()
    }
}

impl AskDesk {
    pub fn new(port: Arc<dyn QuestionPort>, target: TargetSpace) -> Self {
        AskDesk {
            port,
            target,
            expiry: DEFAULT_EXPIRY,
            last_number: Arc::default(),
        }
    }

    /// Every card of this run expires after `expiry` without an answer.
    pub fn with_expiry(mut self, expiry: Duration) -> Self {
        self.expiry = expiry;
        self
    }

    pub fn expiry(&self) -> Duration {
        self.expiry
    }

    pub fn target(&self) -> &TargetSpace {
        &self.target
    }

    pub fn port(&self) -> &Arc<dyn QuestionPort> {
        &self.port
    }

    /// Validate, number, show and wait. `Err` only for an invalid draft or a
    /// port that answered something the card does not accept; every other
    /// outcome (skipped, expired, no human) is an [`Answer`] for the caller
    /// to turn into its own result.
    pub async fn ask(&self, draft: QuestionDraft) -> Result<(Card, Answer), ToolError> {
        let draft = draft.validate()?;
        let card = Card {
            number: 0,
            kind: draft.kind,
            target: self.target.clone(),
            question: draft.question,
            context: draft.context,
            options: draft.options,
            allow_free_text: draft.allow_free_text,
            multi_select: draft.multi_select,
            questions: draft.questions,
            secret: draft.secret,
            expires_in: self.expiry,
        };
        if !self.port.human_attached() {
            // Fail closed before a number is spent or anything is shown.
            return Ok((
                card,
                Answer::no_human(format!("{} has no human attached", self.port.describe())),
            ));
        }
        let card = Card {
            number: self.last_number.fetch_add(1, Ordering::SeqCst) + 1,
            ..card
        };
        tracing::info!(card = card.number, target = %card.target.id, "card shown");
        let answer = match tokio::time::timeout(card.expires_in, self.port.ask(&card)).await {
            Ok(answer) => answer,
            Err(_) => Answer::Expired,
        };
        let answer = fit(&card, answer).map_err(|why| {
            ToolError::failed(format!(
                "the question port ({}) returned an answer card #{} does not accept: {why}; \
                 this is a bug in the harness's port, proceed on a stated assumption",
                self.port.describe(),
                card.number
            ))
        })?;
        if card.secret {
            // A secret answer never reaches a log line.
            let outcome = match &answer {
                Answer::Answered { .. } => "answered (secret, not logged)",
                _ => "not answered",
            };
            tracing::info!(card = card.number, outcome, "card settled");
        } else {
            tracing::info!(card = card.number, answer = ?answer, "card settled");
        }
        Ok((card, answer))
    }
}

/// Check an answer against its card, and put chosen labels in card order.
/// Blank text never counts as an answer.
fn fit(card: &Card, answer: Answer) -> Result<Answer, String> {
    if let Answer::AnsweredAll { answers, note } = answer {
        return fit_all(card, answers, note);
    }
    let Answer::Answered { choices, text } = answer else {
        return Ok(answer);
    };
    if !card.questions.is_empty() {
        return Err("one answer for a card of several questions".into());
    }
    let text = text.filter(|t| !t.trim().is_empty());
    if text.is_some() && !card.allow_free_text {
        return Err("typed text, but the card does not allow free text".into());
    }
    for c in &choices {
        if !card.labels().any(|l| l == c) {
            return Err(format!("`{c}` is not one of the card's options"));
        }
    }
    let ordered: Vec<String> = card
        .labels()
        .filter(|l| choices.iter().any(|c| c == l))
        .map(str::to_string)
        .collect();
    if ordered.len() > 1 && !card.multi_select {
        return Err("several options chosen, but the card allows only one".into());
    }
    if ordered.is_empty() && text.is_none() {
        return Err("an answer with neither a choice nor text".into());
    }
    Ok(Answer::Answered {
        choices: ordered,
        text,
    })
}

/// Check the answers of a multi-question card: one per question, in card
/// order, choices among that question's options; blank ones stay blank.
fn fit_all(
    card: &Card,
    answers: Vec<QuestionAnswer>,
    note: Option<String>,
) -> Result<Answer, String> {
    if card.questions.is_empty() {
        return Err("answers to several questions for a single-question card".into());
    }
    let mut fitted = Vec::new();
    for q in &card.questions {
        let given = answers.iter().find(|a| a.id == q.id);
        let choices: Vec<String> = given.map(|a| a.choices.clone()).unwrap_or_default();
        for c in &choices {
            if !q.options.iter().any(|o| &o.label == c) {
                return Err(format!("`{c}` is not one of question `{}`'s options", q.id));
            }
        }
        let ordered: Vec<String> = q
            .options
            .iter()
            .filter(|o| choices.contains(&o.label))
            .map(|o| o.label.clone())
            .collect();
        if ordered.len() > 1 && !q.multi {
            return Err(format!(
                "several options chosen for question `{}`, which allows one",
                q.id
            ));
        }
        let text = given
            .and_then(|a| a.text.as_deref())
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(String::from);
        fitted.push(QuestionAnswer {
            id: q.id.clone(),
            choices: ordered,
            text,
        });
    }
    if let Some(extra) = answers
        .iter()
        .find(|a| !card.questions.iter().any(|q| q.id == a.id))
    {
        return Err(format!(
            "an answer to `{}`, which is not a question of the card",
            extra.id
        ));
    }
    let note = note.map(|t| t.trim().to_string()).filter(|t| !t.is_empty());
    if note.is_none() && fitted.iter().all(QuestionAnswer::is_blank) {
        // Nothing was answered: not an answer.
        return Ok(Answer::Skipped);
    }
    Ok(Answer::AnsweredAll {
        answers: fitted,
        note,
    })
}
