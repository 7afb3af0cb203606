//! Typed arguments: the schema the model sees is derived from the args type,
//! and a bad value is answered with an error naming the field.

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
    value
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
}
