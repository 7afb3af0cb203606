//! `ask_user` over MCP elicitation: a [`QuestionPort`] whose cards are
//! elicitation forms in the client, and the binding that registers
//! `ask_user` only when the client declared elicitation (no elicitation, no
//! target space, no tool).
//!
//! A card becomes one form: a `choice` field (`choices` when several may be
//! chosen) holding the options, and an `answer` text field when free text is
//! allowed; a card of several questions becomes one form too, with one field
//! per question (keyed by its id) and a `_note` field for anything typed.
//! Question cards carry a `_discuss` box: ticked, nothing is chosen. A secret
//! is never asked here (the MCP specification forbids it). "accept" is an answer; "decline" is reported as declined (the
//! model proceeds on a stated assumption); "cancel" — the dialog dismissed —
//! is reported as cancelled by the user, an error with the same instruction.
//! Only a form that got no reaction at all within its time is expired.

use super::client::{ClientLink, ElicitFailure};
use crate::RunOptions;
use rmcp::model::{ElicitResult, ElicitationAction, JsonObject};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tool_ask::{Answer, AskBinding, AskDesk, Card, QuestionPort, TargetSpace};
use tool_core::{async_trait, Binding, Registry, RegistryError, RunContext};

/// The form field holding one chosen option.
pub const CHOICE: &str = "choice";
/// The form field holding the chosen options of a multi-select card.
pub const CHOICES: &str = "choices";
/// The form field holding a typed answer.
pub const ANSWER: &str = "answer";
/// The form field a multi-question card adds for anything else the person
/// wants to say (a typed answer to any question).
pub const NOTE: &str = "_note";
/// The form field that declines to choose and asks to talk it over.
pub const DISCUSS: &str = "_discuss";

/// Cards shown as MCP elicitation forms in the connected client.
pub struct ElicitationPort {
    link: Arc<ClientLink>,
}

impl ElicitationPort {
    pub fn new(link: Arc<ClientLink>) -> Self {
        ElicitationPort { link }
    }
}

fn option_title(o: &tool_ask::CardOption) -> String {
    match &o.description {
        Some(d) => format!("{} — {d}", o.label),
        None => o.label.clone(),
    }
}

/// The choices of a list of options, as `oneOf`/`anyOf` entries.
fn choice_list(options: &[tool_ask::CardOption]) -> Vec<Value> {
    options
        .iter()
        .map(|o| json!({"const": o.label, "title": option_title(o)}))
        .collect()
}

/// A choice field over `options`: one (a string) or several (an array); the
/// recommended option, if any, is the default.
fn choice_field(options: &[tool_ask::CardOption], multi: bool, title: &str) -> Value {
    let mut field = if multi {
        json!({"type": "array", "title": title, "items": {"anyOf": choice_list(options)}})
    } else {
        json!({"type": "string", "title": title, "oneOf": choice_list(options)})
    };
    if let Some(r) = options.iter().find(|o| o.recommended) {
        field["default"] = if multi {
            json!([r.label])
        } else {
            json!(r.label)
        };
    }
    field
}

fn discuss_field() -> Value {
    json!({"type": "boolean", "title": "Discuss instead of choosing", "default": false})
}

/// The form of a multi-question card: one field per question (keyed by its
/// id), a note for anything else, and the discuss box.
fn questions_form(card: &Card) -> (String, JsonObject) {
    let mut message = card.question.clone();
    if let Some(c) = &card.context {
        message.push_str(&format!("\n\nWhy: {c}"));
    }
    let mut properties = serde_json::Map::new();
    for q in &card.questions {
        let mut field = if q.options.is_empty() {
            json!({"type": "string", "title": q.header})
        } else {
            choice_field(&q.options, q.multi, &q.header)
        };
        field["description"] = json!(q.question);
        properties.insert(q.id.clone(), field);
    }
    properties.insert(
        NOTE.into(),
        json!({"type": "string", "title": "Anything else — or your own answer to any question"}),
    );
    properties.insert(DISCUSS.into(), discuss_field());
    let mut schema = JsonObject::new();
    schema.insert("type".into(), "object".into());
    schema.insert("properties".into(), Value::Object(properties));
    (message.trim().to_string(), schema)
}

