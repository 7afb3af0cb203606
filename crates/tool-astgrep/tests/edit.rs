//! ast_edit and resolve end to end on copies of the real fixture files:
//! stage, preview, accept, and compare the files byte for byte; drift; a
//! failed write in the middle; a crash in the middle and its recovery.

mod support;

use expect_test::expect;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use support::{run_with, Run};
use tool_astgrep::ops;
use tool_core::staging::StagedContent;
use tool_core::staging::{self, Journal, Recovery};
use tool_core::staging::{EditStore, InjectedFault};
use tool_core::{CancellationToken, ToolError, ToolOutput, Workspace};

fn fixtures() -> PathBuf {
    test_support::fixtures::workspace_root().join("tests/fixtures/astgrep")
}

fn fixture_run(sub: &str) -> Run {
    let mut files = Vec::new();
    for e in std::fs::read_dir(fixtures().join(sub)).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        files.push((
            format!("{sub}/{name}"),
            std::fs::read_to_string(e.path()).unwrap(),
        ));
    }
    run_with(&files)
}

impl Run {
    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap()
    }
    fn original(rel: &str) -> String {
        std::fs::read_to_string(fixtures().join(rel)).unwrap()
    }
}

fn edit_id(out: &ToolOutput) -> String {
    out.structured.as_ref().unwrap()["edit_id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Stage, check nothing was written and the preview, accept, and compare
/// the file with `expected` byte for byte.
fn stage_preview_accept(
    sub: &str,
    file: &str,
    lang: &str,
    pattern: &str,
    rewrite: &str,
    replacements: usize,
    expected: &str,
) {
    let run = fixture_run(sub);
    let rel = format!("{sub}/{file}");
    let before = Run::original(&rel);
    let out = run.stage(pattern, rewrite, Some(lang)).unwrap();
    let text = out.joined_text();
    assert!(
        text.starts_with(&format!(
            "(proposed) {replacements} replacements in 1 file … call resolve with edit_id \"edit_1\""
        )),
        "{text}"
    );
    // The preview is the diff of exactly this file: its removed lines are
    // those of the file that the rewrite changes, its added lines their
    // replacements, in order.
    let heads: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("--- ") || l.starts_with("+++ "))
        .collect();
    assert_eq!(
        heads,
        [format!("--- a/{rel}"), format!("+++ b/{rel}")],
        "{text}"
    );
    let marked = |mark: char| -> Vec<&str> {
        text.lines()
            .filter(|l| l.starts_with(mark) && !heads.contains(l))
            .map(|l| &l[1..])
            .collect()
    };
    let only_in = |a: &str, b: &str| -> Vec<String> {
        let kept: Vec<&str> = b.lines().collect();
        a.lines()
            .filter(|l| !kept.contains(l))
            .map(String::from)
            .collect()
    };
    assert_eq!(marked('-'), only_in(&before, expected), "{text}");
    assert_eq!(marked('+'), only_in(expected, &before), "{text}");
    assert_eq!(run.read(&rel), before, "staging must not write");
    assert_eq!(edit_id(&out), "edit_1");

    let done = staging::resolve(&run.store, "edit_1", true).unwrap();
    assert_eq!(
        done.joined_text(),
        format!(
            "resolve edit_1: accepted — {} written to 1 file: {rel}",
            tool_core::format::plural(replacements, "replacement", "replacements")
        )
    );
    assert_eq!(run.read(&rel), expected, "{lang}: file after accept");
    // Other files of the folder are untouched.
    for e in std::fs::read_dir(run.root.join(sub)).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if name != file {
            let other = format!("{sub}/{name}");
            assert_eq!(run.read(&other), Run::original(&other));
        }
    }
    let again = staging::resolve(&run.store, "edit_1", true).unwrap_err();
    expect_test::expect!["refused: edit_1 was already accepted (1 file written); there is nothing left to resolve — call ast_edit again for a new change"].assert_eq(&again.to_string());
}

#[test]
fn python_rewrite_keeps_multi_line_indentation() {
    let before = Run::original("python/report.py");
    let expected = before
        .replace("        print(item)\n", "        log.info(item)\n")
        .replace(
            "        print(\"total:\",\n              len(items),\n              sep=\" \")\n",
            "        log.info(\"total:\",\n              len(items),\n              sep=\" \")\n",
        );
    assert_ne!(expected, before);
    assert!(expected.contains("\"print(items)\""), "strings stay");
    stage_preview_accept(
        "python",
        "report.py",
        "python",
        "print($$$ARGS)",
        "log.info($$$ARGS)",
        2,
        &expected,
    );
}

