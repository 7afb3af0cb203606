//! ask_user and the approval gate through the channel port, the way an
//! embedding UI drives them: every outcome, every validation error, and a
//! write tool in the Registry gated by an approval card.

use expect_test::expect;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tool_ask::{
    Answer, AskBinding, AskDesk, CardKind, CardReceiver, ChannelPort, PendingCard, TargetSpace,
};
use tool_core::{
    async_trait, schema_for, Binding, CallContext, Registry, RunContext, Surface, Tier, Tool,
    ToolError, ToolOutput, ToolSpec, Workspace,
};

struct Run {
    registry: Registry,
    cards: CardReceiver,
    _dir: tempfile::TempDir,
}

fn run_with(expiry: Duration, approval: bool) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let (port, cards) = ChannelPort::new();
    let desk = AskDesk::new(Arc::new(port), TargetSpace::new("conv-7", "conversation 7"))
        .with_expiry(expiry);
    let binding = AskBinding::new(desk);
    let registry = Registry::new();
    let run = RunContext {
        workspace: Workspace::new(dir.path()).unwrap(),
        conversation_id: Some("conv-7".into()),
    };
    binding.register(&run, &registry).unwrap();
    if approval {
        registry.set_approver(Some(Arc::new(binding.approver())));
    }
    Run {
        registry,
        cards,
        _dir: dir,
    }
}

fn run() -> Run {
    run_with(Duration::from_secs(10), false)
}

async fn ask(registry: &Registry, args: Value) -> Result<ToolOutput, ToolError> {
    registry
        .call(Surface::READ_ONLY, "ask_user", args, CallContext::new())
        .await
}

/// Ask in the background, take the card the UI receives, answer it.
async fn ask_and_answer(
    r: &mut Run,
    args: Value,
    answer: impl FnOnce(&PendingCard) -> Answer,
) -> (tool_ask::Card, Result<ToolOutput, ToolError>) {
    let registry = r.registry.clone();
    let call = tokio::spawn(async move { ask(&registry, args).await });
    let pending = tokio::time::timeout(Duration::from_secs(5), r.cards.recv())
        .await
        .expect("a card within 5 s")
        .expect("the port is open");
    let card = pending.card.clone();
    let a = answer(&pending);
    pending.answer(a).expect("the asker still waits");
    let result = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("the call settles once answered")
        .unwrap();
    (card, result)
}

fn colours() -> Value {
    json!({
        "question": "Which colour should the badge use?",
        "context": "the CSS variable is named after it",
        "options": [
            {"label": "red", "description": "matches the error banner"},
            {"label": "green"},
            {"label": "blue"}
        ]
    })
}

#[tokio::test]
async fn a_single_choice_comes_back_as_its_label() {
    let mut r = run();
    let (card, result) = ask_and_answer(&mut r, colours(), |_| Answer::choose(["green"])).await;
    assert_eq!(card.number, 1);
    assert_eq!(card.kind, CardKind::Question);
    assert_eq!(card.target.id, "conv-7");
    assert_eq!(card.question, "Which colour should the badge use?");
    assert_eq!(
        card.context.as_deref(),
        Some("the CSS variable is named after it")
    );
    assert_eq!(card.labels().collect::<Vec<_>>(), ["red", "green", "blue"]);
    assert_eq!(
        card.options[0].description.as_deref(),
        Some("matches the error banner")
    );
    assert!(!card.allow_free_text && !card.multi_select);
    assert_eq!(card.expires_in, Duration::from_secs(10));
    let out = result.unwrap();
    assert_eq!(out.joined_text(), "ask_user #1 answered: green");
    assert_eq!(
        out.structured.unwrap(),
        json!({"card": 1, "outcome": "answered", "choices": ["green"], "text": null})
    );
}

#[tokio::test]
async fn several_choices_come_back_in_card_order_and_numbers_increase() {
    let mut r = run();
    let mut args = colours();
    args["multi_select"] = json!(true);
    let (card, result) =
        ask_and_answer(&mut r, args.clone(), |_| Answer::choose(["blue", "red"])).await;
    assert!(card.multi_select);
    assert_eq!(
        result.unwrap().joined_text(),
        "ask_user #1 answered: red, blue"
    );
    let (card, _) = ask_and_answer(&mut r, args, |_| Answer::choose(["red"])).await;
    assert_eq!(card.number, 2, "cards are numbered per run, increasing");
}

