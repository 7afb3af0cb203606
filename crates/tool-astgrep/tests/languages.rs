//! The language table: every language id gets one search with an exact
//! count and one rewrite with the exact file it leaves, through the tools
//! (`ast_grep`, `ast_edit` and accepting the edit), with the language
//! inferred from the file's name or extension.

mod support;

use support::run_with;
use tool_astgrep::Lang;

/// One language's row.
struct Row {
    lang: &'static str,
    /// The file, named so that its language is inferred.
    file: &'static str,
    source: &'static str,
    /// A search and how many matches it has.
    search: &'static str,
    count: u64,
    /// A rewrite (pattern, template) and the text it changes: the file
    /// afterwards is `source` with every `from` replaced by `to`.
    rewrite: (&'static str, &'static str),
    from: &'static str,
    to: &'static str,
}

const CALLS: &str = "foo(1)\nfoo(2)\nbar(3)\n";
const CALLS_SEMI: &str = "foo(1);\nfoo(2);\nbar(3);\n";

const fn calls(lang: &'static str, file: &'static str, source: &'static str) -> Row {
    Row {
        lang,
        file,
        source,
        search: "foo($X)",
        count: 2,
        rewrite: ("bar($X)", "baz($X)"),
        from: "bar(3)",
        to: "baz(3)",
    }
}

