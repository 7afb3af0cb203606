//! The ops that choose what stops the program besides line breakpoints:
//! `function_breakpoints` and `exception_breakpoints`. Like `breakpoints`,
//! both work before launch (kept for the next session) and in a session
//! (sent at once: a refusal changes nothing, kept or sent).

use super::results::{ExceptionFiltersResult, FilterLine, FunctionBreakpointsResult, FunctionLine};
use super::{done, OpContext};
use crate::args::DebugArgs;
use tool_core::{ToolError, ToolOutput};

impl OpContext<'_> {
    pub(super) async fn function_breakpoints(
        &mut self,
        args: &DebugArgs,
    ) -> Result<ToolOutput, ToolError> {
        let functions = args.functions.clone().ok_or_else(|| {
            ToolError::bad_args(
                "function_breakpoints needs `functions`: names like \"main.process\" or objects {\"name\": \"foo\", \"condition\": \"n == 0\"}; [] clears them",
            )
        })?;
        for f in &functions {
            if f.name.trim().is_empty() {
                return Err(ToolError::bad_args(
                    "a function breakpoint needs a name; an empty one names no function",
                ));
            }
            f.kind
                .check(&format!("the function breakpoint on `{}`", f.name))
                .map_err(ToolError::bad_args)?;
        }
        let mut functions = functions;
        functions.sort_by(|a, b| a.name.cmp(&b.name));
        functions.dedup();
        if let Some(w) = functions.windows(2).find(|w| w[0].name == w[1].name) {
            return Err(ToolError::bad_args(format!(
                "`{}` is given twice, with different conditions; give each function once",
                w[0].name
            )));
        }
        let session = self.live().ok();
        let statuses = match &session {
            Some(s) => Some(s.set_function_breakpoints(&functions).await?),
            None => None,
        };
        self.conversation.function_breakpoints = functions.clone();
        let lines = match statuses {
            None => functions
                .into_iter()
                .map(|f| FunctionLine {
                    name: f.name,
                    kind: f.kind,
                    verified: None,
                    message: None,
                })
                .collect(),
            Some(st) => st
                .into_iter()
                .map(|f| FunctionLine {
                    name: f.asked.name,
                    kind: f.asked.kind,
                    verified: Some(f.verified),
                    message: f.message,
                })
                .collect(),
        };
        done(FunctionBreakpointsResult {
            functions: lines,
            sent: session.is_some(),
            defaults: session
                .map(|s| s.default_functions().to_vec())
                .unwrap_or_default(),
        })
    }

    pub(super) async fn exception_breakpoints(
        &mut self,
        args: &DebugArgs,
    ) -> Result<ToolOutput, ToolError> {
        let filters = args.filters.clone().ok_or_else(|| {
            ToolError::bad_args(
                "exception_breakpoints needs `filters`: ids from the adapter's list (status shows it in a session; debugpy: raised, uncaught, userUnhandled; lldb: cpp_throw, cpp_catch; delve: unrecovered-panic, runtime-fatal-throw); [] stops on no exception",
            )
        })?;
        let mut filters = filters;
        filters.sort();
        filters.dedup();
        let session = self.live().ok();
        let known = match &session {
            Some(s) => {
                s.set_exception_filters(&filters).await?;
                s.exception_filters()
            }
            None => Vec::new(),
        };
        self.conversation.exception_filters = Some(filters.clone());
        done(ExceptionFiltersResult {
            enabled: filters.clone(),
            sent: session.is_some(),
            available: known
                .into_iter()
                .map(|k| FilterLine {
                    on: filters.contains(&k.id),
                    id: k.id,
                    label: k.label,
                })
                .collect(),
        })
    }
}
