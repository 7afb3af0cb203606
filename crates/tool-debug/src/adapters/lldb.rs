//! lldb (`lldb-dap`, or `lldb-vscode` under its Debian names): it runs
//! compiled executables; `repl` evaluates lldb commands, so expressions use
//! `watch`; for Rust projects it loads the toolchain's formatters, which
//! need its embedded Python pointed at the right place on Debian.

use super::{
    Adapter, LaunchInput, LaunchTarget, ProgramLaunch, RequestArguments, Setup, StdinRoute,
    StopQuestion,
};
use crate::catalog::{Catalog, ResolvedAdapter};
use serde_json::{json, Value};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// lldb's DAP adapter.
pub struct Lldb;

impl Adapter for Lldb {
    fn setup(&self, catalog: &Catalog, command: &[OsString], project_dir: &Path) -> Setup {
        setup(catalog, command, project_dir)
    }

    fn launch_target(&self, l: &ProgramLaunch<'_>) -> Result<LaunchTarget, String> {
        if l.test.is_some() && l.path.extension().is_some_and(|e| e == "rs") {
            return Ok(LaunchTarget::RustTest);
        }
        if !crate::catalog::is_native_executable(l.path) {
            return Err(format!(
                "`{}` is not a compiled program; lldb runs executables: {}",
                l.program,
                build_hint(l.path, l.program)
            ));
        }
        l.plain()
    }

    /// lldb's own setting, `target.input-path`, read at launch.
    fn stdin_route(&self) -> Option<StdinRoute> {
        Some(StdinRoute::File)
    }

    /// A Rust program stops on `rust_panic`.
    fn default_functions(&self, program: &Path) -> Vec<String> {
        if is_rust_executable(program) {
            vec![RUST_PANIC.to_string()]
        } else {
            Vec::new()
        }
    }

    fn launch(&self, input: &LaunchInput<'_>) -> std::io::Result<RequestArguments> {
        Ok(RequestArguments::plain(launch(input)))
    }

    fn attach_port(&self, _adapter: &ResolvedAdapter, port: u16) -> RequestArguments {
        RequestArguments::plain(attach(port))
    }

    fn attach_pid(&self, adapter: &ResolvedAdapter, pid: u32) -> Result<RequestArguments, String> {
        Ok(RequestArguments::plain(attach_pid(adapter, pid)))
    }

    fn stop_question(&self) -> Option<StopQuestion> {
        Some(StopQuestion {
            expression: STOP_QUESTION,
            read: stop_reason_in,
        })
    }
}

/// What to do with a source file handed to lldb, by its language.
fn build_hint(path: &Path, program: &str) -> String {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "c" => format!("build it with debug info (`gcc -g -O0 -o prog {program}`) and launch `prog`"),
        "cc" | "cpp" | "cxx" => {
            format!("build it with debug info (`g++ -g -O0 -o prog {program}`) and launch `prog`")
        }
        "rs" => "build the crate (`cargo build`) and launch its executable under target/debug/".into(),
        "py" => "a Python file runs under debugpy: launch it without `adapter`, or with `adapter: debugpy`".into(),
        "go" => "a Go file runs under delve: launch it without `adapter`, or with `adapter: delve`".into(),
        _ => "build it with debug info and launch the executable".into(),
    }
}

fn launch(input: &LaunchInput<'_>) -> Value {
    // The program gets the run's PATH even when the adapter's was changed
    // for its embedded Python.
    let mut env = vec![format!("PATH={}", input.search_path.to_string_lossy())];
    env.extend(input.env.iter().map(|(k, v)| format!("{k}={v}")));
    // Standard input from a file: lldb's own setting, read at launch.
    let pre_run: Vec<String> = input
        .stdin_file
        .map(|f| format!("settings set target.input-path \"{}\"", f.display()))
        .into_iter()
        .collect();
    json!({
        "program": input.program,
        "args": input.args,
        "cwd": input.cwd,
        "stopOnEntry": false,
        "initCommands": input.adapter.init_commands,
        "preRunCommands": pre_run,
        "env": env,
    })
}

fn attach(port: u16) -> Value {
    json!({
        "attachCommands": [format!("gdb-remote 127.0.0.1:{port}")],
    })
}

/// Attach to a running process by its id (ptrace).
fn attach_pid(adapter: &ResolvedAdapter, pid: u32) -> Value {
    json!({
        "pid": pid,
        "initCommands": adapter.init_commands,
    })
}

