//! The languages this crate searches: every grammar ast-grep-language ships
//! and the extra grammars of [`crate::grammars`], under stable lower-case
//! ids, with aliases, file extensions and file names. [`Lang`] is also the
//! ast-grep language value the engine parses and matches with.
//!
//! The ids are this crate's contract with the model (they appear in schemas,
//! results and errors), so they are spelled here rather than taken from the
//! engine's `Debug` names, which could change between versions.
//!
//! `.h` is ambiguous between C and C++. It belongs to C when the language is
//! inferred (a plain C header is far more common than one a C parser cannot
//! read, and the C++ grammar would mis-read C code using `new` or `class` as
//! names), and to C++ when the caller asked for `cpp`: a user who searches a
//! C++ tree for C++ code expects its headers to be searched too.

use crate::grammars::{with_expando, Extra};
use ast_grep_core::matcher::{Pattern, PatternBuilder, PatternError};
use ast_grep_core::tree_sitter::{LanguageExt, StrDoc, TSLanguage, TSRange};
use ast_grep_core::{Language, Node};
use ast_grep_language::SupportLang;
use std::borrow::Cow;
use std::path::Path;

/// One searchable language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lang(Grammar);

/// Where a language's grammar comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Grammar {
    /// Shipped by ast-grep-language.
    Builtin(SupportLang),
    /// A grammar crate of its own.
    Extra(Extra),
}

struct Entry {
    id: &'static str,
    engine: Grammar,
    /// Other names accepted for it (lower case).
    aliases: &'static [&'static str],
    /// File extensions inferred as this language (without the dot).
    extensions: &'static [&'static str],
    /// Whole file names inferred as this language (`Makefile`).
    file_names: &'static [&'static str],
}

/// An entry for a grammar ast-grep-language ships.
const fn builtin(
    id: &'static str,
    lang: SupportLang,
    aliases: &'static [&'static str],
    extensions: &'static [&'static str],
) -> Entry {
    Entry {
        id,
        engine: Grammar::Builtin(lang),
        aliases,
        extensions,
        file_names: &[],
    }
}

/// An entry for an extra grammar.
const fn extra(
    id: &'static str,
    lang: Extra,
    aliases: &'static [&'static str],
    extensions: &'static [&'static str],
    file_names: &'static [&'static str],
) -> Entry {
    Entry {
        id,
        engine: Grammar::Extra(lang),
        aliases,
        extensions,
        file_names,
    }
}

