//! Grammars beyond the ones ast-grep-language ships: tree-sitter grammar
//! crates from crates.io, each built on `tree-sitter-language` so that it
//! loads into ast-grep's tree-sitter whatever that version is.
//!
//! Each grammar has an *expando* character: ast-grep writes a pattern's `$X`
//! as `<expando>X` before parsing when `$` cannot start a word in the
//! grammar, and reads `<expando>X` back as the metavariable. The character is
//! one the grammar accepts inside the identifiers (or words) where
//! metavariables stand; `$` itself where the grammar already takes `$X`.
//!
//! Invariant: [`Extra::ALL`] lists every variant once; the catalog gives each
//! an id, and its tests parse one pattern and one file in each.

use ast_grep_core::tree_sitter::TSLanguage;
use std::borrow::Cow;

/// A grammar from a crate of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Extra {
    CMake,
    Dockerfile,
    GraphQl,
    Make,
    Protobuf,
    R,
    Sql,
    Svelte,
    Toml,
    Vue,
    Xml,
}

impl Extra {
    pub const ALL: &'static [Extra] = &[
        Extra::CMake,
        Extra::Dockerfile,
        Extra::GraphQl,
        Extra::Make,
        Extra::Protobuf,
        Extra::R,
        Extra::Sql,
        Extra::Svelte,
        Extra::Toml,
        Extra::Vue,
        Extra::Xml,
    ];

    /// The tree-sitter language of the grammar.
    pub fn ts_language(self) -> TSLanguage {
        let f = match self {
            Extra::CMake => tree_sitter_cmake::LANGUAGE,
            Extra::Dockerfile => arborium_dockerfile::language(),
            Extra::GraphQl => tree_sitter_graphql::LANGUAGE,
            Extra::Make => tree_sitter_make::LANGUAGE,
            Extra::Protobuf => tree_sitter_proto::LANGUAGE,
            Extra::R => tree_sitter_r::LANGUAGE,
            Extra::Sql => arborium_sql::language(),
            Extra::Svelte => tree_sitter_svelte_ng::LANGUAGE,
            Extra::Toml => tree_sitter_toml_ng::LANGUAGE,
            Extra::Vue => arborium_vue::language(),
            Extra::Xml => tree_sitter_xml::LANGUAGE_XML,
        };
        f.into()
    }

    /// The character a pattern's `$` is written as before parsing.
    pub fn expando(self) -> char {
        match self {
            // `$` starts a variable reference in these, so metavariables
            // are written as plain words.
            Extra::Make | Extra::CMake | Extra::Dockerfile => '_',
            Extra::R => 'µ',
            Extra::Svelte | Extra::Vue | Extra::Xml => 'z',
            Extra::GraphQl | Extra::Protobuf | Extra::Sql => '_',
            // Metavariables are quoted instead (see the pattern compiler).
            Extra::Toml => '$',
        }
    }
}

/// Write a pattern's metavariables with `expando` instead of `$`: `$X`,
/// `$$$ARGS`, `$_` and an anonymous `$$$` become `<e>X`, `<e><e><e>ARGS`, …
/// A `$` not starting a metavariable (`$(CC)` in make) stays.
pub fn with_expando(expando: char, pattern: &str) -> Cow<'_, str> {
    if expando == '$' || !pattern.contains('$') {
        return Cow::Borrowed(pattern);
    }
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut run = 0usize;
    let flush = |out: &mut String, run: usize, sigil: char| {
        for _ in 0..run {
            out.push(sigil);
        }
    };
    for c in pattern.chars() {
        if c == '$' {
            run += 1;
            continue;
        }
        let starts_var = c.is_ascii_uppercase() || c == '_' || run == 3;
        flush(&mut out, run, if starts_var { expando } else { '$' });
        run = 0;
        out.push(c);
    }
    flush(&mut out, run, if run == 3 { expando } else { '$' });
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metavariables_take_the_expando_and_other_dollars_stay() {
        assert_eq!(
            with_expando('_', "$(CC) $X $$$ARGS $_ $$$"),
            "$(CC) _X ___ARGS __ ___"
        );
        assert_eq!(with_expando('$', "$X"), "$X");
        assert_eq!(with_expando('z', "a$"), "a$");
    }
}
