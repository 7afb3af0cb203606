//! One shared server's documents as the broker keeps them: the server's
//! copy of each (its version and text), which runs have it open at which of
//! their own versions, and which run's speculative text it holds.
//!
//! The disk is the shared truth. A run's text that equals the file on disk
//! is everyone's; a text that differs (a staged preview, the baseline of a
//! write) is that run's speculation, and while the server holds it no other
//! run's message reaches the server (see [`super::mux`]). Versions are the
//! broker's toward the server and each run's own toward that run: a
//! publish is passed to a run with the run's version of the same text, or
//! not at all.

use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, VecDeque};

/// A run, by the number the broker gave its connection.
pub type RunId = u64;

/// How many (server version, run version) pairs a run's document keeps.
const VERSIONS_KEPT: usize = 16;

/// One run's view of a document.
#[derive(Debug, Default)]
struct RunDoc {
    /// The run's latest version.
    version: i32,
    /// A hash of the run's latest text.
    text_hash: u64,
    /// Server versions whose text equals one of the run's versions, newest
    /// last.
    same_text: VecDeque<(i32, i32)>,
}

impl RunDoc {
    fn map(&mut self, server_version: i32) {
        if self.same_text.len() == VERSIONS_KEPT {
            self.same_text.pop_front();
        }
        self.same_text.push_back((server_version, self.version));
    }

    /// The run's version of the text the server had at `server_version`.
    fn run_version_of(&self, server_version: i32) -> Option<i32> {
        self.same_text
            .iter()
            .rev()
            .find(|(s, _)| *s == server_version)
            .map(|(_, r)| *r)
    }
}

/// The server's copy of one document.
#[derive(Debug)]
struct Doc {
    version: i32,
    text: String,
    language_id: String,
    /// The run whose speculative text the server holds.
    speculative_by: Option<RunId>,
    runs: BTreeMap<RunId, RunDoc>,
    /// The server's last publish for it, and the server version it was for.
    last_publish: Option<(Value, i32)>,
}

fn hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// What a run's sync asks of the broker: notifications to the server, and
/// a replayed publish for the run.
#[derive(Debug, Default, PartialEq)]
pub struct SyncOutcome {
    pub to_server: Vec<Value>,
    pub to_run: Option<Value>,
}

/// Every document of one shared server.
#[derive(Debug, Default)]
pub struct Docs {
    docs: HashMap<String, Doc>,
}

fn did_change(uri: &str, version: i32, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": version},
        "contentChanges": [{"text": text}]}})
}

fn did_close(uri: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "textDocument/didClose",
           "params": {"textDocument": {"uri": uri}}})
}

