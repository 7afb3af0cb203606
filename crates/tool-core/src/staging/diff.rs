//! The one diff a staged change is shown with: unified, with the lines of
//! context the change was staged with ([`DiffContext`], one by default),
//! capped in lines and in characters per line, moves first.

use super::change::{StagedChange, StagedContent};
use crate::files::TransactionError;
use crate::format::{plural, thousands};
use crate::fs::Root;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer, Unexpected, Visitor};
use serde::Deserialize;
use std::borrow::Cow;

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
            .context_radius(self.diff_context.lines())
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

/// Lines of unchanged text shown around each change of a staged change's
/// diff: 0 to [`DiffContext::MAX`], one by default (enough to place a
/// change; the model reads the file for more). Chosen per call
/// (`diff_context`) or for the run (`[staging] diff_context`), and kept
/// with the change, so it is shown the same way every time.
///
/// Read from JSON or TOML as an integer; any other value (11, -1, "x") is
/// refused naming the accepted range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DiffContext(u8);

impl DiffContext {
    /// The most lines of context a diff may show around a change.
    pub const MAX: u8 = 10;
    /// What the accepted values are, as an error names them.
    pub const ACCEPTED: &'static str =
        "an integer from 0 to 10 (lines of context around each change; default 1)";

    /// `lines` of context, when it is 0 to [`Self::MAX`].
    pub fn new(lines: u64) -> Option<DiffContext> {
        u8::try_from(lines)
            .ok()
            .filter(|&n| n <= Self::MAX)
            .map(DiffContext)
    }

    pub fn lines(self) -> usize {
        usize::from(self.0)
    }
}

impl Default for DiffContext {
    fn default() -> Self {
        DiffContext(1)
    }
}

impl std::fmt::Display for DiffContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl<'de> Deserialize<'de> for DiffContext {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Lines;
        impl Visitor<'_> for Lines {
            type Value = DiffContext;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(DiffContext::ACCEPTED)
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<DiffContext, E> {
                DiffContext::new(n).ok_or_else(|| E::invalid_value(Unexpected::Unsigned(n), &self))
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<DiffContext, E> {
                u64::try_from(n)
                    .ok()
                    .and_then(DiffContext::new)
                    .ok_or_else(|| E::invalid_value(Unexpected::Signed(n), &self))
            }
        }
        d.deserialize_u64(Lines)
    }
}

impl JsonSchema for DiffContext {
    fn schema_name() -> Cow<'static, str> {
        "DiffContext".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "integer", "minimum": 0, "maximum": DiffContext::MAX})
    }
}

/// The header a unified diff starts with, before its first hunk (and only
/// when it has one), as `similar` writes it.
fn header(from: &str, to: &str) -> String {
    format!("--- {from}\n+++ {to}\n")
}

/// Lines of `old` → `new`'s unified diff below its header, with `context`,
/// as [`StagedChange::diff`] shows it; 0 when the texts are equal.
pub fn diff_body_lines(old: &str, new: &str, context: DiffContext) -> usize {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(context.lines())
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

#[cfg(test)]
mod tests {
    use super::DiffContext;
    use serde_json::json;

    /// Every value a call or a config may send: 0 to 10 taken, anything
    /// else refused naming the accepted range (as `parse_args` and
    /// `parse_section` pass the message on).
    #[test]
    fn diff_context_takes_0_to_10_and_names_the_range_otherwise() {
        let rows = [
            json!(0),
            json!(1),
            json!(10),
            json!(11),
            json!(-1),
            json!(1.5),
            json!("x"),
            json!(null),
        ];
        let said: Vec<String> = rows
            .iter()
            .map(|v| match serde_json::from_value::<DiffContext>(v.clone()) {
                Ok(c) => format!("{v} → {c}"),
                Err(e) => format!("{v} → {e}"),
            })
            .collect();
        expect_test::expect![[r#"
            0 → 0
            1 → 1
            10 → 10
            11 → invalid value: integer `11`, expected an integer from 0 to 10 (lines of context around each change; default 1)
            -1 → invalid value: integer `-1`, expected an integer from 0 to 10 (lines of context around each change; default 1)
            1.5 → invalid type: floating point `1.5`, expected an integer from 0 to 10 (lines of context around each change; default 1)
            "x" → invalid type: string "x", expected an integer from 0 to 10 (lines of context around each change; default 1)
            null → invalid type: null, expected an integer from 0 to 10 (lines of context around each change; default 1)"#]]
        .assert_eq(&said.join("\n"));
        let toml: toml::Value = toml::from_str("diff_context = 3").unwrap();
        assert_eq!(
            toml["diff_context"].clone().try_into::<DiffContext>().ok(),
            DiffContext::new(3)
        );
    }
}
