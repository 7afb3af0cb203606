//! A mistake in any config section is named on stderr at start, on one line,
//! and `call`, `batch` and `mcp` refuse to start (exit 2) unless `--lenient`
//! asks them to go on without the family it configures. `doctor` still
//! prints the whole table.

use std::path::Path;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_agent-tools");

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("the binary starts")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// (config file text, the one line `call` prints about it)
const CASES: &[(&str, &str)] = &[
    (
        "[lsp]\nrequest_timout_ms = 5\n",
        "[lsp] request_timout_ms = 5: unknown field `request_timout_ms`, expected one of `servers`, `disable`, `request_timeout_ms`, `index_wait_ms`, `diagnostics_wait_ms`, `idle_timeout_ms`, `memory_ceiling_mb`, `warm_up`, `shared`, `format_on_write`",
    ),
    (
        "[lsp.format_on_write]\npython = { comand = [\"ruff\", \"format\", \"-\"] }\n",
        "[lsp] format_on_write.python.comand: unknown field `comand`, expected one of `enabled`, `command`, `server`, `timeout_ms`",
    ),
    (
        "[lsp.format_on_write]\npython = \"yes\"\n",
        "[lsp] format_on_write.python = \"yes\": invalid type: string \"yes\", expected true, false or a table with `command`, `server`, `timeout_ms`",
    ),
    (
        "[lsp]\nrequest_timeout_ms = \"soon\"\n",
        "[lsp] request_timeout_ms = \"soon\": invalid type: string \"soon\", expected u64",
    ),
    (
        "[eval]\nmax_output = 100\n",
        "[eval] max_output = 100: unknown field `max_output`, expected one of `python`, `node`, `idle_timeout_seconds`, `max_idle_timeout_seconds`, `interrupt_grace_seconds`, `start_timeout_seconds`, `max_output_bytes`, `max_images`, `sandbox`, `env`, `env_remove`",
    ),
    (
        "[eval]\nmax_output_bytes = 100\n",
        "[eval] max_output_bytes = 100: must be at least 256",
    ),
    (
        "[debug]\nttl = 5\n",
        "[debug] ttl = 5: unknown field `ttl`, expected one of `ttl_seconds`, `wait_seconds`, `handshake_seconds`, `adapters`, `disable`",
    ),
    (
        "[[debug.adapters]]\nid = \"pydbg\"\nkind = \"custom\"\ncomand = [\"x\"]\n",
        "[debug] adapters[0].comand: unknown field `comand`, expected one of `id`, `kind`, `commands`, `markers`, `extensions`, `connect`, `launch_template`, `evaluate_context`, `exception_filters`",
    ),
    (
        "[[debug.adapters]]\nid = \"pydbg\"\nkind = \"custom\"\ncommands = [[\"python3\"]]\n",
        "[debug] adapters[0]: missing field `markers`",
    ),
    (
        "[debug]\ndisable = \"dart\"\n",
        "[debug] disable = \"dart\": invalid type: string \"dart\", expected a sequence",
    ),
    (
        "[debug]\ndisable = [\"debugy\"]\n",
        "[debug] disable = [\"debugy\"]: no adapter has the id \"debugy\" (known: debugpy, lldb, delve, dart, node, java)",
    ),
    (
        "[debug]\nttl_seconds = 0\n",
        "[debug] ttl_seconds = 0: must be at least 1",
    ),
    (
        "[ask]\nexpiry = 5\n",
        "[ask] expiry = 5: unknown field `expiry`, expected `expiry_seconds`",
    ),
    (
        "[ask]\nexpiry_seconds = 0\n",
        "[ask] expiry_seconds = 0: must be at least 1",
    ),
    (
        "[vibe]\nfaster = \"x\"\n",
        "[vibe] faster = \"x\": unknown field `faster`, expected one of `fast`, `good`, `max_workers`, `batch_wait_seconds`",
    ),
    (
        "[vibe]\nfast = \"x\"\nmax_workers = 0\n",
        "[vibe] max_workers = 0: must be at least 1",
    ),
    (
        "[vibe]\nfast = \" \"\n",
        "[vibe] fast (or --vibe-fast): the worker command is empty",
    ),
    (
        "[astgrep]\njournal = \"j\"\n",
        "[astgrep] journal = \"j\": unknown field `journal`, expected `journal_dir` or `cache_mb`",
    ),
    (
        "[astgrep]\njournal_dir = 3\n",
        "[astgrep] journal_dir = 3: invalid type: integer `3`, expected path string",
    ),
    (
        "[mcp]\naproval = \"client\"\n",
        "[mcp] aproval = \"client\": unknown field `aproval`, expected one of `approval`, `progress_interval_ms`, `cancel_grace_ms`, `elicitation_timeout_seconds`",
    ),
    (
        "[mcp]\napproval = \"always\"\n",
        "[mcp] approval = \"always\": unknown variant `always`, expected `client` or `elicit`",
    ),
    (
        "[staging]\ndiff_context = 11\n",
        "[staging] diff_context = 11: invalid value: integer `11`, expected an integer from 0 to 10 (lines of context around each change; default 1)",
    ),
    (
        "[staging]\ndiff_context = -1\n",
        "[staging] diff_context = -1: invalid value: integer `-1`, expected an integer from 0 to 10 (lines of context around each change; default 1)",
    ),
    (
        "[staging]\ndiff_context = \"x\"\n",
        "[staging] diff_context = \"x\": invalid type: string \"x\", expected an integer from 0 to 10 (lines of context around each change; default 1)",
    ),
    (
        "[staging]\ncontext = 3\n",
        "[staging] context = 3: unknown field `context`, expected `diff_context`",
    ),
    (
        "[evall]\nx = 1\n",
        "line 1: unknown field `evall`, expected one of `surface`, `lsp`, `debug`, `eval`, `ask`, `vibe`, `astgrep`, `mcp`, `staging`",
    ),
    (
        "surface = \"admin\"\n",
        "surface = \"admin\": unknown tier `admin`: expected read, write or exec",
    ),
];

