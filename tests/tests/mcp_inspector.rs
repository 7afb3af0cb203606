//! `agent-tools mcp` through the official MCP Inspector's CLI (npm
//! `@modelcontextprotocol/inspector-cli`, with the TypeScript SDK and Ajv it
//! brings, installed into `target/fixtures/npm` by `cargo xtask fixtures`):
//! on every surface the tools' input schemas pass Ajv in its default strict
//! mode with JSON Schema's formats and no warning, and an integer sent as a
//! string is taken as one (issue 37).
//!
//! The Inspector and `tests/mcp/strict_schemas.cjs` only drive and report;
//! the assertions are here.

use expect_test::expect;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use test_support::fixtures;

/// The fixtures' npm `node_modules` with the Inspector CLI, or `None`
/// (skipped locally; a failure in CI).
fn node_modules() -> Option<PathBuf> {
    let modules = fixtures::dir().join("npm/node_modules");
    if modules
        .join("@modelcontextprotocol/inspector-cli/build/index.js")
        .is_file()
    {
        return Some(modules);
    }
    let msg = format!(
        "fixture missing: the MCP Inspector CLI in {}; run `cargo xtask fixtures`",
        modules.display()
    );
    assert!(!fixtures::in_ci(), "{msg}");
    eprintln!("skipping: {msg}");
    None
}

fn repo_root() -> PathBuf {
    tests::repo_root()
}

/// A fresh copy of the MCP fixture project.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    tests::copy_mcp_project(dir.path());
    dir
}

/// One Inspector CLI run against `agent-tools mcp` on `root`: its stdout as
/// JSON, and its stderr.
fn inspect(modules: &Path, root: &Path, surface: &str, inspector_args: &[&str]) -> (Value, String) {
    let out = Command::new("node")
        .arg(modules.join("@modelcontextprotocol/inspector-cli/build/index.js"))
        .arg(tests::built_agent_tools_bin())
        .args(inspector_args)
        // The server's own arguments, after `--` so the Inspector keeps them.
        .arg("--")
        .args(["mcp", "--surface", surface, "--root"])
        .arg(root)
        // inspector-cli 1.0.3 finds its package.json by a path relative to
        // the working directory: run it from its own build folder.
        .current_dir(modules.join("@modelcontextprotocol/inspector-cli/build"))
        .env("PATH", fixtures::path_env())
        .env("AGENT_TOOLS_FIXTURES", fixtures::dir())
        .stdin(Stdio::null())
        .output()
        .expect("run the Inspector CLI (node)");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        out.status.success(),
        "the Inspector failed ({})\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    let json = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("the Inspector printed no JSON ({e})\n{stdout}\n{stderr}"));
    (json, stderr)
}

/// Ajv's verdict on each tool's input schema: `tool: error / warnings`.
fn ajv_strict(modules: &Path, tools_list: &Value) -> Value {
    let mut child = Command::new("node")
        .arg(repo_root().join("tests/mcp/strict_schemas.cjs"))
        .arg(modules)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("run strict_schemas.cjs");
    std::io::Write::write_all(
        child.stdin.as_mut().unwrap(),
        tools_list.to_string().as_bytes(),
    )
    .unwrap();
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "strict_schemas.cjs failed");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn every_surface_lists_schemas_a_strict_validator_accepts_without_warning() {
    let Some(modules) = node_modules() else {
        return;
    };
    let proj = project();
    let mut seen = String::new();
    for surface in ["read", "write", "exec"] {
        let (list, stderr) = inspect(&modules, proj.path(), surface, &["--method", "tools/list"]);
        assert!(
            !stderr.to_lowercase().contains("format") && !stderr.to_lowercase().contains("schema"),
            "the Inspector warned on the {surface} surface:\n{stderr}"
        );
        let verdicts = ajv_strict(&modules, &list);
        let mut names = Vec::new();
        for tool in list["tools"].as_array().unwrap() {
            let name = tool["name"].as_str().unwrap();
            names.push(name);
            assert_eq!(
                verdicts[name],
                serde_json::json!({"error": null, "warnings": []}),
                "Ajv strict on {name}'s input schema ({surface} surface)"
            );
            assert_eq!(
                tool_core::schema::portability_problems(&tool["inputSchema"]),
                Vec::<String>::new(),
                "{name} ({surface} surface)"
            );
        }
        seen.push_str(&format!("{surface}: {}\n", names.join(", ")));
    }
    expect![[r#"
        read: ast_grep, lsp, read
        write: ast_edit, ast_grep, edit, lsp, lsp_code_action, lsp_rename, read, resolve, write
        exec: ast_edit, ast_grep, debug, edit, eval, lsp, lsp_code_action, lsp_rename, read, resolve, write
    "#]]
    .assert_eq(&seen);
}

#[test]
fn an_integer_sent_as_a_string_is_taken_and_another_string_refused() {
    let Some(modules) = node_modules() else {
        return;
    };
    let proj = project();
    // The Inspector sends a `--tool-arg` value as JSON when it parses as
    // JSON: `"2"` is the string "2".
    let call = |limit: &str| {
        let path = "path=calc.py".to_string();
        let offset = "offset=\"2\"".to_string();
        let limit = format!("limit={limit}");
        inspect(
            &modules,
            proj.path(),
            "read",
            &[
                "--method",
                "tools/call",
                "--tool-name",
                "read",
                "--tool-arg",
                &path,
                &offset,
                &limit,
            ],
        )
        .0
    };
    let taken = call("\"1\"");
    assert_eq!(taken["isError"], false, "{taken}");
    expect![[r#"
             2	    total = sum(xs)
        … lines 2-2 of 8 in calc.py — pass offset 3 to read on"#]]
    .assert_eq(taken["content"][0]["text"].as_str().unwrap());
    let refused = call("\"one\"");
    assert_eq!(refused["isError"], true, "{refused}");
    expect![[r#"bad arguments: argument `limit`: invalid type: string "one", expected usize; check the tool's input schema"#]]
        .assert_eq(refused["content"][0]["text"].as_str().unwrap());
}
