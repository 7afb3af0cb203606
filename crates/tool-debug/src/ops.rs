//! What each `op` does, on one conversation's state.
//!
//! Every op that needs a stopped program checks it first and says what to do
//! when it is running or gone; every op that waits is bounded by
//! `timeout_seconds` (default 30 s) and answers "still running" when the
//! bound runs out.

use crate::args::{DebugArgs, Op};
use crate::catalog::{AdapterKind, Catalog, ResolvedAdapter};
use crate::format::{self, display_path, quoted_line};
use crate::session::{
    Ending, HandleKind, LaunchPlan, RunState, Session, SessionLimits, Settled, StopInfo,
};
use crate::{Conversation, DebugSupervisor};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tool_core::format::{cap_chars, capped_note};
use tool_core::{ToolError, ToolOutput, Workspace};

const FRAME_CAP: usize = 30;
const VARIABLE_CAP: usize = 50;
const VALUE_CAP: usize = 400;
/// Output shown inside a stop or exit answer.
const OUTPUT_IN_ANSWER: usize = 2000;
/// Output returned by one `output` call.
const OUTPUT_PER_CALL: usize = 16 * 1024;

static SCRATCH: AtomicU64 = AtomicU64::new(0);

pub(crate) struct OpContext<'a> {
    pub supervisor: &'a DebugSupervisor,
    pub workspace: &'a Workspace,
    pub conversation: &'a mut Conversation,
}

/// Lines of an answer plus its structured twin.
struct Answer {
    lines: Vec<String>,
    structured: Value,
}

impl Answer {
    fn new(head: String) -> Self {
        Answer {
            lines: vec![head],
            structured: json!({}),
        }
    }
    fn push(&mut self, line: impl Into<String>) {
        self.lines.push(line.into());
    }
    fn done(self) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(self.lines.join("\n")).with_structured(self.structured))
    }
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

pub(crate) fn adapter_lines(catalog: &Catalog, root: &Path) -> Vec<String> {
    catalog
        .specs()
        .iter()
        .map(|spec| match catalog.resolve(spec, root, root) {
            Ok(r) => {
                let mut line = format!(
                    "{:<8} usable: `{}` (marker {})",
                    spec.id,
                    r.command
                        .iter()
                        .map(|a| a.to_string_lossy())
                        .collect::<Vec<_>>()
                        .join(" "),
                    r.marker
                );
                for n in &r.notes {
                    line.push_str(&format!("; {n}"));
                }
                relative_to(&line, root)
            }
            Err(n) => format!("{:<8} not usable: {}", spec.id, n.why),
        })
        .collect()
}

/// Paths inside the workspace in free text (notes) read relative to it.
fn relative_to(text: &str, root: &Path) -> String {
    let prefix = format!("{}/", root.display());
    text.replace(&prefix, "")
}

