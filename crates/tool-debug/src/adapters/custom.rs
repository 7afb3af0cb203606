//! A harness-supplied adapter (`kind = "custom"` in `[[debug.adapters]]`):
//! the plain arguments of the [`Adapter`] trait's defaults, then its
//! `launch_template`.

use super::Adapter;

/// A harness-supplied adapter.
pub struct Custom;

impl Adapter for Custom {}
