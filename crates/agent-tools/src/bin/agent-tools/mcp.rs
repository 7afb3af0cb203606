//! `agent-tools mcp`: serve one run's tools over MCP on stdio.

use crate::RunArgs;

pub async fn serve(_run: RunArgs) -> u8 {
    eprintln!("agent-tools mcp: not built yet (the MCP host issue adds it)");
    2
}
