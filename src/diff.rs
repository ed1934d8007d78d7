//! What changed between two plans (`place --format json`, any rejection
//! form): the question a reviewer of a catalog change, or a reconciler
//! deciding what to restart, asks. A replica that moved to another engine
//! on the same GPUs has changed as surely as one that moved nodes: it has
//! to be restarted.

use std::collections::BTreeMap;

use serde::Serialize;

pub use crate::plan::At as Where;
use crate::plan::Entry;

/// A plan as diff reads it: per (model, replica), where it runs (placed or
/// already running), or `None` when it was left unplaced.
pub type Plan<'a> = BTreeMap<(&'a str, u32), Option<&'a Entry>>;

/// A plan document as diff compares it.
pub fn of(doc: &crate::plan::Plan) -> Plan<'_> {
    let mut plan = Plan::new();
    for e in &doc.entries {
        plan.insert((e.model.as_str(), e.replica), Some(e));
    }
    for (model, replica) in doc.unplaced_replicas() {
        plan.entry((model, replica)).or_insert(None);
    }
    plan
}

/// A profile or engine that changed.
#[derive(Serialize, Debug, PartialEq, Eq)]
pub struct Change {
    pub old: Option<String>,
    pub new: Option<String>,
}

#[derive(Serialize)]
pub struct Moved {
    pub model: String,
    pub replica: u32,
    pub old: Vec<Where>,
    pub new: Vec<Where>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<Change>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<Change>,
}

/// Placed in NEW: where it runs now.
#[derive(Serialize)]
pub struct Placed {
    pub model: String,
    pub replica: u32,
    pub new: Vec<Where>,
}

/// Unplaced in, or absent from, NEW: where it ran in OLD (`null`: nowhere).
#[derive(Serialize)]
pub struct Gone {
    pub model: String,
    pub replica: u32,
    pub old: Option<Vec<Where>>,
}

#[derive(Serialize, Default)]
pub struct Diff {
    /// Placed in both, on other nodes or GPUs, or with another profile or engine.
    pub moved: Vec<Moved>,
    /// Placed in NEW; unplaced or absent in OLD.
    pub placed: Vec<Placed>,
    /// Placed in OLD and unplaced in NEW; or absent from OLD and unplaced in NEW.
    pub unplaced: Vec<Gone>,
    /// In OLD, absent from NEW.
    pub removed: Vec<Gone>,
    /// Placed alike, or unplaced, in both.
    pub unchanged: usize,
}

impl Diff {
    pub fn differs(&self) -> bool {
        !(self.moved.is_empty() && self.placed.is_empty() && self.unplaced.is_empty() && self.removed.is_empty())
    }
}

fn change(a: &Option<String>, b: &Option<String>) -> Option<Change> {
    (a.is_some() && b.is_some() && a != b).then(|| Change { old: a.clone(), new: b.clone() })
}

/// Compares two plans replica by replica, in (model, replica) order.
pub fn compare(old: &Plan<'_>, new: &Plan<'_>) -> Diff {
    let mut d = Diff::default();
    let mut keys: Vec<&(&str, u32)> = old.keys().chain(new.keys()).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        let (model, replica) = (key.0.to_string(), key.1);
        match (old.get(key), new.get(key)) {
            (Some(was), None) => d.removed.push(Gone { model, replica, old: was.map(|e| e.nodes.clone()) }),
            (Some(Some(a)), Some(Some(b))) if a.same_as(b) => d.unchanged += 1,
            (Some(Some(a)), Some(Some(b))) => d.moved.push(Moved {
                model,
                replica,
                old: a.nodes.clone(),
                new: b.nodes.clone(),
                profile: change(&a.profile, &b.profile),
                engine: change(&a.engine, &b.engine),
            }),
            (Some(Some(a)), Some(None)) => d.unplaced.push(Gone { model, replica, old: Some(a.nodes.clone()) }),
            (Some(None) | None, Some(Some(b))) => d.placed.push(Placed { model, replica, new: b.nodes.clone() }),
            (Some(None), Some(None)) => d.unchanged += 1,
            (None, Some(None)) => d.unplaced.push(Gone { model, replica, old: None }),
            (None, None) => {}
        }
    }
    d
}
