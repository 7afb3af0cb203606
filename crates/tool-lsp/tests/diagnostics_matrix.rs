//! The promise of diagnostics on write, server by server: "no new errors"
//! means the checker looked. One table, a row per server configuration,
//! one body of five steps, each row run in fresh workspaces (cold servers,
//! first calls) `MATRIX_RUNS` times (default 3):
//!
//! 1. write a new, correct file: no new errors;
//! 2. edit it to add one definite error: that error, and nothing else;
//! 3. edit it back: no new errors;
//! 4. edit a file that existed before the run to add an error: that error;
//! 5. `lsp diagnostics` on that file: the same error.
//!
//! Every catalog entry marked `tested` has a row (pyright and basedpyright
//! both for `python`; html also without its settings, the path where the
//! server fails inside its check). `ROWS=a,b` runs only those rows;
//! `ROWS_SHOW=1` prints each transcript.

mod common;

use common::{masked, Run};
use serde_json::json;
use tool_lsp::{CatalogConfig, LspBinding};

/// One server configuration.
struct Row {
    /// The row's name (the catalog entry's id, or what the row changes).
    name: &'static str,
    /// The catalog entry used (alone).
    entry: &'static str,
    /// The command that replaces the entry's (`None`: the entry's own).
    command: Option<&'static [&'static str]>,
    /// Whether the entry's settings are dropped (`workspace/configuration`
    /// then answers `null` for every section).
    no_settings: bool,
    /// Whether the fixtures' npm packages are linked in as the project's
    /// `node_modules` (eslint loads its library from there).
    node_modules: bool,
    /// Files written before the run: (relative path, content).
    files: &'static [(&'static str, &'static str)],
    /// The new file: its path, a correct text, the text with one error.
    new: (&'static str, &'static str, &'static str),
    /// A file of `files` and its text with one error.
    old: (&'static str, &'static str),
    /// The transcript of the five steps.
    expect: &'static str,
}

const PYTHON_FILES: &[(&str, &str)] = &[
    (
        "pyproject.toml",
        "[project]\nname = \"m\"\nversion = \"0\"\n",
    ),
    ("old.py", "def f(x: int) -> int:\n    return x\n"),
];
const PYTHON_NEW: (&str, &str, &str) = (
    "n.py",
    "def g() -> int:\n    return 1\n",
    "def g() -> int:\n    return undefined_name\n",
);
const PYTHON_OLD: (&str, &str) = (
    "old.py",
    "def f(x: int) -> int:\n    return undefined_other\n",
);

/// A Maven project without dependencies (jdtls imports it offline).
const JAVA_POM: &str = r#"<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>m</groupId>
  <artifactId>m</artifactId>
  <version>0</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
  </properties>
</project>
"#;

