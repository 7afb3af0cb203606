//! Node.js (`node --inspect-brk=127.0.0.1:0`): no DAP adapter exists on the
//! package registries, so the program runs under Node's own V8 inspector
//! and [`crate::session::inspector`] translates. What is Node's here: the command
//! line, the `Debugger listening on ws://…` line it prints on stderr, the
//! lines of its own it adds to the program's stderr, and `file://` URLs.

use super::{Adapter, LaunchInput, LaunchTarget, ProgramLaunch, RequestArguments, StdinRoute};
use crate::catalog::ResolvedAdapter;
use serde_json::{json, Value};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Node.js, through its V8 inspector.
pub struct Node;

impl Adapter for Node {
    fn launch_target(&self, l: &ProgramLaunch<'_>) -> Result<LaunchTarget, String> {
        let program = l.program;
        if l.path.is_dir()
            || l.path
                .extension()
                .is_some_and(|e| !["js", "mjs", "cjs"].iter().any(|x| e == *x))
        {
            return Err(format!(
                "`{program}` is not a JavaScript file; Node.js runs .js, .mjs and .cjs files (or a script without an extension that starts with #!/usr/bin/env node)"
            ));
        }
        match (l.mode, l.test) {
            (None, None) => Ok(LaunchTarget::Program { go: None }),
            (None, Some(test)) => {
                let source = std::fs::read_to_string(l.path)
                    .map_err(|e| format!("cannot read the test file {program}: {e}"))?;
                check_test(test.trim(), &source)
                    .map_err(|why| format!("cannot run test `{test}` of {program}: {why}"))?;
                Ok(LaunchTarget::NamedTest {
                    name: test.trim().to_string(),
                    label: format!("node:test {program} › {}", test.trim()),
                })
            }
            (Some(_), _) => Err(format!(
                "`mode` is for Go programs under delve, and `{program}` runs under Node.js; leave it out (`test` runs one node:test test of the file)"
            )),
        }
    }

    /// Node is the debuggee: its standard input is the adapter's.
    fn stdin_route(&self) -> Option<StdinRoute> {
        Some(StdinRoute::AdapterStdin)
    }

    fn launch(&self, input: &LaunchInput<'_>) -> std::io::Result<RequestArguments> {
        Ok(RequestArguments::plain(launch(input)))
    }

    fn attach_pid(
        &self,
        _adapter: &ResolvedAdapter,
        _pid: u32,
    ) -> Result<RequestArguments, String> {
        Err("the node backend attaches to a Node.js started with --inspect=127.0.0.1:PORT (pass that `port`), not to a pid".to_string())
    }
}

/// The launch request's arguments: what [`command_line`] needs.
fn launch(input: &LaunchInput<'_>) -> Value {
    let node_args: Vec<String> = input
        .named_test
        .map(|name| vec![format!("--test-name-pattern=^{}$", regex_escaped(name))])
        .unwrap_or_default();
    json!({
        "program": input.program,
        "args": input.args,
        "cwd": input.cwd,
        "env": input.env,
        "nodeArgs": node_args,
    })
}

/// `name` as a regular expression that matches exactly it.
fn regex_escaped(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if "\\^$.|?*+()[]{}/".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Why `name` is not a `node:test` test of the test file `source`, if it
/// is not: the name must be written there as a string (`test('name'`,
/// `it("name"`), since Node runs a pattern that matches no test as an
/// empty, passing run.
pub fn check_test(name: &str, source: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err("`test` is empty; pass the name a test( ) or it( ) call gives".into());
    }
    let quoted = ['\'', '"', '`']
        .iter()
        .any(|q| source.contains(&format!("{q}{name}{q}")));
    if !quoted {
        return Err(format!(
            "no test named `{name}` is written in it (as test('{name}', …) or it('{name}', …)); pass a test's exact name"
        ));
    }
    Ok(())
}

