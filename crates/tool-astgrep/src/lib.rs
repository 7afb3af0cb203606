//! ast_grep, ast_edit and resolve: structural search and staged, all-or-nothing rewrites.
//!
//! Not built yet: its issue fills this crate in.
