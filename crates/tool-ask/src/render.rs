//! A card as plain text, for terminals and any text-only UI.

use crate::{Card, CardKind};

/// The card as lines of text, ending with the prompt hint.
///
/// ```text
/// ── question #1 ─────────────────
/// Which database should the cache use?
///   why: the schema migration depends on it
///   1. sqlite — embedded, no server
///   2. postgres
/// type a number, or your own answer; an empty line or s skips
/// ```
pub fn render_card(card: &Card) -> String {
    let title = match &card.kind {
        CardKind::Question => format!("question #{}", card.number),
        CardKind::Approval { tool, tier } => {
            format!("approval #{} ({tool}, {tier} tier)", card.number)
        }
    };
    let mut out = format!(
        "── {title} {}\n",
        "─".repeat(40usize.saturating_sub(title.len()))
    );
    out.push_str(&card.question);
    out.push('\n');
    if let Some(c) = &card.context {
        out.push_str(&format!("  why: {c}\n"));
    }
    for (i, o) in card.options.iter().enumerate() {
        match &o.description {
            Some(d) => out.push_str(&format!("  {}. {} — {d}\n", i + 1, o.label)),
            None => out.push_str(&format!("  {}. {}\n", i + 1, o.label)),
        }
    }
    out.push_str(&hint(card));
    out.push('\n');
    out
}

/// What the person may type.
pub(crate) fn hint(card: &Card) -> String {
    let choose = match (card.options.len(), card.multi_select) {
        (0, _) => None,
        (1, _) => Some("type 1".to_string()),
        (n, false) => Some(format!("type a number 1–{n}")),
        (n, true) => Some(format!("type one or more numbers 1–{n} (like 1,3)")),
    };
    let what = match (choose, card.allow_free_text) {
        (Some(c), true) => format!("{c}, or your own answer"),
        (Some(c), false) => c,
        (None, _) => "type your answer".to_string(),
    };
    format!("{what}; an empty line or s skips")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CardOption, TargetSpace};
    use std::time::Duration;

    #[test]
    fn a_card_reads_as_numbered_options() {
        let card = Card {
            number: 3,
            kind: CardKind::Question,
            target: TargetSpace::terminal(),
            question: "Which database?".into(),
            context: Some("the migration depends on it".into()),
            options: vec![
                CardOption::described("sqlite", "embedded"),
                CardOption::new("postgres"),
            ],
            allow_free_text: true,
            multi_select: false,
            expires_in: Duration::from_secs(60),
        };
        let text = render_card(&card);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("── question #3 ─"));
        assert_eq!(
            &lines[1..],
            &[
                "Which database?",
                "  why: the migration depends on it",
                "  1. sqlite — embedded",
                "  2. postgres",
                "type a number 1–2, or your own answer; an empty line or s skips",
            ]
        );
    }
}