const TABLE: &[Entry] = &[
    builtin(
        "bash",
        SupportLang::Bash,
        &["sh", "shell"],
        &["bash", "sh", "zsh", "ksh", "bats"],
    ),
    builtin("c", SupportLang::C, &[], &["c", "h"]),
    extra("cmake", Extra::CMake, &[], &["cmake"], &["CMakeLists.txt"]),
    builtin(
        "cpp",
        SupportLang::Cpp,
        &["c++", "cc", "cxx"],
        &["cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "cu", "ino"],
    ),
    builtin("csharp", SupportLang::CSharp, &["cs", "c#"], &["cs"]),
    builtin("css", SupportLang::Css, &[], &["css", "scss"]),
    builtin("dart", SupportLang::Dart, &[], &["dart"]),
    extra(
        "dockerfile",
        Extra::Dockerfile,
        &["docker", "containerfile"],
        &["dockerfile", "containerfile"],
        &["Dockerfile", "Containerfile"],
    ),
    builtin("elixir", SupportLang::Elixir, &["ex"], &["ex", "exs"]),
    builtin("go", SupportLang::Go, &["golang"], &["go"]),
    extra(
        "graphql",
        Extra::GraphQl,
        &["gql"],
        &["graphql", "graphqls", "gql"],
        &[],
    ),
    builtin("haskell", SupportLang::Haskell, &["hs"], &["hs"]),
    builtin(
        "hcl",
        SupportLang::Hcl,
        &["terraform", "tf"],
        &["hcl", "tf", "tfvars", "nomad"],
    ),
    builtin(
        "html",
        SupportLang::Html,
        &["htm"],
        &["html", "htm", "xhtml"],
    ),
    builtin("java", SupportLang::Java, &[], &["java"]),
    builtin(
        "javascript",
        SupportLang::JavaScript,
        &["js", "jsx"],
        &["js", "mjs", "cjs", "jsx"],
    ),
    builtin("json", SupportLang::Json, &[], &["json"]),
    builtin(
        "kotlin",
        SupportLang::Kotlin,
        &["kt"],
        &["kt", "kts", "ktm"],
    ),
    builtin("lua", SupportLang::Lua, &[], &["lua"]),
    extra(
        "make",
        Extra::Make,
        &["makefile", "mk"],
        &["mk", "mak", "make"],
        &["Makefile", "makefile", "GNUmakefile"],
    ),
    builtin(
        "markdown",
        SupportLang::Markdown,
        &["md"],
        &["md", "markdown"],
    ),
    builtin("nix", SupportLang::Nix, &[], &["nix"]),
    builtin("php", SupportLang::Php, &[], &["php"]),
    extra("protobuf", Extra::Protobuf, &["proto"], &["proto"], &[]),
    builtin(
        "python",
        SupportLang::Python,
        &["py", "python3"],
        &["py", "pyi", "py3"],
    ),
    extra("r", Extra::R, &["rlang"], &["r"], &[]),
    builtin(
        "ruby",
        SupportLang::Ruby,
        &["rb"],
        &["rb", "rbw", "gemspec"],
    ),
    builtin("rust", SupportLang::Rust, &["rs"], &["rs"]),
    builtin("scala", SupportLang::Scala, &[], &["scala", "sc", "sbt"]),
    builtin("solidity", SupportLang::Solidity, &["sol"], &["sol"]),
    extra("sql", Extra::Sql, &[], &["sql"], &[]),
    extra("svelte", Extra::Svelte, &[], &["svelte"], &[]),
    builtin("swift", SupportLang::Swift, &[], &["swift"]),
    extra("toml", Extra::Toml, &[], &["toml"], &[]),
    builtin("tsx", SupportLang::Tsx, &[], &["tsx"]),
    builtin(
        "typescript",
        SupportLang::TypeScript,
        &["ts"],
        &["ts", "mts", "cts"],
    ),
    extra("vue", Extra::Vue, &[], &["vue"], &[]),
    extra(
        "xml",
        Extra::Xml,
        &[],
        &["xml", "xsd", "xsl", "xslt", "svg"],
        &[],
    ),
    builtin("yaml", SupportLang::Yaml, &["yml"], &["yaml", "yml"]),
    builtin("zig", SupportLang::Zig, &[], &["zig"]),
];

impl Lang {
    /// Every language, by id.
    pub fn all() -> impl Iterator<Item = Lang> {
        TABLE.iter().map(|e| Lang(e.engine))
    }

    /// Every id, comma-separated, for error messages.
    pub fn id_list() -> String {
        TABLE.iter().map(|e| e.id).collect::<Vec<_>>().join(", ")
    }

    /// Look up an id or alias (case-insensitive). The error lists the ids.
    pub fn from_id(name: &str) -> Result<Lang, String> {
        let wanted = name.trim().to_ascii_lowercase();
        TABLE
            .iter()
            .find(|e| e.id == wanted || e.aliases.contains(&wanted.as_str()))
            .map(|e| Lang(e.engine))
            .ok_or_else(|| {
                format!(
                    "unknown language `{name}`; valid ids: {} (aliases such as py, rs, ts, js, c++ work too)",
                    Lang::id_list()
                )
            })
    }

    /// The language a file is inferred as from its name (`Makefile`) or
    /// extension (`.h` is C).
    pub fn from_path(path: &Path) -> Option<Lang> {
        TABLE.iter().find(|e| e.owns(path)).map(|e| Lang(e.engine))
    }

    /// Whether a file belongs to this language when the caller named it:
    /// its own names and extensions, plus `.h` for C++.
    pub fn claims(self, path: &Path) -> bool {
        self.entry().owns(path)
            || (self.is(SupportLang::Cpp)
                && path
                    .extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("h")))
    }

    pub fn id(self) -> &'static str {
        self.entry().id
    }

    /// Whether this is the given grammar of ast-grep-language.
    pub fn is(self, lang: SupportLang) -> bool {
        self.0 == Grammar::Builtin(lang)
    }

    /// The ast-grep-language grammar, when it is one of those.
    pub fn builtin(self) -> Option<SupportLang> {
        match self.0 {
            Grammar::Builtin(l) => Some(l),
            Grammar::Extra(_) => None,
        }
    }

    /// The extra grammar, when it is one of those.
    pub fn extra(self) -> Option<Extra> {
        match self.0 {
            Grammar::Builtin(_) => None,
            Grammar::Extra(e) => Some(e),
        }
    }

    fn entry(self) -> &'static Entry {
        TABLE
            .iter()
            .find(|e| e.engine == self.0)
            .expect("every Lang comes from TABLE")
    }
}

impl Entry {
    fn owns(&self, path: &Path) -> bool {
        if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
            if self.file_names.contains(&name) {
                return true;
            }
        }
        path.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|ext| self.extensions.iter().any(|x| x.eq_ignore_ascii_case(ext)))
    }
}

