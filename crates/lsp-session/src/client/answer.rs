//! A server's answer to a typed request: decoded as the request's result
//! type when lsp-types can, else kept as sent.
//!
//! Real servers send shapes lsp-types 0.94 rejects: a `DocumentSymbol`
//! whose range lacks `character`, a hover whose `contents` object has only
//! `value`, a `WorkspaceSymbol` location as a bare string. The readers of
//! those answers were lenient before they were typed and stay so: each
//! reads the typed answer, or the raw one by the JSON rules it had before,
//! so a server's odd shape never turns a useful answer into an error.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// An answer read as `T`, or as sent when it is not a `T`.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer<T> {
    Typed(T),
    Raw(Value),
}

impl<T: DeserializeOwned> Answer<T> {
    /// `answer` decoded as `T`, else kept raw (the decode error logged).
    pub fn decode(method: &str, answer: Value) -> Answer<T> {
        match serde::Deserialize::deserialize(&answer) {
            Ok(typed) => Answer::Typed(typed),
            Err(error) => {
                tracing::debug!(method, %error, "answer not decoded; read from the raw JSON");
                Answer::Raw(answer)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Hover, HoverContents, MarkedString};
    use serde_json::json;

    #[test]
    fn an_answer_of_the_request_shape_is_typed_and_another_kept_raw() {
        let typed: Answer<Option<Hover>> =
            Answer::decode("textDocument/hover", json!({"contents": "doc"}));
        assert_eq!(
            typed,
            Answer::Typed(Some(Hover {
                contents: HoverContents::Scalar(MarkedString::String("doc".into())),
                range: None
            }))
        );
        assert_eq!(
            Answer::<Option<Hover>>::decode("textDocument/hover", Value::Null),
            Answer::Typed(None)
        );
        let odd = json!({"contents": {"value": "no kind"}});
        assert_eq!(
            Answer::<Option<Hover>>::decode("textDocument/hover", odd.clone()),
            Answer::Raw(odd)
        );
    }
}
