//! The `ask_user` tool: typed arguments in, the card's outcome out.

use crate::{Answer, AskDesk, Card, CardKind, CardOption, CardQuestion, QuestionDraft};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use tool_core::{
    parse_args, schema_for, CallContext, Tier, Tool, ToolDecl, ToolError, ToolOutput, ToolSpec,
};

/// One choice offered to the operator.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionArg {
    /// A short label; it is what the answer names.
    pub label: String,
    /// Optional: what choosing it means.
    #[serde(default)]
    pub description: Option<String>,
    /// Mark the option you recommend (at most one per question); it is shown
    /// as recommended, never chosen for the operator.
    #[serde(default)]
    pub recommended: bool,
}

/// One question of a multi-question card.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuestionArg {
    /// What the answer is keyed by (unique on the card).
    pub id: String,
    /// A short title, at most 30 characters.
    pub header: String,
    /// The question.
    pub question: String,
    /// Up to 12 choices; the operator may always type an answer instead.
    #[serde(default)]
    pub options: Vec<OptionArg>,
    /// Whether several options may be chosen.
    #[serde(default)]
    pub multi: bool,
}

fn card_options(options: Vec<OptionArg>) -> Vec<CardOption> {
    options
        .into_iter()
        .map(|o| CardOption {
            label: o.label,
            description: o.description,
            recommended: o.recommended,
        })
        .collect()
}

/// Arguments of `ask_user`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskUserArgs {
    /// What to ask, as one clear question (with `questions`: an optional
    /// title for the card).
    #[serde(default)]
    pub question: String,
    /// Optional: why you ask and what depends on the answer.
    #[serde(default)]
    pub context: Option<String>,
    /// Choices, each {label, description?}; labels must be unique.
    #[serde(default)]
    pub options: Vec<OptionArg>,
    /// Whether a typed answer is accepted (required when there are no options).
    #[serde(default)]
    pub allow_free_text: bool,
    /// Whether several options may be chosen.
    #[serde(default)]
    pub multi_select: bool,
    /// 1–4 questions answered together on one card, instead of `question`
    /// and `options`: each {id, header, question, options?, multi?}.
    #[serde(default)]
    pub questions: Vec<QuestionArg>,
    /// Ask for a secret (a token, a password): a typed answer, masked as it
    /// is typed and kept out of every log line. Needs allow_free_text and no
    /// options.
    #[serde(default)]
    pub secret: bool,
}

impl From<AskUserArgs> for QuestionDraft {
    fn from(a: AskUserArgs) -> Self {
        QuestionDraft {
            kind: CardKind::Question,
            question: a.question,
            context: a.context,
            options: card_options(a.options),
            allow_free_text: a.allow_free_text,
            multi_select: a.multi_select,
            questions: a
                .questions
                .into_iter()
                .map(|q| CardQuestion {
                    id: q.id,
                    header: q.header,
                    question: q.question,
                    options: card_options(q.options),
                    multi: q.multi,
                })
                .collect(),
            secret: a.secret,
        }
    }
}

/// `ask_user`: asks, changes nothing.
pub const ASK_USER: ToolDecl = ToolDecl::new("ask_user", Tier::Read);

const DESCRIPTION: &str = include_str!("../descriptions/ask_user.md");

/// `ask_user`, bound to one run's [`AskDesk`].
#[derive(Debug, Clone)]
pub struct AskUserTool {
    desk: AskDesk,
}

impl AskUserTool {
    pub fn new(desk: AskDesk) -> Self {
        AskUserTool { desk }
    }
}

const PROCEED: &str =
    "proceed on an assumption you state in your reply, and do not ask this question again";

#[async_trait]
impl Tool for AskUserTool {
    fn spec(&self) -> ToolSpec {
        ASK_USER.spec(
            tool_core::tool::paragraph(DESCRIPTION),
            schema_for::<AskUserArgs>(),
        )
    }

    async fn call(&self, cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: AskUserArgs = parse_args(args)?;
        let asked = tokio::select! {
            r = self.desk.ask(args.into()) => r?,
            () = cx.cancel.cancelled() => {
                return Err(ToolError::Cancelled("the question was withdrawn before it was answered".into()));
            }
        };
        outcome(asked)
    }

    fn describe_call(&self, args: &Value) -> String {
        let q = args.get("question").and_then(Value::as_str).unwrap_or("?");
        format!("ask the operator: {q}")
    }
}

/// The tool's result for a settled card.
fn outcome((card, answer): (Card, Answer)) -> Result<ToolOutput, ToolError> {
    let n = card.number;
    match answer {
        Answer::Answered { choices, text } => {
            let mut parts = Vec::new();
            if !choices.is_empty() {
                parts.push(choices.join(", "));
            }
            if let Some(t) = &text {
                if choices.is_empty() {
                    parts.push(format!("(typed) {t}"));
                } else {
                    parts.push(format!("and typed: {t}"));
                }
            }
            Ok(
                ToolOutput::text(format!("ask_user #{n} answered: {}", parts.join(" ")))
                    .with_structured(json!({
                        "card": n,
                        "outcome": "answered",
                        "choices": choices,
                        "text": text,
                    })),
            )
        }
        Answer::AnsweredAll { answers, note } => {
            let mut text = format!("ask_user #{n} answered:");
            for a in &answers {
                let header = card
                    .questions
                    .iter()
                    .find(|q| q.id == a.id)
                    .map_or("", |q| q.header.as_str());
                let said = match (a.choices.is_empty(), &a.text) {
                    (true, None) => "(no answer)".to_string(),
                    (true, Some(t)) => format!("(typed) {t}"),
                    (false, None) => a.choices.join(", "),
                    (false, Some(t)) => format!("{} and typed: {t}", a.choices.join(", ")),
                };
                text.push_str(&format!("\n- {} ({header}): {said}", a.id));
            }
            if let Some(note) = &note {
                text.push_str(&format!("\nnote: {note}"));
            }
            Ok(ToolOutput::text(text).with_structured(json!({
                "card": n,
                "outcome": "answered",
                "answers": answers,
                "note": note,
            })))
        }
        Answer::Discuss => Ok(ToolOutput::text(format!(
            "ask_user #{n}: the operator chose to discuss this instead of choosing — nothing was chosen \
             or approved. Do not act on any option: explain the choice and what you recommend in your \
             reply, and end your turn so you can talk it over."
        ))
        .with_structured(json!({"card": n, "outcome": "discuss"}))),
        Answer::Skipped => Ok(ToolOutput::text(format!(
            "ask_user #{n} skipped: the operator chose not to answer; {PROCEED}."
        ))
        .with_structured(json!({"card": n, "outcome": "skipped"}))),
        Answer::Declined => Ok(ToolOutput::text(format!(
            "ask_user #{n} declined: the operator declined to answer; {PROCEED}."
        ))
        .with_structured(json!({"card": n, "outcome": "declined"}))),
        Answer::Cancelled => Err(ToolError::Cancelled(format!(
            "question #{n} was cancelled by the user, who dismissed it without an answer; {PROCEED}"
        ))),
        Answer::Expired => Err(ToolError::TimedOut(format!(
            "question #{n} got no answer within {} and expired; {PROCEED}",
            tool_core::format::seconds(card.expires_in)
        ))),
        Answer::NoHuman { why } => Err(ToolError::Unavailable(format!(
            "no human can answer here ({why}), so nothing was asked; {PROCEED}"
        ))),
    }
}
