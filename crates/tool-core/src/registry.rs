//! The tools bound for one run: what each surface may see, and the one
//! dispatch path every call takes (model, CLI, MCP, the eval bridge).
//!
//! Invariants kept here:
//! - a tool the surface cannot see is refused with exactly the words of an
//!   unknown tool;
//! - a write or exec tool runs only after the [`Approver`] approved it, and no
//!   approver attached means denied (fail closed);
//! - calls to a tool that is not parallel-safe never overlap;
//! - a call's arguments are read through the tool's schema first
//!   ([`crate::coerce_to_schema`]): a string that is exactly the integer,
//!   number or boolean the schema wants is taken as one (any other string
//!   there is left for the tool's args type to refuse);
//! - the result of an outermost call carries the run's pending notices
//!   ([`NoticeBoard`]), once, after the tool's own content; a bridged call
//!   (made from inside another call) never takes them.

use crate::{CallContext, NoticeBoard, Surface, Tier, Tool, ToolError, ToolOutput, ToolSpec};
use async_trait::async_trait;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, RwLock};
use tracing::Instrument;

/// What the approver is asked.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    pub tool: String,
    pub tier: Tier,
    /// One line saying what the call would do.
    pub summary: String,
    pub args: Value,
}

/// The approver's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    Approved,
    Denied { reason: String },
}

/// Decides whether a write or exec call may run.
#[async_trait]
pub trait Approver: Send + Sync {
    async fn approve(&self, request: &ApprovalRequest) -> Approval;
}

/// Approves everything. For a person at a terminal who typed the call
/// themselves, and for hosts whose client confirms calls on its own.
#[derive(Debug, Default, Clone, Copy)]
pub struct AllowAll;

#[async_trait]
impl Approver for AllowAll {
    async fn approve(&self, _request: &ApprovalRequest) -> Approval {
        Approval::Approved
    }
}

/// Registering went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("a tool named `{0}` is already registered")]
    Duplicate(String),
    #[error("no tool named `{0}` is registered")]
    Missing(String),
}

struct Entry {
    tool: Arc<dyn Tool>,
    spec: ToolSpec,
    /// Held for the whole call of a tool that is not parallel-safe.
    serial: Arc<tokio::sync::Mutex<()>>,
}

/// A tool found for a call: the tool, its spec, its serial lock.
type Found = (Arc<dyn Tool>, ToolSpec, Arc<tokio::sync::Mutex<()>>);

#[derive(Default)]
struct Inner {
    tools: RwLock<BTreeMap<String, Entry>>,
    approver: RwLock<Option<Arc<dyn Approver>>>,
    notices: NoticeBoard,
}

/// One run's tools. Cheap to clone: clones share the same tools.
#[derive(Clone, Default)]
pub struct Registry {
    inner: Arc<Inner>,
}

/// A registry held without keeping its tools alive: for work that outlives
/// the call that started it (a background cell), which must not keep the
/// run's tools — and so itself — alive once the run drops them.
#[derive(Clone, Default)]
pub struct WeakRegistry {
    inner: std::sync::Weak<Inner>,
}

impl WeakRegistry {
    /// The registry, while anyone else still holds it.
    pub fn upgrade(&self) -> Option<Registry> {
        self.inner.upgrade().map(|inner| Registry { inner })
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("tools", &self.names())
            .finish_non_exhaustive()
    }
}

impl Registry {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn downgrade(&self) -> WeakRegistry {
        WeakRegistry {
            inner: Arc::downgrade(&self.inner),
        }
    }

    /// The run's notice board: post on it from a binding or a tool, and the
    /// next result of any tool carries the notice.
    pub fn notices(&self) -> NoticeBoard {
        self.inner.notices.clone()
    }

    /// Attach the approver asked before write and exec calls.
    pub fn set_approver(&self, approver: Option<Arc<dyn Approver>>) {
        *self.inner.approver.write().expect("approver lock") = approver;
    }

    pub fn register(&self, tool: Arc<dyn Tool>) -> Result<(), RegistryError> {
        let spec = tool.spec();
        let mut tools = self.inner.tools.write().expect("tools lock");
        if tools.contains_key(&spec.name) {
            return Err(RegistryError::Duplicate(spec.name));
        }
        tracing::debug!(tool = %spec.name, tier = %spec.tier, "registered");
        tools.insert(
            spec.name.clone(),
            Entry {
                tool,
                spec,
                serial: Arc::default(),
            },
        );
        Ok(())
    }

