//! `cargo xtask bench context`: what the model reads, counted. A fixed
//! question set (definition, references, hover, document symbols,
//! workspace symbols, a staged rename, diagnostics of a broken file) over
//! the lsp fixtures the tests ship, in Go, Python and Rust, plus an
//! ast_grep search and a debug stop with locals (Python fixtures), each
//! answer printed with its bytes and o200k tokens, and totals. The answers
//! are snapshots (`xtask/context/<set>.txt`, `UPDATE_EXPECT=1` rewrites
//! them), so every change in what the model reads is seen in review.
//!
//! `cargo xtask bench context ROOT CALLS.jsonl` counts the answers to the
//! calls in that file (`{"tool": …, "args": …}` a line, as `agent-tools
//! batch` reads them) over another project, without a snapshot;
//! `AGENT_TOOLS_BIN` names another build to ask (the one before a change).
//!
//! The tokenizer (tiktoken-rs) bundles its encodings: nothing is
//! downloaded at run time.

use crate::{fixture_path, fixtures, run as run_cmd};
use anyhow::{bail, Context, Result};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

/// One set of questions: its name (the snapshot's), the fixture folder
/// under `tests/fixtures` and its calls.
struct Set {
    name: &'static str,
    fixture: String,
    calls: Vec<Value>,
}

fn lsp(args: Value) -> Value {
    json!({"tool": "lsp", "args": args})
}

fn sets() -> Vec<Set> {
    let set = |language,
               (app, at): (&str, u32),
               util: &str,
               (def, name, new): (u32, &str, &str),
               (say_line, say): (u32, &str),
               query: &str,
               broken: &str| Set {
        name: language,
        fixture: format!("lsp/{language}"),
        calls: vec![
            lsp(json!({"op": "definition", "file": app, "line": at, "symbol": name})),
            lsp(json!({"op": "references", "file": util, "line": def, "symbol": name})),
            lsp(json!({"op": "hover", "file": util, "line": say_line, "symbol": say})),
            lsp(json!({"op": "symbols", "file": util})),
            lsp(json!({"op": "symbols", "query": query})),
            json!({"tool": "lsp_rename", "args": {"file": util, "line": def, "symbol": name, "new_name": new, "stage": true}}),
            lsp(json!({"op": "diagnostics", "file": broken})),
        ],
    };
    vec![
        set(
            "go",
            ("main.go", 6),
            "util.go",
            (19, "Greet", "Welcome"),
            (14, "Say"),
            "Greeter",
            "broken.go",
        ),
        set(
            "python",
            ("app.py", 5),
            "util.py",
            (11, "greet", "welcome"),
            (7, "say"),
            "Greeter",
            "broken.py",
        ),
        set(
            "rust",
            ("src/main.rs", 7),
            "src/util.rs",
            (18, "greet", "welcome"),
            (12, "say"),
            "Greeter",
            "src/broken.rs",
        ),
        Set {
            name: "astgrep",
            fixture: "astgrep/python".into(),
            calls: vec![json!({"tool": "ast_grep", "args": {"pattern": "isinstance($V, $T)"}})],
        },
        Set {
            name: "debug",
            fixture: "debug/python".into(),
            calls: vec![
                json!({"tool": "debug", "args": {"op": "breakpoints", "file": "avg.py", "lines": [9]}}),
                json!({"tool": "debug", "args": {"op": "launch", "program": "avg.py"}}),
            ],
        },
    ]
}

/// The text of one `agent-tools batch` result line: its texts joined, or
/// its error.
fn answer_text(line: &str) -> Result<String> {
    let v: Value = serde_json::from_str(line).with_context(|| format!("not JSON: {line}"))?;
    if let Some(e) = v.get("error") {
        return Ok(format!(
            "error: {}",
            e.as_str().map_or(e.to_string(), str::to_string)
        ));
    }
    let texts: Vec<&str> = v
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect();
    Ok(texts.join("\n"))
}

/// Run `calls` with the release binary over `root`; each call's answer.
fn ask(workspace: &Path, root: &Path, calls: &[Value]) -> Result<Vec<String>> {
    let input = calls
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    // Another build (the one before a change) with `AGENT_TOOLS_BIN`.
    let bin = std::env::var_os("AGENT_TOOLS_BIN").map_or_else(
        || workspace.join("target/release/agent-tools"),
        std::path::PathBuf::from,
    );
    let mut child = Command::new(&bin)
        .args(["batch", "--root"])
        .arg(root)
        .env("PATH", fixture_path(workspace))
        .env("AGENT_TOOLS_FIXTURES", fixtures::dir(workspace))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {}", bin.display()))?;
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().context("stdin")?;
        stdin.write_all(input.as_bytes())?;
    }
    let out = child.wait_with_output()?;
    let answers = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(answer_text)
        .collect::<Result<Vec<_>>>()?;
    if answers.len() != calls.len() {
        bail!("{} answers to {} calls", answers.len(), calls.len());
    }
    Ok(answers)
}

