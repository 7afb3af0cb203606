//! The DAP side of the Java backend: an in-process adapter that answers
//! the session's DAP requests with JDWP commands and turns JDWP events
//! into DAP events, so the session, the ops and the answers are the same
//! ones the DAP adapters get.
//!
//! Breakpoints are in [`breakpoints`]; what a stop shows (frames, scopes,
//! variables, the exception) in [`inspect`]; requests, events, stepping
//! and the program's start and end here.
//!
//! Invariants:
//! - every event the JVM sends suspends all its threads (policy ALL), and
//!   every event set that is not reported as a stop is resumed at once
//!   (a class loading, which is when deferred breakpoints are set);
//! - the JVM is held by `suspend=y` until configuration is done;
//! - frame ids and variable references belong to one stop, and are
//!   forgotten when the program resumes;
//! - the program's end is reported by hanging up the DAP stream once the
//!   JDWP socket closed and the JVM's stdout and stderr were read to their
//!   end (bounded): the session then reads the JVM's exit status as the
//!   program's exit code.

mod assign;
mod breakpoints;
mod inspect;
mod kinds;

use super::commands::{self, Event, Modifier, StepDepth};
use super::values::{self, Expand};
use super::wire::{JdwpClient, Location};
use crate::session::inproc;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{BufReader, DuplexStream, ReadHalf};
use tokio::sync::{mpsc, watch};

/// How long the end waits for the program's output pipes to close.
const DRAIN_BOUND: Duration = Duration::from_secs(2);

/// Classes a step does not stop in (the JDK's own), as IDEs skip them.
const STEP_EXCLUDED: &[&str] = &["java.*", "javax.*", "jdk.*", "sun.*", "com.sun.*"];

/// Where the program's files are.
#[derive(Debug, Clone)]
pub struct Places {
    /// Folders a package path starts in: a frame's source is looked for
    /// in them.
    pub source_roots: Vec<PathBuf>,
    /// The class folders of the classpath (javac's output first), where
    /// a file's class files are looked for.
    pub class_dirs: Vec<PathBuf>,
}

/// What a class is, as far as it was read.
#[derive(Debug, Clone, Default)]
struct ClassInfo {
    signature: String,
    source: Option<String>,
    methods: Option<Vec<commands::Method>>,
    lines: HashMap<u64, commands::LineTable>,
}

/// What a variable reference or frame id stands for.
#[derive(Debug, Clone)]
enum Handle {
    Frame {
        thread: u64,
        frame: u64,
        location: Location,
    },
    /// The locals of the frame whose handle is at this index.
    Locals(usize),
    Value(Expand),
}

/// A stop an event set asks for: its event kind, its thread, and the
/// exception (object, caught) at an exception.
type StopAsked = (u8, u64, Option<(u64, bool)>);

/// The current stop.
#[derive(Debug, Clone)]
struct Stop {
    thread: u64,
    /// The exception object and whether it is caught, at an exception.
    exception: Option<(u64, bool)>,
}

#[derive(Default)]
struct State {
    classes: HashMap<u64, ClassInfo>,
    files: Vec<breakpoints::FileBreakpoints>,
    next_breakpoint: u64,
    /// JDWP thread ids; a thread's DAP id is its index + 1.
    threads: Vec<u64>,
    stop: Option<Stop>,
    handles: Vec<Handle>,
    step_request: Option<i32>,
    exception_request: Option<i32>,
    configured: bool,
    /// Attached to a JVM someone else started: let go of it, never end it.
    attached: bool,
    /// The JVM said it is dying (`VM_DEATH`).
    dying: bool,
}

impl State {
    fn thread_number(&mut self, thread: u64) -> u64 {
        let i = self
            .threads
            .iter()
            .position(|t| *t == thread)
            .unwrap_or_else(|| {
                self.threads.push(thread);
                self.threads.len() - 1
            });
        i as u64 + 1
    }

    fn handle(&mut self, h: Handle) -> u64 {
        self.handles.push(h);
        self.handles.len() as u64
    }
}

pub(super) struct Bridge {
    jdwp: Arc<JdwpClient>,
    dap: inproc::DapSide,
    state: Mutex<State>,
    places: Places,
    /// How many of the program's output pipes reached their end.
    drained: watch::Receiver<usize>,
}

impl Bridge {
    /// Serve DAP on `dap` until it closes, driving the JVM over `jdwp`.
    pub(super) fn spawn(
        jdwp: Arc<JdwpClient>,
        events: mpsc::UnboundedReceiver<Vec<u8>>,
        dap: DuplexStream,
        drained: watch::Receiver<usize>,
        places: Places,
    ) -> Vec<tokio::task::JoinHandle<()>> {
        let (read, write) = tokio::io::split(dap);
        let bridge = Arc::new(Bridge {
            jdwp,
            dap: inproc::DapSide::new(write),
            state: Mutex::new(State {
                next_breakpoint: 1,
                ..State::default()
            }),
            places,
            drained,
        });
        vec![
            tokio::spawn(bridge.clone().serve(read)),
            tokio::spawn(bridge.events(events)),
        ]
    }

