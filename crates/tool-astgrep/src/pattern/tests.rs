//! The compiler over every language, and its refusals.

use super::*;

fn lang(id: &str) -> Lang {
    Lang::from_id(id).unwrap()
}

#[test]
fn every_language_compiles_a_simple_pattern() {
    let samples: &[(&str, &str)] = &[
        ("bash", "echo $X"),
        ("c", "foo($E)"),
        ("cpp", "foo($E)"),
        ("csharp", "Foo($E)"),
        ("css", "color: $C"),
        ("dart", "dispose($X)"),
        ("elixir", "foo($X)"),
        ("go", "foo($E)"),
        ("haskell", "foo $X"),
        ("hcl", "name = $X"),
        ("html", "<div>$X</div>"),
        ("java", "foo($E)"),
        ("javascript", "foo($E)"),
        ("json", "{\"a\": $X}"),
        ("kotlin", "foo($E)"),
        ("lua", "foo($E)"),
        ("markdown", "# Title"),
        ("nix", "foo $X"),
        ("php", "foo($E)"),
        ("python", "foo($E)"),
        ("ruby", "foo($E)"),
        ("rust", "foo($E)"),
        ("scala", "foo($E)"),
        ("solidity", "foo($E)"),
        ("swift", "foo($E)"),
        ("tsx", "foo($E)"),
        ("typescript", "foo($E)"),
        ("yaml", "a: $X"),
        ("zig", "foo($E)"),
        ("cmake", "add_executable($$$A)"),
        ("dockerfile", "FROM $I"),
        ("graphql", "$F: String"),
        ("make", "$V = $X"),
        ("protobuf", "rpc $R($A) returns ($B);"),
        ("r", "mean($X)"),
        ("sql", "SELECT $$$C FROM $T"),
        ("svelte", "<p>$X</p>"),
        ("toml", "$K = $V"),
        ("vue", "<p>$X</p>"),
        ("xml", "<a>$X</a>"),
    ];
    assert_eq!(samples.len(), Lang::all().count());
    for (id, src) in samples {
        let c = compile(lang(id), src).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(c.lang.id(), *id);
    }
}

#[test]
fn dart_call_is_a_call_not_a_signature() {
    let c = compile(lang("dart"), "dispose($X)").unwrap();
    assert_eq!(c.context, ContextKind::Statement);
    assert_eq!(c.glue, ";");
    assert_eq!(c.single_vars.iter().collect::<Vec<_>>(), ["X"]);
    assert_eq!(c.required_literal.as_deref(), Some("dispose"));
    let c = compile(lang("dart"), "if ($X != null) $X.dispose()").unwrap();
    assert_eq!(c.required_literal.as_deref(), Some("dispose"));
}

#[test]
fn c_call_is_not_a_macro_type() {
    let c = compile(lang("c"), "foo($E)").unwrap();
    assert_eq!(c.context, ContextKind::Statement);
    assert_eq!(c.required_literal.as_deref(), Some("foo"));
}

#[test]
fn rust_signature_matches_any_body() {
    let c = compile(lang("rust"), "fn $NAME($$$ARGS) -> Result<$T, $E>").unwrap();
    assert_eq!(c.glue, " { $$$ }");
    assert_eq!(c.single_vars.iter().collect::<Vec<_>>(), ["E", "NAME", "T"]);
    assert_eq!(c.multi_vars.iter().collect::<Vec<_>>(), ["ARGS"]);
    assert_eq!(c.required_literal.as_deref(), Some("Result"));
}

#[test]
fn bad_patterns_are_refused_with_where_it_broke() {
    assert!(matches!(
        compile(lang("python"), "  "),
        Err(PatternError::Empty)
    ));
    assert!(matches!(
        compile(lang("python"), "$$$X"),
        Err(PatternError::OnlySequence(_))
    ));
    let err = compile(lang("python"), "foo(").unwrap_err().to_string();
    assert!(err.starts_with("unparseable pattern for python"), "{err}");
    assert!(
        err.contains("as a statement") && err.contains("as a class member"),
        "{err}"
    );
    let err = compile(lang("rust"), "let = ;").unwrap_err().to_string();
    expect_test::expect![[r#"
        unparseable pattern for rust: `let = ;` is not one complete piece of rust code in any context tried:
          - as a statement: unexpected `let =` at line 1, column 1 of the pattern
          - as an expression: a `identifier` is missing at line 1, column 6 of the pattern
          - as a class member: unexpected `let =` at line 1, column 1 of the pattern
          - as a declaration: unexpected `let =` at line 1, column 1 of the pattern
        Write the pattern as rust code that parses on its own (a statement, an expression, a class member or a declaration), with metavariables only where a name or an expression can stand; or check `language`."#]].assert_eq(&err);
}

#[test]
fn literals_skip_metavariables_and_anonymous_aliases() {
    let c = compile(lang("python"), "$X == $X").unwrap();
    assert_eq!(c.required_literal.as_deref(), Some("=="));
    let c = compile(lang("python"), "isinstance($X, $Y)").unwrap();
    assert_eq!(c.required_literal.as_deref(), Some("isinstance"));
    assert_eq!(c.other_literals, ["(", ")", ","]);
    let c = compile(lang("python"), "$X == None").unwrap();
    assert_eq!(c.required_literal.as_deref(), Some("None"));
    assert_eq!(c.other_literals, ["=="]);
    let c = compile(lang("python"), "$X").unwrap();
    assert_eq!(c.required_literal, None);
    assert!(c.other_literals.is_empty());
}

#[test]
fn only_a_name_captured_twice_compares_captures() {
    let compares = |pat: &str| compile(lang("python"), pat).unwrap().compares_captures;
    assert!(compares("$X == $X"));
    assert!(compares("foo($$$A, $$$A)"));
    assert!(!compares("isinstance($X, $Y)"));
    assert!(!compares("$_ == $_"));
    assert!(!compares("foo($$$)"));
}