/// The engine sees every language through this one type: ast-grep-language's
/// grammars answer for themselves, the extra ones through their expando.
/// (`meta_var_char` and `extract_meta_var` keep their defaults, which read
/// the expando, as ast-grep-language's own grammars do.)
impl Language for Lang {
    fn pre_process_pattern<'q>(&self, query: &'q str) -> Cow<'q, str> {
        match self.0 {
            Grammar::Builtin(l) => l.pre_process_pattern(query),
            Grammar::Extra(e) => with_expando(e.expando(), query),
        }
    }

    fn expando_char(&self) -> char {
        match self.0 {
            Grammar::Builtin(l) => l.expando_char(),
            Grammar::Extra(e) => e.expando(),
        }
    }

    fn from_path<P: AsRef<Path>>(path: P) -> Option<Self> {
        Lang::from_path(path.as_ref())
    }

    fn kind_to_id(&self, kind: &str) -> u16 {
        match self.0 {
            Grammar::Builtin(l) => l.kind_to_id(kind),
            Grammar::Extra(e) => e.ts_language().id_for_node_kind(kind, true),
        }
    }

    fn field_to_id(&self, field: &str) -> Option<u16> {
        match self.0 {
            Grammar::Builtin(l) => l.field_to_id(field),
            Grammar::Extra(e) => e
                .ts_language()
                .field_id_for_name(field)
                .map(std::num::NonZero::get),
        }
    }

    fn build_pattern(&self, builder: &PatternBuilder<'_>) -> Result<Pattern, PatternError> {
        builder.build(|src| StrDoc::try_new(src, *self))
    }
}

impl LanguageExt for Lang {
    fn get_ts_language(&self) -> TSLanguage {
        match self.0 {
            Grammar::Builtin(l) => l.get_ts_language(),
            Grammar::Extra(e) => e.ts_language(),
        }
    }

    fn injectable_languages(&self) -> Option<&'static [&'static str]> {
        self.builtin().and_then(|l| l.injectable_languages())
    }

    fn extract_injections<L: LanguageExt>(
        &self,
        root: Node<'_, StrDoc<L>>,
    ) -> Vec<(String, Vec<TSRange>)> {
        match self.0 {
            Grammar::Builtin(l) => l.extract_injections(root),
            Grammar::Extra(_) => Vec::new(),
        }
    }
}

impl std::fmt::Display for Lang {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_grammar_has_an_id() {
        let builtin: Vec<SupportLang> = Lang::all().filter_map(Lang::builtin).collect();
        for l in SupportLang::all_langs() {
            assert!(builtin.contains(l), "{l:?} has no id");
        }
        assert_eq!(builtin.len(), SupportLang::all_langs().len());
        let extra: Vec<Extra> = Lang::all().filter_map(Lang::extra).collect();
        assert_eq!(extra, Extra::ALL);
        assert_eq!(Lang::all().count(), 40);
        assert_eq!(Lang::from_id("dart").unwrap().id(), "dart");
    }

    #[test]
    fn aliases_and_unknown_ids() {
        for (alias, id) in [
            ("py", "python"),
            ("rs", "rust"),
            ("ts", "typescript"),
            ("js", "javascript"),
            ("c++", "cpp"),
            ("Python", "python"),
            ("tsx", "tsx"),
        ] {
            assert_eq!(Lang::from_id(alias).unwrap().id(), id);
        }
        let err = Lang::from_id("cobol").unwrap_err();
        expect_test::expect!["unknown language `cobol`; valid ids: bash, c, cmake, cpp, csharp, css, dart, dockerfile, elixir, go, graphql, haskell, hcl, html, java, javascript, json, kotlin, lua, make, markdown, nix, php, protobuf, python, r, ruby, rust, scala, solidity, sql, svelte, swift, toml, tsx, typescript, vue, xml, yaml, zig (aliases such as py, rs, ts, js, c++ work too)"].assert_eq(&err);
    }

    #[test]
    fn extensions_and_headers() {
        let p = |s: &str| Lang::from_path(Path::new(s)).map(Lang::id);
        assert_eq!(p("a/b.py"), Some("python"));
        assert_eq!(p("x.rs"), Some("rust"));
        assert_eq!(p("x.tsx"), Some("tsx"));
        assert_eq!(p("x.h"), Some("c"));
        assert_eq!(p("x.hpp"), Some("cpp"));
        assert_eq!(p("src/Makefile"), Some("make"));
        assert_eq!(p("CMakeLists.txt"), Some("cmake"));
        assert_eq!(p("notes.txt"), None);
        assert_eq!(p("Dockerfile"), Some("dockerfile"));
        assert_eq!(p("x.R"), Some("r"));
        assert_eq!(p("Cargo.toml"), Some("toml"));
        let cpp = Lang::from_id("cpp").unwrap();
        assert!(cpp.claims(Path::new("x.h")) && cpp.claims(Path::new("x.cc")));
        assert!(!Lang::from_id("c").unwrap().claims(Path::new("x.hpp")));
    }
}
