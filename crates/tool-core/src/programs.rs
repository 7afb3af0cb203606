//! Finding a program to run, the one `which` of the project: a path is taken
//! as given (relative to a base folder), a bare name is looked up in the
//! project's own binary folders first, then among the programs `agent-tools
//! install` put in the per-user data folder, then on a search path.
//!
//! Invariant: only regular files with an execute bit are ever returned.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Whether `p` is a regular file (after symlinks) that someone may execute.
pub fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Find `name`: if it holds a `/`, `base.join(name)` when that is executable;
/// else the first executable `name` in `local`, then in the installed
/// programs' folder ([`crate::install::bin_dir`]), then in `path` (`$PATH`
/// when `None`). Empty entries of the search path are skipped, not taken as the
/// current folder.
pub fn find_program(
    name: impl AsRef<OsStr>,
    base: &Path,
    local: &[PathBuf],
    path: Option<&OsStr>,
) -> Option<PathBuf> {
    let name = name.as_ref();
    if name.as_encoded_bytes().contains(&b'/') {
        let p = base.join(name);
        return is_executable(&p).then_some(p);
    }
    let from_env;
    let path = if let Some(p) = path {
        Some(p)
    } else {
        from_env = std::env::var_os("PATH");
        from_env.as_deref()
    };
    local
        .iter()
        .cloned()
        .chain(bin_dir())
        .chain(path.map(std::env::split_paths).into_iter().flatten())
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

/// The project-local binary folders for `start`: `.venv/bin`, `venv/bin`
/// and `node_modules/.bin` of `start` and of each folder above it up to
/// `workspace_root`, nearest first.
pub fn project_bin_dirs(start: &Path, workspace_root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in start.ancestors() {
        if !d.starts_with(workspace_root) {
            break;
        }
        for sub in [".venv/bin", "venv/bin", "node_modules/.bin"] {
            out.push(d.join(sub));
        }
    }
    out
}

/// The per-user data folder: `$AGENT_TOOLS_DATA_DIR`, else
/// `$XDG_DATA_HOME/agent-tools`, else `~/.local/share/agent-tools`.
pub fn data_dir() -> Option<PathBuf> {
    let set = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    set("AGENT_TOOLS_DATA_DIR")
        .or_else(|| set("XDG_DATA_HOME").map(|d| d.join("agent-tools")))
        .or_else(|| set("HOME").map(|h| h.join(".local/share/agent-tools")))
}

/// The folder of links to installed executables, looked in after a
/// project's own folders and before `PATH`.
pub fn bin_dir() -> Option<PathBuf> {
    data_dir().map(|d| d.join("bin"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn program(dir: &Path, name: &str, mode: u32) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    #[test]
    fn project_folders_come_before_the_search_path() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("ws");
        let local = program(&root.join("sub/.venv/bin"), "tool", 0o755);
        let global = program(&t.path().join("global"), "tool", 0o755);
        program(&t.path().join("global"), "only-global", 0o755);
        let dirs = project_bin_dirs(&root.join("sub"), &root);
        assert_eq!(dirs[0], root.join("sub/.venv/bin"));
        assert_eq!(dirs.last().unwrap(), &root.join("node_modules/.bin"));
        let path = t.path().join("global").into_os_string();
        assert_eq!(find_program("tool", &root, &dirs, Some(&path)), Some(local));
        assert_eq!(find_program("tool", &root, &[], Some(&path)), Some(global));
        assert_eq!(
            find_program("only-global", &root, &dirs, Some(&path)),
            Some(t.path().join("global/only-global"))
        );
        assert_eq!(find_program("missing", &root, &dirs, Some(&path)), None);
        // An empty search path is no folder at all, not the current one.
        assert_eq!(find_program("tool", &root, &[], Some(OsStr::new(""))), None);
    }

    #[test]
    fn a_path_is_taken_from_the_base_and_must_be_executable() {
        let t = tempfile::tempdir().unwrap();
        let runnable = program(&t.path().join("bin"), "run", 0o755);
        program(&t.path().join("bin"), "plain", 0o644);
        assert_eq!(
            find_program("bin/run", t.path(), &[], None),
            Some(runnable.clone())
        );
        let absolute = runnable.clone().into_os_string();
        assert_eq!(
            find_program(&absolute, Path::new("/elsewhere"), &[], None),
            Some(runnable)
        );
        assert_eq!(find_program("bin/plain", t.path(), &[], None), None);
        assert!(!is_executable(t.path()), "a folder is not a program");
    }
}
