//! The ops that look at a stopped program: `threads`, `stack`, `scopes`,
//! `variables`, `locals`, `evaluate` and `set_variable`. Frame ids and references they hand out are
//! the session's handles, valid until the program moves.

use super::results::{
    EvaluateResult, FrameEntry, LocalsResult, ScopeEntry, ScopeLine, ScopesResult,
    SetVariableResult, StackResult, ThreadEntry, ThreadsResult, VariableEntry, VariablesResult,
};
use super::{done, OpContext};
use crate::args::{DebugArgs, EvaluateContext, Op};
use crate::format;
use crate::session::{HandleKind, RunState, Session, StopInfo};
use dap_types::requests as req;
use serde_json::json;
use std::time::Duration;
use tool_core::format::cap_chars;
use tool_core::{ToolError, ToolOutput};

const FRAME_CAP: usize = 30;
/// Goroutines whose place `threads` looks up (one stack request each).
const GOROUTINE_LOOKUPS: usize = 64;
const VARIABLE_CAP: usize = 50;
const VALUE_CAP: usize = 400;

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
        memory_reference: v.memory_reference,
    }
}

impl OpContext<'_> {
    pub(super) async fn threads(&self) -> Result<ToolOutput, ToolError> {
        let s = self.live()?;
        let (threads, placeholders) = self.thread_answer(&s).await?;
        let (running, stopped) = match s.snapshot().state {
            RunState::Stopped(stop) => (false, stop.thread_id),
            _ => (true, None),
        };
        let adapter = s.adapter_kind().adapter();
        let mut entries = Vec::new();
        for t in threads {
            let goroutine = adapter.goroutine(&t.name);
            let mut entry = ThreadEntry {
                id: t.id,
                name: t.name,
                goroutine: goroutine.as_ref().map(|g| g.id),
                os_thread: goroutine.as_ref().and_then(|g| g.os_thread),
                place: None,
                user_code: None,
                now_in: None,
            };
            // Where each goroutine is in the program's own code (its first
            // frame in the workspace), read while it is stopped.
            if let Some(g) = goroutine.filter(|_| !running && entries.len() < GOROUTINE_LOOKUPS) {
                let (frame, above, in_workspace) = self.first_user_frame(&s, t.id).await;
                if let Some(frame) = frame {
                    let now_elsewhere =
                        above > 0 && format::function_name(&frame.name) != g.function;
                    entry.place = Some(format::frame_place(self.workspace, &frame).0);
                    entry.user_code = Some(in_workspace);
                    entry.now_in = now_elsewhere.then_some(g.function);
                }
            }
            entries.push(entry);
        }
        entries.sort_by_key(|e| e.goroutine.unwrap_or(0));
        done(ThreadsResult {
            threads: entries,
            stopped,
            placeholders: (running && placeholders > 0).then(|| s.adapter_id().to_string()),
            goroutines: adapter.threads_are_goroutines(),
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
            .map_or(st.stack_frames.len(), |t| t as usize)
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
                    function: format::function_name(&f.name),
                    file: at.as_ref().map(|(p, _)| self.rel(p)),
                    line: at.as_ref().map(|(_, l)| *l),
                    place,
                    source: at.as_ref().and_then(|(p, l)| format::source_line(p, *l)),
                }
            })
            .collect();
        // delve's threads are goroutines: the stack says which.
        let adapter = s.adapter_kind().adapter();
        let goroutine = if adapter.threads_are_goroutines() {
            self.thread_list(&s)
                .await
                .ok()
                .and_then(|l| l.into_iter().find(|t| t.id == thread))
                .and_then(|t| adapter.goroutine(&t.name))
                .map(|g| g.id)
        } else {
            None
        };
        done(StackResult {
            goroutine,
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
        let (frame_dap, thread, frame) = self.frame_or_top(&s, &stop, args.frame_id).await?;
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
        let Some(scope) = self.locals_scope(s, frame_dap).await? else {
            return Ok((Vec::new(), 0));
        };
        let vars = s
            .typed::<req::Variables>(&dap_types::VariablesArguments {
                variables_reference: scope,
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

    /// The frame `frame_id` names, or the stopped thread's top frame: its
    /// adapter id, its thread and how the answer names it.
    async fn frame_or_top(
        &self,
        s: &Session,
        stop: &StopInfo,
        frame_id: Option<u64>,
    ) -> Result<(u64, Option<u64>, String), ToolError> {
        if let Some(id) = frame_id {
            let r = s.resolve_handle(id, HandleKind::Frame)?;
            Ok((r.dap_id, r.thread_id, format!("frame {id}")))
        } else {
            let (top, thread, label) = self.stopped_top(s, stop).await?;
            Ok((top, Some(thread), format!("top frame, {label}")))
        }
    }

    /// The stopped thread's top frame: its adapter id, the thread and its
    /// place (`mean at avg.py:6`).
    async fn stopped_top(
        &self,
        s: &Session,
        stop: &StopInfo,
    ) -> Result<(u64, u64, String), ToolError> {
        let thread = stop.thread_id.ok_or_else(|| {
            ToolError::bad_args(
                "the stop names no thread; pass `frame_id` (or `reference`) from stack",
            )
        })?;
        let top = self.top_frame(s, thread).await.ok_or_else(|| {
            ToolError::failed(
                "the adapter gave no frames for the stopped thread; call stack, then pass frame_id",
            )
        })?;
        Ok((top.id, thread, format::frame_place(self.workspace, &top).0))
    }

    /// The reference of a frame's local variables: its first scope the
    /// adapter calls local, else its first cheap one.
    async fn locals_scope(&self, s: &Session, frame_dap: u64) -> Result<Option<u64>, ToolError> {
        let sc = s
            .typed::<req::Scopes>(&dap_types::ScopesArguments {
                frame_id: frame_dap,
            })
            .await?;
        let with_vars = || sc.scopes.iter().filter(|x| x.variables_reference != 0);
        Ok(with_vars()
            .find(|x| x.name.to_ascii_lowercase().starts_with("local"))
            .or_else(|| with_vars().find(|x| !x.expensive))
            .map(|x| x.variables_reference))
    }

    pub(super) async fn set_variable(&self, args: &DebugArgs) -> Result<ToolOutput, ToolError> {
        let (name, value) = match (args.name.as_deref(), args.value.as_deref()) {
            (Some(n), Some(v)) if !n.trim().is_empty() && !v.trim().is_empty() => (n.trim(), v),
            _ => {
                return Err(ToolError::bad_args(
                    "set_variable needs `name` (as locals or variables list it) and `value` (an expression in the program's language); `reference` picks the container (default: the top frame's locals)",
                ))
            }
        };
        let (s, stop) = self.stopped(Op::SetVariable)?;
        s.require("supportsSetVariable", "setting variables")?;
        let (container, thread, place) = if let Some(r) = args.reference {
            let h = s.resolve_handle(r, HandleKind::Variables)?;
            (h.dap_id, h.thread_id, format!("reference {r}"))
        } else {
            let (top, thread, label) = self.stopped_top(&s, &stop).await?;
            let scope = self.locals_scope(&s, top).await?.ok_or_else(|| {
                ToolError::failed(
                    "the top frame has no local variables; pass `reference` from scopes",
                )
            })?;
            (scope, Some(thread), format!("the locals of {label}"))
        };
        // An unknown name is refused before anything is sent.
        let present = s
            .typed::<req::Variables>(&dap_types::VariablesArguments {
                variables_reference: container,
                filter: None,
                start: None,
                count: None,
                format: None,
            })
            .await?;
        if !present.variables.iter().any(|v| v.name == name) {
            let names: Vec<&str> = present
                .variables
                .iter()
                .take(VARIABLE_CAP)
                .map(|v| v.name.as_str())
                .collect();
            return Err(ToolError::bad_args(format!(
                "there is no variable `{name}` in {place}; there are: {}",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            )));
        }
        let set = s
            .typed::<req::SetVariable>(&dap_types::SetVariableArguments {
                variables_reference: container,
                name: name.to_string(),
                value: value.to_string(),
                format: None,
            })
            .await
            .map_err(|e| match e {
                ToolError::Failed(m) => ToolError::failed(format!(
                    "the {} adapter did not set `{name}` to `{value}`: {m}; the variable keeps its value",
                    s.adapter_id()
                )),
                other => other,
            })?;
        done(SetVariableResult {
            variable: variable_entry(
                &s,
                stop.stop_id,
                thread,
                dap_types::Variable {
                    name: name.to_string(),
                    value: set.value,
                    type_: set.type_,
                    presentation_hint: None,
                    evaluate_name: None,
                    variables_reference: set.variables_reference.unwrap_or(0),
                    named_variables: None,
                    indexed_variables: None,
                    memory_reference: None,
                },
            ),
            place,
        })
    }

    pub(super) async fn evaluate(&self, args: &DebugArgs) -> Result<ToolOutput, ToolError> {
        let expression = args
            .expression
            .as_deref()
            .filter(|e| !e.trim().is_empty())
            .ok_or_else(|| ToolError::bad_args("evaluate needs `expression`"))?;
        let (s, stop) = self.stopped(Op::Evaluate)?;
        let (frame_dap, _, frame) = self.frame_or_top(&s, &stop, args.frame_id).await?;
        let context = match args.context {
            None => s.evaluate_context().to_string(),
            Some(EvaluateContext::Hover) => {
                s.require("supportsEvaluateForHovers", "the hover context")?;
                "hover".to_string()
            }
            Some(c) => c.name().to_string(),
        };
        let within = match args.timeout_seconds {
            None => self.supervisor.config().request_timeout,
            Some(_) => super::wait_bound(args, Duration::ZERO)?,
        };
        let answer = s
            .request_within(
                "evaluate",
                json!({"expression": expression, "frameId": frame_dap, "context": context}),
                within,
            )
            .await
            .map_err(|e| match e {
                ToolError::Failed(m) => ToolError::failed(format!(
                    "evaluating `{expression}` failed: {m}; check the name is in scope in that frame (scopes / variables list what is)"
                )),
                ToolError::TimedOut(_) => ToolError::timed_out(format!(
                    "evaluating `{expression}` did not finish within {} (a getter or call that blocks?); the adapter may still be running it: call status, and terminate if the session no longer answers",
                    format::duration(within)
                )),
                other => other,
            })?;
        let ev: dap_types::EvaluateResponse = serde_json::from_value(answer).map_err(|e| {
            ToolError::failed(format!(
                "the adapter's `evaluate` answer could not be read: {e}"
            ))
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
