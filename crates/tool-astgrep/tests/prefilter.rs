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
    found
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
