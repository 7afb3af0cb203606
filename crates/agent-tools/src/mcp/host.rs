//! The MCP server of one run: `tools/list` from the Registry's specs for the
//! surface, `tools/call` through `Registry::call`, with progress and
//! cancellation.
//!
//! Invariants: every call goes through the Registry (surface, approval,
//! serialization are never bypassed); a cancelled call is told through its
//! `CallContext.cancel` and given a grace period to wind down before it is
//! dropped; no progress notification follows the answer to its call; every
//! notice posted on the run's board after the client initialized is sent as
//! a log notification.

use super::catalog::mcp_tool;
use super::client::ClientLink;
use super::config::McpConfig;
use super::notices::MinimumLevel;
use super::progress::ProgressForwarder;
use super::results::call_result;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, InitializeRequestParams,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::Value;
use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tool_core::{
    CallContext, CancellationToken, Progress, ProgressSink, Registry, Surface, ToolError,
};

/// Run once the client has initialized, with what it declared: binds what
/// depends on the client (ask_user needs elicitation).
pub type HandshakeHook = Box<dyn FnOnce(&Arc<ClientLink>, &Registry) + Send>;

/// One run's tools served over MCP.
pub struct McpHost {
    registry: Registry,
    surface: Surface,
    config: McpConfig,
    link: Arc<ClientLink>,
    /// Cancelled when the run ends (client gone, signal): every call in
    /// flight is cancelled with it.
    run_ct: CancellationToken,
    hooks: Mutex<Vec<HandshakeHook>>,
    instructions: String,
    /// The lowest notice level the client asked for (`logging/setLevel`).
    log_level: MinimumLevel,
}

impl McpHost {
    /// `link` is where the connected client will be found; the same link may
    /// already back an [`ElicitationApprover`](super::ElicitationApprover) or
    /// a question port bound before the client connected.
    pub fn new(
        registry: Registry,
        surface: Surface,
        config: McpConfig,
        link: Arc<ClientLink>,
    ) -> Self {
        McpHost {
            registry,
            surface,
            config,
            link,
            run_ct: CancellationToken::new(),
            hooks: Mutex::new(Vec::new()),
            log_level: MinimumLevel::default(),
            instructions: "Run-bound tools of one workspace (agent-tools). Paths are relative to \
                           the workspace root; lines are 1-based; positions are given as line plus \
                           a symbol on that line, never a column."
                .into(),
        }
    }

    /// Something to bind once the client's capabilities are known.
    pub fn on_handshake(&self, hook: HandshakeHook) {
        self.hooks.lock().expect("hooks lock").push(hook);
    }

    pub fn link(&self) -> &Arc<ClientLink> {
        &self.link
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The token that ends the run; cancel it to shut the host down.
    pub fn run_token(&self) -> CancellationToken {
        self.run_ct.clone()
    }

    async fn run_call(
        &self,
        name: &str,
        args: Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<tool_core::ToolOutput, ToolError> {
        let cancel = self.run_ct.child_token();
        let mut cx = CallContext::new().with_cancel(cancel.clone());
        let mut progress: Option<(ProgressForwarder, Arc<dyn ProgressSink>)> = None;
        if let Some(token) = context.meta.get_progress_token() {
            let (forwarder, sink) = ProgressForwarder::start(context.peer.clone(), token);
            let sink: Arc<dyn ProgressSink> = Arc::new(sink);
            cx = cx.with_progress(sink.clone());
            progress = Some((forwarder, sink));
        }
        let started = Instant::now();
        let call = self.registry.call(self.surface, name, args, cx);
        tokio::pin!(call);
        let period = self.config.progress_interval();
        let mut heartbeat = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
        let mut grace_until: Option<tokio::time::Instant> = None;
        let result = loop {
            tokio::select! {
                r = &mut call => break r,
                _ = heartbeat.tick(), if progress.is_some() => {
                    if let Some((_, sink)) = &progress {
                        sink.report(Progress {
                            message: format!("`{name}` running for {} s", started.elapsed().as_secs()),
                            done: None,
                            total: None,
                        });
                    }
                }
                () = context.ct.cancelled(), if !cancel.is_cancelled() => {
                    tracing::info!(tool = %name, "call cancelled by the client");
                    cancel.cancel();
                }
                () = cancel.cancelled(), if grace_until.is_none() => {
                    grace_until = Some(tokio::time::Instant::now() + self.config.cancel_grace());
                }
                () = tokio::time::sleep_until(grace_until.unwrap_or_else(tokio::time::Instant::now)),
                    if grace_until.is_some() => {
                    tracing::warn!(tool = %name, "cancelled call did not stop within its grace period; dropped");
                    break Err(ToolError::Cancelled(format!(
                        "`{name}` was cancelled and did not stop within {} ms; it was dropped",
                        self.config.cancel_grace().as_millis()
                    )));
                }
            }
        };
        if let Some((forwarder, _)) = &progress {
            forwarder.finish();
        }
        result
    }
}

impl ServerHandler for McpHost {
    fn get_info(&self) -> ServerConfig {
        // Logging carries the run's notices (see `notices`).
        #[allow(deprecated)]
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_logging()
            .build();
        InitializeResult::new(capabilities)
            .with_server_info(
                Implementation::new("agent-tools", env!("CARGO_PKG_VERSION"))
                    .with_title("agent-tools"),
            )
            .with_instructions(self.instructions.clone())
    }

    /// The session-based protocol revisions only. One process is one run with
    /// live state (language servers, a debug session, kernels), and
    /// `ask_user` and elicited approvals ask the person in the middle of a
    /// call; the 2026-07-28 stateless envelope forbids server-to-client
    /// requests during a call. A client that probes `server/discover` first
    /// falls back to `initialize`.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        self.link.set_peer(context.peer.clone());
        let hooks: Vec<HandshakeHook> =
            std::mem::take(&mut *self.hooks.lock().expect("hooks lock"));
        for hook in hooks {
            hook(&self.link, &self.registry);
        }
        super::notices::forward(
            &self.registry.notices(),
            context.peer.clone(),
            self.log_level.clone(),
            self.run_ct.clone(),
        );
        tracing::info!(
            client = %request.client_info.name,
            elicitation = self.link.supports_elicitation(),
            "client initialized"
        );
        self.negotiate_initialize(&request)
    }

    #[allow(deprecated)] // MCP logging, see `notices`
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.log_level.set(request.level);
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self
            .registry
            .specs(self.surface)
            .iter()
            .map(mcp_tool)
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.map_or(Value::Null, Value::Object);
        let result = self.run_call(&request.name, args, &context).await;
        call_result(result).map(CallToolResponse::Complete)
    }
}
