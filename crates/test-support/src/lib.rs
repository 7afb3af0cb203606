//! What the tests of agent-tools share, so each piece of test plumbing has
//! one home: where the real components the tests run are found
//! ([`fixtures`]), throwaway projects to work in ([`project`]),
//! `agent-tools batch` run over a list of calls ([`cli`]),
//! small real tools to bind next to a family ([`tools`]), the
//! fault-injecting language server, built on demand ([`fault_server`]), and
//! a checkout for shared servers with its probes ([`shared_servers`]).
//!
//! Only tests, examples and `cargo xtask` use it: it is a dev-dependency of
//! the crates and never a normal dependency of a shipped one (it is not
//! published). Production code must never need anything here; a helper both
//! need belongs in `tool-core`.

pub mod cli;
pub mod fault_server;
pub mod fixtures;
pub mod project;
pub mod shared_servers;
pub mod tools;
