//! The DAP side of the Node.js backend: an in-process adapter that answers
//! the session's DAP requests with inspector commands and turns inspector
//! events into DAP events, so the session, the ops and the answers are the
//! same ones the DAP adapters get.
//!
//! What a stop shows (frames, scopes, variables, evaluation, the
//! exception) is answered in [`inspect`]; requests, events and the
//! program's start and end here.
//!
//! Invariants:
//! - one thread, id 1 (`main`): a Node.js program's JavaScript runs on one;
//! - frame ids and variable references belong to one stop, and are
//!   forgotten when the program resumes (the session's handles say so
//!   before anything is sent);
//! - the program is held by `--inspect-brk` until configuration is done
//!   (breakpoints are set by URL, so they bind as its scripts load), and
//!   its `Break on start` pause, when Node makes it, is never reported as a
//!   stop; a breakpoint whose hit condition does not hold resumes at
//!   once without a stop;
//! - the program's end is reported (`exited` with the code its `exit`
//!   event gave, then `terminated`) only after configuration is done and
//!   its stdout and stderr were read to their end (bounded), so the last
//!   lines it printed are in the session's output.

use super::cdp::{self, CdpClient, CdpError, CdpEvent, RemoteObject};
use super::render::{self, HitTest, EXIT_BINDING, LOG_BINDING};
use super::sourcemap::MapIndex;
use crate::adapters::node::file_url;
use crate::session::inproc;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{BufReader, DuplexStream, ReadHalf};
use tokio::sync::{mpsc, watch};

mod inspect;

/// How long the end waits for the program's output pipes to close.
const DRAIN_BOUND: Duration = Duration::from_secs(1);

/// The one thread.
const THREAD: u64 = 1;

/// Where the program is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Held by `--inspect-brk` until configuration is done.
    Held,
    /// Told to run.
    Running,
    /// Its context is gone: it finished (or failed to compile).
    Ended,
}

/// One breakpoint as set in the inspector.
#[derive(Debug)]
struct Breakpoint {
    dap_id: u64,
    cdp_id: String,
    path: PathBuf,
    line: u32,
    hit: Option<HitTest>,
    hits: u64,
    /// Set in a source a map leads to (TypeScript): its line is the
    /// source's, not the script's.
    mapped: bool,
}

/// What a variable reference stands for.
#[derive(Debug, Clone)]
enum Handle {
    /// Scopes of one frame read as one (`Locals`: its blocks and its
    /// function's scope, the innermost first).
    Scopes {
        frame: usize,
        scopes: Vec<(usize, String)>,
    },
    /// An object's properties.
    Object { frame: usize, object_id: String },
}

#[derive(Default)]
struct State {
    scripts: HashMap<String, String>,
    breakpoints: Vec<Breakpoint>,
    next_breakpoint: u64,
    paused: Option<cdp::Paused>,
    /// Which stop `paused` is: frame ids carry it.
    stop_generation: u64,
    exception: Option<RemoteObject>,
    handles: Vec<Handle>,
    /// `step` or `pause`: what the next stop is the answer to.
    expecting: Option<&'static str>,
    stop_reported: bool,
    exit_code: Option<i64>,
    /// The program's own JavaScript context.
    main_context: Option<i64>,
    /// Scripts that name a source map.
    mapped_scripts: std::collections::HashSet<String>,
    /// Where source maps are looked for (the launch's `cwd`).
    project: Option<PathBuf>,
    /// The source maps under `project`, read at the first need.
    maps: Option<Arc<MapIndex>>,
    configured: bool,
    end_reported: bool,
}

pub(super) struct Bridge {
    cdp: CdpClient,
    dap: inproc::DapSide,
    state: Mutex<State>,
    phase: watch::Sender<Phase>,
    /// How many of the program's output pipes reached their end.
    drained: watch::Receiver<usize>,
}

impl Bridge {
    /// Serve DAP on `dap` until it closes, driving the inspector `cdp`.
    pub(super) fn spawn(
        cdp: CdpClient,
        events: mpsc::UnboundedReceiver<CdpEvent>,
        dap: DuplexStream,
        drained: watch::Receiver<usize>,
    ) -> Vec<tokio::task::JoinHandle<()>> {
        let (read, write) = tokio::io::split(dap);
        let (phase, _) = watch::channel(Phase::Held);
        let bridge = Arc::new(Bridge {
            cdp,
            dap: inproc::DapSide::new(write),
            state: Mutex::new(State {
                next_breakpoint: 1,
                ..State::default()
            }),
            phase,
            drained,
        });
        vec![
            tokio::spawn(bridge.clone().serve(read)),
            tokio::spawn(bridge.events(events)),
        ]
    }