    /// Replace a registered tool by a wrapper of it (the diagnostics-on-write
    /// decorator), keeping its place. `wrap` gets the current tool.
    pub fn wrap(
        &self,
        name: &str,
        wrap: impl FnOnce(Arc<dyn Tool>) -> Arc<dyn Tool>,
    ) -> Result<(), RegistryError> {
        let mut tools = self.inner.tools.write().expect("tools lock");
        let entry = tools
            .get_mut(name)
            .ok_or_else(|| RegistryError::Missing(name.to_string()))?;
        let wrapped = wrap(entry.tool.clone());
        entry.spec = wrapped.spec();
        entry.tool = wrapped;
        Ok(())
    }

    pub fn unregister(&self, name: &str) -> Result<Arc<dyn Tool>, RegistryError> {
        self.inner
            .tools
            .write()
            .expect("tools lock")
            .remove(name)
            .map(|e| e.tool)
            .ok_or_else(|| RegistryError::Missing(name.to_string()))
    }

    pub fn contains(&self, name: &str) -> bool {
        self.inner
            .tools
            .read()
            .expect("tools lock")
            .contains_key(name)
    }

    /// Every registered name, whatever its tier.
    pub fn names(&self) -> Vec<String> {
        self.inner
            .tools
            .read()
            .expect("tools lock")
            .keys()
            .cloned()
            .collect()
    }

    /// The specs this surface may see, by name.
    pub fn specs(&self, surface: Surface) -> Vec<ToolSpec> {
        self.inner
            .tools
            .read()
            .expect("tools lock")
            .values()
            .filter(|e| surface.allows(e.spec.tier))
            .map(|e| e.spec.clone())
            .collect()
    }

    fn lookup(&self, surface: Surface, name: &str) -> Result<Found, ToolError> {
        let tools = self.inner.tools.read().expect("tools lock");
        match tools.get(name) {
            Some(e) if surface.allows(e.spec.tier) => {
                Ok((e.tool.clone(), e.spec.clone(), e.serial.clone()))
            }
            // Hidden and unknown get the same words.
            _ => Err(ToolError::UnknownTool {
                name: name.to_string(),
                available: tools
                    .values()
                    .filter(|e| surface.allows(e.spec.tier))
                    .map(|e| e.spec.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    /// Run one call: surface check, arguments read through the schema, approval, serialization, a tracing span.
    pub async fn call(
        &self,
        surface: Surface,
        name: &str,
        args: Value,
        cx: CallContext,
    ) -> Result<ToolOutput, ToolError> {
        let (tool, spec, serial) = self.lookup(surface, name)?;
        let mut args = args;
        crate::args::coerce_to_schema(&spec.input_schema, &mut args);
        let span = tracing::info_span!("tool_call", tool = %name, tier = %spec.tier);
        let mut cx = cx;
        let outermost = cx.call_stack.is_empty();
        cx.bind(surface, self.clone(), name);
        async move {
            if spec.tier > Tier::Read {
                let approver = self.inner.approver.read().expect("approver lock").clone();
                let Some(approver) = approver else {
                    tracing::info!("refused: no approver attached");
                    return Err(ToolError::Refused(format!(
                        "`{name}` is a {} tool and needs approval, but no approver is attached to this run; \
                         ask the operator to attach one or use a read-tier tool",
                        spec.tier
                    )));
                };
                let request = ApprovalRequest {
                    tool: name.to_string(),
                    tier: spec.tier,
                    summary: tool.describe_call(&args),
                    args: args.clone(),
                };
                if let Approval::Denied { reason } = approver.approve(&request).await {
                    tracing::info!(%reason, "refused by approver");
                    return Err(ToolError::Refused(format!(
                        "the operator denied `{name}`: {reason}; do not retry the same call, \
                         change the plan or ask the operator"
                    )));
                }
            }
            let _guard = if spec.parallel_safe {
                None
            } else {
                Some(serial.lock_owned().await)
            };
            let started = std::time::Instant::now();
            let mut result = tool.call(&cx, args).await;
            if let (true, Ok(out)) = (outermost, &mut result) {
                if let Some(block) = self.inner.notices.take_block() {
                    out.push_text(block);
                }
            }
            tracing::info!(
                ok = result.is_ok(),
                ms = started.elapsed().as_millis() as u64,
                "tool call finished"
            );
            result
        }
        .instrument(span)
        .await
    }
}

#[cfg(test)]
mod tests;
