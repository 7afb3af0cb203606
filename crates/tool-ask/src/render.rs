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
/// type a number 1–2, or your own answer; s skips, d discusses instead
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
    if !card.question.is_empty() {
        out.push_str(&card.question);
        out.push('\n');
    }
    if let Some(c) = &card.context {
        out.push_str(&format!("  why: {c}\n"));
    }
    if card.questions.is_empty() {
        push_options(&mut out, &card.options);
        out.push_str(&hint(card));
        out.push('\n');
        return out;
    }
    let n = card.questions.len();
    for (k, q) in card.questions.iter().enumerate() {
        out.push_str(&format!("[{}/{n}] {} — {}\n", k + 1, q.header, q.question));
        push_options(&mut out, &q.options);
    }
    out.push_str("answer each question in turn; s skips the card, d discusses instead\n");
    out
}

fn push_options(out: &mut String, options: &[crate::CardOption]) {
    for (i, o) in options.iter().enumerate() {
        let mark = if o.recommended { " (recommended)" } else { "" };
        match &o.description {
            Some(d) => out.push_str(&format!("  {}. {}{mark} — {d}\n", i + 1, o.label)),
            None => out.push_str(&format!("  {}. {}{mark}\n", i + 1, o.label)),
        }
    }
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
    if card.secret {
        return "type the secret (it is not shown); s skips, d discusses instead".into();
    }
    let discuss = if matches!(card.kind, CardKind::Question) {
        ", d discusses instead"
    } else {
        ""
    };
    format!("{what}; s skips{discuss}")
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
            questions: Vec::new(),
            secret: false,
            expires_in: Duration::from_mins(1),
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
                "type a number 1–2, or your own answer; s skips, d discusses instead",
            ]
        );
    }
}

#[cfg(test)]
mod multi_tests {
    use super::*;
    use crate::{CardOption, CardQuestion, TargetSpace};
    use std::time::Duration;

    #[test]
    fn a_multi_question_card_lists_its_questions_with_the_recommendation() {
        let mut sqlite = CardOption::described("sqlite", "embedded");
        sqlite.recommended = true;
        let card = Card {
            number: 2,
            kind: CardKind::Question,
            target: TargetSpace::terminal(),
            question: "Setting up the cache".into(),
            context: None,
            options: vec![],
            allow_free_text: false,
            multi_select: false,
            questions: vec![
                CardQuestion {
                    id: "db".into(),
                    header: "Database".into(),
                    question: "Which database?".into(),
                    options: vec![sqlite, CardOption::new("postgres")],
                    multi: false,
                },
                CardQuestion {
                    id: "name".into(),
                    header: "Name".into(),
                    question: "What is the cache called?".into(),
                    options: vec![],
                    multi: false,
                },
            ],
            secret: false,
            expires_in: Duration::from_mins(1),
        };
        expect_test::expect![[r#"
            ── question #2 ─────────────────────────────
            Setting up the cache
            [1/2] Database — Which database?
              1. sqlite (recommended) — embedded
              2. postgres
            [2/2] Name — What is the cache called?
            answer each question in turn; s skips the card, d discusses instead
        "#]]
        .assert_eq(&render_card(&card));
    }
}