/// The Rust formatters for a Cargo project, and the Python environment
/// they need.
fn setup(catalog: &Catalog, command: &[OsString], project_dir: &Path) -> Setup {
    let init_commands = if project_dir.join("Cargo.toml").is_file() {
        rust_formatters(catalog)
    } else {
        Vec::new()
    };
    let mut env = Vec::new();
    let mut path_prefix = None;
    // Only when Python is needed (the Rust formatters): starting lldb's
    // embedded Python costs ~100 ms a launch.
    if !init_commands.is_empty() {
        if let Some(dir) = command.first().and_then(|c| llvm_python_dir(Path::new(c))) {
            let version = dir_version(&dir);
            let dir = compiled_copy(&dir, &version).unwrap_or(dir);
            let mut path = dir.into_os_string();
            if let Some(old) = std::env::var_os("PYTHONPATH").filter(|o| !o.is_empty()) {
                path.push(":");
                path.push(old);
            }
            env.push((
                "PYTHONPATH".to_string(),
                path.to_string_lossy().into_owned(),
            ));
            // liblldb embeds the system libpython; left alone it finds
            // its stdlib through the first `python3` on PATH (a venv, a
            // pyenv build) and fails to start. Point it at the system one.
            // Python also reads the `pyvenv.cfg` of the first `python3`
            // on PATH, so the system one must come first for the adapter.
            if let Some(home) = system_python_home(&version) {
                env.push(("PYTHONHOME".to_string(), home));
                path_prefix = Some(PathBuf::from("/usr/bin"));
            }
        }
    }
    Setup {
        init_commands,
        env,
        path_prefix,
    }
}

/// What rust-lldb loads: the toolchain's formatters, so `Vec` and
/// `String` print as values instead of raw structs.
fn rust_formatters(catalog: &Catalog) -> Vec<String> {
    let Some(rustc) = catalog.which("rustc") else {
        return Vec::new();
    };
    let Some(sysroot) = catalog.probe(&rustc, "sysroot", &["--print", "sysroot"]) else {
        return Vec::new();
    };
    let etc = Path::new(&sysroot).join("lib/rustlib/etc");
    let lookup = etc.join("lldb_lookup.py");
    let commands = etc.join("lldb_commands");
    if !lookup.is_file() || !commands.is_file() {
        return Vec::new();
    }
    vec![
        format!("command script import \"{}\"", lookup.display()),
        format!("command source -s 0 \"{}\"", commands.display()),
    ]
}

/// Where an LLVM install keeps lldb's Python module, for an adapter binary
/// inside it. Debian's lldb-14 looks for it in a wrong place
/// (`lldb-14 -P` prints `/usr/lib/local/…`), so its embedded Python — and
/// with it the Rust formatters — fails unless `PYTHONPATH` says where.
fn llvm_python_dir(binary: &Path) -> Option<PathBuf> {
    let real = binary.canonicalize().ok()?;
    let llvm = real.parent()?.parent()?; // …/llvm-N/bin/lldb-vscode → …/llvm-N
    let lib = llvm.join("lib");
    let mut candidates: Vec<PathBuf> = std::fs::read_dir(&lib)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("python3"))
        })
        .flat_map(|p| [p.join("dist-packages"), p.join("site-packages")])
        .filter(|p| p.join("lldb").join("__init__.py").is_file())
        .collect();
    candidates.sort();
    candidates.pop()
}

/// `python3.11` from the folder of lldb's Python package
/// (`…/lib/python3.11/dist-packages`).
fn dir_version(dir: &Path) -> String {
    dir.parent()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
        .map(String::from)
        .unwrap_or_default()
}

/// lldb's Python package (`dir/lldb`) copied into our data folder with its
/// bytecode compiled by the system Python of the same `version`: Debian
/// ships the package without `.pyc` files and lldb's Python writes none,
/// so every start compiled the 600 KB `lldb/__init__.py` again, ~50 ms of
/// each launch that loads the Rust formatters. Made once per package (its
/// folder and its `__init__.py`'s size and mtime name the copy), in a
/// folder of its own renamed into place; `None` (use the package itself)
/// when anything fails.
fn compiled_copy(dir: &Path, version: &str) -> Option<PathBuf> {
    use std::hash::{Hash, Hasher};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tool_core::process::{BlockingChild, ChildSpec, Io};
    static ATTEMPTS: AtomicUsize = AtomicUsize::new(0);
    let init = dir.join("lldb").join("__init__.py").metadata().ok()?;
    let mut key = std::collections::hash_map::DefaultHasher::new();
    (dir, init.len(), init.modified().ok()?).hash(&mut key);
    let name = format!("{version}-{:016x}", key.finish());
    let parent = tool_core::programs::data_dir()?.join("lldb-python");
    let home = parent.join(&name);
    if home.join("lldb").join("__pycache__").is_dir() {
        return Some(home);
    }
    let python = Path::new("/usr/bin").join(version);
    if version.is_empty() || !python.is_file() {
        return None;
    }
    let part = parent.join(format!(
        ".{name}.part-{}-{}",
        std::process::id(),
        ATTEMPTS.fetch_add(1, Ordering::Relaxed)
    ));
    let made = copy_package(&dir.join("lldb"), &part.join("lldb"))
        .ok()
        .and_then(|()| {
            let mut compile = BlockingChild::spawn(
                &ChildSpec::new(&python)
                    .args(["-m", "compileall", "-q"])
                    .arg(&part)
                    .stdout(Io::Null)
                    .stderr(Io::Null),
            )
            .ok()?;
            let status = compile
                .wait_bounded(std::time::Duration::from_mins(1))
                .ok()??;
            status.success().then_some(())
        })
        .and_then(|()| {
            // Another run may have made it first: then that copy is used.
            std::fs::rename(&part, &home)
                .ok()
                .or_else(|| home.join("lldb").join("__pycache__").is_dir().then_some(()))
        });
    let _ = std::fs::remove_dir_all(&part);
    made.map(|()| home)
}