const ROWS: &[Row] = &[
    Row {
        lang: "bash",
        file: "run.sh",
        source: "echo hello\necho world\nls -la\n",
        search: "echo $X",
        count: 2,
        rewrite: ("ls $X", "ls -1 $X"),
        from: "ls -la",
        to: "ls -1 -la",
    },
    calls(
        "c",
        "main.c",
        "int main(void) {\n  foo(1);\n  foo(2);\n  bar(3);\n  return 0;\n}\n",
    ),
    calls(
        "cpp",
        "main.cpp",
        "int main() {\n  foo(1);\n  foo(2);\n  bar(3);\n  return 0;\n}\n",
    ),
    calls(
        "csharp",
        "A.cs",
        "class A { void M() { foo(1); foo(2); bar(3); } }\n",
    ),
    Row {
        lang: "css",
        file: "site.css",
        source: "a { color: red; }\nb { color: blue; margin: 0; }\n",
        search: "color: $C",
        count: 2,
        rewrite: ("margin: $M", "padding: $M"),
        from: "margin: 0",
        to: "padding: 0",
    },
    calls(
        "dart",
        "main.dart",
        "void main() {\n  foo(1);\n  foo(2);\n  bar(3);\n}\n",
    ),
    calls("elixir", "run.ex", CALLS),
    calls(
        "go",
        "main.go",
        "package main\n\nfunc main() {\n\tfoo(1)\n\tfoo(2)\n\tbar(3)\n}\n",
    ),
    Row {
        lang: "haskell",
        file: "Main.hs",
        source: "main = do\n  print 1\n  print 2\n  putStrLn \"x\"\n",
        search: "print $X",
        count: 2,
        rewrite: ("putStrLn $X", "putStr $X"),
        from: "putStrLn \"x\"",
        to: "putStr \"x\"",
    },
    Row {
        lang: "hcl",
        file: "main.tf",
        source: "a = 1\nb = 2\nresource \"x\" \"y\" {\n  c = 3\n}\n",
        search: "$K = $V",
        count: 3,
        rewrite: ("c = $V", "d = $V"),
        from: "c = 3",
        to: "d = 3",
    },
    Row {
        lang: "html",
        file: "index.html",
        source: "<div><p>one</p><p>two</p><span>x</span></div>\n",
        search: "<p>$X</p>",
        count: 2,
        rewrite: ("<span>$X</span>", "<em>$X</em>"),
        from: "<span>x</span>",
        to: "<em>x</em>",
    },
    calls(
        "java",
        "A.java",
        "class A { void m() { foo(1); foo(2); bar(3); } }\n",
    ),
    calls("javascript", "app.js", CALLS_SEMI),
    Row {
        lang: "json",
        file: "package.json",
        source: "{\"a\": 1, \"b\": {\"a\": 2}, \"c\": 3}\n",
        search: "\"a\": $X",
        count: 2,
        rewrite: ("\"c\": $X", "\"d\": $X"),
        from: "\"c\": 3",
        to: "\"d\": 3",
    },
    calls(
        "kotlin",
        "Main.kt",
        "fun main() {\n    foo(1)\n    foo(2)\n    bar(3)\n}\n",
    ),
    calls("lua", "init.lua", CALLS),
    Row {
        lang: "markdown",
        file: "README.md",
        source: "# Title\n\ntext\n\n## Usage\n\nmore\n\n## Usage\n",
        search: "## Usage",
        count: 2,
        rewrite: ("# Title", "# Name"),
        from: "# Title",
        to: "# Name",
    },
    Row {
        lang: "nix",
        file: "default.nix",
        source: "{ a = foo 1; b = foo 2; c = bar 3; }\n",
        search: "foo $X",
        count: 2,
        rewrite: ("bar $X", "baz $X"),
        from: "bar 3",
        to: "baz 3",
    },
    calls("php", "index.php", "<?php\nfoo(1);\nfoo(2);\nbar(3);\n"),
    calls("python", "app.py", CALLS),
    calls("ruby", "app.rb", CALLS),
    calls(
        "rust",
        "main.rs",
        "fn main() {\n    foo(1);\n    foo(2);\n    bar(3);\n}\n",
    ),
    calls(
        "scala",
        "A.scala",
        "object A {\n  foo(1)\n  foo(2)\n  bar(3)\n}\n",
    ),
    calls(
        "solidity",
        "C.sol",
        "contract C {\n  function f() public {\n    foo(1);\n    foo(2);\n    bar(3);\n  }\n}\n",
    ),
    calls("swift", "main.swift", CALLS),
    calls(
        "tsx",
        "App.tsx",
        "const a = <div>{foo(1)}</div>;\nfoo(2);\nbar(3);\n",
    ),
    calls("typescript", "app.ts", CALLS_SEMI),
    Row {
        lang: "yaml",
        file: "conf.yaml",
        source: "a: 1\nb: 2\nc:\n  a: 3\n",
        search: "a: $X",
        count: 2,
        rewrite: ("b: $X", "d: $X"),
        from: "b: 2",
        to: "d: 2",
    },
    calls(
        "zig",
        "main.zig",
        "pub fn main() void {\n    foo(1);\n    foo(2);\n    bar(3);\n}\n",
    ),
    // The extra grammars.
    Row {
        lang: "cmake",
        file: "CMakeLists.txt",
        source: "cmake_minimum_required(VERSION 3.10)\nproject(demo)\nadd_executable(app main.c util.c)\nadd_library(util STATIC util.c)\ntarget_link_libraries(app util)\n",
        search: "add_executable($$$A)",
        count: 1,
        rewrite: ("target_link_libraries($A $B)", "target_link_libraries($A PRIVATE $B)"),
        from: "(app util)",
        to: "(app PRIVATE util)",
    },
    Row {
        lang: "dockerfile",
        file: "Dockerfile",
        source: "FROM python:3.11\nRUN pip install flask\nCOPY . /app\nRUN pip install -r requirements.txt\nCMD [\"python\", \"app.py\"]\n",
        search: "RUN $C",
        count: 2,
        rewrite: ("COPY $A $B", "COPY --chown=app $A $B"),
        from: "COPY .",
        to: "COPY --chown=app .",
    },
    Row {
        lang: "graphql",
        file: "schema.graphql",
        source: "type User {\n  id: ID!\n  name: String\n  email: String\n}\ntype Query {\n  users: [User]\n}\n",
        search: "$F: String",
        count: 2,
        rewrite: ("$F: [User]", "$F: [User!]!"),
        from: "users: [User]",
        to: "users: [User!]!",
    },
    Row {
        lang: "make",
        file: "Makefile",
        source: "CC = gcc\nCFLAGS = -O2\n\nall: app\n\napp: main.o\n\t$(CC) -o app main.o\n",
        search: "$V = $X",
        count: 2,
        rewrite: ("CC = $X", "CC ?= $X"),
        from: "CC = gcc",
        to: "CC ?= gcc",
    },
    Row {
        lang: "protobuf",
        file: "api.proto",
        source: "syntax = \"proto3\";\nmessage User {\n  string name = 1;\n}\nmessage Group {\n  repeated User users = 1;\n}\nservice Api {\n  rpc Get(User) returns (Group);\n  rpc List(Group) returns (Group);\n}\n",
        search: "rpc $R($A) returns ($B);",
        count: 2,
        rewrite: ("rpc List($A) returns ($B);", "rpc List($A) returns (stream $B);"),
        from: "returns (Group);\n}",
        to: "returns (stream Group);\n}",
    },
    Row {
        lang: "r",
        file: "stats.R",
        source: "x <- c(1, 2, 3)\ny <- mean(x)\nz <- mean(x, na.rm = TRUE)\nprint(y)\n",
        search: "mean($$$A)",
        count: 2,
        rewrite: ("print($X)", "message($X)"),
        from: "print(y)",
        to: "message(y)",
    },
    Row {
        lang: "sql",
        file: "q.sql",
        source: "SELECT id, name FROM users WHERE age > 30;\nSELECT * FROM orders;\nSELECT id FROM users;\n",
        search: "SELECT $$$C FROM users",
        count: 2,
        rewrite: ("SELECT * FROM $T", "SELECT id FROM $T"),
        from: "SELECT * FROM orders",
        to: "SELECT id FROM orders",
    },
    Row {
        lang: "svelte",
        file: "App.svelte",
        source: "<script>\n  let count = 0;\n</script>\n\n{#if count > 1}\n  <p>many</p>\n{/if}\n<p>done</p>\n",
        search: "<p>$X</p>",
        count: 2,
        rewrite: ("<p>$X</p>", "<li>$X</li>"),
        from: "p>",
        to: "li>",
    },
    Row {
        lang: "toml",
        file: "Cargo.toml",
        source: "[package]\nname = \"demo\"\nversion = \"0.1.0\"\n\n[dependencies]\nserde = \"1\"\ntokio = { version = \"1\", features = [\"full\"] }\n",
        search: "version = \"1\"",
        count: 1,
        rewrite: ("serde = $V", "serde = { version = $V }"),
        from: "serde = \"1\"",
        to: "serde = { version = \"1\" }",
    },
    Row {
        lang: "vue",
        file: "App.vue",
        source: "<template>\n  <div>\n    <p>Hello</p>\n    <span>{{ msg }}</span>\n    <p>Bye</p>\n  </div>\n</template>\n",
        search: "<p>$X</p>",
        count: 2,
        rewrite: ("<span>$X</span>", "<em>$X</em>"),
        from: "<span>{{ msg }}</span>",
        to: "<em>{{ msg }}</em>",
    },
    Row {
        lang: "xml",
        file: "pom.xml",
        source: "<?xml version=\"1.0\"?>\n<project>\n  <dependency><artifactId>junit</artifactId></dependency>\n  <dependency><artifactId>guava</artifactId></dependency>\n  <name>demo</name>\n</project>\n",
        search: "<artifactId>$X</artifactId>",
        count: 2,
        rewrite: ("<name>$X</name>", "<name>new-$X</name>"),
        from: "<name>demo</name>",
        to: "<name>new-demo</name>",
    },
];

