//! `agent-tools install` from an empty data folder, as a newcomer runs it on
//! a machine whose PATH has no language server: the servers and the adapter
//! come from the registries, `doctor` finds them there, and a call is
//! answered by the installed server. A second run finds them present; a
//! failed install leaves nothing behind.

use expect_test::expect;
use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_agent-tools");

/// PATH without the test fixtures' folders, so only what `install` puts in
/// the data folder (and the machine's own python3, node, npm) can be found.
fn path_without_fixtures() -> String {
    let path = std::env::var("PATH").unwrap_or_default();
    path.split(':')
        .filter(|d| !d.contains("/target/fixtures") && !d.is_empty())
        .collect::<Vec<_>>()
        .join(":")
}

fn agent_tools(data: &Path, root: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(root)
        .env("PATH", path_without_fixtures())
        .env("AGENT_TOOLS_DATA_DIR", data)
        .env_remove("AGENT_TOOLS_FIXTURES")
        .output()
        .unwrap()
}

fn text(out: &Output, data: &Path) -> String {
    String::from_utf8_lossy(&out.stdout).replace(&data.display().to_string(), "<DATA>")
}

#[test]
fn install_python_and_typescript_then_doctor_finds_them_and_the_server_answers() {
    if test_support::fixtures::require(&["npm"]).is_none() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("data");
    let root = t.path().join("project");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("pyproject.toml"), "[project]\nname = \"p\"\n").unwrap();
    std::fs::write(
        root.join("app.py"),
        "def twice(x: int) -> int:\n    return 2 * x\n",
    )
    .unwrap();
    std::fs::write(root.join("tsconfig.json"), "{}\n").unwrap();
    std::fs::write(root.join("app.ts"), "export const one: number = 1;\n").unwrap();

    let out = agent_tools(&data, &root, &["install", "python", "typescript"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    expect![[r#"
        into <DATA>
        basedpyright (basedpyright==1.40.2): installed (basedpyright-langserver, basedpyright)
        debugpy (debugpy==1.8.22): installed (debugpy-python)
        typescript-language-server (typescript-language-server@4.4.1 typescript@5.9.3): installed (typescript-language-server, tsserver)
    "#]]
    .assert_eq(&text(&out, &data));

    // With no language named, the root's own languages; all there already.
    let again = agent_tools(&data, &root, &["install"]);
    assert_eq!(again.status.code(), Some(0));
    expect![[r#"
        languages under .: python, typescript
        into <DATA>
        basedpyright (basedpyright==1.40.2): present
        debugpy (debugpy==1.8.22): present
        typescript-language-server (typescript-language-server@4.4.1 typescript@5.9.3): present
    "#]]
    .assert_eq(&text(&again, &data));

    let doctor = text(&agent_tools(&data, &root, &["doctor"]), &data);
    let usable: Vec<&str> = doctor
        .lines()
        .filter(|l| {
            l.starts_with("  lsp python:")
                || l.starts_with("  lsp typescript:")
                || l.starts_with("  debugpy ")
        })
        .map(|l| l.split(';').next().unwrap())
        .collect();
    expect![[r#"
        [
            "  lsp python: usable, starts at . (basedpyright-langserver --stdio → <DATA>/bin/basedpyright-langserver)",
            "  lsp typescript: usable, starts at . (typescript-language-server --stdio → <DATA>/bin/typescript-language-server)",
            "  debugpy  usable: `<DATA>/bin/debugpy-python -m debugpy.adapter` (marker pyproject.toml)",
        ]
    "#]]
    .assert_debug_eq(&usable);

    let symbols = agent_tools(
        &data,
        &root,
        &["call", "lsp", r#"{"op": "symbols", "file": "app.py"}"#],
    );
    assert_eq!(
        symbols.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&symbols.stderr)
    );
    expect![[r#"
        lsp symbols  app.py — 1 symbol (1 local of functions not shown: `detail: true` lists them)
        1: function twice
    "#]]
    .assert_eq(&text(&symbols, &data));
}

#[test]
fn a_failed_install_names_the_registry_and_leaves_nothing_behind() {
    let t = tempfile::tempdir().unwrap();
    let recipe = tool_core::install::Recipe {
        name: "no-such".into(),
        languages: vec![],
        source: tool_core::install::Source::Pypi(vec![
            "agent-tools-no-such-package-a8f3==0.0.1".into()
        ]),
        bin: vec!["no-such-server".into()],
        link: Default::default(),
    };
    let err = tool_core::install::install(&recipe, t.path()).unwrap_err();
    assert_eq!((err.recipe.as_str(), err.registry), ("no-such", "PyPI"));
    assert!(
        err.why
            .contains("No matching distribution found for agent-tools-no-such-package-a8f3==0.0.1"),
        "{}",
        err.why
    );
    assert!(!t.path().join("pkgs/no-such").exists());
    assert!(!t.path().join("bin/no-such-server").exists());
}

#[test]
fn an_unknown_language_is_refused_and_installs_nothing() {
    let t = tempfile::tempdir().unwrap();
    let out = agent_tools(t.path(), t.path(), &["install", "cobol"]);
    assert_eq!(out.status.code(), Some(2));
    expect![[r#"
        agent-tools install: nothing to install for cobol; languages: bash, c, cpp, css, dockerfile, fortran, go, graphql, html, java, javascript, json, php, python, rust, sql, svelte, typescript, vim, yaml; recipes: basedpyright, debugpy, typescript-language-server, rust-analyzer, gopls, delve, clangd, lldb, jdtls, ruff, jedi-language-server, python-lsp-server, biome, ccls, bash-language-server, shellcheck, yaml-language-server, vscode-langservers-extracted, dockerfile-language-server, intelephense, svelte-language-server, graphql-language-service, sql-language-server, vim-language-server, fortls
    "#]]
    .assert_eq(&String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
}
