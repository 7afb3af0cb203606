//! The `fault-injecting-lsp` binary (crate `fault-injecting-lsp`), built on
//! demand for the test process that asks for it.
//!
//! A test cannot name another crate's binary (`CARGO_BIN_EXE_*` is only for
//! a package's own binaries), and the server lives in a crate of its own so
//! that its tower-lsp stays out of tool-lsp's dependencies. So the first call
//! in a process runs `cargo build -p fault-injecting-lsp` with the profile
//! and target folder of the running test executable (both read from its
//! path, `<target>/<profile>/deps/<test>`); the binary lands in
//! `<target>/<profile>/`. Cargo holds its build lock only while it compiles,
//! not while tests run, so this works under `cargo test` and nextest alike
//! (each nextest process asks; once the binary is built, cargo only checks
//! it is fresh, well under a second).
//!
//! `$FAULT_INJECTING_LSP` names a binary to use instead (and nothing is
//! built), for layouts this cannot read from the test's path.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

const NAME: &str = "fault-injecting-lsp";

/// The path of the fault-injecting server, built on the first call.
/// Panics with cargo's output if the build fails.
pub fn fault_injecting_lsp() -> &'static str {
    static BIN: OnceLock<String> = OnceLock::new();
    BIN.get_or_init(|| {
        let bin = match std::env::var_os("FAULT_INJECTING_LSP") {
            Some(p) => PathBuf::from(p),
            None => build(),
        };
        assert!(bin.is_file(), "{} is missing", bin.display());
        bin.to_str()
            .expect("the fault server's path is UTF-8")
            .to_string()
    })
}

/// Where cargo puts the test executables of this build, from the running
/// one: `<target>/<profile>/deps`, so `<target>/<profile>` holds binaries.
struct Layout {
    target_dir: PathBuf,
    /// `<target>/<profile>`, or `<target>/<triple>/<profile>`.
    out_dir: PathBuf,
    /// `dev`, `release` or a custom profile's name.
    profile: String,
    /// `Some(triple)` when built with `--target`.
    triple: Option<String>,
}

fn layout() -> Layout {
    let exe = std::env::current_exe().expect("the test executable's path");
    let deps = exe.parent().expect("the test executable is in deps/");
    assert_eq!(
        deps.file_name().and_then(|n| n.to_str()),
        Some("deps"),
        "{} is not in cargo's deps/ folder: set FAULT_INJECTING_LSP to the server binary",
        exe.display()
    );
    let out_dir = deps.parent().expect("deps/ is in a profile folder");
    let profile = match out_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "dev".to_string(),
        Some(other) => other.to_string(),
        None => panic!("no profile folder above {}", deps.display()),
    };
    let above = out_dir.parent().expect("a target folder");
    // The target folder holds CACHEDIR.TAG; with `--target TRIPLE` the
    // profile folder is one level further down, below the triple.
    let (target_dir, triple) = if !above.join("CACHEDIR.TAG").exists()
        && above
            .parent()
            .is_some_and(|t| t.join("CACHEDIR.TAG").exists())
    {
        let triple = above.file_name().and_then(|n| n.to_str()).map(String::from);
        (above.parent().unwrap().to_path_buf(), triple)
    } else {
        (above.to_path_buf(), None)
    };
    Layout {
        target_dir,
        out_dir: out_dir.to_path_buf(),
        profile,
        triple,
    }
}

fn build() -> PathBuf {
    let l = layout();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut c = Command::new(cargo);
    c.current_dir(crate::fixtures::workspace_root())
        .args(["build", "--quiet", "-p", NAME, "--bin", NAME, "--profile"])
        .arg(&l.profile)
        .arg("--target-dir")
        .arg(&l.target_dir);
    if let Some(t) = &l.triple {
        c.args(["--target", t]);
    }
    let shown = format!("{c:?}");
    let out = c
        .output()
        .unwrap_or_else(|e| panic!("cannot run {shown}: {e}"));
    assert!(
        out.status.success(),
        "{shown} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    l.out_dir.join(NAME)
}
