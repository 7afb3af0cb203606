//! A search holds what its answer shows, not every match: a capped search
//! keeps at most N matches whatever the tree holds and answers exactly as a
//! search keeping everything would; a rewrite over the file limit stops
//! the walk once the limit is passed, and says "at least".

mod support;

use expect_test::expect;
use std::path::PathBuf;
use support::run_with;
use tool_astgrep::collect::{Collector, FileResult, Keep};
use tool_astgrep::format::{self, Page};
use tool_astgrep::ops;
use tool_astgrep::rewrite::Rewriter;
use tool_astgrep::search::{self, MatchRecord, SearchOutcome};
use tool_astgrep::Lang;
use tool_core::{CancellationToken, Workspace};

/// A Rust file with `n` matches of `$X.unwrap()`, and, when `macro_body`,
/// one more inside a macro no grammar can read (an unsearched candidate).
fn rust_file(n: usize, macro_body: bool) -> String {
    let mut s = String::from("fn main() {\n");
    for i in 0..n {
        s.push_str(&format!("    let a{i} = v{i}.unwrap();\n"));
    }
    if macro_body {
        s.push_str("    my_macro! { weird tokens => w.unwrap() }\n");
    }
    s.push_str("}\n");
    s
}

/// 120 files in nested folders, 1 to 40 matches each (2,214 in all), every
/// seventh with a candidate, every eleventh with only a candidate.
fn tree() -> Vec<(String, String)> {
    (0..120)
        .map(|i| {
            let n = if i % 11 == 0 { 0 } else { 1 + (i * 7) % 40 };
            (
                format!("d{}/m{:03}.rs", i % 5, i),
                rust_file(n, i % 7 == 0 || n == 0),
            )
        })
        .collect()
}

fn search_with(ws: &Workspace, pattern: &str, keep: Keep) -> (search::Scope, SearchOutcome) {
    let mut scope = ops::scope(ws, pattern, None, Some("rust")).unwrap();
    scope.plan.keep = keep;
    let outcome = search::run(
        &scope.plan,
        ws.dir(),
        &scope.target,
        &CancellationToken::new(),
    )
    .unwrap();
    (scope, outcome)
}

#[test]
fn a_capped_search_holds_at_most_its_page_and_answers_the_same() {
    let run = run_with(&tree());
    let (_, all) = search_with(&run.ws, "$X.unwrap()", Keep::All);
    assert_eq!(all.total_matches(), 2214);
    assert_eq!(all.held_peak, 2214);
    for (skip, max) in [
        (0, 50),
        (0, 1),
        (37, 7),
        (2190, 50),
        (2213, 1000),
        (5000, 3),
    ] {
        let page = Page { skip, max };
        let (scope, capped) = search_with(&run.ws, "$X.unwrap()", Keep::First(skip + max));
        assert!(
            capped.held_peak <= skip + max,
            "held {} matches for a page ending at {}",
            capped.held_peak,
            skip + max
        );
        let held: usize = capped.files.iter().map(|f| f.matches.len()).sum();
        assert_eq!(held, (skip + max).min(2214));
        assert_eq!(
            format::find_text("$X.unwrap()", &scope, &capped, page),
            format::find_text("$X.unwrap()", &scope, &all, page),
            "skip {skip} max {max}"
        );
        assert_eq!(
            format::find_structured(&scope, &capped, page),
            format::find_structured(&scope, &all, page),
            "skip {skip} max {max}"
        );
    }
    let (scope, capped) = search_with(&run.ws, "$X.unwrap()", Keep::First(3));
    let page = Page { skip: 0, max: 3 };
    expect![[r#"
        ast_grep  $X.unwrap()  [rust] in . — 2214 matches in 109 files (120 files searched)
        d0/m005.rs:2:14  v0.unwrap()  X=v0  in main
        d0/m005.rs:3:14  v1.unwrap()  X=v1  in main
        d0/m005.rs:4:14  v2.unwrap()  X=v2  in main
        … showing 3 of 2214 matches in 109 files — narrow with path or a more specific pattern, or pass skip 3 for the next ones
        27 textual candidates inside macro invocations were not searched structurally: d0/m000.rs:2, d0/m035.rs:8, d0/m055.rs:2, d0/m070.rs:13, d0/m105.rs:18, d0/m110.rs:2, d1/m011.rs:2, d1/m021.rs:30, d1/m056.rs:35, d1/m066.rs:2, … (17 more)"#]].assert_eq(&format::find_text("$X.unwrap()", &scope, &capped, page));
}

fn record(line: usize) -> MatchRecord {
    MatchRecord {
        start: line * 10,
        end: line * 10 + 5,
        line,
        column: 1,
        text: format!("m{line}"),
        captures: Vec::new(),
        enclosing: None,
    }
}

fn file(rel: &str, lines: std::ops::Range<usize>) -> FileResult {
    FileResult {
        path: PathBuf::from(rel),
        rel: rel.to_string(),
        lang: Lang::from_id("rust").unwrap(),
        matches: lines.map(record).collect(),
        rewrite: None,
        unsearched: Vec::new(),
        parsed_in_parts: false,
    }
}

/// Files arriving last to first (each one displaces the window) never make
/// the collector hold more than N.
#[test]
fn the_collector_keeps_the_first_n_in_any_arrival_order() {
    let mut c = Collector::new(Keep::First(5));
    for i in (0..50).rev() {
        c.add(file(&format!("f{i:02}.rs"), 1..4));
        assert!(c.held() <= 5, "held {} after f{i:02}", c.held());
    }
    let got = c.finish();
    assert_eq!((got.total_matches, got.files_with_matches), (150, 50));
    let kept: Vec<String> = got
        .files
        .iter()
        .flat_map(|f| {
            f.matches
                .iter()
                .map(move |m| format!("{}:{}", f.rel, m.line))
        })
        .collect();
    expect![[r#"["f00.rs:1", "f00.rs:2", "f00.rs:3", "f01.rs:1", "f01.rs:2"]"#]]
        .assert_eq(&format!("{kept:?}"));
}

/// A rewrite that would change more files than the limit stops the walk
/// right after the limit is passed and holds none of the rewrites.
#[test]
fn a_rewrite_over_the_limit_stops_at_limit_plus_one() {
    let files: Vec<(String, String)> = (0..400)
        .map(|i| (format!("f{i:03}.rs"), rust_file(1, false)))
        .collect();
    let run = run_with(&files);
    let mut scope = ops::scope(&run.ws, "$X.unwrap()", None, Some("rust")).unwrap();
    let p = &scope.plan.patterns[0];
    scope.plan.rewriters = Some(vec![Rewriter::new("$X.expect(\"why\")", p)]);
    scope.plan.keep = Keep::Changes {
        limit: 10,
        allow_parse_errors: false,
    };
    let threads = scope.plan.threads;
    let out = search::run(
        &scope.plan,
        run.ws.dir(),
        &scope.target,
        &CancellationToken::new(),
    )
    .unwrap();
    assert_eq!(out.over_limit, Some(11));
    assert!(out.files.is_empty(), "the rewrites are dropped");
    assert!(!out.cancelled, "a stop is not a cancel");
    // Each other thread may finish the file it had begun.
    assert!(
        out.files_searched <= 11 + threads,
        "read {} of 400 files with {threads} threads",
        out.files_searched
    );
}
