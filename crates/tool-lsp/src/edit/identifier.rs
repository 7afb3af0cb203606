//! Whether a new name is an identifier of the file's language, checked
//! before a rename is asked of the server: servers answer a bad name in
//! different ways (an error, an edit that breaks the code, or no edit at
//! all), so the name is judged here first, the same way for every server.
//!
//! The rules are data, one row per language family ([`RULES`]): which
//! characters may start and continue an identifier (Unicode where the
//! language allows it) and the reserved words. A language with no row (one
//! added through the catalog config) is left to its server.
//!
//! Invariant: a rule never refuses a name its language accepts as a plain
//! identifier; where the exact rule needs the language's own grammar (Go's
//! Unicode letter classes) the check is the looser approximation.

/// Which characters an identifier may be made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Chars {
    /// Unicode XID: starts with `_` or XID_Start, continues with
    /// XID_Continue (Python, Rust, C and C++).
    Xid,
    /// ECMAScript: as [`Chars::Xid`], plus `$` anywhere and the joiners
    /// U+200C and U+200D after the first character.
    EcmaScript,
    /// Go: starts with `_` or a letter, continues with letters, digits and
    /// `_` (Unicode letters and digits, approximated by the alphabetic and
    /// numeric properties).
    GoLetters,
    /// ASCII letters, digits, `_` and `$`, not starting with a digit (Dart).
    AsciiDollar,
}

impl Chars {
    fn starts(self, c: char) -> bool {
        match self {
            Chars::Xid => c == '_' || unicode_ident::is_xid_start(c),
            Chars::EcmaScript => c == '$' || c == '_' || unicode_ident::is_xid_start(c),
            Chars::GoLetters => c == '_' || c.is_alphabetic(),
            Chars::AsciiDollar => c == '_' || c == '$' || c.is_ascii_alphabetic(),
        }
    }

    fn continues(self, c: char) -> bool {
        match self {
            Chars::Xid => unicode_ident::is_xid_continue(c),
            Chars::EcmaScript => {
                c == '$' || c == '\u{200C}' || c == '\u{200D}' || unicode_ident::is_xid_continue(c)
            }
            Chars::GoLetters => c == '_' || c.is_alphanumeric(),
            Chars::AsciiDollar => c == '_' || c == '$' || c.is_ascii_alphanumeric(),
        }
    }
}

/// The identifier rule of one language family.
#[derive(Debug)]
pub(crate) struct Rule {
    /// The language as the model reads it.
    pub language: &'static str,
    /// The LSP language ids it covers (as the catalog maps extensions).
    pub language_ids: &'static [&'static str],
    pub chars: Chars,
    /// What may start one, in words.
    pub starts_with: &'static str,
    /// What it may contain, in words.
    pub made_of: &'static str,
    /// Words that are not identifiers.
    pub reserved: &'static [&'static str],
    /// Rust's raw identifiers: `r#` before any identifier but these.
    pub raw_prefix_except: Option<&'static [&'static str]>,
}

