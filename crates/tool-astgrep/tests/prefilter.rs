//! The work the search skips changes no answer. The literal pre-filter
//! (a file without one of the pattern's literal tokens is never parsed) and
//! our matching walk (ast-grep's `find_all`, walked by us so that it skips
//! every subtree whose range holds no occurrence of the longest) give the
//! same matches, lines and columns as a search without the literal (no
//! pre-filter, every node walked) and as ast-grep's own `find_all`: on the
//! fixtures, and on many generated files.

use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::AstGrep;
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use tool_astgrep::pattern::Query;
use tool_astgrep::{ops, search, Lang};
use tool_core::{CancellationToken, Workspace};

/// (file, start, end, line, column) of every match.
type Found = BTreeSet<(String, usize, usize, usize, usize)>;

fn searched(dir: &Path, pattern: &str, lang: &str, prefilter: bool) -> Found {
    searched_with_parts(dir, pattern, lang, prefilter).0
}

/// The matches, and how many files with matches were parsed only in part.
fn searched_with_parts(dir: &Path, pattern: &str, lang: &str, prefilter: bool) -> (Found, usize) {
    let ws = Workspace::new(dir).unwrap();
    let mut scope = ops::scope(&ws, pattern, None, Some(lang)).unwrap();
    if !prefilter {
        for p in &mut scope.plan.patterns {
            p.required_literal = None;
            p.other_literals.clear();
        }
    }
    let out = search::run(
        &scope.plan,
        ws.dir(),
        &scope.target,
        &CancellationToken::new(),
    )
    .unwrap();
    let mut found = Found::new();
    for f in &out.files {
        for m in &f.matches {
            found.insert((f.rel.clone(), m.start, m.end, m.line, m.column));
        }
    }
    let in_parts = out.files.iter().filter(|f| f.parsed_in_parts).count();
    (found, in_parts)
}

/// ast-grep's `find_all` over every file of `lang` under `dir`, lines and
/// columns counted from the start of the file.
fn oracle(dir: &Path, pattern: &str, lang: &str) -> Found {
    let lang = Lang::from_id(lang).unwrap();
    let compiled = tool_astgrep::compile(lang, pattern).unwrap();
    let Query::Pattern(p) = &compiled.pattern else {
        panic!("{pattern} compiles to a pattern");
    };
    let mut found = Found::new();
    for entry in ignore::WalkBuilder::new(dir).build().flatten() {
        let path = entry.path();
        if Lang::from_path(path) != Some(lang) {
            continue;
        }
        let src = std::fs::read_to_string(path).unwrap();
        let root = AstGrep::<StrDoc<Lang>>::try_new(src.as_str(), lang).unwrap();
        let rel = path
            .strip_prefix(dir)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        for m in root.root().find_all(p) {
            let r = m.get_node().range();
            let before = &src[..r.start];
            let line = before.matches('\n').count() + 1;
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            let column = before[line_start..].chars().count() + 1;
            found.insert((rel.clone(), r.start, r.end, line, column));
        }
    }
    found
}

fn fixtures() -> PathBuf {
    test_support::fixtures::workspace_root().join("tests/fixtures/astgrep")
}

/// (language, pattern, whether ast-grep's `find_all` on the file sees all
/// matches: not so where macro bodies are searched too).
const FIXTURE_CASES: &[(&str, &str, bool)] = &[
    ("python", "isinstance($X, $Y)", true),
    ("python", "$X == $X", true),
    ("python", "print($$$A)", true),
    ("rust", "fn $NAME($$$ARGS) -> Result<$T, $E>", false),
    ("rust", "$X == $X", false),
    ("c", "foo($E)", false),
    ("c", "$X == $X", false),
    ("go", "$X == $X", true),
    ("java", "$X == $X", true),
    ("typescript", "async $NAME($$$P) { $$$B }", true),
    ("dart", "dispose($X)", true),
];

#[test]
fn on_the_fixtures_the_prefilter_and_the_walk_change_nothing() {
    let dir = fixtures();
    let mut matched = 0;
    for &(lang, pattern, whole) in FIXTURE_CASES {
        let with = searched(&dir, pattern, lang, true);
        let without = searched(&dir, pattern, lang, false);
        assert_eq!(with, without, "{lang} {pattern}: prefilter");
        if whole {
            assert_eq!(with, oracle(&dir, pattern, lang), "{lang} {pattern}: walk");
        }
        matched += with.len();
    }
    assert!(matched > 10, "the fixtures match: {matched}");
}

