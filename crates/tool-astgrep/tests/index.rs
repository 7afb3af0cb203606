//! The run's search index never answers differently from a fresh search:
//! after writes through the tools, writes behind the run's back, deletions,
//! renames, a coarse clock, and under a budget too small to keep anything;
//! and ast_edit, which finds its files through the same index, stages what
//! it would stage without one.
//! Every indexed answer is compared whole (text and structured) with a
//! search without the index, and the match sets are spelled out.

use expect_test::expect;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, SystemTime};
use tool_astgrep::index::SearchIndex;
use tool_astgrep::ops::{self, EditRequest, FindRequest};
use tool_core::files::FileTransaction;
use tool_core::staging::{self, EditStore, Journal};
use tool_core::{CancellationToken, Workspace};

const A: &str = "import os\n\ndef f(x):\n    return isinstance(x, str)\n";
const B: &str = "def g(y):\n    if isinstance(y, int):\n        return len(y)\n    return 0\n";
const C: &str = "function h(z) { return foo(z, 1); }\nfoo(2, 3);\n";

fn project() -> (tempfile::TempDir, Workspace) {
    let dir = test_support::project::with_files(
        "index-",
        &[("pkg/a.py", A), ("pkg/b.py", B), ("web/c.js", C)],
    );
    let ws = Workspace::new(dir.path()).unwrap();
    (dir, ws)
}

fn ask(ws: &Workspace, index: Option<&SearchIndex>, pattern: &str) -> (String, Value) {
    let req = FindRequest {
        index,
        pattern: Some(pattern),
        ..Default::default()
    };
    let out = ops::find_with(ws, &req, &CancellationToken::new()).unwrap();
    (out.joined_text(), out.structured.unwrap_or(Value::Null))
}

/// The indexed answer, checked equal to a fresh one; its `path:line` list.
fn both(ws: &Workspace, index: &SearchIndex, pattern: &str) -> Vec<String> {
    let indexed = ask(ws, Some(index), pattern);
    let fresh = ask(ws, None, pattern);
    assert_eq!(indexed.0, fresh.0, "text of `{pattern}`");
    assert_eq!(indexed.1, fresh.1, "structured answer of `{pattern}`");
    let mut hits: Vec<String> = indexed.1["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| format!("{}:{}", m["path"].as_str().unwrap(), m["line"]))
        .collect();
    hits.sort();
    hits
}

const PATTERNS: &[&str] = &["isinstance($X, $T)", "len($A)", "foo($A, $B)"];

/// Every pattern's hits, indexed and fresh agreeing.
fn all(ws: &Workspace, index: &SearchIndex) -> Vec<Vec<String>> {
    PATTERNS.iter().map(|p| both(ws, index, p)).collect()
}

fn set_mtime(path: &Path, when: SystemTime) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(when).unwrap();
}

fn mtime(path: &Path) -> SystemTime {
    std::fs::metadata(path).unwrap().modified().unwrap()
}