/// One row per language family of the built-in catalog.
pub(crate) const RULES: &[Rule] = &[
    Rule {
        language: "Python",
        language_ids: &["python"],
        chars: Chars::Xid,
        starts_with: "a letter or `_`",
        made_of: "letters, digits and `_`",
        reserved: &[
            "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
            "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
            "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise",
            "return", "try", "while", "with", "yield",
        ],
        raw_prefix_except: None,
    },
    Rule {
        language: "Rust",
        language_ids: &["rust"],
        chars: Chars::Xid,
        starts_with: "a letter or `_`",
        made_of: "letters, digits and `_`",
        // Strict and reserved keywords of every edition (`gen` only from
        // 2024 on, so not here), and `_`, which is no identifier.
        reserved: &[
            "_", "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else",
            "enum", "extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match",
            "mod", "move", "mut", "pub", "ref", "return", "self", "Self", "static", "struct",
            "super", "trait", "true", "type", "unsafe", "use", "where", "while", "abstract",
            "become", "box", "do", "final", "macro", "override", "priv", "try", "typeof",
            "unsized", "virtual", "yield",
        ],
        raw_prefix_except: Some(&["_", "crate", "self", "Self", "super"]),
    },
    Rule {
        language: "TypeScript/JavaScript",
        language_ids: &[
            "typescript",
            "typescriptreact",
            "javascript",
            "javascriptreact",
        ],
        chars: Chars::EcmaScript,
        starts_with: "a letter, `_` or `$`",
        made_of: "letters, digits, `_` and `$`",
        // None: a property may be named `class` or `default`, and a rename
        // of a property is a rename like any other.
        reserved: &[],
        raw_prefix_except: None,
    },
    Rule {
        language: "Java",
        language_ids: &["java"],
        // Java letters: Unicode letters, `_` and `$` (and currency signs,
        // which jdtls judges when they come).
        chars: Chars::EcmaScript,
        starts_with: "a letter, `_` or `$`",
        made_of: "letters, digits, `_` and `$`",
        reserved: &[
            "_",
            "abstract",
            "assert",
            "boolean",
            "break",
            "byte",
            "case",
            "catch",
            "char",
            "class",
            "const",
            "continue",
            "default",
            "do",
            "double",
            "else",
            "enum",
            "extends",
            "false",
            "final",
            "finally",
            "float",
            "for",
            "goto",
            "if",
            "implements",
            "import",
            "instanceof",
            "int",
            "interface",
            "long",
            "native",
            "new",
            "null",
            "package",
            "private",
            "protected",
            "public",
            "return",
            "short",
            "static",
            "strictfp",
            "super",
            "switch",
            "synchronized",
            "this",
            "throw",
            "throws",
            "transient",
            "true",
            "try",
            "void",
            "volatile",
            "while",
        ],
        raw_prefix_except: None,
    },
    Rule {
        language: "Go",
        language_ids: &["go"],
        chars: Chars::GoLetters,
        starts_with: "a letter or `_`",
        made_of: "letters, digits and `_`",
        reserved: &[
            "break",
            "case",
            "chan",
            "const",
            "continue",
            "default",
            "defer",
            "else",
            "fallthrough",
            "for",
            "func",
            "go",
            "goto",
            "if",
            "import",
            "interface",
            "map",
            "package",
            "range",
            "return",
            "select",
            "struct",
            "switch",
            "type",
            "var",
        ],
        raw_prefix_except: None,
    },
    Rule {
        language: "C",
        language_ids: &["c"],
        chars: Chars::Xid,
        starts_with: "a letter or `_`",
        made_of: "letters, digits and `_`",
        // C17 and C23.
        reserved: &[
            "auto",
            "break",
            "case",
            "char",
            "const",
            "continue",
            "default",
            "do",
            "double",
            "else",
            "enum",
            "extern",
            "float",
            "for",
            "goto",
            "if",
            "inline",
            "int",
            "long",
            "register",
            "restrict",
            "return",
            "short",
            "signed",
            "sizeof",
            "static",
            "struct",
            "switch",
            "typedef",
            "union",
            "unsigned",
            "void",
            "volatile",
            "while",
            "alignas",
            "alignof",
            "bool",
            "constexpr",
            "false",
            "nullptr",
            "static_assert",
            "thread_local",
            "true",
            "typeof",
            "typeof_unqual",
            "_Alignas",
            "_Alignof",
            "_Atomic",
            "_BitInt",
            "_Bool",
            "_Complex",
            "_Decimal128",
            "_Decimal32",
            "_Decimal64",
            "_Generic",
            "_Imaginary",
            "_Noreturn",
            "_Static_assert",
            "_Thread_local",
        ],
        raw_prefix_except: None,
    },
    Rule {
        language: "C++",
        language_ids: &["cpp"],
        chars: Chars::Xid,
        starts_with: "a letter or `_`",
        made_of: "letters, digits and `_`",
        reserved: &[
            "alignas",
            "alignof",
            "and",
            "and_eq",
            "asm",
            "auto",
            "bitand",
            "bitor",
            "bool",
            "break",
            "case",
            "catch",
            "char",
            "char8_t",
            "char16_t",
            "char32_t",
            "class",
            "compl",
            "concept",
            "const",
            "consteval",
            "constexpr",
            "constinit",
            "const_cast",
            "continue",
            "co_await",
            "co_return",
            "co_yield",
            "decltype",
            "default",
            "delete",
            "do",
            "double",
            "dynamic_cast",
            "else",
            "enum",
            "explicit",
            "export",
            "extern",
            "false",
            "float",
            "for",
            "friend",
            "goto",
            "if",
            "inline",
            "int",
            "long",
            "mutable",
            "namespace",
            "new",
            "noexcept",
            "not",
            "not_eq",
            "nullptr",
            "operator",
            "or",
            "or_eq",
            "private",
            "protected",
            "public",
            "register",
            "reinterpret_cast",
            "requires",
            "return",
            "short",
            "signed",
            "sizeof",
            "static",
            "static_assert",
            "static_cast",
            "struct",
            "switch",
            "template",
            "this",
            "thread_local",
            "throw",
            "true",
            "try",
            "typedef",
            "typeid",
            "typename",
            "union",
            "unsigned",
            "using",
            "virtual",
            "void",
            "volatile",
            "wchar_t",
            "while",
            "xor",
            "xor_eq",
        ],
        raw_prefix_except: None,
    },
    Rule {
        language: "Dart",
        language_ids: &["dart"],
        chars: Chars::AsciiDollar,
        starts_with: "an ASCII letter, `_` or `$`",
        made_of: "ASCII letters, digits, `_` and `$`",
        reserved: &[
            "assert", "break", "case", "catch", "class", "const", "continue", "default", "do",
            "else", "enum", "extends", "false", "final", "finally", "for", "if", "in", "is", "new",
            "null", "rethrow", "return", "super", "switch", "this", "throw", "true", "try", "var",
            "void", "while", "with",
        ],
        raw_prefix_except: None,
    },
];

/// The rule for an LSP language id, if there is one.
pub(crate) fn rule_for(language_id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.language_ids.contains(&language_id))
}

