//! The lines a change touched, hunk by hunk (a line diff of the text
//! before and after), never the span from its first changed line to its
//! last: a rename that touches lines 37 and 551 of a file changed nothing
//! between them. A write's own problems are judged and ordered by these
//! lines; its dependents' changed names are read from them.

use std::ops::Range;

/// One changed hunk: its 0-based line ranges in the old text and the new
/// (either may be empty: a pure insertion or deletion).
pub(crate) struct Hunk {
    pub(crate) old: Range<usize>,
    pub(crate) new: Range<usize>,
}

/// The changed hunks of `old` → `new`, in order.
pub(crate) fn hunks(old: &str, new: &str) -> Vec<Hunk> {
    similar::TextDiff::from_lines(old, new)
        .ops()
        .iter()
        .filter(|op| op.tag() != similar::DiffTag::Equal)
        .map(|op| Hunk {
            old: op.old_range(),
            new: op.new_range(),
        })
        .collect()
}

/// The 1-based lines of the new text that a change touched, (first, last)
/// per hunk; a deletion's is the line where the text closed up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChangedLines(Vec<(u32, u32)>);

impl ChangedLines {
    pub(crate) fn between(old: &str, new: &str) -> ChangedLines {
        let line = |i: usize| u32::try_from(i).unwrap_or(u32::MAX);
        ChangedLines(
            hunks(old, new)
                .into_iter()
                .map(|h| {
                    let first = line(h.new.start) + 1;
                    (first, line(h.new.end).max(first))
                })
                .collect(),
        )
    }

    /// Whether `line` (1-based) is one the change touched.
    pub(crate) fn contains(&self, line: u32) -> bool {
        self.0.iter().any(|&(a, b)| (a..=b).contains(&line))
    }

    /// Lines from `line` to the nearest touched one (0 on one, and when
    /// nothing changed).
    pub(crate) fn distance(&self, line: u32) -> u32 {
        self.0
            .iter()
            .map(|&(a, b)| a.saturating_sub(line).max(line.saturating_sub(b)))
            .min()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::ChangedLines;

    #[test]
    fn the_lines_a_change_touched_hunk_by_hunk() {
        let ten: String = (1..=10).map(|i| format!("l{i}\n")).collect();
        // What changed, the text before and after, the lines touched.
        type Case<'a> = (&'a str, &'a str, &'a str, &'a [(u32, u32)]);
        let cases: &[Case<'_>] = &[
            ("a replacement", "a\nb\nc\n", "a\nX\nY\nc\n", &[(2, 3)]),
            (
                "lines added at the top",
                "a\nb\n",
                "# 1\n# 2\na\nb\n",
                &[(1, 2)],
            ),
            ("a line added at the end", "a\nb\n", "a\nb\nc\n", &[(3, 3)]),
            (
                "a deletion: where the text closed up",
                "a\nb\nc\n",
                "a\nc\n",
                &[(2, 2)],
            ),
            (
                "two distant lines",
                &ten,
                &ten.replace("l2\n", "x\n").replace("l9\n", "y\n"),
                &[(2, 2), (9, 9)],
            ),
            ("nothing", "a\n", "a\n", &[]),
        ];
        for (what, old, new, want) in cases {
            assert_eq!(ChangedLines::between(old, new).0, *want, "{what}");
        }
        let two = ChangedLines(vec![(2, 2), (9, 9)]);
        let seen: Vec<(bool, u32)> = (1..=10)
            .map(|l| (two.contains(l), two.distance(l)))
            .collect();
        assert_eq!(
            seen,
            [
                (false, 1),
                (true, 0),
                (false, 1),
                (false, 2),
                (false, 3),
                (false, 3),
                (false, 2),
                (false, 1),
                (true, 0),
                (false, 1)
            ]
        );
    }
}
