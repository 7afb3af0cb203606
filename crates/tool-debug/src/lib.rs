//! debug: a Debug Adapter Protocol client driving real debug adapters
//! (debugpy, lldb-dap/lldb-vscode, delve, the Dart adapter) for one run,
//! and Node.js through its V8 inspector ([`inspector`], an in-process DAP
//! adapter) behind the same session.
//!
//! The resource is a [`DebugSupervisor`]: one debug session per
//! conversation, with a hard TTL, bound to the run's workspace. The [`DebugTool`]
//! is thin; the work is in the modules, one concern each:
//! [`catalog`] (which adapter, can it start here), [`adapters`] (what each
//! built-in adapter needs), [`transport`] (pending replies over
//! `tool_core::framing`), [`protocol`] (the messages), [`session`]
//! (connecting, handshake, run state, handles, events, processes), [`ops`]
//! (what each `op` does, as typed results) and [`format`] (pieces of how
//! answers read).
//!
//! This crate must never leave a process behind: every adapter and debuggee
//! is killed when its session ends, when the supervisor is dropped, or when
//! the TTL runs out.

pub mod adapters;
pub mod args;
pub mod breakpoint;
pub mod catalog;
pub mod config;
pub mod format;
pub use session::inspector;
mod ops;
pub mod procs;
pub mod protocol;
pub mod session;
pub mod transport;
pub mod waiting;

pub use args::{DebugArgs, Op};
pub use catalog::UntrustedAdapter;
pub use catalog::{AdapterKind, AdapterSpec, Catalog, Connect, ExceptionFilter};
pub use config::AdapterConfig;

use serde_json::Value;
use session::Session;
use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tool_core::{
    async_trait, Binding, CallContext, Registry, RegistryError, RunContext, Tier, Tool, ToolDecl,
    ToolError, ToolOutput, ToolSpec, Workspace,
};

/// How the supervisor runs sessions. `Default` is what the spec says.
#[derive(Debug, Clone)]
pub struct DebugConfig {
    /// Hard lifetime of a session, from launch (spec: 30 minutes).
    pub ttl: Duration,
    /// How long launch, continue, pause and steps wait for the next stop.
    pub default_wait: Duration,
    /// initialize → the launch reply (delve compiles the program in there).
    pub handshake_timeout: Duration,
    /// Any other request.
    pub request_timeout: Duration,
    /// Where adapter binaries are found and the `PATH` children get
    /// (default: this process's `PATH`).
    pub search_path: Option<OsString>,
    /// Extra environment for adapters and debuggees.
    pub env: Vec<(String, String)>,
    /// Adapters added to (or replacing) the built-in catalog.
    pub adapters: Vec<AdapterSpec>,
    /// Adapter ids dropped from the catalog.
    pub disable: Vec<String>,
    /// Project adapters set aside (untrusted workspace): reported by
    /// `adapters`, `doctor` and a launch that would use one; never run.
    pub untrusted: Vec<UntrustedAdapter>,
}

impl DebugConfig {
    /// This config with the folded `[debug]` adapter layers applied.
    pub fn with_adapters(mut self, layers: AdapterConfig) -> Self {
        self.adapters.extend(layers.adapters);
        self.disable.extend(layers.disable);
        self.untrusted.extend(layers.untrusted);
        self
    }
}

impl Default for DebugConfig {
    fn default() -> Self {
        DebugConfig {
            ttl: Duration::from_mins(30),
            default_wait: Duration::from_secs(30),
            handshake_timeout: Duration::from_mins(2),
            request_timeout: Duration::from_secs(15),
            search_path: None,
            env: Vec::new(),
            adapters: Vec::new(),
            disable: Vec::new(),
            untrusted: Vec::new(),
        }
    }
}

/// One conversation's debugging state: its session (live or ended) and the
/// breakpoints it set, which outlive sessions as an IDE's do.
#[derive(Debug, Default)]
struct Conversation {
    session: Option<Session>,
    breakpoints: BTreeMap<PathBuf, Vec<breakpoint::LineBreakpoint>>,
    function_breakpoints: Vec<breakpoint::FunctionBreakpoint>,
    /// The exception filters asked for; `None`: the adapter's defaults.
    exception_filters: Option<Vec<String>>,
    /// The last `launch`, for `restart`.
    last_launch: Option<DebugArgs>,
}