    /// Answer the session's requests, one at a time, in order.
    async fn serve(self: Arc<Self>, read: ReadHalf<DuplexStream>) {
        let mut reader = BufReader::new(read);
        while let Some(r) = inproc::next_request(&mut reader).await {
            let answer = self.request(&r.command, &r.arguments).await;
            self.dap.respond(r.seq, &r.command, answer).await;
            if r.command == "disconnect" {
                self.dap.hang_up().await;
            }
        }
    }

    fn st(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("bridge state lock")
    }

    // ---- events ----

    async fn events(self: Arc<Self>, mut events: mpsc::UnboundedReceiver<Vec<u8>>) {
        while let Some(data) = events.recv().await {
            let (policy, list) = match commands::read_events(&self.jdwp, &data) {
                Ok(read) => read,
                Err(e) => {
                    tracing::warn!(%e, "unreadable JDWP event");
                    continue;
                }
            };
            let mut resume = policy != 0;
            let mut stop: Option<StopAsked> = None;
            for event in list {
                match event {
                    // Held by suspend=y until configuration is done.
                    Event::VmStart => resume = false,
                    Event::ClassPrepare { class, signature } => {
                        self.prepared(class, &signature).await;
                    }
                    Event::Stop {
                        kind,
                        request,
                        thread,
                        exception,
                        caught,
                        ..
                    } => {
                        if kind == commands::BREAKPOINT {
                            match self.hit(request, thread).await {
                                kinds::Outcome::Stop => {}
                                kinds::Outcome::Pass => continue,
                                kinds::Outcome::Log {
                                    path,
                                    line,
                                    message,
                                } => {
                                    self.logged(&path, line, &message).await;
                                    continue;
                                }
                            }
                        }
                        // A breakpoint outranks a step or an exception at
                        // the same place.
                        let rank = |k: u8| match k {
                            commands::BREAKPOINT => 0,
                            commands::EXCEPTION => 1,
                            _ => 2,
                        };
                        if stop.is_none_or(|(k, _, _)| rank(kind) < rank(k)) {
                            stop = Some((kind, thread, exception.map(|e| (e, caught))));
                        }
                    }
                    Event::VmDeath => self.st().dying = true,
                    Event::Other => {}
                }
            }
            if let Some((kind, thread, exception)) = stop {
                self.stopped(kind, thread, exception).await;
            } else if resume {
                let _ = self.jdwp.resume_all().await;
            }
        }
        // The socket closed: the JVM is gone (or going). Its last output
        // is read before the session hears of it.
        let mut drained = self.drained.clone();
        let _ = tokio::time::timeout(DRAIN_BOUND, drained.wait_for(|n| *n >= 2)).await;
        let (attached, dying) = {
            let st = self.st();
            (st.attached, st.dying)
        };
        if attached && dying {
            // No process of ours to read an exit status from: the end is
            // said here, without a code.
            self.dap.event("exited", json!({})).await;
            self.dap.event("terminated", json!({})).await;
        }
        self.dap.hang_up().await;
    }

    async fn stopped(&self, kind: u8, thread: u64, exception: Option<(u64, bool)>) {
        let (number, step) = {
            let mut st = self.st();
            st.stop = Some(Stop { thread, exception });
            st.handles.clear();
            (st.thread_number(thread), st.step_request.take())
        };
        if let Some(request) = step {
            let _ = self.jdwp.clear_event(commands::SINGLE_STEP, request).await;
        }
        let reason = match kind {
            commands::BREAKPOINT => "breakpoint",
            commands::EXCEPTION => "exception",
            _ => "step",
        };
        self.dap
            .event(
                "stopped",
                json!({"reason": reason, "threadId": number, "allThreadsStopped": true}),
            )
            .await;
    }

    // ---- requests ----

    async fn request(&self, command: &str, args: &Value) -> Result<Value, String> {
        match command {
            "initialize" => Ok(capabilities()),
            "launch" | "attach" => {
                self.st().attached = command == "attach";
                self.dap.event("initialized", json!({})).await;
                Ok(json!({}))
            }
            "configurationDone" => {
                self.st().configured = true;
                self.jdwp.resume_all().await.map_err(|e| e.to_string())?;
                Ok(json!({}))
            }
            "setBreakpoints" => self.set_breakpoints(args).await,
            "setExceptionBreakpoints" => self.set_exception_filters(args).await,
            "threads" => self.threads().await,
            "stackTrace" => self.stack_trace(args).await,
            "scopes" => self.scopes(args),
            "variables" => self.variables(args).await,
            "exceptionInfo" => self.exception_info().await,
            "continue" => self
                .go(None)
                .await
                .map(|()| json!({"allThreadsContinued": true})),
            "next" => self
                .go(Some((args, StepDepth::Over)))
                .await
                .map(|()| json!({})),
            "stepIn" => self
                .go(Some((args, StepDepth::Into)))
                .await
                .map(|()| json!({})),
            "stepOut" => self
                .go(Some((args, StepDepth::Out)))
                .await
                .map(|()| json!({})),
            "pause" => self.pause().await,
            "evaluate" => self.evaluate(args).await,
            "setVariable" => self.set_variable(args).await,
            // A JVM we started is killed with the session; one we attached
            // to is let go: its requests cancelled, its threads resumed.
            "disconnect" | "terminate" => {
                if self.st().attached {
                    let _ = self.jdwp.dispose().await;
                }
                Ok(json!({}))
            }
            other => Err(format!(
                "the java backend does not support `{other}` (JDWP has no such request)"
            )),
        }
    }

