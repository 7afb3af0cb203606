//! Format on write: the write wrapper's step between the write and the
//! diagnostics. Opt-in per LSP language id in `[lsp.format_on_write]`:
//!
//! ```toml
//! [lsp.format_on_write]
//! python = true                                  # the file's servers format
//! go = { server = "go" }                          # this catalog id formats
//! typescript = { command = ["prettier", "--stdin-filepath", "{file}"] }
//! ```
//!
//! With `true` (or a table without `command`) the first of the file's
//! checkers (its server, then its linters) that offers
//! `textDocument/formatting` formats it: the written text is sent as the
//! document's new version, the server's edits are applied to it. With a
//! `command`, the text goes to the command's stdin and its stdout is the
//! formatted text (`{file}` in an argument is the file's path from the
//! workspace root; it runs in the workspace root).
//!
//! Invariants:
//! - The write is never lost: formatting that fails, times out or finds the
//!   file changed meanwhile leaves the file as written and says why.
//! - The formatted text goes back through tool-core's file access (beneath
//!   the root's handle, temp file and rename, permissions kept), and only
//!   when the file still holds exactly what was formatted.
//! - A command prints the whole file; an empty answer for a non-empty file
//!   is a failure, never an empty file.
//! - Every step is bounded (`timeout_ms`, default [`DEFAULT_TIMEOUT`]); a
//!   command still running then is killed with its process group.

use crate::catalog;
use crate::client::{file_uri, read_document, RequestError};
pub(crate) use crate::format_setting::FormatSetting;
use crate::on_write::judges::Checker;
use crate::position::changed_lines;
use crate::position::{self, PositionEncoding};
use crate::supervisor::LspSupervisor;
use lsp_types::request::{Formatting, Request};
use lsp_types::TextEdit;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tool_core::process::{ChildSpec, Io};

/// Output of a formatter command beyond this is refused.
const MAX_OUTPUT: u64 = crate::client::MAX_DOCUMENT_BYTES;

/// What formatting one written file came to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    /// Rewritten; the 1-based lines that differ from what was written.
    Formatted {
        lines: (u32, u32),
    },
    Unchanged,
    /// Formatting went wrong; the file stays as written.
    Failed(String),
    /// The file changed on disk while it was formatted (another writer):
    /// left as that writer made it.
    ChangedMeanwhile,
    /// No formatter for the file (a standing reason, said once per run).
    NotFormatted(String),
}

/// One file's formatting, as the wrapper reports it.
#[derive(Debug, Clone)]
pub(crate) struct FileFormat {
    /// What formatted it: a catalog id, or the command as run.
    pub by: String,
    pub outcome: Outcome,
    /// When a server formatted: its id, and the text it had before the
    /// written text was sent to it (the lines a write changed are judged
    /// from it, not from the unformatted text).
    pub(crate) server_before: Option<(String, Option<String>)>,
}

impl FileFormat {
    /// The line of the tool's answer; `shown`: the file as the model names it.
    pub(crate) fn render(&self, shown: &str) -> String {
        let by = &self.by;
        // What formatted it, when something did.
        let by_whom = if by.is_empty() {
            String::new()
        } else {
            format!(" ({by})")
        };
        match &self.outcome {
            Outcome::Formatted { lines: (a, b) } => {
                let lines = if a == b {
                    format!("line {a}")
                } else {
                    format!("lines {a}-{b}")
                };
                format!(
                    "lsp: format on write: {shown} formatted by {by} ({lines} differ from what you wrote; read it before editing it again)"
                )
            }
            Outcome::Unchanged => format!("lsp: format on write: {shown} unchanged{by_whom}"),
            Outcome::Failed(why) => {
                format!(
                    "lsp: format on write: {shown} failed{by_whom}: {why}; the file stays as written"
                )
            }
            Outcome::ChangedMeanwhile => format!(
                "lsp: format on write: {shown} failed{by_whom}: {CHANGED_MEANWHILE}; it is left as it is now, not formatted"
            ),
            Outcome::NotFormatted(why) => {
                format!("lsp: format on write: {shown} not formatted: {why}")
            }
        }
    }

