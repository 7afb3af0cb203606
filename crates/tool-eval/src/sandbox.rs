//! Where a kernel runs: inside the conversation's isolated environment when
//! the harness supplies one, otherwise on the host.
//!
//! The kernel factory never starts an isolated environment itself: the
//! harness owns that, and hands over only a way to wrap a command so it runs
//! inside one. The wrapped command must keep descriptors 3, 4 and 5 (the
//! protocol pipes) open for the kernel.

use std::ffi::OsString;
use std::fmt;
use tool_core::process::ChildSpec;

/// Wraps the kernel's command to run inside an isolated environment.
pub trait Sandbox: Send + Sync {
    /// The command that runs `kernel` inside the environment.
    fn wrap(&self, kernel: ChildSpec) -> ChildSpec;

    /// One line for `doctor` and the kernel-start note.
    fn describe(&self) -> String;
}

impl fmt::Debug for dyn Sandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// A sandbox given as a command prefix (`bwrap … --`, `docker exec -i ID`,
/// `nsjail … --`): the prefix runs first, then the kernel's command line.
#[derive(Debug, Clone)]
pub struct CommandPrefix {
    prefix: Vec<OsString>,
}

impl CommandPrefix {
    /// `None` for an empty prefix.
    pub fn new<I, S>(prefix: I) -> Option<Self>
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let prefix: Vec<OsString> = prefix.into_iter().map(Into::into).collect();
        (!prefix.is_empty()).then_some(CommandPrefix { prefix })
    }
}

impl Sandbox for CommandPrefix {
    fn wrap(&self, kernel: ChildSpec) -> ChildSpec {
        kernel.wrapped_in(&self.prefix)
    }

    fn describe(&self) -> String {
        let words: Vec<String> = self
            .prefix
            .iter()
            .map(|w| w.to_string_lossy().into_owned())
            .collect();
        format!("inside `{}`", words.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_goes_in_front_of_the_kernel_command() {
        let sb = CommandPrefix::new(["env", "SANDBOXED=1"]).unwrap();
        let spec = sb.wrap(ChildSpec::new("python3").args(["-c", "pass"]));
        assert_eq!(spec.display(), "env SANDBOXED=1 python3 -c pass");
        assert_eq!(sb.describe(), "inside `env SANDBOXED=1`");
        assert!(CommandPrefix::new(Vec::<String>::new()).is_none());
    }
}
