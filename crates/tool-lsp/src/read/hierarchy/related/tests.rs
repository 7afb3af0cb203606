//! Hierarchy answers of each shape servers send, typed and raw, read to
//! exact related items.

use super::*;

fn range(line: u32, character: u32) -> Value {
    json!({"start": {"line": line, "character": character}, "end": {"line": line, "character": character + 3}})
}

fn item_json(name: &str, kind: u64, uri: &str, line: u32) -> Value {
    json!({"name": name, "kind": kind, "uri": uri, "range": range(line, 0),
           "selectionRange": range(line, 4), "data": {"id": 7}})
}

fn item(name: &str, kind: u64, path: &str, line: u32, character: u32) -> Item {
    Item {
        name: name.to_string(),
        kind: Some(kind),
        path: Some(PathBuf::from(path)),
        start: Some(Position::new(line, character)),
    }
}

fn related(item: Item, from_ranges: &[(u32, u32)]) -> Related {
    Related {
        item,
        from_ranges: from_ranges
            .iter()
            .map(|&(l, c)| (Some(l), Some(c)))
            .collect(),
    }
}

#[test]
fn call_answers_read_typed_and_raw_alike() {
    let incoming = json!([
        {"from": item_json("main", 12, "file:///w/main.go", 3), "fromRanges": [range(5, 2), range(6, 8)]},
        {"from": item_json("init", 12, "file:///w/init.go", 0), "fromRanges": []},
    ]);
    let decoded = Answer::decode("callHierarchy/incomingCalls", incoming.clone());
    assert!(matches!(decoded, Answer::Typed(_)));
    let expected = vec![
        related(item("main", 12, "/w/main.go", 3, 4), &[(5, 2), (6, 8)]),
        related(item("init", 12, "/w/init.go", 0, 4), &[]),
    ];
    assert_eq!(incoming_calls(&decoded), expected);
    assert_eq!(incoming_calls(&Answer::Raw(incoming)), expected);

    let outgoing =
        json!([{"to": item_json("helper", 6, "file:///w/h.go", 9), "fromRanges": [range(4, 1)]}]);
    let decoded = Answer::decode("callHierarchy/outgoingCalls", outgoing.clone());
    assert!(matches!(decoded, Answer::Typed(_)));
    let expected = vec![related(item("helper", 6, "/w/h.go", 9, 4), &[(4, 1)])];
    assert_eq!(outgoing_calls(&decoded), expected);
    assert_eq!(outgoing_calls(&Answer::Raw(outgoing)), expected);
    assert_eq!(
        outgoing_calls(&Answer::decode("callHierarchy/outgoingCalls", Value::Null)),
        vec![]
    );
}

#[test]
fn call_answers_lsp_types_rejects_read_as_before() {
    // No `kind`, a range without `character`, an element without `from`,
    // a URI that names no file.
    let odd = json!([
        {"from": {"name": "f", "uri": "file:///w/a.c", "selectionRange": {"start": {"line": 2}}},
         "fromRanges": [{"start": {"line": 7}}, range(8, 1)]},
        {"fromRanges": [range(1, 1)]},
        {"from": {"uri": "untitled:1", "range": range(0, 0)}, "fromRanges": []},
    ]);
    let decoded: Answer<Option<Vec<CallHierarchyIncomingCall>>> =
        Answer::decode("callHierarchy/incomingCalls", odd.clone());
    assert_eq!(decoded, Answer::Raw(odd));
    let f = Item {
        name: "f".into(),
        kind: None,
        path: Some(PathBuf::from("/w/a.c")),
        start: None,
    };
    let unnamed = Item {
        name: "?".into(),
        kind: None,
        path: None,
        start: Some(Position::new(0, 0)),
    };
    assert_eq!(
        incoming_calls(&decoded),
        vec![
            Related {
                item: f,
                from_ranges: vec![(Some(7), None), (Some(8), Some(1))]
            },
            Related {
                item: unnamed,
                from_ranges: vec![]
            },
        ]
    );
}

#[test]
fn type_answers_read_typed_and_raw_alike_and_tags_read_raw() {
    let types = json!([
        item_json("Base", 5, "file:///w/base.py", 1),
        item_json("Mixin", 11, "file:///w/m.py", 4)
    ]);
    let decoded = Answer::decode("typeHierarchy/supertypes", types.clone());
    assert!(matches!(decoded, Answer::Typed(_)));
    let expected = vec![
        related(item("Base", 5, "/w/base.py", 1, 4), &[]),
        related(item("Mixin", 11, "/w/m.py", 4, 4), &[]),
    ];
    assert_eq!(related_types(&decoded), expected);
    assert_eq!(related_types(&Answer::Raw(types)), expected);
    // LSP's `tags` list, which lsp-types 0.94 reads as a single tag.
    let mut tagged = item_json("Old", 5, "file:///w/old.py", 2);
    tagged["tags"] = json!([1]);
    let answer = json!([tagged]);
    let decoded: Answer<Option<Vec<TypeHierarchyItem>>> =
        Answer::decode("typeHierarchy/subtypes", answer.clone());
    assert_eq!(decoded, Answer::Raw(answer));
    assert_eq!(
        related_types(&decoded),
        vec![related(item("Old", 5, "/w/old.py", 2, 4), &[])]
    );
}

#[test]
fn the_follow_up_of_each_op_is_its_lsp_method() {
    assert_eq!(
        follow_method(Op::IncomingCalls),
        ("callHierarchy/incomingCalls", Some("from"))
    );
    assert_eq!(
        follow_method(Op::OutgoingCalls),
        ("callHierarchy/outgoingCalls", Some("to"))
    );
    assert_eq!(
        follow_method(Op::Supertypes),
        ("typeHierarchy/supertypes", None)
    );
    assert_eq!(
        follow_method(Op::Subtypes),
        ("typeHierarchy/subtypes", None)
    );
}
