//! Errors a model can act on.
//!
//! Each kind says what went wrong in words the model reads, and every message
//! ends with what to do next. `UnknownTool` is used for hidden tools too, so a
//! surface cannot probe for tools it may not see.

use std::time::Duration;

/// Why a tool call did not produce a result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The arguments do not fit the tool's schema or each other.
    #[error("bad arguments: {0}")]
    BadArgs(String),
    /// The resource behind the tool cannot serve this call here (no server
    /// binary, no root marker, no human attached), with why.
    #[error("not available here: {0}")]
    Unavailable(String),
    /// Refused on purpose: approval denied, a second launch, a stale id.
    #[error("refused: {0}")]
    Refused(String),
    /// A bounded wait ran out; the message says what state is left.
    #[error("timed out: {0}")]
    TimedOut(String),
    /// The call ran and failed.
    #[error("failed: {0}")]
    Failed(String),
    /// No tool of that name is visible on this surface (unknown or hidden:
    /// the same words for both).
    #[error(
        "unknown tool `{name}`: no tool of that name is available here; available: {available}"
    )]
    UnknownTool { name: String, available: String },
    /// The call was cancelled by its caller.
    #[error("cancelled: {0}")]
    Cancelled(String),
}

impl ToolError {
    pub fn bad_args(msg: impl Into<String>) -> Self {
        ToolError::BadArgs(msg.into())
    }
    pub fn unavailable(msg: impl Into<String>) -> Self {
        ToolError::Unavailable(msg.into())
    }
    pub fn refused(msg: impl Into<String>) -> Self {
        ToolError::Refused(msg.into())
    }
    pub fn timed_out(msg: impl Into<String>) -> Self {
        ToolError::TimedOut(msg.into())
    }
    pub fn failed(msg: impl Into<String>) -> Self {
        ToolError::Failed(msg.into())
    }

    /// A timeout message in the common shape: what, how long, what is left.
    pub fn timed_out_after(what: &str, after: Duration, state: &str) -> Self {
        ToolError::TimedOut(format!(
            "{what} did not finish within {} ms; {state}",
            after.as_millis()
        ))
    }

    /// A short lower-case name of the kind, for structured output.
    pub fn kind(&self) -> &'static str {
        match self {
            ToolError::BadArgs(_) => "bad_arguments",
            ToolError::Unavailable(_) => "unavailable",
            ToolError::Refused(_) => "refused",
            ToolError::TimedOut(_) => "timed_out",
            ToolError::Failed(_) => "failed",
            ToolError::UnknownTool { .. } => "unknown_tool",
            ToolError::Cancelled(_) => "cancelled",
        }
    }
}

impl From<std::io::Error> for ToolError {
    fn from(e: std::io::Error) -> Self {
        ToolError::Failed(e.to_string())
    }
}