/// Pieces of Python, near misses of the patterns below included: the
/// literal in a comment, a string, a longer name, an attribute.
const PIECES: &[&str] = &[
    "isinstance(a, b)\n",
    "x = isinstance(self.value, (int, float))\n",
    "if isinstance (x,y): pass\n",
    "# isinstance(a, b)\n",
    "s = 'isinstance(a, b)'\n",
    "is_instance(a, b)\n",
    "myisinstance(a, b)\n",
    "obj.isinstance(a, b)\n",
    "isinstance(a, b, c)\n",
    "isinstance(\n    a,\n    b,\n)\n",
    "def f(v):\n    return isinstance(v, int)\n",
    "class C:\n    def m(self):\n        return isinstance(self, C) == isinstance(self, C)\n",
    "a == a\n",
    "a == b\n",
    "f(x) == f(x)\n",
    "é = 'ü'; q = é == é\n",
    "foo()\nfoo(1, 2)\n",
    "print('==')\n",
    // The literal at a match's edges, in a sibling, overlapping itself.
    "x is None\n",
    "y = f(None) is None == None\n",
    "a == None\n",
    "[a == None, b, None]\n",
    "a ==== a\n",
    "isinstance(a, # isinstance\n b)\n",
    "f(isinstance)(a, b)\n",
    "isinstance\n",
    "y = None\n",
    "\n",
    "pass\n",
    // Statements the top-level scan must not cut (see `top_level`).
    "@decorator(isinstance)\ndef g():\n    return isinstance(a, b)\n",
    "s = '''\nisinstance(a, b)\ndef h(): pass\n'''\n",
    "t = f\"{isinstance(a, b)} {d['k']:>{w}}\" f'{{a == a}}'\n",
    "if a:\n    pass\nelse:\n    isinstance(a, b)\n",
    "x = 1 + \\\n    isinstance(a, b)\n",
    "try:\n    pass\nexcept E:\n    a == a\nfinally:\n    pass\n",
    "class K(\n    Base,\n):\n    v = isinstance(a, b) == None\n",
];

const PATTERNS: &[&str] = &[
    "isinstance($X, $Y)",
    "$X == $X",
    "foo($$$A)",
    "$A.isinstance($B, $C)",
    "return isinstance($X, int)",
    "$X is None",
    "$X == None",
];

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn on_generated_files_the_prefilter_and_the_walk_change_nothing(
        files in prop::collection::vec(prop::collection::vec(0..PIECES.len(), 0..12), 1..8)
    ) {
        let dir = tempfile::tempdir().unwrap();
        for (i, pieces) in files.iter().enumerate() {
            let text: String = pieces.iter().map(|&p| PIECES[p]).collect();
            std::fs::write(dir.path().join(format!("f{i}.py")), text).unwrap();
        }
        let root = dir.path().canonicalize().unwrap();
        for pattern in PATTERNS {
            let with = searched(&root, pattern, "python", true);
            prop_assert_eq!(&with, &searched(&root, pattern, "python", false), "{}", pattern);
            prop_assert_eq!(&with, &oracle(&root, pattern, "python"), "{}", pattern);
        }
    }
}