/// `node --inspect-brk=127.0.0.1:0 PROGRAM ARGS…`: the inspector on a free
/// port of the loopback, the program held before its first line until a
/// client says run.
pub fn command_line(node: &OsString, arguments: &Value) -> Vec<OsString> {
    let mut line = vec![
        node.clone(),
        "--inspect-brk=127.0.0.1:0".into(),
        // A source map a project's build wrote is honoured in stacks.
        "--enable-source-maps".into(),
    ];
    let strings = |key: &str| -> Vec<OsString> {
        arguments
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(OsString::from)
            .collect()
    };
    line.extend(strings("nodeArgs"));
    if let Some(p) = arguments.get("program").and_then(Value::as_str) {
        line.push(p.into());
    }
    line.extend(strings("args"));
    line
}

/// `Debugger listening on ws://127.0.0.1:9229/0f2c…` → the `ws://` URL.
pub fn inspector_url(line: &str) -> Option<String> {
    let rest = line.trim().strip_prefix("Debugger listening on ")?;
    rest.starts_with("ws://").then(|| rest.trim().to_string())
}

/// The lines Node itself writes to stderr about its inspector: kept in
/// the adapter log, never shown as the program's output.
pub fn is_inspector_line(line: &str) -> bool {
    let line = line.trim_end();
    line.starts_with("Debugger listening on ws://")
        || line == "Debugger attached."
        || line == "Waiting for the debugger to disconnect..."
        || line == "Debugger ending on ws://"
        || line.starts_with("Debugger ending on ws://")
        || line.starts_with("For help, see: https://nodejs.org/")
}

/// A path as the `file://` URL Node gives its scripts (Node's
/// `pathToFileURL`: bytes outside the unreserved set percent-encoded).
pub fn file_url(path: &Path) -> String {
    let mut out = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A script's URL as a path, when it is a file (`node:internal/…` is not).
pub fn url_path(url: &str) -> Option<PathBuf> {
    if let Some(rest) = url.strip_prefix("file://") {
        let bytes = rest.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'%' {
                if let Ok(b) = u8::from_str_radix(rest.get(i + 1..i + 3).unwrap_or(""), 16) {
                    out.push(b);
                    i += 3;
                    continue;
                }
            }
            out.push(bytes[i]);
            i += 1;
        }
        return Some(PathBuf::from(String::from_utf8_lossy(&out).into_owned()));
    }
    // Node before 12 named CommonJS scripts by their plain path.
    url.starts_with('/').then(|| PathBuf::from(url))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_paths_go_both_ways() {
        let p = Path::new("/tmp/my project/a#b.js");
        let url = file_url(p);
        assert_eq!(url, "file:///tmp/my%20project/a%23b.js");
        assert_eq!(url_path(&url).unwrap(), p);
        assert_eq!(url_path("node:internal/main/run_main_module"), None);
        assert_eq!(url_path("/srv/app.js").unwrap(), Path::new("/srv/app.js"));
    }

    #[test]
    fn a_test_is_run_by_its_exact_name() {
        assert_eq!(regex_escaped("mean (of six)"), r"mean \(of six\)");
        let source = "test('mean of six', () => {});\nit(\"median\", () => {});";
        assert!(check_test("mean of six", source).is_ok());
        assert!(check_test("median", source).is_ok());
        assert!(check_test("mean", source)
            .unwrap_err()
            .contains("no test named `mean`"));
    }

    #[test]
    fn node_s_own_lines_are_told_from_the_program_s() {
        let line =
            "Debugger listening on ws://127.0.0.1:40943/6b1e0e2c-2b0a-4bb0-a1f6-0c0a4b4f7f4e\n";
        assert_eq!(
            inspector_url(line).as_deref(),
            Some("ws://127.0.0.1:40943/6b1e0e2c-2b0a-4bb0-a1f6-0c0a4b4f7f4e")
        );
        assert!(is_inspector_line(line));
        assert!(is_inspector_line(
            "For help, see: https://nodejs.org/en/docs/inspector\n"
        ));
        assert!(is_inspector_line(
            "Waiting for the debugger to disconnect...\n"
        ));
        assert!(!is_inspector_line("Debugger attached to my robot\n"));
        assert_eq!(inspector_url("hello"), None);
    }
}
