//! ask_user: the run's one way to ask its operator something, and the
//! approval gate that asks "may I …?" the same way.
//!
//! A harness binds two things: a [`QuestionPort`] (how a card reaches a human
//! and the answer comes back) and a [`TargetSpace`] (where the card is shown:
//! a conversation pane, the terminal). Only with both is `ask_user`
//! registered. Every card is validated before anything is shown, numbered per
//! run, and bounded by an expiry; with no human attached the call fails at
//! once instead of waiting (fail closed).
//!
//! Ports shipped here: [`ChannelPort`] (an embedding UI receives each card on
//! a channel and answers on a oneshot) and [`TerminalPort`] (the binary draws
//! the card on the controlling terminal). The MCP host adds one over MCP
//! elicitation against the same trait.
//!
//! This crate never decides an answer on the human's behalf: a port that
//! cannot reach a human says [`Answer::NoHuman`], and the tool and the
//! [`CardApprover`] turn that into an error or a denial, never a default.

mod answer;
mod approval;
mod binding;
mod card;
mod channel;
mod desk;
mod port;
mod render;
mod terminal;
mod tool;

pub use answer::{Answer, QuestionAnswer};
pub use approval::CardApprover;
pub use binding::AskBinding;
pub use card::{
    Card, CardKind, CardOption, CardQuestion, QuestionDraft, TargetSpace, MAX_HEADER, MAX_OPTIONS,
    MAX_QUESTIONS,
};
pub use channel::{CardReceiver, ChannelPort, PendingCard};
pub use desk::{AskDesk, DEFAULT_EXPIRY};
pub use port::QuestionPort;
pub use render::render_card;
pub use terminal::TerminalPort;
pub use tool::{AskUserArgs, AskUserTool, OptionArg, ASK_USER};

/// This crate's tools as the host lists them before a resource is bound.
pub const FAMILY: tool_core::FamilyDecl = tool_core::FamilyDecl {
    tools: &[ASK_USER],
    resource: "question port + target space",
};
