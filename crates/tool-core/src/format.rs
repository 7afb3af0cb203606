//! Output shaping every tool shares: capped lists that say how many more
//! there were and how to narrow, capped strings cut on a char boundary.

use std::borrow::Cow;

/// Keep the first `cap` items; when some were left out, the returned note
/// reads "… showing CAP of TOTAL — NARROW".
pub fn cap_list<T>(mut items: Vec<T>, cap: usize, narrow: &str) -> (Vec<T>, Option<String>) {
    let total = items.len();
    if total <= cap {
        return (items, None);
    }
    items.truncate(cap);
    (items, Some(capped_note(cap, total, narrow)))
}

/// The note for a capped list whose full size is known.
pub fn capped_note(shown: usize, total: usize, narrow: &str) -> String {
    if narrow.is_empty() {
        format!("… showing {shown} of {total} ({} more)", total - shown)
    } else {
        format!(
            "… showing {shown} of {total} ({} more) — {narrow}",
            total - shown
        )
    }
}

/// At most `max` characters of `s`; a cut string ends with `…`.
pub fn cap_chars(s: &str, max: usize) -> Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => Cow::Borrowed(s),
        Some((i, _)) => {
            let cut = s[..i].char_indices().last().map_or(0, |(j, _)| j);
            Cow::Owned(format!("{}…", &s[..cut]))
        }
    }
}

/// At most `max` bytes of `s`, cut on a char boundary, and how many bytes were
/// dropped.
pub fn cap_bytes(s: &str, max: usize) -> (&str, usize) {
    if s.len() <= max {
        return (s, 0);
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    (&s[..end], s.len() - end)
}

/// `text` with every elapsed time under a minute (`0.3s`, `12.0s`: digits,
/// `.`, one digit, `s`, not inside a longer word) written `…s`, so tests in
/// any crate can compare answers that carry them exactly.
pub fn mask_elapsed(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let boundary = !out.ends_with(|c: char| c.is_alphanumeric() || c == '.');
        if c.is_ascii_digit() && boundary {
            let int = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            let tail = &rest[int..];
            let mut t = tail.chars();
            if t.next() == Some('.')
                && t.next().is_some_and(|d| d.is_ascii_digit())
                && t.next() == Some('s')
                && !t.next().is_some_and(char::is_alphanumeric)
            {
                out.push_str("…s");
                rest = &tail[3..];
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// A span in seconds as a person writes it: `300 s`, `1.5 s`, `0.3 s` (one
/// decimal when the span is not a whole number of seconds, so a sub-second
/// limit is never shown as `0 s`).
pub fn seconds(span: std::time::Duration) -> String {
    let secs = span.as_secs_f64();
    if secs >= 10.0 || span.subsec_millis() == 0 {
        format!("{secs:.0} s")
    } else {
        format!("{:.1} s", secs.max(0.1))
    }
}

/// `a, b, c` or `a, b, … (5 more)`.
pub fn list_capped(items: &[String], max: usize) -> String {
    if items.len() <= max {
        return items.join(", ");
    }
    format!(
        "{}, … ({} more)",
        items[..max].join(", "),
        items.len() - max
    )
}

/// `n thing` or `n things`.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

/// `n` with a comma between groups of three digits: `10,485,760`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn seconds_keep_a_decimal_only_when_they_need_one() {
        use std::time::Duration;
        let shown: Vec<String> = [0, 40, 300, 1500, 2000, 299_999, 120_400]
            .into_iter()
            .map(|ms| super::seconds(Duration::from_millis(ms)))
            .collect();
        assert_eq!(
            shown,
            ["0 s", "0.1 s", "0.3 s", "1.5 s", "2 s", "300 s", "120 s"]
        );
    }

    use super::*;

    #[test]
    fn lists_are_capped_with_how_to_narrow() {
        let (kept, note) = cap_list((0..312).collect(), 50, "narrow with path");
        assert_eq!(kept.len(), 50);
        assert_eq!(
            note.unwrap(),
            "… showing 50 of 312 (262 more) — narrow with path"
        );
        let (kept, note) = cap_list(vec![1, 2], 50, "x");
        assert_eq!((kept.len(), note), (2, None));
    }

    #[test]
    fn strings_are_cut_on_char_boundaries() {
        assert_eq!(cap_chars("héllo wörld", 5), "héll…");
        assert_eq!(cap_chars("short", 5), "short");
        assert_eq!(cap_chars("🙂🙂🙂", 2), "🙂…");
        assert_eq!(cap_bytes("aé", 2), ("a", 2));
        assert_eq!(plural(1, "file", "files"), "1 file");
        assert_eq!(plural(3, "file", "files"), "3 files");
    }

    #[test]
    fn thousands_are_grouped() {
        let shown: Vec<String> = [0, 999, 1000, 65_536, 10_485_760]
            .into_iter()
            .map(thousands)
            .collect();
        assert_eq!(shown, ["0", "999", "1,000", "65,536", "10,485,760"]);
    }
}