    async fn threads(&self) -> Result<Value, String> {
        let ids = self.jdwp.all_threads().await.map_err(|e| e.to_string())?;
        let mut threads = Vec::new();
        for t in ids {
            // A thread that ended meanwhile is left out.
            let Ok(name) = self.jdwp.thread_name(t).await else {
                continue;
            };
            let id = self.st().thread_number(t);
            threads.push(json!({"id": id, "name": name}));
        }
        Ok(json!({ "threads": threads }))
    }

    async fn set_exception_filters(&self, args: &Value) -> Result<Value, String> {
        let filters: Vec<&str> = args
            .get("filters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let old = self.st().exception_request.take();
        if let Some(r) = old {
            let _ = self.jdwp.clear_event(commands::EXCEPTION, r).await;
        }
        let caught = filters.contains(&"caught");
        let uncaught = filters.contains(&"uncaught");
        if caught || uncaught {
            let mut modifiers = vec![Modifier::ExceptionOnly { caught, uncaught }];
            if caught {
                // The JDK throws and catches its own exceptions while it
                // loads classes: those are not the program's.
                modifiers.extend(
                    STEP_EXCLUDED
                        .iter()
                        .map(|p| Modifier::ClassExclude((*p).to_string())),
                );
            }
            let id = self
                .jdwp
                .set_event(commands::EXCEPTION, &modifiers)
                .await
                .map_err(|e| e.to_string())?;
            self.st().exception_request = Some(id);
        }
        Ok(json!({}))
    }

    /// Resume, after asking for a step of `how` when given.
    async fn go(&self, how: Option<(&Value, StepDepth)>) -> Result<(), String> {
        let thread = {
            let st = self.st();
            let Some(stop) = &st.stop else {
                return Err("the program is not paused".into());
            };
            let asked = how
                .and_then(|(a, _)| a.get("threadId"))
                .and_then(Value::as_u64)
                .and_then(|n| st.threads.get((n as usize).checked_sub(1)?).copied());
            asked.unwrap_or(stop.thread)
        };
        if let Some((_, depth)) = how {
            let mut modifiers = vec![Modifier::Step { thread, depth }];
            modifiers.extend(
                STEP_EXCLUDED
                    .iter()
                    .map(|p| Modifier::ClassExclude((*p).to_string())),
            );
            modifiers.push(Modifier::Count(1));
            let id = self
                .jdwp
                .set_event(commands::SINGLE_STEP, &modifiers)
                .await
                .map_err(|e| e.to_string())?;
            self.st().step_request = Some(id);
        }
        {
            let mut st = self.st();
            st.stop = None;
            st.handles.clear();
        }
        self.jdwp.resume_all().await.map_err(|e| e.to_string())
    }

    /// Suspend every thread; the stop is shown on `main` while it lives.
    async fn pause(&self) -> Result<Value, String> {
        if self.st().stop.is_some() {
            return Ok(json!({}));
        }
        self.jdwp.suspend_all().await.map_err(|e| e.to_string())?;
        let mut shown = None;
        for t in self.jdwp.all_threads().await.map_err(|e| e.to_string())? {
            if self.jdwp.thread_name(t).await.as_deref() == Ok("main") {
                shown = Some(t);
                break;
            }
            shown.get_or_insert(t);
        }
        let Some(thread) = shown else {
            return Err("the JVM has no thread left to pause".into());
        };
        let number = {
            let mut st = self.st();
            st.stop = Some(Stop {
                thread,
                exception: None,
            });
            st.handles.clear();
            st.thread_number(thread)
        };
        self.dap
            .event(
                "stopped",
                json!({"reason": "pause", "threadId": number, "allThreadsStopped": true}),
            )
            .await;
        Ok(json!({}))
    }
}

/// What the backend offers, as a DAP adapter's `initialize` answer says it.
fn capabilities() -> Value {
    json!({
        "supportsConfigurationDoneRequest": true,
        "supportsConditionalBreakpoints": true,
        "supportsHitConditionalBreakpoints": true,
        "supportsLogPoints": true,
        "supportsExceptionInfoRequest": true,
        "supportsSetVariable": true,
        "supportsTerminateRequest": true,
        "exceptionBreakpointFilters": [
            {"filter": "caught", "label": "Caught Exceptions", "default": false},
            {"filter": "uncaught", "label": "Uncaught Exceptions", "default": true},
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filters_offered_are_the_catalog_s() {
        use crate::session::inproc::{catalog_filters, offered_filters};
        assert_eq!(offered_filters(&capabilities()), catalog_filters("java"));
    }
}
