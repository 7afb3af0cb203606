//! What stops the program besides line breakpoints: function breakpoints
//! and exception filters, and the capability checks every optional request
//! shares.
//!
//! Invariants: a request the adapter does not announce in its `initialize`
//! answer is refused before anything is sent, naming the adapter and the
//! capability; an exception filter the adapter does not list is refused
//! with the ones it does; the default function breakpoints (Rust's
//! `rust_panic`) are always sent along with the model's, so setting the
//! model's never removes them.

use super::{FunctionStatus, Session};
use crate::breakpoint::FunctionBreakpoint;
use crate::catalog::ExceptionFilter;
use serde_json::{json, Value};
use tool_core::ToolError;

/// The filter ids the adapter enables by default.
pub(super) fn default_filters(caps: &Value) -> Vec<String> {
    filters_of(caps)
        .into_iter()
        .filter(|f| f.default)
        .map(|f| f.id)
        .collect()
}

fn filters_of(caps: &Value) -> Vec<ExceptionFilter> {
    caps.get("exceptionBreakpointFilters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|f| {
            Some(ExceptionFilter {
                id: f.get("filter")?.as_str()?.to_string(),
                label: f
                    .get("label")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                default: f.get("default").and_then(Value::as_bool) == Some(true),
            })
        })
        .collect()
}

impl Session {
    /// Refuse, naming the adapter and the capability, unless the adapter
    /// announced `capability`; `what` is the feature in words.
    pub fn require(&self, capability: &str, what: &str) -> Result<(), ToolError> {
        if self.supports(capability) {
            return Ok(());
        }
        Err(ToolError::refused(format!(
            "the {} adapter does not support {what} (its `initialize` answer lacks `{capability}`)",
            self.adapter_id()
        )))
    }

    /// The adapter's exception filters.
    pub fn exception_filters(&self) -> Vec<ExceptionFilter> {
        filters_of(&self.inner.capabilities.lock().expect("caps lock"))
    }

    /// Function breakpoints set by default for this program.
    pub fn default_functions(&self) -> &[String] {
        &self.inner.default_functions
    }

    /// Set the function breakpoints to `functions` (and the defaults).
    pub async fn set_function_breakpoints(
        &self,
        functions: &[FunctionBreakpoint],
    ) -> Result<Vec<FunctionStatus>, ToolError> {
        self.require("supportsFunctionBreakpoints", "function breakpoints")?;
        if let Some(why) = self.refuses_kinds(functions.iter().map(|f| &f.kind)) {
            return Err(ToolError::refused(why));
        }
        let defaults = self
            .default_functions()
            .iter()
            .filter(|d| !functions.iter().any(|f| &f.name == *d))
            .map(|d| FunctionBreakpoint {
                name: d.clone(),
                kind: Default::default(),
            });
        let all: Vec<FunctionBreakpoint> = functions.iter().cloned().chain(defaults).collect();
        let body = self
            .request(
                "setFunctionBreakpoints",
                json!({ "breakpoints": all.iter().map(|f| {
                    let mut b = json!({"name": f.name});
                    for (k, v) in [("condition", &f.kind.condition), ("hitCondition", &f.kind.hit_condition), ("logMessage", &f.kind.log_message)] {
                        if let Some(v) = v { b[k] = json!(v); }
                    }
                    b
                }).collect::<Vec<_>>() }),
            )
            .await?;
        let answered = body
            .get("breakpoints")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        Ok(functions
            .iter()
            .enumerate()
            .map(|(i, asked)| {
                let b = answered.get(i);
                FunctionStatus {
                    asked: asked.clone(),
                    verified: b
                        .and_then(|b| b.get("verified"))
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                    message: b
                        .and_then(|b| b.get("message"))
                        .and_then(Value::as_str)
                        .map(String::from),
                }
            })
            .collect())
    }

    /// Enable exactly the exception filters `ids` (checked against the
    /// adapter's list first).
    pub async fn set_exception_filters(&self, ids: &[String]) -> Result<(), ToolError> {
        let known = self.exception_filters();
        if known.is_empty() && ids.is_empty() {
            return Ok(());
        }
        if known.is_empty() {
            return Err(ToolError::refused(format!(
                "the {} adapter offers no exception breakpoints (its `initialize` answer lists no `exceptionBreakpointFilters`)",
                self.adapter_id()
            )));
        }
        if let Some(bad) = ids.iter().find(|id| !known.iter().any(|k| &k.id == *id)) {
            return Err(ToolError::bad_args(format!(
                "the {} adapter has no exception filter `{bad}`; its filters are: {}",
                self.adapter_id(),
                known
                    .iter()
                    .map(|k| k.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        self.request("setExceptionBreakpoints", json!({ "filters": ids }))
            .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_filters_are_the_ones_marked_default() {
        let caps = json!({"exceptionBreakpointFilters": [
            {"filter": "raised", "label": "Raised Exceptions", "default": false},
            {"filter": "uncaught", "label": "Uncaught Exceptions", "default": true},
        ]});
        assert_eq!(default_filters(&caps), vec!["uncaught".to_string()]);
        assert_eq!(default_filters(&json!({})), Vec::<String>::new());
    }
}