/// `Err(why)` when `name` is not an identifier under `rule`; `why` is a
/// sentence for the model.
pub(crate) fn check(rule: &Rule, name: &str) -> Result<(), String> {
    let not = |why: String| {
        Err(format!(
            "`{name}` is not a {} identifier: {why}",
            rule.language
        ))
    };
    let mut body = name;
    if let Some(except) = rule.raw_prefix_except {
        if let Some(rest) = name.strip_prefix("r#") {
            if except.contains(&rest) {
                return not(format!("`{rest}` cannot be a raw identifier"));
            }
            body = rest;
        }
    }
    let mut chars = body.chars();
    let Some(first) = chars.next() else {
        return not("it is empty".into());
    };
    if !rule.chars.starts(first) {
        return not(format!(
            "it starts with {}; an identifier starts with {}",
            shown(first),
            rule.starts_with
        ));
    }
    if let Some(bad) = chars.find(|&c| !rule.chars.continues(c)) {
        return not(format!(
            "it contains {}; an identifier is made of {} only",
            shown(bad),
            rule.made_of
        ));
    }
    if body.len() == name.len() && rule.reserved.contains(&name) {
        return not(format!("it is a reserved word in {}", rule.language));
    }
    Ok(())
}

/// A character as the model can see it: printable ones quoted, the rest
/// (space, controls) by code point.
fn shown(c: char) -> String {
    if c.is_whitespace() || c.is_control() {
        format!("U+{:04X}", c as u32)
    } else {
        format!("`{c}`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(language_id: &str, name: &str) -> String {
        match check(rule_for(language_id).unwrap(), name) {
            Ok(()) => "ok".into(),
            Err(why) => why,
        }
    }

    #[test]
    fn every_language_with_a_project_checker_has_a_rule() {
        // The languages of the original catalog (those with a project
        // checker) have a rule; a rename in any other language skips the
        // name check and lets its server judge the name.
        let catalog = crate::Catalog::with_config(&Default::default());
        let mut without: Vec<&str> = Vec::new();
        for entry in catalog.entries() {
            for language_id in entry.extensions.values() {
                if rule_for(language_id).is_none() {
                    assert!(
                        entry.checker.is_none(),
                        "no identifier rule for {language_id}"
                    );
                    without.push(language_id);
                }
            }
        }
        assert!(without.contains(&"yaml"), "{without:?}");
    }

    #[test]
    fn names_are_judged_by_their_language() {
        let cases = [
            ("python", "total_2"),
            ("python", "größe"),
            ("python", "1bad name"),
            ("python", "bad name"),
            ("python", "class"),
            ("python", "match"),
            ("rust", "r#match"),
            ("rust", "r#self"),
            ("rust", "_"),
            ("rust", "match"),
            ("rust", "naïve"),
            ("rust", "a-b"),
            ("typescript", "$el"),
            ("javascriptreact", "default"),
            ("typescript", "x\u{200D}y"),
            ("typescript", "@x"),
            ("go", "Größe"),
            ("go", "func"),
            ("go", "a.b"),
            ("c", "café"),
            ("c", "typeof"),
            ("cpp", "class"),
            ("cpp", "x\ty"),
            ("dart", "$name"),
            ("dart", "größe"),
        ];
        let got: Vec<String> = cases
            .iter()
            .map(|(l, n)| format!("{l} {n:?}: {}", verdict(l, n)))
            .collect();
        expect_test::expect![[r#"
            python "total_2": ok
            python "größe": ok
            python "1bad name": `1bad name` is not a Python identifier: it starts with `1`; an identifier starts with a letter or `_`
            python "bad name": `bad name` is not a Python identifier: it contains U+0020; an identifier is made of letters, digits and `_` only
            python "class": `class` is not a Python identifier: it is a reserved word in Python
            python "match": ok
            rust "r#match": ok
            rust "r#self": `r#self` is not a Rust identifier: `self` cannot be a raw identifier
            rust "_": `_` is not a Rust identifier: it is a reserved word in Rust
            rust "match": `match` is not a Rust identifier: it is a reserved word in Rust
            rust "naïve": ok
            rust "a-b": `a-b` is not a Rust identifier: it contains `-`; an identifier is made of letters, digits and `_` only
            typescript "$el": ok
            javascriptreact "default": ok
            typescript "x\u{200d}y": ok
            typescript "@x": `@x` is not a TypeScript/JavaScript identifier: it starts with `@`; an identifier starts with a letter, `_` or `$`
            go "Größe": ok
            go "func": `func` is not a Go identifier: it is a reserved word in Go
            go "a.b": `a.b` is not a Go identifier: it contains `.`; an identifier is made of letters, digits and `_` only
            c "café": ok
            c "typeof": `typeof` is not a C identifier: it is a reserved word in C
            cpp "class": `class` is not a C++ identifier: it is a reserved word in C++
            cpp "x\ty": `x	y` is not a C++ identifier: it contains U+0009; an identifier is made of letters, digits and `_` only
            dart "$name": ok
            dart "größe": `größe` is not a Dart identifier: it contains `ö`; an identifier is made of ASCII letters, digits, `_` and `$` only
        "#]]
        .assert_eq(&(got.join("\n") + "\n"));
    }
}