    /// `formatted`, `unchanged` or `failed: why`, for the structured answer.
    pub(crate) fn word(&self) -> String {
        match &self.outcome {
            Outcome::Formatted { .. } => "formatted".into(),
            Outcome::Unchanged => "unchanged".into(),
            Outcome::Failed(why) | Outcome::NotFormatted(why) => format!("failed: {why}"),
            Outcome::ChangedMeanwhile => format!("failed: {CHANGED_MEANWHILE}"),
        }
    }
}

/// Format the written file `path` (language `language_id`) as `setting`
/// says; `checkers`: its server and linters, in order. `None`: it is gone.
pub(crate) async fn format_file(
    sup: &LspSupervisor,
    path: &Path,
    setting: &FormatSetting,
    checkers: &[Checker],
) -> Option<FileFormat> {
    let ws = sup.workspace();
    let written = match read_document(ws, path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            return Some(FileFormat {
                by: String::new(),
                outcome: Outcome::Failed(format!("cannot read it: {e}")),
                server_before: None,
            })
        }
    };
    let bound = setting.timeout();
    let (by, formatted, server_before) = match &setting.command {
        Some(command) => {
            let shown = command_line(command, &sup.rel(path));
            let run = tokio::time::timeout(bound, run_formatter(sup, path, command, &written));
            let formatted = match run.await {
                Ok(r) => r,
                Err(_) => Err(format!(
                    "it did not finish within {} ms and was killed",
                    bound.as_millis()
                )),
            };
            (shown.join(" "), formatted, None)
        }
        None => match server_format(sup, path, setting, checkers, &written, bound).await {
            Ok((by, formatted, before)) => (by.clone(), formatted, Some((by, before))),
            Err(why) => {
                return Some(FileFormat {
                    by: String::new(),
                    outcome: Outcome::NotFormatted(why),
                    server_before: None,
                })
            }
        },
    };
    let outcome = match formatted {
        Err(why) => Outcome::Failed(why),
        Ok(text) if text == written => Outcome::Unchanged,
        Ok(text) => match write_back(sup, path, &written, &text) {
            Ok(true) => Outcome::Formatted {
                lines: changed_lines(&written, &text),
            },
            Ok(false) => Outcome::ChangedMeanwhile,
            Err(why) => Outcome::Failed(why),
        },
    };
    Some(FileFormat {
        by,
        outcome,
        server_before,
    })
}

const CHANGED_MEANWHILE: &str = "the file changed while it was formatted";

/// Replace the file with its formatted text (`true`), unless it no longer
/// holds what was formatted (`false`: another writer came between).
fn write_back(
    sup: &LspSupervisor,
    path: &Path,
    written: &str,
    formatted: &str,
) -> Result<bool, String> {
    let ws = sup.workspace();
    match read_document(ws, path) {
        Ok(now) if now == written => {}
        Ok(_) => return Ok(false),
        Err(e) => return Err(format!("cannot read it again: {e}")),
    }
    ws.dir()
        .write(path, formatted.as_bytes())
        .map(|()| true)
        .map_err(|e| format!("cannot write the formatted text: {e}"))
}

/// The command with `{file}` replaced by the file's path from the root.
fn command_line(command: &[String], rel: &str) -> Vec<String> {
    command.iter().map(|a| a.replace("{file}", rel)).collect()
}

