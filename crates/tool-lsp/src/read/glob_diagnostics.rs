//! Op `diagnostics` on a glob (`"src/**/*.py"`): each matching file's
//! diagnostics, as one-file `diagnostics` gives them, for at most
//! [`GLOB_FILES_CAP`] files.
//!
//! Invariants:
//! - The glob is matched the way `.gitignore` lines are (a pattern without
//!   `/` matches a file name at any depth), below the workspace root, with
//!   ignored and hidden files left out; files are taken in path order, so
//!   the same glob checks the same files.
//! - More matches than the cap: the answer says "showing 20 of 57 files —
//!   narrow the glob"; never a silent cut.
//! - A file no catalog entry serves is named as such; a file whose server
//!   fails is named with why, and the other files are still answered.
//! - Only language servers answer (as for one file): no project build runs,
//!   so a glob is not project-wide checking and is allowed on the read
//!   surface, unlike `"*"`.

use crate::args::{LspArgs, Op};
use crate::read::file_diagnostics::file_diagnostics;
use crate::supervisor::{LspSupervisor, Timeouts};
use futures::StreamExt;
use tool_core::format::plural;
use tool_core::{ToolError, ToolOutput};

/// Files one glob call checks.
pub(crate) const GLOB_FILES_CAP: usize = 20;
/// Files asked at once.
const PARALLEL_FILES: usize = 4;
/// Entries the walk looks at before it stops counting.
const WALK_BOUND: usize = 200_000;

/// Whether `file` is a glob (and not `"*"`, the project checker).
pub(crate) fn is_glob(file: &str) -> bool {
    file != "*" && file.contains(['*', '?', '[', '{'])
}

/// The workspace files matching `glob`, in path order, and whether the walk
/// stopped at its bound before seeing every file.
fn matching_files(sup: &LspSupervisor, glob: &str) -> Result<(Vec<String>, bool), ToolError> {
    let root = sup.workspace().root();
    let mut b = ignore::overrides::OverrideBuilder::new(root);
    b.add(glob)
        .map_err(|e| ToolError::bad_args(format!("`{glob}` is not a valid glob: {e}")))?;
    let over = b
        .build()
        .map_err(|e| ToolError::bad_args(format!("`{glob}` is not a valid glob: {e}")))?;
    let mut files = Vec::new();
    let mut seen = 0;
    let mut bounded = false;
    for entry in ignore::WalkBuilder::new(root)
        .overrides(over)
        .sort_by_file_path(std::cmp::Ord::cmp)
        .build()
        .flatten()
    {
        seen += 1;
        if seen > WALK_BOUND {
            bounded = true;
            break;
        }
        if entry.file_type().is_some_and(|t| t.is_file()) {
            files.push(sup.rel(entry.path()));
        }
    }
    Ok((files, bounded))
}

/// `diagnostics` for every file matching `glob`, at most [`GLOB_FILES_CAP`].
pub(crate) async fn run(
    sup: &LspSupervisor,
    t: &Timeouts,
    glob: &str,
) -> Result<ToolOutput, ToolError> {
    if glob.starts_with('/') || glob.split('/').any(|c| c == "..") {
        return Err(ToolError::bad_args(format!(
            "`{glob}` reaches outside the workspace; give a glob relative to the workspace root, such as \"src/**/*.py\""
        )));
    }
    let (files, bounded) = matching_files(sup, glob)?;
    if files.is_empty() {
        return Err(ToolError::bad_args(format!(
            "no file in the workspace matches `{glob}` (ignored and hidden files are left out; a pattern without `/` matches a file name at any depth)"
        )));
    }
    let total = files.len();
    let checked: Vec<String> = files.into_iter().take(GLOB_FILES_CAP).collect();
    let (served, unserved): (Vec<String>, Vec<String>) = checked.iter().cloned().partition(|f| {
        sup.catalog()
            .for_file(&sup.workspace().root().join(f))
            .is_some()
    });
    let answers: Vec<(String, Result<ToolOutput, ToolError>)> =
        futures::stream::iter(served.into_iter().map(|f| async move {
            let args = LspArgs {
                op: Op::Diagnostics,
                file: Some(f.clone()),
                line: None,
                symbol: None,
                occurrence: None,
                query: None,
                detail: None,
                timeout_seconds: None,
            };
            let answer = file_diagnostics(sup, t, &args).await;
            (f, answer)
        }))
        .buffered(PARALLEL_FILES)
        .collect()
        .await;
    let mut blocks = Vec::new();
    let mut clean = Vec::new();
    let mut failed = Vec::new();
    for (file, answer) in answers {
        match answer {
            Ok(out) => {
                let text = out.joined_text();
                let mut lines = text.lines();
                let head = lines.next().unwrap_or("");
                let body: Vec<&str> = lines.collect();
                if body.first() == Some(&"no errors or warnings") {
                    clean.push(file);
                } else {
                    blocks.push(
                        head.trim_start_matches("lsp diagnostics")
                            .trim()
                            .to_string(),
                    );
                    blocks.extend(body.into_iter().map(str::to_string));
                }
            }
            Err(e) => failed.push(format!("{file}: {e}")),
        }
    }
    let with_problems = checked.len() - clean.len() - unserved.len() - failed.len();
    let counted = if bounded {
        format!("at least {total}")
    } else {
        total.to_string()
    };
    let mut out = vec![format!(
        "lsp diagnostics  {glob} — {} checked of {counted} matching, {} with errors or warnings",
        plural(checked.len(), "file", "files"),
        with_problems
    )];
    if total > checked.len() || bounded {
        out.push(format!(
            "showing {} of {counted} files — narrow the glob",
            checked.len()
        ));
    }
    out.extend(blocks);
    if !clean.is_empty() {
        out.push(format!("no errors or warnings: {}", clean.join(", ")));
    }
    if !unserved.is_empty() {
        out.push(format!(
            "no language server for: {} (not checked)",
            unserved.join(", ")
        ));
    }
    out.extend(failed);
    Ok(ToolOutput::text(out.join("\n")))
}
