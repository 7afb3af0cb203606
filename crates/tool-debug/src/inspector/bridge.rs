//! The DAP side of the Node.js backend: an in-process adapter that answers
//! the session's DAP requests with inspector commands and turns inspector
//! events into DAP events, so the session, the ops and the answers are the
//! same ones the DAP adapters get.
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
use crate::adapters::node::{file_url, url_path};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::{mpsc, watch};

/// How long the end waits for the program's output pipes to close.
const DRAIN_BOUND: Duration = Duration::from_secs(1);

/// Variables listed for one object at most.
const VARIABLES_CAP: usize = 1000;

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
    out: tokio::sync::Mutex<Option<WriteHalf<DuplexStream>>>,
    seq: AtomicU64,
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
            out: tokio::sync::Mutex::new(Some(write)),
            seq: AtomicU64::new(1),
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
        while let Ok(Some(frame)) = tool_core::framing::read_frame(&mut reader).await {
            let Ok(msg) = serde_json::from_slice::<Value>(&frame) else {
                continue;
            };
            if msg.get("type").and_then(Value::as_str) != Some("request") {
                continue;
            }
            let me = self.clone();
            tokio::spawn(async move {
                let seq = msg.get("seq").and_then(Value::as_u64).unwrap_or(0);
                let command = msg
                    .get("command")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                let args = msg.get("arguments").cloned().unwrap_or(Value::Null);
                let started = std::time::Instant::now();
                let answer = me.request(&command, &args).await;
                tracing::debug!(%command, ms = started.elapsed().as_millis() as u64, "node backend request");
                me.respond(seq, &command, answer).await;
                if command == "disconnect" {
                    // As an adapter process's stdout closes when it exits:
                    // the session's reader ends with it.
                    me.hang_up().await;
                }
            });
        }
    }

    async fn write(&self, mut message: Value) {
        message["seq"] = json!(self.seq.fetch_add(1, Ordering::Relaxed));
        let frame = crate::transport::encode_frame(&message);
        let mut out = self.out.lock().await;
        if let Some(w) = out.as_mut() {
            if w.write_all(&frame).await.is_err() {
                *out = None;
            }
        }
    }

    async fn respond(&self, seq: u64, command: &str, answer: Result<Value, String>) {
        let message = match answer {
            Ok(body) => json!({"type": "response", "request_seq": seq, "success": true,
                "command": command, "body": body}),
            Err(why) => json!({"type": "response", "request_seq": seq, "success": false,
                "command": command, "message": why}),
        };
        self.write(message).await;
    }

    async fn event(&self, event: &str, body: Value) {
        self.write(json!({"type": "event", "event": event, "body": body}))
            .await;
    }

    /// End the DAP stream: the session reads it as the adapter gone.
    async fn hang_up(&self) {
        if let Some(mut w) = self.out.lock().await.take() {
            let _ = w.shutdown().await;
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
                        self.event(
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
            self.hang_up().await;
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
            self.event(
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
        self.event("stopped", body).await;
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
        self.event("output", body).await;
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
        self.event("exited", body).await;
        self.event("terminated", json!({})).await;
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
        self.event("initialized", json!({})).await;
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

    /// The paused call frame a DAP frame id names.
    fn frame(&self, frame_id: u64) -> Result<(usize, cdp::CallFrame), String> {
        let st = self.st();
        let paused = st.paused.as_ref().ok_or("the program is not paused")?;
        let (generation, index) = (frame_id / 10_000, (frame_id % 10_000) as usize);
        if generation != st.stop_generation || index == 0 {
            return Err(format!("frame {frame_id} is from an earlier stop"));
        }
        paused
            .call_frames
            .get(index - 1)
            .cloned()
            .map(|f| (index - 1, f))
            .ok_or_else(|| format!("no frame {frame_id}"))
    }

    fn stack_trace(&self, args: &Value) -> Result<Value, String> {
        // Maps are read only once a paused script names one.
        let any_mapped = {
            let st = self.st();
            st.paused.as_ref().is_some_and(|p| {
                p.call_frames
                    .iter()
                    .any(|f| st.mapped_scripts.contains(&f.location.script_id))
            })
        };
        let maps = any_mapped.then(|| self.maps());
        let st = self.st();
        let paused = st.paused.as_ref().ok_or("the program is not paused")?;
        let start = args.get("startFrame").and_then(Value::as_u64).unwrap_or(0) as usize;
        let levels = match args.get("levels").and_then(Value::as_u64).unwrap_or(0) {
            0 => usize::MAX,
            n => n as usize,
        };
        // Node's own frames (`node:internal/…`) are left out, as an IDE
        // skips them: the program's frames are the story. A stop with no
        // frame of the program's (an ES module's uncaught exception is
        // rethrown by Node's loader) shows Node's.
        let shown = |f: &cdp::CallFrame| {
            !frame_url(&st, f).starts_with("node:") || !has_program_frame(&st, paused)
        };
        let frames: Vec<Value> = paused
            .call_frames
            .iter()
            .enumerate()
            .filter(|(_, f)| shown(f))
            .skip(start)
            .take(levels)
            .map(|(i, f)| {
                let url = frame_url(&st, f);
                let mut line = f.location.line_number;
                let mut path = url_path(&url);
                // A compiled script's place as its source's (TypeScript).
                let original = path.as_deref().and_then(|p| {
                    maps.as_deref()?
                        .for_script(p)?
                        .original(line, f.location.column_number.unwrap_or(0))
                });
                if let Some((source_path, source_line)) = original {
                    path = Some(source_path);
                    line = source_line;
                }
                let source = match path {
                    Some(p) => json!({"name": p.file_name().map(|n| n.to_string_lossy().into_owned()), "path": p}),
                    None => json!({"name": url, "presentationHint": "deemphasize"}),
                };
                let name = if !f.function_name.is_empty() {
                    f.function_name.as_str()
                } else if is_module_body(&st, paused, i) {
                    "<module>"
                } else {
                    "(anonymous)"
                };
                json!({
                    "id": st.stop_generation * 10_000 + i as u64 + 1,
                    "name": name,
                    "source": source,
                    "line": line + 1,
                    "column": f.location.column_number.unwrap_or(0) + 1,
                })
            })
            .collect();
        let total = paused.call_frames.iter().filter(|f| shown(f)).count();
        Ok(json!({"stackFrames": frames, "totalFrames": total}))
    }

    fn handle(&self, h: Handle) -> u64 {
        let mut st = self.st();
        st.handles.push(h);
        st.stop_generation * 100_000 + st.handles.len() as u64
    }

    fn resolve(&self, reference: u64) -> Result<Handle, String> {
        let st = self.st();
        let (generation, index) = (reference / 100_000, (reference % 100_000) as usize);
        if generation != st.stop_generation || index == 0 {
            return Err(format!("reference {reference} is from an earlier stop"));
        }
        st.handles
            .get(index - 1)
            .cloned()
            .ok_or_else(|| format!("no reference {reference}"))
    }

    fn scopes(&self, args: &Value) -> Result<Value, String> {
        let frame_id = args.get("frameId").and_then(Value::as_u64).unwrap_or(0);
        let (frame, f) = self.frame(frame_id)?;
        // The innermost blocks and the function's (or module's) own scope
        // read as one: what the code at this line sees as its locals.
        let own = f
            .scope_chain
            .iter()
            .position(|s| matches!(s.type_.as_str(), "local" | "module"))
            .unwrap_or(0);
        let own_is_local = f.scope_chain.iter().take(own + 1).all(|s| {
            matches!(
                s.type_.as_str(),
                "local" | "module" | "block" | "catch" | "with"
            )
        });
        let mut scopes = Vec::new();
        let mut rest_from = 0;
        if own_is_local && !f.scope_chain.is_empty() {
            let ids = f
                .scope_chain
                .iter()
                .enumerate()
                .take(own + 1)
                .filter_map(|(n, s)| s.object.object_id.clone().map(|id| (n, id)))
                .collect();
            let r = self.handle(Handle::Scopes { frame, scopes: ids });
            scopes.push(json!({"name": "Locals", "variablesReference": r, "expensive": false}));
            rest_from = own + 1;
        }
        for (n, s) in f.scope_chain.iter().enumerate().skip(rest_from) {
            let Some(id) = s.object.object_id.clone() else {
                continue;
            };
            let mut name = capitalized(&s.type_);
            if let Some(owner) = s.name.as_deref().filter(|n| !n.is_empty()) {
                name = format!("{name} ({owner})");
            }
            let r = self.handle(Handle::Scopes {
                frame,
                scopes: vec![(n, id)],
            });
            scopes.push(json!({"name": name, "variablesReference": r,
                "expensive": s.type_ == "global"}));
        }
        Ok(json!({ "scopes": scopes }))
    }

    async fn properties(&self, object_id: &str) -> Result<cdp::Properties, String> {
        self.cdp
            .call(&cdp::GetProperties {
                object_id: object_id.to_string(),
                own_properties: true,
                generate_preview: true,
            })
            .await
            .map_err(|e| e.to_string())
    }

    fn variable(&self, frame: usize, name: &str, value: &RemoteObject) -> Value {
        let reference = match (&value.object_id, render::expandable(value)) {
            (Some(id), true) => self.handle(Handle::Object {
                frame,
                object_id: id.clone(),
            }),
            _ => 0,
        };
        json!({"name": name, "value": render::value(value), "type": render::type_name(value),
            "variablesReference": reference})
    }

    async fn variables(&self, args: &Value) -> Result<Value, String> {
        let reference = args
            .get("variablesReference")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let mut out = Vec::new();
        match self.resolve(reference)? {
            Handle::Scopes { frame, scopes } => {
                // Inner scopes shadow outer ones; names sorted, as the
                // DAP adapters list a frame's variables.
                let mut seen = std::collections::BTreeMap::new();
                let module_body = {
                    let st = self.st();
                    st.paused
                        .as_ref()
                        .is_some_and(|p| is_module_body(&st, p, frame))
                };
                for (_, id) in scopes {
                    for p in self.properties(&id).await?.result {
                        // A CommonJS module's wrapper parameters are in
                        // every module: noise among its own variables
                        // (evaluate still reaches them).
                        if module_body && COMMONJS_WRAPPER.contains(&p.name.as_str()) {
                            continue;
                        }
                        if let Some(v) = p.value {
                            seen.entry(p.name).or_insert(v);
                        }
                    }
                }
                for (name, v) in &seen {
                    out.push(self.variable(frame, name, v));
                }
            }
            Handle::Object { frame, object_id } => {
                let props = self.properties(&object_id).await?;
                for p in props.result.iter().filter(|p| p.name != "__proto__") {
                    match (&p.value, &p.get) {
                        (Some(v), _) => out.push(self.variable(frame, &p.name, v)),
                        (None, Some(_)) => out.push(json!({"name": p.name, "value": "(getter)",
                            "variablesReference": 0})),
                        _ => {}
                    }
                }
                for p in props
                    .internal_properties
                    .iter()
                    .filter(|p| p.name != "[[Prototype]]")
                {
                    if let Some(v) = &p.value {
                        out.push(self.variable(frame, &p.name, v));
                    }
                }
            }
        }
        out.truncate(VARIABLES_CAP);
        Ok(json!({ "variables": out }))
    }

    /// Evaluate `expression` in a paused frame (or the global scope).
    async fn evaluate_in(
        &self,
        frame: Option<&cdp::CallFrame>,
        expression: &str,
    ) -> Result<RemoteObject, String> {
        let answer = match frame {
            Some(f) => {
                self.cdp
                    .call(&cdp::EvaluateOnCallFrame {
                        call_frame_id: f.call_frame_id.clone(),
                        expression: expression.to_string(),
                        generate_preview: true,
                    })
                    .await
            }
            None => {
                self.cdp
                    .call(&cdp::Evaluate {
                        expression: expression.to_string(),
                        generate_preview: Some(true),
                    })
                    .await
            }
        }
        .map_err(|e| e.to_string())?;
        match answer.exception_details {
            Some(d) => Err(d.message()),
            None => Ok(answer.result),
        }
    }

    async fn evaluate(&self, args: &Value) -> Result<Value, String> {
        let expression = args
            .get("expression")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let frame = match args.get("frameId").and_then(Value::as_u64) {
            Some(id) => Some(self.frame(id)?),
            None => None,
        };
        let result = self
            .evaluate_in(frame.as_ref().map(|(_, f)| f), expression)
            .await?;
        let v = self.variable(frame.map_or(0, |(i, _)| i), "", &result);
        Ok(
            json!({"result": v["value"], "type": v["type"], "variablesReference": v["variablesReference"]}),
        )
    }

    async fn set_variable(&self, args: &Value) -> Result<Value, String> {
        let reference = args
            .get("variablesReference")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let name = args.get("name").and_then(Value::as_str).unwrap_or_default();
        let expression = args
            .get("value")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let handle = self.resolve(reference)?;
        let frame_index = match &handle {
            Handle::Scopes { frame, .. } | Handle::Object { frame, .. } => *frame,
        };
        let frame = {
            let st = self.st();
            st.paused
                .as_ref()
                .and_then(|p| p.call_frames.get(frame_index).cloned())
                .ok_or("the program is not paused")?
        };
        let new = self.evaluate_in(Some(&frame), expression).await?;
        let set = match handle {
            Handle::Scopes { scopes, .. } => {
                let mut holder = None;
                for (n, id) in &scopes {
                    if self
                        .properties(id)
                        .await?
                        .result
                        .iter()
                        .any(|p| p.name == name)
                    {
                        holder = Some(*n);
                        break;
                    }
                }
                let scope_number = holder.ok_or_else(|| format!("no variable `{name}` here"))?;
                self.cdp
                    .call(&cdp::SetVariableValue {
                        scope_number,
                        variable_name: name.to_string(),
                        new_value: cdp::CallArgument::of(&new),
                        call_frame_id: frame.call_frame_id.clone(),
                    })
                    .await
                    .map_err(|e| e.to_string())?;
                new
            }
            Handle::Object { object_id, .. } => {
                let answer = self
                    .cdp
                    .call(&cdp::CallFunctionOn {
                        function_declaration: "function (k, v) { this[k] = v; return this[k]; }"
                            .into(),
                        object_id,
                        arguments: vec![
                            cdp::CallArgument {
                                value: Some(json!(name)),
                                ..Default::default()
                            },
                            cdp::CallArgument::of(&new),
                        ],
                        generate_preview: true,
                    })
                    .await
                    .map_err(|e| e.to_string())?;
                if let Some(d) = answer.exception_details {
                    return Err(d.message());
                }
                answer.result
            }
        };
        let v = self.variable(frame_index, name, &set);
        Ok(
            json!({"value": v["value"], "type": v["type"], "variablesReference": v["variablesReference"]}),
        )
    }

    fn exception_info(&self) -> Result<Value, String> {
        let st = self.st();
        let e = st
            .exception
            .as_ref()
            .ok_or("the program is not stopped at an exception")?;
        let (id, mut description) = exception_words(e);
        let in_loader = st
            .paused
            .as_ref()
            .is_some_and(|p| !has_program_frame(&st, p));
        if in_loader {
            if let Some(at) = thrown_at(e) {
                description.push_str(&format!(
                    " (thrown at {at}; Node's module loader rethrew it, so the program's frames are gone: set a breakpoint there, or use the `all` filter to stop at the throw)"
                ));
            }
        }
        let mode = if e.uncaught == Some(true) {
            "unhandled"
        } else {
            "always"
        };
        Ok(json!({"exceptionId": id, "description": description, "breakMode": mode}))
    }
}

/// An exception as its class and message: `TypeError` and `x is not a
/// function`; a thrown value that is not an error as its type and value.
fn exception_words(e: &RemoteObject) -> (String, String) {
    if e.subtype.as_deref() == Some("error") || e.type_ == "object" {
        let head = e
            .description
            .as_deref()
            .and_then(|d| d.lines().next())
            .unwrap_or_default();
        if let Some((name, message)) = head.split_once(": ") {
            if !name.is_empty() && !name.contains(' ') {
                return (name.to_string(), message.to_string());
            }
        }
        if e.subtype.as_deref() == Some("error") {
            return (head.to_string(), String::new());
        }
    }
    (format!("thrown {}", render::type_name(e)), render::value(e))
}

/// The parameters Node's CommonJS loader wraps every module's code in.
const COMMONJS_WRAPPER: [&str; 5] = ["exports", "require", "module", "__filename", "__dirname"];

/// Whether frame `i` is a module's top-level code: a nameless function
/// that Node's module loader called (CommonJS), or a module scope (ESM).
fn is_module_body(st: &State, paused: &cdp::Paused, i: usize) -> bool {
    let Some(f) = paused.call_frames.get(i) else {
        return false;
    };
    if !f.function_name.is_empty() {
        return false;
    }
    let called_by_loader = paused
        .call_frames
        .get(i + 1)
        .is_some_and(|caller| frame_url(st, caller).starts_with("node:internal/modules/"));
    let module_scope = f
        .scope_chain
        .iter()
        .find(|s| s.type_ != "block")
        .is_some_and(|s| s.type_ == "module");
    called_by_loader || module_scope
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

/// Where an exception was thrown, from its stack: `slugify
/// (/w/index.js:44:9)`.
fn thrown_at(e: &RemoteObject) -> Option<String> {
    let frame = e
        .description
        .as_deref()?
        .lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("at "))?;
    Some(frame.replace("file://", ""))
}

fn capitalized(word: &str) -> String {
    let mut c = word.chars();
    c.next()
        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
        .unwrap_or_default()
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
    fn exceptions_read_as_class_and_message() {
        let read = |v: Value| exception_words(&serde_json::from_value(v).unwrap());
        assert_eq!(
            read(
                json!({"type": "object", "subtype": "error", "className": "TypeError",
                "description": "TypeError: x is not a function\n    at f (/w/a.js:1:1)"})
            ),
            ("TypeError".into(), "x is not a function".into())
        );
        assert_eq!(
            read(json!({"type": "string", "value": "boom"})),
            ("thrown string".into(), "\"boom\"".into())
        );
    }

    #[test]
    fn the_filters_offered_are_the_catalog_s() {
        let offered: Vec<String> = capabilities()["exceptionBreakpointFilters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["filter"].as_str().unwrap().to_string())
            .collect();
        let listed: Vec<String> = crate::adapters::builtin()
            .into_iter()
            .find(|s| s.id == "node")
            .unwrap()
            .exception_filters
            .into_iter()
            .map(|f| f.id)
            .collect();
        assert_eq!(offered, listed);
    }
}
