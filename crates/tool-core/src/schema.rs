//! Input schemas any JSON Schema validator accepts.
//!
//! schemars marks Rust's integer types with formats of its own (`uint32`,
//! `uint64`, `int32`, `double`, …) that are not JSON Schema's; strict
//! validators (Ajv in its default strict mode, the MCP SDKs') refuse or warn
//! about them. [`make_portable`] drops every format that is not one of JSON
//! Schema's own and says a numeric format's range with `minimum` and
//! `maximum` instead; [`portability_problems`] is the strict check the tests
//! run over every tool's schema.
//!
//! Invariant: a schema from [`crate::schema_for`] has no keyword outside
//! draft-07 and draft 2020-12 and no format outside their standard formats.

use serde_json::{Map, Value};

/// The keywords of JSON Schema draft-07 and draft 2020-12 (core, applicator,
/// validation, meta-data, format and content vocabularies).
pub const KEYWORDS: &[&str] = &[
    "$schema",
    "$id",
    "$ref",
    "$defs",
    "definitions",
    "$comment",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$vocabulary",
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "dependencies",
    "properties",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
    "items",
    "prefixItems",
    "additionalItems",
    "contains",
    "unevaluatedItems",
    "unevaluatedProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "title",
    "description",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "examples",
    "format",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// The formats JSON Schema defines (draft-07 and draft 2020-12).
pub const FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Keywords whose value is one schema.
const ONE_SCHEMA: &[&str] = &[
    "additionalProperties",
    "propertyNames",
    "items",
    "additionalItems",
    "contains",
    "unevaluatedItems",
    "unevaluatedProperties",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
];
/// Keywords whose value is a list of schemas.
const SCHEMA_LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];
/// Keywords whose value maps names to schemas.
const SCHEMA_MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Every subschema directly under `schema`, with the keyword path to it.
fn children(schema: &Map<String, Value>) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    for (key, value) in schema {
        let key = key.as_str();
        if SCHEMA_MAP.contains(&key) {
            if let Value::Object(m) = value {
                out.extend(m.iter().map(|(n, s)| (format!("{key}/{n}"), s)));
            }
        } else if let (true, Value::Array(list)) = (SCHEMA_LIST.contains(&key), value) {
            out.extend(
                list.iter()
                    .enumerate()
                    .map(|(i, s)| (format!("{key}/{i}"), s)),
            );
        } else if ONE_SCHEMA.contains(&key) && value.is_object() {
            out.push((key.to_string(), value));
        }
    }
    out
}

/// The range a numeric format of schemars stands for: (minimum, maximum).
/// 64-bit and pointer-sized maxima are left out: no client can send them
/// exactly, and nothing needs them said.
fn format_range(format: &str) -> Option<(Option<i64>, Option<i64>)> {
    Some(match format {
        "uint8" => (Some(0), Some(i64::from(u8::MAX))),
        "uint16" => (Some(0), Some(i64::from(u16::MAX))),
        "uint32" => (Some(0), Some(i64::from(u32::MAX))),
        "uint64" | "uint" | "uint128" => (Some(0), None),
        "int8" => (Some(i64::from(i8::MIN)), Some(i64::from(i8::MAX))),
        "int16" => (Some(i64::from(i16::MIN)), Some(i64::from(i16::MAX))),
        "int32" => (Some(i64::from(i32::MIN)), Some(i64::from(i32::MAX))),
        "int64" | "int" | "int128" | "float" | "double" => (None, None),
        _ => return None,
    })
}