impl Docs {
    /// `run` sent `text` of `uri` as its `version` (a `didOpen` or a full
    /// `didChange`); `disk` is the file's text now, `None` when unreadable.
    /// Returns what to send; the caller has made sure no other run holds
    /// speculative text in this server.
    pub fn sync(
        &mut self,
        run: RunId,
        uri: &str,
        (version, text, language_id): (i32, String, &str),
        disk: Option<&str>,
    ) -> SyncOutcome {
        let speculative = disk != Some(text.as_str());
        let mut out = SyncOutcome::default();
        let doc = self.docs.entry(uri.to_string()).or_insert_with(|| {
            out.to_server
                .push(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                "params": {"textDocument": {"uri": uri, "languageId": language_id,
                           "version": 1, "text": text}}}));
            Doc {
                version: 1,
                text: text.clone(),
                language_id: language_id.to_string(),
                speculative_by: None,
                runs: BTreeMap::new(),
                last_publish: None,
            }
        });
        let text_hash = hash(&text);
        if doc.text != text {
            doc.version += 1;
            doc.text = text;
            out.to_server.push(did_change(uri, doc.version, &doc.text));
            remap_others(doc, run, text_hash);
        }
        doc.speculative_by = match (speculative, doc.speculative_by) {
            (true, _) => Some(run),
            (false, Some(r)) if r == run => None,
            (false, other) => other,
        };
        let server_version = doc.version;
        let mine = doc.runs.entry(run).or_default();
        mine.version = version;
        mine.text_hash = text_hash;
        mine.map(server_version);
        // Nothing new reaches the server: its last publish for this text
        // is the run's answer.
        if out.to_server.is_empty() {
            if let Some((publish, for_version)) = &doc.last_publish {
                if *for_version == server_version {
                    out.to_run = Some(with_version(publish, Some(version)));
                }
            }
        }
        out
    }

    /// `run` closed `uri`: closed in the server too when no run has it
    /// open; put back to the disk's text when it held the run's
    /// speculation and others still have it open.
    pub fn close(&mut self, run: RunId, uri: &str, disk: Option<&str>) -> Vec<Value> {
        let Some(doc) = self.docs.get_mut(uri) else {
            return Vec::new();
        };
        doc.runs.remove(&run);
        let held = doc.speculative_by == Some(run);
        if held {
            doc.speculative_by = None;
        }
        match (doc.runs.is_empty(), held, disk) {
            // No run has it open, or the run's speculation was a file the
            // disk lacks: closed for everyone.
            (true, _, _) | (false, true, None) => {
                self.docs.remove(uri);
                vec![did_close(uri)]
            }
            (false, true, Some(disk)) if doc.text != disk => {
                doc.version += 1;
                doc.text = disk.to_string();
                remap_others(doc, run, hash(disk));
                vec![did_change(uri, doc.version, &doc.text)]
            }
            _ => Vec::new(),
        }
    }

    /// Whether the server holds speculative text of `run`.
    pub fn holds_speculation_of(&self, run: RunId) -> bool {
        self.docs.values().any(|d| d.speculative_by == Some(run))
    }

    /// Put every document holding `run`'s speculation back to the disk's
    /// text (`read` gives it), or closed when no other run has it open.
    pub fn revert(&mut self, run: RunId, read: &dyn Fn(&str) -> Option<String>) -> Vec<Value> {
        let uris: Vec<String> = self
            .docs
            .iter()
            .filter(|(_, d)| d.speculative_by == Some(run))
            .map(|(u, _)| u.clone())
            .collect();
        let mut out = Vec::new();
        for uri in uris {
            let disk = read(&uri);
            let doc = self.docs.get_mut(&uri).expect("listed");
            doc.speculative_by = None;
            let others = doc.runs.keys().any(|r| *r != run);
            match disk {
                Some(disk) if others => {
                    if doc.text != disk {
                        doc.version += 1;
                        doc.text = disk;
                        let h = hash(&doc.text);
                        remap_all(doc, h);
                        out.push(did_change(&uri, doc.version, &doc.text));
                    }
                }
                _ => {
                    self.docs.remove(&uri);
                    out.push(did_close(&uri));
                }
            }
        }
        out
    }

    /// `run` detached: each of its documents closed as [`Docs::close`] does.
    pub fn detach(&mut self, run: RunId, read: &dyn Fn(&str) -> Option<String>) -> Vec<Value> {
        let mut out = self.revert(run, read);
        let uris: Vec<String> = self
            .docs
            .iter()
            .filter(|(_, d)| d.runs.contains_key(&run))
            .map(|(u, _)| u.clone())
            .collect();
        for uri in uris {
            out.extend(self.close(run, &uri, None));
        }
        out
    }

    /// Who gets a publish of the server, and with which version: each run
    /// that has the document open at the same text, with its own version;
    /// while one run's speculation is in the server, that run only; a
    /// document no run has open, every run as sent.
    pub fn route_publish(&mut self, params: &Value, runs: &[RunId]) -> Vec<(RunId, Value)> {
        let uri = params
            .get("uri")
            .and_then(Value::as_str)
            .map(crate::client::normalize_uri)
            .unwrap_or_default();
        let published = params
            .get("version")
            .and_then(Value::as_i64)
            .and_then(|v| i32::try_from(v).ok());
        let Some(doc) = self.docs.get_mut(&uri) else {
            return runs.iter().map(|r| (*r, params.clone())).collect();
        };
        let for_version = published.unwrap_or(doc.version);
        doc.last_publish = Some((params.clone(), for_version));
        let mut out = Vec::new();
        for (run, rd) in &doc.runs {
            if doc.speculative_by.is_some_and(|s| s != *run) {
                continue;
            }
            let version = match published {
                Some(v) => rd.run_version_of(v),
                None if rd.run_version_of(doc.version) == Some(rd.version) => Some(rd.version),
                None => None,
            };
            if let Some(v) = version {
                let sent = if published.is_some() { Some(v) } else { None };
                out.push((*run, with_version(params, sent)));
            }
        }
        if doc.speculative_by.is_none() {
            for run in runs {
                if !doc.runs.contains_key(run) {
                    out.push((*run, with_version(params, None)));
                }
            }
        }
        out
    }

    /// The language id the server has `uri` open with.
    pub fn language_of(&self, uri: &str) -> Option<&str> {
        self.docs.get(uri).map(|d| d.language_id.as_str())
    }

    /// How many documents the server has open.
    pub fn open_count(&self) -> usize {
        self.docs.len()
    }
}

/// After `run` changed the server's text: every other run whose latest
/// text is the new one maps its version to the new server version.
fn remap_others(doc: &mut Doc, run: RunId, text_hash: u64) {
    let version = doc.version;
    for (r, rd) in &mut doc.runs {
        if *r != run && rd.text_hash == text_hash {
            rd.map(version);
        }
    }
}

