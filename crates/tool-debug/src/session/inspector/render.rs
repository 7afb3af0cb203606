//! JavaScript values and breakpoint kinds in the words the DAP adapters
//! use: a value as one line (`[4, 8, 15]`, `{x: 1, y: 2}`, `"text"`), its
//! type, a logpoint's message as an expression, a hit condition as a test
//! on the hit count.

use super::cdp::{ObjectPreview, PropertyPreview, RemoteObject};

/// A value as one line, as a debugger's variables view shows it.
pub fn value(o: &RemoteObject) -> String {
    if let Some(u) = &o.unserializable_value {
        return u.clone();
    }
    match o.type_.as_str() {
        "undefined" => "undefined".into(),
        "string" => serde_json::to_string(o.value.as_ref().and_then(|v| v.as_str()).unwrap_or(""))
            .unwrap_or_default(),
        "number" | "boolean" => o.value.as_ref().map_or_else(
            || o.description.clone().unwrap_or_default(),
            std::string::ToString::to_string,
        ),
        "function" => function_head(o.description.as_deref().unwrap_or("function")),
        "object" if o.subtype.as_deref() == Some("null") => "null".into(),
        "object" => match &o.preview {
            Some(p) if shows_contents(o) => preview(o.description.as_deref(), p),
            _ => first_line(o.description.as_deref().unwrap_or("Object")),
        },
        _ => first_line(o.description.as_deref().unwrap_or(&o.type_)),
    }
}

/// The value's type: `number`, `string`, `Array`, `Point`, `null`, ….
pub fn type_name(o: &RemoteObject) -> String {
    match (o.type_.as_str(), o.subtype.as_deref()) {
        ("object", Some("null")) => "null".into(),
        ("object" | "function", _) => o.class_name.clone().unwrap_or_else(|| o.type_.clone()),
        (t, _) => t.to_string(),
    }
}

/// Whether the variables view can open the value.
pub fn expandable(o: &RemoteObject) -> bool {
    o.object_id.is_some() && o.type_ == "object" && o.subtype.as_deref() != Some("null")
}

/// Errors, dates and regular expressions read best as their description.
fn shows_contents(o: &RemoteObject) -> bool {
    !matches!(
        o.subtype.as_deref(),
        Some("error" | "date" | "regexp" | "promise" | "proxy")
    )
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

/// `function mean(xs) { … }` → `function mean(xs)`; a class or an arrow
/// likewise up to its body.
fn function_head(source: &str) -> String {
    let head = source.split('{').next().unwrap_or(source);
    let head = head.split("=>").next().unwrap_or(head).trim();
    let head = first_line(head);
    if head.starts_with("class ") || head.starts_with("function") || head.starts_with("async") {
        head
    } else {
        format!("ƒ {head}")
    }
}

fn preview(description: Option<&str>, p: &ObjectPreview) -> String {
    let more = if p.overflow { ", …" } else { "" };
    match p.subtype.as_deref() {
        Some("array" | "typedarray") => {
            let items: Vec<String> = p.properties.iter().map(preview_value).collect();
            format!("[{}{more}]", items.join(", "))
        }
        Some("map" | "set" | "weakmap" | "weakset") => {
            let items: Vec<String> = p
                .entries
                .iter()
                .map(|e| match &e.key {
                    Some(k) => format!("{} => {}", entry_preview(k), entry_preview(&e.value)),
                    None => entry_preview(&e.value),
                })
                .collect();
            format!(
                "{} {{{}{more}}}",
                description.unwrap_or("Map"),
                items.join(", ")
            )
        }
        _ => {
            let items: Vec<String> = p
                .properties
                .iter()
                .map(|x| format!("{}: {}", x.name, preview_value(x)))
                .collect();
            let body = format!("{{{}{more}}}", items.join(", "));
            match description {
                Some(d) if d != "Object" => format!("{d} {body}"),
                _ => body,
            }
        }
    }
}

fn preview_value(x: &PropertyPreview) -> String {
    let v = x.value.clone().unwrap_or_default();
    match x.type_.as_str() {
        "string" => serde_json::to_string(&v).unwrap_or(v),
        "object" if x.subtype.as_deref() == Some("null") => "null".into(),
        "function" => "ƒ".into(),
        _ => v,
    }
}

fn entry_preview(p: &ObjectPreview) -> String {
    match p.type_.as_str() {
        "string" => {
            serde_json::to_string(p.description.as_deref().unwrap_or("")).unwrap_or_default()
        }
        _ => p.description.clone().unwrap_or_default(),
    }
}

/// The name of the binding a logpoint calls with its message.
pub const LOG_BINDING: &str = "__agentToolsLog";

/// The name of the binding the program's `exit` event calls with its code.
pub const EXIT_BINDING: &str = "__agentToolsExit";

/// A logpoint as a breakpoint condition: the message (`i={i}`, its
/// `{expression}`s interpolated as a template literal's) handed to
/// [`LOG_BINDING`], and never a stop. A user condition guards it.
pub fn logpoint_condition(message: &str, condition: Option<&str>) -> String {
    let mut template = String::new();
    let mut chars = message.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '`' | '\\' => {
                template.push('\\');
                template.push(c);
            }
            '$' if chars.peek() == Some(&'{') => template.push_str("\\$"),
            '{' => {
                let mut expr = String::new();
                let mut depth = 1;
                for d in chars.by_ref() {
                    match d {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 {
                        break;
                    }
                    expr.push(d);
                }
                template.push_str(&format!("${{{expr}}}"));
            }
            _ => template.push(c),
        }
    }
    let log = format!("({LOG_BINDING}(`{template}`), false)");
    match condition {
        Some(c) => format!("({c}) && {log}"),
        None => log,
    }
}