/// Copy the package folder `from` to `to`: files copied, symbolic links
/// (to liblldb, lldb-argdumper) made again to where they point, dangling
/// ones too (Debian's lldb-argdumper link is).
fn copy_package(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            std::os::unix::fs::symlink(from.join(std::fs::read_link(&source)?), &target)?;
        } else if kind.is_dir() {
            if entry.file_name() != "__pycache__" {
                copy_package(&source, &target)?;
            }
        } else {
            std::fs::copy(&source, &target)?;
        }
    }
    Ok(())
}

/// `/usr` when the system Python of that version is installed there.
fn system_python_home(version: &str) -> Option<String> {
    (!version.is_empty() && Path::new("/usr/lib").join(version).join("os.py").is_file())
        .then(|| "/usr".to_string())
}

/// Where a Rust panic goes once its message is printed: the function an
/// IDE breaks on.
pub const RUST_PANIC: &str = "rust_panic";

/// A compiled Rust program: its symbols name the panic machinery (read
/// bounded, as a Go executable's build info is).
pub fn is_rust_executable(path: &Path) -> bool {
    crate::catalog::is_native_executable(path)
        && crate::catalog::file_contains(path, b"rust_begin_unwind", 256 << 20)
}

/// `thread 'main' panicked at src/main.rs:7:5:\nindex out of bounds: …`
/// in the program's output → `index out of bounds: … (at src/main.rs:7:5)`:
/// the last panic message the default hook printed.
pub fn panic_message(output: &str) -> Option<String> {
    // `thread 'main' panicked at …`, or since Rust 1.88 with the thread's
    // id: `thread 'main' (22475) panicked at …`.
    let at = output
        .rmatch_indices(" panicked at ")
        .map(|(i, _)| i)
        .find(|i| {
            output[..*i]
                .rsplit('\n')
                .next()
                .is_some_and(|l| l.starts_with("thread '"))
        })?;
    let rest = &output[at + " panicked at ".len()..];
    let mut lines = rest.lines();
    let first = lines.next()?.trim();
    // Rust ≥ 1.73: `panicked at FILE:L:C:` then the message on the next
    // line; before: `panicked at 'MSG', FILE:L:C`.
    if let Some(place) = first.strip_suffix(':') {
        let message = lines.next().unwrap_or_default().trim();
        return Some(format!("{message} (at {place})"));
    }
    Some(first.to_string())
}

/// The lldb command whose answer says why the thread stopped, for an
/// lldb-vscode that sends a bare `exception` stop with no description
/// (Debian's lldb-vscode-14 does, for signals and for a pause alike).
pub const STOP_QUESTION: &str = "thread info";

/// `… stop reason = signal SIGSEGV: invalid address (fault address: 0x0)`
/// → `signal SIGSEGV: invalid address (fault address: 0x0)`.
pub fn stop_reason_in(thread_info: &str) -> Option<String> {
    let at = thread_info.find("stop reason = ")?;
    let reason = thread_info[at + "stop reason = ".len()..]
        .lines()
        .next()?
        .trim();
    (!reason.is_empty()).then(|| reason.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_message_is_read_from_the_output() {
        let out = "start\nthread 'main' panicked at src/main.rs:7:5:\nindex out of bounds: the len is 3 but the index is 5\nnote: run with `RUST_BACKTRACE=1`\n";
        assert_eq!(
            panic_message(out).as_deref(),
            Some("index out of bounds: the len is 3 but the index is 5 (at src/main.rs:7:5)")
        );
        let out = "crashing\nthread 'main' (22475) panicked at src/bin/crash.rs:3:5:\nindex out of bounds: the len is 3 but the index is 5\n";
        assert_eq!(
            panic_message(out).as_deref(),
            Some("index out of bounds: the len is 3 but the index is 5 (at src/bin/crash.rs:3:5)")
        );
        assert_eq!(panic_message("no panic here"), None);
    }

    #[test]
    fn the_stop_reason_is_read_from_thread_info() {
        let info = "thread #1: tid = 31333, 0x0000555555555141 crash`store(p=0x0000000000000000, v=42) at crash.c:5:8, name = 'crash', stop reason = signal SIGSEGV: invalid address (fault address: 0x0)\n";
        assert_eq!(
            stop_reason_in(info).as_deref(),
            Some("signal SIGSEGV: invalid address (fault address: 0x0)")
        );
        assert_eq!(stop_reason_in("thread #1: tid = 3"), None);
    }
}