/// The elicitation message and form of a card.
pub fn card_form(card: &Card) -> (String, JsonObject) {
    if !card.questions.is_empty() {
        return questions_form(card);
    }
    let mut message = card.question.clone();
    if let Some(c) = &card.context {
        message.push_str(&format!("\n\nWhy: {c}"));
    }
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    if !card.options.is_empty() {
        let title = if card.multi_select {
            "Choose one or more"
        } else {
            "Choose one"
        };
        properties.insert(
            (if card.multi_select { CHOICES } else { CHOICE }).into(),
            choice_field(&card.options, card.multi_select, title),
        );
        if !card.allow_free_text {
            required.push(if card.multi_select { CHOICES } else { CHOICE });
        }
    }
    if card.allow_free_text {
        let title = if card.options.is_empty() {
            "Your answer"
        } else {
            "Or type your own answer"
        };
        properties.insert(ANSWER.into(), json!({"type": "string", "title": title}));
        if card.options.is_empty() {
            required.push(ANSWER);
        }
    }
    if matches!(card.kind, tool_ask::CardKind::Question) {
        properties.insert(DISCUSS.into(), discuss_field());
    }
    let mut schema = JsonObject::new();
    schema.insert("type".into(), "object".into());
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), json!(required));
    }
    (message, schema)
}

/// The answer an accepted form carries. Blank text never counts.
pub fn accepted_answer(card: &Card, content: Option<&Value>) -> Answer {
    let field = |k: &str| content.and_then(|c| c.get(k));
    if field(DISCUSS).and_then(Value::as_bool) == Some(true) {
        return Answer::Discuss;
    }
    let typed = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(String::from)
    };
    if !card.questions.is_empty() {
        let answers = card
            .questions
            .iter()
            .map(|q| {
                let v = field(&q.id);
                let (choices, text) = match v {
                    Some(Value::Array(a)) => (
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(String::from)
                            .collect(),
                        None,
                    ),
                    _ if q.options.is_empty() => (Vec::new(), typed(v)),
                    _ => (typed(v).into_iter().collect(), None),
                };
                tool_ask::QuestionAnswer {
                    id: q.id.clone(),
                    choices,
                    text,
                }
            })
            .collect();
        return Answer::AnsweredAll {
            answers,
            note: typed(field(NOTE)),
        };
    }
    let mut choices: Vec<String> = Vec::new();
    if let Some(Value::String(s)) = field(CHOICE) {
        if !s.is_empty() {
            choices.push(s.clone());
        }
    }
    if let Some(Value::Array(a)) = field(CHOICES) {
        choices.extend(a.iter().filter_map(Value::as_str).map(String::from));
    }
    let text = field(ANSWER)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(String::from);
    if choices.is_empty() && text.is_none() {
        // Submitted an empty form: nothing was answered.
        return Answer::Skipped;
    }
    Answer::Answered { choices, text }
}

/// The answer an elicitation's outcome stands for.
pub fn elicited_answer(card: &Card, outcome: Result<ElicitResult, ElicitFailure>) -> Answer {
    match outcome {
        Ok(r) => match r.action {
            ElicitationAction::Accept => accepted_answer(card, r.content.as_ref()),
            ElicitationAction::Decline => Answer::Declined,
            // Cancel, and any action newer than this host: not an answer.
            _ => Answer::Cancelled,
        },
        Err(ElicitFailure::Unsupported) => {
            Answer::no_human("the MCP client does not support elicitation")
        }
        Err(ElicitFailure::TimedOut(_)) => Answer::Expired,
        Err(ElicitFailure::Failed(e)) => {
            Answer::no_human(format!("the MCP client did not show the question: {e}"))
        }
    }
}

