//! Typed arguments: the schema the model sees is derived from the args type,
//! and a bad value is answered with an error naming the field.
//!
//! Arguments as real clients send them: several MCP clients send every
//! argument as a string (`"max_results": "1"`). [`coerce_to_schema`] takes a
//! string that is exactly an integer, a number or a boolean as one where the
//! schema wants that type and no string; any other string there is refused
//! by [`parse_args`], naming the argument, the expected type and the value
//! received. The [`crate::Registry`]
//! runs it on every call, before approval and before the tool reads its
//! arguments; the schema says so ([`LOOSE_SCALARS`]).

use crate::schema::make_portable;
use crate::ToolError;
use schemars::{generate::SchemaSettings, JsonSchema};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The JSON Schema of an args type, with subschemas inlined (several clients
/// do not follow `$ref`) and without the `$schema` and `title` keys.
pub fn schema_for<T: JsonSchema>() -> Value {
    let settings = SchemaSettings::draft07().with(|s| {
        s.inline_subschemas = true;
    });
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut value = schema.to_value();
    if let Some(obj) = value.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
        obj.remove("definitions");
        obj.remove("$defs");
        if !obj.contains_key("type") {
            obj.insert("type".into(), Value::String("object".into()));
        }
    }
    make_portable(&mut value);
    if wants_scalars(&value) {
        if let Some(obj) = value.as_object_mut() {
            let said = match obj.get("description").and_then(Value::as_str) {
                Some(d) if !d.is_empty() => format!("{d}\n\n{LOOSE_SCALARS}"),
                _ => LOOSE_SCALARS.to_string(),
            };
            obj.insert("description".into(), Value::String(said));
        }
    }
    value
}

/// What a schema with integer, number or boolean arguments says about
/// strings sent for them.
pub const LOOSE_SCALARS: &str =
    "Integer, number and boolean arguments may also be sent as a string \
     that is exactly one (\"5\", \"0.5\", \"true\").";

/// Whether any subschema of `schema` wants an integer, a number or a boolean.
fn wants_scalars(schema: &Value) -> bool {
    match schema {
        Value::Object(obj) => {
            let here = types_of(schema)
                .iter()
                .any(|t| ["integer", "number", "boolean"].contains(t));
            here || obj.iter().any(|(k, v)| {
                !["enum", "const", "default", "examples"].contains(&k.as_str()) && wants_scalars(v)
            })
        }
        Value::Array(list) => list.iter().any(wants_scalars),
        _ => false,
    }
}

/// The types a schema allows, its `anyOf`/`oneOf`/`allOf` branches included.
fn types_of(schema: &Value) -> Vec<&str> {
    let mut out = Vec::new();
    match schema.get("type") {
        Some(Value::String(t)) => out.push(t.as_str()),
        Some(Value::Array(ts)) => out.extend(ts.iter().filter_map(Value::as_str)),
        _ => {}
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            out.extend(branches.iter().flat_map(types_of));
        }
    }
    out
}

/// The schemas a value under `key` of an object may be read with, from every
/// branch of `schemas`.
fn property_schemas<'a>(schemas: &[&'a Value], key: &str) -> Vec<&'a Value> {
    let mut out = Vec::new();
    for s in schemas {
        if let Some(p) = s.get("properties").and_then(|p| p.get(key)) {
            out.push(p);
        } else if let Some(extra @ Value::Object(_)) = s.get("additionalProperties") {
            out.push(extra);
        }
        for k in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(branches)) = s.get(k) {
                let branches: Vec<&Value> = branches.iter().collect();
                out.extend(property_schemas(&branches, key));
            }
        }
    }
    out
}

/// The schemas an array's items may be read with.
fn item_schemas<'a>(schemas: &[&'a Value]) -> Vec<&'a Value> {
    let mut out = Vec::new();
    for s in schemas {
        if let Some(items @ Value::Object(_)) = s.get("items") {
            out.push(items);
        }
        for k in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(branches)) = s.get(k) {
                let branches: Vec<&Value> = branches.iter().collect();
                out.extend(item_schemas(&branches));
            }
        }
    }
    out
}

/// Take strings that are exactly an integer, a number or a boolean as one
/// where `schema` wants that type and no string. Any other value is left as
/// it is, for the args type to refuse naming the argument, the type it wants
/// and the value received ([`parse_args`]).
pub fn coerce_to_schema(schema: &Value, args: &mut Value) {
    coerce(&[schema], args);
}

fn coerce(schemas: &[&Value], value: &mut Value) {
    match value {
        Value::String(s) => {
            let types: Vec<&str> = schemas.iter().flat_map(|s| types_of(s)).collect();
            if types.is_empty() || types.contains(&"string") {
                return;
            }
            // Exactly a JSON number: serde_json would skip surrounding space.
            let number = (s.trim() == s)
                .then(|| serde_json::from_str::<serde_json::Number>(s).ok())
                .flatten();
            let taken = if let (true, Some(n)) = (
                types.contains(&"integer"),
                number.as_ref().filter(|n| n.is_i64() || n.is_u64()),
            ) {
                Some(Value::Number(n.clone()))
            } else if let (true, Some(n)) = (types.contains(&"number"), &number) {
                Some(Value::Number(n.clone()))
            } else if types.contains(&"boolean") && (s == "true" || s == "false") {
                Some(Value::Bool(s == "true"))
            } else {
                None
            };
            // Any other string is left for the args type, whose error names
            // the argument, the type it wants and the string received.
            if let Some(v) = taken {
                *value = v;
            }
        }
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                let inner = property_schemas(schemas, key);
                if !inner.is_empty() {
                    coerce(&inner, v);
                }
            }
        }
        Value::Array(list) => {
            let inner = item_schemas(schemas);
            if !inner.is_empty() {
                for v in list.iter_mut() {
                    coerce(&inner, v);
                }
            }
        }
        _ => {}
    }
}