#[test]
fn rust_rewrite() {
    let before = Run::original("rust/lib.rs");
    let expected = before.replace(".unwrap()", ".expect(\"checked\")");
    stage_preview_accept(
        "rust",
        "lib.rs",
        "rust",
        "$X.unwrap()",
        "$X.expect(\"checked\")",
        3,
        &expected,
    );
}

#[test]
fn typescript_rewrite() {
    let before = Run::original("typescript/store.ts");
    // A `$$$` capture keeps the relative indentation of its lines, re-based
    // on the line of the match; the line break before its first item is not
    // part of it (the engine's rule, as in the ast-grep CLI).
    let expected = before.replace("console.log(", "logger.debug(").replace(
        "logger.debug(\n      \"refresh\",\n      force,\n    );",
        "logger.debug(\"refresh\",\n    force,);",
    );
    assert_ne!(expected, before.replace("console.log(", "logger.debug("));
    stage_preview_accept(
        "typescript",
        "store.ts",
        "typescript",
        "console.log($$$A)",
        "logger.debug($$$A)",
        2,
        &expected,
    );
}

#[test]
fn dart_rewrite_of_calls_not_the_declaration() {
    let before = Run::original("dart/holder.dart");
    let expected = before
        .replace("    dispose(controller);\n", "    controller.dispose();\n")
        .replace("    dispose(  other  );\n", "    other.dispose();\n");
    assert!(expected.contains("void dispose(Object? x) {}"));
    stage_preview_accept(
        "dart",
        "holder.dart",
        "dart",
        "dispose($X)",
        "$X.dispose()",
        2,
        &expected,
    );
}