    async fn serve(self: Arc<Self>, read: ReadHalf<DuplexStream>) {
        let mut reader = BufReader::new(read);
        while let Some(r) = inproc::next_request(&mut reader).await {
            let me = self.clone();
            tokio::spawn(async move {
                let started = std::time::Instant::now();
                let answer = me.request(&r.command, &r.arguments).await;
                tracing::debug!(command = %r.command, ms = started.elapsed().as_millis() as u64, "node backend request");
                me.dap.respond(r.seq, &r.command, answer).await;
                if r.command == "disconnect" {
                    // As an adapter process's stdout closes when it exits:
                    // the session's reader ends with it.
                    me.dap.hang_up().await;
                }
            });
        }
    }

    /// The session's source maps, read on first use.
    fn maps(&self) -> Arc<MapIndex> {
        let project = {
            let st = self.st();
            if let Some(m) = &st.maps {
                return m.clone();
            }
            st.project.clone()
        };
        let index = Arc::new(project.map(|p| MapIndex::scan(&p)).unwrap_or_default());
        self.st().maps = Some(index.clone());
        index
    }

    fn st(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("bridge state lock")
    }

    // ---- events ----

    async fn events(self: Arc<Self>, mut events: mpsc::UnboundedReceiver<CdpEvent>) {
        while let Some(e) = events.recv().await {
            if let CdpEvent::Paused(p) = &e {
                tracing::debug!(reason = %p.reason, "inspector paused");
            }
            match e {
                CdpEvent::ScriptParsed(s) => {
                    let mut st = self.st();
                    if !s.source_map_url.is_empty() {
                        st.mapped_scripts.insert(s.script_id.clone());
                    }
                    st.scripts.insert(s.script_id, s.url);
                }
                CdpEvent::BreakpointResolved(r) => self.resolved(r).await,
                CdpEvent::Paused(p) => self.paused(*p).await,
                CdpEvent::Resumed => {
                    let reported = {
                        let mut st = self.st();
                        st.paused = None;
                        st.handles.clear();
                        st.exception = None;
                        std::mem::take(&mut st.stop_reported)
                    };
                    if reported {
                        self.dap
                            .event(
                                "continued",
                                json!({"threadId": THREAD, "allThreadsContinued": true}),
                            )
                            .await;
                    }
                }
                CdpEvent::BindingCalled(b) if b.name == EXIT_BINDING => {
                    self.st().exit_code = b.payload.trim().parse().ok();
                }
                CdpEvent::BindingCalled(b) if b.name == LOG_BINDING => {
                    self.logged(&b.payload).await;
                }
                CdpEvent::ContextCreated { id, default } => {
                    let mut st = self.st();
                    if default && st.main_context.is_none() {
                        st.main_context = Some(id);
                    }
                }
                CdpEvent::ContextDestroyed(id) => {
                    let main = self.st().main_context;
                    if id.is_none() || id == main || main.is_none() {
                        self.phase.send_replace(Phase::Ended);
                        self.ended().await;
                    }
                }
                CdpEvent::BindingCalled(_) | CdpEvent::Other { .. } => {}
            }
        }
        // The socket closed. A program that ended was reported; otherwise
        // Node is gone (killed, crashed): the session learns it from the
        // stream's end and the process's status.
        self.phase.send_replace(Phase::Ended);
        if !self.st().end_reported {
            self.dap.hang_up().await;
        }
    }

    async fn resolved(&self, r: cdp::BreakpointResolved) {
        let moved = {
            let mut st = self.st();
            let line = r.location.line_number + 1;
            st.breakpoints
                .iter_mut()
                .find(|b| b.cdp_id == r.breakpoint_id && !b.mapped && b.line != line)
                .map(|b| {
                    b.line = line;
                    (b.dap_id, b.path.clone(), line)
                })
        };
        if let Some((id, path, line)) = moved {
            self.dap
                .event(
                    "breakpoint",
                    json!({"reason": "changed", "breakpoint": {"id": id, "verified": true,
                    "line": line, "source": {"path": path}}}),
                )
                .await;
        }
    }

