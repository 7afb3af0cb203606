//! `agent-tools mcp`: serve one run's tools over MCP on stdio.
//!
//! Binds the run like `call` does, but with the approval policy of the
//! `[mcp]` config section (default: trust the client's own confirmation),
//! never asks on the terminal (stdin is the protocol), and ends the run —
//! every resource and child process — when the client disconnects or the
//! process gets SIGTERM or SIGINT.

use crate::run::load_config;
use crate::stop::StopSignals;
use crate::RunArgs;
use agent_tools::mcp::{
    serve_stdio, shutdown, ApprovalPolicy, ClientLink, ElicitationApprover, McpConfig, McpHost,
    SessionEnd,
};
use agent_tools::{RunOptions, ToolsetBuilder};
use std::sync::Arc;
use std::time::Duration;
use tool_core::{AllowAll, Approver, CancellationToken, Surface, Tier};

const USAGE: u8 = 2;

pub async fn serve(run: RunArgs) -> u8 {
    match serve_inner(run).await {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("agent-tools mcp: {e}");
            USAGE
        }
    }
}

async fn serve_inner(args: RunArgs) -> Result<(), String> {
    let config = load_config(args.config.as_ref())?;
    let mcp_config = McpConfig::from_section(config.mcp.as_ref())?;
    let surface_name = args
        .surface
        .clone()
        .or_else(|| config.surface.clone())
        .unwrap_or_else(|| "exec".into());
    let surface = Surface::new(surface_name.parse::<Tier>()?);
    let opts = RunOptions {
        root: args.root.clone(),
        conversation_id: Some(format!("mcp-{}", std::process::id())),
        vibe_fast: args.vibe_fast.clone(),
        vibe_good: args.vibe_good.clone(),
        // Stdin carries the protocol: nobody can be asked on this terminal.
        interactive: false,
        config,
    };

    let builder = ToolsetBuilder::new(&args.root)
        .map_err(|e| format!("root {}: {e}", args.root.display()))?;
    // The client connects after binding; tools that reach it (approval,
    // questions) hold this link and find it there.
    let link = ClientLink::new(mcp_config.elicitation_timeout());
    let approver: Arc<dyn Approver> = match mcp_config.approval {
        ApprovalPolicy::Client => Arc::new(AllowAll),
        ApprovalPolicy::Elicit => Arc::new(ElicitationApprover { link: link.clone() }),
    };
    let builder = builder.approver(approver);
    // ask_user shows its cards as elicitation forms, so it exists only once
    // a client that declared elicitation is connected.
    #[cfg(feature = "ask")]
    let builder = builder.bind("ask", Box::new(agent_tools::mcp::ask::DeferredAskBinding));
    let toolset = builder
        .with_defaults(&opts)
        .build()
        .map_err(|e| e.to_string())?;
    let host = McpHost::new(toolset.registry().clone(), surface, mcp_config, link);
    #[cfg(feature = "ask")]
    {
        let run = toolset.run_context().clone();
        let expiry = agent_tools::mcp::ask::card_expiry(&opts);
        host.on_handshake(Box::new(move |link, registry| {
            match agent_tools::mcp::ask::register_if_supported(link, registry, &run, expiry) {
                Ok(true) => tracing::info!("ask_user registered: the client supports elicitation"),
                Ok(false) => {
                    tracing::info!("ask_user not registered: the client has no elicitation")
                }
                Err(e) => tracing::warn!(error = %e, "ask_user could not be registered"),
            }
        }));
    }
    tracing::info!(
        root = %toolset.workspace().root().display(),
        surface = %surface.max_tier,
        tools = toolset.registry().specs(surface).len(),
        "serving MCP on stdio"
    );

    let stop = CancellationToken::new();
    let signals = {
        let stop = stop.clone();
        let mut signals = StopSignals::install()?;
        tokio::spawn(async move {
            let (_, name) = signals.recv().await;
            tracing::info!("{name}: ending the run");
            stop.cancel();
        })
    };

    let end = serve_stdio(host, stop).await;
    signals.abort();
    // The run's resources go first (each kills its own process group), then
    // the sweep stops anything they left behind.
    drop(toolset);
    let swept = shutdown::sweep_children(Duration::from_millis(500)).await;
    match &end {
        Ok(SessionEnd::ClientClosed) => tracing::info!(swept, "client closed; run ended"),
        Ok(SessionEnd::Stopped) => tracing::info!(swept, "signalled; run ended"),
        Err(e) => tracing::warn!(swept, error = %e, "session failed"),
    }
    end.map(|_| ())
}
