//! The ops that look at a stopped program: `threads`, `stack`, `scopes`,
//! `variables` and `evaluate`. Frame ids and references they hand out are
//! the session's handles, valid until the program moves.

use super::results::{
    EvaluateResult, FrameEntry, LocalsResult, ScopeEntry, ScopeLine, ScopesResult, StackResult,
    ThreadEntry, ThreadsResult, VariableEntry, VariablesResult,
};
use super::{done, OpContext};
use crate::args::{DebugArgs, Op};
use crate::format;
use crate::session::{HandleKind, RunState, Session};
use dap_types::requests as req;
use serde::{Deserialize, Serialize};
use tool_core::format::cap_chars;
use tool_core::{ToolError, ToolOutput};

const FRAME_CAP: usize = 30;
const VARIABLE_CAP: usize = 50;
const VALUE_CAP: usize = 400;

/// `evaluate` with the adapter's own `context` word: `dap-types` knows only
/// the schema's values, and a harness adapter may want another.
enum EvaluateIn {}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct EvaluateArguments {
    expression: String,
    frame_id: u64,
    context: String,
}

impl req::Request for EvaluateIn {
    const COMMAND: &'static str = "evaluate";
    type Arguments = EvaluateArguments;
    type Response = dap_types::EvaluateResponse;
}

/// A variable as the model reads it, with a handle when it has children.
fn variable_entry(
    s: &Session,
    stop_id: u64,
    thread: Option<u64>,
    v: dap_types::Variable,
) -> VariableEntry {
    VariableEntry {
        value: cap_chars(v.value.trim(), VALUE_CAP).into_owned(),
        reference: (v.variables_reference > 0).then(|| {
            s.issue(
                stop_id,
                HandleKind::Variables,
                v.variables_reference,
                thread,
            )
        }),
        name: v.name,
        type_: v.type_,
    }
}

