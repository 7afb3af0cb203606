//! How answers read: relative paths, 1-based lines with their source text,
//! capped values, durations in words.

use crate::session::{BreakpointStatus, Ending, StopInfo};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tool_core::Workspace;

/// Longest source line quoted under a location.
const SOURCE_LINE_CAP: usize = 200;

pub fn duration(d: Duration) -> String {
    let s = d.as_secs();
    if d < Duration::from_secs(1) {
        format!("{} ms", d.as_millis())
    } else if s < 120 {
        let tenths = d.as_millis() / 100;
        if tenths.is_multiple_of(10) {
            format!("{s} s")
        } else {
            format!("{}.{} s", tenths / 10, tenths % 10)
        }
    } else if s.is_multiple_of(60) {
        format!("{} min", s / 60)
    } else {
        format!("{} min {} s", s / 60, s % 60)
    }
}

/// A path as the model reads it: relative inside the workspace.
pub fn display_path(ws: &Workspace, path: &Path) -> String {
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    if ws.contains(&canonical) {
        ws.relative(&canonical)
    } else {
        path.to_string_lossy().into_owned()
    }
}

/// Line `line` (1-based) of a file, trimmed at the end and capped.
pub fn source_line(path: &Path, line: u64) -> Option<String> {
    if line == 0 {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let l = text.lines().nth(line as usize - 1)?;
    Some(tool_core::format::cap_chars(l.trim_end(), SOURCE_LINE_CAP).into_owned())
}

/// `   6 |     total = 0`
pub fn quoted_line(path: &Path, line: u64) -> Option<String> {
    source_line(path, line).map(|text| format!("{line:>5} | {text}"))
}

/// Where a frame is: `mean at avg.py:6`, or `__libc_start_main (no source)`.
/// The location is returned only with a line: debugpy reports line 0 for a
/// thread paused between line events, and that is said, not guessed.
pub fn frame_place(
    ws: &Workspace,
    frame: &dap_types::StackFrame,
) -> (String, Option<(PathBuf, u64)>) {
    let source = frame.source.as_ref();
    match (
        source.and_then(|s| s.path.as_ref()),
        source.and_then(|s| s.name.as_deref()),
    ) {
        (Some(p), _) if frame.line > 0 => {
            let path = PathBuf::from(p);
            (
                format!(
                    "{} at {}:{}",
                    frame.name,
                    display_path(ws, &path),
                    frame.line
                ),
                Some((path, frame.line)),
            )
        }
        (Some(p), _) => (
            format!(
                "{} at {} (the adapter gave no line; step_over to get one)",
                frame.name,
                display_path(ws, Path::new(p))
            ),
            None,
        ),
        (None, Some(name)) if frame.line > 0 => (
            format!("{} at {name}:{} (no path)", frame.name, frame.line),
            None,
        ),
        _ => (format!("{} (no source)", frame.name), None),
    }
}

/// The first line of a stop: `stopped (breakpoint) thread 1 in mean at avg.py:6`.
pub fn stop_headline(stop: &StopInfo, place: Option<&str>) -> String {
    let mut why = stop.reason.clone();
    if let Some(d) = stop
        .description
        .as_deref()
        .filter(|d| !d.eq_ignore_ascii_case(&stop.reason))
    {
        why = format!("{why}: {d}");
    }
    let mut line = format!("stopped ({why})");
    if let Some(t) = stop.thread_id {
        line.push_str(&format!(" thread {t}"));
    }
    if let Some(p) = place {
        line.push_str(&format!(" in {p}"));
    }
    if let Some(text) = stop.text.as_deref().filter(|t| !t.is_empty()) {
        line.push_str(&format!(" — {}", tool_core::format::cap_chars(text, 400)));
    }
    line
}

pub fn ending_headline(e: &Ending) -> String {
    e.describe()
}

/// One breakpoint per line: verified, moved, or why not.
pub fn breakpoint_lines(ws: &Workspace, file: &Path, statuses: &[BreakpointStatus]) -> Vec<String> {
    let rel = display_path(ws, file);
    statuses
        .iter()
        .map(|b| {
            let at = b.line.unwrap_or(b.requested);
            let mut s = format!("{rel}:{}", b.requested);
            if b.line.is_some_and(|l| l != b.requested) {
                s.push_str(&format!(" moved to line {at}"));
            }
            s.push_str(if b.verified {
                " verified"
            } else {
                " not verified"
            });
            if let Some(m) = b.message.as_deref().filter(|m| !m.is_empty()) {
                s.push_str(&format!(" ({m})"));
            }
            if let Some(src) = source_line(file, at as u64) {
                s.push_str(&format!("  | {}", src.trim()));
            }
            s
        })
        .collect()
}

/// The last `max` characters of output, marked as such when cut.
pub fn output_tail(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_string();
    }
    let skip = count - max;
    let tail: String = text.chars().skip(skip).collect();
    format!("… ({skip} earlier characters not shown)\n{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_words() {
        assert_eq!(duration(Duration::from_millis(850)), "850 ms");
        assert_eq!(duration(Duration::from_secs(30)), "30 s");
        assert_eq!(duration(Duration::from_millis(2500)), "2.5 s");
        assert_eq!(duration(Duration::from_secs(1800)), "30 min");
        assert_eq!(duration(Duration::from_secs(150)), "2 min 30 s");
    }

    #[test]
    fn stops_name_reason_thread_and_place() {
        let stop = StopInfo {
            stop_id: 1,
            reason: "breakpoint".into(),
            description: Some("breakpoint 1.1".into()),
            text: None,
            thread_id: Some(1),
        };
        assert_eq!(
            stop_headline(&stop, Some("mean at avg.py:6")),
            "stopped (breakpoint: breakpoint 1.1) thread 1 in mean at avg.py:6"
        );
        assert_eq!(
            output_tail("abcdef", 3),
            "… (3 earlier characters not shown)\ndef"
        );
    }
}
