//! `diagnostics "*"`: the project checker of each project rooted at the
//! workspace root (basedpyright/pyright, tsc, cargo check, go vet, dart
//! analyze, clangd --check, a Java project's Maven or Gradle build), its
//! output parsed into the same lines as a server's diagnostics.
//!
//! A checker runs the project's own code (cargo check runs build scripts
//! and proc macros, go vet builds cgo, tsc and pyright may be the
//! checkout's own binaries), so project-wide checking is an exec-tier act:
//! [`allowed_on`] refuses it on any surface without exec tools, before
//! anything starts.

use crate::catalog::{self, CheckerFormat, ServerEntry};
use crate::diagnostics::DiagLine;
use crate::supervisor::LspSupervisor;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tool_core::process::{ChildSpec, Io};
use tool_core::{Surface, Tier, ToolError, ToolOutput, Workspace};

/// Project-wide checking runs the project's own code: only a surface that
/// may start processes (exec) may ask for it.
pub(crate) fn allowed_on(surface: Surface) -> Result<(), ToolError> {
    if surface.allows(Tier::Exec) {
        return Ok(());
    }
    Err(ToolError::refused(format!(
        "project-wide checking (`diagnostics` with file \"*\") runs the project's own build \
         (cargo check runs build scripts and proc macros, go vet compiles cgo, tsc and pyright may \
         be the checkout's own binaries); it runs on the exec surface — this call came from the {} \
         surface. Ask `diagnostics` for one file instead (its language server answers)",
        surface.max_tier
    )))
}

/// Stdout beyond this is not read (a checker this chatty is capped anyway).
const MAX_OUTPUT: usize = 32 * 1024 * 1024;

struct Ran {
    stdout: String,
    stderr: String,
    status: Option<std::process::ExitStatus>,
}

async fn run_command(
    program: &Path,
    args: &[String],
    cwd: &Path,
    path_env: Option<&std::ffi::OsString>,
    env: &std::collections::BTreeMap<String, String>,
    bound: Duration,
) -> Result<Ran, String> {
    let mut spec = ChildSpec::new(program)
        .args(args)
        .cwd(cwd)
        .stdout(Io::Pipe)
        .stderr(Io::Pipe);
    if let Some(p) = path_env {
        spec = spec.env("PATH", p);
    }
    for (k, v) in env {
        spec = spec.env(k, v);
    }
    let shown = spec.display();
    let mut child = spec.spawn().map_err(|e| e.to_string())?;
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let work = async {
        let mut o = Vec::new();
        let mut e = Vec::new();
        let mut out_capped = (&mut out).take(MAX_OUTPUT as u64);
        let mut err_capped = (&mut err).take(MAX_OUTPUT as u64);
        let (ro, re) = tokio::join!(
            out_capped.read_to_end(&mut o),
            err_capped.read_to_end(&mut e)
        );
        ro.and(re).map_err(|x| x.to_string())?;
        let status = child.wait().await.ok();
        Ok::<_, String>(Ran {
            stdout: String::from_utf8_lossy(&o).into_owned(),
            stderr: String::from_utf8_lossy(&e).into_owned(),
            status,
        })
    };
    match tokio::time::timeout(bound, work).await {
        Ok(r) => r,
        // Dropping the child kills its process group.
        Err(_) => Err(format!(
            "`{shown}` did not finish within {} s and was killed",
            bound.as_secs()
        )),
    }
}

/// A checker's file name as the model sees it: relative to the workspace
/// when inside it. Relative names are taken from `root`, the checker's cwd.
fn rel_to(root: &Path, ws: &Workspace, file: &str) -> String {
    let p = Path::new(file);
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(p)
    };
    let abs = abs.canonicalize().unwrap_or(abs);
    crate::render::show_path(ws, &abs)
}