impl OpContext<'_> {
    pub(super) async fn threads(&self) -> Result<ToolOutput, ToolError> {
        let s = self.live()?;
        let threads = self.thread_list(&s).await?;
        let stopped = match s.snapshot().state {
            RunState::Stopped(stop) => stop.thread_id,
            _ => None,
        };
        done(ThreadsResult {
            threads: threads
                .into_iter()
                .map(|t| ThreadEntry {
                    id: t.id,
                    name: t.name,
                })
                .collect(),
            stopped,
        })
    }

    pub(super) async fn stack(&self, args: &DebugArgs) -> Result<ToolOutput, ToolError> {
        let (s, stop) = self.stopped(Op::Stack)?;
        let thread = self.pick_thread(&s, args.thread_id, stop.thread_id).await?;
        let st = s
            .typed::<req::StackTrace>(&dap_types::StackTraceArguments {
                thread_id: thread,
                start_frame: Some(0),
                levels: Some(FRAME_CAP as u64 + 1),
                format: None,
            })
            .await?;
        let total = st
            .total_frames
            .map(|t| t as usize)
            .unwrap_or(st.stack_frames.len())
            .max(st.stack_frames.len());
        let frames = st
            .stack_frames
            .iter()
            .take(FRAME_CAP)
            .map(|f| {
                let id = s.issue(stop.stop_id, HandleKind::Frame, f.id, Some(thread));
                let (place, at) = format::frame_place(self.workspace, f);
                FrameEntry {
                    frame_id: id,
                    function: f.name.clone(),
                    file: at.as_ref().map(|(p, _)| self.rel(p)),
                    line: at.as_ref().map(|(_, l)| *l),
                    place,
                    source: at.as_ref().and_then(|(p, l)| format::source_line(p, *l)),
                }
            })
            .collect();
        done(StackResult {
            thread_id: thread,
            stop: stop.stop_id,
            frames,
            reason: stop.reason,
            total,
            cap: FRAME_CAP,
        })
    }

    pub(super) async fn scopes(&self, args: &DebugArgs) -> Result<ToolOutput, ToolError> {
        let frame_id = args
            .frame_id
            .ok_or_else(|| ToolError::bad_args("scopes needs `frame_id`: take one from stack"))?;
        let (s, stop) = self.stopped(Op::Scopes)?;
        let frame = s.resolve_handle(frame_id, HandleKind::Frame)?;
        let sc = s
            .typed::<req::Scopes>(&dap_types::ScopesArguments {
                frame_id: frame.dap_id,
            })
            .await?;
        let lines: Vec<ScopeLine> = sc
            .scopes
            .iter()
            .map(|scope| ScopeLine {
                name: scope.name.clone(),
                reference: (scope.variables_reference != 0).then(|| {
                    s.issue(
                        stop.stop_id,
                        HandleKind::Variables,
                        scope.variables_reference,
                        frame.thread_id,
                    )
                }),
                variables: scope.named_variables,
                expensive: scope.expensive,
            })
            .collect();
        done(ScopesResult {
            scopes: lines
                .iter()
                .filter_map(|l| {
                    l.reference.map(|reference| ScopeEntry {
                        name: l.name.clone(),
                        reference,
                    })
                })
                .collect(),
            frame_id,
            lines,
        })
    }

    pub(super) async fn variables(&self, args: &DebugArgs) -> Result<ToolOutput, ToolError> {
        let reference = args.reference.ok_or_else(|| {
            ToolError::bad_args(
                "variables needs `reference`: take one from scopes, variables or evaluate",
            )
        })?;
        let (s, stop) = self.stopped(Op::Variables)?;
        let r = s.resolve_handle(reference, HandleKind::Variables)?;
        let vars = s
            .typed::<req::Variables>(&dap_types::VariablesArguments {
                variables_reference: r.dap_id,
                filter: None,
                start: None,
                count: None,
                format: None,
            })
            .await?;
        let total = vars.variables.len();
        let variables = vars
            .variables
            .into_iter()
            .take(VARIABLE_CAP)
            .map(|v| variable_entry(&s, stop.stop_id, r.thread_id, v))
            .collect();
        done(VariablesResult {
            variables,
            total,
            reference,
            cap: VARIABLE_CAP,
        })
    }

    pub(super) async fn locals(&self, args: &DebugArgs) -> Result<ToolOutput, ToolError> {
        let (s, stop) = self.stopped(Op::Locals)?;
        let (frame_dap, thread, frame) = match args.frame_id {
            Some(id) => {
                let r = s.resolve_handle(id, HandleKind::Frame)?;
                (r.dap_id, r.thread_id, format!("frame {id}"))
            }
            None => {
                let thread = stop.thread_id.ok_or_else(|| {
                    ToolError::bad_args("the stop names no thread; pass `frame_id` from stack")
                })?;
                let top = self.top_frame(&s, thread).await.ok_or_else(|| {
                    ToolError::failed("the adapter gave no frames for the stopped thread; call stack, then pass frame_id")
                })?;
                let label = format::frame_place(self.workspace, &top).0;
                (top.id, Some(thread), format!("top frame, {label}"))
            }
        };
        let (variables, total) = self.frame_locals(&s, frame_dap).await?;
        let variables = variables
            .into_iter()
            .map(|v| variable_entry(&s, stop.stop_id, thread, v))
            .collect();
        done(LocalsResult {
            variables,
            total,
            frame,
            cap: VARIABLE_CAP,
        })
    }

    /// The local variables of a frame (its first scope the adapter calls
    /// local, else its first cheap one), capped, and how many there are.
    /// No handles are issued here: the caller does, for what it shows.
    pub(super) async fn frame_locals(
        &self,
        s: &Session,
        frame_dap: u64,
    ) -> Result<(Vec<dap_types::Variable>, usize), ToolError> {
        let sc = s
            .typed::<req::Scopes>(&dap_types::ScopesArguments {
                frame_id: frame_dap,
            })
            .await?;
        let with_vars = || sc.scopes.iter().filter(|x| x.variables_reference != 0);
        let Some(scope) = with_vars()
            .find(|x| x.name.to_ascii_lowercase().starts_with("local"))
            .or_else(|| with_vars().find(|x| !x.expensive))
        else {
            return Ok((Vec::new(), 0));
        };
        let vars = s
            .typed::<req::Variables>(&dap_types::VariablesArguments {
                variables_reference: scope.variables_reference,
                filter: None,
                start: None,
                count: None,
                format: None,
            })
            .await?;
        let total = vars.variables.len();
        let mut variables = vars.variables;
        variables.truncate(VARIABLE_CAP);
        Ok((variables, total))
    }

    pub(super) async fn evaluate(&self, args: &DebugArgs) -> Result<ToolOutput, ToolError> {
        let expression = args
            .expression
            .as_deref()
            .filter(|e| !e.trim().is_empty())
            .ok_or_else(|| ToolError::bad_args("evaluate needs `expression`"))?;
        let (s, stop) = self.stopped(Op::Evaluate)?;
        let (frame_dap, frame) = match args.frame_id {
            Some(id) => (
                s.resolve_handle(id, HandleKind::Frame)?.dap_id,
                format!("frame {id}"),
            ),
            None => {
                let thread = stop.thread_id.ok_or_else(|| {
                    ToolError::bad_args("the stop names no thread; pass `frame_id` from stack")
                })?;
                let top = self.top_frame(&s, thread).await.ok_or_else(|| {
                    ToolError::failed("the adapter gave no frames for the stopped thread; call stack, then pass frame_id")
                })?;
                let label = format::frame_place(self.workspace, &top).0;
                (top.id, format!("top frame, {label}"))
            }
        };
        let ev = s
            .typed::<EvaluateIn>(&EvaluateArguments {
                expression: expression.to_string(),
                frame_id: frame_dap,
                context: s.evaluate_context().to_string(),
            })
            .await
            .map_err(|e| match e {
                ToolError::Failed(m) => ToolError::failed(format!(
                    "evaluating `{expression}` failed: {m}; check the name is in scope in that frame (scopes / variables list what is)"
                )),
                other => other,
            })?;
        done(EvaluateResult {
            result: cap_chars(ev.result.trim(), VALUE_CAP).into_owned(),
            type_: ev.type_,
            reference: (ev.variables_reference > 0).then(|| {
                s.issue(
                    stop.stop_id,
                    HandleKind::Variables,
                    ev.variables_reference,
                    stop.thread_id,
                )
            }),
            expression: expression.to_string(),
            frame,
        })
    }
}
