//! Java values in words: primitives as Java prints them, strings quoted,
//! arrays by their first elements, boxed numbers by their value, enums by
//! their name, `Class` objects by the class they stand for, threads by
//! their name, other objects by their class and first fields; and the
//! children of an object (its instance fields, its superclasses' too) or
//! an array (its elements) when it is expanded.
//!
//! Invariant: rendering one value reads a bounded number of things from
//! the VM (a preview looks one level deep, at most [`PREVIEW_ITEMS`]
//! elements or fields), so a huge structure costs no more than a small one.

use super::commands::Field;
use super::wire::{JdwpClient, JdwpError, Value};

/// Elements or fields a preview shows.
const PREVIEW_ITEMS: usize = 10;

/// Children listed when an object or array is expanded.
pub const CHILDREN: usize = 100;

/// Characters of a string shown.
const STRING_CHARS: usize = 400;

/// What an expandable value opens to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expand {
    Object(u64),
    Array(u64),
}

/// One value as the model reads it.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub text: String,
    pub type_name: String,
    pub expand: Option<Expand>,
}

/// The Java name of a type signature: `int`, `String`, `int[]`,
/// `java.util.List` → `List` (the class's simple name, nested ones as
/// `Outer$Inner`).
pub fn type_name(signature: &str) -> String {
    if let Some(inner) = signature.strip_prefix('[') {
        return format!("{}[]", type_name(inner));
    }
    match signature {
        "I" => "int",
        "J" => "long",
        "Z" => "boolean",
        "B" => "byte",
        "C" => "char",
        "S" => "short",
        "F" => "float",
        "D" => "double",
        "V" => "void",
        _ => {
            let name = signature.trim_start_matches('L').trim_end_matches(';');
            return name.rsplit('/').next().unwrap_or(name).to_string();
        }
    }
    .to_string()
}

/// The dotted name of a class signature: `Ljava/lang/String;` →
/// `java.lang.String`.
pub fn class_name(signature: &str) -> String {
    signature
        .trim_start_matches('L')
        .trim_end_matches(';')
        .replace('/', ".")
}

/// A primitive as Java's `String.valueOf` prints it; `None` for references.
pub fn primitive(v: &Value) -> Option<String> {
    Some(match v.tag {
        b'Z' => (v.bits != 0).to_string(),
        b'B' => (v.bits as u8 as i8).to_string(),
        b'S' => (v.bits as u16 as i16).to_string(),
        b'C' => {
            let c = char::from_u32(v.bits as u32).unwrap_or('\u{fffd}');
            format!("'{}'", c.escape_default())
        }
        b'I' => (v.bits as u32 as i32).to_string(),
        b'J' => (v.bits as i64).to_string(),
        b'F' => java_double(f64::from(f32::from_bits(v.bits as u32)), true),
        b'D' => java_double(f64::from_bits(v.bits), false),
        b'V' => "void".to_string(),
        _ => return None,
    })
}

/// A floating-point number the way Java prints it: `17.0`, `0.5`,
/// `1.0E10`, `NaN`, `Infinity`.
fn java_double(x: f64, single: bool) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let magnitude = x.abs();
    if x == 0.0 || (1e-3..1e7).contains(&magnitude) {
        let text = if single {
            format!("{}", x as f32)
        } else {
            format!("{x}")
        };
        return if text.contains('.') {
            text
        } else {
            format!("{text}.0")
        };
    }
    let text = if single {
        format!("{:E}", x as f32)
    } else {
        format!("{x:E}")
    };
    // Rust writes `1E10`, Java `1.0E10`.
    match text.split_once('E') {
        Some((m, e)) if !m.contains('.') => format!("{m}.0E{e}"),
        _ => text,
    }
}

