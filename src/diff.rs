//! What changed between two plans (`place --format json`, any rejection
//! form): the question a reviewer of a catalog change, or a reconciler
//! deciding what to restart, asks.

use std::collections::BTreeMap;

use serde::Serialize;

pub use crate::plan::At as Where;

/// A plan as diff reads it: per (model, replica), its profile and nodes, or
/// `None` when it was left unplaced.
pub type Plan = BTreeMap<(String, u32), Option<(String, Vec<Where>)>>;

/// A plan document as diff compares it.
pub fn of(doc: &crate::plan::Plan) -> Plan {
    let mut plan = Plan::new();
    for e in &doc.entries {
        plan.insert((e.model.clone(), e.replica), Some((e.profile.clone().unwrap_or_default(), e.nodes.clone())));
    }
    for (model, replica) in doc.unplaced_replicas() {
        plan.entry((model.to_string(), replica)).or_insert(None);
    }
    plan
}

#[derive(Serialize)]
pub struct Moved {
    pub model: String,
    pub replica: u32,
    pub old: Vec<Where>,
    pub new: Vec<Where>,
}

#[derive(Serialize)]
pub struct One {
    pub model: String,
    pub replica: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<Where>>,
}

#[derive(Serialize, Default)]
pub struct Diff {
    /// Placed in both, on other nodes or GPUs.
    pub moved: Vec<Moved>,
    /// Placed in NEW; unplaced or absent in OLD.
    pub placed: Vec<One>,
    /// Placed in OLD, unplaced in NEW.
    pub unplaced: Vec<One>,
    /// In OLD, absent from NEW.
    pub removed: Vec<One>,
    /// Placed alike, or unplaced, in both.
    pub unchanged: usize,
}

impl Diff {
    pub fn differs(&self) -> bool {
        !(self.moved.is_empty() && self.placed.is_empty() && self.unplaced.is_empty() && self.removed.is_empty())
    }
}

/// Compares two plans replica by replica, in (model, replica) order. A
/// replica absent from OLD and unplaced in NEW placed nothing either way,
/// and is not counted.
pub fn compare(old: &Plan, new: &Plan) -> Diff {
    let mut d = Diff::default();
    for ((model, replica), was) in old {
        let key = (model.clone(), *replica);
        let one = |nodes: Option<Vec<Where>>| One { model: model.clone(), replica: *replica, nodes };
        match (was, new.get(&key)) {
            (_, None) => d.removed.push(one(was.as_ref().map(|w| w.1.clone()))),
            (Some((_, a)), Some(Some((_, b)))) if a == b => d.unchanged += 1,
            (Some((_, a)), Some(Some((_, b)))) => {
                d.moved.push(Moved { model: model.clone(), replica: *replica, old: a.clone(), new: b.clone() });
            }
            (Some((_, a)), Some(None)) => d.unplaced.push(one(Some(a.clone()))),
            (None, Some(Some((_, b)))) => d.placed.push(one(Some(b.clone()))),
            (None, Some(None)) => d.unchanged += 1,
        }
    }
    for ((model, replica), now) in new {
        if let (false, Some((_, b))) = (old.contains_key(&(model.clone(), *replica)), now) {
            d.placed.push(One { model: model.clone(), replica: *replica, nodes: Some(b.clone()) });
        }
    }
    d.placed.sort_by(|a, b| (&a.model, a.replica).cmp(&(&b.model, b.replica)));
    d
}
