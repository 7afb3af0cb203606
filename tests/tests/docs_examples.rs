//! Every command example in the README and docs/ runs here, and its output
//! must be what the page shows.
//!
//! An example is a fenced block whose info string is `console`: lines that
//! start with `$ ` are commands, run by `bash` from the repository's root
//! with the built `agent-tools` first on `PATH` (the README's `cargo run
//! --release -p agent-tools --` prefix stands for that binary); the lines
//! after a command are its expected standard output. In expected output, a
//! line `...` stands for any number of lines, and `[..]` inside a line for
//! any text (times, paths). A command must succeed unless its output ends
//! with a line `[exit N]`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One `$` command of a page, with what the page says it prints.
#[derive(Debug)]
struct Example {
    page: String,
    line: usize,
    command: String,
    expected: Vec<String>,
    exit: i32,
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn pages() -> Vec<PathBuf> {
    let mut pages = vec![repo().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The examples of one page, in order.
fn examples(page: &Path) -> Vec<Example> {
    let name = page.strip_prefix(repo()).unwrap().display().to_string();
    let text = std::fs::read_to_string(page).unwrap();
    let mut out: Vec<Example> = Vec::new();
    let mut in_console = false;
    let mut in_other = false;
    for (i, line) in text.lines().enumerate() {
        if let Some(info) = line.trim_start().strip_prefix("```") {
            if in_console || in_other {
                in_console = false;
                in_other = false;
            } else if info.trim() == "console" {
                in_console = true;
            } else {
                in_other = true;
            }
            continue;
        }
        if !in_console {
            continue;
        }
        if let Some(command) = line.strip_prefix("$ ") {
            out.push(Example {
                page: name.clone(),
                line: i + 1,
                command: command.to_string(),
                expected: Vec::new(),
                exit: 0,
            });
        } else if let Some(last) = out.last_mut() {
            match line
                .strip_prefix("[exit ")
                .and_then(|r| r.strip_suffix(']'))
            {
                Some(code) => last.exit = code.parse().expect("[exit N] takes a number"),
                None => last.expected.push(line.to_string()),
            }
        } else {
            panic!(
                "{name}:{}: a console block must start with a `$ ` command",
                i + 1
            );
        }
    }
    out
}

/// Whether `line` matches `pattern`, where `[..]` stands for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let parts: Vec<&str> = pattern.split("[..]").collect();
    if parts.len() == 1 {
        return pattern == line;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !line.starts_with(first) || !line[first.len()..].ends_with(last) {
        return false;
    }
    let mut rest = &line[first.len()..line.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// Whether `actual` lines match `expected`, where a `...` line stands for
/// any number of lines.
fn lines_match(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "..." => {
            (0..=actual.len()).any(|skip| lines_match(rest, &actual[skip..]))
        }
        Some((first, rest)) => {
            !actual.is_empty() && line_matches(first, actual[0]) && lines_match(rest, &actual[1..])
        }
    }
}

fn run(example: &Example, bin_dir: &Path) -> Result<(), String> {
    let command = example
        .command
        .replace("cargo run --release -p agent-tools -- ", "agent-tools ");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .args(["-c", &command])
        .current_dir(repo())
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .output()
        .map_err(|e| format!("could not run bash: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let actual: Vec<&str> = stdout.lines().collect();
    let mut expected = example.expected.clone();
    while expected.last().is_some_and(std::string::String::is_empty) {
        expected.pop();
    }
    let code = out.status.code().unwrap_or(-1);
    if code != example.exit || !lines_match(&expected, &actual) {
        return Err(format!(
            "{}:{}: `{}` exited {code} (the page says {}), and printed:\n{stdout}\nstderr:\n{}\nthe page says:\n{}",
            example.page,
            example.line,
            example.command,
            example.exit,
            String::from_utf8_lossy(&out.stderr),
            expected.join("\n")
        ));
    }
    Ok(())
}

#[test]
fn elision_matches_what_it_should_and_nothing_else() {
    let lines = |s: &[&str]| {
        s.iter()
            .map(std::string::ToString::to_string)
            .collect::<Vec<_>>()
    };
    assert!(line_matches("took [..] s", "took 1.2 s"));
    assert!(line_matches("[..]/bin/[..]", "/tmp/x/bin/tool"));
    assert!(!line_matches("took [..] s", "took 1.2 ms!"));
    assert!(lines_match(
        &lines(&["a", "...", "z"]),
        &["a", "b", "c", "z"]
    ));
    assert!(lines_match(&lines(&["a", "...", "z"]), &["a", "z"]));
    assert!(!lines_match(&lines(&["a", "...", "z"]), &["a", "b"]));
    assert!(!lines_match(&lines(&["a"]), &["a", "b"]));
}

#[test]
fn every_example_in_the_readme_and_docs_prints_what_the_page_says() {
    let bin = tests::built_agent_tools_bin();
    let all: Vec<Example> = pages().iter().flat_map(|p| examples(p)).collect();
    let failures: Vec<String> = all
        .iter()
        .filter_map(|e| run(e, bin.parent().unwrap()).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    let per_page: Vec<(String, usize)> = pages()
        .iter()
        .map(|p| {
            (
                p.strip_prefix(repo()).unwrap().display().to_string(),
                examples(p).len(),
            )
        })
        .filter(|(_, n)| *n > 0)
        .collect();
    eprintln!("{} examples ran: {per_page:?}", all.len());
}

/// A command example outside a `console` block would never run: every line
/// that invokes the binary's `doctor`, `call`, `batch` or `install` (bare or
/// through `cargo run`) must sit in one.
#[test]
fn no_command_example_hides_outside_a_console_block() {
    let invokes = |line: &str| {
        let line = line.trim_start().trim_start_matches("$ ");
        let line = line
            .strip_prefix("cargo run --release -p agent-tools -- ")
            .map_or_else(|| line.to_string(), |rest| format!("agent-tools {rest}"));
        ["doctor", "call", "batch", "install"]
            .iter()
            .any(|c| line.starts_with(&format!("agent-tools {c}")))
    };
    let mut hidden = Vec::new();
    for page in pages() {
        let name = page.strip_prefix(repo()).unwrap().display().to_string();
        let text = std::fs::read_to_string(&page).unwrap();
        let mut block: Option<String> = None;
        for (i, line) in text.lines().enumerate() {
            if let Some(info) = line.trim_start().strip_prefix("```") {
                block = match block {
                    Some(_) => None,
                    None => Some(info.trim().to_string()),
                };
                continue;
            }
            if block.as_deref().is_some_and(|b| b != "console") && invokes(line) {
                hidden.push(format!("{name}:{}: {line}", i + 1));
            }
        }
    }
    assert!(hidden.is_empty(), "{}", hidden.join("\n"));
}
