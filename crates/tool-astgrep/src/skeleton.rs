//! The skeleton contexts a pattern fragment is parsed in, per language.
//!
//! A fragment parsed bare means something else than the user meant: at
//! Dart's top level `dispose(x)` is a function signature, in C `foo(x)` is a
//! macro type specifier. So each language has a ladder of concrete wrappers —
//! statement (a function body), expression (an initializer), class member (a
//! class body), declaration (the top level) — tried in that order; the
//! compiler takes the first one in which the fragment parses cleanly.
//!
//! A rung may also offer *glue*: text appended right after the fragment when
//! the bare fragment is incomplete there, e.g. the `;` a C statement needs, or
//! an any-body `{ $$$ }` so that a bare signature `fn $F() -> R` matches
//! functions with any body. Glue is tried in order, bare first.

use crate::catalog::Lang;
use crate::grammars::Extra;
use ast_grep_language::SupportLang as S;

/// Which kind of place a rung parses the fragment in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextKind {
    Statement,
    Expression,
    Member,
    Declaration,
    /// A clause that only exists inside a larger statement (`except`,
    /// `catch`, `elif`): the name says of what, e.g. "clause of a try
    /// statement".
    Clause(&'static str),
}

impl ContextKind {
    /// "a statement", "an expression", …
    pub fn with_article(self) -> String {
        match self {
            ContextKind::Expression => "an expression".into(),
            other => format!("a {}", other.name()),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ContextKind::Statement => "statement",
            ContextKind::Expression => "expression",
            ContextKind::Member => "class member",
            ContextKind::Declaration => "declaration",
            ContextKind::Clause(name) => name,
        }
    }
}

/// One rung of a language's ladder.
#[derive(Debug, Clone, Copy)]
pub struct Skeleton {
    pub kind: ContextKind,
    /// Source before the fragment.
    pub prefix: &'static str,
    /// Source after the fragment (and its glue).
    pub suffix: &'static str,
    /// Tried after the fragment, in order; `""` is the bare fragment.
    pub glues: &'static [&'static str],
    /// Put before every continuation line of a multi-line fragment, for
    /// languages where indentation is syntax.
    pub indent: &'static str,
}

const fn rung(
    kind: ContextKind,
    prefix: &'static str,
    suffix: &'static str,
    glues: &'static [&'static str],
) -> Skeleton {
    Skeleton {
        kind,
        prefix,
        suffix,
        glues,
        indent: "",
    }
}

use ContextKind::{Declaration as D, Expression as E, Member as M, Statement as St};

const BARE: &[&str] = &[""];
const SEMI: &[&str] = &["", ";"];
const SEMI_BODY: &[&str] = &["", ";", " { $$$ }"];
const BODY_SEMI: &[&str] = &["", " { $$$ }", ";"];
const BODY: &[&str] = &["", " { $$$ }"];
/// A brace-block statement: a bare header gets an any-body block before a
/// `;` is tried, so `if ($A)` means an `if` with any block, not `if ($A);`.
const ST_BODY_SEMI: &[&str] = &["", " { $$$ }", ";"];
/// A Python block header (`if $X:`, `def $F($$$A) -> None:`) gets an
/// any-body block; one written without its colon gets both.
const PY_BODY: &[&str] = &["", "\n    $$$", ":\n    $$$"];

const TRY_CLAUSE: ContextKind = ContextKind::Clause("clause of a try statement");
const IF_CLAUSE: ContextKind = ContextKind::Clause("clause of an if statement");

const C: &[Skeleton] = &[
    rung(St, "void __agent_fn(void) {\n", "\n}\n", ST_BODY_SEMI),
    rung(E, "void __agent_fn(void) { __agent_x = ", "; }\n", BARE),
    rung(
        IF_CLAUSE,
        "void __agent_fn(void) {\nif (1) {} ",
        "\n}\n",
        BODY,
    ),
    rung(M, "struct __agent_s {\n", "\n};\n", SEMI),
    rung(D, "", "\n", SEMI_BODY),
];

const CPP: &[Skeleton] = &[
    rung(St, "void __agent_fn() {\n", "\n}\n", ST_BODY_SEMI),
    rung(E, "void __agent_fn() { __agent_x = ", "; }\n", BARE),
    rung(TRY_CLAUSE, "void __agent_fn() {\ntry {} ", "\n}\n", BODY),
    rung(IF_CLAUSE, "void __agent_fn() {\nif (1) {} ", "\n}\n", BODY),
    rung(M, "class __agent_c {\n", "\n};\n", SEMI_BODY),
    rung(D, "", "\n", SEMI_BODY),
];

const CSHARP: &[Skeleton] = &[
    rung(
        St,
        "class __agent_c { void __agent_fn() {\n",
        "\n} }\n",
        ST_BODY_SEMI,
    ),
    rung(
        E,
        "class __agent_c { void __agent_fn() { var __agent_x = ",
        "; } }\n",
        BARE,
    ),
    rung(
        TRY_CLAUSE,
        "class __agent_c { void __agent_fn() {\ntry {} ",
        "\n} }\n",
        BODY,
    ),
    rung(
        IF_CLAUSE,
        "class __agent_c { void __agent_fn() {\nif (true) {} ",
        "\n} }\n",
        BODY,
    ),
    rung(M, "class __agent_c {\n", "\n}\n", SEMI_BODY),
    rung(D, "", "\n", SEMI_BODY),
];

