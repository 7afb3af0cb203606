//! One-line excerpts of code and patterns for the text the model reads.
//!
//! The lowest module of the crate: it depends on nothing here, so the
//! pattern compiler, the search and the result formatting can all use it.
//! Invariant: an excerpt is one line; a cut (of the line or of later lines)
//! is always marked with `…`.

use tool_core::format::cap_chars;

/// The first line of `s`, at most `max` characters; `…` marks a cut (also
/// when later lines were dropped).
pub fn one_line(s: &str, max: usize) -> String {
    let mut lines = s.lines();
    let first = lines.next().unwrap_or("");
    let capped = cap_chars(first, max).into_owned();
    if lines.next().is_some() && !capped.ends_with('…') {
        format!("{capped} …")
    } else {
        capped
    }
}
