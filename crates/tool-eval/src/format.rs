//! A cell's run as the model reads it: a label line (language and the call's
//! description), notes about the kernel, the output, and for failures an
//! error that says what state is left and what to do next.

use crate::cell::{CellEnd, CellRun, StopReason};
use crate::config::Language;
use crate::output::Saver;
use crate::protocol::{CellStatus, Variable};
use serde_json::json;
use tool_core::{Content, ToolError, ToolOutput};

/// What the result says besides the output.
#[derive(Debug, Clone)]
pub struct ResultContext {
    pub language: Language,
    pub description: String,
    /// Lines about the kernel (started, restarted after a loss, reset).
    pub notes: Vec<String>,
    pub kernel_pid: u32,
    /// The kernel lost the variables of earlier cells before this one ran:
    /// it replaced a killed or dead one, or was reset.
    pub earlier_variables_lost: bool,
    /// The largest idle budget a call may ask for, in seconds.
    pub max_budget_secs: f64,
    /// Where a value or image over its cap is saved.
    pub scratch: std::sync::Arc<crate::scratch::Scratch>,
}

/// The label line of a result.
pub fn label(language: Language, description: &str) -> String {
    format!("eval {language}  {description}")
}

/// A duration as a model reads it: `2.3 s`, `42 s`.
pub fn secs(d: std::time::Duration) -> String {
    let s = d.as_secs_f64();
    if s < 10.0 {
        format!("{s:.1} s")
    } else {
        format!("{s:.0} s")
    }
}

/// Turn a cell's run into the tool's result.
pub fn result(run: CellRun, cx: &ResultContext) -> Result<ToolOutput, ToolError> {
    let mut preamble = label(cx.language, &cx.description);
    preamble.push('\n');
    for n in &cx.notes {
        preamble.push_str(n);
        preamble.push('\n');
    }
    if run.late_bytes > 0 {
        preamble.push_str(&format!(
            "({} bytes of an earlier cell's output arrived after that cell answered; they are dropped here)\n",
            run.late_bytes
        ));
    }
    if run.between_bytes > 0 {
        preamble.push_str(
            "(written after an earlier cell ended, by something it left running — a timer, a thread, a process:)\n",
        );
        let shown = String::from_utf8_lossy(&run.between);
        preamble.push_str(shown.trim_end_matches('\n'));
        preamble.push('\n');
        let more = run.between_bytes - run.between.len() as u64;
        if more > 0 {
            preamble.push_str(&format!("(… {more} more bytes of it dropped)\n"));
        }
        preamble.push_str("(this cell's output:)\n");
    }
    if run.undrained {
        preamble.push_str(
            "(the end of this cell's output did not arrive within 2 s of the cell's end; the output below may miss its end)\n",
        );
    }
    let empty = run.output.is_empty();
    let prefix = format!("{}-cell{}", cx.language, run.cell);
    let rendered = run.output.render(
        preamble,
        Saver {
            scratch: &cx.scratch,
            prefix: &prefix,
        },
    );
    let mut content = rendered.content;
    let (status, ok) = match &run.end {
        CellEnd::Finished {
            status: CellStatus::Ok,
            ..
        } => ("ok", true),
        CellEnd::Finished { .. } => ("error", false),
        CellEnd::Interrupted { .. } => ("interrupted", false),
        CellEnd::Killed { .. } => ("killed", false),
        CellEnd::Died { .. } => ("died", false),
    };
    let structured = json!({
        "language": cx.language.as_str(),
        "cell": run.cell,
        "status": status,
        "elapsed_ms": run.elapsed.as_millis() as u64,
        "kernel_pid": cx.kernel_pid,
        "bridged_calls": run.bridged_calls,
        "images": rendered.images,
        "dropped_output_bytes": rendered.dropped_bytes,
        "dropped_images": rendered.dropped_images,
        // What the text says: the earlier cells' variables are there, and
        // this cell's end did not take them.
        "variables_kept": !cx.earlier_variables_lost
            && matches!(run.end, CellEnd::Finished { .. } | CellEnd::Interrupted { .. }),
    });
    if ok {
        if empty {
            append_line(&mut content, "(no output)");
        }
        return Ok(ToolOutput {
            content,
            structured: Some(structured),
        });
    }
    // Errors carry text only: images made before the failure are named, not sent.
    let mut text = joined(&content);
    if rendered.images > 0 {
        text.push_str(&format!(
            "\n({} image(s) made before the failure are not shown)",
            rendered.images
        ));
    }
    let lang = cx.language;
    let budget_hint = format!(
        "If the work is slow but fine, pass a larger timeout_seconds (at most {:.0}) or have it print progress",
        cx.max_budget_secs
    );
    Err(match run.end {
        CellEnd::Finished { error, .. } => {
            if let Some(e) = error {
                text.push('\n');
                text.push_str(&e);
            }
            text.push_str(
                "\nThe cell raised an error; what it assigned before the error is kept. Fix the cell and run it again.",
            );
            ToolError::Failed(text)
        }
        CellEnd::Interrupted { why, error } => {
            if let Some(e) = error {
                text.push('\n');
                text.push_str(&e);
            }
            match why {
                StopReason::IdleBudget(b) => {
                    text.push_str(&format!(
                        "\nThe cell ran for {} with no output and no bridged call pending (its idle budget), \
                         so it was interrupted; the {lang} kernel and its variables survive. {budget_hint}.",
                        secs(b)
                    ));
                    ToolError::TimedOut(text)
                }
                StopReason::Cancelled => {
                    text.push_str(&format!(
                        "\nThe call was cancelled, so the cell was interrupted; the {lang} kernel and its variables survive."
                    ));
                    ToolError::Cancelled(text)
                }
            }
        }
        CellEnd::Killed { why } => {
            let what = match why {
                StopReason::IdleBudget(b) => format!(
                    "The cell ran for {} with no output and no bridged call pending (its idle budget) and was interrupted",
                    secs(b)
                ),
                StopReason::Cancelled => "The call was cancelled and the cell was interrupted".into(),
            };
            text.push_str(&format!(
                "\n{what}, but it did not stop, so the {lang} kernel was killed: its variables are lost and the \
                 next cell starts a fresh kernel. {budget_hint}."
            ));
            match why {
                StopReason::IdleBudget(_) => ToolError::TimedOut(text),
                StopReason::Cancelled => ToolError::Cancelled(text),
            }
        }
        CellEnd::Died { how } => {
            // Node says this on its way out while the interrupt worker's
            // inspector session is attached: the kernel's, not the cell's.
            const NODE_EXIT_NOTE: &str = "Waiting for the debugger to disconnect...";
            if lang.as_str() == "javascript" && text.trim_end().ends_with(NODE_EXIT_NOTE) {
                let kept = text.trim_end().len() - NODE_EXIT_NOTE.len();
                text.truncate(kept);
                text.truncate(text.trim_end().len());
            }
            text.push_str(&format!(
                "\nThe {lang} kernel died while running this cell ({how}): its variables are lost and the next \
                 cell starts a fresh kernel. Avoid what killed it (os._exit, process.exit, a crash in native code, \
                 running out of memory) and run the needed cells again."
            ));
            ToolError::Failed(text)
        }
    })
}

