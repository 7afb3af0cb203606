//! The languages this crate searches: every grammar ast-grep-language ships,
//! under stable lower-case ids, with aliases and file extensions.
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

use ast_grep_language::SupportLang;
use std::path::Path;

/// One shipped grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lang(SupportLang);

struct Entry {
    id: &'static str,
    engine: SupportLang,
    /// Other names accepted for it (lower case).
    aliases: &'static [&'static str],
    /// File extensions inferred as this language (without the dot).
    extensions: &'static [&'static str],
}

const TABLE: &[Entry] = &[
    Entry {
        id: "bash",
        engine: SupportLang::Bash,
        aliases: &["sh", "shell"],
        extensions: &["bash", "sh", "zsh", "ksh", "bats"],
    },
    Entry {
        id: "c",
        engine: SupportLang::C,
        aliases: &[],
        extensions: &["c", "h"],
    },
    Entry {
        id: "cpp",
        engine: SupportLang::Cpp,
        aliases: &["c++", "cc", "cxx"],
        extensions: &["cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "cu", "ino"],
    },
    Entry {
        id: "csharp",
        engine: SupportLang::CSharp,
        aliases: &["cs", "c#"],
        extensions: &["cs"],
    },
    Entry {
        id: "css",
        engine: SupportLang::Css,
        aliases: &[],
        extensions: &["css", "scss"],
    },
    Entry {
        id: "dart",
        engine: SupportLang::Dart,
        aliases: &[],
        extensions: &["dart"],
    },
    Entry {
        id: "elixir",
        engine: SupportLang::Elixir,
        aliases: &["ex"],
        extensions: &["ex", "exs"],
    },
    Entry {
        id: "go",
        engine: SupportLang::Go,
        aliases: &["golang"],
        extensions: &["go"],
    },
    Entry {
        id: "haskell",
        engine: SupportLang::Haskell,
        aliases: &["hs"],
        extensions: &["hs"],
    },
    Entry {
        id: "hcl",
        engine: SupportLang::Hcl,
        aliases: &["terraform", "tf"],
        extensions: &["hcl", "tf", "tfvars", "nomad"],
    },
    Entry {
        id: "html",
        engine: SupportLang::Html,
        aliases: &["htm"],
        extensions: &["html", "htm", "xhtml"],
    },
    Entry {
        id: "java",
        engine: SupportLang::Java,
        aliases: &[],
        extensions: &["java"],
    },
    Entry {
        id: "javascript",
        engine: SupportLang::JavaScript,
        aliases: &["js", "jsx"],
        extensions: &["js", "mjs", "cjs", "jsx"],
    },
    Entry {
        id: "json",
        engine: SupportLang::Json,
        aliases: &[],
        extensions: &["json"],
    },
    Entry {
        id: "kotlin",
        engine: SupportLang::Kotlin,
        aliases: &["kt"],
        extensions: &["kt", "kts", "ktm"],
    },
    Entry {
        id: "lua",
        engine: SupportLang::Lua,
        aliases: &[],
        extensions: &["lua"],
    },
    Entry {
        id: "markdown",
        engine: SupportLang::Markdown,
        aliases: &["md"],
        extensions: &["md", "markdown"],
    },
    Entry {
        id: "nix",
        engine: SupportLang::Nix,
        aliases: &[],
        extensions: &["nix"],
    },
    Entry {
        id: "php",
        engine: SupportLang::Php,
        aliases: &[],
        extensions: &["php"],
    },
    Entry {
        id: "python",
        engine: SupportLang::Python,
        aliases: &["py", "python3"],
        extensions: &["py", "pyi", "py3"],
    },
    Entry {
        id: "ruby",
        engine: SupportLang::Ruby,
        aliases: &["rb"],
        extensions: &["rb", "rbw", "gemspec"],
    },
    Entry {
        id: "rust",
        engine: SupportLang::Rust,
        aliases: &["rs"],
        extensions: &["rs"],
    },
    Entry {
        id: "scala",
        engine: SupportLang::Scala,
        aliases: &[],
        extensions: &["scala", "sc", "sbt"],
    },
    Entry {
        id: "solidity",
        engine: SupportLang::Solidity,
        aliases: &["sol"],
        extensions: &["sol"],
    },
    Entry {
        id: "swift",
        engine: SupportLang::Swift,
        aliases: &[],
        extensions: &["swift"],
    },
    Entry {
        id: "tsx",
        engine: SupportLang::Tsx,
        aliases: &[],
        extensions: &["tsx"],
    },
    Entry {
        id: "typescript",
        engine: SupportLang::TypeScript,
        aliases: &["ts"],
        extensions: &["ts", "mts", "cts"],
    },
    Entry {
        id: "yaml",
        engine: SupportLang::Yaml,
        aliases: &["yml"],
        extensions: &["yaml", "yml"],
    },
    Entry {
        id: "zig",
        engine: SupportLang::Zig,
        aliases: &[],
        extensions: &["zig"],
    },
];

impl Lang {
    /// Every shipped language, by id.
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

    /// The language a file is inferred as from its extension (`.h` is C).
    pub fn from_path(path: &Path) -> Option<Lang> {
        let ext = path.extension()?.to_str()?;
        let ext = ext.to_ascii_lowercase();
        TABLE
            .iter()
            .find(|e| e.extensions.contains(&ext.as_str()))
            .map(|e| Lang(e.engine))
    }

    /// Whether a file belongs to this language when the caller named it:
    /// its own extensions, plus `.h` for C++.
    pub fn claims(self, path: &Path) -> bool {
        let Some(ext) = path.extension().and_then(|e| e.to_str()) else {
            return false;
        };
        let ext = ext.to_ascii_lowercase();
        self.entry().extensions.contains(&ext.as_str())
            || (self.0 == SupportLang::Cpp && ext == "h")
    }

    pub fn id(self) -> &'static str {
        self.entry().id
    }

    /// The engine's language value.
    pub fn engine(self) -> SupportLang {
        self.0
    }

    fn entry(self) -> &'static Entry {
        TABLE
            .iter()
            .find(|e| e.engine == self.0)
            .expect("every Lang comes from TABLE")
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
    fn every_engine_grammar_has_an_id() {
        let ours: Vec<SupportLang> = Lang::all().map(Lang::engine).collect();
        for l in SupportLang::all_langs() {
            assert!(ours.contains(l), "{l:?} has no id");
        }
        assert_eq!(ours.len(), SupportLang::all_langs().len());
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
        assert!(err.contains("unknown language `cobol`"), "{err}");
        assert!(
            err.contains("dart") && err.contains("python") && err.contains("zig"),
            "{err}"
        );
    }

    #[test]
    fn extensions_and_headers() {
        let p = |s: &str| Lang::from_path(Path::new(s)).map(Lang::id);
        assert_eq!(p("a/b.py"), Some("python"));
        assert_eq!(p("x.rs"), Some("rust"));
        assert_eq!(p("x.tsx"), Some("tsx"));
        assert_eq!(p("x.h"), Some("c"));
        assert_eq!(p("x.hpp"), Some("cpp"));
        assert_eq!(p("Makefile"), None);
        let cpp = Lang::from_id("cpp").unwrap();
        assert!(cpp.claims(Path::new("x.h")) && cpp.claims(Path::new("x.cc")));
        assert!(!Lang::from_id("c").unwrap().claims(Path::new("x.hpp")));
    }
}