/// The lines of one checker run (not clangd's, which runs per file).
fn parse(format: CheckerFormat, ran: &Ran, root: &Path, ws: &Workspace) -> Vec<DiagLine> {
    match format {
        CheckerFormat::PyrightJson => parse_pyright_json(&ran.stdout, root, ws),
        CheckerFormat::Tsc => parse_tsc(&ran.stdout, root, ws),
        CheckerFormat::CargoJson => parse_cargo_json(&ran.stdout, root, ws),
        // Type errors come on stderr, vet's own findings may come on either.
        CheckerFormat::GoVet => {
            let mut out = parse_go_vet(&ran.stderr, root, ws);
            out.extend(parse_go_vet(&ran.stdout, root, ws));
            out
        }
        CheckerFormat::DartMachine => {
            let mut out = parse_dart_machine(&ran.stdout, root, ws);
            out.extend(parse_dart_machine(&ran.stderr, root, ws));
            out
        }
        CheckerFormat::JavaBuild => {
            let mut out = parse_javac(&ran.stdout, root, ws);
            out.extend(parse_javac(&ran.stderr, root, ws));
            out
        }
        CheckerFormat::ClangdCheck => unreachable!("run per file"),
    }
}

/// javac's messages, as Maven prints them
/// (`[ERROR] /abs/src/F.java:[12,5] cannot find symbol`, `[WARNING] …`)
/// or as javac itself does under Gradle (`/abs/src/F.java:12: error:
/// cannot find symbol`, then the source line and a caret under the
/// column). Maven's repeat of the errors in its failure message is
/// deduplicated by the caller.
fn parse_javac(output: &str, root: &Path, ws: &Workspace) -> Vec<DiagLine> {
    let mut out = Vec::new();
    let lines: Vec<&str> = output.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        // Maven 3.8 prints colour resets even in batch mode.
        let line = line.trim_start_matches("\u{1b}[0m");
        let (severity, rest) = if let Some(r) = line.strip_prefix("[ERROR] ") {
            ("error", r)
        } else if let Some(r) = line.strip_prefix("[WARNING] ") {
            ("warning", r)
        } else {
            ("", line)
        };
        // Maven: `FILE.java:[L,C] message`.
        if !severity.is_empty() {
            let Some((file, pos)) = rest.split_once(".java:[") else {
                continue;
            };
            let Some((pos, message)) = pos.split_once("] ") else {
                continue;
            };
            let mut nums = pos.split(',').map(|n| n.trim().parse::<u32>().ok());
            let (Some(Some(l)), Some(Some(c))) = (nums.next(), nums.next()) else {
                continue;
            };
            out.push(DiagLine {
                path: rel_to(root, ws, &format!("{file}.java")),
                line: l,
                col: c,
                severity,
                code: None,
                message: with_details(message, &lines[i + 1..]),
            });
            continue;
        }
        // javac: `FILE.java:L: error: message`, the column from the caret
        // two lines below.
        let Some((file, rest)) = rest.split_once(".java:") else {
            continue;
        };
        let Some((l, rest)) = rest.split_once(": ") else {
            continue;
        };
        let Ok(l) = l.parse::<u32>() else { continue };
        let (severity, message) = if let Some(m) = rest.strip_prefix("error: ") {
            ("error", m)
        } else if let Some(m) = rest.strip_prefix("warning: ") {
            ("warning", m)
        } else {
            continue;
        };
        let col = lines
            .get(i + 2)
            .filter(|c| c.trim() == "^")
            .and_then(|c| c.find('^'))
            .map_or(1, |at| at as u32 + 1);
        out.push(DiagLine {
            path: rel_to(root, ws, &format!("{file}.java")),
            line: l,
            col,
            severity,
            code: None,
            message: with_details(message, lines.get(i + 3..).unwrap_or_default()),
        });
    }
    out
}

/// A javac message with the `symbol:` and `location:` lines that follow
/// it (`cannot find symbol (symbol: method sizes(), location: variable
/// elements of type ArrayList<JsonElement>)`).
fn with_details(message: &str, next: &[&str]) -> String {
    let parts: Vec<String> = next
        .iter()
        // Maven repeats them under `[ERROR]` in its failure message.
        .map(|l| {
            l.strip_prefix("[ERROR]")
                .or_else(|| l.strip_prefix("[WARNING]"))
                .unwrap_or(l)
                .trim()
        })
        .take_while(|l| l.starts_with("symbol:") || l.starts_with("location:"))
        .map(|l| {
            let (key, value) = l.split_once(':').unwrap_or((l, ""));
            format!("{key}: {}", value.trim())
        })
        .collect();
    if parts.is_empty() {
        message.trim().to_string()
    } else {
        format!("{} ({})", message.trim(), parts.join(", "))
    }
}