#[test]
fn every_language_has_a_row() {
    let mut ids: Vec<&str> = Lang::all().map(Lang::id).collect();
    let mut rows: Vec<&str> = ROWS.iter().map(|r| r.lang).collect();
    ids.sort_unstable();
    rows.sort_unstable();
    assert_eq!(rows, ids);
    assert!(ids.len() >= 40, "{} languages", ids.len());
}

#[test]
fn every_language_searches_with_an_exact_count() {
    let mut wrong = Vec::new();
    for row in ROWS {
        let run = run_with(&[(row.file, row.source.to_string())]);
        let out = match run.find(row.search, None) {
            Ok(out) => out,
            Err(e) => {
                wrong.push(format!("{}: `{}` failed: {e}", row.lang, row.search));
                continue;
            }
        };
        let s = out.structured.as_ref().unwrap();
        let total = s["total"].as_u64().unwrap();
        let langs = s["languages"].to_string();
        if total != row.count || !langs.contains(&format!("\"{}\"", row.lang)) {
            wrong.push(format!(
                "{}: `{}` found {total}, want {} (languages {langs}):\n{}",
                row.lang,
                row.search,
                row.count,
                out.joined_text()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

#[test]
fn every_language_rewrites_exactly() {
    let mut wrong = Vec::new();
    for row in ROWS {
        assert!(row.source.contains(row.from), "{}: bad row", row.lang);
        let run = run_with(&[(row.file, row.source.to_string())]);
        let (pattern, template) = row.rewrite;
        let staged = match run.stage(pattern, template, Some(row.lang)) {
            Ok(out) => out,
            Err(e) => {
                wrong.push(format!("{}: `{pattern}` failed: {e}", row.lang));
                continue;
            }
        };
        let Some(id) = staged.structured.as_ref().unwrap()["edit_id"].as_str() else {
            wrong.push(format!(
                "{}: `{pattern}` staged nothing:\n{}",
                row.lang,
                staged.joined_text()
            ));
            continue;
        };
        run.store.accept(id).unwrap();
        let got = std::fs::read_to_string(run.root.join(row.file)).unwrap();
        let want = row.source.replace(row.from, row.to);
        if got != want {
            wrong.push(format!(
                "{}: `{pattern}` → `{template}` left\n{got}\nwant\n{want}",
                row.lang
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}
