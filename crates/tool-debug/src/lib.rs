//! debug: a Debug Adapter Protocol client driving real debug adapters.
//!
//! Not built yet: its issue fills this crate in.
