//! The harness-author API of the ask and vibe families: typed builder
//! methods on `ToolsetBuilder`, the approval card gating a write tool of the
//! built Toolset, and switching vibe mode during the run.
#![cfg(all(feature = "ask", feature = "vibe"))]

use agent_tools::{BindingState, ToolsetBuilder};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tool_ask::{Answer, AskDesk, CardKind, ChannelPort, TargetSpace};
use tool_core::{
    async_trait, schema_for, Binding, CallContext, Registry, RegistryError, RunContext, Surface,
    Tier, Tool, ToolError, ToolOutput, ToolSpec,
};
use tool_vibe::{CommandBackend, Roster};

/// A write tool that creates a file, bound like any other family.
struct Touch(std::path::PathBuf);

#[derive(serde::Deserialize, tool_core::schemars::JsonSchema)]
#[schemars(crate = "tool_core::schemars")]
struct NoArgs {}

#[async_trait]
impl Tool for Touch {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("touch", "Create DONE.", Tier::Write, schema_for::<NoArgs>())
    }
    async fn call(
        &self,
        _cx: &CallContext,
        _a: serde_json::Value,
    ) -> Result<ToolOutput, ToolError> {
        tool_core::fs::write_own_file(&self.0.join("DONE"), b"")?;
        Ok(ToolOutput::text("created DONE"))
    }
    fn describe_call(&self, _a: &serde_json::Value) -> String {
        "create DONE".into()
    }
}

struct TouchBinding;
impl Binding for TouchBinding {
    fn resource(&self) -> &'static str {
        "toucher"
    }
    fn register(&self, run: &RunContext, registry: &Registry) -> Result<(), RegistryError> {
        registry.register(Arc::new(Touch(run.workspace.root().to_path_buf())))
    }
}

#[tokio::test]
async fn ask_with_approval_binds_ask_user_and_gates_write_tools_through_the_same_port() {
    let dir = tempfile::tempdir().unwrap();
    let (port, mut cards) = ChannelPort::new();
    let desk = AskDesk::new(Arc::new(port), TargetSpace::new("tab-1", "the chat tab"))
        .with_expiry(Duration::from_secs(10));
    let toolset = ToolsetBuilder::new(dir.path())
        .unwrap()
        .ask_with_approval(desk)
        .bind("touch", Box::new(TouchBinding))
        .build()
        .unwrap();
    assert!(matches!(toolset.state("ask"), BindingState::Bound { .. }));
    let registry = toolset.registry().clone();
    let call = tokio::spawn(async move {
        registry
            .call(Surface::FULL, "touch", json!({}), CallContext::new())
            .await
    });
    let pending = cards.recv().await.unwrap();
    assert!(matches!(pending.card.kind, CardKind::Approval { .. }));
    assert_eq!(pending.card.question, "May I create DONE?");
    assert_eq!(pending.card.target.id, "tab-1");
    pending.answer(Answer::choose(["deny"])).unwrap();
    let err = call.await.unwrap().unwrap_err();
    assert_eq!(err.kind(), "refused");
    assert!(!dir.path().join("DONE").exists());

    let registry = toolset.registry().clone();
    let call = tokio::spawn(async move {
        registry
            .call(
                Surface::READ_ONLY,
                "ask_user",
                json!({"question": "Ship it?", "options": [{"label": "yes"}, {"label": "no"}]}),
                CallContext::new(),
            )
            .await
    });
    let pending = cards.recv().await.unwrap();
    assert_eq!(
        pending.card.number, 2,
        "one numbering for both kinds of card"
    );
    pending.answer(Answer::choose(["yes"])).unwrap();
    assert_eq!(
        call.await.unwrap().unwrap().joined_text(),
        "ask_user #2 answered: yes"
    );
}

#[tokio::test]
async fn a_harness_switches_vibe_mode_during_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let script = test_support::fixtures::workspace_root().join("tests/fixtures/vibe/worker.sh");
    let backend = CommandBackend::new(dir.path()).fast(format!("sh {} fast", script.display()));
    let roster = Roster::new(Arc::new(backend)).off();
    let toolset = ToolsetBuilder::new(dir.path())
        .unwrap()
        .vibe(roster.clone())
        .build()
        .unwrap();
    let vibe_specs = || {
        toolset
            .registry()
            .specs(Surface::READ_ONLY)
            .into_iter()
            .filter(|s| s.name.starts_with("vibe_"))
            .count()
    };
    assert_eq!(vibe_specs(), 0, "bound, but vibe mode is off");
    roster.set_vibe_mode(true).await.unwrap();
    assert_eq!(vibe_specs(), 5);
    let reg = toolset.registry();
    reg.call(
        Surface::READ_ONLY,
        "vibe_spawn",
        json!({"brief": "sleep 30", "label": "long"}),
        CallContext::new(),
    )
    .await
    .unwrap();
    roster.set_vibe_mode(false).await.unwrap();
    assert_eq!(vibe_specs(), 0);
    assert_eq!(
        roster.snapshot("w1").unwrap().state,
        tool_vibe::WorkerState::Killed
    );
}