#[async_trait]
impl QuestionPort for ElicitationPort {
    async fn ask(&self, card: &Card) -> Answer {
        if card.secret {
            return Answer::no_human(
                "MCP elicitation must not be used to ask for secrets (the MCP specification), so a \
                 secret cannot be asked through this client",
            );
        }
        let (message, schema) = card_form(card);
        elicited_answer(
            card,
            self.link.elicit(message, schema, card.expires_in).await,
        )
    }

    fn human_attached(&self) -> bool {
        self.link.supports_elicitation()
    }

    fn describe(&self) -> String {
        "MCP elicitation".into()
    }
}

/// The `ask` family under MCP: nothing is registered when the toolset is
/// built (the client is not connected yet); [`register_if_supported`] adds
/// `ask_user` once the client declared elicitation.
pub struct DeferredAskBinding;

impl Binding for DeferredAskBinding {
    fn resource(&self) -> &'static str {
        "question port (MCP elicitation) + target space (the client)"
    }

    fn register(&self, _run: &RunContext, _registry: &Registry) -> Result<(), RegistryError> {
        Ok(())
    }

    fn doctor(&self, _run: &RunContext) -> Vec<String> {
        vec!["ask_user: registered when the MCP client declares elicitation".into()]
    }
}

/// How long cards wait, from the `[ask]` config section (`expiry_seconds`);
/// a mistake there is named (`config FILE: [ask] …`).
pub fn card_expiry(opts: &RunOptions) -> Result<Duration, String> {
    crate::toolset::ask::expiry(opts).map_err(|e| opts.config.error(e))
}

