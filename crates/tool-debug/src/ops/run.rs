//! The ops that start, move and end the program: `launch`, `attach`,
//! `continue`, the steps, `pause` and `terminate`. Each that waits answers
//! with where the program settled ([`Outcome`]).

use super::info::breakpoint_line;
use super::results::{
    AlreadyStopped, Detached, LocalsPreview, Outcome, RunResult, TerminateResult, OUTPUT_IN_ANSWER,
};
use super::{done, relative_to, wait_bound, OpContext};
use crate::adapters::{
    self, python_tests, rust_tests, AttachTarget, LaunchInput, LaunchTarget, ProgramLaunch,
    RequestArguments,
};
use crate::args::{DebugArgs, Op};
use crate::catalog::{AdapterSpec, ResolvedAdapter};
use crate::format;
use crate::session::{Ending, LaunchPlan, RunState, Session, Settled};
use dap_types::requests as req;
use serde_json::{json, Value};

/// How long a `pause` waits for its stop before asking once more.
const PAUSE_RESENT_AFTER: std::time::Duration = std::time::Duration::from_secs(5);
use std::path::Path;
use std::time::Duration;
use tool_core::{ToolError, ToolOutput};

impl OpContext<'_> {
    pub(super) async fn launch(&mut self, args: &DebugArgs) -> Result<ToolOutput, ToolError> {
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
        let previous_ending =
            self.conversation
                .session
                .take()
                .and_then(|s| match s.snapshot().state {
                    RunState::Ended(e) => Some(e.describe()),
                    _ => None,
                });
        let plan = if op == Op::Attach {
            self.attach_plan(args).await?
        } else {
            let plan = self.launch_plan(args).await?;
            self.conversation.last_launch = Some(args.clone());
            plan
        };
        let how = match plan.connect_to {
            // Connected straight to the debuggee's own debug server.
            Some(port) => format!("connected to 127.0.0.1:{port}"),
            None => format!(
                "`{}`",
                plan.adapter
                    .command
                    .iter()
                    .map(|a| a.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
        };
        let head = format!(
            "{}  {} under {} ({how})",
            op.name(),
            plan.label,
            plan.adapter.spec.id,
        );
        let notes: Vec<String> = plan
            .adapter
            .notes
            .iter()
            .map(|n| relative_to(n, self.workspace.root()))
            .collect();
        let mut limits = self.limits();
        if op == Op::Attach {
            // Attaching waits for the debuggee, not for a build: the wait
            // bound is the handshake's too.
            limits.handshake = limits.handshake.min(wait);
        }
        let started = std::time::Instant::now();
        let (session, report) = Session::start(plan, limits).await.map_err(|e| match e {
            ToolError::Refused(m) => ToolError::refused(relative_to(&m, self.workspace.root())),
            other => other,
        })?;
        self.conversation.session = Some(session.clone());
        self.supervisor
            .record_announced_filters(session.adapter_id(), session.exception_filters());
        let mut breakpoints = Vec::new();
        for (file, statuses) in &report.breakpoints {
            let rel = self.rel(file);
            breakpoints.extend(
                statuses
                    .iter()
                    .map(|b| breakpoint_line(&rel, file, b, &|p| self.rel(p))),
            );
        }
        // An attach is bounded as a whole: its handshake (debugpy injects
        // itself into a process by pid) counts against the wait.
        let settle_within = match op {
            Op::Attach => wait.saturating_sub(started.elapsed()),
            _ => wait,
        };
        let settled = session.wait_settled(0, settle_within).await;
        if let (Op::Attach, Some(port)) = (op, args.port) {
            session.find_served_debuggee(port).await;
        }
        done(RunResult {
            head,
            previous_ending,
            notes,
            breakpoints,
            outcome: self.outcome(&session, settled, wait, false).await,
        })
    }

    /// `restart`: the last launch again, with the breakpoints set now. A
    /// live session is ended first; an attached one is refused (it was
    /// not ours to start).
    pub(super) async fn restart(&mut self, args: &DebugArgs) -> Result<ToolOutput, ToolError> {
        wait_bound(args, self.default_wait())?;
        let last = self.conversation.last_launch.clone().ok_or_else(|| {
            ToolError::refused(
                "restart launches the last program again, and nothing was launched in this conversation; launch one first",
            )
        })?;
        if let Some(s) = self.conversation.session.clone() {
            if s.attached() && !s.is_ended() {
                return Err(ToolError::refused(format!(
                    "restart launches the last program again, and this session attached to {} (not ours to start); terminate it, then attach again",
                    s.label()
                )));
            }
            s.shutdown(Ending::Terminated).await;
        }
        let again = DebugArgs {
            op: Op::Restart,
            timeout_seconds: args.timeout_seconds.or(last.timeout_seconds),
            ..last
        };
        self.launch(&again).await
    }

    async fn launch_plan(&self, args: &DebugArgs) -> Result<LaunchPlan, ToolError> {
        if args.module.is_some() {
            return self.module_plan(args).await;
        }
        // A pytest node id names its file: it is the program.
        let node_file = args
            .test
            .as_deref()
            .and_then(|t| python_tests::split_node_id(t).0);
        let program = args.program.as_deref().or(node_file).ok_or_else(|| {
            ToolError::bad_args(
                "launch needs `program`: the file to run (a .py, .go, .js or .java file, a Go package folder, or a compiled executable), relative to the workspace root; or `module` (Python's `python -m MODULE`), or `test` as a pytest node id (tests/test_x.py::test_y)",
            )
        })?;
        let mut path = self.workspace.resolve(program)?;
        if !path.exists() {
            // A Java class name (`com.example.Main`): the class a build
            // compiled.
            if let Some(class) = adapters::java::class_file(self.workspace.root(), program) {
                path = class;
            }
        }
        if !path.exists() {
            return Err(ToolError::bad_args(format!(
                "program `{program}` does not exist in the workspace; check the path (relative to the workspace root), or build it first"
            )));
        }
        if let (Some(given), Some(file)) = (args.program.as_deref(), node_file) {
            if self.workspace.resolve(file)? != path {
                return Err(ToolError::bad_args(format!(
                    "`test` names the file {file} and `program` is {given}; leave `program` out (the node id names the file), or pass only the test's name"
                )));
            }
        }
        let catalog = self.supervisor.catalog();
        let spec = match args.adapter.as_deref() {
            Some(id) => self.named_adapter(id)?,
            None => catalog.route(&path).cloned().ok_or_else(|| {
                let mut why = format!(
                    "cannot tell which debugger runs `{program}`: it is not a .py, .go, .js, .mjs, .cjs, .dart or .java file, a Go package or a compiled executable; pass `adapter` (one of {}), or for C/C++ launch the executable built with -g",
                    catalog.ids()
                );
                for notice in catalog.untrusted_for(None, &path) {
                    why.push_str(&format!("\n{notice}"));
                }
                ToolError::bad_args(why)
            })?,
        };
        let start = if path.is_dir() {
            path.clone()
        } else {
            path.parent().unwrap_or(self.workspace.root()).to_path_buf()
        };
        let launch = ProgramLaunch {
            adapter_id: &spec.id,
            program,
            path: &path,
            mode: args.mode,
            test: args.test.as_deref(),
        };
        let (go, target) = match spec
            .kind
            .adapter()
            .launch_target(&launch)
            .map_err(ToolError::bad_args)?
        {
            LaunchTarget::RustTest => return self.rust_test_plan(args, spec, &path, program).await,
            LaunchTarget::Program { go } => (go, RunTarget::Program),
            LaunchTarget::PythonTest(name) => (None, RunTarget::Test(name)),
            LaunchTarget::NamedTest { name, label } => (
                None,
                RunTarget::Named {
                    label,
                    named_test: Some(name),
                },
            ),
        };
        self.finish_launch(args, spec, path, start, go, target)
            .await
    }

    /// `launch` with `module`: `python -m MODULE ARGS` under debugpy, from
    /// `cwd` (default: the workspace root).
    async fn module_plan(&self, args: &DebugArgs) -> Result<LaunchPlan, ToolError> {
        let module = args.module.as_deref().unwrap_or_default();
        let clash = [
            (args.program.is_some(), "`program`"),
            (args.test.is_some(), "`test`"),
            (args.mode.is_some(), "`mode`"),
        ];
        if let Some((_, name)) = clash.iter().find(|(given, _)| *given) {
            return Err(ToolError::bad_args(format!(
                "`module` runs python -m {module} with `args`, so {name} does not fit with it; leave {name} out (a pytest selection goes in args: [\"tests/test_x.py\", \"-k\", \"mean\"])"
            )));
        }
        let mut run = python_tests::module_run(module).map_err(ToolError::bad_args)?;
        for arg in args.args.iter().flatten() {
            run.label.push(' ');
            run.label.push_str(arg);
        }
        run.label = tool_core::format::cap_chars(&run.label, 120).into_owned();
        let spec = match args.adapter.as_deref() {
            Some(id) => self.named_adapter(id)?,
            None => self
                .supervisor
                .catalog()
                .specs()
                .iter()
                .find(|s| s.kind.adapter().runs_python())
                .cloned()
                .ok_or_else(|| {
                    ToolError::unavailable(
                        "`module` runs under debugpy, which is disabled here; call debug adapters",
                    )
                })?,
        };
        if !spec.kind.adapter().runs_python() {
            return Err(ToolError::bad_args(format!(
                "`module` runs python -m {module} under debugpy, and the {} adapter is not debugpy; leave `adapter` out",
                spec.id
            )));
        }
        let start = match args.cwd.as_deref() {
            Some(c) => self.workspace.resolve_existing(c)?,
            None => self.workspace.root().to_path_buf(),
        };
        self.finish_launch(
            args,
            spec,
            start.clone(),
            start,
            None,
            RunTarget::Module(run),
        )
        .await
    }

    /// `launch` of a Rust test: `test` in `program`, a file under tests/
    /// or src/. The test binary is built and the test found in it before
    /// lldb starts; lldb then runs that one test from the package root.
    async fn rust_test_plan(
        &self,
        args: &DebugArgs,
        spec: AdapterSpec,
        file: &Path,
        program: &str,
    ) -> Result<LaunchPlan, ToolError> {
        let test = args.test.as_deref().unwrap_or_default().trim();
        if test.is_empty() || test.starts_with('-') || test.contains(char::is_whitespace) {
            return Err(ToolError::bad_args(format!(
                "`test` is `{test}`, not a Rust test name (like mean_of_six, or tests::mean_of_one)"
            )));
        }
        if args.mode.is_some() {
            return Err(ToolError::bad_args(format!(
                "`mode` is for Go programs under delve, and `{program}` is a Rust test file run under lldb; leave it out"
            )));
        }
        let root = self.workspace.root().to_path_buf();
        let package = rust_tests::package_root(file, &root).ok_or_else(|| {
            ToolError::bad_args(format!(
                "`{program}` is in no Cargo package (no Cargo.toml with [package] from its folder up to the workspace root)"
            ))
        })?;
        let manifest = std::fs::read_to_string(package.join("Cargo.toml")).unwrap_or_default();
        let name = rust_tests::package_name(&manifest).unwrap_or_default();
        let target = rust_tests::target_of(file, &package, &name).map_err(|why| {
            ToolError::bad_args(format!("cannot run test `{test}` of {program}: {why}"))
        })?;
        let catalog = self.supervisor.catalog().clone();
        let cargo = catalog.which("cargo").ok_or_else(|| {
            ToolError::unavailable(
                "a Rust test is built with cargo, and cargo is not on PATH; install the Rust toolchain (rustup)",
            )
        })?;
        let bound = self.limits().handshake;
        let (dir, build_target) = (package.clone(), target.clone());
        let built = tokio::task::spawn_blocking(move || {
            let exe = rust_tests::build(&cargo, catalog.search_path(), &dir, &build_target, bound)?;
            let tests = rust_tests::list_tests(&exe, &dir, bound)?;
            Ok::<_, String>((exe, tests))
        })
        .await
        .map_err(|e| ToolError::failed(format!("the test build stopped: {e}")))?;
        let (exe, tests) = built.map_err(|why| ToolError::failed(relative_to(&why, &root)))?;
        let full = rust_tests::pick_test(test, &tests).map_err(|why| {
            ToolError::bad_args(format!(
                "cannot run test `{test}` of {program} ({}): {why}",
                self.rel(&exe)
            ))
        })?;
        let run = rust_tests::test_run(exe, &target, full);
        let mut run_args = args.clone();
        run_args.args = Some(
            run.leading_args
                .iter()
                .chain(args.args.iter().flatten())
                .cloned()
                .collect(),
        );
        // As `cargo test` runs a test: CARGO_MANIFEST_DIR set.
        let mut env = args.env.clone().unwrap_or_default();
        env.entry("CARGO_MANIFEST_DIR".into())
            .or_insert_with(|| package.display().to_string());
        run_args.env = Some(env);
        self.finish_launch(
            &run_args,
            spec,
            run.executable.clone(),
            package,
            None,
            RunTarget::Named {
                label: run.label,
                named_test: None,
            },
        )
        .await
    }

    /// What a Python test run is, once the interpreter is known: pytest
    /// where it imports, else unittest.
    async fn python_test(
        &self,
        adapter: &ResolvedAdapter,
        file: &Path,
        cwd: &Path,
        name: &str,
    ) -> Result<python_tests::PythonModule, ToolError> {
        let source = std::fs::read_to_string(file).map_err(|e| {
            ToolError::bad_args(format!("cannot read the test file {}: {e}", self.rel(file)))
        })?;
        let python = adapter
            .debuggee_python
            .clone()
            .unwrap_or_else(|| "python3".into());
        let catalog = self.supervisor.catalog().clone();
        let probe_python = python.clone();
        let pytest = tokio::task::spawn_blocking(move || {
            adapters::debugpy::pytest_version(&catalog, &probe_python)
        })
        .await
        .ok()
        .flatten();
        let runner = match pytest {
            Some(_) => python_tests::Runner::Pytest,
            None if python_tests::imports_pytest(&source) => {
                return Err(ToolError::unavailable(format!(
                    "{} imports pytest, and the project interpreter {} cannot import it; install it there (`{} -m pip install pytest`)",
                    self.rel(file),
                    relative_to(&python.display().to_string(), self.workspace.root()),
                    relative_to(&python.display().to_string(), self.workspace.root()),
                )))
            }
            None => python_tests::Runner::Unittest,
        };
        python_tests::test_run(runner, file, cwd, name, &source).map_err(|why| {
            ToolError::bad_args(format!(
                "cannot run test `{name}` of {}: {why}",
                self.rel(file)
            ))
        })
    }

    /// The part of a launch every program shares: stdin, cwd, the adapter
    /// resolved, the launch arguments.
    async fn finish_launch(
        &self,
        args: &DebugArgs,
        spec: AdapterSpec,
        path: std::path::PathBuf,
        start: std::path::PathBuf,
        go: Option<adapters::delve::GoLaunch>,
        target: RunTarget,
    ) -> Result<LaunchPlan, ToolError> {
        let catalog = self.supervisor.catalog();
        let adapter = spec.kind.adapter();
        let stdin_route = match (&args.stdin, adapter.stdin_route()) {
            (None, _) => None,
            (Some(_), Some(route)) => Some(route),
            (Some(_), None) => {
                return Err(ToolError::refused(format!(
                    "the {} adapter cannot give the program standard input here (debugpy, lldb and delve can); leave `stdin` out, or have the program read a file",
                    spec.id
                )))
            }
        };
        let cwd = match args.cwd.as_deref() {
            None => None,
            Some(c) => {
                let dir = self.workspace.resolve_existing(c)?;
                if !dir.is_dir() {
                    return Err(ToolError::bad_args(format!(
                        "cwd `{c}` is not a folder in the workspace"
                    )));
                }
                Some(dir)
            }
        };
        let mut resolved = self.resolve_adapter(&spec, &start).await?;
        // A project entry set aside that this launch would have used.
        let mut set_aside = catalog.untrusted_for(Some(&spec.id), &path);
        if args.adapter.is_none() {
            set_aside.extend(catalog.untrusted_for(None, &path));
        }
        set_aside.dedup();
        resolved.notes.extend(set_aside);
        let mut held_stdin = None;
        let stdin = match (&args.stdin, stdin_route) {
            (Some(text), Some(adapters::StdinRoute::File)) => {
                let dir = adapters::scratch_dir().map_err(|e| {
                    ToolError::failed(format!("cannot make a scratch folder for stdin: {e}"))
                })?;
                let file = dir.join("stdin");
                std::fs::write(&file, text).map_err(|e| {
                    ToolError::failed(format!("cannot write stdin to {}: {e}", file.display()))
                })?;
                Some((dir, file))
            }
            (None, _) if adapter.holds_stdin_open() => {
                // A read with no input given waits, and is said to.
                let dir = adapters::scratch_dir().map_err(|e| {
                    ToolError::failed(format!("cannot make a scratch folder for stdin: {e}"))
                })?;
                let fifo =
                    tool_core::process::HeldFifo::create(&dir.join("stdin")).map_err(|e| {
                        let _ = std::fs::remove_dir_all(&dir);
                        ToolError::failed(format!("cannot make the program's stdin pipe: {e}"))
                    })?;
                held_stdin = Some(std::sync::Arc::new(fifo));
                Some((dir.clone(), dir.join("stdin")))
            }
            _ => None,
        };
        let run_cwd = cwd
            .as_deref()
            .unwrap_or(&resolved.project_dir)
            .to_path_buf();
        let (named, named_test) = match &target {
            RunTarget::Named { label, named_test } => (Some(label.clone()), named_test.clone()),
            _ => (None, None),
        };
        let python = match target {
            RunTarget::Program | RunTarget::Named { .. } => None,
            RunTarget::Module(m) => Some(m),
            RunTarget::Test(name) => {
                Some(self.python_test(&resolved, &path, &run_cwd, &name).await?)
            }
        };
        let label = match (&python, named) {
            (Some(m), _) => m.label.clone(),
            (None, Some(label)) => label,
            (None, None) => self.rel(&path),
        };
        let env = args.env.clone().unwrap_or_default();
        let made = adapters::launch_arguments(&LaunchInput {
            adapter: &resolved,
            program: &path,
            args: args.args.clone().unwrap_or_default(),
            search_path: catalog.search_path(),
            cwd: &run_cwd,
            env: &env,
            stdin_file: stdin.as_ref().map(|(_, f)| f.as_path()),
            go,
            python,
            named_test: named_test.as_deref(),
        });
        let mut request = match made {
            Ok(r) => r,
            Err(e) => {
                if let Some((dir, _)) = &stdin {
                    let _ = std::fs::remove_dir_all(dir);
                }
                return Err(e.into());
            }
        };
        if let Some((dir, _)) = stdin {
            // A stdin file is taken by lldb and debugpy, which use no other
            // scratch folder.
            request.scratch_dir = Some(dir);
        }
        let mut plan = self.plan(resolved, "launch", label, request);
        if stdin_route == Some(adapters::StdinRoute::AdapterStdin) {
            plan.adapter_stdin = args.stdin.clone();
        }
        plan.held_stdin = held_stdin;
        plan.default_functions = adapter.default_functions(&path);
        Ok(plan)
    }

    async fn attach_plan(&self, args: &DebugArgs) -> Result<LaunchPlan, ToolError> {
        let target = match (args.port, args.pid) {
            (Some(port), None) => AttachTarget::Port(port),
            (None, Some(pid)) => AttachTarget::Pid(pid),
            (Some(_), Some(_)) => {
                return Err(ToolError::bad_args(
                    "attach takes `port` or `pid`, not both: a debug server's port, or the id of a running process",
                ))
            }
            (None, None) => {
                return Err(ToolError::bad_args(
                    "attach needs `port` (the TCP port at 127.0.0.1 the debuggee's debug server listens on) or `pid` (a running process)",
                ))
            }
        };
        if let AttachTarget::Pid(pid) = target {
            if pid == 0 || !tool_core::process::pid_alive(pid) {
                return Err(ToolError::bad_args(format!(
                    "no running process has pid {pid}; check it with `ps`"
                )));
            }
        }
        let catalog = self.supervisor.catalog();
        let root = self.workspace.root().to_path_buf();
        let spec = match (args.adapter.as_deref(), target) {
            (Some(id), _) => self.named_adapter(id)?,
            (None, AttachTarget::Pid(pid)) => catalog.route_process(pid)
                .cloned()
                .ok_or_else(|| {
                    ToolError::bad_args(format!(
                        "cannot tell which debugger attaches to pid {pid} (not a Python interpreter, a Go program or a native executable); pass `adapter` (one of {})",
                        catalog.ids()
                    ))
                })?,
            (None, AttachTarget::Port(_)) => {
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
        if let AttachTarget::Port(port) = target {
            crate::session::refuse_closed_port(port).await?;
        }
        let adapter = spec.kind.adapter();
        tokio::task::spawn_blocking(move || adapter.check_attach(target))
            .await
            .unwrap_or_else(|e| Err(e.to_string()))
            .map_err(ToolError::refused)?;
        let resolved = self.resolve_adapter(&spec, &root).await?;
        let request = adapters::attach_arguments(&resolved, target).map_err(ToolError::refused)?;
        let label = match target {
            AttachTarget::Port(port) => format!("port {port}"),
            AttachTarget::Pid(pid) => format!("pid {pid}"),
        };
        let mut plan = self.plan(resolved, "attach", label, request);
        if let AttachTarget::Pid(pid) = target {
            plan.debuggee_pid = Some(pid);
        }
        Ok(plan)
    }

    fn named_adapter(&self, id: &str) -> Result<AdapterSpec, ToolError> {
        let catalog = self.supervisor.catalog();
        catalog
            .spec(id)
            .cloned()
            .ok_or_else(|| match catalog.why_absent(id) {
                Some(why) => ToolError::refused(format!(
                    "{}; known: {}",
                    relative_to(&why, self.workspace.root()),
                    catalog.ids()
                )),
                None => {
                    ToolError::bad_args(format!("unknown adapter `{id}`; known: {}", catalog.ids()))
                }
            })
    }

    fn plan(
        &self,
        adapter: ResolvedAdapter,
        request: &'static str,
        label: String,
        arguments: RequestArguments,
    ) -> LaunchPlan {
        LaunchPlan {
            label,
            adapter,
            request,
            arguments: arguments.arguments,
            breakpoints: self.conversation.breakpoints.clone(),
            function_breakpoints: self.conversation.function_breakpoints.clone(),
            default_functions: Vec::new(),
            exception_filters: self.conversation.exception_filters.clone(),
            connect_to: arguments.connect_to,
            scratch_dir: arguments.scratch_dir,
            debuggee_pid: None,
            adapter_stdin: None,
            held_stdin: None,
            env: self.supervisor.config().env.clone(),
            search_path: self.supervisor.catalog().search_path().clone(),
        }
    }

    async fn resolve_adapter(
        &self,
        spec: &AdapterSpec,
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
                let place = self.stop_place(s, &stop).await;
                super::results::stop_headline(&stop, place.as_deref())
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

    /// Where a wait ended, with the latest output when that helps.
    async fn outcome(
        &self,
        s: &Session,
        settled: Settled,
        wait: Duration,
        after_pause: bool,
    ) -> Outcome {
        match settled {
            Settled::Stopped(stop) => {
                let mut stop = self.explain(s, &stop, after_pause).await;
                if stop.thread_id.is_none() {
                    // delve names no thread in a pause: the first real one
                    // is where the program is.
                    stop.thread_id = self.first_thread(s).await;
                }
                let (frame, outside) = match stop.thread_id {
                    Some(t) if stop.reason == "exception" => {
                        let (frame, above, _) = self.first_user_frame(s, t).await;
                        (frame, above)
                    }
                    Some(t) => (self.top_frame(s, t).await, 0),
                    None => (None, 0),
                };
                let (place, at) = frame
                    .as_ref()
                    .map(|f| format::frame_place(self.workspace, f))
                    .map_or((None, None), |(mut p, at)| {
                        if outside > 0 {
                            p.push_str(&format!(
                                " (below {}; stack shows all)",
                                tool_core::format::plural(
                                    outside,
                                    "frame outside the workspace",
                                    "frames outside the workspace"
                                )
                            ));
                        }
                        (Some(p), at)
                    });
                let locals = match &frame {
                    Some(f) => self
                        .frame_locals(s, f.id)
                        .await
                        .map(|(vars, total)| LocalsPreview::new(&vars, total))
                        .unwrap_or_default(),
                    None => LocalsPreview::default(),
                };
                Outcome::Stopped {
                    locals,
                    stop: stop.stop_id,
                    reason: stop.reason.clone(),
                    thread_id: stop.thread_id,
                    function: frame.as_ref().map(|f| format::function_name(&f.name)),
                    file: at.as_ref().map(|(p, _)| self.rel(p)),
                    line: at.as_ref().map(|(_, l)| *l),
                    source: at.as_ref().and_then(|(p, l)| format::source_line(p, *l)),
                    what: stop.words.clone(),
                    info: Box::new(stop),
                    place,
                }
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
                Outcome::Ended {
                    exit_code: match &end {
                        Ending::Exited { code } => *code,
                        _ => None,
                    },
                    why: end.describe(),
                    output: s.output_tail(OUTPUT_IN_ANSWER * 2),
                }
            }
            Settled::StillRunning => Outcome::Running {
                // Only the debuggee's own process tree: a stdio adapter
                // reads its stdin too.
                waiting_for_input: s.debuggee_pid().is_some_and(crate::waiting::reading_stdin),
                waited: wait,
                output: s.output_tail(OUTPUT_IN_ANSWER * 2),
            },
        }
    }

    /// The first thread the adapter lists (placeholders left out).
    async fn first_thread(&self, s: &Session) -> Option<u64> {
        self.thread_list(s)
            .await
            .ok()
            .and_then(|l| l.first().map(|t| t.id))
    }

    /// Where an exception, panic or signal hit the program's own code: the
    /// first frame whose source is in the workspace (the top one when none
    /// is), how many frames above it are not (the runtime's, a
    /// library's), and whether it is in the workspace.
    pub(super) async fn first_user_frame(
        &self,
        s: &Session,
        thread: u64,
    ) -> (Option<dap_types::StackFrame>, usize, bool) {
        const LOOK_AT: u64 = 30;
        let frames = match s
            .typed::<req::StackTrace>(&dap_types::StackTraceArguments {
                thread_id: thread,
                start_frame: Some(0),
                levels: Some(LOOK_AT),
                format: None,
            })
            .await
        {
            Ok(st) => st.stack_frames,
            Err(_) => return (None, 0, false),
        };
        let in_workspace = |f: &dap_types::StackFrame| {
            f.source
                .as_ref()
                .and_then(|src| src.path.as_deref())
                .and_then(|p| std::path::Path::new(p).canonicalize().ok())
                .is_some_and(|p| self.workspace.contains(&p))
        };
        match frames.iter().position(in_workspace) {
            Some(i) => (frames.into_iter().nth(i), i, true),
            None => (frames.into_iter().next(), 0, false),
        }
    }

    pub(super) async fn resume(&self, args: &DebugArgs) -> Result<ToolOutput, ToolError> {
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
        let sent = match op {
            Op::Continue => s
                .typed::<req::Continue>(&dap_types::ContinueArguments {
                    thread_id: thread,
                    single_thread: None,
                })
                .await
                .map(drop),
            Op::StepOver => {
                s.typed::<req::Next>(&dap_types::NextArguments {
                    thread_id: thread,
                    single_thread: None,
                    granularity: None,
                })
                .await
            }
            Op::StepIn => {
                s.typed::<req::StepIn>(&dap_types::StepInArguments {
                    thread_id: thread,
                    single_thread: None,
                    target_id: None,
                    granularity: None,
                })
                .await
            }
            _ => {
                s.typed::<req::StepOut>(&dap_types::StepOutArguments {
                    thread_id: thread,
                    single_thread: None,
                    granularity: None,
                })
                .await
            }
        };
        let head = format!("{}  thread {thread}", op.name());
        if let Err(e) = sent {
            return self.died_during(&s, snap.generation, e, head).await;
        }
        s.mark_running(stop.stop_id);
        let settled = s.wait_settled(snap.generation, wait).await;
        done(self.run_result(head, self.outcome(&s, settled, wait, false).await))
    }

    fn run_result(&self, head: String, outcome: Outcome) -> RunResult {
        RunResult {
            head,
            previous_ending: None,
            notes: Vec::new(),
            breakpoints: Vec::new(),
            outcome,
        }
    }

    /// A request failed: if the adapter died under it, answer how the
    /// session ended (as a wait would have); otherwise the error.
    async fn died_during(
        &self,
        s: &Session,
        since: u64,
        e: ToolError,
        head: String,
    ) -> Result<ToolOutput, ToolError> {
        if !s.connection_closed() {
            return Err(e);
        }
        match s.wait_settled(since, Duration::from_secs(2)).await {
            Settled::Ended(end) => {
                let outcome = self
                    .outcome(s, Settled::Ended(end), Duration::ZERO, false)
                    .await;
                done(self.run_result(head, outcome))
            }
            _ => Err(e),
        }
    }

    pub(super) async fn pause(&self, args: &DebugArgs) -> Result<ToolOutput, ToolError> {
        let wait = wait_bound(args, self.default_wait())?;
        let s = self.live()?;
        let snap = s.snapshot();
        if let RunState::Stopped(stop) = &snap.state {
            let mut stop = stop.clone();
            if stop.thread_id.is_none() {
                // delve names no thread in a pause: name the first real one.
                stop.thread_id = self.first_thread(&s).await;
            }
            return done(AlreadyStopped {
                state: "stopped",
                already: true,
                thread_id: stop.thread_id,
                place: self.stop_place(&s, &stop).await,
                info: stop,
            });
        }
        let thread = self.pause_thread(&s, args.thread_id).await?;
        // delve's placeholder thread (-1) stands for the whole program: it
        // is no thread the model could name, so the answer does not show it.
        let head = if thread < 0 {
            "pause  the whole program".to_string()
        } else {
            format!("pause  thread {thread}")
        };
        let sent = s.request("pause", json!({ "threadId": thread })).await;
        if let Err(e) = sent {
            return self.died_during(&s, snap.generation, e, head).await;
        }
        // lldb-vscode attached to a gdb-remote server can lose an interrupt
        // that arrives while it settles the attach: a pause without a stop
        // after a while is sent once more (a stop that comes meanwhile ends
        // the wait as usual).
        let first = wait.min(PAUSE_RESENT_AFTER);
        let mut settled = s.wait_settled(snap.generation, first).await;
        if matches!(settled, Settled::StillRunning) && wait > first {
            // Its answer does not matter: a stop that raced it, or the
            // adapter's end, is what the wait below reports.
            let _ = s.request("pause", json!({ "threadId": thread })).await;
            settled = s
                .wait_settled(snap.generation, wait.checked_sub(first).unwrap())
                .await;
        }
        done(self.run_result(head, self.outcome(&s, settled, wait, true).await))
    }

    /// The thread `pause` names: the given one, else the first real one.
    /// While a Go program runs delve lists only its placeholder thread -1,
    /// and pauses the whole program whatever thread is named: then the
    /// placeholder is what it is sent.
    async fn pause_thread(&self, s: &Session, given: Option<u64>) -> Result<i64, ToolError> {
        if given.is_some() {
            return Ok(self.pick_thread(s, given, None).await? as i64);
        }
        let body = s.request("threads", json!({})).await?;
        let listed: Vec<i64> = body
            .get("threads")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| t.get("id").and_then(Value::as_i64))
            .collect();
        listed
            .iter()
            .find(|id| **id >= 0)
            .or(listed.first())
            .copied()
            .ok_or_else(|| {
                ToolError::failed("the program has no threads (it may be exiting); call status")
            })
    }

    pub(super) async fn terminate(&mut self) -> Result<ToolOutput, ToolError> {
        let Some(s) = self.conversation.session.clone() else {
            return Err(ToolError::refused("no debug session to terminate"));
        };
        let before = s.snapshot().state;
        let attached = s.attached();
        s.shutdown(if attached {
            Ending::Detached
        } else {
            Ending::Terminated
        })
        .await;
        let debuggee = s.debuggee_pid();
        done(TerminateResult {
            detached: attached.then(|| Detached {
                pid: debuggee,
                alive: debuggee.map(tool_core::process::pid_alive),
            }),
            left: s.live_processes(),
            label: s.label().to_string(),
            had_ended: match before {
                RunState::Ended(e) => Some(e.describe()),
                _ => None,
            },
        })
    }
}

/// What a launch runs besides a program file: Python tests and modules
/// under debugpy, a Rust test binary under lldb, a `node:test` test.
enum RunTarget {
    Program,
    /// One test (its name inside the program, a Python test file).
    Test(String),
    Module(adapters::python_tests::PythonModule),
    /// A run named in answers by this label: a program built for this
    /// launch (a Rust test binary), or one `node:test` test of the file.
    Named {
        label: String,
        named_test: Option<String>,
    },
}
