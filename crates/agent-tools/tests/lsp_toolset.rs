//! The lsp family through the facade: the default binding from the `[lsp]`
//! config, `doctor` lines, diagnostics on write wrapped around the
//! facade's own `write` and `edit` tools, and a staged code action resolved
//! with no other family bound, against real basedpyright.

#![cfg(feature = "lsp")]

use agent_tools::{RunConfig, RunOptions, ToolsetBuilder};
use serde_json::json;
use std::sync::Arc;
use tool_core::{AllowAll, CallContext, Surface, Tier};
use tool_lsp::{CatalogConfig, LspBinding};

/// The lines that start with one of `starts`, as one text (`doctor` lists
/// every catalog entry; which of the others are usable depends on the
/// machine).
fn lines_of(lines: &[String], starts: &[&str]) -> String {
    let picked: Vec<&str> = lines
        .iter()
        .filter(|l| starts.iter().any(|s| l.starts_with(s)))
        .map(String::as_str)
        .collect();
    picked.join("\n")
}

/// The text of a call on the exec surface; panics with the error.
async fn text(reg: tool_core::Registry, name: &str, args: serde_json::Value) -> String {
    reg.call(Surface::new(Tier::Exec), name, args, CallContext::new())
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .joined_text()
}

fn python_project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("pyproject.toml"), "[project]\nname = \"x\"\n").unwrap();
    std::fs::write(
        d.path().join("app.py"),
        "def greet(name: str) -> str:\n    return name\n",
    )
    .unwrap();
    d
}

