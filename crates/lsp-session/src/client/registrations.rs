//! The capabilities a server registered after `initialize`
//! (`client/registerCapability`), kept by registration id as LSP defines
//! them: a method stays offered while any of its registrations stands, and
//! a registration ends only when its own id is unregistered. pyright
//! registers `textDocument/diagnostic`, registers it again under a new id,
//! then unregisters the first: kept by method, pull diagnostics were lost.

use serde_json::Value;
use std::collections::HashMap;

/// The standing registrations: id → method.
#[derive(Debug, Default)]
pub(super) struct Registrations {
    by_id: HashMap<String, String>,
}

impl Registrations {
    /// Take a `client/registerCapability` request's params.
    pub(super) fn register(&mut self, params: &Value) {
        for r in list(params, "registrations") {
            let Some(method) = r.get("method").and_then(Value::as_str) else {
                continue;
            };
            // The id is required; one left out is keyed by its method.
            let id = r.get("id").and_then(Value::as_str).unwrap_or(method);
            self.by_id.insert(id.to_string(), method.to_string());
        }
    }

    /// Take a `client/unregisterCapability` request's params (LSP spells
    /// the list `unregisterations`; `unregistrations` is taken too).
    pub(super) fn unregister(&mut self, params: &Value) {
        let listed = list(params, "unregisterations").chain(list(params, "unregistrations"));
        for r in listed {
            let method = r.get("method").and_then(Value::as_str);
            match r.get("id").and_then(Value::as_str).or(method) {
                Some(id) => {
                    self.by_id.remove(id);
                }
                None => continue,
            }
        }
    }

    /// Whether some standing registration is for `method`.
    pub(super) fn offers(&self, method: &str) -> bool {
        self.by_id.values().any(|m| m == method)
    }
}

fn list<'a>(params: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    params
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::Registrations;
    use serde_json::json;

    const PULL: &str = "textDocument/diagnostic";

    fn reg(id: &str) -> serde_json::Value {
        json!({"registrations": [{"id": id, "method": PULL, "registerOptions": {}}]})
    }

    fn unreg(id: &str) -> serde_json::Value {
        json!({"unregisterations": [{"id": id, "method": PULL}]})
    }

    /// Each order of register, register again and unregister, as data:
    /// the steps and whether pull stands after each.
    #[test]
    fn a_method_stands_while_any_of_its_registrations_does() {
        let cases: &[&[(&str, &str, bool)]] = &[
            // pyright: a second registration, then the first withdrawn.
            &[("reg", "a", true), ("reg", "b", true), ("unreg", "a", true)],
            &[
                ("reg", "a", true),
                ("reg", "b", true),
                ("unreg", "b", true),
                ("unreg", "a", false),
            ],
            &[
                ("reg", "a", true),
                ("unreg", "a", false),
                ("reg", "b", true),
            ],
            // An unknown id withdraws nothing.
            &[("reg", "a", true), ("unreg", "zz", true)],
            // The same id twice is one registration.
            &[
                ("reg", "a", true),
                ("reg", "a", true),
                ("unreg", "a", false),
            ],
            &[("unreg", "a", false), ("reg", "a", true)],
        ];
        for steps in cases {
            let mut r = Registrations::default();
            for (i, (what, id, stands)) in steps.iter().enumerate() {
                match *what {
                    "reg" => r.register(&reg(id)),
                    _ => r.unregister(&unreg(id)),
                }
                assert_eq!(r.offers(PULL), *stands, "{steps:?}, after step {i}");
            }
        }
    }

    #[test]
    fn the_misspelt_list_name_is_taken_and_a_missing_id_keys_by_method() {
        let mut r = Registrations::default();
        r.register(&json!({"registrations": [{"method": PULL}]}));
        assert!(r.offers(PULL));
        r.unregister(&json!({"unregistrations": [{"method": PULL}]}));
        assert!(!r.offers(PULL));
    }
}