impl OpContext<'_> {
    pub async fn dispatch(mut self, args: DebugArgs) -> Result<ToolOutput, ToolError> {
        let op = args.op;
        let result = match op {
            Op::Adapters => self.adapters().await,
            Op::Status => self.status(),
            Op::Breakpoints => self.breakpoints(&args).await,
            Op::Launch | Op::Attach => self.launch(&args).await,
            Op::Continue | Op::StepOver | Op::StepIn | Op::StepOut => self.resume(&args).await,
            Op::Pause => self.pause(&args).await,
            Op::Threads => self.threads().await,
            Op::Stack => self.stack(&args).await,
            Op::Scopes => self.scopes(&args).await,
            Op::Variables => self.variables(&args).await,
            Op::Evaluate => self.evaluate(&args).await,
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
        display_path(self.workspace, p)
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

    async fn adapters(&self) -> Result<ToolOutput, ToolError> {
        let catalog = self.supervisor.catalog().clone();
        let root = self.workspace.root().to_path_buf();
        let lines = tokio::task::spawn_blocking(move || adapter_lines(&catalog, &root))
            .await
            .map_err(|e| ToolError::failed(format!("checking adapters failed: {e}")))?;
        let mut a = Answer::new(
            "debug adapters  (root markers looked for in the workspace root; a launched program's own folder is checked up to the root)".into(),
        );
        let usable: Vec<String> = lines
            .iter()
            .filter(|l| l.contains(" usable: "))
            .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
            .collect();
        for l in lines {
            a.push(l);
        }
        a.structured = json!({ "usable": usable });
        a.done()
    }

    fn status(&self) -> Result<ToolOutput, ToolError> {
        let bps: usize = self.conversation.breakpoints.values().map(Vec::len).sum();
        let bp_note = format!(
            "{} set{}",
            tool_core::format::plural(bps, "breakpoint", "breakpoints"),
            if bps == 0 {
                String::new()
            } else {
                format!(
                    " ({})",
                    self.conversation
                        .breakpoints
                        .iter()
                        .map(|(f, l)| format!(
                            "{}:{}",
                            self.rel(f),
                            l.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
                        ))
                        .collect::<Vec<_>>()
                        .join(" ")
                )
            }
        );
        let Some(s) = &self.conversation.session else {
            let mut a = Answer::new(format!("debug status  no session; {bp_note}"));
            a.push("launch a program to start one");
            a.structured = json!({"state": "none", "breakpoints": bps});
            return a.done();
        };
        let snap = s.snapshot();
        let ttl = if matches!(snap.state, RunState::Ended(_)) {
            String::new()
        } else {
            format!(", {} of its TTL left", format::duration(s.ttl_left()))
        };
        let head = format!(
            "debug status  {} under {} (launched {} ago{ttl})",
            s.label(),
            s.adapter_id(),
            format::duration(s.age()),
        );
        let mut a = Answer::new(head);
        let state = match &snap.state {
            RunState::Starting => {
                a.push("starting");
                "starting"
            }
            RunState::Running | RunState::Exiting { .. } => {
                a.push("running; call pause to stop it, or continue waiting with continue");
                "running"
            }
            RunState::Stopped(stop) => {
                a.push(format::stop_headline(stop, None));
                a.push("call stack for where, or continue / step_over");
                "stopped"
            }
            RunState::Ended(e) => {
                a.push(format!("ended: {}", e.describe()));
                "ended"
            }
        };
        a.push(bp_note);
        a.structured = json!({"state": state, "breakpoints": bps});
        a.done()
    }

    async fn breakpoints(&mut self, args: &DebugArgs) -> Result<ToolOutput, ToolError> {
        let file = args.file.as_deref().ok_or_else(|| {
            ToolError::bad_args("breakpoints needs `file` (relative to the workspace root) and `lines` (1-based; [] clears the file)")
        })?;
        let lines = args.lines.clone().ok_or_else(|| {
            ToolError::bad_args(
                "breakpoints needs `lines`: 1-based line numbers, or [] to clear the file",
            )
        })?;
        let path = self.workspace.resolve_existing(file)?;
        if !path.is_file() {
            return Err(ToolError::bad_args(format!(
                "`{file}` is not a file; breakpoints go in source files"
            )));
        }
        if let Some(bad) = lines.iter().find(|l| **l == 0) {
            return Err(ToolError::bad_args(format!(
                "line {bad} is not a line: lines are 1-based"
            )));
        }
        let mut lines = lines;
        lines.sort_unstable();
        lines.dedup();
        let rel = self.rel(&path);
        if lines.is_empty() {
            self.conversation.breakpoints.remove(&path);
        } else {
            self.conversation
                .breakpoints
                .insert(path.clone(), lines.clone());
        }
        let live = self.live().ok();
        let mut a = Answer::new(format!("debug breakpoints  {rel}"));
        match live {
            None => {
                if lines.is_empty() {
                    a.push(format!("cleared every breakpoint in {rel}"));
                } else {
                    for l in &lines {
                        let src = format::source_line(&path, *l as u64)
                            .map(|t| format!("  | {}", t.trim()))
                            .unwrap_or_else(|| "  (past the end of the file)".into());
                        a.push(format!("{rel}:{l} set{src}"));
                    }
                    a.push("no session yet: they are sent to the adapter at launch");
                }
                a.structured = json!({"file": rel, "lines": lines, "sent": false});
            }
            Some(session) => {
                let statuses = session.set_breakpoints(&path, &lines).await?;
                if statuses.is_empty() {
                    a.push(format!("cleared every breakpoint in {rel}"));
                }
                for l in format::breakpoint_lines(self.workspace, &path, &statuses) {
                    a.push(l);
                }
                a.structured = json!({
                    "file": rel,
                    "sent": true,
                    "breakpoints": statuses.iter().map(|b| json!({
                        "requested": b.requested, "line": b.line, "verified": b.verified
                    })).collect::<Vec<_>>(),
                });
            }
        }
        a.done()
    }

    async fn launch(&mut self, args: &DebugArgs) -> Result<ToolOutput, ToolError> {
        let op = args.op;
        if let Some(s) = &self.conversation.session {
            if !s.is_ended() {
                return Err(ToolError::refused(format!(
                    "a debug session is already running for this conversation: {}; keep using it, or call terminate first (one session per conversation)",
                    self.describe_state(s).await
                )));
            }
        }
        let wait = wait_bound(args, self.default_wait())?;
        let previous = self
            .conversation
            .session
            .take()
            .and_then(|s| match s.snapshot().state {
                RunState::Ended(e) => Some(e.describe()),
                _ => None,
            });
        let plan = if op == Op::Launch {
            self.launch_plan(args).await?
        } else {
            self.attach_plan(args).await?
        };
        let adapter_line = format!(
            "{} under {} (`{}`)",
            plan.label,
            plan.adapter.spec.id,
            plan.adapter
                .command
                .iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" ")
        );
        let notes: Vec<String> = plan
            .adapter
            .notes
            .iter()
            .map(|n| relative_to(n, self.workspace.root()))
            .collect();
        let (session, report) = Session::start(plan, self.limits()).await?;
        self.conversation.session = Some(session.clone());
        let mut a = Answer::new(format!("debug {}  {adapter_line}", op.name()));
        if let Some(p) = previous {
            a.push(format!("(the previous session had ended: {p})"));
        }
        for n in notes {
            a.push(format!("note: {n}"));
        }
        for (file, statuses) in &report.breakpoints {
            for l in format::breakpoint_lines(self.workspace, file, statuses) {
                a.push(format!("breakpoint {l}"));
            }
        }
        let settled = session.wait_settled(0, wait).await;
        self.settled_answer(&session, settled, wait, &mut a).await;
        a.done()
    }

    async fn launch_plan(&self, args: &DebugArgs) -> Result<LaunchPlan, ToolError> {
        let program = args.program.as_deref().ok_or_else(|| {
            ToolError::bad_args(
                "launch needs `program`: the file to run (a .py or .go file, a Go package folder, or a compiled executable), relative to the workspace root",
            )
        })?;
        let path = self.workspace.resolve(program)?;
        if !path.exists() {
            return Err(ToolError::bad_args(format!(
                "program `{program}` does not exist in the workspace; check the path (relative to the workspace root), or build it first"
            )));
        }
        let catalog = self.supervisor.catalog();
        let spec = match args.adapter.as_deref() {
            Some(id) => catalog.spec(id).cloned().ok_or_else(|| {
                ToolError::bad_args(format!(
                    "unknown adapter `{id}`; known: {}",
                    catalog.ids()
                ))
            })?,
            None => catalog.route(&path).cloned().ok_or_else(|| {
                ToolError::bad_args(format!(
                    "cannot tell which debugger runs `{program}`: it is not a .py, .go or .dart file, a Go package or a compiled executable; pass `adapter` (one of {}), or for C/C++ launch the executable built with -g",
                    catalog.ids()
                ))
            })?,
        };
        let start = if path.is_dir() {
            path.clone()
        } else {
            path.parent().unwrap_or(self.workspace.root()).to_path_buf()
        };
        let resolved = self.resolve_adapter(&spec, &start).await?;
        if spec.kind == AdapterKind::Lldb && !crate::catalog::is_native_executable(&path) {
            return Err(ToolError::bad_args(format!(
                "`{program}` is not a compiled program; lldb runs executables: build it with debug info (e.g. `gcc -g -O0 -o prog {program}` or `cargo build`) and launch the executable"
            )));
        }
        let cwd = resolved.project_dir.clone();
        let prog_args = args.args.clone().unwrap_or_default();
        let mut scratch = None;
        let mut launch = match spec.kind {
            AdapterKind::Debugpy => json!({
                "type": "python",
                "request": "launch",
                "name": "agent-tools",
                "program": path,
                "args": prog_args,
                "cwd": cwd,
                "python": [resolved.debuggee_python.clone().unwrap_or_else(|| PathBuf::from("python3"))],
                "console": "internalConsole",
                "redirectOutput": true,
                "justMyCode": true,
                "stopOnEntry": false,
            }),
            AdapterKind::Lldb => json!({
                "program": path,
                "args": prog_args,
                "cwd": cwd,
                "stopOnEntry": false,
                "initCommands": resolved.init_commands,
                // The program gets the run's PATH even when the adapter's
                // was changed for its embedded Python.
                "env": [format!("PATH={}", self.supervisor.catalog().search_path().to_string_lossy())],
            }),
            AdapterKind::Delve => {
                let mode = if crate::catalog::is_native_executable(&path) {
                    "exec"
                } else {
                    "debug"
                };
                // The build goes to a scratch folder, not into the workspace.
                let dir = std::env::temp_dir().join(format!(
                    "agent-tools-debug-{}-{}",
                    std::process::id(),
                    SCRATCH.fetch_add(1, Ordering::Relaxed)
                ));
                std::fs::create_dir_all(&dir)?;
                let out = dir.join("__debug_bin");
                scratch = Some(dir);
                json!({
                    "request": "launch",
                    "mode": mode,
                    "program": path,
                    "args": prog_args,
                    "cwd": cwd,
                    "output": out,
                    "stopOnEntry": false,
                })
            }
            AdapterKind::Dart | AdapterKind::Custom => json!({
                "program": path,
                "args": prog_args,
                "cwd": cwd,
            }),
        };
        merge(&mut launch, &spec.launch_template);
        Ok(LaunchPlan {
            label: self.rel(&path),
            adapter: resolved,
            request: "launch",
            arguments: launch,
            breakpoints: self.conversation.breakpoints.clone(),
            connect_to: None,
            scratch_dir: scratch,
            env: self.supervisor.config().env.clone(),
            search_path: self.supervisor.catalog().search_path().clone(),
        })
    }

    async fn attach_plan(&self, args: &DebugArgs) -> Result<LaunchPlan, ToolError> {
        let port = args.port.ok_or_else(|| {
            ToolError::bad_args("attach needs `port`: the TCP port at 127.0.0.1 the debuggee (or its debug server) listens on")
        })?;
        let catalog = self.supervisor.catalog();
        let root = self.workspace.root().to_path_buf();
        let spec = match args.adapter.as_deref() {
            Some(id) => catalog.spec(id).cloned().ok_or_else(|| {
                ToolError::bad_args(format!("unknown adapter `{id}`; known: {}", catalog.ids()))
            })?,
            None => {
                let usable: Vec<_> = catalog
                    .specs()
                    .iter()
                    .filter(|s| crate::catalog::find_marker(&s.markers, &root, &root).is_some())
                    .cloned()
                    .collect();
                match usable.as_slice() {
                    [one] => one.clone(),
                    _ => {
                        return Err(ToolError::bad_args(format!(
                            "attach needs `adapter` here (one of {}): the workspace root does not name exactly one",
                            catalog.ids()
                        )))
                    }
                }
            }
        };
        let resolved = self.resolve_adapter(&spec, &root).await?;
        let mut connect_to = None;
        let mut attach = match spec.kind {
            AdapterKind::Debugpy => json!({
                "type": "python", "request": "attach", "name": "agent-tools",
                "connect": {"host": "127.0.0.1", "port": port}, "justMyCode": true,
            }),
            AdapterKind::Lldb => json!({
                "attachCommands": [format!("gdb-remote 127.0.0.1:{port}")],
            }),
            AdapterKind::Delve => {
                // A headless dlv speaks DAP itself: connect straight to it.
                connect_to = Some(port);
                json!({"request": "attach", "mode": "remote"})
            }
            AdapterKind::Dart => json!({
                "vmServiceUri": format!("ws://127.0.0.1:{port}/ws"),
                "cwd": resolved.project_dir,
            }),
            AdapterKind::Custom => json!({"port": port}),
        };
        merge(&mut attach, &spec.launch_template);
        Ok(LaunchPlan {
            label: format!("port {port}"),
            adapter: resolved,
            request: "attach",
            arguments: attach,
            breakpoints: self.conversation.breakpoints.clone(),
            connect_to,
            scratch_dir: None,
            env: self.supervisor.config().env.clone(),
            search_path: self.supervisor.catalog().search_path().clone(),
        })
    }

    async fn resolve_adapter(
        &self,
        spec: &crate::AdapterSpec,
        start: &Path,
    ) -> Result<ResolvedAdapter, ToolError> {
        let catalog = self.supervisor.catalog().clone();
        let (spec2, start2, root) = (
            spec.clone(),
            start.to_path_buf(),
            self.workspace.root().to_path_buf(),
        );
        tokio::task::spawn_blocking(move || catalog.resolve(&spec2, &start2, &root))
            .await
            .map_err(|e| ToolError::failed(format!("checking the adapter failed: {e}")))?
            .map_err(|n| {
                ToolError::unavailable(format!(
                    "the {} adapter cannot start for this program: {}; call debug adapters to see what is usable here",
                    spec.id, n.why
                ))
            })
    }

    /// One line saying what a live session is doing, for refusals.
    async fn describe_state(&self, s: &Session) -> String {
        let state = match s.snapshot().state {
            RunState::Stopped(stop) => {
                let place = match stop.thread_id {
                    Some(t) => self
                        .top_frame(s, t)
                        .await
                        .map(|f| format::frame_place(self.workspace, &f).0),
                    None => None,
                };
                format::stop_headline(&stop, place.as_deref())
            }
            RunState::Ended(e) => e.describe(),
            _ => "running".into(),
        };
        format!(
            "{} under {}, {} (launched {} ago)",
            s.label(),
            s.adapter_id(),
            state,
            format::duration(s.age())
        )
    }

    async fn top_frame(&self, s: &Session, thread: u64) -> Option<dap_types::StackFrame> {
        let body = s
            .request(
                "stackTrace",
                json!({"threadId": thread, "startFrame": 0, "levels": 1}),
            )
            .await
            .ok()?;
        let st: dap_types::StackTraceResponse =
            crate::transport::decode_body("stackTrace", body).ok()?;
        st.stack_frames.into_iter().next()
    }

    /// The answer after a wait: where it stopped, how it ended, or that it
    /// is still running — with the latest output when that helps.
    async fn settled_answer(&self, s: &Session, settled: Settled, wait: Duration, a: &mut Answer) {
        match settled {
            Settled::Stopped(stop) => {
                let frame = match stop.thread_id {
                    Some(t) => self.top_frame(s, t).await,
                    None => None,
                };
                let (place, at) = frame
                    .as_ref()
                    .map(|f| format::frame_place(self.workspace, f))
                    .map(|(p, at)| (Some(p), at))
                    .unwrap_or((None, None));
                a.push(format::stop_headline(&stop, place.as_deref()));
                if let Some((path, line)) = &at {
                    if let Some(q) = quoted_line(path, *line) {
                        a.push(q);
                    }
                }
                a.structured = json!({
                    "state": "stopped",
                    "stop": stop.stop_id,
                    "reason": stop.reason,
                    "thread_id": stop.thread_id,
                    "function": frame.as_ref().map(|f| f.name.clone()),
                    "file": at.as_ref().map(|(p, _)| self.rel(p)),
                    "line": at.as_ref().map(|(_, l)| *l),
                });
            }
            Settled::Ended(end) => {
                // An ended session keeps nothing alive: the adapter goes now,
                // not when the next call comes. This also lets the last
                // output events land before the tail is read.
                s.shutdown(end.clone()).await;
                let end = match s.snapshot().state {
                    RunState::Ended(e) => e,
                    _ => end,
                };
                a.push(format::ending_headline(&end));
                let tail = s.output_tail(OUTPUT_IN_ANSWER * 2);
                if !tail.trim().is_empty() {
                    a.push("output (tail; the output op returns all of it):".to_string());
                    a.push(format::output_tail(tail.trim_end(), OUTPUT_IN_ANSWER));
                }
                let code = match &end {
                    Ending::Exited { code } => *code,
                    _ => None,
                };
                a.structured = json!({"state": "ended", "exit_code": code, "why": end.describe()});
            }
            Settled::StillRunning => {
                a.push(format!(
                    "still running after {}: no breakpoint was hit and the program did not exit; call pause to stop it where it is, or continue to keep waiting",
                    format::duration(wait)
                ));
                let tail = s.output_tail(OUTPUT_IN_ANSWER * 2);
                if !tail.trim().is_empty() {
                    a.push("latest output:".to_string());
                    a.push(format::output_tail(tail.trim_end(), OUTPUT_IN_ANSWER));
                }
                a.structured = json!({"state": "running"});
            }
        }
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

    async fn thread_list(&self, s: &Session) -> Result<Vec<dap_types::Thread>, ToolError> {
        let body = s.request("threads", json!({})).await?;
        let t: dap_types::ThreadsResponse = crate::transport::decode_body("threads", body)
            .map_err(|e| ToolError::failed(e.to_string()))?;
        Ok(t.threads)
    }

    async fn resume(&self, args: &DebugArgs) -> Result<ToolOutput, ToolError> {
        let op = args.op;
        let wait = wait_bound(args, self.default_wait())?;
        let s = self.live()?;
        let snap = s.snapshot();
        let RunState::Stopped(stop) = snap.state else {
            return Err(ToolError::refused(format!(
                "{} is already running; `{}` needs it stopped: call pause to stop it where it is",
                s.label(),
                op.name()
            )));
        };
        let thread = self.pick_thread(&s, args.thread_id, stop.thread_id).await?;
        let command = match op {
            Op::Continue => "continue",
            Op::StepOver => "next",
            Op::StepIn => "stepIn",
            _ => "stepOut",
        };
        let mut a = Answer::new(format!("debug {}  thread {thread}", op.name()));
        if let Err(e) = s.request(command, json!({"threadId": thread})).await {
            return self.died_during(&s, snap.generation, e, a).await;
        }
        s.mark_running(stop.stop_id);
        let settled = s.wait_settled(snap.generation, wait).await;
        self.settled_answer(&s, settled, wait, &mut a).await;
        a.done()
    }

    /// A request failed: if the adapter died under it, answer how the
    /// session ended (as a wait would have); otherwise the error.
    async fn died_during(
        &self,
        s: &Session,
        since: u64,
        e: ToolError,
        mut a: Answer,
    ) -> Result<ToolOutput, ToolError> {
        if !s.connection_closed() {
            return Err(e);
        }
        match s.wait_settled(since, Duration::from_secs(2)).await {
            Settled::Ended(end) => {
                self.settled_answer(s, Settled::Ended(end), Duration::ZERO, &mut a)
                    .await;
                a.done()
            }
            _ => Err(e),
        }
    }

    async fn pause(&self, args: &DebugArgs) -> Result<ToolOutput, ToolError> {
        let wait = wait_bound(args, self.default_wait())?;
        let s = self.live()?;
        let snap = s.snapshot();
        if let RunState::Stopped(stop) = &snap.state {
            let place = match stop.thread_id {
                Some(t) => self
                    .top_frame(&s, t)
                    .await
                    .map(|f| format::frame_place(self.workspace, &f).0),
                None => None,
            };
            let mut a = Answer::new("debug pause  already stopped; nothing to pause".to_string());
            a.push(format::stop_headline(stop, place.as_deref()));
            a.structured =
                json!({"state": "stopped", "already": true, "thread_id": stop.thread_id});
            return a.done();
        }
        let thread = self.pick_thread(&s, args.thread_id, None).await?;
        let mut a = Answer::new(format!("debug pause  thread {thread}"));
        if let Err(e) = s.request("pause", json!({"threadId": thread})).await {
            return self.died_during(&s, snap.generation, e, a).await;
        }
        let settled = s.wait_settled(snap.generation, wait).await;
        self.settled_answer(&s, settled, wait, &mut a).await;
        a.done()
    }

    async fn threads(&self) -> Result<ToolOutput, ToolError> {
        let s = self.live()?;
        let threads = self.thread_list(&s).await?;
        let stopped = match s.snapshot().state {
            RunState::Stopped(stop) => stop.thread_id,
            _ => None,
        };
        let mut a = Answer::new(format!(
            "debug threads  {}",
            tool_core::format::plural(threads.len(), "thread", "threads")
        ));
        for t in &threads {
            let mark = if Some(t.id) == stopped {
                "  (stopped here)"
            } else {
                ""
            };
            a.push(format!("{:>6}  {}{mark}", t.id, t.name));
        }
        a.structured = json!({"threads": threads.iter().map(|t| json!({"id": t.id, "name": t.name})).collect::<Vec<_>>()});
        a.done()
    }

    async fn stack(&self, args: &DebugArgs) -> Result<ToolOutput, ToolError> {
        let (s, stop) = self.stopped(Op::Stack)?;
        let thread = self.pick_thread(&s, args.thread_id, stop.thread_id).await?;
        let body = s
            .request(
                "stackTrace",
                json!({"threadId": thread, "startFrame": 0, "levels": FRAME_CAP + 1}),
            )
            .await?;
        let st: dap_types::StackTraceResponse = crate::transport::decode_body("stackTrace", body)
            .map_err(|e| ToolError::failed(e.to_string()))?;
        let total = st
            .total_frames
            .map(|t| t as usize)
            .unwrap_or(st.stack_frames.len())
            .max(st.stack_frames.len());
        let mut a = Answer::new(format!(
            "debug stack  thread {thread}, stop {} ({})",
            stop.stop_id, stop.reason
        ));
        let mut frames = Vec::new();
        for f in st.stack_frames.iter().take(FRAME_CAP) {
            let id = s.issue(stop.stop_id, HandleKind::Frame, f.id, Some(thread));
            let (place, at) = format::frame_place(self.workspace, f);
            a.push(format!("frame {id}  {place}"));
            if let Some((path, line)) = &at {
                if let Some(q) = quoted_line(path, *line) {
                    a.push(q);
                }
            }
            frames.push(json!({
                "frame_id": id,
                "function": f.name,
                "file": at.as_ref().map(|(p, _)| self.rel(p)),
                "line": at.as_ref().map(|(_, l)| *l),
            }));
        }
        if total > FRAME_CAP {
            a.push(capped_note(
                FRAME_CAP,
                total,
                "the innermost frames are shown; the rest are callers further out",
            ));
        }
        a.push("pass a frame id to scopes or evaluate (valid until the program moves)");
        a.structured = json!({"thread_id": thread, "stop": stop.stop_id, "frames": frames});
        a.done()
    }

    async fn scopes(&self, args: &DebugArgs) -> Result<ToolOutput, ToolError> {
        let frame_id = args
            .frame_id
            .ok_or_else(|| ToolError::bad_args("scopes needs `frame_id`: take one from stack"))?;
        let (s, stop) = self.stopped(Op::Scopes)?;
        let frame = s.resolve_handle(frame_id, HandleKind::Frame)?;
        let body = s
            .request("scopes", json!({"frameId": frame.dap_id}))
            .await?;
        let sc: dap_types::ScopesResponse = crate::transport::decode_body("scopes", body)
            .map_err(|e| ToolError::failed(e.to_string()))?;
        let mut a = Answer::new(format!("debug scopes  frame {frame_id}"));
        let mut out = Vec::new();
        for scope in &sc.scopes {
            if scope.variables_reference == 0 {
                a.push(format!("{}  (empty)", scope.name));
                continue;
            }
            let r = s.issue(
                stop.stop_id,
                HandleKind::Variables,
                scope.variables_reference,
                frame.thread_id,
            );
            let count = scope
                .named_variables
                .map(|n| {
                    format!(
                        ", {}",
                        tool_core::format::plural(n as usize, "variable", "variables")
                    )
                })
                .unwrap_or_default();
            let expensive = if scope.expensive { ", expensive" } else { "" };
            a.push(format!("{}  reference {r}{count}{expensive}", scope.name));
            out.push(json!({"name": scope.name, "reference": r}));
        }
        a.push("pass a reference to variables");
        a.structured = json!({"scopes": out});
        a.done()
    }

    async fn variables(&self, args: &DebugArgs) -> Result<ToolOutput, ToolError> {
        let reference = args.reference.ok_or_else(|| {
            ToolError::bad_args(
                "variables needs `reference`: take one from scopes, variables or evaluate",
            )
        })?;
        let (s, stop) = self.stopped(Op::Variables)?;
        let r = s.resolve_handle(reference, HandleKind::Variables)?;
        let body = s
            .request("variables", json!({"variablesReference": r.dap_id}))
            .await?;
        let vars: dap_types::VariablesResponse = crate::transport::decode_body("variables", body)
            .map_err(|e| ToolError::failed(e.to_string()))?;
        let total = vars.variables.len();
        let mut a = Answer::new(format!(
            "debug variables  reference {reference} ({})",
            tool_core::format::plural(total, "variable", "variables")
        ));
        let mut out = Vec::new();
        for v in vars.variables.iter().take(VARIABLE_CAP) {
            let value = cap_chars(v.value.trim(), VALUE_CAP).into_owned();
            let ty = v
                .type_
                .as_deref()
                .filter(|t| !t.is_empty())
                .map(|t| format!(" ({t})"))
                .unwrap_or_default();
            let child = if v.variables_reference > 0 {
                let id = s.issue(
                    stop.stop_id,
                    HandleKind::Variables,
                    v.variables_reference,
                    r.thread_id,
                );
                out.push(json!({"name": v.name, "value": value, "type": v.type_, "reference": id}));
                format!("  [reference {id}]")
            } else {
                out.push(json!({"name": v.name, "value": value, "type": v.type_}));
                String::new()
            };
            a.push(format!("{}{ty} = {value}{child}", v.name));
        }
        if total > VARIABLE_CAP {
            a.push(capped_note(
                VARIABLE_CAP,
                total,
                "evaluate a narrower expression (an element, a field) to see the rest",
            ));
        }
        a.structured = json!({"variables": out, "total": total});
        a.done()
    }

    async fn evaluate(&self, args: &DebugArgs) -> Result<ToolOutput, ToolError> {
        let expression = args
            .expression
            .as_deref()
            .filter(|e| !e.trim().is_empty())
            .ok_or_else(|| ToolError::bad_args("evaluate needs `expression`"))?;
        let (s, stop) = self.stopped(Op::Evaluate)?;
        let (frame_dap, frame_label) = match args.frame_id {
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
        let body = s
            .request(
                "evaluate",
                json!({"expression": expression, "frameId": frame_dap, "context": s.evaluate_context()}),
            )
            .await
            .map_err(|e| match e {
                ToolError::Failed(m) => ToolError::failed(format!(
                    "evaluating `{expression}` failed: {m}; check the name is in scope in that frame (scopes / variables list what is)"
                )),
                other => other,
            })?;
        let ev: dap_types::EvaluateResponse = crate::transport::decode_body("evaluate", body)
            .map_err(|e| ToolError::failed(e.to_string()))?;
        let value = cap_chars(ev.result.trim(), VALUE_CAP).into_owned();
        let ty = ev
            .type_
            .as_deref()
            .filter(|t| !t.is_empty())
            .map(|t| format!(" ({t})"))
            .unwrap_or_default();
        let mut a = Answer::new(format!("debug evaluate  `{expression}` in {frame_label}"));
        let reference = if ev.variables_reference > 0 {
            Some(s.issue(
                stop.stop_id,
                HandleKind::Variables,
                ev.variables_reference,
                stop.thread_id,
            ))
        } else {
            None
        };
        let child = reference
            .map(|r| format!("  [reference {r}]"))
            .unwrap_or_default();
        a.push(format!("{value}{ty}{child}"));
        a.structured = json!({"result": value, "type": ev.type_, "reference": reference});
        a.done()
    }

    fn output(&self) -> Result<ToolOutput, ToolError> {
        let Some(s) = &self.conversation.session else {
            return Err(ToolError::refused(
                "no debug session has run in this conversation; launch a program first",
            ));
        };
        let chunk = s.take_new_output();
        let mut a = Answer::new(format!("debug output  {}", s.label()));
        if chunk.dropped > 0 {
            a.push(format!(
                "… {} bytes were dropped before this (the buffer keeps the latest 256 KiB)",
                chunk.dropped
            ));
        }
        if chunk.text.is_empty() {
            a.push("(no new output since the last call)");
        } else {
            a.push(format::output_tail(
                chunk.text.trim_end_matches('\n'),
                OUTPUT_PER_CALL,
            ));
        }
        if let RunState::Ended(e) = s.snapshot().state {
            a.push(format!("(session ended: {})", e.describe()));
        }
        a.structured =
            json!({"text": chunk.text, "cursor": chunk.cursor, "dropped": chunk.dropped});
        a.done()
    }

    async fn terminate(&mut self) -> Result<ToolOutput, ToolError> {
        let Some(s) = self.conversation.session.clone() else {
            return Err(ToolError::refused("no debug session to terminate"));
        };
        let before = s.snapshot().state;
        s.shutdown(Ending::Terminated).await;
        let left = s.live_processes();
        let mut a = Answer::new(format!("debug terminate  {}", s.label()));
        match before {
            RunState::Ended(e) => a.push(format!(
                "the session had already ended ({}); its processes are gone",
                e.describe()
            )),
            _ => a.push(
                "terminated: the program, the adapter and every process they started are gone",
            ),
        }
        if !left.is_empty() {
            a.push(format!(
                "warning: {} still alive: {left:?}",
                tool_core::format::plural(left.len(), "process is", "processes are")
            ));
        }
        a.structured = json!({"left": left});
        a.done()
    }
}

/// Shallow merge of `extra`'s keys over `base`.
fn merge(base: &mut Value, extra: &Value) {
    if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            b.insert(k.clone(), v.clone());
        }
    }
}
