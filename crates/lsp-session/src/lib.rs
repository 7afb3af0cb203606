//! The language-server session layer: what starts a server and talks to
//! it, with no tool in it (tool-lsp holds the tools: `lsp`, `lsp_rename`,
//! diagnostics on write).
//!
//! Modules: [`transport`] (Content-Length framing), [`jsonrpc`] (request
//! ids and pending replies over a stream), [`client`] (one server session:
//! capabilities, registrations, documents, diagnostics as delivered,
//! progress), [`catalog`] (which server for which file, from
//! `catalog/servers.toml`), [`config`] (the layers that change it, and the
//! project's trust rule) with [`format_setting`], [`ready_probe`],
//! [`supervisor`] (one run's servers: lazy starts, restarts, idle stops,
//! memory ceilings) with [`warm_up`], [`source_walk`] (which languages a
//! workspace holds) and [`symbol_cache`], and [`position`] (line + symbol ↔
//! LSP positions, encodings negotiated), [`broker`] (the per-user broker
//! that shares one server among the runs on a checkout) with
//! [`broker_link`] (a run's side of it: the socket, attaching).
//!
//! This crate never starts a process except through tool-core's child
//! helper, and never leaves a server running after its supervisor is gone.

pub mod broker;
pub mod broker_link;
pub mod catalog;
pub mod client;
pub mod config;
pub mod format_setting;
pub mod jsonrpc;
pub mod position;
pub mod ready_probe;
/// Moved to tool-core, which tool-debug's doctor shares it from.
pub use tool_core::source_walk;
pub mod supervisor;
pub mod symbol_cache;
pub mod transport;
pub mod warm_up;

pub use catalog::{Catalog, ServerEntry};
pub use config::CatalogConfig;
pub use position::PositionEncoding;
pub use supervisor::{LspSupervisor, Timeouts};
