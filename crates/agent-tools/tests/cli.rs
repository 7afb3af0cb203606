//! The `agent-tools` binary as a person runs it: doctor, call, batch.

use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agent-tools"))
}

fn run(cmd: &mut Command) -> Output {
    cmd.stdin(Stdio::null()).output().expect("agent-tools runs")
}

#[test]
fn doctor_prints_the_table_of_every_tool() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(bin().arg("doctor").arg("--root").arg(dir.path()));
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    // The table: from its header to the first blank line (the sections
    // after it name the machine's servers and interpreters).
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("tool "))
        .take_while(|l| !l.is_empty())
        .map(str::trim_end)
        .collect();
    expect_test::expect![[r#"
        tool            tier   compiled  registered  why
        read            read   yes       yes         workspace root (file tools) bound
        write           write  yes       yes         workspace root (file tools) bound
        edit            write  yes       yes         workspace root (file tools) bound
        lsp             read   yes       yes         language-server supervisor bound
        lsp_rename      write  yes       yes         language-server supervisor bound
        lsp_code_action write  yes       yes         language-server supervisor bound
        ast_grep        read   yes       yes         tree-sitter parser bound
        ast_edit        write  yes       yes         tree-sitter parser bound
        resolve         write  yes       yes         tree-sitter parser bound
        debug           exec   yes       yes         debug-session supervisor bound
        eval            exec   yes       yes         kernel factory bound
        ask_user        read   yes       yes         question port + target space bound
        vibe_spawn      read   yes       no          needs vibe roster (vibe mode on): vibe mode is off: no worker command was given; pass --vibe-fast 'CMD' and/or --vibe-good 'CMD' (or set fast/good under [vibe] in the config file)
        vibe_send       read   yes       no          as vibe_spawn
        vibe_wait       read   yes       no          as vibe_spawn
        vibe_kill       read   yes       no          as vibe_spawn
        vibe_list       read   yes       no          as vibe_spawn"#]]
    .assert_eq(&table.join("\n"));
}

/// `doctor` on `root`, whole, with what belongs to this machine masked:
/// the root, absolute paths (programs, the journal), its user's home.
fn doctor_masked(root: &std::path::Path, all: bool) -> String {
    let mut cmd = bin();
    cmd.arg("doctor").arg("--root").arg(root);
    if all {
        cmd.arg("--all");
    }
    let out = run(&mut cmd);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let root = root.canonicalize().unwrap();
    let text = String::from_utf8(out.stdout)
        .unwrap()
        .replace(&root.display().to_string(), "<root>");
    text.lines()
        .map(|l| {
            l.split(' ')
                .map(|w| match w.find('/') {
                    // An absolute path, perhaps after a quote or bracket.
                    Some(i) if i <= 1 && w.len() > 1 => {
                        let end = w
                            .char_indices()
                            .skip(i)
                            .find(|(_, c)| matches!(c, '`' | ')' | ';' | ','))
                            .map_or(w.len(), |(j, _)| j);
                        format!("{}<path>{}", &w[..i], &w[end..])
                    }
                    _ => w.to_string(),
                })
                .collect::<Vec<_>>()
                .join(" ")
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The sections after the tool table (the table has its own test).
fn sections(doctor: &str) -> String {
    doctor
        .split("\n\n")
        .skip(2)
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[test]
fn doctor_speaks_of_a_rust_workspace_and_groups_the_rest() {
    let dir = test_support::project::with_files(
        "doctor-ws-",
        &[
            ("Cargo.toml", "[workspace]\nmembers = [\"crates/core\"]\n"),
            (
                "crates/core/Cargo.toml",
                "[package]\nname = \"core\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
            ),
            (
                "crates/core/src/lib.rs",
                "pub fn one() -> u32 {\n    1\n}\n",
            ),
            ("docs/guide.md", "# Guide\n"),
            ("README.md", "# Readme\n"),
        ],
    );
    let text = doctor_masked(dir.path(), false);
    expect_test::expect![[r#"
        lsp:
          lsp rust: usable, starts at . (rust-analyzer → <path>)
          lsp markdown: usable, starts at . (vscode-markdown-language-server --stdio → <path>); untested: no test here drives this server
          lsp toml: not usable at the workspace root: the toml project root is . but no server binary resolves: looked for taplo in .venv/bin, venv/bin, node_modules/.bin (of the root and up to the workspace root), among the programs `agent-tools install` put in its data folder, and on $PATH; install one of them; untested: no test here drives this server
          lsp — usable, no files of theirs here (8): bash, yaml, html, css, json, dockerfile, sql, vim
          lsp — no project of theirs here (43): python, typescript, c, go, dart, python-jedi, python-pylsp, c-ccls, ruff, biome, eslint, php, svelte, graphql, fortran, cmake, vue, astro, tailwindcss, prisma, solidity, purescript, java, kotlin, lua, zig, haskell, ocaml, elixir, erlang, ruby, csharp, swift, scala, terraform, nix, elm, clojure, latex, perl, gleam, protobuf, nim
          lsp — not installed, no files of theirs here (1): typst
          lsp — `agent-tools doctor --all` gives each of those a line, with why

        astgrep:
          40 grammars shipped: bash, c, cmake, cpp, csharp, css, dart, dockerfile, elixir, go, graphql, haskell, hcl, html, java, javascript, json, kotlin, lua, make, markdown, nix, php, protobuf, python, r, ruby, rust, scala, solidity, sql, svelte, swift, toml, tsx, typescript, vue, xml, yaml, zig
          apply journal: <path>
          search index: up to 512 MiB of texts and trees per run ([astgrep] cache_mb)
          no interrupted edits

        debug:
          lldb     usable: `<path>` (marker Cargo.toml)
          debug — no project of theirs here (4): debugpy, delve, node, java
          debug — not installed, no files of theirs here (1): dart
          debug — `agent-tools doctor --all` gives each of those a line, with why

        eval:
          eval python: <path> (from $PATH), started on first use
          eval javascript: <path> (from $PATH), started on first use
          eval kernels run on the host (no isolated environment bound)

        ask:
          ask_user: cards are shown on this terminal (the terminal port); no human is attached, so every question fails at once; cards expire after 300 s"#]].assert_eq(&sections(&text));
    // `--all`: no line grouped.
    let all = doctor_masked(dir.path(), true);
    let grouped = |l: &&str| l.starts_with("  lsp — ") || l.starts_with("  debug — ");
    assert_eq!(all.lines().filter(grouped).count(), 0, "{all}");
    assert_eq!(text.lines().filter(grouped).count(), 7, "{text}");
    assert!(all.lines().count() > text.lines().count() + 40, "{all}");
}

#[test]
fn doctor_speaks_of_a_python_project() {
    let dir = test_support::project::copy_fixture("lsp", "python");
    let text = sections(&doctor_masked(dir.path(), false));
    let (checkout, machine): (Vec<&str>, Vec<&str>) = text
        .split("\n\n")
        .partition(|s| s.starts_with("lsp:") || s.starts_with("debug:"));
    expect_test::expect![[r#"
        lsp:
          lsp python: usable, starts at . (basedpyright-langserver --stdio → <path>)
          lsp python-jedi: usable, starts at . (jedi-language-server → <path>); python-jedi checks syntax only; `agent-tools install python` adds one that checks names and types
          lsp python-pylsp: usable, starts at . (pylsp → <path>)
          lsp ruff (linter): usable, starts at . (ruff server → <path>)
          lsp toml: not usable at the workspace root: the toml project root is . but no server binary resolves: looked for taplo in .venv/bin, venv/bin, node_modules/.bin (of the root and up to the workspace root), among the programs `agent-tools install` put in its data folder, and on $PATH; install one of them; untested: no test here drives this server
          lsp — usable, no files of theirs here (9): bash, yaml, html, css, json, dockerfile, sql, vim, markdown
          lsp — no project of theirs here (40): typescript, rust, c, go, dart, c-ccls, biome, eslint, php, svelte, graphql, fortran, cmake, vue, astro, tailwindcss, prisma, solidity, purescript, java, kotlin, lua, zig, haskell, ocaml, elixir, erlang, ruby, csharp, swift, scala, terraform, nix, elm, clojure, latex, perl, gleam, protobuf, nim
          lsp — not installed, no files of theirs here (1): typst
          lsp — `agent-tools doctor --all` gives each of those a line, with why

        debug:
          debugpy  usable: `<path> -m debugpy.adapter` (marker pyproject.toml); adapter and program run with <path> (python3 on PATH, debugpy 1.8.22)
          debug — no project of theirs here (4): lldb, delve, node, java
          debug — not installed, no files of theirs here (1): dart
          debug — `agent-tools doctor --all` gives each of those a line, with why"#]].assert_eq(&checkout.join("\n\n"));
    // The other sections speak of the machine, the same as for the Rust
    // workspace above.
    let ws = test_support::project::with_files("doctor-ws-", &[("Cargo.toml", "")]);
    let ws_text = sections(&doctor_masked(ws.path(), false));
    let ws_machine: Vec<&str> = ws_text
        .split("\n\n")
        .filter(|s| !(s.starts_with("lsp:") || s.starts_with("debug:")))
        .collect();
    assert_eq!(machine, ws_machine);
}

#[test]
fn call_of_an_unknown_tool_exits_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(bin()
        .args(["call", "no_such_tool", "{}", "--root"])
        .arg(dir.path()));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{err}");
    expect_test::expect!["agent-tools call no_such_tool: unknown tool `no_such_tool`: no tool of that name is available here; available: ask_user, ast_edit, ast_grep, debug, edit, eval, lsp, lsp_code_action, lsp_rename, read, resolve, write"].assert_eq(lines[0]);
}

#[test]
fn bad_usage_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(bin()
        .args(["call", "ast_grep", "{not json", "--root"])
        .arg(dir.path()));
    assert_eq!(out.status.code(), Some(2));
    expect_test::expect!["agent-tools call: the arguments are not valid JSON: key must be a string at line 1 column 2"].assert_eq(String::from_utf8_lossy(&out.stderr).trim_end());

    let out = run(bin()
        .args(["call", "ast_grep", "[1]", "--root"])
        .arg(dir.path()));
    assert_eq!(out.status.code(), Some(2));

    let out = run(bin()
        .args(["call", "ast_grep", "{}", "--surface", "admin", "--root"])
        .arg(dir.path()));
    assert_eq!(out.status.code(), Some(2));
    expect_test::expect!["agent-tools call: unknown tier `admin`: expected read, write or exec"]
        .assert_eq(String::from_utf8_lossy(&out.stderr).trim_end());
}

#[test]
fn batch_answers_one_json_line_per_call() {
    let dir = tempfile::tempdir().unwrap();
    let out = test_support::cli::batch(
        bin().args(["batch", "-", "--root"]).arg(dir.path()),
        [r#"{"tool": "no_such_tool", "args": {}}"#, "", "not json"],
    );
    let text = &out.stdout;
    let lines = out.answers();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0]["ok"], false);
    assert_eq!(lines[0]["error"]["kind"], "unknown_tool");
    assert_eq!(lines[1]["error"]["kind"], "bad_arguments");
    assert_eq!(out.code(), 1);
}