#[test]
fn the_default_binding_reads_the_lsp_config_section_and_doctor_says_why() {
    let d = python_project();
    let mut opts = RunOptions::new(d.path());
    opts.config.lsp = Some(
        toml::from_str("disable = [\"dart\"]\n[[servers]]\nid = \"zig\"\ncommands = [[\"no-such-zls\"]]\nroot_markers = [\"build.zig\"]\n[servers.extensions]\nzig = \"zig\"\n")
            .unwrap(),
    );
    let toolset = ToolsetBuilder::new(d.path())
        .unwrap()
        .with_defaults(&opts)
        .build()
        .unwrap();
    let names = toolset.registry().names();
    expect_test::expect![[r#"
        ask_user
        ast_edit
        ast_grep
        debug
        edit
        eval
        lsp
        lsp_code_action
        lsp_rename
        read
        resolve
        write"#]]
    .assert_eq(&names.join("\n"));
    let doctor = toolset.doctor_lines("lsp");
    expect_test::expect![[r#"
        lsp zig: not usable at the workspace root: no zig project root: none of build.zig found in . or any folder above it up to the workspace root; add one of them (or open a file inside such a project)
        lsp — no project of theirs here (38): typescript, rust, c, go, c-ccls, biome, eslint, php, svelte, graphql, fortran, cmake, vue, astro, tailwindcss, prisma, solidity, purescript, java, kotlin, lua, haskell, ocaml, elixir, erlang, ruby, csharp, swift, scala, terraform, nix, elm, clojure, latex, perl, gleam, protobuf, nim"#]].assert_eq(&lines_of(&doctor, &["lsp zig", "lsp rust", "lsp dart", "lsp — no project"]));

    // `doctor --all`: each its own line, nothing grouped.
    let all = toolset.doctor_lines_all("lsp");
    expect_test::expect!["lsp rust: not usable at the workspace root: no rust project root: none of Cargo.toml found in . or any folder above it up to the workspace root; add one of them (or open a file inside such a project)"].assert_eq(&lines_of(&all, &["lsp rust", "lsp —"]));

    let mut bad = RunOptions::new(d.path());
    bad.config.lsp = Some(toml::from_str("no_such_key = 1\n").unwrap());
    let toolset = ToolsetBuilder::new(d.path())
        .unwrap()
        .with_defaults(&bad)
        .build()
        .unwrap();
    assert!(toolset
        .registry()
        .names()
        .iter()
        .all(|n| !n.starts_with("lsp")));
    match toolset.state("lsp") {
        agent_tools::BindingState::Unbound { why } => {
            assert_eq!(
                why,
                "config: [lsp] no_such_key = 1: unknown field `no_such_key`, expected one of \
                 `servers`, `disable`, `request_timeout_ms`, `index_wait_ms`, `diagnostics_wait_ms`, `idle_timeout_ms`, `memory_ceiling_mb`, `warm_up`, `shared`, `format_on_write`"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_facades_write_and_edit_report_new_diagnostics() {
    if test_support::fixtures::require(&["basedpyright-langserver"]).is_none() {
        return;
    }
    let d = python_project();
    let binding = LspBinding::new(CatalogConfig::default())
        .with_path(Some(test_support::fixtures::path_env()));
    let toolset = ToolsetBuilder::new(d.path())
        .unwrap()
        .approver(Arc::new(AllowAll))
        .bind("lsp", Box::new(binding))
        .with_defaults(&RunOptions::new(d.path()))
        .build()
        .unwrap();
    let reg = toolset.registry();
    let call = |name: &'static str, args| text(reg.clone(), name, args);
    let out = call(
        "write",
        json!({"path": "app.py", "content": "def greet(name: str) -> int:\n    return name\n"}),
    )
    .await;
    expect_test::expect![[r#"
        wrote app.py (2 lines, 45 bytes; replaced; it had 2 lines)
        lsp: 1 new problem in app.py after this write:
        app.py:2:12 error [reportReturnType] Type "str" is not assignable to return type "int" (python)"#]].assert_eq(&out);
    // Moved down, then fixed: nothing new either time.
    let mut edited = Vec::new();
    for (old, new) in [("def greet", "# moved\ndef greet"), ("-> int", "-> str")] {
        edited.push(
            call(
                "edit",
                json!({"path": "app.py", "old_string": old, "new_string": new}),
            )
            .await,
        );
    }
    expect_test::expect![[r#"
        edited app.py: 1 replacement (line 1)
             1	# moved
             2	def greet(name: str) -> int:
             3	    return name
        lsp: no new errors or warnings in app.py
        edited app.py: 1 replacement (line 2)
             1	# moved
             2	def greet(name: str) -> str:
             3	    return name
        lsp: no new errors or warnings in app.py"#]]
    .assert_eq(&edited.join("\n"));
    let status = call("lsp", json!({"op": "status"})).await;
    // Its line up to the pid (ready or still indexing depends on timing).
    let python = status
        .lines()
        .find(|l| l.starts_with("python "))
        .and_then(|l| l.split_once(", pid "))
        .map_or("", |(head, _)| head);
    expect_test::expect!["python at . (basedpyright-langserver --stdio): running"]
        .assert_eq(python);
}

/// Staging is the run's, not a family's: with the lsp family alone bound,
/// a staged code action is kept, shown, and written by `resolve`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lsp_family_alone_stages_a_code_action_and_resolves_it() {
    if test_support::fixtures::require(&["basedpyright-langserver"]).is_none() {
        return;
    }
    let d = python_project();
    // The apply journal goes in `.git/`, inside the temporary checkout.
    std::fs::create_dir(d.path().join(".git")).unwrap();
    let app = "import os\nprint(1)\n";
    std::fs::write(d.path().join("app.py"), app).unwrap();
    // A generous bound: a cold server's first check can be slow on a
    // shared machine.
    let config = CatalogConfig {
        diagnostics_wait_ms: Some(60_000),
        ..CatalogConfig::default()
    };
    let binding = LspBinding::new(config).with_path(Some(test_support::fixtures::path_env()));
    let toolset = ToolsetBuilder::new(d.path())
        .unwrap()
        .approver(Arc::new(AllowAll))
        .bind("lsp", Box::new(binding))
        .build()
        .unwrap();
    let reg = toolset.registry();
    expect_test::expect![[r#"
        lsp
        lsp_code_action
        lsp_rename
        resolve"#]]
    .assert_eq(&reg.names().join("\n"));
    let call = |name: &'static str, args| text(reg.clone(), name, args);
    let staged = call(
        "lsp_code_action",
        json!({"file": "app.py", "line": 1, "symbol": "os", "action": 1, "stage": true}),
    )
    .await;
    expect_test::expect![[r#"
        (proposed) 1 edit in 1 file … call resolve with edit_id "edit_1" and action "accept" to write them, or "discard"
        lsp_code_action  "Add `# pyright: ignore[reportUnusedImport]`" at app.py:1; nothing is written until accepted
        --- a/app.py
        +++ b/app.py
        @@ -1,2 +1,2 @@
        -import os
        +import os  # pyright: ignore[reportUnusedImport]
         print(1)
        after this change: 1 warning fixed"#]].assert_eq(&staged);
    assert_eq!(
        std::fs::read_to_string(d.path().join("app.py")).unwrap(),
        app
    );
    let resolved = call("resolve", json!({"edit_id": "edit_1", "action": "accept"})).await;
    expect_test::expect![[r#"
        resolve edit_1: accepted — 1 replacement written to 1 file: app.py
        lsp: no new errors or warnings in app.py"#]]
    .assert_eq(&resolved);
    assert_eq!(
        std::fs::read_to_string(d.path().join("app.py")).unwrap(),
        "import os  # pyright: ignore[reportUnusedImport]\nprint(1)\n"
    );
}

/// A checkout whose `.agent-tools.toml` names a server that would leave a
/// marker file when started.
fn project_naming_a_command() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join(".agent-tools.toml"),
        "surface = \"exec\"\n[lsp]\nrequest_timeout_ms = 4000\n[[lsp.servers]]\nid = \"evil\"\n\
         commands = [[\"sh\", \"-c\", \"touch started-by-project-config\"]]\n\
         root_markers = [\".agent-tools.toml\"]\n[lsp.servers.extensions]\nevil = \"evil\"\n",
    )
    .unwrap();
    std::fs::write(d.path().join("x.evil"), "boom\n").unwrap();
    d
}

async fn diagnostics_of_x_evil(d: &tempfile::TempDir, trust: bool) -> (String, String) {
    let mut opts = RunOptions::new(d.path());
    opts.trust_workspace = trust;
    let toolset = ToolsetBuilder::new(d.path())
        .unwrap()
        .approver(Arc::new(AllowAll))
        .with_defaults(&opts)
        .build()
        .unwrap();
    let reg = toolset.registry();
    let out = match reg
        .call(
            Surface::new(Tier::Exec),
            "lsp",
            json!({"op": "diagnostics", "file": "x.evil"}),
            CallContext::new(),
        )
        .await
    {
        Ok(o) => o.joined_text(),
        Err(e) => e.to_string(),
    };
    let doctor = toolset.doctor_lines("lsp").join("\n");
    (out, doctor)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_config_naming_a_command_runs_it_only_in_a_trusted_workspace() {
    let d = project_naming_a_command();
    let marker = d.path().join("started-by-project-config");
    let (out, doctor) = diagnostics_of_x_evil(&d, false).await;
    assert!(!marker.exists(), "the untrusted project's command ran");
    expect_test::expect![[r#"
        not available here: .agent-tools.toml server `evil` (sh -c touch started-by-project-config): not run: project config names a command; trust the workspace to use it (--trust-workspace)
        no language server in the catalog for `.evil` files (x.evil); the catalog covers .astro .bash .bib .c .cc .cjs .clj .cljc .cljs .cmake .cpp .cs .css .cts .cxx .dart .dockerfile .edn .elm .erl .ex .exs .f .f03 .f08 .f90 .f95 .for .gleam .go .gql .graphql .h .hh .hpp .hrl .hs .htm .html .java .js .json .jsonc .jsx .kt .kts .less .lhs .lua .markdown .md .mjs .ml .mli .mts .nim .nims .nix .php .pl .pm .prisma .proto .purs .py .pyi .rake .rb .rs .sbt .sc .scala .scss .sh .sol .sql .svelte .swift .tex .tf .tfvars .toml .ts .tsx .typ .vim .vue .yaml .yml .zig .zon CMakeLists.txt Containerfile Dockerfile; the harness can add a server in the `[lsp]` config"#]].assert_eq(&out);
    let doctor: Vec<String> = doctor.lines().map(str::to_string).collect();
    expect_test::expect!["lsp .agent-tools.toml server `evil` (sh -c touch started-by-project-config): not run: project config names a command; trust the workspace to use it (--trust-workspace)"]
        .assert_eq(&lines_of(&doctor, &["lsp .agent-tools.toml", "lsp evil"]));

    let (out, _) = diagnostics_of_x_evil(&d, true).await;
    assert!(
        marker.exists(),
        "the trusted project's command did not run: {out}"
    );
    // How the server's end is seen (its exit or a broken pipe) is a race:
    // the answer's start and end are exact.
    let (head, _how) = out
        .split_once(": `initialize` failed")
        .unwrap_or((&out, ""));
    let (_, tail) = out.rsplit_once("; ").unwrap_or(("", &out));
    expect_test::expect!["failed: evil (sh -c touch started-by-project-config) did not start at . … the next call tries again (crashed ×1)"].assert_eq(&format!("{head} … {tail}"));
}

#[test]
fn the_user_config_is_read_under_the_harness_config() {
    let d = python_project();
    let user: RunConfig = toml::from_str(
        "[lsp]\ndisable = [\"dart\"]\nrequest_timeout_ms = 1\n[[lsp.servers]]\nid = \"zig\"\n\
         commands = [[\"no-such-zls\"]]\nroot_markers = [\"build.zig\"]\n[lsp.servers.extensions]\nzig = \"zig\"\n",
    )
    .unwrap();
    let mut opts = RunOptions::new(d.path());
    opts.user_config = Some(user);
    opts.config.lsp = Some(toml::from_str("disable = [\"go\"]\n").unwrap());
    let toolset = ToolsetBuilder::new(d.path())
        .unwrap()
        .with_defaults(&opts)
        .build()
        .unwrap();
    let doctor = toolset.doctor_lines("lsp");
    expect_test::expect!["lsp zig: not usable at the workspace root: no zig project root: none of build.zig found in . or any folder above it up to the workspace root; add one of them (or open a file inside such a project)"].assert_eq(&lines_of(&doctor, &["lsp zig", "lsp dart", "lsp go"]));
}