/// The debug-session supervisor: the resource the `debug` tool is bound to.
#[derive(Debug)]
pub struct DebugSupervisor {
    config: DebugConfig,
    catalog: Arc<Catalog>,
    conversations: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Conversation>>>>,
    /// The exception filters each adapter announced when it last started in
    /// this process, by adapter id (the catalog's tested list until then).
    announced_filters: Mutex<HashMap<String, Vec<ExceptionFilter>>>,
}

impl DebugSupervisor {
    pub fn new(config: DebugConfig) -> Arc<Self> {
        let search_path = config
            .search_path
            .clone()
            .or_else(|| std::env::var_os("PATH"))
            .unwrap_or_default();
        let catalog = Catalog::new(config.adapters.clone(), search_path, config.env.clone())
            .disabling(&config.disable)
            .with_untrusted(config.untrusted.clone());
        Arc::new(DebugSupervisor {
            config,
            catalog: Arc::new(catalog),
            conversations: Mutex::new(HashMap::new()),
            announced_filters: Mutex::new(HashMap::new()),
        })
    }

    pub fn config(&self) -> &DebugConfig {
        &self.config
    }

    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    /// Remember the exception filters `adapter` announced as it started.
    fn record_announced_filters(&self, adapter: &str, filters: Vec<ExceptionFilter>) {
        self.announced_filters
            .lock()
            .expect("announced filters lock")
            .insert(adapter.to_string(), filters);
    }

    /// `adapter`'s exception filters: those it announced when it last
    /// started here (`true`), else the catalog's, as announced when tested.
    fn exception_filters(&self, adapter: &AdapterSpec) -> (Vec<ExceptionFilter>, bool) {
        match self
            .announced_filters
            .lock()
            .expect("announced filters lock")
            .get(&adapter.id)
        {
            Some(announced) => (announced.clone(), true),
            None => (adapter.exception_filters.clone(), false),
        }
    }

    /// The `debug` tool for one conversation in `workspace`.
    pub fn tool(self: &Arc<Self>, workspace: Workspace, conversation_id: &str) -> DebugTool {
        DebugTool {
            supervisor: self.clone(),
            workspace,
            conversation: conversation_id.to_string(),
        }
    }

    fn conversation(&self, id: &str) -> Arc<tokio::sync::Mutex<Conversation>> {
        self.conversations
            .lock()
            .expect("conversations lock")
            .entry(id.to_string())
            .or_default()
            .clone()
    }

    /// The processes a conversation's session started that are still alive
    /// (adapter, debuggee, their children). For tests and `doctor`.
    pub async fn live_processes(&self, conversation_id: &str) -> Vec<u32> {
        let conv = self.conversation(conversation_id);
        let conv = conv.lock().await;
        conv.session
            .as_ref()
            .map(session::Session::live_processes)
            .unwrap_or_default()
    }

    /// The pid of the conversation's adapter, if a session was started.
    pub async fn adapter_pid(&self, conversation_id: &str) -> Option<u32> {
        let conv = self.conversation(conversation_id);
        let conv = conv.lock().await;
        conv.session
            .as_ref()
            .and_then(session::Session::adapter_pid)
    }

    /// End every session (the run is ending).
    pub async fn shutdown_all(&self) {
        let all: Vec<_> = self
            .conversations
            .lock()
            .expect("conversations lock")
            .values()
            .cloned()
            .collect();
        for conv in all {
            let conv = conv.lock().await;
            if let Some(s) = &conv.session {
                s.shutdown(session::Ending::Terminated).await;
            }
        }
    }

    /// For `doctor`: a line per adapter of a language the checkout has
    /// files of (usable here or not, and why), the rest one line per reason.
    pub fn adapter_report(&self, root: &std::path::Path) -> Vec<String> {
        ops::adapter_lines(&self.catalog, root, false)
    }

    /// [`Self::adapter_report`] with a line for every adapter, none grouped
    /// (`doctor --all`).
    pub fn adapter_report_all(&self, root: &std::path::Path) -> Vec<String> {
        ops::adapter_lines(&self.catalog, root, true)
    }
}

/// `debug`: runs the user's program, which can reach anything.
pub const DEBUG: ToolDecl = ToolDecl::new("debug", Tier::Exec).hints(true, false, true);