#[test]
fn repeated_searches_answer_as_fresh_ones_and_reuse_what_they_kept() {
    let (_dir, ws) = project();
    let index = SearchIndex::default();
    let first = all(&ws, &index);
    assert_eq!(
        first,
        [
            vec!["pkg/a.py:4", "pkg/b.py:2"],
            vec!["pkg/b.py:3"],
            vec!["web/c.js:1", "web/c.js:2"],
        ]
    );
    let kept = index.stats();
    assert_eq!((kept.files, kept.texts), (3, 3));
    // Each file that passed a pre-filter was parsed whole (these modules
    // are too small to parse in parts); their trees are kept.
    assert_eq!(kept.trees, 3);
    assert_eq!(all(&ws, &index), first);
    assert_eq!(all(&ws, &index), first);
    let text = ask(&ws, Some(&index), "isinstance($X, $T)").0;
    expect![[r#"
        ast_grep  isinstance($X, $T)  [javascript, python] in . — 2 matches in 2 files (3 files searched)
        searched: javascript (1 file), python (2 files)
        pkg/a.py:4:12  isinstance(x, str)  T=str X=x  in f
        pkg/b.py:2:8  isinstance(y, int)  T=int X=y  in g"#]]
    .assert_eq(&text);
}

#[test]
fn writes_through_the_tools_are_seen_at_once_even_where_the_clock_cannot_tell() {
    let (dir, ws) = project();
    let a = dir.path().join("pkg/a.py");
    // An old file on a filesystem with a one-second clock: the index trusts
    // its stamp, so only the run's write log can say it changed.
    let old = SystemTime::now() - Duration::from_hours(1);
    set_mtime(&a, old);
    let index = SearchIndex::default().with_coarse_clock();
    assert_eq!(
        both(&ws, &index, "isinstance($X, $T)"),
        ["pkg/a.py:4", "pkg/b.py:2"]
    );
    // Same size, same second: its stamp is what it was.
    let same_size = A.replace("isinstance(x, str)", "isinstance(x, int)");
    let same_size = same_size.replace("import os", "import re");
    assert_eq!(same_size.len(), A.len());
    let renamed = same_size.replace("isinstance", "isinstanc_");
    ws.dir().write(&a, renamed.as_bytes()).unwrap();
    set_mtime(&a, old);
    assert_eq!(both(&ws, &index, "isinstance($X, $T)"), ["pkg/b.py:2"]);
    // Through a transaction, as ast_edit's accept and lsp_rename write.
    let mut tx = FileTransaction::new(ws.dir());
    tx.replace(
        a.clone(),
        renamed.into_bytes(),
        same_size.clone().into_bytes(),
    );
    tx.commit().unwrap();
    set_mtime(&a, old);
    assert_eq!(
        both(&ws, &index, "isinstance($X, $T)"),
        ["pkg/a.py:4", "pkg/b.py:2"]
    );
    assert!(ask(&ws, Some(&index), "isinstance($X, $T)")
        .0
        .contains("isinstance(x, int)"));
}

#[test]
fn writes_behind_the_runs_back_deletions_and_renames_are_seen() {
    let (dir, ws) = project();
    let index = SearchIndex::default();
    all(&ws, &index);
    let root = dir.path();
    // Another size.
    std::fs::write(root.join("web/c.js"), "foo(1, 2);\n").unwrap();
    // A new file.
    std::fs::write(root.join("pkg/d.py"), "len(q)\nisinstance(q, list)\n").unwrap();
    // Deleted.
    std::fs::remove_file(root.join("pkg/b.py")).unwrap();
    assert_eq!(
        all(&ws, &index),
        [
            vec!["pkg/a.py:4", "pkg/d.py:2"],
            vec!["pkg/d.py:1"],
            vec!["web/c.js:1"],
        ]
    );
    // Renamed, and a folder renamed.
    std::fs::rename(root.join("pkg/a.py"), root.join("pkg/e.py")).unwrap();
    std::fs::rename(root.join("web"), root.join("site")).unwrap();
    assert_eq!(
        all(&ws, &index),
        [
            vec!["pkg/d.py:2", "pkg/e.py:4"],
            vec!["pkg/d.py:1"],
            vec!["site/c.js:1"],
        ]
    );
    // A search from the root forgot the files it no longer finds.
    assert_eq!(index.stats().files, 3);
    // One of Python alone forgets no file of another language.
    std::fs::remove_file(root.join("pkg/d.py")).unwrap();
    let req = FindRequest {
        index: Some(&index),
        pattern: Some("len($A)"),
        language: Some("python"),
        ..Default::default()
    };
    ops::find_with(&ws, &req, &CancellationToken::new()).unwrap();
    assert_eq!(index.stats().files, 2);
    std::fs::write(root.join("pkg/d.py"), "len(q)\nisinstance(q, list)\n").unwrap();
    // Newly ignored.
    std::fs::write(root.join(".ignore"), "pkg/d.py\n").unwrap();
    assert_eq!(
        all(&ws, &index),
        [vec!["pkg/e.py:4"], vec![], vec!["site/c.js:1"]]
    );
}

#[test]
fn a_file_changed_within_its_clock_tick_is_checked_by_its_text() {
    let (dir, ws) = project();
    let b = dir.path().join("pkg/b.py");
    let index = SearchIndex::default().with_coarse_clock();
    assert_eq!(both(&ws, &index, "len($A)"), ["pkg/b.py:3"]);
    // Same size, and the mtime the stamp holds: only the text tells.
    let when = mtime(&b);
    let changed = B.replace("len(y)", "abs(y)");
    std::fs::write(&b, &changed).unwrap();
    set_mtime(&b, when);
    assert_eq!(both(&ws, &index, "len($A)"), Vec::<String>::new());
    assert_eq!(both(&ws, &index, "abs($A)"), ["pkg/b.py:3"]);
}

#[test]
fn a_tiny_budget_still_answers_right() {
    let (dir, ws) = project();
    let index = SearchIndex::with_budget_bytes(1);
    let first = all(&ws, &index);
    std::fs::write(dir.path().join("pkg/a.py"), "len(w)\n").unwrap();
    let second = all(&ws, &index);
    assert_eq!(first[1], ["pkg/b.py:3"]);
    assert_eq!(second[1], ["pkg/a.py:1", "pkg/b.py:3"]);
    let stats = index.stats();
    assert!(stats.bytes <= stats.budget, "{stats:?}");
    assert_eq!(stats.files, 0, "{stats:?}");
    assert!(stats.evictions.not_kept > 0, "{stats:?}");
    // A budget for texts but not trees: no tree is kept.
    let index = SearchIndex::with_budget_bytes(2_000);
    all(&ws, &index);
    all(&ws, &index);
    let stats = index.stats();
    assert!(stats.bytes <= stats.budget, "{stats:?}");
    assert_eq!((stats.trees, stats.texts), (0, 3), "{stats:?}");
}

/// Stage `pattern` → `rewrite` over the whole workspace with `index` (or
/// without one) in a store of its own; the answer's text and the store.
fn stage(
    ws: &Workspace,
    index: Option<&SearchIndex>,
    pattern: &str,
    rewrite: &str,
) -> (String, EditStore, tempfile::TempDir) {
    let journal = tempfile::tempdir().unwrap();
    let store = EditStore::open(Journal::at(journal.path(), ws));
    let req = EditRequest {
        index,
        pattern,
        rewrite: Some(rewrite),
        ..Default::default()
    };
    let out = ops::stage_with(ws, &store, &req, &CancellationToken::new()).unwrap();
    (out.joined_text(), store, journal)
}

/// The indexed ast_edit's preview, checked equal to one staged without the
/// index; its store, to accept it.
fn stage_both(
    ws: &Workspace,
    index: &SearchIndex,
    pattern: &str,
    rewrite: &str,
) -> (String, EditStore, tempfile::TempDir) {
    let indexed = stage(ws, Some(index), pattern, rewrite);
    let fresh = stage(ws, None, pattern, rewrite);
    assert_eq!(indexed.0, fresh.0, "`{pattern}` → `{rewrite}`");
    indexed
}

/// ast_edit finds its files and matches through the run's index, as
/// ast_grep does, and sees every write: one through the tools that the
/// clock cannot tell, its own accepted edit, and one behind the run's back.
#[test]
fn ast_edit_through_the_index_sees_every_write() {
    let (dir, ws) = project();
    let (a, b) = (dir.path().join("pkg/a.py"), dir.path().join("pkg/b.py"));
    // Old files on a filesystem with a one-second clock: the index trusts
    // their stamps, so only the run's write log can say they changed.
    let old = SystemTime::now() - Duration::from_hours(1);
    set_mtime(&a, old);
    set_mtime(&b, old);
    let index = SearchIndex::default().with_coarse_clock();
    // The edit walks, reads and parses through the index.
    let (first, ..) = stage_both(&ws, &index, "isinstance($X, $T)", "is_kind_of($X, $T)");
    let kept = index.stats();
    assert_eq!((kept.texts, kept.trees), (3, 2), "{kept:?}");
    assert!(first.contains("+    return is_kind_of(x, str)"), "{first}");
    // A write through the tools: same size, same second.
    let changed = A.replace("isinstance(x, str)", "isinstance(x, int)");
    ws.dir().write(&a, changed.as_bytes()).unwrap();
    set_mtime(&a, old);
    let (staged, store, _journal) =
        stage_both(&ws, &index, "isinstance($X, $T)", "is_kind_of($X, $T)");
    // A blank context line (one space) shown as `·`: a snapshot trims it.
    let staged = staged.replace("\n \n", "\n·\n");
    expect![[r#"
        (proposed) 2 replacements in 2 files … call resolve with edit_id "edit_1" and action "accept" to write them, or "discard"
        ast_edit  isinstance($X, $T)  →  is_kind_of($X, $T)  [javascript, python] in .; nothing is written until accepted
        searched: javascript (1 file), python (2 files)
        --- a/pkg/a.py
        +++ b/pkg/a.py
        @@ -3,2 +3,2 @@
         def f(x):
        -    return isinstance(x, int)
        +    return is_kind_of(x, int)
        --- a/pkg/b.py
        +++ b/pkg/b.py
        @@ -1,3 +1,3 @@
         def g(y):
        -    if isinstance(y, int):
        +    if is_kind_of(y, int):
                 return len(y)"#]]
    .assert_eq(&staged);
    // Its accept writes through a transaction: the next edit sees it.
    staging::resolve(&store, "edit_1", true).unwrap();
    set_mtime(&a, old);
    set_mtime(&b, old);
    let (none, ..) = stage_both(&ws, &index, "isinstance($X, $T)", "is_kind_of($X, $T)");
    assert!(none.contains("no match"), "{none}");
    let (back, ..) = stage_both(&ws, &index, "is_kind_of($X, $T)", "isinstance($X, $T)");
    assert!(back.contains("2 replacements in 2 files"), "{back}");
    // Behind the run's back (another size): seen by its stamp.
    std::fs::write(&b, "is_kind_of(z, bytes)\n").unwrap();
    let (behind, ..) = stage_both(&ws, &index, "is_kind_of($X, $T)", "isinstance($X, $T)");
    assert!(behind.contains("+isinstance(z, bytes)"), "{behind}");
    assert!(behind.contains("2 replacements in 2 files"), "{behind}");
}