/// Rewrite `schema` in place so that every format left is a standard one:
/// a numeric format of schemars becomes `minimum`/`maximum` (where not said
/// already), any other unknown format is dropped.
pub fn make_portable(schema: &mut Value) {
    let Value::Object(obj) = schema else { return };
    if let Some(Value::String(format)) = obj.get("format") {
        if !FORMATS.contains(&format.as_str()) {
            let range = format_range(format);
            obj.remove("format");
            if let Some((min, max)) = range {
                for (key, bound) in [("minimum", min), ("maximum", max)] {
                    if let Some(b) = bound {
                        obj.entry(key).or_insert(Value::from(b));
                    }
                }
            }
        }
    }
    for (key, value) in obj.iter_mut() {
        let key = key.as_str();
        if SCHEMA_MAP.contains(&key) {
            if let Value::Object(m) = value {
                m.values_mut().for_each(make_portable);
            }
        } else if let (true, Value::Array(list)) = (SCHEMA_LIST.contains(&key), &mut *value) {
            list.iter_mut().for_each(make_portable);
        } else if ONE_SCHEMA.contains(&key) {
            make_portable(value);
        }
    }
}

/// What a strict validator would refuse in `schema`: each keyword outside
/// [`KEYWORDS`] and each format outside [`FORMATS`], with the path to it.
/// Empty when the schema is portable.
pub fn portability_problems(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk_problems(schema, "#", &mut out);
    out
}

fn walk_problems(schema: &Value, at: &str, out: &mut Vec<String>) {
    let obj = match schema {
        Value::Object(obj) => obj,
        Value::Bool(_) => return,
        other => {
            out.push(format!(
                "{at}: a schema must be an object or a boolean, not {other}"
            ));
            return;
        }
    };
    for (key, value) in obj {
        if !KEYWORDS.contains(&key.as_str()) {
            out.push(format!("{at}: unknown keyword `{key}`"));
        }
        if key == "format" {
            match value.as_str() {
                Some(f) if FORMATS.contains(&f) => {}
                _ => out.push(format!("{at}: unknown format {value}")),
            }
        }
    }
    for (path, child) in children(obj) {
        walk_problems(child, &format!("{at}/{path}"), out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schemars_formats_become_ranges_and_the_strict_check_finds_the_rest() {
        let mut s = json!({
            "type": "object",
            "properties": {
                "line": {"type": "integer", "format": "uint32", "minimum": 0},
                "port": {"type": ["integer", "null"], "format": "uint16"},
                "count": {"anyOf": [{"type": "integer", "format": "uint64"}, {"type": "null"}]},
                "ratio": {"type": "number", "format": "double"},
                "when": {"type": "string", "format": "date-time"},
                "lines": {"type": "array", "items": {"type": "integer", "format": "int32"}},
                "odd": {"type": "string", "format": "semver"},
                "enum_with_format_data": {"enum": [{"format": "uint32"}]}
            }
        });
        assert_eq!(
            portability_problems(&s),
            vec![
                "#/properties/count/anyOf/0: unknown format \"uint64\"",
                "#/properties/line: unknown format \"uint32\"",
                "#/properties/lines/items: unknown format \"int32\"",
                "#/properties/odd: unknown format \"semver\"",
                "#/properties/port: unknown format \"uint16\"",
                "#/properties/ratio: unknown format \"double\"",
            ]
        );
        make_portable(&mut s);
        assert_eq!(portability_problems(&s), Vec::<String>::new());
        assert_eq!(
            s["properties"],
            json!({
                "line": {"type": "integer", "minimum": 0, "maximum": 4294967295u64},
                "port": {"type": ["integer", "null"], "minimum": 0, "maximum": 65535},
                "count": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]},
                "ratio": {"type": "number"},
                "when": {"type": "string", "format": "date-time"},
                "lines": {"type": "array", "items": {"type": "integer", "minimum": -2147483648, "maximum": 2147483647}},
                "odd": {"type": "string"},
                "enum_with_format_data": {"enum": [{"format": "uint32"}]}
            })
        );
        assert_eq!(
            portability_problems(
                &json!({"type": "object", "nullable": true, "properties": {"a": 3}})
            ),
            vec![
                "#: unknown keyword `nullable`",
                "#/properties/a: a schema must be an object or a boolean, not 3"
            ]
        );
    }
}