/// A module of many statements is parsed only where the literal is, and
/// the matches are ast-grep's on the whole file: with the literal in a
/// decorated function, a class, an f-string field and an `else` clause,
/// between statements that hide it in strings and comments; and with a
/// syntax error in a statement that is not parsed. Where a parsed part does
/// not parse cleanly, the whole file is parsed instead.
#[test]
fn a_module_is_parsed_only_where_the_literal_is_with_the_same_matches() {
    // Every tenth one holds the literal in its docstring.
    let filler: String = (0..30)
        .map(|i| {
            let doc = if i % 10 == 0 {
                "isinstance\n(no call)"
            } else {
                "a filler"
            };
            format!("def filler_{i}(x):\n    \"\"\"{doc}\"\"\"\n    return x + {i}\n\n")
        })
        .collect();
    let holding = "@decorator(isinstance)\ndef g():\n    return isinstance(a, b)\n\n\
                   class K(\n    Base,\n):\n    v = isinstance(a, b) == None\n\n\
                   t = f\"{isinstance(c, d)} {e['k']:>{w}}\"\n\
                   if a:\n    pass\nelse:\n    isinstance(f, g)\n";
    let dir = tempfile::tempdir().unwrap();
    let clean = format!("{filler}{holding}{filler}");
    std::fs::write(dir.path().join("clean.py"), &clean).unwrap();
    // A broken statement far from the literal, and one next to it.
    std::fs::write(
        dir.path().join("broken_elsewhere.py"),
        format!("x = = 1\n{clean}"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("broken_beside.py"),
        format!("{filler}def h(:\n    isinstance(p, q)\n{filler}"),
    )
    .unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (found, in_parts) = searched_with_parts(&root, "isinstance($X, $Y)", "python", true);
    assert_eq!(found, oracle(&root, "isinstance($X, $Y)", "python"));
    let per_file: Vec<(String, usize)> = ["broken_beside.py", "broken_elsewhere.py", "clean.py"]
        .iter()
        .map(|f| (f.to_string(), found.iter().filter(|m| m.0 == *f).count()))
        .collect();
    let expect = |f: &str, n: usize| (f.to_string(), n);
    assert_eq!(
        per_file,
        vec![
            expect("broken_beside.py", 1),
            expect("broken_elsewhere.py", 4),
            expect("clean.py", 4)
        ]
    );
    // clean.py and broken_elsewhere.py in part; broken_beside.py whole.
    assert_eq!(in_parts, 2);
}

/// `source`'s matches, checked parsed in parts, and equal (records and
/// textual candidates) to `padded`'s, which is parsed whole.
fn parts_equal_whole(lang: &str, pattern: &str, source: &str, padded: &str) -> search::FileMatches {
    let lang = Lang::from_id(lang).unwrap();
    let compiled = tool_astgrep::compile(lang, pattern).unwrap();
    let parts = search::match_source(&compiled, None, source)
        .unwrap()
        .unwrap();
    let whole = search::match_source(&compiled, None, padded)
        .unwrap()
        .unwrap();
    assert_eq!(
        (parts.parsed_in_parts, whole.parsed_in_parts),
        (true, false)
    );
    assert_eq!(parts.records, whole.records);
    assert_eq!(parts.unsearched, whole.unsearched);
    parts
}

/// Parsed in parts or whole, a module's matches are the same records:
/// positions, text, captures and the function or class each sits in. The
/// whole parse is forced by a trailing comment that repeats the literal, so
/// the statement holding it would be most of the file.
#[test]
fn parsed_in_parts_or_whole_the_records_are_the_same() {
    let source = "import os\n\n\
                  class Outer:\n    class Inner:\n        def run(self, v):\n            return isinstance(v, (int, str))\n\n\
                  def plain(x):\n    return x\n\n\
                  @wrap(isinstance(a, b))\nasync def later(y):\n    if isinstance(y, bytes):\n        pass\n\n\
                  z = [isinstance(q, r) for q in range(3)]\n\n\
                  def tail():\n    return None\n";
    // Statements without the literal, so the ones holding it are a part.
    let filler: String = (0..20)
        .map(|i| format!("def filler_{i}(x):\n    return x * {i}\n\n"))
        .collect();
    let source = format!("{source}\n{filler}");
    let padded = format!("{source}# {}\n", "isinstance ".repeat(500));
    let parts = parts_equal_whole("python", "isinstance($X, $Y)", &source, &padded);
    let shown: Vec<String> = parts
        .records
        .iter()
        .map(|r| {
            format!(
                "{}:{} {} {:?} in {:?}",
                r.line, r.column, r.text, r.captures, r.enclosing
            )
        })
        .collect();
    expect_test::expect![[r#"
        6:20 isinstance(v, (int, str)) [("X", "v"), ("Y", "(int, str)")] in Some("Outer.Inner.run")
        11:7 isinstance(a, b) [("X", "a"), ("Y", "b")] in None
        13:8 isinstance(y, bytes) [("X", "y"), ("Y", "bytes")] in Some("later")
        16:6 isinstance(q, r) [("X", "q"), ("Y", "r")] in None"#]]
    .assert_eq(&shown.join("\n"));
}

/// A large class or function is parsed as its header and the runs of its
/// body's statements that hold the literal, three levels deep, with the
/// records of a whole parse: methods, a decorated one, a nested class, a
/// clause inside a method, a module-level `if` block; and a class whose
/// header holds the literal is not cut.
#[test]
fn a_large_class_is_parsed_in_its_members_holding_the_literal() {
    let methods = |n: usize| -> String {
        (0..n)
            .map(|i| format!("    def m{i}(self, x):\n        return x * {i}\n\n"))
            .collect()
    };
    let source = format!(
        "import os\n\n\
         class Big(Base):\n    \"\"\"Doc.\"\"\"\n{a}\
         \x20   @property\n    def p(self):\n        y = 1\n        return isinstance(self, Big)\n\n\
         \x20   class Inner:\n        def q(self, v):\n            if v:\n                pass\n            else:\n                return isinstance(v, int)\n\n\
         {b}\
         class Checked(isinstance):\n{c}    def r(self):\n        return isinstance(1, 2)\n\n\
         if __name__ == \"__main__\":\n    main()\n    isinstance(a, b)\n",
        a = methods(12),
        b = methods(12),
        c = methods(2),
    );
    let padded = format!("{source}# {}\n", "isinstance ".repeat(500));
    let parts = parts_equal_whole("python", "isinstance($X, $Y)", &source, &padded);
    let shown: Vec<String> = parts
        .records
        .iter()
        .map(|r| format!("{}:{} {} in {:?}", r.line, r.column, r.text, r.enclosing))
        .collect();
    expect_test::expect![[r#"
        44:16 isinstance(self, Big) in Some("Big.p")
        51:24 isinstance(v, int) in Some("Big.Inner.q")
        97:16 isinstance(1, 2) in Some("Checked.r")
        101:5 isinstance(a, b) in None"#]]
    .assert_eq(&shown.join("\n"));
}

/// A C file is parsed only in the top-level items holding the literal, with
/// the records and textual candidates of a whole parse: a function inside
/// an `#ifdef` block, one with a directive in its body, a `#define` body
/// searched on its own and one that parses in no wrapper. The whole parse
/// is forced by a trailing comment repeating the literal.
#[test]
fn a_c_file_is_parsed_in_its_items_holding_the_literal_with_the_same_matches() {
    let filler: String = (0..20)
        .map(|i| format!("static int filler_{i}(int x)\n{{\n    return x * {i};\n}}\n\n"))
        .collect();
    let holding = "#include <stdlib.h>\n\
                   struct buf { char *p; int n; };\n\
                   #ifdef USE_POOL\n\
                   void *grab(int n) { return malloc(n); }\n\
                   #endif\n\
                   #define ALLOC(n) malloc(n)\n\
                   #define BROKEN(n) malloc(n) +\n\
                   static struct buf *\nmake(int n)\n{\n\
                   \x20   struct buf *b = malloc(sizeof(*b));\n\
                   #if DEBUG\n\
                   \x20   if (b == NULL) { abort(); }\n\
                   #endif\n\
                   \x20   b->p = malloc(n);\n\
                   \x20   return b;\n}\n";
    let source = format!("{filler}{holding}{filler}");
    let padded = format!("{source}/* {} */\n", "malloc ".repeat(2000));
    let parts = parts_equal_whole("c", "malloc($N)", &source, &padded);
    let shown: Vec<String> = parts
        .records
        .iter()
        .map(|r| format!("{}:{} {} in {:?}", r.line, r.column, r.text, r.enclosing))
        .chain(
            parts
                .unsearched
                .iter()
                .map(|c| format!("candidate {:?} at {}", c.kind, c.line)),
        )
        .collect();
    expect_test::expect![[r#"
        104:28 malloc(n) in Some("grab(int n)")
        106:18 malloc(n) in None
        111:21 malloc(sizeof(*b)) in Some("make(int n)")
        115:12 malloc(n) in Some("make(int n)")
        candidate PreprocessorBody at 107"#]]
    .assert_eq(&shown.join("\n"));
}
