//! Op `capabilities`: what each server for a file advertises, grouped the
//! way the `lsp` ops use it, so a user can see why an op is refused.
//!
//! Invariants: the capability table below is the one place that says which
//! server capability an op needs (the ops refuse by the same keys); a group
//! lists what is offered and, after "not offered:", what is not — never only
//! the good half. Every server for the file is shown: its type server and
//! its linters, started if they can be, and the reason for each that cannot.

use crate::args::LspArgs;
use crate::client::LspClient;
use crate::positioning::file_arg;
use crate::supervisor::LspSupervisor;
use tool_core::{ToolError, ToolOutput};

/// (group, [(what the user can ask for, the server capability it needs)]).
const GROUPS: &[(&str, &[(&str, &str)])] = &[
    (
        "navigation",
        &[
            ("definition", "definitionProvider"),
            ("type_definition", "typeDefinitionProvider"),
            ("implementation", "implementationProvider"),
            ("references", "referencesProvider"),
            ("hover", "hoverProvider"),
        ],
    ),
    (
        "symbols",
        &[
            ("symbols of a file", "documentSymbolProvider"),
            ("symbols by query", "workspaceSymbolProvider"),
        ],
    ),
    (
        "hierarchy",
        &[
            ("incoming_calls/outgoing_calls", "callHierarchyProvider"),
            ("supertypes/subtypes", "typeHierarchyProvider"),
        ],
    ),
    (
        "signature_help",
        &[("signature_help", "signatureHelpProvider")],
    ),
    (
        "editing",
        &[
            ("lsp_rename", "renameProvider"),
            ("code_actions", "codeActionProvider"),
            ("formatting", "documentFormattingProvider"),
        ],
    ),
];

fn offered(client: &LspClient, key: &str) -> bool {
    client.has_capability(key)
}

/// An op's refusal when its server does not advertise `key`: by server
/// name, with what to ask instead.
pub(crate) fn require(
    client: &LspClient,
    key: &str,
    what: &str,
    instead: &str,
) -> Result<(), ToolError> {
    if offered(client, key) {
        return Ok(());
    }
    Err(ToolError::unavailable(format!(
        "{} does not offer {what} (no `{key}` in its capabilities; op `capabilities` lists what it offers); {instead}",
        client.name
    )))
}

/// What one running server advertises, a line per group.
pub(crate) fn describe(client: &LspClient) -> Vec<String> {
    let mut out = Vec::new();
    for (group, items) in GROUPS {
        let (yes, no): (Vec<_>, Vec<_>) = items.iter().partition(|(_, key)| offered(client, key));
        let mut line = format!("  {group}: ");
        let names = |v: &[&(&str, &str)]| v.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ");
        if yes.is_empty() {
            line.push_str(&format!("none (not offered: {})", names(&no)));
        } else {
            line.push_str(&names(&yes));
            if !no.is_empty() {
                line.push_str(&format!("; not offered: {}", names(&no)));
            }
        }
        out.push(line);
    }
    let caps = &client.capabilities;
    let mut details = Vec::new();
    if caps.rename_prepares() {
        details.push("rename checks the position first (prepareRename)".to_string());
    }
    if let Some(kinds) = caps.code_action_kinds() {
        details.push(format!("code action kinds: {}", kinds.join(", ")));
    }
    if let Some(triggers) = caps.signature_triggers() {
        details.push(format!("signature help after {}", triggers.join(" ")));
    }
    if caps.will_rename_files() {
        details.push("updates imports when files move (willRenameFiles)".to_string());
    }
    if !details.is_empty() {
        out.push(format!("  details: {}", details.join("; ")));
    }
    out.push(format!(
        "  diagnostics: {}; positions in {}",
        if client.pull_diagnostics() {
            "pulled (textDocument/diagnostic) and published"
        } else {
            "published (pushed) only"
        },
        client.encoding.name()
    ));
    out
}

/// `lsp capabilities` for `file`.
pub(crate) async fn run(sup: &LspSupervisor, args: &LspArgs) -> Result<ToolOutput, ToolError> {
    let file = file_arg(sup, args.file.as_deref(), "capabilities")?;
    let mut out = vec![format!("lsp capabilities  {}", file.shown)];
    // The file's own server: no server at all is the call's error.
    let (slot, _) = sup.server_slot_for(&file.path)?;
    let mut servers = vec![(slot, "")];
    let mut unusable = Vec::new();
    for (id, slot) in sup.linter_slots_for(&file.path) {
        match slot {
            Ok(slot) => servers.push((slot, " (linter)")),
            Err(why) => unusable.push(format!("{id} (linter): not used here — {why}")),
        }
    }
    for (slot, role) in servers {
        match sup.ensure_running(&slot).await {
            Ok(client) => {
                out.push(format!("{}{role} — {}:", slot.entry.id, slot.display()));
                out.extend(describe(&client));
            }
            Err(e) => out.push(format!("{}{role}: cannot start — {e}", slot.entry.id)),
        }
    }
    out.extend(unusable);
    Ok(ToolOutput::text(out.join("\n")))
}