/// Register `ask_user` with an elicitation port when the client supports
/// elicitation; otherwise there is nowhere to show a card and the tool stays
/// unregistered.
pub fn register_if_supported(
    link: &Arc<ClientLink>,
    registry: &Registry,
    run: &RunContext,
    expiry: Duration,
) -> Result<bool, RegistryError> {
    if !link.supports_elicitation() || registry.contains("ask_user") {
        return Ok(false);
    }
    let desk = AskDesk::new(
        Arc::new(ElicitationPort::new(link.clone())),
        TargetSpace::new("mcp-client", "the MCP client"),
    )
    .with_expiry(expiry);
    AskBinding::new(desk).register(run, registry)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tool_ask::{CardKind, CardOption};

    fn card(options: &[&str], free: bool, multi: bool) -> Card {
        Card {
            number: 1,
            kind: CardKind::Question,
            target: TargetSpace::new("t", "t"),
            question: "Which database?".into(),
            context: Some("the cache needs one".into()),
            options: options
                .iter()
                .map(|l| CardOption::described(*l, format!("about {l}")))
                .collect(),
            allow_free_text: free,
            multi_select: multi,
            questions: Vec::new(),
            secret: false,
            expires_in: Duration::from_secs(5),
        }
    }

    #[test]
    fn cards_become_valid_elicitation_forms() {
        let mut one = card(&["sqlite", "postgres"], false, false);
        one.options[1].recommended = true;
        let (message, schema) = card_form(&one);
        assert_eq!(message, "Which database?\n\nWhy: the cache needs one");
        assert_eq!(
            Value::Object(schema.clone()),
            json!({"type": "object", "required": ["choice"], "properties": {
                "choice": {
                    "type": "string", "title": "Choose one", "default": "postgres",
                    "oneOf": [{"const": "sqlite", "title": "sqlite — about sqlite"},
                              {"const": "postgres", "title": "postgres — about postgres"}]},
                "_discuss": {"type": "boolean", "title": "Discuss instead of choosing", "default": false}}})
        );
        rmcp::model::ElicitationSchema::from_json_schema(schema).unwrap();
        let (_, schema) = card_form(&card(&["a", "b"], true, true));
        assert!(!schema.contains_key("required"));
        rmcp::model::ElicitationSchema::from_json_schema(schema).unwrap();
        let (_, schema) = card_form(&card(&[], true, false));
        assert_eq!(schema["required"], json!(["answer"]));
        rmcp::model::ElicitationSchema::from_json_schema(schema).unwrap();
    }

    fn two_questions() -> Card {
        let mut c = card(&[], false, false);
        c.question = "Setting up the cache".into();
        c.context = None;
        let mut sqlite = CardOption::new("sqlite");
        sqlite.recommended = true;
        c.questions = vec![
            tool_ask::CardQuestion {
                id: "db".into(),
                header: "Database".into(),
                question: "Which database?".into(),
                options: vec![sqlite, CardOption::new("postgres")],
                multi: false,
            },
            tool_ask::CardQuestion {
                id: "name".into(),
                header: "Name".into(),
                question: "What is it called?".into(),
                options: vec![],
                multi: false,
            },
        ];
        c
    }

    #[test]
    fn a_card_of_several_questions_is_one_form_with_a_field_per_question() {
        let (message, schema) = card_form(&two_questions());
        assert_eq!(message, "Setting up the cache");
        assert_eq!(
            Value::Object(schema.clone()),
            json!({"type": "object", "properties": {
                "db": {"type": "string", "title": "Database", "description": "Which database?", "default": "sqlite",
                       "oneOf": [{"const": "sqlite", "title": "sqlite"}, {"const": "postgres", "title": "postgres"}]},
                "name": {"type": "string", "title": "Name", "description": "What is it called?"},
                "_note": {"type": "string", "title": "Anything else — or your own answer to any question"},
                "_discuss": {"type": "boolean", "title": "Discuss instead of choosing", "default": false}}})
        );
        rmcp::model::ElicitationSchema::from_json_schema(schema).unwrap();
        let c = two_questions();
        assert_eq!(
            accepted_answer(
                &c,
                Some(&json!({"db": "postgres", "name": "  ", "_note": "soon"}))
            ),
            Answer::AnsweredAll {
                answers: vec![
                    tool_ask::QuestionAnswer {
                        id: "db".into(),
                        choices: vec!["postgres".into()],
                        text: None
                    },
                    tool_ask::QuestionAnswer {
                        id: "name".into(),
                        choices: vec![],
                        text: None
                    },
                ],
                note: Some("soon".into()),
            }
        );
        assert_eq!(
            accepted_answer(&c, Some(&json!({"db": "sqlite", "_discuss": true}))),
            Answer::Discuss
        );
    }

    #[test]
    fn decline_and_cancel_are_said_as_such_and_only_silence_expires() {
        let c = card(&["a"], false, false);
        let outcome = |action| elicited_answer(&c, Ok(ElicitResult::new(action)));
        assert_eq!(outcome(ElicitationAction::Decline), Answer::Declined);
        assert_eq!(outcome(ElicitationAction::Cancel), Answer::Cancelled);
        assert_eq!(
            elicited_answer(&c, Err(ElicitFailure::TimedOut(Duration::from_secs(3)))),
            Answer::Expired
        );
    }

    #[test]
    fn accepted_forms_become_answers() {
        let c = card(&["a", "b", "postgres"], true, true);
        assert_eq!(
            accepted_answer(&c, Some(&json!({"choice": "postgres"}))),
            Answer::choose(["postgres"])
        );
        assert_eq!(
            accepted_answer(
                &c,
                Some(&json!({"choices": ["a", "b"], "answer": " and c "}))
            ),
            Answer::Answered {
                choices: vec!["a".into(), "b".into()],
                text: Some("and c".into())
            }
        );
        assert_eq!(
            accepted_answer(&c, Some(&json!({"answer": "  "}))),
            Answer::Skipped
        );
        assert_eq!(accepted_answer(&c, Some(&json!({}))), Answer::Skipped);
        assert_eq!(accepted_answer(&c, None), Answer::Skipped);
        assert_eq!(
            accepted_answer(&c, Some(&json!({"_discuss": true}))),
            Answer::Discuss
        );
    }
}