/// Deserialize `args` into `T`; on failure the message names the field path
/// and what was expected.
pub fn parse_args<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    let args = if args.is_null() {
        Value::Object(Default::default())
    } else {
        args
    };
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        if path == "." || path.is_empty() {
            ToolError::BadArgs(format!("{inner}; check the tool's input schema"))
        } else {
            ToolError::BadArgs(format!(
                "argument `{path}`: {inner}; check the tool's input schema"
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Args {
        /// The file.
        file: String,
        line: u32,
        #[serde(default)]
        symbol: Option<String>,
    }

    #[test]
    fn schema_is_an_inline_object_with_field_docs() {
        let s = schema_for::<Args>();
        assert_eq!(s["type"], "object");
        assert_eq!(s["properties"]["file"]["description"], "The file.");
        assert_eq!(s["required"], json!(["file", "line"]));
        assert!(s.get("$schema").is_none());
    }

    #[test]
    fn bad_values_name_the_field() {
        let err = parse_args::<Args>(json!({"file": "a.py", "line": "seven"})).unwrap_err();
        let msg = err.to_string();
        expect_test::expect![[r#"bad arguments: argument `line`: invalid type: string "seven", expected u32; check the tool's input schema"#]].assert_eq(&msg);

        let err = parse_args::<Args>(json!({"file": "a.py"})).unwrap_err();
        expect_test::expect!["bad arguments: missing field `line`; check the tool's input schema"]
            .assert_eq(&err.to_string());

        let err = parse_args::<Args>(json!({"file": "a", "line": 1, "colum": 3})).unwrap_err();
        expect_test::expect!["bad arguments: argument `colum`: unknown field `colum`, expected one of `file`, `line`, `symbol`; check the tool's input schema"].assert_eq(&err.to_string());

        let ok = parse_args::<Args>(json!({"file": "a", "line": 2, "symbol": "x"})).unwrap();
        assert_eq!(
            (ok.file.as_str(), ok.line, ok.symbol.as_deref()),
            ("a", 2, Some("x"))
        );
    }

    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    struct Loose {
        line: u32,
        #[serde(default)]
        max: Option<u64>,
        #[serde(default)]
        ratio: Option<f64>,
        #[serde(default)]
        strict: bool,
        #[serde(default)]
        name: Option<String>,
        #[serde(default)]
        lines: Vec<i32>,
        #[serde(default)]
        inner: Option<Inner>,
    }

    #[derive(Debug, Deserialize, JsonSchema, PartialEq)]
    struct Inner {
        depth: u8,
    }

    fn loose(mut args: Value) -> Result<Value, String> {
        let schema = schema_for::<Loose>();
        coerce_to_schema(&schema, &mut args);
        parse_args::<Loose>(args.clone()).map_err(|e| e.to_string())?;
        Ok(args)
    }

    #[test]
    fn strings_that_are_exactly_a_scalar_are_taken_as_one() {
        assert_eq!(
            loose(
                json!({"line": "7", "max": "18446744073709551615", "ratio": "0.5",
                "strict": "true", "name": "12", "lines": ["-1", 2], "inner": {"depth": "3"}})
            ),
            Ok(
                json!({"line": 7, "max": 18446744073709551615u64, "ratio": 0.5,
                "strict": true, "name": "12", "lines": [-1, 2], "inner": {"depth": 3}})
            )
        );
        assert_eq!(
            loose(json!({"line": "1", "ratio": "2"})),
            Ok(json!({"line": 1, "ratio": 2}))
        );
        let refused = [
            json!({"line": "seven"}),
            json!({"line": " 7"}),
            json!({"line": "7.5"}),
            json!({"line": "+7"}),
            json!({"line": 1, "strict": "yes"}),
            json!({"line": 1, "ratio": "NaN"}),
            json!({"line": 1, "lines": [1, "two"]}),
            json!({"line": 1, "inner": {"depth": ""}}),
            json!({"line": "300000000000"}),
        ];
        let said: Vec<String> = refused.into_iter().map(|a| loose(a).unwrap_err()).collect();
        expect_test::expect![[r#"
            bad arguments: argument `line`: invalid type: string "seven", expected u32; check the tool's input schema
            bad arguments: argument `line`: invalid type: string " 7", expected u32; check the tool's input schema
            bad arguments: argument `line`: invalid type: string "7.5", expected u32; check the tool's input schema
            bad arguments: argument `line`: invalid type: string "+7", expected u32; check the tool's input schema
            bad arguments: argument `strict`: invalid type: string "yes", expected a boolean; check the tool's input schema
            bad arguments: argument `ratio`: invalid type: string "NaN", expected f64; check the tool's input schema
            bad arguments: argument `lines[1]`: invalid type: string "two", expected i32; check the tool's input schema
            bad arguments: argument `inner.depth`: invalid type: string "", expected u8; check the tool's input schema
            bad arguments: argument `line`: invalid value: integer `300000000000`, expected u32; check the tool's input schema
        "#]]
        .assert_eq(&(said.join("\n") + "\n"));
    }

    #[test]
    fn a_schema_with_scalars_says_strings_are_taken() {
        let s = schema_for::<Loose>();
        assert_eq!(s["description"], LOOSE_SCALARS);
        assert_eq!(
            s["properties"]["line"],
            json!({"type": "integer", "minimum": 0, "maximum": 4294967295u64})
        );
        assert_eq!(
            crate::schema::portability_problems(&s),
            Vec::<String>::new()
        );
        #[derive(Deserialize, JsonSchema)]
        /// Only text.
        struct Text {
            _t: String,
        }
        assert_eq!(schema_for::<Text>()["description"], "Only text.");
    }
}