/// Run a formatter command: `text` on stdin, the formatted text on stdout.
async fn run_formatter(
    sup: &LspSupervisor,
    path: &Path,
    command: &[String],
    text: &str,
) -> Result<String, String> {
    let root = sup.workspace().root();
    let line = command_line(command, &sup.rel(path));
    let name = &line[0];
    let local = catalog::local_bin_dirs(root, root);
    let program = catalog::resolve_program(name, root, &local, sup.path_env()).ok_or_else(|| {
        format!("`{name}` is not installed: looked in .venv/bin, venv/bin, node_modules/.bin and on $PATH")
    })?;
    let mut spec = ChildSpec::new(&program)
        .args(&line[1..])
        .cwd(root)
        .stdin(Io::Pipe)
        .stdout(Io::Pipe)
        .stderr(Io::Pipe);
    if let Some(p) = sup.path_env() {
        spec = spec.env("PATH", p);
    }
    let mut child = spec.spawn().map_err(|e| format!("cannot start it: {e}"))?;
    let mut stdin = child.stdin.take().expect("piped");
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let input = text.as_bytes().to_vec();
    let feed = async move {
        // A formatter that exits without reading all of it is judged by
        // its exit status, not by the broken pipe.
        let _ = stdin.write_all(&input).await;
        drop(stdin);
    };
    let (mut o, mut e) = (Vec::new(), Vec::new());
    let mut out_capped = (&mut out).take(MAX_OUTPUT + 1);
    let mut err_capped = (&mut err).take(64 * 1024);
    let ((), ro, re) = tokio::join!(
        feed,
        out_capped.read_to_end(&mut o),
        err_capped.read_to_end(&mut e)
    );
    ro.and(re)
        .map_err(|x| format!("cannot read its output: {x}"))?;
    let status = child.wait().await.map_err(|e| e.to_string())?;
    if !status.success() {
        let stderr = String::from_utf8_lossy(&e);
        let tail: Vec<&str> = stderr.trim().lines().rev().take(3).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        let said = if tail.is_empty() {
            String::new()
        } else {
            format!(": {}", tail.join(" | "))
        };
        return Err(format!(
            "it ended with {}{said}",
            tool_core::process::signals::describe_exit(status)
        ));
    }
    if o.len() as u64 > MAX_OUTPUT {
        return Err("it printed more than a document may hold".into());
    }
    if o.is_empty() && !text.is_empty() {
        return Err(
            "it printed nothing (a formatter command reads the file on stdin and prints all of it formatted)"
                .into(),
        );
    }
    String::from_utf8(o).map_err(|_| "it printed text that is not UTF-8".into())
}

/// Format through a server: the named one (`setting.server`) or the first
/// of the file's checkers that offers `textDocument/formatting`. `Err`: no
/// server can (the standing reason). `Ok`: the server, the formatted text
/// or why not, and the text it had for the file before.
async fn server_format(
    sup: &LspSupervisor,
    path: &Path,
    setting: &FormatSetting,
    checkers: &[Checker],
    written: &str,
    bound: Duration,
) -> Result<(String, Result<String, String>, Option<String>), String> {
    let mut without = Vec::new();
    let mut named_seen = false;
    for checker in checkers {
        if setting.server.as_ref().is_some_and(|s| *s != checker.id) {
            continue;
        }
        named_seen = true;
        let target = match checker.target(sup).await {
            Ok(t) => t,
            Err(why) => {
                without.push(format!("{} cannot start ({})", checker.id, why.reason()));
                continue;
            }
        };
        let client = &target.client;
        if !client.has_capability("documentFormattingProvider") {
            without.push(format!(
                "{} ({}) has no formatter",
                checker.id,
                target.slot.display()
            ));
            continue;
        }
        let uri = file_uri(path);
        let before = client.doc(&uri).await.map(|d| d.text);
        let doc = client
            .sync_text(path, &target.language_id, written.to_string())
            .await;
        let params = json!({
            "textDocument": {"uri": uri},
            "options": formatting_options(&doc.text),
        });
        let formatted = match client
            .request_as::<Option<Vec<TextEdit>>>(Formatting::METHOD, params, bound)
            .await
        {
            Ok(None) => Ok(doc.text.clone()),
            Ok(Some(edits)) => apply_text_edits(&doc.text, &edits, client.encoding),
            Err(RequestError::Malformed { error, .. }) => Err(format!(
                "it answered with something other than text edits ({error})"
            )),
            Err(e) => Err(e.to_string()),
        };
        return Ok((checker.id.clone(), formatted, before));
    }
    if let Some(name) = &setting.server {
        if !named_seen {
            let ids: Vec<&str> = checkers.iter().map(|c| c.id.as_str()).collect();
            return Err(format!(
                "server `{name}` does not serve this file (its servers: {})",
                ids.join(", ")
            ));
        }
    }
    Err(format!(
        "{}; name a formatter command in [lsp.format_on_write]",
        without.join("; ")
    ))
}

