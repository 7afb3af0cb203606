//! Approval tiers and the surfaces they gate.
//!
//! The tier decides visibility, not only approval: a surface sees exactly the
//! tools whose tier is at most its `max_tier`.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What a tool can do to the world. Ordered: `Read < Write < Exec`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// No side effects.
    Read,
    /// Modifies files.
    Write,
    /// Starts or controls a process.
    Exec,
}

impl Tier {
    pub const ALL: [Tier; 3] = [Tier::Read, Tier::Write, Tier::Exec];

    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Read => "read",
            Tier::Write => "write",
            Tier::Exec => "exec",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Tier {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "read" => Ok(Tier::Read),
            "write" => Ok(Tier::Write),
            "exec" => Ok(Tier::Exec),
            other => Err(format!(
                "unknown tier `{other}`: expected read, write or exec"
            )),
        }
    }
}

/// Where a tool list is shown: the main agent, plan mode, a read-only
/// subagent. A surface sees the tools of tier `max_tier` and below.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Surface {
    pub max_tier: Tier,
}

impl Surface {
    /// Plan mode and read-only subagents.
    pub const READ_ONLY: Surface = Surface {
        max_tier: Tier::Read,
    };
    /// May edit files but not start processes.
    pub const WRITE: Surface = Surface {
        max_tier: Tier::Write,
    };
    /// The main agent: everything.
    pub const FULL: Surface = Surface {
        max_tier: Tier::Exec,
    };

    pub fn new(max_tier: Tier) -> Self {
        Surface { max_tier }
    }

    pub fn allows(self, tier: Tier) -> bool {
        tier <= self.max_tier
    }
}

impl Default for Surface {
    fn default() -> Self {
        Surface::FULL
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_are_ordered_and_surfaces_gate_by_them() {
        assert!(Tier::Read < Tier::Write && Tier::Write < Tier::Exec);
        assert!(Surface::READ_ONLY.allows(Tier::Read));
        assert!(!Surface::READ_ONLY.allows(Tier::Write));
        assert!(!Surface::READ_ONLY.allows(Tier::Exec));
        assert!(Surface::WRITE.allows(Tier::Write));
        assert!(!Surface::WRITE.allows(Tier::Exec));
        assert!(Surface::FULL.allows(Tier::Exec));
        assert_eq!("write".parse::<Tier>(), Ok(Tier::Write));
        assert!("admin"
            .parse::<Tier>()
            .unwrap_err()
            .contains("read, write or exec"));
    }
}
