//! eval: persistent Python and JavaScript kernels with the tool bridge.
//!
//! Not built yet: its issue fills this crate in.