#[test]
fn nested_matches_are_counted_and_left_for_a_rerun() {
    let run = run_with(&[("a.py", "foo(foo(foo(1)))\nfoo(2)\n".into())]);
    let out = run.stage("foo($X)", "bar($X)", None).unwrap();
    expect![[r#"
        (proposed) 2 replacements in 1 file … call resolve with edit_id "edit_1" and action "accept" to write them, or "discard"
        ast_edit  foo($X)  →  bar($X)  [python] in .; nothing is written until accepted
        searched: python (1 file)
        4 matches → 2 replacements (2 nested inside others, rerun to rewrite them)
        --- a/a.py
        +++ b/a.py
        @@ -1,2 +1,2 @@
        -foo(foo(foo(1)))
        -foo(2)
        +bar(foo(foo(1)))
        +bar(2)"#]].assert_eq(&out.joined_text());
    staging::resolve(&run.store, "edit_1", true).unwrap();
    assert_eq!(run.read("a.py"), "bar(foo(foo(1)))\nbar(2)\n");
    let out = run.stage("foo($X)", "bar($X)", None).unwrap();
    assert_eq!(edit_id(&out), "edit_2");
    staging::resolve(&run.store, "edit_2", true).unwrap();
    assert_eq!(run.read("a.py"), "bar(bar(foo(1)))\nbar(2)\n");
}

#[test]
fn a_rewrite_naming_an_unknown_metavariable_stages_nothing() {
    let run = run_with(&[("a.py", "foo(1)\n".into())]);
    let err = run.stage("foo($X)", "bar($Y)", None).unwrap_err();
    assert!(matches!(err, ToolError::BadArgs(_)), "{err}");
    expect!["bad arguments: the rewrite cannot be filled in: `$Y` is not a metavariable of the pattern; the pattern binds $X; nothing was staged"].assert_eq(&err.to_string());
    let err = staging::resolve(&run.store, "edit_1", true).unwrap_err();
    expect!["bad arguments: unknown edit_id `edit_1`; nothing is staged in this run — call ast_edit (or lsp_rename with `stage: true`) first"].assert_eq(&err.to_string());
}

#[test]
fn no_match_stages_nothing() {
    let run = run_with(&[("a.py", "x = 1\n".into())]);
    let out = run.stage("foo($X)", "bar($X)", None).unwrap();
    expect![[r#"
        ast_edit  foo($X)  →  bar($X)  [python] in .
        searched: python (1 file)
        no matches in 1 file; nothing staged"#]]
    .assert_eq(&out.joined_text());
    assert!(out.structured.unwrap()["edit_id"].is_null());
}

#[test]
fn ids_unknown_accepted_or_discarded_are_errors() {
    let run = run_with(&[("a.py", "foo(1)\n".into()), ("b.py", "foo(2)\n".into())]);
    run.stage("foo($X)", "bar($X)", None).unwrap();
    let d = staging::resolve(&run.store, "edit_1", false).unwrap();
    expect!["resolve edit_1: discarded — 2 replacements in 2 files dropped; nothing was written"]
        .assert_eq(&d.joined_text());
    assert_eq!(run.read("a.py"), "foo(1)\n");
    let errors: Vec<String> = [
        ("edit_1", true),
        ("edit_1", false),
        ("edit_9", true),
        (" ", true),
    ]
    .into_iter()
    .map(|(id, accept)| {
        staging::resolve(&run.store, id, accept)
            .unwrap_err()
            .to_string()
    })
    .collect();
    expect![[r#"
        [
            "refused: edit_1 was already discarded; nothing of it can be applied — call ast_edit again to stage it anew",
            "refused: edit_1 was already discarded; nothing of it can be applied — call ast_edit again to stage it anew",
            "bad arguments: unknown edit_id `edit_9`; nothing is staged in this run — call ast_edit (or lsp_rename with `stage: true`) first",
            "bad arguments: empty edit_id; pass the id an ast_edit result named, e.g. \"edit_1\"",
        ]
    "#]].assert_debug_eq(&errors);
}

#[test]
fn drift_rejects_the_whole_change_and_names_the_files() {
    let run = run_with(&[
        ("a.py", "foo(1)\n".into()),
        ("b.py", "foo(2)\n".into()),
        ("c.py", "foo(3)\n".into()),
    ]);
    run.stage("foo($X)", "bar($X)", None).unwrap();
    std::fs::write(run.root.join("b.py"), "foo(2)  # edited meanwhile\n").unwrap();
    let err = staging::resolve(&run.store, "edit_1", true).unwrap_err();
    assert!(matches!(err, ToolError::Refused(_)), "{err}");
    expect_test::expect!["refused: edit_1 rejected: 1 file changed since staging: b.py; nothing was written. Call ast_edit again to stage the change against the current content"].assert_eq(&err.to_string());
    assert_eq!(run.read("a.py"), "foo(1)\n");
    assert_eq!(run.read("b.py"), "foo(2)  # edited meanwhile\n");
    assert_eq!(run.read("c.py"), "foo(3)\n");
    let again = staging::resolve(&run.store, "edit_1", true).unwrap_err();
    expect_test::expect!["refused: edit_1 was rejected (1 file changed since staging: b.py); call ast_edit again to stage it against the current files"].assert_eq(&again.to_string());
    assert!(std::fs::read_dir(&run.journal).map_or(0, std::iter::Iterator::count) == 0);
}

/// A staged file replaced by a symlink (to a file with the very content it
/// was staged against) is refused, not replaced by a regular file; the
/// link and its target are left as they were.
#[test]
fn a_file_that_became_a_symlink_rejects_the_change() {
    let run = run_with(&[("a.py", "foo(1)\n".into()), ("b.py", "foo(2)\n".into())]);
    run.stage("foo($X)", "bar($X)", None).unwrap();
    let b = run.root.join("b.py");
    std::fs::rename(&b, run.root.join("b.orig")).unwrap();
    std::os::unix::fs::symlink(run.root.join("b.orig"), &b).unwrap();
    let err = staging::resolve(&run.store, "edit_1", true).unwrap_err();
    assert!(matches!(err, ToolError::Refused(_)), "{err}");
    assert_eq!(
        err.to_string(),
        "refused: edit_1 rejected: 1 file changed since staging: b.py; nothing was written. Call ast_edit again to stage the change against the current content"
    );
    assert_eq!(run.read("a.py"), "foo(1)\n");
    assert!(std::fs::symlink_metadata(&b)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(run.read("b.orig"), "foo(2)\n");
}

/// Makes one file unwritable for as long as it lives: `chattr +i` as root
/// (root ignores permission bits), read-only permissions otherwise.
struct Unwritable {
    path: PathBuf,
    immutable: bool,
}

impl Unwritable {
    fn new(path: &Path) -> Option<Unwritable> {
        use std::os::unix::fs::PermissionsExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        if root {
            let ok = std::process::Command::new("chattr")
                .arg("+i")
                .arg(path)
                .status()
                .is_ok_and(|s| s.success());
            return ok.then(|| Unwritable {
                path: path.to_path_buf(),
                immutable: true,
            });
        }
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o444)).unwrap();
        Some(Unwritable {
            path: path.to_path_buf(),
            immutable: false,
        })
    }
}

impl Drop for Unwritable {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        if self.immutable {
            let _ = std::process::Command::new("chattr")
                .arg("-i")
                .arg(&self.path)
                .status();
        } else {
            let _ = std::fs::set_permissions(&self.path, std::fs::Permissions::from_mode(0o644));
        }
    }
}

#[test]
fn a_failed_write_in_the_middle_changes_no_file() {
    let originals = [
        ("a.py", "foo(1)\n"),
        ("b.py", "foo(2)\n"),
        ("c.py", "foo(3)\n"),
    ];
    let run = run_with(&originals.map(|(p, t)| (p, t.to_string())));
    run.stage("foo($X)", "bar($X)", None).unwrap();
    let guard = Unwritable::new(&run.root.join("b.py"));
    if guard.is_none() {
        // No way to make a file unwritable for root here (no chattr, or a
        // file system without it): fail the second write by injection.
        eprintln!("chattr unavailable: injecting the failed write instead");
        run.store.inject_fault(Some(InjectedFault::FailWrite(1)));
    }
    let err = staging::resolve(&run.store, "edit_1", true).unwrap_err();
    assert!(matches!(err, ToolError::Failed(_)), "{err}");
    // The cause is the system's words (or the injected fault's).
    let msg = err
        .to_string()
        .replace(run.root.to_str().unwrap(), "<root>");
    let (head, rest) = msg.split_once(" failed (").unwrap();
    let (_cause, tail) = rest.split_once("); ").unwrap();
    expect_test::expect!["failed: edit_1 not applied: writing <root>/b.py failed (<cause>); every file already written was restored, nothing changed; edit_1 is still staged — fix the cause (permissions, disk space) and call resolve again, or discard it"]
        .assert_eq(&format!("{head} failed (<cause>); {tail}"));
    for (p, t) in originals {
        assert_eq!(run.read(p), t, "{p} must be unchanged");
    }
    // Leftover temporary files would litter the tree.
    let names: Vec<String> = std::fs::read_dir(&run.root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    drop(guard);
    run.store.inject_fault(None);
    // Once the cause is fixed the same edit applies.
    staging::resolve(&run.store, "edit_1", true).unwrap();
    assert_eq!(run.read("a.py"), "bar(1)\n");
    assert_eq!(run.read("b.py"), "bar(2)\n");
    assert_eq!(run.read("c.py"), "bar(3)\n");
}

const CRASH_ENV: &str = "TOOL_ASTGREP_CRASH_CHILD";

/// Not a test on its own: the child process of
/// `a_crash_in_the_middle_is_recovered_on_the_next_start`, which stages an
/// edit of three files and dies (abort) after writing the first.
#[test]
fn crash_child_helper() {
    let Some(dir) = std::env::var_os(CRASH_ENV) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let ws = Workspace::new(dir.join("ws")).unwrap();
    let store = EditStore::open(Journal::at(dir.join("journal"), &ws));
    ops::stage(
        &ws,
        &store,
        "foo($X)",
        "bar($X)",
        None,
        Some("python"),
        &CancellationToken::new(),
    )
    .unwrap();
    store.inject_fault(Some(InjectedFault::AbortBeforeWrite(1)));
    let _ = store.accept("edit_1");
    unreachable!("the injected crash aborts the process");
}

#[test]
fn a_crash_in_the_middle_is_recovered_on_the_next_start() {
    let originals = [
        ("a.py", "foo(1)\n"),
        ("b.py", "foo(2)\n"),
        ("c.py", "foo(3)\n"),
    ];
    let run = run_with(&originals.map(|(p, t)| (p, t.to_string())));
    let parent = run.root.parent().unwrap().to_path_buf();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "crash_child_helper",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CRASH_ENV, &parent)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > Duration::from_mins(1) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the crashing child did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        status.signal(),
        Some(libc::SIGABRT),
        "child must die by abort: {status:?}"
    );
    assert!(!tool_core::process::pid_alive(child.id()));

    // The crash left half of the change on disk, and a journal record.
    assert_eq!(run.read("a.py"), "bar(1)\n");
    assert_eq!(run.read("b.py"), "foo(2)\n");
    assert_eq!(run.read("c.py"), "foo(3)\n");
    let journal = Journal::at(&run.journal, &run.ws);
    assert_eq!(journal.pending().len(), 1);

    // The next start of the store restores the whole tree.
    let store = EditStore::open(journal.clone());
    match store.recovered() {
        [Recovery::RolledBack { edit_id, restored }] => {
            assert_eq!(edit_id, "edit_1");
            assert_eq!(restored, &vec![run.root.join("a.py")]);
        }
        other => panic!("{other:?}"),
    }
    for (p, t) in originals {
        assert_eq!(run.read(p), t, "{p} must hold its old content");
    }
    assert!(journal.pending().is_empty());
    assert!(EditStore::open(journal).recovered().is_empty());
}

/// A staged edit keeps each file's replacements and the fingerprint of the
/// text they apply to, not the file twice: three files of 100 KB hold six
/// bytes of replacement each. Accept reads the files again and refuses the
/// whole change when one no longer hashes to its fingerprint, even with the
/// same length.
#[test]
fn a_staged_edit_holds_its_replacements_not_the_files() {
    let pad = "# padding\n".repeat(10_000);
    let files: Vec<(String, String)> = (0..3)
        .map(|i| (format!("m{i}.py"), format!("{pad}foo({i})\n")))
        .collect();
    let run = run_with(&files);
    run.stage("foo($X)", "bar($X)", Some("python")).unwrap();
    let staged = run.store.staged_files("edit_1").unwrap();
    // (file, length of the text it was staged against, its replacements)
    let held: Vec<String> = staged
        .iter()
        .map(|f| match &f.content {
            StagedContent::Replaced {
                original,
                replacements,
                ..
            } => format!(
                "{} {} {:?}",
                f.rel,
                original.len,
                replacements
                    .iter()
                    .map(|r| (r.start, r.end, r.text.as_str()))
                    .collect::<Vec<_>>()
            ),
            StagedContent::Texts { .. } => panic!("{} staged whole", f.rel),
        })
        .collect();
    expect![[r#"
        [
            "m0.py 100007 [(100000, 100006, \"bar(0)\")]",
            "m1.py 100007 [(100000, 100006, \"bar(1)\")]",
            "m2.py 100007 [(100000, 100006, \"bar(2)\")]",
        ]
    "#]]
    .assert_debug_eq(&held);
    // Same length, other bytes, far from the replacement.
    let edited = format!("# PADDING\n{}foo(1)\n", &pad[10..]);
    assert_eq!(edited.len(), files[1].1.len());
    std::fs::write(run.root.join("m1.py"), &edited).unwrap();
    let err = staging::resolve(&run.store, "edit_1", true).unwrap_err();
    expect![["refused: edit_1 rejected: 1 file changed since staging: m1.py; nothing was written. Call ast_edit again to stage the change against the current content"]].assert_eq(&err.to_string());
    assert_eq!(run.read("m0.py"), files[0].1);
    assert_eq!(run.read("m1.py"), edited);
}

/// The preview and the accept both make the staged replacements in the
/// files as they are on disk: the preview shows exactly what accept
/// writes — with two operations in one file (merged from the file read
/// again), and past the preview's 200 lines, where the files left out are
/// counted from what staging counted.
#[test]
fn the_preview_shows_what_accept_writes() {
    let mut files = vec![("a.py".to_string(), "x = foo(1)\ny = baz(2)\n".to_string())];
    files.extend((0..60).map(|i| (format!("m/{i:02}.py"), format!("foo({i})\n"))));
    let run = run_with(&files);
    let req = ops::EditRequest {
        operations: vec![
            ops::EditOperation {
                pattern: Some("foo($X)"),
                rewrite: Some("bar($X)"),
                ..Default::default()
            },
            ops::EditOperation {
                pattern: Some("baz($X)"),
                rewrite: Some("qux($X)"),
                ..Default::default()
            },
        ],
        language: Some("python"),
        ..Default::default()
    };
    let out = ops::stage_with(&run.ws, &run.store, &req, &CancellationToken::new()).unwrap();
    let text = out.joined_text();
    let lines: Vec<&str> = text.lines().collect();
    expect![[r#"
        (proposed) 62 replacements in 61 files … call resolve with edit_id "edit_1" and action "accept" to write them, or "discard"
        ast_edit  foo($X); baz($X)  →  bar($X); qux($X)  [python] in .; nothing is written until accepted
        --- a/a.py
        +++ b/a.py
        @@ -1,2 +1,2 @@
        -x = foo(1)
        -y = baz(2)
        +x = bar(1)
        +y = qux(2)
        --- a/m/00.py
        +++ b/m/00.py
        @@ -1 +1 @@
        -foo(0)
        +bar(0)"#]]
    .assert_eq(&lines[..14].join("\n"));
    // 7 lines of a.py, then 5 of each m file: 38 shown whole, 3 of the
    // 39th, and 2 + 21 × 5 left out.
    expect!["… preview capped: 107 diff lines in 22 files not shown (all of them are staged)"]
        .assert_eq(lines[lines.len() - 1]);
    assert_eq!(lines.len(), 2 + 200 + 1);

    staging::resolve(&run.store, "edit_1", true).unwrap();
    assert_eq!(run.read("a.py"), "x = bar(1)\ny = qux(2)\n");
    for i in 0..60 {
        assert_eq!(run.read(&format!("m/{i:02}.py")), format!("bar({i})\n"));
    }
}
