//! The permission gate: a tool-core [`Approver`] that shows "may I …?" as a
//! card through the same port and numbering as `ask_user`, and fails closed.

use crate::{Answer, AskDesk, CardKind, CardOption, QuestionDraft};
use async_trait::async_trait;
use tool_core::{Approval, ApprovalRequest, Approver};

/// Asks the operator before each write or exec call. Anything but an
/// explicit "approve" is a denial: skipped, expired, no human, a port error.
#[derive(Debug, Clone)]
pub struct CardApprover {
    desk: AskDesk,
}

impl CardApprover {
    pub fn new(desk: AskDesk) -> Self {
        CardApprover { desk }
    }
}

#[async_trait]
impl Approver for CardApprover {
    async fn approve(&self, request: &ApprovalRequest) -> Approval {
        let draft = QuestionDraft {
            kind: CardKind::Approval {
                tool: request.tool.clone(),
                tier: request.tier,
            },
            question: format!("May I {}?", request.summary),
            context: Some(format!(
                "`{}` is a {} tool: it {}.",
                request.tool,
                request.tier,
                match request.tier {
                    tool_core::Tier::Read => "has no side effects",
                    tool_core::Tier::Write => "modifies files",
                    tool_core::Tier::Exec => "starts or controls a process",
                }
            )),
            options: vec![
                CardOption::described(CardKind::APPROVE, "let this call run"),
                CardOption::described(CardKind::DENY, "refuse it"),
            ],
            allow_free_text: false,
            multi_select: false,
            questions: Vec::new(),
            secret: false,
        };
        let denied = |reason: String| Approval::Denied { reason };
        match self.desk.ask(draft).await {
            Err(e) => denied(format!("the approval card could not be asked: {e}")),
            Ok((card, answer)) => match answer {
                Answer::Answered { choices, .. }
                    if choices.iter().any(|c| c == CardKind::APPROVE) =>
                {
                    Approval::Approved
                }
                Answer::Answered { .. } => {
                    denied(format!("the operator chose deny on card #{}", card.number))
                }
                Answer::Discuss => denied(format!(
                    "the operator asked to discuss approval card #{} first, which is not a yes",
                    card.number
                )),
                Answer::AnsweredAll { .. } => denied(format!(
                    "approval card #{} got answers to several questions, which is not a yes",
                    card.number
                )),
                Answer::Skipped => denied(format!(
                    "the operator skipped approval card #{}, which is not a yes",
                    card.number
                )),
                Answer::Declined => denied(format!(
                    "the operator declined approval card #{}",
                    card.number
                )),
                Answer::Cancelled => denied(format!(
                    "approval card #{} was cancelled by the user",
                    card.number
                )),
                Answer::Expired => denied(format!(
                    "approval card #{} got no answer within {}",
                    card.number,
                    tool_core::format::seconds(card.expires_in)
                )),
                Answer::NoHuman { why } => denied(format!("no human can approve it here ({why})")),
            },
        }
    }
}
