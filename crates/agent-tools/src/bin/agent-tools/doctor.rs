//! `agent-tools doctor`: what would register here, what resolves, and why not.

use crate::render;
use crate::run::load_config;
use agent_tools::{BindingState, RunConfig, RunOptions, ToolsetBuilder, FAMILIES};
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::PathBuf;

pub(crate) async fn run(
    root: PathBuf,
    config: Option<PathBuf>,
    trust_workspace: bool,
    all: bool,
) -> u8 {
    let (config, user_config) =
        match load_config(config.as_ref()).and_then(|c| RunConfig::load_user().map(|u| (c, u))) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("agent-tools doctor: {e}");
                return 2;
            }
        };
    let opts = RunOptions {
        root: root.clone(),
        interactive: std::io::stdin().is_terminal(),
        config,
        user_config,
        trust_workspace,
        ..Default::default()
    };
    let toolset = match ToolsetBuilder::new(&root).map(|b| b.with_defaults(&opts).build()) {
        Ok(Ok(t)) => t,
        Ok(Err(e)) => {
            eprintln!("agent-tools doctor: {e}");
            return 1;
        }
        Err(e) => {
            eprintln!("agent-tools doctor: root {}: {e}", root.display());
            return 2;
        }
    };
    // The whole report is written at once, so a reader that goes away
    // (`doctor | head -1`) ends it quietly.
    let mut out = String::new();
    let _ = writeln!(
        out,
        "agent-tools doctor — root {}",
        toolset.workspace().root().display()
    );
    let _ = writeln!(out);
    // The name column fits the longest tool name (lsp_code_action).
    let width = FAMILIES
        .iter()
        .flat_map(|f| f.tools.iter().map(|t| t.name.len()))
        .max()
        .unwrap_or(0)
        .max(12);
    let _ = writeln!(
        out,
        "{:<width$} {:<6} {:<9} {:<11} why",
        "tool", "tier", "compiled", "registered"
    );
    for fam in FAMILIES {
        let state = toolset.state(fam.feature);
        // A family's tools unregistered for one reason: said once.
        let mut said: Option<(&str, String)> = None;
        for tool in fam.tools {
            let (name, tier) = (tool.name, tool.tier);
            let registered = toolset.registry().contains(name);
            let (compiled, why) = match &state {
                BindingState::NotCompiled => {
                    ("no", format!("feature `{}` not compiled in", fam.feature))
                }
                BindingState::Bound { resource } if registered => {
                    ("yes", format!("{resource} bound"))
                }
                BindingState::Bound { resource } => (
                    "yes",
                    format!("{resource} bound; tool not registered in this mode"),
                ),
                BindingState::Unbound { why } => ("yes", format!("needs {}: {why}", fam.resource)),
            };
            let why = match &said {
                Some((first, same)) if !registered && !all && *same == why => {
                    format!("as {first}")
                }
                _ => {
                    if !registered {
                        said = Some((name, why.clone()));
                    }
                    why
                }
            };
            let _ = writeln!(
                out,
                "{:<width$} {:<6} {:<9} {:<11} {why}",
                name,
                tier.as_str(),
                compiled,
                if registered { "yes" } else { "no" },
            );
        }
    }
    for fam in FAMILIES {
        let lines = if all {
            toolset.doctor_lines_all(fam.feature)
        } else {
            toolset.doctor_lines(fam.feature)
        };
        if !lines.is_empty() {
            let _ = writeln!(out);
            let _ = writeln!(out, "{}:", fam.feature);
            for l in lines {
                let _ = writeln!(out, "  {l}");
            }
        }
    }
    render::write_stdout(&out);
    0
}
