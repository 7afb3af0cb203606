//! How answers read, in pieces every op uses: relative paths, 1-based lines
//! with their source text, capped output, durations in words. Nothing here
//! knows a session; whole answers are rendered by the ops' results.

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

/// Where a frame is: `mean at avg.py:6`, or `__libc_start_main (no source)`.
/// The location is returned only with a line: debugpy reports line 0 for a
/// thread paused between line events, and that is said, not guessed.
/// A function's name as the model reads it: a Rust symbol's hash suffix
/// (`crash::pick::h340449e6937631ed` → `crash::pick`) left out.
pub fn function_name(name: &str) -> String {
    // debugpy marks the frame a userUnhandled stop is paused at.
    let name = name.strip_suffix(" (Current frame)").unwrap_or(name);
    match name.rsplit_once("::h") {
        Some((head, hash)) if hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()) => {
            head.to_string()
        }
        _ => name.to_string(),
    }
}

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
                    function_name(&frame.name),
                    display_path(ws, &path),
                    frame.line
                ),
                Some((path, frame.line)),
            )
        }
        (Some(p), _) => (
            format!(
                "{} at {} (the adapter gave no line; step_over to get one)",
                function_name(&frame.name),
                display_path(ws, Path::new(p))
            ),
            None,
        ),
        (None, Some(name)) if frame.line > 0 => (
            format!(
                "{} at {name}:{} (no path)",
                function_name(&frame.name),
                frame.line
            ),
            None,
        ),
        _ => (format!("{} (no source)", function_name(&frame.name)), None),
    }
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
    fn rust_symbol_hashes_are_left_out() {
        assert_eq!(
            function_name("crash::pick::h340449e6937631ed"),
            "crash::pick"
        );
        assert_eq!(function_name("main.mean"), "main.mean");
        assert_eq!(function_name("a::hello"), "a::hello");
    }

    #[test]
    fn durations_read_as_words() {
        assert_eq!(duration(Duration::from_millis(850)), "850 ms");
        assert_eq!(duration(Duration::from_secs(30)), "30 s");
        assert_eq!(duration(Duration::from_millis(2500)), "2.5 s");
        assert_eq!(duration(Duration::from_mins(30)), "30 min");
        assert_eq!(duration(Duration::from_secs(150)), "2 min 30 s");
    }

    #[test]
    fn long_output_keeps_its_tail_and_says_so() {
        assert_eq!(
            output_tail("abcdef", 3),
            "… (3 earlier characters not shown)\ndef"
        );
        assert_eq!(output_tail("abc", 3), "abc");
    }
}
