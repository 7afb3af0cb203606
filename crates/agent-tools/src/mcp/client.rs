//! The connected client as the tools see it: the one peer of this stdio
//! session, whether it declared elicitation, and the [`Approver`] that asks
//! the person through it.

use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationSchema, JsonObject};
use rmcp::service::{Peer, RoleServer};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tool_core::{async_trait, Approval, ApprovalRequest, Approver};

/// The peer of this session, set once the client has initialized.
pub struct ClientLink {
    peer: RwLock<Option<Peer<RoleServer>>>,
    /// How long one elicitation may wait for the person.
    timeout: Duration,
}

/// Why an elicitation produced no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElicitFailure {
    /// The client did not declare the elicitation capability.
    Unsupported,
    /// The client is gone or answered with an error.
    Failed(String),
    /// No answer within the elicitation timeout.
    TimedOut(Duration),
}

impl ClientLink {
    pub fn new(timeout: Duration) -> Arc<Self> {
        Arc::new(ClientLink {
            peer: RwLock::new(None),
            timeout,
        })
    }

    pub fn set_peer(&self, peer: Peer<RoleServer>) {
        *self.peer.write().expect("peer lock") = Some(peer);
    }

    pub fn peer(&self) -> Option<Peer<RoleServer>> {
        self.peer.read().expect("peer lock").clone()
    }

    /// Whether the client declared form elicitation at initialize.
    pub fn supports_elicitation(&self) -> bool {
        self.peer()
            .and_then(|p| p.peer_info())
            .is_some_and(|info| info.capabilities.elicitation.is_some())
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Ask the person a form question, waiting at most `timeout`. `schema`
    /// is a flat JSON Schema object (primitive properties only, as MCP
    /// elicitation requires).
    pub async fn elicit(
        &self,
        message: String,
        schema: JsonObject,
        timeout: Duration,
    ) -> Result<ElicitResult, ElicitFailure> {
        if !self.supports_elicitation() {
            return Err(ElicitFailure::Unsupported);
        }
        let peer = self.peer().ok_or(ElicitFailure::Unsupported)?;
        let requested_schema = ElicitationSchema::from_json_schema(schema)
            .map_err(|e| ElicitFailure::Failed(format!("the question's form is not valid: {e}")))?;
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema,
        };
        match tokio::time::timeout(timeout, peer.create_elicitation(params)).await {
            Err(_) => Err(ElicitFailure::TimedOut(timeout)),
            Ok(Err(e)) => Err(ElicitFailure::Failed(e.to_string())),
            Ok(Ok(r)) => Ok(r),
        }
    }
}

/// Approves write and exec calls by asking the person through elicitation.
/// Fails closed: no elicitation, no answer or anything but "accept" denies.
pub struct ElicitationApprover {
    pub link: Arc<ClientLink>,
}

#[async_trait]
impl Approver for ElicitationApprover {
    async fn approve(&self, request: &ApprovalRequest) -> Approval {
        let message = format!(
            "Allow the {} tool `{}`?\n{}",
            request.tier, request.tool, request.summary
        );
        let mut schema = JsonObject::new();
        schema.insert("type".into(), "object".into());
        schema.insert(
            "properties".into(),
            serde_json::Value::Object(JsonObject::new()),
        );
        match self.link.elicit(message, schema, self.link.timeout()).await {
            Ok(r) => match r.action {
                rmcp::model::ElicitationAction::Accept => Approval::Approved,
                rmcp::model::ElicitationAction::Decline => Approval::Denied {
                    reason: "the person declined it".into(),
                },
                _ => Approval::Denied {
                    reason: "the user cancelled the approval request".into(),
                },
            },
            Err(ElicitFailure::Unsupported) => Approval::Denied {
                reason: "this host asks for approval through MCP elicitation, which the client does not support \
                         (set `approval = \"client\"` in the [mcp] config to rely on the client's own confirmation)"
                    .into(),
            },
            Err(ElicitFailure::TimedOut(t)) => Approval::Denied {
                reason: format!("nobody answered the approval request within {} s", t.as_secs()),
            },
            Err(ElicitFailure::Failed(e)) => Approval::Denied {
                reason: format!("the approval request failed: {e}"),
            },
        }
    }
}