#[tokio::test]
async fn free_text_comes_back_typed() {
    let mut r = run();
    let args = json!({"question": "What should the release be called?", "allow_free_text": true});
    let (card, result) = ask_and_answer(&mut r, args, |_| Answer::typed("Quiet Otter")).await;
    assert!(card.options.is_empty() && card.allow_free_text);
    let out = result.unwrap();
    assert_eq!(
        out.joined_text(),
        "ask_user #1 answered: (typed) Quiet Otter"
    );
    assert_eq!(out.structured.unwrap()["text"], "Quiet Otter");

    // Options and free text together.
    let mut args = colours();
    args["allow_free_text"] = json!(true);
    let (_, result) = ask_and_answer(&mut r, args, |_| Answer::Answered {
        choices: vec!["red".into()],
        text: Some("but darker".into()),
    })
    .await;
    assert_eq!(
        result.unwrap().joined_text(),
        "ask_user #2 answered: red and typed: but darker"
    );
}

#[tokio::test]
async fn skipping_is_success_with_the_instruction_to_proceed() {
    let mut r = run();
    let (_, result) = ask_and_answer(&mut r, colours(), |_| Answer::Skipped).await;
    let out = result.expect("a skipped card is a success");
    expect!["ask_user #1 skipped: the operator chose not to answer; proceed on an assumption you state in your reply, and do not ask this question again."].assert_eq(&out.joined_text());
    assert_eq!(out.structured.unwrap()["outcome"], "skipped");
}

