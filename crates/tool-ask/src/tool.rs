//! The `ask_user` tool: typed arguments in, the card's outcome out.

use crate::{Answer, AskDesk, Card, CardKind, CardOption, QuestionDraft};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use tool_core::{parse_args, schema_for, CallContext, Tier, Tool, ToolError, ToolOutput, ToolSpec};

/// One choice offered to the operator.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionArg {
    /// A short label; it is what the answer names.
    pub label: String,
    /// Optional: what choosing it means.
    #[serde(default)]
    pub description: Option<String>,
}

/// Arguments of `ask_user`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskUserArgs {
    /// What to ask, as one clear question.
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
}

impl From<AskUserArgs> for QuestionDraft {
    fn from(a: AskUserArgs) -> Self {
        QuestionDraft {
            kind: CardKind::Question,
            question: a.question,
            context: a.context,
            options: a
                .options
                .into_iter()
                .map(|o| CardOption {
                    label: o.label,
                    description: o.description,
                })
                .collect(),
            allow_free_text: a.allow_free_text,
            multi_select: a.multi_select,
        }
    }
}

const DESCRIPTION: &str = "Ask the operator (a human) a question and wait for the answer. \
This is the only way to ask the operator anything: never write the question as a chat message, \
that ends your turn. The question is shown as a numbered card with your options; the call \
blocks until the operator answers, skips, or the card expires. Give options when you can, \
set allow_free_text to accept a typed answer, multi_select to accept several options. \
A skipped card means: proceed on an assumption you state, and do not ask again.";

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
        ToolSpec::new(
            "ask_user",
            DESCRIPTION,
            Tier::Read,
            schema_for::<AskUserArgs>(),
        )
    }

    async fn call(&self, cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: AskUserArgs = parse_args(args)?;
        let asked = tokio::select! {
            r = self.desk.ask(args.into()) => r?,
            _ = cx.cancel.cancelled() => {
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
            "question #{n} got no answer within {} s and expired; {PROCEED}",
            card.expires_in.as_secs()
        ))),
        Answer::NoHuman { why } => Err(ToolError::Unavailable(format!(
            "no human can answer here ({why}), so nothing was asked; {PROCEED}"
        ))),
    }
}
