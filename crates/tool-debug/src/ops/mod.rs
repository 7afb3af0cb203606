//! What each `op` does, on one conversation's state.
//!
//! Every op that needs a stopped program checks it first and says what to do
//! when it is running or gone; every op that waits is bounded by
//! `timeout_seconds` (default 30 s) and answers "still running" when the
//! bound runs out. Each op returns one typed result ([`results`]); its
//! structured answer is that result serialized, its text rendered from it.
//!
//! The ops are grouped: [`info`] (adapters, status, breakpoints, output),
//! [`catch`] (function and exception breakpoints), [`run`] (launch,
//! attach, restart, continue, steps, pause, terminate), [`inspect`]
//! (threads, stack, scopes, variables, locals, evaluate, set_variable) and
//! [`machine`] (modules, disassemble, read_memory).

mod catch;
mod explain;
mod info;
mod inspect;
mod machine;
mod results;
mod run;

pub(crate) use info::adapter_lines;

use crate::args::{DebugArgs, Op};
use crate::format;
use crate::session::{RunState, Session, SessionLimits, StopInfo};
use crate::{Conversation, DebugSupervisor};
use dap_types::requests as req;
use results::Answer;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;
use tool_core::{ToolError, ToolOutput, Workspace};

pub(crate) struct OpContext<'a> {
    pub supervisor: &'a DebugSupervisor,
    pub workspace: &'a Workspace,
    pub conversation: &'a mut Conversation,
}

/// A result as the tool's output: its text and its structured twin.
fn done(result: impl Answer) -> Result<ToolOutput, ToolError> {
    let structured = serde_json::to_value(&result).expect("op results serialize");
    Ok(ToolOutput::text(result.text()).with_structured(structured))
}

fn wait_bound(args: &DebugArgs, default: Duration) -> Result<Duration, ToolError> {
    match args.timeout_seconds {
        None => Ok(default),
        Some(s) if s.is_finite() && s > 0.0 && s <= 3600.0 => Ok(Duration::from_secs_f64(s)),
        Some(s) => Err(ToolError::bad_args(format!(
            "timeout_seconds must be between 0 and 3600, got {s}"
        ))),
    }
}

/// Paths inside the workspace in free text (notes) read relative to it.
fn relative_to(text: &str, root: &Path) -> String {
    let prefix = format!("{}/", root.display());
    text.replace(&prefix, "")
}