const JAVA: &[Skeleton] = &[
    rung(
        St,
        "class __agent_c { void __agent_fn() {\n",
        "\n} }\n",
        ST_BODY_SEMI,
    ),
    rung(E, "class __agent_c { Object __agent_x = ", "; }\n", BARE),
    rung(
        TRY_CLAUSE,
        "class __agent_c { void __agent_fn() {\ntry {} ",
        "\n} }\n",
        BODY,
    ),
    rung(
        IF_CLAUSE,
        "class __agent_c { void __agent_fn() {\nif (true) {} ",
        "\n} }\n",
        BODY,
    ),
    rung(M, "class __agent_c {\n", "\n}\n", SEMI_BODY),
    rung(D, "", "\n", SEMI_BODY),
];

const DART: &[Skeleton] = &[
    rung(St, "void __agent_fn() {\n", "\n}\n", ST_BODY_SEMI),
    rung(E, "var __agent_x = ", ";\n", BARE),
    rung(TRY_CLAUSE, "void __agent_fn() {\ntry {} ", "\n}\n", BODY),
    rung(
        IF_CLAUSE,
        "void __agent_fn() {\nif (true) {} ",
        "\n}\n",
        BODY,
    ),
    rung(M, "class __agent_c {\n", "\n}\n", SEMI_BODY),
    rung(D, "", "\n", SEMI_BODY),
];

const JS: &[Skeleton] = &[
    rung(St, "function __agent_fn() {\n", "\n}\n", ST_BODY_SEMI),
    rung(E, "const __agent_x = ", ";\n", BARE),
    rung(
        TRY_CLAUSE,
        "function __agent_fn() {\ntry {} ",
        "\n}\n",
        BODY,
    ),
    rung(
        IF_CLAUSE,
        "function __agent_fn() {\nif (true) {} ",
        "\n}\n",
        BODY,
    ),
    rung(M, "class __agent_c {\n", "\n}\n", SEMI_BODY),
    rung(D, "", "\n", BODY),
];

const GO: &[Skeleton] = &[
    rung(St, "package __agent\nfunc __agent_fn() {\n", "\n}\n", BARE),
    rung(E, "package __agent\nvar __agent_x = ", "\n", BARE),
    rung(
        M,
        "package __agent\ntype __agent_t struct {\n",
        "\n}\n",
        BARE,
    ),
    rung(D, "package __agent\n", "\n", BODY),
];

const RUST: &[Skeleton] = &[
    rung(St, "fn __agent_fn() {\n", "\n}\n", BODY_SEMI),
    rung(E, "fn __agent_fn() { let __agent_x = ", "; }\n", BARE),
    rung(M, "impl __AgentS {\n", "\n}\n", BODY_SEMI),
    rung(D, "", "\n", BODY_SEMI),
];

const KOTLIN: &[Skeleton] = &[
    rung(St, "fun __agent_fn() {\n", "\n}\n", BARE),
    rung(E, "val __agent_x = ", "\n", BARE),
    rung(M, "class __AgentC {\n", "\n}\n", BODY),
    rung(D, "", "\n", BODY),
];

const SCALA: &[Skeleton] = &[
    rung(St, "def __agent_fn() = {\n", "\n}\n", BARE),
    rung(E, "val __agent_x = ", "\n", BARE),
    rung(M, "class __AgentC {\n", "\n}\n", BARE),
    rung(D, "", "\n", BARE),
];

const SWIFT: &[Skeleton] = &[
    rung(St, "func __agent_fn() {\n", "\n}\n", BARE),
    rung(E, "let __agent_x = ", "\n", BARE),
    rung(M, "class __AgentC {\n", "\n}\n", BODY),
    rung(D, "", "\n", BODY),
];

const PHP: &[Skeleton] = &[
    rung(
        St,
        "<?php\nfunction __agent_fn() {\n",
        "\n}\n",
        ST_BODY_SEMI,
    ),
    rung(E, "<?php\n$__agent_x = ", ";\n", BARE),
    rung(
        TRY_CLAUSE,
        "<?php\nfunction __agent_fn() {\ntry {} ",
        "\n}\n",
        BODY,
    ),
    rung(M, "<?php\nclass __agent_c {\n", "\n}\n", SEMI_BODY),
    rung(D, "<?php\n", "\n", SEMI_BODY),
];

const SOLIDITY: &[Skeleton] = &[
    rung(
        St,
        "contract __AgentC { function __agent_fn() public {\n",
        "\n} }\n",
        SEMI,
    ),
    rung(
        E,
        "contract __AgentC { function __agent_fn() public { uint __agent_x = ",
        "; } }\n",
        BARE,
    ),
    rung(M, "contract __AgentC {\n", "\n}\n", SEMI_BODY),
    rung(D, "", "\n", SEMI_BODY),
];

