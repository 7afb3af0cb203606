//! lsp, lsp_rename and diagnostics on write, over real language servers.
//!
//! Not built yet: its issue fills this crate in.
