//! Which interpreter a kernel runs on: the project's own Python first (its
//! `.venv`, then `venv`), then `python3` on `$PATH`; Node.js from `$PATH`.
//! A configured path always wins.
//!
//! The project's environment comes first because a `python3` from `$PATH` is
//! another environment: imports that work in the project fail in the kernel.

use crate::config::{EvalConfig, Language};
use std::path::{Path, PathBuf};

/// A resolved interpreter and where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interpreter {
    pub program: PathBuf,
    /// "config", ".venv", "venv" or "$PATH".
    pub origin: &'static str,
}

impl Interpreter {
    /// The virtualenv this interpreter belongs to, if any (its `bin` dir's parent
    /// holds `pyvenv.cfg`).
    pub fn virtualenv(&self) -> Option<PathBuf> {
        let bin = self.program.parent()?;
        let env = bin.parent()?;
        env.join("pyvenv.cfg").is_file().then(|| env.to_path_buf())
    }
}

/// Find the interpreter for `language` in a project rooted at `root`.
pub fn resolve(
    language: Language,
    config: &EvalConfig,
    root: &Path,
    path_var: Option<&std::ffi::OsStr>,
) -> Result<Interpreter, String> {
    let configured = match language {
        Language::Python => config.python.as_ref(),
        Language::Javascript => config.node.as_ref(),
    };
    if let Some(p) = configured {
        let found = tool_core::programs::find_program(p, root, &[], path_var);
        let p = if p.components().count() > 1 {
            root.join(p)
        } else {
            p.clone()
        };
        return found
            .map(|program| Interpreter {
                program,
                origin: "config",
            })
            .ok_or_else(|| {
                format!(
                    "the configured {} interpreter `{}` is not an executable file; fix [eval] {} in the config",
                    language,
                    p.display(),
                    match language {
                        Language::Python => "python",
                        Language::Javascript => "node",
                    }
                )
            });
    }
    match language {
        Language::Python => {
            for (dir, origin) in [(".venv", ".venv"), ("venv", "venv")] {
                let p = root.join(dir).join("bin").join("python");
                if tool_core::programs::is_executable(&p) {
                    return Ok(Interpreter { program: p, origin });
                }
            }
            which("python3".as_ref(), path_var)
                .map(|program| Interpreter {
                    program,
                    origin: "$PATH",
                })
                .ok_or_else(|| {
                    "no Python found: neither .venv/bin/python nor venv/bin/python exists in the project, \
                     and python3 is not on $PATH; create a virtualenv in the project or set [eval] python"
                        .to_string()
                })
        }
        Language::Javascript => which("node".as_ref(), path_var)
            .map(|program| Interpreter {
                program,
                origin: "$PATH",
            })
            .ok_or_else(|| {
                "no Node.js found: `node` is not on $PATH; install Node.js or set [eval] node"
                    .to_string()
            }),
    }
}

/// The first executable called `name` in `path_var` (default `$PATH`).
pub fn which(name: &std::ffi::OsStr, path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    tool_core::programs::find_program(name, Path::new(""), &[], path_var)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn fake_exe(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn python_lookup_prefers_the_project_environment() {
        let root = tempfile::tempdir().unwrap();
        let bin = tempfile::tempdir().unwrap();
        fake_exe(&bin.path().join("python3"));
        let path = bin.path().as_os_str();
        let cfg = EvalConfig::default();

        let found = resolve(Language::Python, &cfg, root.path(), Some(path)).unwrap();
        assert_eq!(
            (found.program, found.origin),
            (bin.path().join("python3"), "$PATH")
        );

        fake_exe(&root.path().join("venv/bin/python"));
        let found = resolve(Language::Python, &cfg, root.path(), Some(path)).unwrap();
        assert_eq!(found.origin, "venv");

        fake_exe(&root.path().join(".venv/bin/python"));
        let found = resolve(Language::Python, &cfg, root.path(), Some(path)).unwrap();
        assert_eq!(
            (found.program, found.origin),
            (root.path().join(".venv/bin/python"), ".venv")
        );

        let cfg = EvalConfig {
            python: Some(bin.path().join("python3")),
            ..EvalConfig::default()
        };
        let found = resolve(Language::Python, &cfg, root.path(), Some(path)).unwrap();
        assert_eq!(found.origin, "config");
    }

    #[test]
    fn missing_interpreters_say_what_to_do() {
        let root = tempfile::tempdir().unwrap();
        let empty = tempfile::tempdir().unwrap();
        let cfg = EvalConfig::default();
        let err = resolve(
            Language::Python,
            &cfg,
            root.path(),
            Some(empty.path().as_os_str()),
        )
        .unwrap_err();
        expect_test::expect!["no Python found: neither .venv/bin/python nor venv/bin/python exists in the project, and python3 is not on $PATH; create a virtualenv in the project or set [eval] python"].assert_eq(&err);
        let err = resolve(
            Language::Javascript,
            &cfg,
            root.path(),
            Some(empty.path().as_os_str()),
        )
        .unwrap_err();
        expect_test::expect![
            "no Node.js found: `node` is not on $PATH; install Node.js or set [eval] node"
        ]
        .assert_eq(&err);
        let cfg = EvalConfig {
            node: Some("/nonexistent/node".into()),
            ..EvalConfig::default()
        };
        let err = resolve(Language::Javascript, &cfg, root.path(), None).unwrap_err();
        expect_test::expect!["the configured javascript interpreter `/nonexistent/node` is not an executable file; fix [eval] node in the config"].assert_eq(&err);
    }
}