/// FormattingOptions from the text's own indentation: tabs when a line
/// starts with one, else its smallest indent of 2, 3, 4 or 8 spaces (4 when
/// none).
pub(crate) fn formatting_options(text: &str) -> Value {
    let tabs = text.lines().any(|l| l.starts_with('\t'));
    let smallest = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches(' ').len())
        .filter(|&n| n > 0)
        .min();
    let size = smallest.filter(|n| [2, 3, 4, 8].contains(n)).unwrap_or(4);
    json!({"tabSize": size, "insertSpaces": !tabs})
}

/// `text` with the server's TextEdits applied (all against the same text;
/// overlapping edits are refused).
pub(crate) fn apply_text_edits(
    text: &str,
    edits: &[TextEdit],
    enc: PositionEncoding,
) -> Result<String, String> {
    let mut spans = Vec::with_capacity(edits.len());
    for e in edits {
        let (from, to) = (e.range.start, e.range.end);
        let start = position::offset_of(text, from.line, from.character, enc);
        let end = position::offset_of(text, to.line, to.character, enc);
        if end < start {
            return Err("a text edit ends before it starts".into());
        }
        spans.push((start, end, e.new_text.as_str()));
    }
    // From the end, so earlier offsets stay valid; edits at one point keep
    // their order.
    spans.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    for w in spans.windows(2) {
        if w[1].1 > w[0].0 {
            return Err("two of its edits overlap".into());
        }
    }
    let mut out = text.to_string();
    for (start, end, new) in spans {
        out.replace_range(start..end, new);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(l1: u32, c1: u32, l2: u32, c2: u32, new: &str) -> TextEdit {
        serde_json::from_value(json!({"range": {"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}}, "newText": new})).unwrap()
    }

    #[test]
    fn text_edits_apply_against_the_original_text() {
        let text = "x=1\ndef f( a ):\n  return a\n";
        let edits = [
            edit(0, 1, 0, 2, " = "),
            edit(1, 6, 1, 9, "a"),
            edit(2, 0, 2, 2, "    "),
        ];
        assert_eq!(
            apply_text_edits(text, &edits, PositionEncoding::Utf16).unwrap(),
            "x = 1\ndef f(a):\n    return a\n"
        );
        let overlapping = [edit(0, 0, 0, 3, "a"), edit(0, 2, 0, 3, "b")];
        assert_eq!(
            apply_text_edits(text, &overlapping, PositionEncoding::Utf16),
            Err("two of its edits overlap".into())
        );
    }

    #[test]
    fn formatting_options_follow_the_files_indentation() {
        assert_eq!(
            formatting_options("a\n  b\n    c\n"),
            json!({"tabSize": 2, "insertSpaces": true})
        );
        assert_eq!(
            formatting_options("func f() {\n\treturn\n}\n"),
            json!({"tabSize": 4, "insertSpaces": false})
        );
        assert_eq!(
            formatting_options("x = 1\n"),
            json!({"tabSize": 4, "insertSpaces": true})
        );
    }

    #[test]
    fn a_setting_is_a_bool_or_a_table_and_a_mistake_is_named() {
        let parse = |t: &str| -> Result<FormatSetting, String> {
            toml::from_str::<toml::Table>(t)
                .map_err(|e| e.to_string())
                .and_then(|v| {
                    v["x"]
                        .clone()
                        .try_into::<FormatSetting>()
                        .map_err(|e| e.to_string())
                })
        };
        assert_eq!(
            parse("x = true").unwrap(),
            FormatSetting {
                enabled: true,
                ..FormatSetting::default()
            }
        );
        let t = parse("x = { command = [\"ruff\", \"format\", \"-\"], timeout_ms = 5 }").unwrap();
        assert!(t.enabled);
        assert_eq!(t.timeout(), Duration::from_millis(5));
        let said = [
            parse("x = { comand = [\"ruff\"] }").unwrap_err(),
            parse("x = 3").unwrap_err(),
            parse("x = { command = [] }").unwrap_err(),
        ];
        expect_test::expect![[r#"
            [
                "unknown field `comand`, expected one of `enabled`, `command`, `server`, `timeout_ms`\n",
                "invalid type: integer `3`, expected true, false or a table with `command`, `server`, `timeout_ms`\n",
                "invalid length 0, expected a command line\n",
            ]
        "#]]
        .assert_debug_eq(&said);
    }
}