pub use crate::breakpoint::{hit_test, HitTest};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(v: serde_json::Value) -> RemoteObject {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn values_read_as_one_line() {
        let rows = [
            (
                json!({"type": "number", "value": 23, "description": "23"}),
                "23",
                "number",
            ),
            (
                json!({"type": "string", "value": "a\"b"}),
                r#""a\"b""#,
                "string",
            ),
            (json!({"type": "undefined"}), "undefined", "undefined"),
            (
                json!({"type": "object", "subtype": "null", "value": null}),
                "null",
                "null",
            ),
            (
                json!({"type": "bigint", "unserializableValue": "10n", "description": "10n"}),
                "10n",
                "bigint",
            ),
            (
                json!({"type": "number", "unserializableValue": "NaN", "description": "NaN"}),
                "NaN",
                "number",
            ),
            (
                json!({"type": "object", "subtype": "array", "className": "Array", "description": "Array(3)", "objectId": "1",
                "preview": {"type": "object", "subtype": "array", "description": "Array(3)", "overflow": false, "properties": [
                    {"name": "0", "type": "number", "value": "4"}, {"name": "1", "type": "string", "value": "x"},
                    {"name": "2", "type": "object", "value": "Array(2)", "subtype": "array"}]}}),
                r#"[4, "x", Array(2)]"#,
                "Array",
            ),
            (
                json!({"type": "object", "className": "Point", "description": "Point", "objectId": "2",
                "preview": {"type": "object", "description": "Point", "overflow": true, "properties": [
                    {"name": "x", "type": "number", "value": "1"}, {"name": "f", "type": "function", "value": ""}]}}),
                "Point {x: 1, f: ƒ, …}",
                "Point",
            ),
            (
                json!({"type": "object", "subtype": "map", "className": "Map", "description": "Map(1)", "objectId": "3",
                "preview": {"type": "object", "subtype": "map", "description": "Map(1)", "overflow": false, "properties": [],
                    "entries": [{"key": {"type": "string", "description": "a"}, "value": {"type": "number", "description": "1"}}]}}),
                r#"Map(1) {"a" => 1}"#,
                "Map",
            ),
            (
                json!({"type": "object", "subtype": "error", "className": "TypeError", "objectId": "4",
                "description": "TypeError: boom\n    at f (/w/a.js:3:9)"}),
                "TypeError: boom",
                "TypeError",
            ),
            (
                json!({"type": "function", "className": "Function", "objectId": "5",
                "description": "function mean(xs) {\n  return 1;\n}"}),
                "function mean(xs)",
                "Function",
            ),
            (
                json!({"type": "function", "className": "Function", "objectId": "6",
                "description": "(a, b) => a + b"}),
                "ƒ (a, b)",
                "Function",
            ),
        ];
        for (raw, shown, ty) in rows {
            let o = object(raw);
            assert_eq!((value(&o).as_str(), type_name(&o).as_str()), (shown, ty));
        }
    }

    #[test]
    fn a_logpoint_message_becomes_a_template_that_never_stops() {
        assert_eq!(
            logpoint_condition("i={i} total={xs.slice(0, i).length}", None),
            "(__agentToolsLog(`i=${i} total=${xs.slice(0, i).length}`), false)"
        );
        // A `$` and a backtick are the message's own text; `{raw}` is
        // still an expression.
        assert_eq!(
            logpoint_condition("`${raw}` {o[\"k\"]}", Some("i > 2")),
            "(i > 2) && (__agentToolsLog(`\\`\\$${raw}\\` ${o[\"k\"]}`), false)"
        );
    }

    #[test]
    fn hit_conditions_count_as_debugpy_counts() {
        let stops = |c: &str| -> Vec<u64> {
            let t = hit_test(c).unwrap();
            (1..=9).filter(|h| t.stops(*h)).collect()
        };
        assert_eq!(stops("4"), [4]);
        assert_eq!(stops(">= 7"), [7, 8, 9]);
        assert_eq!(stops(">8"), [9]);
        assert_eq!(stops("% 3"), [3, 6, 9]);
        assert_eq!(stops("<3"), [1, 2]);
        expect_test::expect!["hit condition `often` is not a count: write 5 (the fifth hit), >= 5, > 5, < 5, <= 5 or % 5 (every fifth)"]
            .assert_eq(&hit_test("often").unwrap_err());
    }
}
