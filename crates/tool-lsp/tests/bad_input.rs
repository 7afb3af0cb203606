//! Bad input gets a clear error and changes nothing; refusals say which half
//! (root marker or binary) is missing and what was looked for.

mod common;

use common::{masked, project, Run};
use serde_json::json;
use tool_core::{Surface, ToolError};
use tool_lsp::{CatalogConfig, LspBinding};

async fn err(run: &Run, args: serde_json::Value) -> ToolError {
    match run.call("lsp", args.clone()).await {
        Ok(out) => panic!("expected an error for {args}, got:\n{out}"),
        Err(e) => e,
    }
}

#[tokio::test]
async fn bad_arguments_are_refused_before_any_server_starts() {
    let run = Run::new(project("python"));
    let cases: &[serde_json::Value] = &[
        json!({"op": "fly"}),
        json!({"file": "app.py"}),
        json!({"op": "hover", "file": "app.py", "line": "five", "symbol": "greet"}),
        json!({"op": "hover", "file": "app.py", "line": 5, "symbol": "greet", "column": 3}),
        json!({"op": "definition", "file": "app.py", "line": 5}),
        json!({"op": "definition", "file": "app.py", "symbol": "greet"}),
        json!({"op": "hover", "line": 5, "symbol": "greet"}),
        json!({"op": "hover", "file": "../outside.py", "line": 1, "symbol": "x"}),
        json!({"op": "hover", "file": "/etc/passwd", "line": 1, "symbol": "root"}),
        json!({"op": "hover", "file": "missing.py", "line": 1, "symbol": "x"}),
        json!({"op": "hover", "file": "app.py", "line": 99, "symbol": "greet"}),
        json!({"op": "hover", "file": "app.py", "line": 0, "symbol": "greet"}),
        json!({"op": "hover", "file": "app.py", "line": 6, "symbol": "greet"}),
        json!({"op": "symbols"}),
        // The read ops of issue 17 take the same positions and files.
        json!({"op": "incoming_calls", "file": "app.py", "line": 5}),
        json!({"op": "outgoing_calls", "file": "app.py", "symbol": "greet"}),
        json!({"op": "supertypes", "file": "app.py", "line": 6, "symbol": "greet"}),
        json!({"op": "subtypes", "file": "../outside.py", "line": 1, "symbol": "x"}),
        json!({"op": "signature_help", "file": "app.py", "line": 99, "symbol": "greet"}),
        json!({"op": "capabilities"}),
        json!({"op": "capabilities", "file": "/etc/passwd"}),
        json!({"op": "call_graph", "file": "app.py"}),
        // `detail` is a boolean, for one file's symbols only.
        json!({"op": "symbols", "file": "app.py", "detail": "yes"}),
        json!({"op": "symbols", "query": "greet", "detail": true}),
        json!({"op": "hover", "file": "app.py", "line": 5, "symbol": "greet", "detail": true}),
    ];
    let mut said = Vec::new();
    for args in cases {
        let e = err(&run, args.clone()).await;
        assert!(matches!(e, ToolError::BadArgs(_)), "{args}: {e}");
        said.push(masked(&e.to_string(), &run.root));
    }
    expect_test::expect![[r#"
        bad arguments: argument `op`: unknown variant `fly`, expected one of `diagnostics`, `definition`, `type_definition`, `implementation`, `references`, `hover`, `symbols`, `code_actions`, `status`, `reload`, `incoming_calls`, `outgoing_calls`, `supertypes`, `subtypes`, `signature_help`, `capabilities`; check the tool's input schema
        bad arguments: missing field `op`; check the tool's input schema
        bad arguments: argument `line`: invalid type: string "five", expected u32; check the tool's input schema
        bad arguments: argument `column`: unknown field `column`, expected one of `op`, `file`, `line`, `symbol`, `occurrence`, `query`, `detail`, `timeout_seconds`; check the tool's input schema
        bad arguments: op `definition` needs `symbol`: the identifier on line 5 the question is about (positions are never guessed from a column)
        bad arguments: op `definition` needs `line` (1-based) and `symbol` (the identifier on that line)
        bad arguments: op `hover` needs `file` (a path relative to the workspace root)
        bad arguments: `../outside.py` is outside the workspace; only paths inside ROOT can be used (give them relative to it)
        bad arguments: `/etc/passwd` is outside the workspace; only paths inside ROOT can be used (give them relative to it)
        bad arguments: `missing.py` does not exist in the workspace; check the path (relative to the workspace root)
        bad arguments: line 99 is past the end of app.py, which has 9 lines
        bad arguments: `line` is 1-based; the first line is 1
        bad arguments: `greet` does not occur on app.py:6, which reads: "g = Greeter(\"hi\")"; it occurs on nearby lines:
          5: message = greet("world")
          8: s = "🙂漢字" + greet("x")
        pass one of those as `line`
        bad arguments: op `symbols` needs `query` (workspace search) or `file` (that file's symbols)
        bad arguments: op `incoming_calls` needs `symbol`: the identifier on line 5 the question is about (positions are never guessed from a column)
        bad arguments: op `outgoing_calls` needs `line` (1-based) and `symbol` (the identifier on that line)
        bad arguments: `greet` does not occur on app.py:6, which reads: "g = Greeter(\"hi\")"; it occurs on nearby lines:
          5: message = greet("world")
          8: s = "🙂漢字" + greet("x")
        pass one of those as `line`
        bad arguments: `../outside.py` is outside the workspace; only paths inside ROOT can be used (give them relative to it)
        bad arguments: line 99 is past the end of app.py, which has 9 lines
        bad arguments: op `capabilities` needs `file` (a path relative to the workspace root)
        bad arguments: `/etc/passwd` is outside the workspace; only paths inside ROOT can be used (give them relative to it)
        bad arguments: argument `op`: unknown variant `call_graph`, expected one of `diagnostics`, `definition`, `type_definition`, `implementation`, `references`, `hover`, `symbols`, `code_actions`, `status`, `reload`, `incoming_calls`, `outgoing_calls`, `supertypes`, `subtypes`, `signature_help`, `capabilities`; check the tool's input schema
        bad arguments: argument `detail`: invalid type: string "yes", expected a boolean; check the tool's input schema
        bad arguments: `detail` (true or false) applies to op `symbols` with `file` only: drop it, or ask for one file's symbols
        bad arguments: `detail` (true or false) applies to op `symbols` with `file` only: drop it, or ask for one file's symbols"#]].assert_eq(&said.join("\n"));
    // Two occurrences on one line: listed, and `occurrence` picks one.
    std::fs::write(
        run.root.join("twice.py"),
        "def f(url):\n    return g(url=url)\n",
    )
    .unwrap();
    let e = err(
        &run,
        json!({"op": "hover", "file": "twice.py", "line": 2, "symbol": "url"}),
    )
    .await;
    expect_test::expect![[r#"
        bad arguments: `url` occurs 2 times on twice.py:2
          1: return g([url]=url)
          2: return g(url=[url])
        pass "occurrence": 1 or 2"#]]
    .assert_eq(&e.to_string());
    // No server was started for any of it.
    assert!(run.pids().await.is_empty());

    // A language with no catalog entry.
    std::fs::write(run.root.join("notes.txt"), "hello\n").unwrap();
    let e = err(
        &run,
        json!({"op": "hover", "file": "notes.txt", "line": 1, "symbol": "hello"}),
    )
    .await;
    assert!(matches!(e, ToolError::Unavailable(_)), "{e}");
    expect_test::expect!["not available here: no language server in the catalog for `.txt` files (notes.txt); the catalog covers .astro .bash .bib .c .cc .cjs .clj .cljc .cljs .cmake .cpp .cs .css .cts .cxx .dart .dockerfile .edn .elm .erl .ex .exs .f .f03 .f08 .f90 .f95 .for .gleam .go .gql .graphql .h .hh .hpp .hrl .hs .htm .html .java .js .json .jsonc .jsx .kt .kts .less .lhs .lua .markdown .md .mjs .ml .mli .mts .nim .nims .nix .php .pl .pm .prisma .proto .purs .py .pyi .rake .rb .rs .sbt .sc .scala .scss .sh .sol .sql .svelte .swift .tex .tf .tfvars .toml .ts .tsx .typ .vim .vue .yaml .yml .zig .zon CMakeLists.txt Containerfile Dockerfile; the harness can add a server in the `[lsp]` config"].assert_eq(&e.to_string());
    run.finish().await;
}

#[tokio::test]
async fn status_and_refusals_name_the_missing_half() {
    // A Python file with no root marker, and an entry whose binary is missing.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("loose.py"), "x = 1\n").unwrap();
    std::fs::write(dir.path().join("build.zig"), "").unwrap();
    std::fs::write(dir.path().join("main.zig"), "const x = 1;\n").unwrap();
    let config: CatalogConfig = serde_json::from_value(json!({
        "servers": [{"id": "zig", "extensions": {"zig": "zig"}, "commands": [["definitely-not-installed-zls"]],
                     "root_markers": ["build.zig"]}]
    }))
    .unwrap();
    let run = Run::with_binding(dir, LspBinding::new(config));
    let e = err(
        &run,
        json!({"op": "hover", "file": "loose.py", "line": 1, "symbol": "x"}),
    )
    .await;
    assert!(matches!(e, ToolError::Unavailable(_)), "{e}");
    expect_test::expect!["not available here: cannot start a server for loose.py: no python project root: none of pyproject.toml, setup.py, setup.cfg, requirements.txt, pyrightconfig.json found in loose.py or any folder above it up to the workspace root; add one of them (or open a file inside such a project); alternative python-jedi: no python-jedi project root: none of pyproject.toml, setup.py, setup.cfg, requirements.txt found in loose.py or any folder above it up to the workspace root; add one of them (or open a file inside such a project); alternative python-pylsp: no python-pylsp project root: none of pyproject.toml, setup.py, setup.cfg, requirements.txt found in loose.py or any folder above it up to the workspace root; add one of them (or open a file inside such a project)"].assert_eq(&e.to_string());
    let e = err(
        &run,
        json!({"op": "hover", "file": "main.zig", "line": 1, "symbol": "x"}),
    )
    .await;
    expect_test::expect!["not available here: cannot start a server for main.zig: the zig project root is . but no server binary resolves: looked for definitely-not-installed-zls in .venv/bin, venv/bin, node_modules/.bin (of the root and up to the workspace root), among the programs `agent-tools install` put in its data folder, and on $PATH; install one of them"].assert_eq(&masked(&e.to_string(), &run.root));
    // Entries with no project root here share one line.
    // (Which other entries are installed varies: their lines are left out.)
    let status = run.lsp(json!({"op": "status"})).await;
    let status: Vec<&str> = status
        .lines()
        .filter(|l| {
            ["python", "zig", "no project root"]
                .iter()
                .any(|s| l.starts_with(s))
        })
        .collect();
    expect_test::expect![[r#"
        python: cannot start (no python project root: none of pyproject.toml, setup.py, setup.cfg, requirements.txt, pyrightconfig.json found in loose.py or any folder above it up to the workspace root; add one of them (or open a file inside such a project))
        python-jedi: cannot start (no python-jedi project root: none of pyproject.toml, setup.py, setup.cfg, requirements.txt found in loose.py or any folder above it up to the workspace root; add one of them (or open a file inside such a project))
        python-pylsp: cannot start (no python-pylsp project root: none of pyproject.toml, setup.py, setup.cfg, requirements.txt found in loose.py or any folder above it up to the workspace root; add one of them (or open a file inside such a project))
        zig: cannot start (the zig project root is . but no server binary resolves: looked for definitely-not-installed-zls in .venv/bin, venv/bin, node_modules/.bin (of the root and up to the workspace root), among the programs `agent-tools install` put in its data folder, and on $PATH; install one of them)
        no project root at the workspace root (each starts for a file inside its kind of project; `doctor` lists what each looks for): typescript, rust, c, go, dart, c-ccls, ruff, biome, eslint, php, svelte, graphql, fortran, cmake, vue, astro, tailwindcss, prisma, solidity, purescript, java, kotlin, lua, haskell, ocaml, elixir, erlang, ruby, csharp, swift, scala, terraform, nix, elm, clojure, latex, perl, gleam, protobuf, nim"#]]
    .assert_eq(&masked(&status.join("\n"), &run.root));
    assert!(run.pids().await.is_empty());
    let out = run.lsp(json!({"op": "diagnostics", "file": "*"})).await;
    expect_test::expect!["lsp diagnostics *  zig at .: the zig entry has no project checker"]
        .assert_eq(&masked(&out, &run.root));
    run.finish().await;
}

#[tokio::test]
async fn rename_is_write_tier_and_hidden_from_read_only_surfaces() {
    let run = Run::new(project("python"));
    let names: Vec<String> = run
        .registry
        .specs(Surface::READ_ONLY)
        .into_iter()
        .map(|s| s.name)
        .collect();
    expect_test::expect!["lsp"].assert_eq(&names.join("\n"));
    let e = run
        .registry
        .call(
            Surface::READ_ONLY,
            "lsp_rename",
            json!({}),
            Default::default(),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::UnknownTool { .. }), "{e}");
    let e = run
        .call(
            "lsp_rename",
            json!({"file": "app.py", "line": 5, "symbol": "greet", "new_name": " "}),
        )
        .await
        .unwrap_err();
    expect_test::expect!["bad arguments: `new_name` is empty; give the new identifier"]
        .assert_eq(&e.to_string());
    assert_eq!(
        run.read("app.py"),
        std::fs::read_to_string(
            test_support::fixtures::workspace_root().join("tests/fixtures/lsp/python/app.py")
        )
        .unwrap()
    );
    run.finish().await;
}

#[tokio::test]
async fn a_new_name_that_is_no_identifier_is_refused_before_any_server_starts() {
    let run = Run::new(project("python"));
    let before = run.read("app.py");
    let mut said = Vec::new();
    for new_name in ["1bad name", "class", "greet"] {
        let e = run
            .call(
                "lsp_rename",
                json!({"file": "app.py", "line": 5, "symbol": "greet", "new_name": new_name}),
            )
            .await
            .unwrap_err();
        assert_eq!(e.kind(), "bad_arguments");
        said.push(e.to_string());
    }
    expect_test::expect![[r#"
        bad arguments: `1bad name` is not a Python identifier: it starts with `1`; an identifier starts with a letter or `_`; nothing was asked of the server or written
        bad arguments: `class` is not a Python identifier: it is a reserved word in Python; nothing was asked of the server or written
        bad arguments: `new_name` is `greet`, the symbol's own name: there is nothing to rename; nothing was written"#]].assert_eq(&said.join("\n"));
    assert!(run.pids().await.is_empty());
    assert_eq!(run.read("app.py"), before);
    run.finish().await;
}

#[tokio::test]
async fn project_wide_checking_is_refused_below_the_exec_surface() {
    let run = Run::new(project("python"));
    let mut said = Vec::new();
    for surface in [Surface::READ_ONLY, Surface::WRITE] {
        let e = run
            .registry
            .call(
                surface,
                "lsp",
                json!({"op": "diagnostics", "file": "*"}),
                Default::default(),
            )
            .await
            .unwrap_err();
        assert_eq!(e.kind(), "refused");
        said.push(e.to_string());
    }
    expect_test::expect![[r#"
        refused: project-wide checking (`diagnostics` with file "*") runs the project's own build (cargo check runs build scripts and proc macros, go vet compiles cgo, tsc and pyright may be the checkout's own binaries); it runs on the exec surface — this call came from the read surface. Ask `diagnostics` for one file instead (its language server answers)
        refused: project-wide checking (`diagnostics` with file "*") runs the project's own build (cargo check runs build scripts and proc macros, go vet compiles cgo, tsc and pyright may be the checkout's own binaries); it runs on the exec surface — this call came from the write surface. Ask `diagnostics` for one file instead (its language server answers)"#]].assert_eq(&said.join("\n"));
    // No checker ran and no server started.
    assert!(run.pids().await.is_empty());
    run.finish().await;
}

#[tokio::test]
async fn status_and_doctor_name_a_project_local_server_binary() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "").unwrap();
    // A file for it to serve: without one, status groups it with the
    // servers that have no files here.
    std::fs::write(dir.path().join("app.py"), "x = 1\n").unwrap();
    let bin = dir.path().join(".venv/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let server = bin.join("basedpyright-langserver");
    std::fs::write(&server, "#!/bin/sh\nexit 1\n").unwrap();
    std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = Run::new(dir);
    let status = run.lsp(json!({"op": "status"})).await;
    let python: Vec<&str> = status
        .lines()
        .filter(|l| l.starts_with("python "))
        .collect();
    expect_test::expect!["python at . (basedpyright-langserver --stdio, project-local binary .venv/bin/basedpyright-langserver): not started (starts on the first call for one of its files)"].assert_eq(&python.join("\n"));
    let ctx = tool_core::RunContext {
        workspace: tool_core::Workspace::new(&run.root).unwrap(),
        conversation_id: None,
    };
    let doctor = tool_core::Binding::doctor(&*run.binding, &ctx);
    let python: Vec<String> = doctor
        .into_iter()
        .filter(|l| l.starts_with("lsp python:"))
        .map(|l| l.replace(&run.root.display().to_string(), "<root>"))
        .collect();
    expect_test::expect!["lsp python: usable, starts at . (basedpyright-langserver --stdio → <root>/.venv/bin/basedpyright-langserver, project-local binary .venv/bin/basedpyright-langserver)"].assert_eq(&python.join("\n"));
    assert!(run.pids().await.is_empty());
    run.finish().await;
}

#[tokio::test]
async fn a_timeout_outside_5_to_300_seconds_is_refused_before_any_server_starts() {
    let run = Run::new(project("python"));
    let hover = json!({"op": "hover", "file": "app.py", "line": 5, "symbol": "greet", "timeout_seconds": 4});
    let e = err(&run, hover).await;
    assert!(matches!(e, ToolError::BadArgs(_)), "{e}");
    expect_test::expect!["bad arguments: `timeout_seconds` is 4; it must be from 5 to 300 seconds (leave it out for the configured bounds)"]
        .assert_eq(&e.to_string());
    let rename = json!({"file": "app.py", "line": 5, "symbol": "greet", "new_name": "salute", "timeout_seconds": 301});
    let e = run.call("lsp_rename", rename).await.unwrap_err();
    expect_test::expect!["bad arguments: `timeout_seconds` is 301; it must be from 5 to 300 seconds (leave it out for the configured bounds)"]
        .assert_eq(&e.to_string());
    assert!(run.pids().await.is_empty());
    assert_eq!(
        run.read("app.py"),
        std::fs::read_to_string(
            test_support::fixtures::workspace_root().join("tests/fixtures/lsp/python/app.py"),
        )
        .unwrap()
    );
    run.finish().await;
}

/// `status` gives a line of its own to an entry that cannot start only
/// where the workspace has files it would serve: package.json is a project
/// root for many entries, and one whose language has no file here joins the
/// one "not installed" line.
#[tokio::test]
async fn status_names_a_missing_server_on_its_own_line_only_where_it_has_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("package.json"), "{}\n").unwrap();
    std::fs::write(dir.path().join("index.fakejs"), "x\n").unwrap();
    let entry = |id: &str, ext: &str| {
        json!({"id": id, "extensions": {ext: ext}, "commands": [[format!("definitely-not-installed-{id}")]],
               "root_markers": ["package.json"]})
    };
    let config: CatalogConfig = serde_json::from_value(json!({
        "servers": [entry("fake-js", "fakejs"), entry("fake-vue", "fakevue")]
    }))
    .unwrap();
    let run = Run::with_binding(dir, LspBinding::new(config));
    let status = run.lsp(json!({"op": "status"})).await;
    let own: Vec<&str> = status.lines().filter(|l| l.starts_with("fake-")).collect();
    expect_test::expect!["fake-js: cannot start (the fake-js project root is . but no server binary resolves: looked for definitely-not-installed-fake-js in .venv/bin, venv/bin, node_modules/.bin (of the root and up to the workspace root), among the programs `agent-tools install` put in its data folder, and on $PATH; install one of them)"]
        .assert_eq(&own.join("\n"));
    let not_installed: Vec<&str> = status
        .lines()
        .find_map(|l| {
            l.strip_prefix("not installed (no server binary in the project or on $PATH): ")
        })
        .unwrap_or_default()
        .split(", ")
        .collect();
    assert!(not_installed.contains(&"fake-vue"), "{status}");
    run.finish().await;
}

/// `status` names what would serve the workspace's files, says which
/// alternatives are not used while an earlier server takes their files,
/// and puts the installed servers that have no files here on one line.
#[tokio::test]
async fn status_names_alternatives_and_groups_servers_without_files() {
    if test_support::fixtures::require(&[
        "basedpyright-langserver",
        "jedi-language-server",
        "pylsp",
        "bash-language-server",
    ])
    .is_none()
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pyproject.toml"), "").unwrap();
    std::fs::write(dir.path().join("app.py"), "x = 1\n").unwrap();
    let run = Run::new(dir);
    let status = run.lsp(json!({"op": "status"})).await;
    let python: Vec<&str> = status.lines().filter(|l| l.starts_with("python")).collect();
    expect_test::expect![[r#"
        python at . (basedpyright-langserver --stdio): not started (starts on the first call for one of its files)
        python-jedi at . (jedi-language-server): not used while python serves its files (an alternative, used where python cannot start)
        python-pylsp at . (pylsp): not used while python serves its files (an alternative, used where python cannot start)"#]]
    .assert_eq(&python.join("\n"));
    let grouped: Vec<&str> = status
        .lines()
        .find_map(|l| l.strip_prefix("installed, no files of theirs here (each starts on the first call for one of its files): "))
        .expect("a line for the servers without files")
        .split(", ")
        .collect();
    assert!(grouped.contains(&"bash"), "{status}");
    assert!(
        !grouped.iter().any(|id| id.starts_with("python")),
        "{status}"
    );
    run.finish().await;
}