fn joined(content: &[Content]) -> String {
    let mut out = String::new();
    for c in content {
        if let Content::Text(t) = c {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(t);
        }
    }
    out.trim_end().to_string()
}

fn append_line(content: &mut Vec<Content>, line: &str) {
    match content.last_mut() {
        Some(Content::Text(t)) => {
            if !t.is_empty() && !t.ends_with('\n') {
                t.push('\n');
            }
            t.push_str(line);
        }
        _ => content.push(Content::Text(line.to_string())),
    }
}

/// What `inspect` answers: the kernel's variables as aligned columns (name,
/// type, shape/length/signature/value), with the count of those not listed.
pub fn variables(
    language: Language,
    description: &str,
    variables: &[Variable],
    total: usize,
) -> ToolOutput {
    let mut text = label(language, description);
    text.push('\n');
    if variables.is_empty() {
        text.push_str(&format!(
            "(the {language} kernel holds no variables of its own yet)"
        ));
    } else {
        text.push_str(&format!(
            "{} in the {language} kernel (modules, what was imported from \
             them, and _names are left out):\n",
            tool_core::format::plural(total, "variable", "variables")
        ));
        let name_w = variables
            .iter()
            .map(|v| v.name.chars().count())
            .max()
            .unwrap_or(0);
        let type_w = variables
            .iter()
            .map(|v| v.type_name.chars().count())
            .max()
            .unwrap_or(0);
        for v in variables {
            let line = format!(
                "{:name_w$}  {:type_w$}  {}",
                v.name,
                v.type_name,
                v.detail.as_deref().unwrap_or("")
            );
            text.push_str(line.trim_end());
            text.push('\n');
        }
        if total > variables.len() {
            text.push_str(&tool_core::format::capped_note(
                variables.len(),
                total,
                "look the others up by name in a cell",
            ));
        }
    }
    ToolOutput {
        content: vec![Content::Text(text.trim_end().to_string())],
        structured: Some(json!({
            "language": language.as_str(),
            "variables": variables,
            "total": total,
        })),
    }
}