    async fn paused(&self, p: cdp::Paused) {
        if p.reason == "Break on start" {
            // `--inspect-brk`'s pause before the program's first line: the
            // breakpoints were set by URL before it ran, so it goes on.
            // (Node does not always make this pause: nothing waits for it.)
            let _ = self.cdp.call(&cdp::Resume {}).await;
            return;
        }
        let decided = {
            let mut st = self.st();
            if p.reason == "other" && !p.hit_breakpoints.is_empty() {
                let mut stop = false;
                for b in st
                    .breakpoints
                    .iter_mut()
                    .filter(|b| p.hit_breakpoints.contains(&b.cdp_id))
                {
                    b.hits += 1;
                    stop |= b.hit.is_none_or(|h| h.stops(b.hits));
                }
                stop.then_some(())
            } else {
                Some(())
            }
            .and_then(|()| {
                // An exception Node throws and catches inside its own code
                // (module resolution, the test runner) is not the program's:
                // under `all`, an IDE skips Node's internals too.
                // A program that does not compile is not stopped in the
                // loader either: it ends with Node's SyntaxError as output.
                let exception = matches!(p.reason.as_str(), "exception" | "promiseRejection");
                let data = p.data.as_ref();
                let internal_caught = exception
                    && !has_program_frame(&st, &p)
                    && (data.and_then(|d| d.uncaught) != Some(true)
                        || data.and_then(|d| d.class_name.as_deref()) == Some("SyntaxError"));
                if internal_caught {
                    return None;
                }
                let expecting = st.expecting.take();
                let (reason, description) = match (p.reason.as_str(), expecting) {
                    ("exception" | "promiseRejection", _) => {
                        st.exception = p.data.clone();
                        ("exception", None)
                    }
                    _ if !p.hit_breakpoints.is_empty() => ("breakpoint", None),
                    (_, Some(e)) => (e, None),
                    ("other" | "debugCommand", None) => {
                        ("breakpoint", Some("a debugger statement"))
                    }
                    _ => ("pause", None),
                };
                st.paused = Some(p);
                st.stop_generation += 1;
                st.handles.clear();
                st.stop_reported = true;
                Some((reason, description))
            })
        };
        let Some((reason, description)) = decided else {
            // A hit that its hit condition lets pass, or Node's own
            // caught exception.
            let _ = self.cdp.call(&cdp::Resume {}).await;
            return;
        };
        let mut body = json!({"reason": reason, "threadId": THREAD, "allThreadsStopped": true});
        if let Some(d) = description {
            body["description"] = json!(d);
        }
        self.dap.event("stopped", body).await;
    }

    async fn logged(&self, payload: &str) {
        let (id, message) = payload.split_once(' ').unwrap_or(("0", payload));
        let place = {
            let st = self.st();
            st.breakpoints
                .iter()
                .find(|b| id.parse() == Ok(b.dap_id))
                .map(|b| (b.path.clone(), b.line))
        };
        let mut body = json!({"category": "stdout", "output": format!("{message}\n")});
        if let Some((path, line)) = place {
            body["source"] = json!({"path": path});
            body["line"] = json!(line);
        }
        self.dap.event("output", body).await;
    }

    /// The program finished: say so once it is configured, after its
    /// output was read to the end.
    async fn ended(&self) {
        let code = {
            let mut st = self.st();
            if !st.configured || st.end_reported {
                return;
            }
            st.end_reported = true;
            st.exit_code
        };
        // Node ends a finished program once its client lets go.
        self.cdp.close();
        let mut drained = self.drained.clone();
        let _ = tokio::time::timeout(DRAIN_BOUND, drained.wait_for(|n| *n >= 2)).await;
        let body = match code {
            Some(c) => json!({"exitCode": c}),
            None => json!({}),
        };
        self.dap.event("exited", body).await;
        self.dap.event("terminated", json!({})).await;
    }

    // ---- requests ----