const ROWS: &[Row] = &[
    Row {
        name: "basedpyright",
        entry: "python",
        command: Some(&["basedpyright-langserver", "--stdio"]),
        no_settings: false,
        node_modules: false,
        files: PYTHON_FILES,
        new: PYTHON_NEW,
        old: PYTHON_OLD,
        expect: r#"## 1 new
wrote n.py
lsp: no new errors or warnings in n.py
## 2 error
wrote n.py
lsp: 2 new problems in n.py after this write:
n.py:2:12 error [reportUndefinedVariable] "undefined_name" is not defined
n.py:2:12 warning [reportUnknownVariableType] Return type is unknown
## 3 back
wrote n.py
lsp: no new errors or warnings in n.py
## 4 old
wrote old.py
lsp: 3 new problems in old.py after this write:
old.py:2:12 error [reportUndefinedVariable] "undefined_other" is not defined
old.py:2:12 warning [reportUnknownVariableType] Return type is unknown
old.py:1:7 warning [reportUnusedParameter] "x" is not accessed
## 5 op
lsp diagnostics  old.py (python) — 1 error, 2 warnings
old.py:1:7 warning [reportUnusedParameter] "x" is not accessed
old.py:2:12 error [reportUndefinedVariable] "undefined_other" is not defined
old.py:2:12 warning [reportUnknownVariableType] Return type is unknown"#,
    },
    Row {
        name: "pyright",
        entry: "python",
        command: Some(&["pyright-langserver", "--stdio"]),
        no_settings: false,
        node_modules: false,
        files: PYTHON_FILES,
        new: PYTHON_NEW,
        old: PYTHON_OLD,
        expect: r#"## 1 new
wrote n.py
lsp: no new errors or warnings in n.py
## 2 error
wrote n.py
lsp: 1 new problem in n.py after this write:
n.py:2:12 error [reportUndefinedVariable] "undefined_name" is not defined
## 3 back
wrote n.py
lsp: no new errors or warnings in n.py
## 4 old
wrote old.py
lsp: 1 new problem in old.py after this write:
old.py:2:12 error [reportUndefinedVariable] "undefined_other" is not defined
## 5 op
lsp diagnostics  old.py (python) — 1 error, 0 warnings
old.py:2:12 error [reportUndefinedVariable] "undefined_other" is not defined"#,
    },
    Row {
        name: "python-jedi",
        entry: "python-jedi",
        command: None,
        no_settings: false,
        node_modules: false,
        files: PYTHON_FILES,
        new: PYTHON_NEW,
        old: PYTHON_OLD,
        expect: r#"## 1 new
wrote n.py
lsp: no new syntax errors in n.py (python-jedi checks syntax only; `agent-tools install python` adds one that checks names and types)
## 2 error
wrote n.py
lsp: no new syntax errors in n.py (python-jedi checks syntax only; `agent-tools install python` adds one that checks names and types)
## 3 back
wrote n.py
lsp: no new syntax errors in n.py (python-jedi checks syntax only; `agent-tools install python` adds one that checks names and types)
## 4 old
wrote old.py
lsp: no new syntax errors in old.py (python-jedi checks syntax only; `agent-tools install python` adds one that checks names and types)
## 5 op
lsp diagnostics  old.py (python-jedi)
no syntax errors (python-jedi checks syntax only; `agent-tools install python` adds one that checks names and types)"#,
    },
    Row {
        name: "rust",
        entry: "rust",
        command: None,
        no_settings: false,
        node_modules: false,
        files: &[
            ("Cargo.toml", "[package]\nname = \"m\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[lib]\npath = \"src/lib.rs\"\n"),
            ("src/lib.rs", "pub mod n;\n\npub fn f(x: i32) -> i32 {\n    x\n}\n"),
            ("src/n.rs", ""),
        ],
        new: (
            "src/n.rs",
            "pub fn g() -> i32 {\n    1\n}\n",
            "pub fn g() -> i32 {\n    undefined_name\n}\n",
        ),
        old: (
            "src/lib.rs",
            "pub mod n;\n\npub fn f(x: i32) -> i32 {\n    undefined_thing\n}\n",
        ),
        expect: r#"## 1 new
wrote src/n.rs
lsp: no new errors or warnings in src/n.rs
lsp: other files not checked: rust (rust-analyzer) had not finished its first check of the project when this change began (later changes are judged)
## 2 error
wrote src/n.rs
lsp: 1 new problem in src/n.rs after this write:
src/n.rs:2:5 error [E0425] cannot find value `undefined_name` in this scope
## 3 back
wrote src/n.rs
lsp: no new errors or warnings in src/n.rs
## 4 old
wrote src/lib.rs
lsp: 1 new problem in src/lib.rs after this write:
src/lib.rs:4:5 error [E0425] cannot find value `undefined_thing` in this scope
## 5 op
lsp diagnostics  src/lib.rs (rust) — 1 error, 0 warnings
src/lib.rs:4:5 error [E0425] cannot find value `undefined_thing` in this scope"#,
    },
    Row {
        name: "typescript",
        entry: "typescript",
        command: None,
        no_settings: false,
        node_modules: false,
        files: &[
            ("package.json", "{\"name\": \"m\", \"private\": true}\n"),
            ("tsconfig.json", "{\"compilerOptions\": {\"strict\": true, \"noEmit\": true}}\n"),
            ("old.ts", "export function f(x: number): number {\n  return x;\n}\n"),
        ],
        new: (
            "n.ts",
            "export const g = (): number => 1;\n",
            "export const g = (): number => undefinedName;\n",
        ),
        old: (
            "old.ts",
            "export function f(x: number): number {\n  return undefinedOther;\n}\n",
        ),
        expect: r#"## 1 new
wrote n.ts
lsp: no new errors or warnings in n.ts
## 2 error
wrote n.ts
lsp: 1 new problem in n.ts after this write:
n.ts:1:32 error [2552] Cannot find name 'undefinedName'. Did you mean 'undefined'?
## 3 back
wrote n.ts
lsp: no new errors or warnings in n.ts
## 4 old
wrote old.ts
lsp: 1 new problem in old.ts after this write:
old.ts:2:10 error [2304] Cannot find name 'undefinedOther'.
## 5 op
lsp diagnostics  old.ts (typescript) — 1 error, 0 warnings
old.ts:2:10 error [2304] Cannot find name 'undefinedOther'."#,
    },
    Row {
        name: "go",
        entry: "go",
        command: None,
        no_settings: false,
        node_modules: false,
        files: &[
            ("go.mod", "module m\n\ngo 1.21\n"),
            ("old.go", "package m\n\nfunc F(x int) int {\n\treturn x\n}\n"),
        ],
        new: (
            "n.go",
            "package m\n\nfunc G() int {\n\treturn 1\n}\n",
            "package m\n\nfunc G() int {\n\treturn undefinedName\n}\n",
        ),
        old: (
            "old.go",
            "package m\n\nfunc F(x int) int {\n\treturn undefinedOther\n}\n",
        ),
        expect: r#"## 1 new
wrote n.go
lsp: no new errors or warnings in n.go
lsp: other files not checked: go (gopls) had not finished its first check of the project when this change began (later changes are judged)
## 2 error
wrote n.go
lsp: 1 new problem in n.go after this write:
n.go:4:9 error [UndeclaredName] undefined: undefinedName
## 3 back
wrote n.go
lsp: no new errors or warnings in n.go
## 4 old
wrote old.go
lsp: 1 new problem in old.go after this write:
old.go:4:9 error [UndeclaredName] undefined: undefinedOther
## 5 op
lsp diagnostics  old.go (go) — 1 error, 0 warnings
old.go:4:9 error [UndeclaredName] undefined: undefinedOther"#,
    },
    Row {
        name: "c",
        entry: "c",
        command: None,
        no_settings: false,
        node_modules: false,
        files: &[
            ("compile_flags.txt", "-std=c11\n"),
            ("old.c", "int f(int x) {\n  return x;\n}\n"),
        ],
        new: (
            "n.c",
            "int g(void) {\n  return 1;\n}\n",
            "int g(void) {\n  return undefined_name;\n}\n",
        ),
        old: ("old.c", "int f(int x) {\n  return undefined_other;\n}\n"),
        expect: r#"## 1 new
wrote n.c
lsp: no new errors or warnings in n.c
## 2 error
wrote n.c
lsp: 1 new problem in n.c after this write:
n.c:2:10 error [undeclared_var_use] Use of undeclared identifier 'undefined_name'
## 3 back
wrote n.c
lsp: no new errors or warnings in n.c
## 4 old
wrote old.c
lsp: 1 new problem in old.c after this write:
old.c:2:10 error [undeclared_var_use] Use of undeclared identifier 'undefined_other'
## 5 op
lsp diagnostics  old.c (c) — 1 error, 0 warnings
old.c:2:10 error [undeclared_var_use] Use of undeclared identifier 'undefined_other'"#,
    },
    Row {
        name: "html",
        entry: "html",
        command: None,
        no_settings: false,
        node_modules: false,
        files: &[("old.html", "<!DOCTYPE html>\n<html><body><p>x</p></body></html>\n")],
        new: (
            "n.html",
            "<!DOCTYPE html>\n<html><head><style>p { margin: 0; }</style></head><body></body></html>\n",
            "<!DOCTYPE html>\n<html><head><style>p { margin 0; }</style></head><body></body></html>\n",
        ),
        old: (
            "old.html",
            "<!DOCTYPE html>\n<html><head><style>p { color red; }</style></head><body><p>x</p></body></html>\n",
        ),
        expect: r#"## 1 new
wrote n.html
lsp: no new errors or warnings in n.html
## 2 error
wrote n.html
lsp: 1 new problem in n.html after this write:
n.html:2:31 error [css-colonexpected] colon expected
## 3 back
wrote n.html
lsp: no new errors or warnings in n.html
## 4 old
wrote old.html
lsp: 1 new problem in old.html after this write:
old.html:2:30 error [css-colonexpected] colon expected
## 5 op
lsp diagnostics  old.html (html) — 1 error, 0 warnings
old.html:2:30 error [css-colonexpected] colon expected"#,
    },
    Row {
        name: "html-null-settings",
        entry: "html",
        command: None,
        no_settings: true,
        node_modules: false,
        files: &[("old.html", "<!DOCTYPE html>\n<html><body><p>x</p></body></html>\n")],
        new: (
            "n.html",
            "<!DOCTYPE html>\n<html><head><style>p { margin: 0; }</style></head><body></body></html>\n",
            "<!DOCTYPE html>\n<html><head><style>p { margin 0; }</style></head><body></body></html>\n",
        ),
        old: (
            "old.html",
            "<!DOCTYPE html>\n<html><head><style>p { color red; }</style></head><body><p>x</p></body></html>\n",
        ),
        expect: r#"## 1 new
wrote n.html
lsp: n.html not checked: html reported an error while checking it (Error while validating file://ROOT/n.html: Cannot read properties of null (reading 'validProperties'))
## 2 error
wrote n.html
lsp: n.html not checked: html reported an error while checking it (Error while validating file://ROOT/n.html: Cannot read properties of null (reading 'validProperties'))
## 3 back
wrote n.html
lsp: n.html not checked: html reported an error while checking it (Error while validating file://ROOT/n.html: Cannot read properties of null (reading 'validProperties'))
## 4 old
wrote old.html
lsp: old.html not checked: html reported an error while checking it (Error while validating file://ROOT/old.html: Cannot read properties of null (reading 'validProperties'))
## 5 op
error: failed: old.html not checked: the server reported an error while checking (Error while validating file://ROOT/old.html: Cannot read properties of null (reading 'validProperties'))"#,
    },
    Row {
        name: "css",
        entry: "css",
        command: None,
        no_settings: false,
        node_modules: false,
        files: &[("old.css", "p {\n  color: red;\n}\n")],
        new: ("n.css", "p {\n  margin: 0;\n}\n", "p {\n  margin 0;\n}\n"),
        old: ("old.css", "p {\n  color red;\n}\n"),
        expect: r#"## 1 new
wrote n.css
lsp: no new errors or warnings in n.css
## 2 error
wrote n.css
lsp: 1 new problem in n.css after this write:
n.css:2:10 error [css-colonexpected] colon expected
## 3 back
wrote n.css
lsp: no new errors or warnings in n.css
## 4 old
wrote old.css
lsp: 1 new problem in old.css after this write:
old.css:2:9 error [css-colonexpected] colon expected
## 5 op
lsp diagnostics  old.css (css) — 1 error, 0 warnings
old.css:2:9 error [css-colonexpected] colon expected"#,
    },
    Row {
        name: "json",
        entry: "json",
        command: None,
        no_settings: false,
        node_modules: false,
        files: &[("old.json", "{\"a\": 1}\n")],
        new: ("n.json", "{\"b\": 2}\n", "{\"b\": 2,,}\n"),
        old: ("old.json", "{\"a\" 1}\n"),
        expect: r#"## 1 new
wrote n.json
lsp: no new errors or warnings in n.json
## 2 error
wrote n.json
lsp: 1 new problem in n.json after this write:
n.json:1:9 error [513] Property expected
## 3 back
wrote n.json
lsp: no new errors or warnings in n.json
## 4 old
wrote old.json
lsp: 1 new problem in old.json after this write:
old.json:1:6 error [515] Colon expected
## 5 op
lsp diagnostics  old.json (json) — 1 error, 0 warnings
old.json:1:6 error [515] Colon expected"#,
    },
    Row {
        name: "yaml",
        entry: "yaml",
        command: None,
        no_settings: false,
        node_modules: false,
        files: &[("old.yaml", "a: 1\n")],
        new: ("n.yaml", "b: 2\n", "b: [2, 3\n"),
        old: ("old.yaml", "a: [1\n"),
        expect: r#"## 1 new
wrote n.yaml
lsp: no new errors or warnings in n.yaml
## 2 error
wrote n.yaml
lsp: 1 new problem in n.yaml after this write:
n.yaml:2:1 error [0] Flow sequence in block collection must be sufficiently indented and end with a ]
## 3 back
wrote n.yaml
lsp: no new errors or warnings in n.yaml
## 4 old
wrote old.yaml
lsp: 1 new problem in old.yaml after this write:
old.yaml:2:1 error [0] Flow sequence in block collection must be sufficiently indented and end with a ]
## 5 op
lsp diagnostics  old.yaml (yaml) — 1 error, 0 warnings
old.yaml:2:1 error [0] Flow sequence in block collection must be sufficiently indented and end with a ]"#,
    },
    Row {
        name: "bash",
        entry: "bash",
        command: None,
        no_settings: false,
        node_modules: false,
        files: &[("old.sh", "#!/bin/bash\necho old\n")],
        new: (
            "n.sh",
            "#!/bin/bash\necho new\n",
            "#!/bin/bash\nif true; then\n  echo new\n",
        ),
        old: ("old.sh", "#!/bin/bash\nwhile true; do\n  echo old\n"),
        expect: r#"## 1 new
wrote n.sh
lsp: no new errors or warnings in n.sh
## 2 error
wrote n.sh
lsp: 4 new problems in n.sh after this write:
n.sh:2:1 error [SC1046] Couldn't find 'fi' for this 'if'.
n.sh:2:1 error [SC1073] Couldn't parse this if expression. Fix to allow more checks.
n.sh:4:1 error [SC1047] Expected 'fi' matching previously mentioned 'if'.
n.sh:4:1 error [SC1072] Expected 'fi'. Fix any mentioned problems and try again.
## 3 back
wrote n.sh
lsp: no new errors or warnings in n.sh
## 4 old
wrote old.sh
lsp: 4 new problems in old.sh after this write:
old.sh:2:1 error [SC1073] Couldn't parse this while loop. Fix to allow more checks.
old.sh:2:13 error [SC1061] Couldn't find 'done' for this 'do'.
old.sh:4:1 error [SC1062] Expected 'done' matching previously mentioned 'do'.
old.sh:4:1 error [SC1072] Expected 'done'. Fix any mentioned problems and try again.
## 5 op
lsp diagnostics  old.sh (bash) — 4 errors, 0 warnings
old.sh:2:1 error [SC1073] Couldn't parse this while loop. Fix to allow more checks.
old.sh:2:13 error [SC1061] Couldn't find 'done' for this 'do'.
old.sh:4:1 error [SC1062] Expected 'done' matching previously mentioned 'do'.
old.sh:4:1 error [SC1072] Expected 'done'. Fix any mentioned problems and try again."#,
    },
    Row {
        name: "php",
        entry: "php",
        command: None,
        no_settings: false,
        node_modules: false,
        files: &[
            ("composer.json", "{}\n"),
            ("old.php", "<?php\nfunction f($x) {\n    return $x;\n}\n"),
        ],
        new: (
            "n.php",
            "<?php\nfunction g() {\n    return 1;\n}\n",
            "<?php\nfunction g() {\n    return 1\n}\n",
        ),
        old: ("old.php", "<?php\nfunction f($x) {\n    return $x\n}\n"),
        expect: r#"## 1 new
wrote n.php
lsp: no new errors or warnings in n.php
## 2 error
wrote n.php
lsp: 1 new problem in n.php after this write:
n.php:4:1 error [P1001] Unexpected '}'. Expected ';'.
## 3 back
wrote n.php
lsp: no new errors or warnings in n.php
## 4 old
wrote old.php
lsp: 1 new problem in old.php after this write:
old.php:4:1 error [P1001] Unexpected '}'. Expected ';'.
## 5 op
lsp diagnostics  old.php (php) — 1 error, 0 warnings
old.php:4:1 error [P1001] Unexpected '}'. Expected ';'."#,
    },
    Row {
        name: "fortran",
        entry: "fortran",
        command: None,
        no_settings: false,
        node_modules: false,
        files: &[
            ("fpm.toml", "name = \"m\"\n"),
            ("old.f90", "module old\n  integer :: a\nend module old\n"),
        ],
        new: (
            "n.f90",
            "module n\n  integer :: b\nend module n\n",
            "module n\n  integer :: b\n  integer :: b\nend module n\n",
        ),
        old: (
            "old.f90",
            "module old\n  integer :: a\n  integer :: a\nend module old\n",
        ),
        expect: r#"## 1 new
wrote n.f90
lsp: no new errors or warnings in n.f90
## 2 error
wrote n.f90
lsp: 1 new problem in n.f90 after this write:
n.f90:3:14 error Variable "b" declared twice in scope
## 3 back
wrote n.f90
lsp: no new errors or warnings in n.f90
## 4 old
wrote old.f90
lsp: 1 new problem in old.f90 after this write:
old.f90:3:14 error Variable "a" declared twice in scope
## 5 op
lsp diagnostics  old.f90 (fortran) — 1 error, 0 warnings
old.f90:3:14 error Variable "a" declared twice in scope"#,
    },
    Row {
        name: "python-pylsp",
        entry: "python-pylsp",
        command: None,
        no_settings: false,
        node_modules: false,
        files: PYTHON_FILES,
        new: PYTHON_NEW,
        old: PYTHON_OLD,
        expect: r#"## 1 new
wrote n.py
lsp: no new errors or warnings in n.py
## 2 error
wrote n.py
lsp: 1 new problem in n.py after this write:
n.py:2:12 error undefined name 'undefined_name'
## 3 back
wrote n.py
lsp: no new errors or warnings in n.py
## 4 old
wrote old.py
lsp: 1 new problem in old.py after this write:
old.py:2:12 error undefined name 'undefined_other'
## 5 op
lsp diagnostics  old.py (python-pylsp) — 1 error, 0 warnings
old.py:2:12 error undefined name 'undefined_other'"#,
    },
    Row {
        name: "ruff",
        entry: "ruff",
        command: None,
        no_settings: false,
        node_modules: false,
        files: PYTHON_FILES,
        new: PYTHON_NEW,
        old: PYTHON_OLD,
        expect: r#"## 1 new
wrote n.py
lsp: no new errors or warnings in n.py
## 2 error
wrote n.py
lsp: 1 new problem in n.py after this write:
n.py:2:12 error [F821] Undefined name `undefined_name`
## 3 back
wrote n.py
lsp: no new errors or warnings in n.py
## 4 old
wrote old.py
lsp: 1 new problem in old.py after this write:
old.py:2:12 error [F821] Undefined name `undefined_other`
## 5 op
lsp diagnostics  old.py (ruff) — 1 error, 0 warnings
old.py:2:12 error [F821] Undefined name `undefined_other`"#,
    },
    Row {
        name: "c-ccls",
        entry: "c-ccls",
        command: None,
        no_settings: false,
        node_modules: false,
        files: &[
            (".ccls", "clang\n-std=c11\n"),
            ("old.c", "int f(int x) {\n  return x;\n}\n"),
        ],
        new: (
            "n.c",
            "int g(void) {\n  return 1;\n}\n",
            "int g(void) {\n  return undefined_name;\n}\n",
        ),
        old: ("old.c", "int f(int x) {\n  return undefined_other;\n}\n"),
        expect: r#"## 1 new
wrote n.c
lsp: no new errors or warnings in n.c
## 2 error
wrote n.c
lsp: 1 new problem in n.c after this write:
n.c:2:10 error [2] use of undeclared identifier 'undefined_name'
## 3 back
wrote n.c
lsp: no new errors or warnings in n.c
## 4 old
wrote old.c
lsp: 1 new problem in old.c after this write:
old.c:2:10 error [2] use of undeclared identifier 'undefined_other'
## 5 op
lsp diagnostics  old.c (c-ccls) — 1 error, 0 warnings
old.c:2:10 error [2] use of undeclared identifier 'undefined_other'"#,
    },
    Row {
        name: "biome",
        entry: "biome",
        command: None,
        no_settings: false,
        node_modules: false,
        files: &[
            ("biome.json", "{}\n"),
            ("old.ts", "export const f = (x: number): number => x;\n"),
        ],
        new: (
            "n.ts",
            "export const g = (): number => 1;\n",
            "export const g = (): number => {\n  debugger;\n  return 1;\n};\n",
        ),
        old: (
            "old.ts",
            "export const f = (x: number): number => {\n  debugger;\n  return x;\n};\n",
        ),
        expect: r#"## 1 new
wrote n.ts
lsp: no new errors or warnings in n.ts
## 2 error
wrote n.ts
lsp: 1 new problem in n.ts after this write:
n.ts:2:3 error [lint/suspicious/noDebugger] This is an unexpected use of the debugger statement.
## 3 back
wrote n.ts
lsp: no new errors or warnings in n.ts
## 4 old
wrote old.ts
lsp: 1 new problem in old.ts after this write:
old.ts:2:3 error [lint/suspicious/noDebugger] This is an unexpected use of the debugger statement.
## 5 op
lsp diagnostics  old.ts (biome) — 1 error, 0 warnings
old.ts:2:3 error [lint/suspicious/noDebugger] This is an unexpected use of the debugger statement."#,
    },
    Row {
        name: "dockerfile",
        entry: "dockerfile",
        command: None,
        no_settings: false,
        node_modules: false,
        files: &[("old.dockerfile", "FROM debian:12\nEXPOSE 80\n")],
        new: (
            "n.dockerfile",
            "FROM debian:12\nWORKDIR /app\n",
            "FROM debian:12\nWORKDIR\n",
        ),
        old: ("old.dockerfile", "FROM debian:12\nEXPOSE notaport\n"),
        expect: r#"## 1 new
wrote n.dockerfile
lsp: no new errors or warnings in n.dockerfile
## 2 error
wrote n.dockerfile
lsp: 1 new problem in n.dockerfile after this write:
n.dockerfile:2:1 error [2] Instruction has no arguments
## 3 back
wrote n.dockerfile
lsp: no new errors or warnings in n.dockerfile
## 4 old
wrote old.dockerfile
lsp: 1 new problem in old.dockerfile after this write:
old.dockerfile:2:8 error [24] Invalid containerPort: notaport
## 5 op
lsp diagnostics  old.dockerfile (dockerfile) — 1 error, 0 warnings
old.dockerfile:2:8 error [24] Invalid containerPort: notaport"#,
    },
    Row {
        name: "svelte",
        entry: "svelte",
        command: None,
        no_settings: false,
        node_modules: false,
        files: &[
            ("package.json", "{\"name\": \"m\", \"private\": true}\n"),
            ("Old.svelte", "<script>\n  let count = 0;\n</script>\n<p>{count}</p>\n"),
        ],
        new: (
            "N.svelte",
            "<script>\n  let n = 1;\n</script>\n<p>{n}</p>\n",
            "<script>\n  let n = 1;\n</script>\n<p>{n}</p>\n{#if n}\n",
        ),
        old: (
            "Old.svelte",
            "<script>\n  let count = 0;\n</script>\n<p>{count}</p>\n{#if count}\n",
        ),
        expect: r#"## 1 new
wrote N.svelte
lsp: no new errors or warnings in N.svelte
## 2 error
wrote N.svelte
lsp: 1 new problem in N.svelte after this write:
N.svelte:5:1 error [-1] Block was left open
## 3 back
wrote N.svelte
lsp: no new errors or warnings in N.svelte
## 4 old
wrote Old.svelte
lsp: 1 new problem in Old.svelte after this write:
Old.svelte:5:1 error [-1] Block was left open
## 5 op
lsp diagnostics  Old.svelte (svelte) — 1 error, 0 warnings
Old.svelte:5:1 error [-1] Block was left open"#,
    },
    Row {
        name: "graphql",
        entry: "graphql",
        command: None,
        no_settings: false,
        node_modules: false,
        files: &[
            (".graphqlrc.yml", "schema: schema.graphql\ndocuments: '*.graphql'\n"),
            ("schema.graphql", "type Query {\n  user(id: ID!): User\n}\ntype User {\n  id: ID!\n  name: String\n}\n"),
            ("old.graphql", "query O {\n  user(id: 1) {\n    id\n  }\n}\n"),
        ],
        new: (
            "n.graphql",
            "query N {\n  user(id: 2) {\n    name\n  }\n}\n",
            "query N {\n  user(id: 2) {\n    nope\n  }\n}\n",
        ),
        old: ("old.graphql", "query O {\n  user(id: 1) {\n    gone\n  }\n}\n"),
        expect: r#"## 1 new
wrote n.graphql
lsp: no new errors or warnings in n.graphql
## 2 error
wrote n.graphql
lsp: 1 new problem in n.graphql after this write:
n.graphql:3:5 error Cannot query field "nope" on type "User". Did you mean "name"?
## 3 back
wrote n.graphql
lsp: no new errors or warnings in n.graphql
## 4 old
wrote old.graphql
lsp: 1 new problem in old.graphql after this write:
old.graphql:3:5 error Cannot query field "gone" on type "User".
## 5 op
lsp diagnostics  old.graphql (graphql) — 1 error, 0 warnings
old.graphql:3:5 error Cannot query field "gone" on type "User"."#,
    },
    Row {
        name: "sql",
        entry: "sql",
        command: None,
        no_settings: false,
        node_modules: false,
        files: &[("old.sql", "SELECT\n  id\nFROM\n  users;\n")],
        new: (
            "n.sql",
            "SELECT\n  name\nFROM\n  users;\n",
            "SELEC\n  name\nFROM\n  users;\n",
        ),
        old: ("old.sql", "SELEC\n  id\nFROM\n  users;\n"),
        expect: r#"## 1 new
wrote n.sql
lsp: no new errors or warnings in n.sql
## 2 error
wrote n.sql
lsp: 1 new problem in n.sql after this write:
n.sql:1:2 error Expected "$", "(", "--", "/*", "ALTER", "CREATE TABLE", "CREATE", "DELETE", "DROP TABLE", "DROP VIEW", "DROP", "INSERT", "REPLACE", "SELECT", "UPDATE", "WITH", "return", [ \t\n\r], or end of input but "S" found.
## 3 back
wrote n.sql
lsp: no new errors or warnings in n.sql
## 4 old
wrote old.sql
lsp: 1 new problem in old.sql after this write:
old.sql:1:2 error Expected "$", "(", "--", "/*", "ALTER", "CREATE TABLE", "CREATE", "DELETE", "DROP TABLE", "DROP VIEW", "DROP", "INSERT", "REPLACE", "SELECT", "UPDATE", "WITH", "return", [ \t\n\r], or end of input but "S" found.
## 5 op
lsp diagnostics  old.sql (sql) — 1 error, 0 warnings
old.sql:1:2 error Expected "$", "(", "--", "/*", "ALTER", "CREATE TABLE", "CREATE", "DELETE", "DROP TABLE", "DROP VIEW", "DROP", "INSERT", "REPLACE", "SELECT", "UPDATE", "WITH", "return", [ \t\n\r], or end of input but "S" found."#,
    },
    Row {
        name: "vim",
        entry: "vim",
        command: None,
        no_settings: false,
        node_modules: false,
        files: &[("old.vim", "function! Old() abort\n  echo 'old'\nendfunction\n")],
        new: (
            "n.vim",
            "function! New() abort\n  echo 'new'\nendfunction\n",
            "function! New(\n",
        ),
        old: ("old.vim", "function! Old(\n"),
        expect: r#"## 1 new
wrote n.vim
lsp: no new errors or warnings in n.vim
## 2 error
wrote n.vim
lsp: 1 new problem in n.vim after this write:
n.vim:1:15 error unexpected token: <EOL>
## 3 back
wrote n.vim
lsp: no new errors or warnings in n.vim
## 4 old
wrote old.vim
lsp: 1 new problem in old.vim after this write:
old.vim:1:15 error unexpected token: <EOL>
## 5 op
lsp diagnostics  old.vim (vim) — 1 error, 0 warnings
old.vim:1:15 error unexpected token: <EOL>"#,
    },
    Row {
        name: "java",
        entry: "java",
        command: None,
        no_settings: false,
        node_modules: false,
        files: &[
            ("pom.xml", JAVA_POM),
            (
                "src/main/java/m/Old.java",
                "package m;\n\npublic class Old {\n    public static int f(int x) {\n        return x;\n    }\n}\n",
            ),
        ],
        new: (
            "src/main/java/m/N.java",
            "package m;\n\npublic class N {\n    static int g() {\n        return Old.f(1);\n    }\n}\n",
            "package m;\n\npublic class N {\n    static int g() {\n        return undefinedName;\n    }\n}\n",
        ),
        old: (
            "src/main/java/m/Old.java",
            "package m;\n\npublic class Old {\n    public static int f(int x) {\n        return undefinedOther;\n    }\n}\n",
        ),
        expect: r#"## 1 new
wrote src/main/java/m/N.java
lsp: no new errors or warnings in src/main/java/m/N.java
lsp: other files not checked: java (jdtls -data {own_dir}) had not finished its first check of the project when this change began (later changes are judged)
## 2 error
wrote src/main/java/m/N.java
lsp: 1 new problem in src/main/java/m/N.java after this write:
src/main/java/m/N.java:5:16 error [33554515] undefinedName cannot be resolved to a variable
## 3 back
wrote src/main/java/m/N.java
lsp: no new errors or warnings in src/main/java/m/N.java
## 4 old
wrote src/main/java/m/Old.java
lsp: 1 new problem in src/main/java/m/Old.java after this write:
src/main/java/m/Old.java:5:16 error [33554515] undefinedOther cannot be resolved to a variable
## 5 op
lsp diagnostics  src/main/java/m/Old.java (java) — 1 error, 0 warnings
src/main/java/m/Old.java:5:16 error [33554515] undefinedOther cannot be resolved to a variable"#,
    },
    Row {
        name: "eslint",
        entry: "eslint",
        command: None,
        no_settings: false,
        node_modules: true,
        files: &[
            ("package.json", "{\"name\": \"m\", \"type\": \"module\"}\n"),
            ("eslint.config.js", "export default [{ rules: { \"no-debugger\": \"error\" } }];\n"),
            ("old.js", "export const f = (x) => x;\n"),
        ],
        new: (
            "n.js",
            "export const g = () => 1;\n",
            "export const g = () => {\n  debugger;\n  return 1;\n};\n",
        ),
        old: (
            "old.js",
            "export const f = (x) => {\n  debugger;\n  return x;\n};\n",
        ),
        expect: r#"## 1 new
wrote n.js
lsp: no new errors or warnings in n.js
## 2 error
wrote n.js
lsp: 1 new problem in n.js after this write:
n.js:2:3 error [no-debugger] Unexpected 'debugger' statement.
## 3 back
wrote n.js
lsp: no new errors or warnings in n.js
## 4 old
wrote old.js
lsp: 1 new problem in old.js after this write:
old.js:2:3 error [no-debugger] Unexpected 'debugger' statement.
## 5 op
lsp diagnostics  old.js (eslint) — 1 error, 0 warnings
old.js:2:3 error [no-debugger] Unexpected 'debugger' statement."#,
    },
];

/// A config whose catalog is the entry alone, its command replaced when
/// the row says so.
fn config(row: &Row) -> CatalogConfig {
    let builtin = lsp_session::catalog::builtin();
    let mut config = CatalogConfig {
        disable: builtin
            .iter()
            .map(|e| e.id.clone())
            .filter(|e| e != row.entry)
            .collect(),
        ..CatalogConfig::default()
    };
    let mut entry = builtin.into_iter().find(|e| e.id == row.entry).unwrap();
    entry.role = lsp_session::catalog::Role::Server;
    if row.no_settings {
        entry.settings = None;
    }
    if let Some(command) = row.command {
        entry.commands = vec![command.iter().map(ToString::to_string).collect()];
    }
    config.servers.push(entry);
    // The answers are what is checked here, not the bound: a cold server
    // on a loaded machine (rust-analyzer's first cargo check) gets time.
    config.diagnostics_wait_ms = Some(30_000);
    config
}

/// The five steps in a fresh workspace, as one transcript.
async fn transcript(row: &Row) -> String {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in row.files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    if row.node_modules {
        let modules = test_support::fixtures::dir().join("npm/node_modules");
        std::os::unix::fs::symlink(modules, dir.path().join("node_modules")).unwrap();
    }
    let run = Run::with_binding(dir, LspBinding::new(config(row)));
    let (new, good, bad) = row.new;
    let (old, broken) = row.old;
    let mut out = Vec::new();
    for (step, content) in [("1 new", good), ("2 error", bad), ("3 back", good)] {
        let answer = run
            .call("write", json!({"path": new, "content": content}))
            .await;
        out.push(format!("## {step}\n{}", shown(answer)));
    }
    let answer = run
        .call("write", json!({"path": old, "content": broken}))
        .await;
    out.push(format!("## 4 old\n{}", shown(answer)));
    let answer = run
        .call("lsp", json!({"op": "diagnostics", "file": old}))
        .await;
    out.push(format!("## 5 op\n{}", shown(answer)));
    let root = run.root.clone();
    run.finish().await;
    masked(&out.join("\n"), &root)
}

fn shown(answer: Result<String, tool_core::ToolError>) -> String {
    match answer {
        Ok(text) => text,
        Err(e) => format!("error: {e}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_new_errors_means_the_checker_looked() {
    let runs: usize = std::env::var("MATRIX_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3);
    let show = std::env::var_os("ROWS_SHOW").is_some();
    let mut failures = Vec::new();
    for row in ROWS {
        if !common::row_selected(row.name) {
            continue;
        }
        let binary = row.command.map_or_else(
            || config(row).servers[0].commands[0][0].clone(),
            |c| c[0].to_string(),
        );
        if test_support::fixtures::require(&[&binary]).is_none() {
            continue;
        }
        for run in 1..=runs {
            let got = transcript(row).await;
            if show {
                eprintln!("==== {} run {run}\n{got}\n", row.name);
            }
            if got != row.expect {
                failures.push(format!(
                    "{} (run {run} of {runs}): want\n{}\ngot\n{got}",
                    row.name, row.expect
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
