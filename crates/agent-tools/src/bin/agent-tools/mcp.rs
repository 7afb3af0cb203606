//! `agent-tools mcp`: serve one run's tools over MCP on stdio.
//!
//! Binds the run like `call` does, but with the approval policy of the
//! `[mcp]` config section (default: trust the client's own confirmation),
//! never asks on the terminal (stdin is the protocol), and ends the run —
//! every resource and child process — when the client disconnects or the
//! process gets SIGTERM or SIGINT.

use crate::run::{check_config, load_config, surface};
use crate::stop::StopSignals;
use crate::RunArgs;
use agent_tools::mcp::{
    serve_stdio, shutdown, ApprovalPolicy, ClientLink, ElicitationApprover, McpConfig, McpHost,
    SessionEnd,
};
use agent_tools::{RunConfig, RunOptions, ToolsetBuilder};
use std::sync::Arc;
use std::time::Duration;
use tool_core::{AllowAll, Approver, CancellationToken};

const USAGE: u8 = 2;

pub(crate) async fn serve(run: RunArgs) -> u8 {
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
    // The host cannot go on without its own section, lenient or not.
    let mcp_config = McpConfig::from_section(config.mcp.as_ref()).map_err(|e| config.error(e))?;
    let surface = surface(&args, &config)?;
    #[cfg(feature = "ask")]
    let card_expiry = agent_tools::mcp::ask::card_expiry(&RunOptions {
        config: config.clone(),
        ..Default::default()
    });
    let opts = RunOptions {
        root: args.root.clone(),
        conversation_id: Some(format!("mcp-{}", std::process::id())),
        vibe_fast: args.vibe_fast.clone(),
        vibe_good: args.vibe_good.clone(),
        // Stdin carries the protocol: nobody can be asked on this terminal.
        interactive: false,
        surface: Some(surface.max_tier),
        config,
        user_config: RunConfig::load_user()?,
        trust_workspace: args.trust_workspace,
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
    let builder = builder.with_defaults(&opts);
    let mut errors = builder.config_errors().to_vec();
    #[cfg(feature = "ask")]
    let card_expiry = match card_expiry {
        Ok(expiry) => Some(expiry),
        Err(e) => {
            errors.push(("ask", e));
            None
        }
    };
    check_config("mcp", &errors, args.lenient)?;
    let toolset = builder.build().map_err(|e| e.to_string())?;
    // A run that writes: the root's language servers start now, so the
    // first write rarely finds them cold.
    if surface.max_tier >= tool_core::Tier::Write {
        toolset.warm_up();
    }
    let host = McpHost::new(toolset.registry().clone(), surface, mcp_config, link);
    #[cfg(feature = "ask")]
    if let Some(expiry) = card_expiry {
        let run = toolset.run_context().clone();
        host.on_handshake(Box::new(move |link, registry| {
            match agent_tools::mcp::ask::register_if_supported(link, registry, &run, expiry) {
                Ok(true) => tracing::info!("ask_user registered: the client supports elicitation"),
                Ok(false) => {
                    tracing::info!("ask_user not registered: the client has no elicitation");
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