    async fn request(&self, command: &str, args: &Value) -> Result<Value, String> {
        match command {
            "initialize" => Ok(capabilities()),
            // Attaching is the same start: the program runs already (or
            // waits, under --inspect-brk, for configurationDone).
            "launch" | "attach" => {
                self.st().project = args.get("cwd").and_then(Value::as_str).map(PathBuf::from);
                self.launch().await
            }
            "configurationDone" => self.configuration_done().await,
            "setBreakpoints" => self.set_breakpoints(args).await,
            "setExceptionBreakpoints" => self.set_exception_filters(args).await,
            "threads" => Ok(json!({"threads": [{"id": THREAD, "name": "main"}]})),
            "stackTrace" => self.stack_trace(args),
            "scopes" => self.scopes(args),
            "variables" => self.variables(args).await,
            "evaluate" => self.evaluate(args).await,
            "setVariable" => self.set_variable(args).await,
            "exceptionInfo" => self.exception_info(),
            "continue" => self
                .go(None, &cdp::Resume {})
                .await
                .map(|()| json!({"allThreadsContinued": true})),
            "next" => self
                .go(Some("step"), &cdp::StepOver {})
                .await
                .map(|()| json!({})),
            "stepIn" => self
                .go(Some("step"), &cdp::StepInto {})
                .await
                .map(|()| json!({})),
            "stepOut" => self
                .go(Some("step"), &cdp::StepOut {})
                .await
                .map(|()| json!({})),
            "pause" => {
                self.st().expecting = Some("pause");
                self.cdp
                    .call(&cdp::Pause {})
                    .await
                    .map(|_| json!({}))
                    .map_err(|e| e.to_string())
            }
            "disconnect" | "terminate" => {
                self.cdp.close();
                Ok(json!({}))
            }
            other => Err(format!(
                "the node backend does not support `{other}` (the V8 inspector has no such request)"
            )),
        }
    }

    async fn launch(&self) -> Result<Value, String> {
        let cdp = &self.cdp;
        let step =
            |e: CdpError| format!("Node.js did not start the program under its inspector: {e}");
        // Sent together, answered in order: one at a time, each would wait
        // out the peers' delayed ACKs (~40 ms a command on loopback).
        let exit_binding = cdp::AddBinding {
            name: EXIT_BINDING.into(),
        };
        let log_binding = cdp::AddBinding {
            name: LOG_BINDING.into(),
        };
        // The exit code, which the process's status would give only after
        // the session let go of it.
        let exit_hook = cdp::Evaluate {
            expression: format!(
                "process.on('exit', (code) => {{ try {{ globalThis.{EXIT_BINDING}(String(code)); }} catch {{}} }}); undefined"
            ),
            generate_preview: None,
        };
        let (runtime, debugger, exit, log, hook) = tokio::join!(
            cdp.call(&cdp::RuntimeEnable {}),
            cdp.call(&cdp::DebuggerEnable {}),
            cdp.call(&exit_binding),
            cdp.call(&log_binding),
            cdp.call(&exit_hook),
        );
        runtime.map_err(step)?;
        debugger.map_err(step)?;
        exit.map_err(step)?;
        log.map_err(step)?;
        hook.map_err(step)?;
        self.dap.event("initialized", json!({})).await;
        Ok(json!({}))
    }

    async fn configuration_done(&self) -> Result<Value, String> {
        {
            self.st().configured = true;
        }
        let phase = { *self.phase.borrow() };
        match phase {
            Phase::Ended => self.ended().await,
            Phase::Held => {
                // The breakpoints and filters are set: let it run.
                self.phase.send_replace(Phase::Running);
                self.cdp
                    .call(&cdp::RunIfWaitingForDebugger {})
                    .await
                    .map_err(|e| e.to_string())?;
            }
            Phase::Running => {}
        }
        Ok(json!({}))
    }