const ZIG: &[Skeleton] = &[
    rung(St, "fn __agent_fn() void {\n", "\n}\n", SEMI),
    rung(E, "const __agent_x = ", ";\n", BARE),
    rung(D, "", "\n", SEMI),
];

const PYTHON: &[Skeleton] = &[
    // Python's top level already is statement context.
    rung(St, "", "\n", PY_BODY),
    rung(E, "__agent_x = ", "\n", BARE),
    rung(TRY_CLAUSE, "try:\n    pass\n", "\n", PY_BODY),
    rung(IF_CLAUSE, "if __agent:\n    pass\n", "\n", PY_BODY),
    Skeleton {
        kind: M,
        prefix: "class __AgentC:\n    ",
        suffix: "\n",
        glues: BARE,
        indent: "    ",
    },
    // A bare header (`def $F($$$A)`) matches any body.
    rung(D, "", "\n", &["", ":\n    $$$"]),
];

const RUBY: &[Skeleton] = &[
    rung(St, "def __agent_fn\n", "\nend\n", BARE),
    rung(E, "__agent_x = ", "\n", BARE),
    rung(M, "class AgentC__\n", "\nend\n", BARE),
    rung(D, "", "\n", BARE),
];

const LUA: &[Skeleton] = &[
    rung(St, "function __agent_fn()\n", "\nend\n", BARE),
    rung(E, "local __agent_x = ", "\n", BARE),
    rung(D, "", "\n", BARE),
];

const ELIXIR: &[Skeleton] = &[
    rung(St, "", "\n", BARE),
    rung(E, "__agent_x = ", "\n", BARE),
];

const HASKELL: &[Skeleton] = &[
    rung(St, "__agent_fn = do\n  ", "\n", BARE),
    rung(E, "__agent_x = ", "\n", BARE),
    rung(D, "", "\n", BARE),
];

const BASH: &[Skeleton] = &[
    rung(St, "", "\n", BARE),
    rung(St, "__agent_fn() {\n", "\n}\n", BARE),
];

const HCL: &[Skeleton] = &[rung(D, "", "\n", BARE), rung(E, "__agent_x = ", "\n", BARE)];

const NIX: &[Skeleton] = &[
    rung(E, "", "\n", BARE),
    rung(E, "let __agent_x = ", "; in __agent_x\n", BARE),
];

const CSS: &[Skeleton] = &[
    rung(M, "__agent {\n", "\n}\n", SEMI),
    rung(D, "", "\n", BARE),
];

/// A pair (`"a": $X`) only exists inside an object.
const JSON: &[Skeleton] = &[rung(D, "", "\n", BARE), rung(M, "{\n", "\n}\n", BARE)];

const TOP_ONLY: &[Skeleton] = &[rung(D, "", "\n", BARE)];

/// The ladder for a language, tried in order.
pub fn ladder(lang: Lang) -> &'static [Skeleton] {
    let Some(builtin) = lang.builtin() else {
        return extra_ladder(lang);
    };
    match builtin {
        S::C => C,
        S::Cpp => CPP,
        S::CSharp => CSHARP,
        S::Java => JAVA,
        S::Dart => DART,
        S::JavaScript | S::TypeScript | S::Tsx => JS,
        S::Go => GO,
        S::Rust => RUST,
        S::Kotlin => KOTLIN,
        S::Scala => SCALA,
        S::Swift => SWIFT,
        S::Php => PHP,
        S::Solidity => SOLIDITY,
        S::Zig => ZIG,
        S::Python => PYTHON,
        S::Ruby => RUBY,
        S::Lua => LUA,
        S::Elixir => ELIXIR,
        S::Haskell => HASKELL,
        S::Bash => BASH,
        S::Hcl => HCL,
        S::Nix => NIX,
        S::Css => CSS,
        S::Json => JSON,
        S::Html | S::Yaml | S::Markdown => TOP_ONLY,
    }
}

const PROTOBUF: &[Skeleton] = &[
    rung(D, "syntax = \"proto3\";\n", "\n", BARE),
    rung(
        M,
        "syntax = \"proto3\";\nmessage __AgentM {\n",
        "\n}\n",
        BARE,
    ),
    rung(
        M,
        "syntax = \"proto3\";\nservice __AgentS {\n",
        "\n}\n",
        BARE,
    ),
];

const GRAPHQL: &[Skeleton] = &[
    rung(D, "", "\n", BARE),
    rung(M, "type __AgentT {\n", "\n}\n", BARE),
];

const SQL: &[Skeleton] = &[rung(St, "", ";\n", SEMI), rung(E, "SELECT ", ";\n", BARE)];

const R_LANG: &[Skeleton] = &[
    rung(St, "", "\n", BARE),
    rung(E, "__agent_x <- ", "\n", BARE),
];

/// The ladder of an extra grammar (see [`crate::grammars`]).
fn extra_ladder(lang: Lang) -> &'static [Skeleton] {
    match lang.extra() {
        Some(Extra::Protobuf) => PROTOBUF,
        Some(Extra::GraphQl) => GRAPHQL,
        Some(Extra::Sql) => SQL,
        Some(Extra::R) => R_LANG,
        _ => TOP_ONLY,
    }
}
