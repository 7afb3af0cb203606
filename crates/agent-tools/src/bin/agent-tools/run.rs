//! `call`, and what `batch` shares with it: bind one run from the command
//! line and dispatch through its Registry.

use crate::render;
use crate::RunArgs;
use agent_tools::{RunConfig, RunOptions, Toolset, ToolsetBuilder};
use serde_json::Value;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use tool_core::{AllowAll, CallContext, Surface, Tier, ToolError};

/// Exit codes.
pub(crate) const OK: u8 = 0;
pub(crate) const TOOL_ERROR: u8 = 1;
pub(crate) const USAGE: u8 = 2;

pub(crate) struct BoundRun {
    pub toolset: Toolset,
    pub surface: Surface,
    pub images_dir: PathBuf,
    /// How long `batch` waits for unfinished workers once its input ended.
    pub batch_wait: std::time::Duration,
}

pub(crate) fn load_config(path: Option<&PathBuf>) -> Result<RunConfig, String> {
    match path {
        Some(p) => RunConfig::load(p),
        None => Ok(RunConfig::default()),
    }
}

/// The surface: `--surface`, else the config file's `surface`, else exec.
pub(crate) fn surface(args: &RunArgs, config: &RunConfig) -> Result<Surface, String> {
    let tier: Tier = match (&args.surface, &config.surface) {
        (Some(s), _) => s.parse()?,
        (None, Some(s)) => s
            .parse()
            .map_err(|e| config.error(format!("surface = {s:?}: {e}")))?,
        (None, None) => Tier::Exec,
    };
    Ok(Surface::new(tier))
}

/// Refuse to start when a config section is wrong (its one-line messages,
/// joined), unless `--lenient` asks to go on without the families they
/// configure: each is then named on stderr.
pub(crate) fn check_config(
    command: &str,
    errors: &[(&'static str, String)],
    lenient: bool,
) -> Result<(), String> {
    if errors.is_empty() {
        return Ok(());
    }
    if !lenient {
        let all: Vec<&str> = errors.iter().map(|(_, e)| e.as_str()).collect();
        return Err(all.join("; "));
    }
    for (family, why) in errors {
        if *family == "staging" {
            eprintln!(
                "agent-tools {command}: --lenient: going on with the default [staging]: {why}"
            );
            continue;
        }
        let tools: Vec<&str> = agent_tools::FAMILIES
            .iter()
            .filter(|f| f.feature == *family)
            .flat_map(|f| f.tools.iter().map(|t| t.name))
            .collect();
        eprintln!(
            "agent-tools {command}: --lenient: going on without the {family} tools ({}): {why}",
            tools.join(", ")
        );
    }
    Ok(())
}

pub(crate) fn bind(command: &str, args: &RunArgs) -> Result<BoundRun, String> {
    let config = load_config(args.config.as_ref())?;
    let surface = surface(args, &config)?;
    // `[mcp]` configures only the MCP host, but a mistake there is named
    // here too, not found later.
    #[cfg(feature = "mcp")]
    let mut errors: Vec<(&'static str, String)> =
        match agent_tools::mcp::McpConfig::from_section(config.mcp.as_ref()) {
            Ok(_) => Vec::new(),
            Err(e) => vec![("mcp", config.error(e))],
        };
    #[cfg(not(feature = "mcp"))]
    let mut errors: Vec<(&'static str, String)> = Vec::new();
    let opts = RunOptions {
        root: args.root.clone(),
        conversation_id: None,
        vibe_fast: args.vibe_fast.clone(),
        vibe_good: args.vibe_good.clone(),
        interactive: std::io::stdin().is_terminal(),
        surface: Some(surface.max_tier),
        config,
        user_config: RunConfig::load_user()?,
        trust_workspace: args.trust_workspace,
    };
    // A wrong `[vibe]` section is reported by the vibe binding below.
    let batch_wait = opts
        .vibe_config()
        .ok()
        .and_then(|c| c.batch_wait_seconds)
        .unwrap_or(agent_tools::options::DEFAULT_BATCH_WAIT_SECONDS);
    let builder = ToolsetBuilder::new(&args.root)
        .map_err(|e| format!("root {}: {e}", args.root.display()))?
        // The person who typed the command is its approver.
        .approver(Arc::new(AllowAll))
        .with_defaults(&opts);
    errors.extend(builder.config_errors().iter().cloned());
    check_config(command, &errors, args.lenient)?;
    let toolset = builder.build().map_err(|e| e.to_string())?;
    Ok(BoundRun {
        toolset,
        surface,
        images_dir: args
            .images_dir
            .clone()
            .unwrap_or_else(render::default_images_dir),
        batch_wait: std::time::Duration::from_secs(batch_wait),
    })
}

fn exit_code(result: &Result<tool_core::ToolOutput, ToolError>) -> u8 {
    match result {
        Ok(_) => OK,
        Err(ToolError::UnknownTool { .. }) => USAGE,
        Err(_) => TOOL_ERROR,
    }
}

pub(crate) async fn call(tool: String, args: String, run: RunArgs, json: bool) -> u8 {
    let args: Value = match serde_json::from_str(&args) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) => {
            eprintln!("agent-tools call: the arguments must be one JSON object, like '{{\"op\": \"status\"}}'");
            return USAGE;
        }
        Err(e) => {
            eprintln!("agent-tools call: the arguments are not valid JSON: {e}");
            return USAGE;
        }
    };
    let bound = match bind("call", &run) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("agent-tools call: {e}");
            return USAGE;
        }
    };
    let result = bound
        .toolset
        .registry()
        .call(bound.surface, &tool, args, CallContext::new())
        .await;
    let code = exit_code(&result);
    if json {
        render::write_stdout(&format!(
            "{}\n",
            render::json_result(&result, &bound.images_dir)
        ));
    } else {
        match &result {
            Ok(out) => render::write_stdout(&format!("{}\n", render::text(out, &bound.images_dir))),
            Err(e) => eprintln!("agent-tools call {tool}: {e}"),
        }
    }
    code
}
