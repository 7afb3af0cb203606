//! The five vibe_* tools and the roster of background workers.
//!
//! Not built yet: its issue fills this crate in.