/// This crate's tools as the host lists them before a resource is bound.
pub const FAMILY: tool_core::FamilyDecl = tool_core::FamilyDecl {
    tools: &[DEBUG],
    resource: "debug-session supervisor + working directory + conversation id",
};

/// What the model reads about `debug`: descriptions/debug.md, one sentence
/// group a line for review, joined into one paragraph.
fn description() -> String {
    tool_core::tool::paragraph(include_str!("../descriptions/debug.md"))
}
/// The `debug` tool of one conversation.
#[derive(Debug, Clone)]
pub struct DebugTool {
    supervisor: Arc<DebugSupervisor>,
    workspace: Workspace,
    conversation: String,
}

#[async_trait]
impl Tool for DebugTool {
    fn spec(&self) -> ToolSpec {
        DEBUG
            .spec(description(), tool_core::schema_for::<DebugArgs>())
            .serial()
    }

    async fn call(&self, cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: DebugArgs = tool_core::parse_args(args)?;
        let conv = self.supervisor.conversation(&self.conversation);
        let mut conv = conv.lock().await;
        let run = ops::OpContext {
            supervisor: &self.supervisor,
            workspace: &self.workspace,
            conversation: &mut conv,
        };
        let op = args.op;
        tokio::select! {
            r = run.dispatch(args) => r,
            () = cx.cancel.cancelled() => Err(ToolError::Cancelled(format!(
                "debug {} was cancelled; the session is left as it was: call status", op.name()
            ))),
        }
    }
}

/// Binds a [`DebugSupervisor`] into a run: registers `debug` for the run's
/// conversation.
pub struct DebugBinding {
    supervisor: Arc<DebugSupervisor>,
}

impl DebugBinding {
    pub fn new(supervisor: Arc<DebugSupervisor>) -> Self {
        DebugBinding { supervisor }
    }
}

impl Binding for DebugBinding {
    fn resource(&self) -> &'static str {
        "debug-session supervisor"
    }

    fn register(&self, run: &RunContext, registry: &Registry) -> Result<(), RegistryError> {
        // The spec binds debug to a conversation; without one nothing registers.
        let Some(conversation) = run.conversation_id.as_deref() else {
            return Ok(());
        };
        registry.register(Arc::new(
            self.supervisor.tool(run.workspace.clone(), conversation),
        ))
    }

    fn doctor(&self, run: &RunContext) -> Vec<String> {
        self.supervisor.adapter_report(run.workspace.root())
    }

    fn doctor_all(&self, run: &RunContext) -> Vec<String> {
        self.supervisor.adapter_report_all(run.workspace.root())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_description_reads_as_one_paragraph() {
        expect_test::expect![[r#"Drive a debugger (debugpy for Python, lldb for C/C++/Rust executables, delve for Go, the Dart adapter, Node.js for .js/.mjs/.cjs through its V8 inspector, the JVM for .java through its JDWP agent). Choose the operation with `op`. One session per conversation (30-minute limit). Typical flow: {"op":"breakpoints","file":"src/app.py","lines":[12, {"line":20,"condition":"n > 3"}]} (works before launch; an entry may also have hit_condition or log_message) → {"op":"launch","program":"src/app.py"} (waits for the first stop) → {"op":"locals"} → {"op":"stack"} → {"op":"scopes","frame_id":N} → {"op":"variables","reference":N} → {"op":"evaluate","expression":"len(xs)"} → {"op":"step_over"} / {"op":"continue"} → {"op":"output"} → {"op":"terminate"}. One test: {"op":"launch","test":"tests/test_stats.py::test_mean"} (pytest, or unittest without pytest; a node:test test or a JUnit test method by name in `program`; a Go test, or a Rust test in tests/x.rs or src/lib.rs, with `program`: cargo builds it, a failed assert_eq! stops with its message); {"op":"exception_breakpoints","filters":["userUnhandled"]} first stops a Python test at its failing assertion; `module` runs python -m MODULE with `args`. Also: function_breakpoints, exception_breakpoints (filters from the adapter; status lists them), set_variable, restart, modules, disassemble, read_memory; attach takes `port` or `pid`. Frame ids and references are valid only until the program moves; take fresh ones after every stop. Waiting ops answer "still running" after timeout_seconds (default 30) instead of hanging: then call pause. `adapters` says which debuggers can start here and why not; `status` says where the program is."#]]
        .assert_eq(&super::description());
    }
}
