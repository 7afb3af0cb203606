//! Op `diagnostics` on one file: the answers of its server and of every
//! linter that resolves for it, merged into one list.

use crate::args::{LspArgs, CHECKER_CAP};
use crate::client::file_uri;
use crate::diagnostics::{self, DiagLine, NotReady};
use crate::positioning::{file_arg, synced, wait_ready, FileArg};
use crate::read::dependencies::missing_packages_note;
use crate::supervisor::{LspSupervisor, Target, Timeouts};
use tool_core::{ToolError, ToolOutput};

/// One server's diagnostics of a file: its problems (sorted) and how many
/// hints or infos it also gave.
async fn diagnostics_of(
    t: &Timeouts,
    target: &Target,
    file: &FileArg,
) -> Result<(Vec<DiagLine>, usize), ToolError> {
    let client = &target.client;
    client.resync_open().await;
    let doc = client
        .sync_file(&file.path, &target.language_id)
        .await
        .map_err(|e| ToolError::bad_args(format!("cannot read {}: {e}", file.shown)))?;
    wait_ready(t, client).await?;
    let uri = file_uri(&file.path);
    let fresh = diagnostics::fresh(client, &uri, &doc, t.diagnostics)
        .await
        .map_err(|e| match e {
            NotReady::Timeout(after) => ToolError::timed_out(format!(
                "diagnostics of {} not ready after {} ms ({} is running but has not published for this version); retry in a moment",
                file.shown,
                after.as_millis(),
                client.name
            )),
            NotReady::Request(r) => r.into_tool_error(&client.name),
            e @ NotReady::ServerFailed(_) => {
                ToolError::failed(format!("{} {e}", file.shown))
            }
        })?;
    let mut lines: Vec<DiagLine> = fresh
        .diagnostics
        .iter()
        .filter(|d| diagnostics::is_problem(d))
        .map(|d| DiagLine::from_lsp(&file.shown, d, Some(&doc.text), client.encoding))
        .collect();
    lines.sort();
    let hidden = fresh.diagnostics.len() - lines.len();
    Ok((lines, hidden))
}

/// A file's diagnostics: its server's and, beside them, those of every
/// linter for the file that resolves here, merged, deduplicated (same
/// place, severity and message) and labelled by source when more than one
/// server answered. A server that fails is named with why, and the others'
/// answers are still given; "no errors" is said only when every server
/// answered.
pub(crate) async fn file_diagnostics(
    sup: &LspSupervisor,
    t: &Timeouts,
    args: &LspArgs,
) -> Result<ToolOutput, ToolError> {
    let file = file_arg(sup, args.file.as_deref(), "diagnostics")?;
    let linters: Vec<_> = sup
        .linter_slots_for(&file.path)
        .into_iter()
        .filter_map(|(_, slot)| slot.ok())
        .collect();
    let main = sup.server_slot_for(&file.path);
    if linters.is_empty() {
        // The file's server alone: its error is the call's.
        let (target, _) = synced(sup, &file).await?;
        let (lines, hidden) = diagnostics_of(t, &target, &file).await?;
        // The same problem said twice at one place (svelte: by its compiler
        // and its TypeScript view, under two codes) is one line, as in a
        // write's answer.
        let sourced =
            diagnostics::merge_labelled(lines.into_iter().map(|d| (d, String::new())).collect());
        let head = format!("lsp diagnostics  {} ({})", file.shown, target.slot.entry.id);
        let setup = missing_packages_note(sup.workspace(), &file.path);
        // A server that checks less says what its clean answer covers.
        let covers = target.slot.entry.partial_cover();
        return Ok(render_diagnostics(
            head,
            sourced,
            hidden,
            &[],
            setup,
            covers,
        ));
    }
    let mut slots = Vec::new();
    let mut failed = Vec::new();
    match main {
        Ok((slot, language_id)) => slots.push((slot, language_id)),
        Err(e) => failed.push(format!("the file's server did not answer ({e})")),
    }
    for slot in linters {
        let language_id = slot.entry.language_of(&file.path).unwrap_or_default();
        slots.push((slot, language_id));
    }
    let answers = futures::future::join_all(slots.iter().map(|(slot, language_id)| {
        let file = &file;
        async move {
            let client = sup.ensure_running(slot).await?;
            let target = Target {
                client,
                slot: slot.clone(),
                language_id: language_id.clone(),
            };
            diagnostics_of(t, &target, file).await
        }
    }))
    .await;
    let mut sourced: Vec<(DiagLine, String)> = Vec::new();
    let mut hidden = 0;
    let mut answered = Vec::new();
    for ((slot, _), answer) in slots.iter().zip(answers) {
        let id = slot.entry.id.clone();
        match answer {
            Ok((lines, h)) => {
                hidden += h;
                sourced.extend(lines.into_iter().map(|d| (d, id.clone())));
                answered.push(id);
            }
            Err(e) => failed.push(format!("{id} did not answer ({e})")),
        }
    }
    let sourced = diagnostics::merge_labelled(sourced);
    let head = format!("lsp diagnostics  {} ({})", file.shown, answered.join(" + "));
    let setup = missing_packages_note(sup.workspace(), &file.path);
    Ok(render_diagnostics(
        head, sourced, hidden, &failed, setup, None,
    ))
}

/// The diagnostics answer: the head with the counts, a note on the
/// project's setup when there are problems it may explain (see
/// [`crate::read::dependencies`]), one line per problem (labelled `(source)` when
/// the source is given), the failed servers. `covers`: what the one
/// server checks when less than a full check, and the note saying so.
fn render_diagnostics(
    mut head: String,
    lines: Vec<(DiagLine, String)>,
    hidden: usize,
    failed: &[String],
    setup: Option<String>,
    covers: Option<(&str, String)>,
) -> ToolOutput {
    let mut out = Vec::new();
    if lines.is_empty() {
        if let Some((covers, note)) = covers {
            out.push(format!("no {covers} errors ({note})"));
        } else if failed.is_empty() {
            out.push("no errors or warnings".to_string());
        } else {
            out.push("no errors or warnings from the servers that answered".to_string());
        }
    } else {
        let errors = lines.iter().filter(|(d, _)| d.severity == "error").count();
        head.push_str(&format!(
            " — {}, {}",
            tool_core::format::plural(errors, "error", "errors"),
            tool_core::format::plural(lines.len() - errors, "warning", "warnings")
        ));
        out.extend(setup);
        let rendered: Vec<String> = lines
            .iter()
            .map(|(d, src)| diagnostics::render_labelled(d, src))
            .collect();
        let (kept, note) =
            tool_core::format::cap_list(rendered, CHECKER_CAP, "fix the first ones and ask again");
        out.extend(kept);
        out.extend(note);
    }
    out.extend(failed.iter().cloned());
    if hidden > 0 {
        out.push(format!(
            "({} not shown)",
            tool_core::format::plural(hidden, "hint or info", "hints or infos")
        ));
    }
    ToolOutput::text(format!("{head}\n{}", out.join("\n")))
}