#[test]
fn every_section_names_its_mistake_and_call_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.txt"), "hi\n").unwrap();
    let mut wrong = Vec::new();
    for (text, line) in CASES {
        std::fs::write(dir.path().join("agent-tools.toml"), text).unwrap();
        let out = run(
            dir.path(),
            &[
                "call",
                "read",
                r#"{"path": "hello.txt"}"#,
                "--config",
                "agent-tools.toml",
            ],
        );
        let expected = format!("agent-tools call: config agent-tools.toml: {line}\n");
        if out.status.code() != Some(2) || stderr(&out) != expected || !out.stdout.is_empty() {
            wrong.push(format!(
                "config {text:?}: exit {:?}, stderr {:?}, expected {expected:?}",
                out.status.code(),
                stderr(&out)
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn batch_and_mcp_refuse_to_start_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("agent-tools.toml"),
        "[eval]\nmax_output_bytes = 100\n",
    )
    .unwrap();
    for command in ["batch", "mcp"] {
        let out = run(dir.path(), &[command, "--config", "agent-tools.toml"]);
        assert_eq!(out.status.code(), Some(2), "{command}");
        assert_eq!(
            stderr(&out),
            format!(
                "agent-tools {command}: config agent-tools.toml: [eval] max_output_bytes = 100: must be at least 256\n"
            )
        );
        assert!(out.stdout.is_empty(), "{command}");
    }
}

#[test]
fn lenient_goes_on_without_the_broken_family_and_names_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.txt"), "hi\n").unwrap();
    std::fs::write(
        dir.path().join("agent-tools.toml"),
        "[eval]\nmax_output_bytes = 100\n",
    )
    .unwrap();
    let out = run(
        dir.path(),
        &[
            "call",
            "read",
            r#"{"path": "hello.txt"}"#,
            "--config",
            "agent-tools.toml",
            "--lenient",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "agent-tools call: --lenient: going on without the eval tools (eval): \
         config agent-tools.toml: [eval] max_output_bytes = 100: must be at least 256\n"
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "     1\thi\n");
    // The broken family is absent, as an unknown tool.
    let out = run(
        dir.path(),
        &[
            "call",
            "eval",
            r#"{"code": "1", "description": "one"}"#,
            "--config",
            "agent-tools.toml",
            "--lenient",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    expect_test::expect![[r#"
        agent-tools call: --lenient: going on without the eval tools (eval): config agent-tools.toml: [eval] max_output_bytes = 100: must be at least 256
        agent-tools call eval: unknown tool `eval`: no tool of that name is available here; available: ask_user, ast_edit, ast_grep, debug, edit, lsp, lsp_code_action, lsp_rename, read, resolve, write
    "#]].assert_eq(&stderr(&out));
}

#[test]
fn doctor_shows_the_whole_table_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("agent-tools.toml"),
        "[eval]\nmax_output_bytes = 100\n",
    )
    .unwrap();
    let out = run(dir.path(), &["doctor", "--config", "agent-tools.toml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let eval_row = stdout
        .lines()
        .find(|l| l.starts_with("eval "))
        .expect("an eval row");
    assert_eq!(
        eval_row,
        "eval            exec   yes       no          needs kernel factory: config agent-tools.toml: \
         [eval] max_output_bytes = 100: must be at least 256"
    );
    assert!(stdout.lines().any(|l| l.starts_with("ast_grep ")));
}

#[test]
fn lenient_goes_on_with_the_default_staging_and_names_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.py"), "a = old(1)\n").unwrap();
    std::fs::write(
        dir.path().join("agent-tools.toml"),
        "[staging]\ndiff_context = 11\n",
    )
    .unwrap();
    let out = run(
        dir.path(),
        &[
            "call",
            "ast_edit",
            r#"{"pattern": "old($X)", "rewrite": "new($X)", "path": "m.py"}"#,
            "--config",
            "agent-tools.toml",
            "--lenient",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    expect_test::expect![[r#"
        agent-tools call: --lenient: going on with the default [staging]: config agent-tools.toml: [staging] diff_context = 11: invalid value: integer `11`, expected an integer from 0 to 10 (lines of context around each change; default 1)
    "#]]
    .assert_eq(&stderr(&out));
}