/// The build files a command of the Java checker needs at the root: Maven
/// a pom.xml, Gradle (or its wrapper) a Gradle build.
fn java_build_runs(command: &[String], root: &Path) -> bool {
    let needs: &[&str] = match command.first().map(String::as_str) {
        Some("mvn" | "./mvnw") => &["pom.xml"],
        _ => &[
            "build.gradle",
            "build.gradle.kts",
            "settings.gradle",
            "settings.gradle.kts",
        ],
    };
    needs.iter().any(|f| root.join(f).is_file())
}

/// Why a checker failed without a diagnostic we understand: the last
/// lines of its stderr; for a Java build (Maven prints on stdout), its
/// first `[ERROR]` lines or, failing those, its last lines.
fn failure_summary(format: CheckerFormat, ran: &Ran) -> String {
    let tail = |text: &str| {
        let mut last: Vec<&str> = text
            .lines()
            .rev()
            .filter(|l| !l.trim().is_empty())
            .take(3)
            .collect();
        last.reverse();
        last.join(" | ")
    };
    if format != CheckerFormat::JavaBuild {
        return tail(&ran.stderr);
    }
    let errors: Vec<&str> = ran
        .stdout
        .lines()
        .chain(ran.stderr.lines())
        .filter_map(|l| l.strip_prefix("[ERROR] "))
        .filter(|l| !l.trim().is_empty())
        .take(2)
        .collect();
    if errors.is_empty() {
        let all = format!("{}\n{}", ran.stdout, ran.stderr);
        tail(&all)
    } else {
        errors.join(" | ")
    }
}

/// `basedpyright --outputjson`: `generalDiagnostics`, 0-based positions;
/// information lines are left out.
fn parse_pyright_json(stdout: &str, root: &Path, ws: &Workspace) -> Vec<DiagLine> {
    let mut out = Vec::new();
    let v: Value = serde_json::from_str(stdout).unwrap_or(Value::Null);
    for d in v
        .get("generalDiagnostics")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let sev = match d.get("severity").and_then(Value::as_str) {
            Some("error") => "error",
            Some("warning") => "warning",
            _ => continue,
        };
        out.push(DiagLine {
            path: rel_to(
                root,
                ws,
                d.get("file").and_then(Value::as_str).unwrap_or("?"),
            ),
            line: d
                .pointer("/range/start/line")
                .and_then(Value::as_u64)
                .unwrap_or(0) as u32
                + 1,
            col: d
                .pointer("/range/start/character")
                .and_then(Value::as_u64)
                .unwrap_or(0) as u32
                + 1,
            severity: sev,
            code: d.get("rule").and_then(Value::as_str).map(String::from),
            message: d
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        });
    }
    out
}

/// `tsc --pretty false`:
/// `src/a.ts(3,5): error TS2322: Type 'string' is not assignable…`
fn parse_tsc(stdout: &str, root: &Path, ws: &Workspace) -> Vec<DiagLine> {
    let mut out = Vec::new();
    for line in stdout.lines() {
        let Some((loc, rest)) = line.split_once("): ") else {
            continue;
        };
        let Some((file, lc)) = loc.rsplit_once('(') else {
            continue;
        };
        let mut nums = lc.split(',').map(|n| n.trim().parse::<u32>().unwrap_or(1));
        let (l, c) = (nums.next().unwrap_or(1), nums.next().unwrap_or(1));
        let (sev, rest) = if let Some(r) = rest.strip_prefix("error ") {
            ("error", r)
        } else if let Some(r) = rest.strip_prefix("warning ") {
            ("warning", r)
        } else {
            continue;
        };
        let (code, msg) = rest.split_once(": ").unwrap_or(("", rest));
        out.push(DiagLine {
            path: rel_to(root, ws, file),
            line: l,
            col: c,
            severity: sev,
            code: (!code.is_empty()).then(|| code.to_string()),
            message: msg.to_string(),
        });
    }
    out
}