/// A string literal as Java writes it, cut at [`STRING_CHARS`].
fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for (i, c) in s.chars().enumerate() {
        if i == STRING_CHARS {
            out.push('…');
            break;
        }
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The instance fields of a class and its superclasses, the class's own
/// first.
pub async fn instance_fields(c: &JdwpClient, class: u64) -> Result<Vec<Field>, JdwpError> {
    let mut out = Vec::new();
    let mut class = class;
    // Bounded: a class chain is short, but a VM's answer is not trusted.
    for _ in 0..32 {
        if class == 0 {
            break;
        }
        out.extend(
            c.fields(class)
                .await?
                .into_iter()
                .filter(|f| f.mod_bits & 0x0008 == 0),
        );
        class = c.superclass(class).await.unwrap_or(0);
    }
    Ok(out)
}

/// Whether `signature` is a boxed primitive's class.
fn is_boxed(signature: &str) -> bool {
    matches!(
        signature,
        "Ljava/lang/Integer;"
            | "Ljava/lang/Long;"
            | "Ljava/lang/Short;"
            | "Ljava/lang/Byte;"
            | "Ljava/lang/Character;"
            | "Ljava/lang/Boolean;"
            | "Ljava/lang/Float;"
            | "Ljava/lang/Double;"
    )
}

/// `v` in words, with `declared` (its variable's signature) as its type
/// when it is null. `deep`: whether an object shows its first fields.
pub async fn render(
    c: &JdwpClient,
    v: &Value,
    declared: &str,
    deep: bool,
) -> Result<Rendered, JdwpError> {
    if let Some(text) = primitive(v) {
        return Ok(Rendered {
            text,
            type_name: type_name(&(v.tag as char).to_string()),
            expand: None,
        });
    }
    if v.bits == 0 {
        return Ok(Rendered {
            text: "null".into(),
            type_name: type_name(declared),
            expand: None,
        });
    }
    if v.tag == b's' {
        return Ok(Rendered {
            text: quoted(&c.string_value(v.bits).await?),
            type_name: "String".into(),
            expand: None,
        });
    }
    if v.tag == b'c' {
        // A `Class` object: the class it stands for.
        let reflected = c.reflected_type(v.bits).await?;
        return Ok(Rendered {
            text: format!("class {}", class_name(&c.signature(reflected).await?)),
            type_name: "Class".into(),
            expand: None,
        });
    }
    if v.tag == b't' {
        return Ok(Rendered {
            text: format!("Thread \"{}\"", c.thread_name(v.bits).await?),
            type_name: "Thread".into(),
            expand: Some(Expand::Object(v.bits)),
        });
    }
    let class = c.object_class(v.bits).await?;
    let signature = c.signature(class).await?;
    let type_name = type_name(&signature);
    if v.tag == b'[' {
        let n = c.array_length(v.bits).await?;
        let text = if deep {
            let shown = n.min(PREVIEW_ITEMS);
            let element = signature.get(1..).unwrap_or("");
            let mut items = Vec::new();
            for e in c.array_values(v.bits, 0, shown).await? {
                items.push(Box::pin(render(c, &e, element, false)).await?.text);
            }
            if n > shown {
                items.push(format!("… ({n} in all)"));
            }
            format!("[{}]", items.join(", "))
        } else {
            format!("{}[{n}]", type_name.trim_end_matches("[]"))
        };
        return Ok(Rendered {
            text,
            type_name,
            expand: (n > 0).then_some(Expand::Array(v.bits)),
        });
    }
    let fields = instance_fields(c, class).await?;
    if is_boxed(&signature) {
        if let Some(f) = fields.iter().find(|f| f.name == "value") {
            let value = c.object_values(v.bits, &[f.id]).await?;
            if let Some(text) = value.first().and_then(primitive) {
                return Ok(Rendered {
                    text,
                    type_name,
                    expand: None,
                });
            }
        }
    }
    let text = object_text(c, v.bits, &type_name, &fields, deep).await?;
    Ok(Rendered {
        text,
        type_name,
        expand: (!fields.is_empty()).then_some(Expand::Object(v.bits)),
    })
}

/// An object in words: an enum constant by its name, another object as
/// `Type{field=value, …}` with its first fields (deep) or its type alone.
async fn object_text(
    c: &JdwpClient,
    object: u64,
    type_name: &str,
    fields: &[Field],
    deep: bool,
) -> Result<String, JdwpError> {
    let is_enum = fields
        .iter()
        .any(|f| f.name == "ordinal" && f.signature == "I")
        && fields.iter().any(|f| f.name == "name");
    if is_enum {
        let name = fields.iter().find(|f| f.name == "name").expect("checked");
        if let Some(v) = c.object_values(object, &[name.id]).await?.first() {
            if v.tag == b's' && v.bits != 0 {
                return c.string_value(v.bits).await;
            }
        }
    }
    if !deep || fields.is_empty() {
        return Ok(type_name.to_string());
    }
    let shown = &fields[..fields.len().min(PREVIEW_ITEMS)];
    let ids: Vec<u64> = shown.iter().map(|f| f.id).collect();
    let values = c.object_values(object, &ids).await?;
    let mut items = Vec::new();
    for (f, v) in shown.iter().zip(&values) {
        let r = Box::pin(render(c, v, &f.signature, false)).await?;
        items.push(format!("{}={}", f.name, r.text));
    }
    if fields.len() > shown.len() {
        items.push("…".into());
    }
    Ok(format!("{type_name}{{{}}}", items.join(", ")))
}

/// The children of an expanded value: (name, value, declared signature).
pub async fn children(
    c: &JdwpClient,
    of: Expand,
) -> Result<Vec<(String, Value, String)>, JdwpError> {
    match of {
        Expand::Array(array) => {
            let n = c.array_length(array).await?.min(CHILDREN);
            let class = c.object_class(array).await?;
            let element = c.signature(class).await?.get(1..).unwrap_or("").to_string();
            Ok(c.array_values(array, 0, n)
                .await?
                .into_iter()
                .enumerate()
                .map(|(i, v)| (format!("[{i}]"), v, element.clone()))
                .collect())
        }
        Expand::Object(object) => {
            let class = c.object_class(object).await?;
            let fields = instance_fields(c, class).await?;
            let fields = &fields[..fields.len().min(CHILDREN)];
            let ids: Vec<u64> = fields.iter().map(|f| f.id).collect();
            let values = c.object_values(object, &ids).await?;
            Ok(fields
                .iter()
                .zip(values)
                .map(|(f, v)| (f.name.clone(), v, f.signature.clone()))
                .collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_as_java_prints_them() {
        let v = |tag: u8, bits: u64| primitive(&Value { tag, bits }).unwrap();
        assert_eq!(v(b'I', u64::from((-3i32).cast_unsigned())), "-3");
        assert_eq!(v(b'D', 17.0f64.to_bits()), "17.0");
        assert_eq!(
            v(b'D', 17.333_333_333_333_332f64.to_bits()),
            "17.333333333333332"
        );
        assert_eq!(v(b'D', 1e10f64.to_bits()), "1.0E10");
        assert_eq!(v(b'F', u64::from(0.5f32.to_bits())), "0.5");
        assert_eq!(v(b'Z', 1), "true");
        assert_eq!(v(b'C', u64::from('x')), "'x'");
        assert_eq!(v(b'J', u64::MAX), "-1");
        assert_eq!(type_name("[I"), "int[]");
        assert_eq!(type_name("Ljava/util/List;"), "List");
        assert_eq!(type_name("Lcom/x/Outer$Inner;"), "Outer$Inner");
        assert_eq!(
            class_name("Ljava/lang/IllegalStateException;"),
            "java.lang.IllegalStateException"
        );
        assert_eq!(quoted("a\"b\nc"), r#""a\"b\nc""#);
    }
}