/// Print each answer's bytes and tokens and the total; the total tokens.
fn table(title: &str, answers: &[String]) -> Result<usize> {
    let bpe = tiktoken_rs::o200k_base()?;
    let (mut bytes, mut tokens) = (0, 0);
    println!("{title}");
    println!("  {:<60} {:>7} {:>7}", "answer", "bytes", "tokens");
    for a in answers {
        let (b, t) = (a.len(), bpe.encode_ordinary(a).len());
        bytes += b;
        tokens += t;
        let first = a.lines().next().unwrap_or("");
        let first: String = first.chars().take(60).collect();
        println!("  {first:<60} {b:>7} {t:>7}");
    }
    println!("  {:<60} {bytes:>7} {tokens:>7}", "total");
    Ok(tokens)
}

/// Copy `from` into a fresh temporary folder (servers write beside the
/// sources: rust-analyzer's `target/`).
fn copy_fixture(from: &Path) -> Result<tempdir::Dir> {
    let dir = tempdir::Dir::new()?;
    copy_tree(from, &dir.0)?;
    Ok(dir)
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

mod tempdir {
    /// A temporary folder removed on drop.
    pub(crate) struct Dir(pub std::path::PathBuf);
    impl Dir {
        pub(crate) fn new() -> std::io::Result<Dir> {
            let p =
                std::env::temp_dir().join(format!("agent-tools-context-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p)?;
            Ok(Dir(p))
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// `answer` with the temporary root as `ROOT`, the Go toolchain's folder
/// as `GOROOT`, the fixtures' as `FIXTURES`, a debug thread's id as `N`
/// and debugpy's version as `VERSION`, so the snapshot does not depend on
/// the machine or the run.
fn masked(answer: &str, root: &Path, goroot: &str, fixtures: &Path) -> String {
    let mut out = answer.to_string();
    if !goroot.is_empty() {
        out = out.replace(goroot, "GOROOT");
    }
    for (dir, name) in [(fixtures, "FIXTURES"), (root, "ROOT")] {
        let resolved = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        for p in [resolved.as_path(), dir] {
            out = out.replace(&*p.to_string_lossy(), name);
        }
    }
    let lines: Vec<String> = out
        .split('\n')
        .map(|line| {
            let words: Vec<&str> = line.split(' ').collect();
            let masked: Vec<String> = words
                .iter()
                .enumerate()
                .map(|(i, w)| match i.checked_sub(1).map(|p| words[p]) {
                    Some("thread") if w.parse::<u64>().is_ok() => "N".to_string(),
                    Some("debugpy") if w.starts_with(|c: char| c.is_ascii_digit()) => {
                        let digits = w.trim_end_matches(|c: char| !c.is_ascii_digit());
                        format!("VERSION{}", &w[digits.len()..])
                    }
                    _ => w.to_string(),
                })
                .collect();
            masked.join(" ")
        })
        .collect();
    lines.join("\n")
}

pub(crate) fn run(workspace: &Path, rest: &[String]) -> Result<()> {
    // Asking another build (`AGENT_TOOLS_BIN`) needs none of this one.
    if std::env::var_os("AGENT_TOOLS_BIN").is_none() {
        run_cmd(Command::new("cargo").current_dir(workspace).args([
            "build",
            "--quiet",
            "--release",
            "-p",
            "agent-tools",
        ]))?;
    }
    if let [root, calls] = rest {
        let text =
            std::fs::read_to_string(calls).with_context(|| format!("cannot read {calls}"))?;
        let calls: Vec<Value> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(serde_json::from_str)
            .collect::<Result<_, _>>()?;
        let answers = ask(workspace, Path::new(root), &calls)?;
        table(&format!("{root} ({calls})", calls = calls.len()), &answers)?;
        return Ok(());
    }
    if !rest.is_empty() {
        bail!("usage: cargo xtask bench context [ROOT CALLS.jsonl]");
    }
    // gopls also searches the Go toolchain's sources: shown as GOROOT.
    let goroot = Command::new("go")
        .args(["env", "GOROOT"])
        .env("PATH", fixture_path(workspace))
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let mut total = 0;
    for set in sets() {
        let fixture = workspace.join("tests/fixtures").join(&set.fixture);
        let dir = copy_fixture(&fixture)?;
        let answers = ask(workspace, &dir.0, &set.calls)?;
        total += table(
            &format!("{} (tests/fixtures/{})", set.name, set.fixture),
            &answers,
        )?;
        let shown: Vec<String> = set
            .calls
            .iter()
            .zip(&answers)
            .map(|(call, a)| {
                format!(
                    "> {call}\n{}\n",
                    masked(a, &dir.0, &goroot, &fixtures::dir(workspace))
                )
            })
            .collect();
        expect_test::expect_file![workspace
            .join("xtask/context")
            .join(format!("{}.txt", set.name))]
        .assert_eq(&shown.join("\n"));
    }
    println!("all sets: {total} tokens");
    Ok(())
}
