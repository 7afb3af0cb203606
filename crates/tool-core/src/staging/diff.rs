//! The one diff a staged change is shown with: unified, one line of
//! context, capped in lines and in characters per line, moves first.

use super::change::{StagedChange, StagedContent};
use crate::files::TransactionError;
use crate::format::{plural, thousands};
use crate::fs::Root;

/// Diff lines a staged change's preview shows. With [`DIFF_LINE_CHARS`]
/// characters at most per line, this bounds a preview to about 50,000
/// characters whatever was changed (a minified file is one long line).
pub const PREVIEW_LINES: usize = 200;

impl StagedChange {
    /// A unified diff of the change, at most `max_lines` lines of at most
    /// [`DIFF_LINE_CHARS`] characters, ending with what was left out. A
    /// created file diffs against `/dev/null`, a deleted one to it. Of the
    /// files staged as replacements, only those shown are read (beneath
    /// `root`); one that changed since staging is an error.
    pub fn diff(&self, root: &Root, max_lines: usize) -> Result<String, TransactionError> {
        let mut shown: Vec<String> = Vec::new();
        let (mut hidden_lines, mut hidden_files) = (0, 0);
        for m in &self.moves {
            shown.push(format!("move {} → {}", m.from.display(), m.to.display()));
        }
        for f in &self.files {
            let from = if f.existed() {
                format!("a/{}", f.rel)
            } else {
                "/dev/null".into()
            };
            let to = if f.remains() {
                format!("b/{}", f.rel)
            } else {
                "/dev/null".into()
            };
            let room = max_lines.saturating_sub(shown.len());
            if let (0, StagedContent::Replaced { diff_lines, .. }) = (room, &f.content) {
                // Counted as the diff below would count it, without reading it.
                if *diff_lines > 0 {
                    hidden_lines += header(&from, &to).lines().count() + diff_lines;
                    hidden_files += 1;
                }
                continue;
            }
            let texts = f.texts(root)?;
            let text = similar::TextDiff::from_lines(
                texts.old.as_deref().unwrap_or(""),
                texts.new.as_deref().unwrap_or(""),
            )
            .unified_diff()
            .context_radius(DIFF_CONTEXT)
            .header(&from, &to)
            .to_string();
            let lines: Vec<&str> = text.lines().collect();
            if lines.len() > room {
                hidden_lines += lines.len() - room;
                hidden_files += 1;
            }
            shown.extend(lines.iter().take(room).map(|l| cap_diff_line(l)));
        }
        if hidden_lines > 0 {
            shown.push(format!(
                "… preview capped: {} in {} not shown (all of them are staged)",
                plural(hidden_lines, "diff line", "diff lines"),
                plural(hidden_files, "file", "files")
            ));
        }
        Ok(shown.join("\n"))
    }
}

/// Lines of context around each change in a diff: one, enough to place
/// it; the model reads the file for more.
const DIFF_CONTEXT: usize = 1;

/// The header a unified diff starts with, before its first hunk (and only
/// when it has one), as `similar` writes it.
fn header(from: &str, to: &str) -> String {
    format!("--- {from}\n+++ {to}\n")
}

/// Lines of `old` → `new`'s unified diff below its header, as
/// [`StagedChange::diff`] shows it; 0 when the texts are equal.
pub fn diff_body_lines(old: &str, new: &str) -> usize {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(DIFF_CONTEXT)
        .to_string()
        .lines()
        .count()
}

/// Characters shown of one diff line; the rest is counted.
pub const DIFF_LINE_CHARS: usize = 240;

fn cap_diff_line(line: &str) -> String {
    match line.char_indices().nth(DIFF_LINE_CHARS) {
        None => line.to_string(),
        Some((cut, _)) => format!(
            "{}… ({} more characters)",
            &line[..cut],
            thousands(line[cut..].chars().count())
        ),
    }
}