/// `cargo check --message-format=json`: one JSON object a line; a
/// compiler message at its primary span.
fn parse_cargo_json(stdout: &str, root: &Path, ws: &Workspace) -> Vec<DiagLine> {
    let mut out = Vec::new();
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if v.get("reason").and_then(Value::as_str) != Some("compiler-message") {
            continue;
        }
        let m = &v["message"];
        let sev = match m.get("level").and_then(Value::as_str) {
            Some("error") => "error",
            Some("warning") => "warning",
            _ => continue,
        };
        let Some(span) = m.get("spans").and_then(Value::as_array).and_then(|s| {
            s.iter()
                .find(|s| s.get("is_primary").and_then(Value::as_bool) == Some(true))
        }) else {
            continue; // "aborting due to…" and other summaries
        };
        out.push(DiagLine {
            path: rel_to(
                root,
                ws,
                span.get("file_name").and_then(Value::as_str).unwrap_or("?"),
            ),
            line: span.get("line_start").and_then(Value::as_u64).unwrap_or(1) as u32,
            col: span
                .get("column_start")
                .and_then(Value::as_u64)
                .unwrap_or(1) as u32,
            severity: sev,
            code: m
                .pointer("/code/code")
                .and_then(Value::as_str)
                .map(String::from),
            message: m
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        });
    }
    out
}