fn remap_all(doc: &mut Doc, text_hash: u64) {
    let version = doc.version;
    for rd in doc.runs.values_mut() {
        if rd.text_hash == text_hash {
            rd.map(version);
        }
    }
}

/// A publish's params as a run gets them: its version, or none.
fn with_version(params: &Value, version: Option<i32>) -> Value {
    let mut p = params.clone();
    if let Some(obj) = p.as_object_mut() {
        match version {
            Some(v) => {
                obj.insert("version".into(), json!(v));
            }
            None => {
                obj.remove("version");
            }
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    const URI: &str = "file:///w/a.py";

    fn methods(v: &[Value]) -> Vec<String> {
        v.iter()
            .map(|m| {
                let version = &m["params"]["textDocument"]["version"];
                format!("{} v{version}", m["method"].as_str().unwrap())
            })
            .collect()
    }

    #[test]
    fn runs_at_the_disk_text_share_one_server_version() {
        let mut docs = Docs::default();
        let a = docs.sync(1, URI, (1, "x = 1\n".into(), "python"), Some("x = 1\n"));
        assert_eq!(methods(&a.to_server), ["textDocument/didOpen v1"]);
        // A second run opening the same text sends nothing to the server.
        let b = docs.sync(2, URI, (1, "x = 1\n".into(), "python"), Some("x = 1\n"));
        assert_eq!(b, SyncOutcome::default());
        // A publish for server version 1 goes to both, each at its version.
        let publish = json!({"uri": URI, "version": 1, "diagnostics": []});
        let routed = docs.route_publish(&publish, &[1, 2]);
        assert_eq!(routed.len(), 2);
        // Run 2 moves to its version 2 with the same text: the last
        // publish is replayed to it with its own version.
        let again = docs.sync(2, URI, (2, "x = 1\n".into(), "python"), Some("x = 1\n"));
        assert!(again.to_server.is_empty());
        assert_eq!(again.to_run.unwrap()["version"], json!(2));
    }

    #[test]
    fn a_speculation_is_routed_to_its_run_only_and_reverted_on_close() {
        let mut docs = Docs::default();
        docs.sync(1, URI, (1, "x = 1\n".into(), "python"), Some("x = 1\n"));
        docs.sync(2, URI, (1, "x = 1\n".into(), "python"), Some("x = 1\n"));
        let preview = docs.sync(1, URI, (2, "x = \n".into(), "python"), Some("x = 1\n"));
        assert_eq!(methods(&preview.to_server), ["textDocument/didChange v2"]);
        assert!(docs.holds_speculation_of(1));
        let publish = json!({"uri": URI, "version": 2, "diagnostics": [{"message": "bad"}]});
        let routed = docs.route_publish(&publish, &[1, 2]);
        assert_eq!(routed.iter().map(|(r, _)| *r).collect::<Vec<_>>(), [1]);
        assert_eq!(routed[0].1["version"], json!(2));
        // Run 1 closes it: run 2 still has it open, so the disk's text
        // goes back, and a publish for that version reaches run 2 at its v1.
        let back = docs.close(1, URI, Some("x = 1\n"));
        assert_eq!(methods(&back), ["textDocument/didChange v3"]);
        assert!(!docs.holds_speculation_of(1));
        let publish = json!({"uri": URI, "version": 3, "diagnostics": []});
        let routed = docs.route_publish(&publish, &[2]);
        assert_eq!(
            routed,
            [(2, json!({"uri": URI, "version": 1, "diagnostics": []}))]
        );
    }

    #[test]
    fn the_last_run_closing_closes_it_in_the_server() {
        let mut docs = Docs::default();
        docs.sync(1, URI, (1, "a".into(), "python"), Some("a"));
        docs.sync(2, URI, (1, "a".into(), "python"), Some("a"));
        assert!(docs.close(1, URI, Some("a")).is_empty());
        assert_eq!(
            methods(&docs.close(2, URI, Some("a"))),
            ["textDocument/didClose vnull"]
        );
        assert_eq!(docs.open_count(), 0);
    }

    #[test]
    fn detaching_reverts_the_runs_speculation() {
        let mut docs = Docs::default();
        docs.sync(1, URI, (1, "a".into(), "python"), Some("a"));
        docs.sync(2, URI, (1, "a".into(), "python"), Some("a"));
        docs.sync(2, URI, (2, "b".into(), "python"), Some("a"));
        let out = docs.detach(2, &|_| Some("a".into()));
        assert_eq!(methods(&out), ["textDocument/didChange v3"]);
        assert!(!docs.holds_speculation_of(2));
        let publish = json!({"uri": URI, "version": 3, "diagnostics": []});
        assert_eq!(docs.route_publish(&publish, &[1]).len(), 1);
    }
}
