//! Pattern compilation never panics and never overflows a stack, whatever
//! text it gets: arbitrary strings, code-like strings, and deep nesting with
//! and without brackets, in every language. (Issue 13's fuzz target for
//! pattern compilation, as a property test that runs in CI.)
//!
//! The properties run on the test harness's threads, which have the same
//! 2 MiB stack as the blocking threads the tools compile patterns on.

use proptest::prelude::*;
use tool_astgrep::nesting::{MAX_PATTERN_BRACKETS, MAX_PATTERN_TREE_DEPTH, MAX_YAML_BLOCK_DEPTH};
use tool_astgrep::pattern::MAX_TEXT_BYTES;
use tool_astgrep::{compile, Lang, PatternError};

fn lang(index: usize) -> Lang {
    let all: Vec<Lang> = Lang::all().collect();
    all[index % all.len()]
}

/// Every outcome is a pattern or one of the errors, and a refusal for depth
/// names a depth over its limit.
fn check(lang: Lang, text: &str) {
    match compile(lang, text) {
        Ok(p) => assert_eq!(p.lang, lang),
        Err(PatternError::TooLarge(n)) => assert!(n > MAX_TEXT_BYTES),
        Err(PatternError::TooManyBrackets(n)) => assert!(n > MAX_PATTERN_BRACKETS),
        Err(PatternError::TooDeep { depth, .. }) => assert!(depth > MAX_PATTERN_TREE_DEPTH),
        Err(PatternError::TooDeepYaml(depth)) => assert!(depth > MAX_YAML_BLOCK_DEPTH),
        Err(PatternError::Empty | PatternError::OnlySequence(_) | PatternError::Unparseable(_)) => {
        }
    }
}

proptest! {
    // 200 cases in the test suite; `cargo xtask fuzz` sets PROPTEST_CASES.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(200),
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_strings_compile_or_are_refused(text in any::<String>(), l in 0usize..64) {
        check(lang(l), &text);
    }

    #[test]
    fn code_like_strings_compile_or_are_refused(
        text in r#"[a-zA-Z0-9_$ (){}\[\];:,.=+*<>!&|"'\n\t-]{0,120}"#,
        l in 0usize..64,
    ) {
        check(lang(l), &text);
    }

    #[test]
    fn deep_brackets_are_refused_before_parsing(
        depth in 0usize..6000,
        inner in "[a-z$_ ,.+]{0,8}",
        kind in 0usize..3,
        l in 0usize..64,
    ) {
        let (open, close) = [("(", ")"), ("[", "]"), ("{", "}")][kind];
        let text = format!("f{}{inner}{}", open.repeat(depth), close.repeat(depth));
        check(lang(l), &text);
    }

    #[test]
    fn deep_nesting_without_brackets_is_refused_or_compiles(
        depth in 0usize..4000,
        op in prop::sample::select(vec!["a + ", "not ", "- ", "!", "a.", "* ", "await ", "x = "]),
        l in 0usize..64,
    ) {
        let text = format!("{}b", op.repeat(depth));
        check(lang(l), &text);
    }
}
