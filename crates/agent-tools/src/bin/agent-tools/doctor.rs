//! `agent-tools doctor`: what would register here, what resolves, and why not.

use crate::run::load_config;
use agent_tools::{BindingState, RunOptions, ToolsetBuilder, FAMILIES};
use std::io::IsTerminal;
use std::path::PathBuf;

pub async fn run(root: PathBuf, config: Option<PathBuf>) -> u8 {
    let config = match load_config(config.as_ref()) {
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
    println!(
        "agent-tools doctor — root {}",
        toolset.workspace().root().display()
    );
    println!();
    println!(
        "{:<12} {:<6} {:<9} {:<11} why",
        "tool", "tier", "compiled", "registered"
    );
    for fam in FAMILIES {
        let state = toolset.state(fam.feature);
        for (name, tier) in fam.tools {
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
            println!(
                "{:<12} {:<6} {:<9} {:<11} {why}",
                name,
                tier.as_str(),
                compiled,
                if registered { "yes" } else { "no" },
            );
        }
    }
    for fam in FAMILIES {
        let lines = toolset.doctor_lines(fam.feature);
        if !lines.is_empty() {
            println!();
            println!("{}:", fam.feature);
            for l in lines {
                println!("  {l}");
            }
        }
    }
    0
}