#[tokio::test]
async fn declined_and_cancelled_say_so_not_expired() {
    let mut r = run();
    let (_, result) = ask_and_answer(&mut r, colours(), |_| Answer::Declined).await;
    let out = result.expect("a declined card is a success");
    expect_test::expect![[r#"ask_user #1 declined: the operator declined to answer; proceed on an assumption you state in your reply, and do not ask this question again."#]]
        .assert_eq(&out.joined_text());
    assert_eq!(out.structured.unwrap()["outcome"], "declined");

    let (_, result) = ask_and_answer(&mut r, colours(), |_| Answer::Cancelled).await;
    let err = result.expect_err("a cancelled card is an error");
    assert_eq!(err.kind(), "cancelled");
    expect_test::expect![[r#"cancelled: question #2 was cancelled by the user, who dismissed it without an answer; proceed on an assumption you state in your reply, and do not ask this question again"#]]
        .assert_eq(&err.to_string());
}

#[tokio::test]
async fn an_unanswered_card_expires_as_an_error_and_the_ui_sees_it_abandoned() {
    let mut r = run_with(Duration::from_millis(300), false);
    let registry = r.registry.clone();
    let started = Instant::now();
    let call = tokio::spawn(async move { ask(&registry, colours()).await });
    let mut pending = r.cards.recv().await.unwrap();
    // The UI does not answer; it learns when the asker gives up.
    tokio::time::timeout(Duration::from_secs(5), pending.abandoned())
        .await
        .expect("the card is abandoned when it expires");
    let err = call.await.unwrap().unwrap_err();
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(err.kind(), "timed_out");
    expect!["timed out: question #1 got no answer within 0.3 s and expired; proceed on an assumption you state in your reply, and do not ask this question again"].assert_eq(&err.to_string());
    assert!(
        pending.answer(Answer::Skipped).is_err(),
        "too late to answer"
    );
}

#[tokio::test]
async fn with_no_human_attached_the_call_fails_at_once() {
    let r = run();
    drop(r.cards); // the UI is gone
    let started = Instant::now();
    let err = ask(&r.registry, colours()).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(1), "never a wait");
    assert_eq!(err.kind(), "unavailable");
    expect!["not available here: no human can answer here (the harness UI has no human attached), so nothing was asked; proceed on an assumption you state in your reply, and do not ask this question again"].assert_eq(&err.to_string());
}

#[tokio::test]
async fn a_card_closed_without_an_answer_counts_as_no_human() {
    let mut r = run();
    let registry = r.registry.clone();
    let call = tokio::spawn(async move { ask(&registry, colours()).await });
    drop(r.cards.recv().await.unwrap()); // the UI dismissed the card
    let err = call.await.unwrap().unwrap_err();
    assert_eq!(err.kind(), "unavailable");
    expect!["not available here: no human can answer here (the UI closed the card without an answer), so nothing was asked; proceed on an assumption you state in your reply, and do not ask this question again"].assert_eq(&err.to_string());
}

#[tokio::test]
async fn an_answer_the_card_does_not_allow_is_refused() {
    let mut r = run();
    let (_, result) = ask_and_answer(&mut r, colours(), |_| Answer::choose(["red", "blue"])).await;
    expect!["failed: the question port (the harness UI) returned an answer card #1 does not accept: several options chosen, but the card allows only one; this is a bug in the harness's port, proceed on a stated assumption"].assert_eq(&result.unwrap_err().to_string());
    let (_, result) = ask_and_answer(&mut r, colours(), |_| Answer::choose(["mauve"])).await;
    expect!["failed: the question port (the harness UI) returned an answer card #2 does not accept: `mauve` is not one of the card's options; this is a bug in the harness's port, proceed on a stated assumption"].assert_eq(&result.unwrap_err().to_string());
    let (_, result) = ask_and_answer(&mut r, colours(), |_| Answer::typed("teal")).await;
    expect!["failed: the question port (the harness UI) returned an answer card #3 does not accept: typed text, but the card does not allow free text; this is a bug in the harness's port, proceed on a stated assumption"].assert_eq(&result.unwrap_err().to_string());
}

#[tokio::test]
async fn every_validation_error_is_answered_before_anything_is_shown() {
    let mut r = run();
    let cases: Vec<Value> = vec![
        json!({"question": "  ", "options": [{"label": "a"}]}),
        json!({"question": "Q?", "options": [{"label": "a"}, {"label": " "}]}),
        json!({"question": "Q?", "options": [{"label": "Yes"}, {"label": "yes"}]}),
        json!({"question": "Q?", "multi_select": true, "allow_free_text": true}),
        json!({"question": "Q?"}),
        json!({"options": [{"label": "a"}]}),
        json!({"question": "Q?", "options": [{"label": "a", "recommended": true}, {"label": "b", "recommended": true}]}),
        json!({"question": "Q?", "options": (0..13).map(|i| json!({"label": format!("o{i}")})).collect::<Vec<_>>()}),
        json!({"questions": (0..5).map(|i| json!({"id": format!("q{i}"), "header": "H", "question": "Q?"})).collect::<Vec<_>>()}),
        json!({"questions": [{"id": "a", "header": "H", "question": "Q?"}, {"id": "a", "header": "H", "question": "Q?"}]}),
        json!({"questions": [{"id": "a", "header": "A header that is far too long to be one", "question": "Q?"}]}),
        json!({"questions": [{"id": "a", "header": "H", "question": "Q?"}], "options": [{"label": "x"}]}),
        json!({"question": "Token?", "secret": true, "options": [{"label": "x"}]}),
        json!({"question": "Q?", "options": [{"label": "a", "colour": "red"}]}),
        json!({"question": "Q?", "timeout": 5}),
    ];
    let mut messages = Vec::new();
    for args in cases {
        let err = ask(&r.registry, args.clone()).await.unwrap_err();
        assert_eq!(err.kind(), "bad_arguments", "{args}");
        messages.push(err.to_string());
    }
    expect![[r#"
        [
            "bad arguments: `question` is empty; write the question the operator should answer (or give `questions`)",
            "bad arguments: `options[1].label` is empty; give every option a short label",
            "bad arguments: option label `yes` appears more than once; option labels must be unique",
            "bad arguments: `multi_select` needs `options` to choose from; add options or drop multi_select",
            "bad arguments: with no `options` the operator could only type an answer, but `allow_free_text` is false; add options or set allow_free_text: true",
            "bad arguments: `question` is empty; write the question the operator should answer (or give `questions`)",
            "bad arguments: `options` marks more than one option recommended; mark at most one",
            "bad arguments: `options` has 13; at most 12 options fit a card",
            "bad arguments: `questions` has 5; a card holds at most 4 — ask the rest on another card",
            "bad arguments: question id `a` appears more than once; ids must be unique",
            "bad arguments: `questions[0].header` must be 1–30 characters (a short title)",
            "bad arguments: with `questions`, give options per question (and `multi` there); `options`, `multi_select`, `allow_free_text` and `secret` belong to the single-question form (a typed answer is always possible on a question)",
            "bad arguments: `secret` asks for a typed answer that is masked and kept out of logs: drop the options and set allow_free_text: true",
            "bad arguments: argument `options[0].colour`: unknown field `colour`, expected one of `label`, `description`, `recommended`; check the tool's input schema",
            "bad arguments: argument `timeout`: unknown field `timeout`, expected one of `question`, `context`, `options`, `allow_free_text`, `multi_select`, `questions`, `secret`; check the tool's input schema",
        ]
    "#]].assert_debug_eq(&messages);
    assert!(r.cards.try_recv().is_err(), "no card was shown");
    // No number was spent on the refused drafts.
    let (card, _) = ask_and_answer(&mut r, colours(), |_| Answer::Skipped).await;
    assert_eq!(card.number, 1);
}

#[tokio::test]
async fn the_spec_is_read_tier_with_a_typed_schema() {
    let r = run();
    let specs = r.registry.specs(Surface::READ_ONLY);
    assert_eq!(specs.len(), 1);
    let spec = &specs[0];
    assert_eq!((spec.name.as_str(), spec.tier), ("ask_user", Tier::Read));
    assert!(spec
        .description
        .contains("never write the question as a chat message"));
    let props = &spec.input_schema["properties"];
    for key in [
        "question",
        "context",
        "options",
        "allow_free_text",
        "multi_select",
        "questions",
        "secret",
    ] {
        assert!(props.get(key).is_some(), "{key} in the schema");
    }
    // `question` or `questions`: the draft's validation says which is missing.
    assert_eq!(spec.input_schema.get("required"), None);
}

fn two_questions() -> Value {
    json!({
        "question": "Setting up the cache",
        "questions": [
            {"id": "db", "header": "Database", "question": "Which database?",
             "options": [{"label": "sqlite", "recommended": true}, {"label": "postgres"}]},
            {"id": "scope", "header": "Scope", "question": "What should it cache?",
             "options": [{"label": "pages"}, {"label": "queries"}, {"label": "sessions"}], "multi": true},
            {"id": "name", "header": "Name", "question": "What is it called?"}
        ]
    })
}

#[tokio::test]
async fn a_card_of_several_questions_is_answered_as_one() {
    let mut r = run();
    let (card, out) = ask_and_answer(&mut r, two_questions(), |p| {
        assert_eq!(p.card.questions.len(), 3);
        assert!(p.card.questions[0].options[0].recommended);
        Answer::AnsweredAll {
            answers: vec![
                tool_ask::QuestionAnswer {
                    id: "scope".into(),
                    choices: vec!["sessions".into(), "pages".into()],
                    text: None,
                },
                tool_ask::QuestionAnswer {
                    id: "db".into(),
                    choices: vec!["postgres".into()],
                    text: None,
                },
                tool_ask::QuestionAnswer {
                    id: "name".into(),
                    choices: vec![],
                    text: Some("   ".into()),
                },
            ],
            note: Some(" keep it small ".into()),
        }
    })
    .await;
    assert_eq!(card.number, 1);
    let out = out.unwrap();
    expect_test::expect![[r#"
        ask_user #1 answered:
        - db (Database): postgres
        - scope (Scope): pages, sessions
        - name (Name): (no answer)
        note: keep it small"#]]
    .assert_eq(&out.joined_text());

    // Nothing chosen and nothing typed is not an answer.
    let (_, out) = ask_and_answer(&mut r, two_questions(), |_| Answer::AnsweredAll {
        answers: vec![],
        note: Some(" ".into()),
    })
    .await;
    assert!(out
        .unwrap()
        .joined_text()
        .starts_with("ask_user #2 skipped"));
}

#[tokio::test]
async fn discuss_instead_is_its_own_outcome_and_never_approves() {
    let mut r = run();
    let (_, out) = ask_and_answer(&mut r, colours(), |_| Answer::Discuss).await;
    let out = out.unwrap();
    expect_test::expect!["ask_user #1: the operator chose to discuss this instead of choosing — nothing was chosen or approved. Do not act on any option: explain the choice and what you recommend in your reply, and end your turn so you can talk it over."]
        .assert_eq(&out.joined_text());
    assert_eq!(out.structured.unwrap()["outcome"], "discuss");
}

/// A real write tool: writes a file in the workspace through tool-core.
struct WriteNote {
    workspace: Workspace,
    writes: AtomicUsize,
}

#[derive(serde::Deserialize, tool_core::schemars::JsonSchema)]
#[schemars(crate = "tool_core::schemars")]
struct NoteArgs {
    text: String,
}

#[async_trait]
impl Tool for WriteNote {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "write_note",
            "Write NOTE.txt.",
            Tier::Write,
            schema_for::<NoteArgs>(),
        )
    }
    async fn call(&self, _cx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: NoteArgs = tool_core::parse_args(args)?;
        let path = self.workspace.resolve("NOTE.txt")?;
        tool_core::fs::write_own_file(&path, args.text.as_bytes())?;
        self.writes.fetch_add(1, Ordering::SeqCst);
        Ok(ToolOutput::text("wrote NOTE.txt"))
    }
    fn describe_call(&self, args: &Value) -> String {
        format!("write NOTE.txt with {}", args["text"])
    }
}

#[tokio::test]
async fn an_approval_card_gates_a_write_tool() {
    let mut r = run_with(Duration::from_secs(10), true);
    let workspace = Workspace::new(r._dir.path()).unwrap();
    let note = Arc::new(WriteNote {
        workspace: workspace.clone(),
        writes: AtomicUsize::new(0),
    });
    r.registry.register(note.clone()).unwrap();
    let call = |registry: Registry| {
        tokio::spawn(async move {
            registry
                .call(
                    Surface::FULL,
                    "write_note",
                    json!({"text": "hi"}),
                    CallContext::new(),
                )
                .await
        })
    };

    // Approved: the card says what would happen, and the write runs.
    let pending_call = call(r.registry.clone());
    let pending = r.cards.recv().await.unwrap();
    assert_eq!(
        pending.card.kind,
        CardKind::Approval {
            tool: "write_note".into(),
            tier: Tier::Write
        }
    );
    assert_eq!(pending.card.question, "May I write NOTE.txt with \"hi\"?");
    assert_eq!(
        pending.card.labels().collect::<Vec<_>>(),
        ["approve", "deny"]
    );
    assert_eq!(pending.card.number, 1);
    pending.answer(Answer::choose(["approve"])).unwrap();
    assert_eq!(
        pending_call.await.unwrap().unwrap().joined_text(),
        "wrote NOTE.txt"
    );
    assert_eq!(
        std::fs::read_to_string(r._dir.path().join("NOTE.txt")).unwrap(),
        "hi"
    );

    // Denied, skipped: refused, nothing written. Numbers continue.
    let mut refusals = Vec::new();
    for answer in [
        Answer::choose(["deny"]),
        Answer::Skipped,
        Answer::Declined,
        Answer::Cancelled,
        Answer::Discuss,
    ] {
        let pending_call = call(r.registry.clone());
        let pending = r.cards.recv().await.unwrap();
        pending.answer(answer).unwrap();
        let err = pending_call.await.unwrap().unwrap_err();
        assert_eq!(err.kind(), "refused");
        refusals.push(err.to_string());
    }
    expect![[r#"
        [
            "refused: the operator denied `write_note`: the operator chose deny on card #2; do not retry the same call, change the plan or ask the operator",
            "refused: the operator denied `write_note`: the operator skipped approval card #3, which is not a yes; do not retry the same call, change the plan or ask the operator",
            "refused: the operator denied `write_note`: the operator declined approval card #4; do not retry the same call, change the plan or ask the operator",
            "refused: the operator denied `write_note`: approval card #5 was cancelled by the user; do not retry the same call, change the plan or ask the operator",
            "refused: the operator denied `write_note`: the operator asked to discuss approval card #6 first, which is not a yes; do not retry the same call, change the plan or ask the operator",
        ]
    "#]].assert_debug_eq(&refusals);
    // ask_user shares the numbering.
    let (card, _) = ask_and_answer(&mut r, colours(), |_| Answer::Skipped).await;
    assert_eq!(card.number, 7);

    // No human: denied at once.
    drop(r.cards);
    let started = Instant::now();
    let err = r
        .registry
        .call(
            Surface::FULL,
            "write_note",
            json!({"text": "x"}),
            CallContext::new(),
        )
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(err.kind(), "refused");
    expect!["refused: the operator denied `write_note`: no human can approve it here (the harness UI has no human attached); do not retry the same call, change the plan or ask the operator"].assert_eq(&err.to_string());
    assert_eq!(
        note.writes.load(Ordering::SeqCst),
        1,
        "only the approved write ran"
    );
    assert_eq!(
        std::fs::read_to_string(r._dir.path().join("NOTE.txt")).unwrap(),
        "hi"
    );
}

#[tokio::test]
async fn an_expired_approval_card_is_a_denial() {
    let mut r = run_with(Duration::from_millis(200), true);
    r.registry
        .register(Arc::new(WriteNote {
            workspace: Workspace::new(r._dir.path()).unwrap(),
            writes: AtomicUsize::new(0),
        }))
        .unwrap();
    let registry = r.registry.clone();
    let call = tokio::spawn(async move {
        registry
            .call(
                Surface::FULL,
                "write_note",
                json!({"text": "x"}),
                CallContext::new(),
            )
            .await
    });
    let _pending = r.cards.recv().await.unwrap();
    let err = call.await.unwrap().unwrap_err();
    assert_eq!(err.kind(), "refused");
    expect!["refused: the operator denied `write_note`: approval card #1 got no answer within 0.2 s; do not retry the same call, change the plan or ask the operator"].assert_eq(&err.to_string());
    assert!(!r._dir.path().join("NOTE.txt").exists());
}