    async fn set_breakpoints(&self, args: &Value) -> Result<Value, String> {
        let path = args
            .pointer("/source/path")
            .and_then(Value::as_str)
            .map(PathBuf::from)
            .ok_or("setBreakpoints needs source.path")?;
        let old: Vec<String> = {
            let mut st = self.st();
            let (gone, kept) = std::mem::take(&mut st.breakpoints)
                .into_iter()
                .partition(|b| b.path == path);
            st.breakpoints = kept;
            gone.into_iter().map(|b: Breakpoint| b.cdp_id).collect()
        };
        for id in old {
            let _ = self
                .cdp
                .call(&cdp::RemoveBreakpoint { breakpoint_id: id })
                .await;
        }
        let real = path.canonicalize().unwrap_or_else(|_| path.clone());
        let is_script = real
            .extension()
            .is_some_and(|e| ["js", "mjs", "cjs"].iter().any(|x| e == *x));
        // A TypeScript (or other compiled) source: its build's map says
        // which script line each of its lines became.
        let maps = if is_script { None } else { Some(self.maps()) };
        let map = maps.as_deref().and_then(|m| m.for_source(&real));
        let url = file_url(map.map_or(&real, |m| &m.script));
        let mut answers = Vec::new();
        for b in args
            .get("breakpoints")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let lines = match map {
                None => None,
                Some(m) => {
                    let asked = b.get("line").and_then(Value::as_u64).unwrap_or(1).max(1) as u32;
                    if let Some(found) = m.generated(&real, asked - 1) {
                        Some(found)
                    } else {
                        answers.push(json!({"verified": false, "line": asked,
                            "message": "no code of this file is on or after this line in its source map"}));
                        continue;
                    }
                }
            };
            answers.push(self.set_breakpoint(&path, &url, b, lines).await);
        }
        Ok(json!({ "breakpoints": answers }))
    }

    /// Set one breakpoint; `mapped` is its (script line, source line),
    /// 0-based, when a source map placed it.
    async fn set_breakpoint(
        &self,
        path: &Path,
        url: &str,
        b: &Value,
        mapped: Option<(u32, u32)>,
    ) -> Value {
        let line = b.get("line").and_then(Value::as_u64).unwrap_or(1).max(1) as u32;
        let text = |k: &str| {
            b.get(k)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
        };
        let refuse = |why: String| json!({"verified": false, "line": line, "message": why});
        let hit = match text("hitCondition").map(render::hit_test) {
            None => None,
            Some(Ok(h)) => Some(h),
            Some(Err(why)) => return refuse(why),
        };
        let dap_id = {
            let mut st = self.st();
            st.next_breakpoint += 1;
            st.next_breakpoint - 1
        };
        let condition = match text("logMessage") {
            Some(_) if hit.is_some() => {
                return refuse(
                    "a logpoint with a hit count is not supported by the node backend; use a condition instead".into(),
                )
            }
            Some(m) => Some(render::logpoint_condition(
                &format!("{dap_id} {m}"),
                text("condition"),
            )),
            None => text("condition").map(String::from),
        };
        match self
            .cdp
            .call(&cdp::SetBreakpointByUrl {
                line_number: mapped.map_or(line - 1, |(script_line, _)| script_line),
                url: url.to_string(),
                condition,
            })
            .await
        {
            Err(e) => refuse(e.to_string()),
            Ok(set) => {
                let at = match mapped {
                    Some((_, source_line)) => source_line + 1,
                    None => set.locations.first().map_or(line, |l| l.line_number + 1),
                };
                self.st().breakpoints.push(Breakpoint {
                    dap_id,
                    cdp_id: set.breakpoint_id,
                    path: path.to_path_buf(),
                    line: at,
                    hit,
                    hits: 0,
                    mapped: mapped.is_some(),
                });
                json!({"id": dap_id, "verified": true, "line": at, "source": {"path": path}})
            }
        }
    }

    async fn set_exception_filters(&self, args: &Value) -> Result<Value, String> {
        let filters: Vec<&str> = args
            .get("filters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let state = if filters.contains(&"all") {
            "all"
        } else if filters.contains(&"uncaught") {
            "uncaught"
        } else {
            "none"
        };
        self.cdp
            .call(&cdp::SetPauseOnExceptions { state })
            .await
            .map_err(|e| e.to_string())?;
        Ok(json!({}))
    }

    /// Resume in some way; `step` marks the next stop as its answer.
    async fn go<C: cdp::Command>(
        &self,
        expecting: Option<&'static str>,
        how: &C,
    ) -> Result<(), String> {
        if self.st().paused.is_none() {
            return Err("the program is not paused".into());
        }
        self.st().expecting = expecting;
        self.cdp
            .call(how)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

/// Whether any paused frame is the program's (not Node's own).
fn has_program_frame(st: &State, paused: &cdp::Paused) -> bool {
    paused
        .call_frames
        .iter()
        .any(|f| !frame_url(st, f).starts_with("node:"))
}

/// The URL of a frame's script.
fn frame_url(st: &State, f: &cdp::CallFrame) -> String {
    if f.url.is_empty() {
        st.scripts
            .get(&f.location.script_id)
            .cloned()
            .unwrap_or_default()
    } else {
        f.url.clone()
    }
}

/// What the backend offers, as a DAP adapter's `initialize` answer says it.
fn capabilities() -> Value {
    json!({
        "supportsConfigurationDoneRequest": true,
        "supportsConditionalBreakpoints": true,
        "supportsHitConditionalBreakpoints": true,
        "supportsLogPoints": true,
        "supportsSetVariable": true,
        "supportsExceptionInfoRequest": true,
        "supportsTerminateRequest": true,
        "exceptionBreakpointFilters": [
            {"filter": "all", "label": "Caught Exceptions", "default": false},
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
        assert_eq!(offered_filters(&capabilities()), catalog_filters("node"));
    }
}