/// `go vet ./...`: `./main.go:5:9: undefined: x` (type errors come as
/// `vet: ./main.go:…`); `# package` headers are skipped.
fn parse_go_vet(output: &str, root: &Path, ws: &Workspace) -> Vec<DiagLine> {
    let mut out = Vec::new();
    for line in output.lines() {
        let line = line.strip_prefix("vet: ").unwrap_or(line);
        if line.starts_with('#') {
            continue;
        }
        let mut parts = line.splitn(4, ':');
        let (Some(file), Some(l), Some(c), Some(msg)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (Ok(l), Ok(c)) = (l.trim().parse::<u32>(), c.trim().parse::<u32>()) else {
            continue;
        };
        if !file.ends_with(".go") {
            continue;
        }
        out.push(DiagLine {
            path: rel_to(root, ws, file),
            line: l,
            col: c,
            severity: "error",
            code: None,
            message: msg.trim().to_string(),
        });
    }
    out
}

/// `dart analyze --format=machine`:
/// `ERROR|COMPILE_TIME_ERROR|UNDEFINED_IDENTIFIER|/abs/f.dart|3|5|1|Undefined name 'x'.`
fn parse_dart_machine(output: &str, root: &Path, ws: &Workspace) -> Vec<DiagLine> {
    let mut out = Vec::new();
    for line in output.lines() {
        let f: Vec<&str> = line.splitn(8, '|').collect();
        if f.len() < 8 {
            continue;
        }
        let sev = match f[0] {
            "ERROR" => "error",
            "WARNING" => "warning",
            _ => continue,
        };
        out.push(DiagLine {
            path: rel_to(root, ws, f[3]),
            line: f[4].parse().unwrap_or(1),
            col: f[5].parse().unwrap_or(1),
            severity: sev,
            code: Some(f[2].to_ascii_lowercase()),
            message: f[7].to_string(),
        });
    }
    out
}

/// `E[12:00:00.000] [undeclared_var_use] Line 2: use of undeclared identifier 'y'`
/// (clangd --check logs no severity, so each is a "problem").
fn parse_clangd(stderr: &str, shown: &str) -> Vec<DiagLine> {
    let mut out = Vec::new();
    for line in stderr.lines() {
        let Some(rest) = line.split_once("] [").map(|(_, r)| r) else {
            continue;
        };
        let Some((code, rest)) = rest.split_once("] Line ") else {
            continue;
        };
        let Some((l, msg)) = rest.split_once(": ") else {
            continue;
        };
        let Ok(l) = l.parse::<u32>() else { continue };
        out.push(DiagLine {
            path: shown.to_string(),
            line: l,
            col: 1,
            severity: "problem",
            code: Some(code.to_string()),
            message: msg.to_string(),
        });
    }
    out
}

async fn run_clangd(
    sup: &LspSupervisor,
    program: &Path,
    root: &Path,
    env: &std::collections::BTreeMap<String, String>,
) -> Result<(String, Vec<DiagLine>), String> {
    let db = root.join("compile_commands.json");
    let text = std::fs::read_to_string(&db).map_err(|_| {
        format!(
            "there is no project checker for C/C++ without a compile database: no compile_commands.json in {}; \
             generate one (cmake -DCMAKE_EXPORT_COMPILE_COMMANDS=ON, bear) or use op `diagnostics` on one file",
            sup.rel(root)
        )
    })?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| format!("compile_commands.json is not valid JSON: {e}"))?;
    let mut files: Vec<PathBuf> = Vec::new();
    for e in v.as_array().into_iter().flatten() {
        let dir = e
            .get("directory")
            .and_then(Value::as_str)
            .map_or_else(|| root.to_path_buf(), PathBuf::from);
        if let Some(f) = e.get("file").and_then(Value::as_str) {
            let p = dir.join(f);
            let p = p.canonicalize().unwrap_or(p);
            if sup.workspace().contains(&p) && !files.contains(&p) {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    for f in &files {
        let ran = run_command(
            program,
            &[format!("--check={}", f.display())],
            root,
            sup.path_env(),
            env,
            sup.timeouts.checker,
        )
        .await?;
        out.extend(parse_clangd(&ran.stderr, &sup.rel(f)));
    }
    Ok((
        format!(
            "clangd --check on {} of compile_commands.json",
            tool_core::format::plural(files.len(), "file", "files")
        ),
        out,
    ))
}

/// Run the checker of one entry at `root`.
async fn run_one(
    sup: &LspSupervisor,
    entry: &ServerEntry,
    root: &Path,
) -> Result<(String, Vec<DiagLine>), String> {
    let Some(checker) = &entry.checker else {
        return Err(entry
            .no_checker_reason
            .clone()
            .unwrap_or_else(|| format!("the {} entry has no project checker", entry.id)));
    };
    let local = catalog::local_bin_dirs(root, sup.workspace().root());
    let java = checker.format == CheckerFormat::JavaBuild;
    if java && !checker.commands.iter().any(|c| java_build_runs(c, root)) {
        return Err(format!(
            "no Maven or Gradle build at {} (no pom.xml, build.gradle or settings.gradle): the Java checker runs the project's build (mvn -q -o compile, gradle compileJava --offline); ask `diagnostics` per file instead (jdtls answers)",
            sup.rel(root)
        ));
    }
    let found = checker
        .commands
        .iter()
        .filter(|c| !java || java_build_runs(c, root))
        .find_map(|c| {
            let name = c.first()?;
            catalog::resolve_program(name, root, &local, sup.path_env()).map(|p| (p, c.clone()))
        });
    let Some((program, command)) = found else {
        let names: Vec<&str> = checker
            .commands
            .iter()
            .filter(|c| !java || java_build_runs(c, root))
            .filter_map(|c| c.first().map(String::as_str))
            .collect();
        return Err(format!(
            "its checker is not installed: looked for {} in .venv/bin, venv/bin, node_modules/.bin and on $PATH",
            names.join(", ")
        ));
    };
    if checker.format == CheckerFormat::ClangdCheck {
        return run_clangd(sup, &program, root, &checker.env).await;
    }
    let ran = run_command(
        &program,
        &command[1..],
        root,
        sup.path_env(),
        &checker.env,
        sup.timeouts.checker,
    )
    .await?;
    let mut diags = parse(checker.format, &ran, root, sup.workspace());
    diags.sort();
    diags.dedup();
    if diags.is_empty() && !ran.status.is_some_and(|s| s.success()) {
        // It failed without a diagnostic we understand: show why.
        let tail = failure_summary(checker.format, &ran);
        if !tail.trim().is_empty() && checker.format != CheckerFormat::PyrightJson {
            return Err(format!(
                "`{}` failed ({}) without diagnostics: {}",
                command.join(" "),
                ran.status.map(|s| s.to_string()).unwrap_or_default(),
                tail
            ));
        }
    }
    Ok((command.join(" "), diags))
}

/// `diagnostics "*"`: every project whose root is the workspace root and
/// whose language the workspace has files of (the first server entry of
/// each language, not its alternatives or linters, nor file-type servers
/// without a checker), plus the roots of servers already running.
pub(crate) async fn run_all(sup: &LspSupervisor) -> Result<ToolOutput, ToolError> {
    let ws_root = sup.workspace().root().to_path_buf();
    let present = {
        let root = ws_root.clone();
        tokio::task::spawn_blocking(move || crate::source_walk::first_file_per_name(&root))
            .await
            .unwrap_or_default()
    };
    let has_files = |e: &ServerEntry| e.first_file_in(&present).is_some();
    let mut projects: Vec<(ServerEntry, PathBuf)> = Vec::new();
    for entry in sup.catalog().entries() {
        let covered = projects.iter().any(|(e, _)| {
            e.extensions
                .keys()
                .any(|x| entry.extensions.contains_key(x))
        });
        // A file-type server with no checker (JSON, TOML, YAML, …) has
        // nothing to say here.
        let file_type_only = entry.checker.is_none() && entry.root_markers.is_empty();
        if entry.role != catalog::Role::Server || covered || file_type_only || !has_files(entry) {
            continue;
        }
        if let Some(root) = catalog::find_root(entry, &ws_root, &ws_root) {
            projects.push((entry.clone(), root));
        }
    }
    for slot in sup.slots() {
        if !projects
            .iter()
            .any(|(e, r)| e.id == slot.entry.id && r == &slot.root)
        {
            projects.push((slot.entry.clone(), slot.root.clone()));
        }
    }
    if projects.is_empty() {
        return Err(ToolError::unavailable(
            "no project root at the workspace root for any catalog entry (see op `status`); use op `diagnostics` with a file instead",
        ));
    }
    let mut out = Vec::new();
    for (entry, root) in projects {
        match run_one(sup, &entry, &root).await {
            Ok((what, diags)) => {
                let errors = diags.iter().filter(|d| d.severity == "error").count();
                let files = diags
                    .iter()
                    .map(|d| &d.path)
                    .collect::<std::collections::BTreeSet<_>>()
                    .len();
                out.push(format!(
                    "lsp diagnostics *  {} at {} ({what}) — {}, {} in {}",
                    entry.id,
                    sup.rel(&root),
                    tool_core::format::plural(errors, "error", "errors"),
                    tool_core::format::plural(diags.len() - errors, "other", "others"),
                    tool_core::format::plural(files, "file", "files"),
                ));
                let (kept, note) = tool_core::format::cap_list(
                    diags,
                    crate::args::CHECKER_CAP,
                    "fix the first ones, or ask per file",
                );
                out.extend(kept.iter().map(DiagLine::render));
                out.extend(note);
            }
            Err(why) => out.push(format!(
                "lsp diagnostics *  {} at {}: {why}",
                entry.id,
                sup.rel(&root)
            )),
        }
    }
    Ok(ToolOutput::text(out.join("\n")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{expect, Expect};

    /// The lines parsed from a captured sample (`$ROOT` is the project root)
    /// as the model reads them, sorted and deduplicated as `run_one` does.
    fn check(format: CheckerFormat, stdout: &str, stderr: &str, expected: Expect) {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        let root = ws.root().to_path_buf();
        let put_back = |s: &str| s.replace("$ROOT", &root.display().to_string());
        let lines = if format == CheckerFormat::ClangdCheck {
            parse_clangd(&put_back(stderr), "m.c")
        } else {
            let ran = Ran {
                stdout: put_back(stdout),
                stderr: put_back(stderr),
                status: None,
            };
            parse(format, &ran, &root, &ws)
        };
        let mut lines = lines;
        lines.sort();
        lines.dedup();
        let shown: Vec<String> = lines.iter().map(DiagLine::render).collect();
        expected.assert_eq(&shown.join("\n"));
    }

    macro_rules! sample {
        ($name:literal) => {
            include_str!(concat!("../../tests/checker_samples/", $name))
        };
    }

    #[test]
    fn pyright_json() {
        check(
            CheckerFormat::PyrightJson,
            sample!("pyright_json.stdout"),
            "",
            expect![[r#"
                app.py:4:10 error [reportAssignmentType] Type "int" is not assignable to declared type "str"
                app.py:5:7 error [reportUndefinedVariable] "undefined_name" is not defined
                app.py:5:7 warning [reportUnknownArgumentType] Argument type is unknown
                app.py:6:8 warning [reportUnusedImport] Import "os" is not accessed"#]],
        );
    }

    #[test]
    fn tsc() {
        check(
            CheckerFormat::Tsc,
            sample!("tsc.stdout"),
            "",
            expect![[r#"
                src/a.ts:1:7 error [TS2322] Type 'string' is not assignable to type 'number'.
                src/a.ts:2:30 error [TS2304] Cannot find name 'b'."#]],
        );
    }

    #[test]
    fn cargo_json_error() {
        check(
            CheckerFormat::CargoJson,
            sample!("cargo_json_error.stdout"),
            "",
            expect!["src/main.rs:3:18 error [E0308] mismatched types"],
        );
    }

    #[test]
    fn cargo_json_warning() {
        check(
            CheckerFormat::CargoJson,
            sample!("cargo_json_warning.stdout"),
            "",
            expect!["src/main.rs:3:9 warning [unused_variables] unused variable: `unused`"],
        );
    }

    #[test]
    fn go_vet() {
        check(
            CheckerFormat::GoVet,
            "",
            sample!("go_vet.stderr"),
            expect![[r#"
                bad/bad.go:4:9 error undefined: x
                main.go:6:14 error fmt.Printf format %d has arg "s" of wrong type string"#]],
        );
    }

    #[test]
    fn java_builds() {
        check(
            CheckerFormat::JavaBuild,
            sample!("java_maven.stdout"),
            "",
            expect![[r#"
                src/main/java/demo/stats/Stats.java:10:21 error incompatible types: java.lang.String cannot be converted to int
                src/main/java/demo/stats/Stats.java:14:35 error cannot find symbol (symbol: method size(), location: variable xs of type int[])"#]],
        );
        check(
            CheckerFormat::JavaBuild,
            "",
            sample!("java_javac.stderr"),
            expect![[r#"
                src/main/java/demo/stats/Stats.java:10:21 error incompatible types: String cannot be converted to int
                src/main/java/demo/stats/Stats.java:14:35 error cannot find symbol (symbol: method size(), location: variable xs of type int[])"#]],
        );
    }

    #[test]
    fn dart_machine() {
        check(
            CheckerFormat::DartMachine,
            sample!("dart_machine.stdout"),
            "",
            expect![[r#"
                lib/main.dart:3:5 error [undefined_identifier] Undefined name 'x'.
                lib/main.dart:7:3 warning [dead_code] Dead code."#]],
        );
    }

    #[test]
    fn clangd_check() {
        check(
            CheckerFormat::ClangdCheck,
            "",
            sample!("clangd_check.stderr"),
            expect!["m.c:2:1 problem [undeclared_var_use] use of undeclared identifier 'y'"],
        );
    }

    /// Lines a checker prints that are not diagnostics give none.
    #[test]
    fn noise_gives_no_lines() {
        for format in [
            CheckerFormat::PyrightJson,
            CheckerFormat::Tsc,
            CheckerFormat::CargoJson,
            CheckerFormat::GoVet,
            CheckerFormat::DartMachine,
            CheckerFormat::ClangdCheck,
        ] {
            let noise = "not json\n# example.com/p\nFound 0 errors.\nI[1] Testing\n";
            check(format, noise, noise, expect![[""]]);
        }
    }
}