impl OpContext<'_> {
    pub(crate) async fn dispatch(mut self, args: DebugArgs) -> Result<ToolOutput, ToolError> {
        let op = args.op;
        let result = match op {
            Op::Adapters => self.adapters().await,
            Op::Status => self.status(),
            Op::Breakpoints => self.breakpoints(&args).await,
            Op::FunctionBreakpoints => self.function_breakpoints(&args).await,
            Op::ExceptionBreakpoints => self.exception_breakpoints(&args).await,
            Op::Launch | Op::Attach => self.launch(&args).await,
            Op::Restart => self.restart(&args).await,
            Op::Continue | Op::StepOver | Op::StepIn | Op::StepOut => self.resume(&args).await,
            Op::Pause => self.pause(&args).await,
            Op::Threads => self.threads().await,
            Op::Stack => self.stack(&args).await,
            Op::Scopes => self.scopes(&args).await,
            Op::Variables => self.variables(&args).await,
            Op::Locals => self.locals(&args).await,
            Op::Evaluate => self.evaluate(&args).await,
            Op::SetVariable => self.set_variable(&args).await,
            Op::Modules => self.modules().await,
            Op::Disassemble => self.disassemble(&args).await,
            Op::ReadMemory => self.read_memory(&args).await,
            Op::Output => self.output(),
            Op::Terminate => self.terminate().await,
        };
        result.map(|mut out| {
            if let Some(Value::Object(map)) = out.structured.as_mut() {
                map.insert("op".into(), json!(op.name()));
            }
            out
        })
    }

    fn limits(&self) -> SessionLimits {
        let c = self.supervisor.config();
        SessionLimits {
            ttl: c.ttl,
            handshake: c.handshake_timeout,
            request: c.request_timeout,
        }
    }

    fn default_wait(&self) -> Duration {
        self.supervisor.config().default_wait
    }

    fn rel(&self, p: &Path) -> String {
        format::display_path(self.workspace, p)
    }

    /// The session, alive; or why there is none.
    fn live(&self) -> Result<Session, ToolError> {
        match &self.conversation.session {
            None => Err(ToolError::refused(
                "no debug session is running; set breakpoints and launch a program first",
            )),
            Some(s) => match s.snapshot().state {
                RunState::Ended(e) => Err(ToolError::refused(format!(
                    "the debug session of {} has ended: {}; launch again to start a new one",
                    s.label(),
                    e.describe()
                ))),
                _ => Ok(s.clone()),
            },
        }
    }

    /// The session and its current stop; or why the program is not stopped.
    fn stopped(&self, op: Op) -> Result<(Session, StopInfo), ToolError> {
        let s = self.live()?;
        match s.snapshot().state {
            RunState::Stopped(stop) => Ok((s, stop)),
            _ => Err(ToolError::refused(format!(
                "`{}` needs a stopped program, and {} is running; call pause to stop it where it is, or wait for a breakpoint with continue",
                op.name(),
                s.label()
            ))),
        }
    }

    /// The innermost frame of `thread`, if the adapter gives one.
    async fn top_frame(&self, s: &Session, thread: u64) -> Option<dap_types::StackFrame> {
        let st = s
            .typed::<req::StackTrace>(&dap_types::StackTraceArguments {
                thread_id: thread,
                start_frame: Some(0),
                levels: Some(1),
                format: None,
            })
            .await
            .ok()?;
        st.stack_frames.into_iter().next()
    }

    /// Where the stopped thread is (`mean at avg.py:6`), when it can be told.
    async fn stop_place(&self, s: &Session, stop: &StopInfo) -> Option<String> {
        let frame = self.top_frame(s, stop.thread_id?).await?;
        Some(format::frame_place(self.workspace, &frame).0)
    }

    /// The thread to act on: the given one (checked), the one that stopped,
    /// or the first.
    async fn pick_thread(
        &self,
        s: &Session,
        given: Option<u64>,
        stopped: Option<u64>,
    ) -> Result<u64, ToolError> {
        if given.is_none() {
            if let Some(t) = stopped {
                return Ok(t);
            }
        }
        let threads = self.thread_list(s).await?;
        match given {
            Some(t) if threads.iter().any(|th| th.id == t) => Ok(t),
            Some(t) if threads.is_empty() => Err(ToolError::bad_args(format!(
                "thread {t} does not exist; the adapter lists no threads at the moment (some list them only while the program is stopped: call pause, then threads)"
            ))),
            Some(t) => Err(ToolError::bad_args(format!(
                "thread {t} does not exist; threads are: {}",
                threads
                    .iter()
                    .map(|th| format!("{} ({})", th.id, th.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
            None => threads.first().map(|t| t.id).ok_or_else(|| {
                ToolError::failed("the program has no threads (it may be exiting); call status")
            }),
        }
    }

    /// The program's threads. Read leniently: while a Go program runs,
    /// delve lists a placeholder thread with id -1, which is no thread to
    /// act on and is left out.
    async fn thread_list(&self, s: &Session) -> Result<Vec<ThreadInfo>, ToolError> {
        Ok(self.thread_answer(s).await?.0)
    }

    /// The program's threads, and how many placeholders (negative ids)
    /// were left out of them.
    async fn thread_answer(&self, s: &Session) -> Result<(Vec<ThreadInfo>, usize), ToolError> {
        let body = s.request("threads", json!({})).await?;
        let listed = body
            .get("threads")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let threads = read_threads(&body);
        let placeholders = listed - threads.len();
        Ok((threads, placeholders))
    }
}

/// A thread as the adapter listed it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ThreadInfo {
    pub id: u64,
    pub name: String,
}

/// The real threads of a `threads` answer (ids that are not negative).
fn read_threads(body: &Value) -> Vec<ThreadInfo> {
    body.get("threads")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| {
            Some(ThreadInfo {
                id: t.get("id")?.as_u64()?,
                name: t
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delves_placeholder_thread_is_no_thread() {
        let body = json!({"threads": [
            {"id": -1, "name": "Current"},
            {"id": 1, "name": "main.main"},
        ]});
        assert_eq!(
            read_threads(&body),
            vec![ThreadInfo {
                id: 1,
                name: "main.main".into()
            }]
        );
    }
}
