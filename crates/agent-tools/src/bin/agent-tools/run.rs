//! `call` and `batch`: bind one run from the command line and dispatch
//! through its Registry.

use crate::render;
use crate::stop::StopSignals;
use crate::RunArgs;
use agent_tools::{RunConfig, RunOptions, Toolset, ToolsetBuilder};
use serde::Deserialize;
use serde_json::Value;
use std::io::{BufRead, IsTerminal, Write};
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchCall {
    tool: String,
    #[serde(default)]
    args: Value,
}

pub(crate) async fn batch(file: String, run: RunArgs, text: bool) -> u8 {
    let mut signals = match StopSignals::install() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("agent-tools batch: cannot listen for signals: {e}");
            return USAGE;
        }
    };
    let bound = match bind("batch", &run) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("agent-tools batch: {e}");
            return USAGE;
        }
    };
    let code = tokio::select! {
        code = batch_calls(file, &bound, text) => code,
        (number, name) = signals.recv() => {
            eprintln!("agent-tools batch: {name}: stopping every call and child process");
            128 + number as u8
        }
    };
    // The calls in flight were dropped above; dropping the toolset kills
    // every child process of the run with its whole tree.
    drop(bound);
    code
}

async fn batch_calls(file: String, bound: &BoundRun, text: bool) -> u8 {
    let reader: Box<dyn BufRead + Send> = if file == "-" {
        Box::new(std::io::BufReader::new(std::io::stdin()))
    } else {
        match std::fs::File::open(&file) {
            Ok(f) => Box::new(std::io::BufReader::new(f)),
            Err(e) => {
                eprintln!("agent-tools batch: cannot open {file}: {e}");
                return USAGE;
            }
        }
    };
    // Lines are read on a blocking thread so a slow writer never stalls the
    // runtime that the tools' child processes run on.
    let (tx, mut rx) = tokio::sync::mpsc::channel::<std::io::Result<String>>(16);
    std::thread::spawn(move || {
        for line in reader.lines() {
            if tx.blocking_send(line).is_err() {
                break;
            }
        }
    });
    let mut failures = 0usize;
    let mut successes = 0usize;
    let mut stdout = std::io::stdout();
    let mut reader_gone = false;
    while let Some(line) = rx.recv().await {
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                eprintln!("agent-tools batch: reading input failed: {e}");
                return USAGE;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let call = serde_json::from_str::<BatchCall>(&line);
        let result = match &call {
            Ok(c) => {
                bound
                    .toolset
                    .registry()
                    .call(bound.surface, &c.tool, c.args.clone(), CallContext::new())
                    .await
            }
            Err(e) => Err(ToolError::bad_args(format!(
                "each line must be {{\"tool\": NAME, \"args\": {{…}}}}: {e}"
            ))),
        };
        if result.is_err() {
            failures += 1;
        } else {
            successes += 1;
        }
        let shown = if text {
            let heading = match &call {
                Ok(c) if c.args.is_null() => c.tool.clone(),
                Ok(c) => format!("{} {}", c.tool, c.args),
                Err(_) => line.clone(),
            };
            let body = match &result {
                Ok(out) => render::text(out, &bound.images_dir),
                Err(e) => format!("error: {e}"),
            };
            let gap = if failures + successes > 1 { "\n" } else { "" };
            format!("{gap}{heading}\n{}", body.trim_end_matches('\n'))
        } else {
            render::json_result(&result, &bound.images_dir).to_string()
        };
        if !write_line(&mut stdout, &shown) {
            reader_gone = true;
            break;
        }
    }
    let mut printed = failures + successes;
    let mut emit = |end: crate::workers_at_end::EndCall| {
        printed += 1;
        let shown = if text {
            let body = match &end.result {
                Ok(out) => render::text(out, &bound.images_dir),
                Err(e) => format!("error: {e}"),
            };
            let gap = if printed > 1 { "\n" } else { "" };
            format!("{gap}{}\n{}", end.heading, body.trim_end_matches('\n'))
        } else {
            let mut v = render::json_result(&end.result, &bound.images_dir);
            v["after_input"] = serde_json::json!({"tool": end.tool, "args": end.args});
            v.to_string()
        };
        write_line(&mut stdout, &shown)
    };
    let killed = if reader_gone {
        Vec::new()
    } else {
        crate::workers_at_end::wait_for_workers(bound, bound.batch_wait, &mut emit)
            .await
            .killed
    };
    if failures > 0 || !killed.is_empty() {
        TOOL_ERROR
    } else {
        OK
    }
}

/// Write one result; false when nobody reads them any more (`batch | head
/// -1`): the caller stops quietly rather than run calls whose results are
/// lost.
fn write_line(stdout: &mut std::io::Stdout, shown: &str) -> bool {
    match writeln!(stdout, "{shown}").and_then(|()| stdout.flush()) {
        Ok(()) => true,
        Err(e) => {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                eprintln!("agent-tools batch: cannot write to stdout: {e}");
            }
            false
        }
    }
}
