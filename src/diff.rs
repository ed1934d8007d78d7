//! What changed between two plans (`place --format json`, any rejection
//! form): the question a reviewer of a catalog change, or a reconciler
//! deciding what to restart, asks. A replica that moved to another engine
//! on the same GPUs has changed as surely as one that moved nodes: it has
//! to be restarted.

use serde::Serialize;

pub use crate::plan::At as Where;
use crate::plan::Entry;

/// What a plan says of a stretch of one model's replicas: one replica it
/// runs (placed or already running), or a run it leaves unplaced.
#[derive(Clone, Copy)]
enum Stretch<'a> {
    Runs(&'a Entry),
    Unplaced,
}

/// A plan as diff reads it: per model, stretches of replica indices
/// (first, last, what), in (model, first) order. A run of unplaced
/// replicas stays one stretch, however long: a plan of 75 bytes may say
/// `"through": 4294967295`.
pub struct Plan<'a> {
    stretches: Vec<(&'a str, u32, u32, Stretch<'a>)>,
}

/// A plan document as diff compares it.
pub fn of(doc: &crate::plan::Plan) -> Plan<'_> {
    let mut stretches: Vec<(&str, u32, u32, Stretch<'_>)> =
        doc.entries.iter().map(|e| (e.model.as_str(), e.replica, e.replica, Stretch::Runs(e))).collect();
    stretches.extend(doc.unplaced.iter().map(|u| (u.model.as_str(), u.replica, u.through, Stretch::Unplaced)));
    stretches.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    Plan { stretches }
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fabric: Option<Change>,
    /// Per node, the adapters NCCL is told of: "gpu-a01 mlx5_0,mlx5_1".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapters: Option<Change>,
}

/// Placed in NEW: where it runs now.
#[derive(Serialize)]
pub struct Placed {
    pub model: String,
    pub replica: u32,
    pub new: Vec<Where>,
}

/// Unplaced in, or absent from, NEW: where it ran in OLD (`null`:
/// nowhere). Replicas that ran nowhere come as runs, `replica` to
/// `through` (absent for one), as `place` lists them.
#[derive(Serialize)]
pub struct Gone {
    pub model: String,
    pub replica: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub through: Option<u32>,
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
    pub unchanged: u64,
}

impl Diff {
    pub fn differs(&self) -> bool {
        !(self.moved.is_empty() && self.placed.is_empty() && self.unplaced.is_empty() && self.removed.is_empty())
    }
}

fn change(a: &Option<String>, b: &Option<String>) -> Option<Change> {
    (a.is_some() && b.is_some() && a != b).then(|| Change { old: a.clone(), new: b.clone() })
}

/// What a plan says at one index of a model: nothing, or its stretch.
#[derive(Clone, Copy)]
enum At<'a> {
    Absent,
    Is(Stretch<'a>),
}

/// Compares two plans replica by replica, in (model, replica) order, runs
/// as runs: the indices where either plan's stretches begin or end cut
/// each model into pieces along which neither plan changes, so the work
/// is that of the stretches, never of the replicas they stand for.
pub fn compare(old: &Plan<'_>, new: &Plan<'_>) -> Diff {
    let mut d = Diff::default();
    let (a, b) = (&old.stretches, &new.stretches);
    let mut models: Vec<&str> = a.iter().chain(b).map(|s| s.0).collect();
    models.sort_unstable();
    models.dedup();
    let (mut ia, mut ib) = (0, 0);
    for model in models {
        let (sa, sb) = (take(a, &mut ia, model), take(b, &mut ib, model));
        let mut cuts: Vec<u64> = sa.iter().chain(sb).flat_map(|s| [u64::from(s.1), u64::from(s.2) + 1]).collect();
        cuts.sort_unstable();
        cuts.dedup();
        let (mut pa, mut pb) = (0, 0);
        for w in cuts.windows(2) {
            let (lo, hi) = (w[0] as u32, (w[1] - 1) as u32);
            let (was, now) = (at(sa, &mut pa, lo), at(sb, &mut pb, lo));
            piece(&mut d, model, lo, hi, was, now);
        }
    }
    d
}

/// The stretches of `model`, from `*i` on (both lists are in model order).
fn take<'s, 'a>(
    list: &'s [(&'a str, u32, u32, Stretch<'a>)],
    i: &mut usize,
    model: &str,
) -> &'s [(&'a str, u32, u32, Stretch<'a>)] {
    let start = *i;
    while *i < list.len() && list[*i].0 == model {
        *i += 1;
    }
    &list[start..*i]
}

/// What the stretches say at index `r`; `*p` only moves forward.
fn at<'a>(list: &[(&'a str, u32, u32, Stretch<'a>)], p: &mut usize, r: u32) -> At<'a> {
    while *p < list.len() && list[*p].2 < r {
        *p += 1;
    }
    match list.get(*p) {
        Some(s) if s.1 <= r => At::Is(s.3),
        _ => At::Absent,
    }
}

/// Records replicas `lo..=hi` of a model, along which neither plan changes
/// (a replica that runs is a piece of one).
fn piece(d: &mut Diff, model: &str, lo: u32, hi: u32, was: At<'_>, now: At<'_>) {
    let gone = |old| Gone { model: model.to_string(), replica: lo, through: None, old };
    match (was, now) {
        (At::Absent, At::Absent) => {}
        (At::Is(Stretch::Unplaced), At::Is(Stretch::Unplaced)) => d.unchanged += u64::from(hi - lo) + 1,
        (At::Is(Stretch::Runs(a)), At::Is(Stretch::Runs(b))) if a.same_as(b) => d.unchanged += 1,
        (At::Is(Stretch::Runs(a)), At::Is(Stretch::Runs(b))) => d.moved.push(Moved {
            model: model.to_string(),
            replica: lo,
            old: a.nodes.clone(),
            new: b.nodes.clone(),
            profile: change(&a.profile, &b.profile),
            engine: change(&a.engine, &b.engine),
            fabric: change(&a.fabric, &b.fabric),
            // On other nodes the move says enough; on the same ones, other
            // adapters are why it moved.
            adapters: a
                .nodes
                .iter()
                .map(|n| &n.node)
                .eq(b.nodes.iter().map(|n| &n.node))
                .then(|| change(&a.adapters(), &b.adapters()))
                .flatten(),
        }),
        (At::Is(Stretch::Runs(a)), At::Is(Stretch::Unplaced)) => d.unplaced.push(gone(Some(a.nodes.clone()))),
        (At::Is(Stretch::Runs(a)), At::Absent) => d.removed.push(gone(Some(a.nodes.clone()))),
        (_, At::Is(Stretch::Runs(b))) => {
            d.placed.push(Placed { model: model.to_string(), replica: lo, new: b.nodes.clone() });
        }
        (At::Is(Stretch::Unplaced), At::Absent) => run(&mut d.removed, model, lo, hi),
        (At::Absent, At::Is(Stretch::Unplaced)) => run(&mut d.unplaced, model, lo, hi),
    }
}

/// Adds replicas `lo..=hi` that ran nowhere in OLD to a list, as one run
/// with the run just before it when they follow on.
fn run(list: &mut Vec<Gone>, model: &str, lo: u32, hi: u32) {
    if let Some(last) = list.last_mut()
        && last.old.is_none()
        && last.model == model
        && last.through.unwrap_or(last.replica).checked_add(1) == Some(lo)
    {
        last.through = Some(hi);
        return;
    }
    let through = (hi > lo).then_some(hi);
    list.push(Gone { model: model.to_string(), replica: lo, through, old: None });
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// A small plan: per model (of two), replicas that run on node `n<k>`
    /// and runs of unplaced ones, never overlapping.
    fn plan_text(items: &[(u8, u32, u32, Option<u8>)]) -> String {
        let mut placements = Vec::new();
        let mut unplaced = Vec::new();
        let mut taken: Vec<(u8, u32)> = Vec::new();
        for &(model, lo, len, node) in items {
            let hi = lo + if node.is_some() { 0 } else { len };
            if (lo..=hi).any(|r| taken.contains(&(model, r))) {
                continue;
            }
            taken.extend((lo..=hi).map(|r| (model, r)));
            match node {
                Some(k) => placements.push(serde_json::json!({"model": format!("m{model}"), "replica": lo,
                    "profile": "p", "engine": "vllm", "nodes": [{"node": format!("n{k}"), "gpus": [0]}]})),
                None => unplaced.push(serde_json::json!({"model": format!("m{model}"), "replica": lo, "through": hi})),
            }
        }
        serde_json::json!({"placements": placements, "unplaced": unplaced}).to_string()
    }

    /// The same comparison one replica at a time: (moved, placed,
    /// unplaced, removed, unchanged) counted in replicas.
    fn naive(old: &crate::plan::Plan, new: &crate::plan::Plan) -> (u64, u64, u64, u64, u64) {
        fn expand(p: &crate::plan::Plan) -> BTreeMap<(String, u32), Option<String>> {
            let mut m: BTreeMap<(String, u32), Option<String>> =
                p.entries.iter().map(|e| ((e.model.clone(), e.replica), Some(e.nodes[0].node.clone()))).collect();
            for (model, r) in p.unplaced_replicas() {
                m.insert((model.to_string(), r), None);
            }
            m
        }
        let (a, b) = (expand(old), expand(new));
        let mut n = (0, 0, 0, 0, 0);
        for key in a.keys().chain(b.keys()).collect::<std::collections::BTreeSet<_>>() {
            match (a.get(key), b.get(key)) {
                (Some(Some(x)), Some(Some(y))) if x == y => n.4 += 1,
                (Some(Some(_)), Some(Some(_))) => n.0 += 1,
                (Some(None), Some(None)) => n.4 += 1,
                (_, Some(Some(_))) => n.1 += 1,
                (_, Some(None)) => n.2 += 1,
                (Some(_), None) => n.3 += 1,
                (None, None) => {}
            }
        }
        n
    }

    fn replicas(list: &[Gone]) -> u64 {
        list.iter().map(|g| g.through.map_or(1, |t| u64::from(t - g.replica) + 1)).sum()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
        /// Compared as ranges, two plans differ exactly as they do replica
        /// by replica; runs are in order, never overlap and never follow on.
        #[test]
        fn ranges_agree_with_replica_by_replica(
            old in prop::collection::vec((0u8..2, 0u32..40, 0u32..8, prop::option::of(0u8..3)), 0..12),
            new in prop::collection::vec((0u8..2, 0u32..40, 0u32..8, prop::option::of(0u8..3)), 0..12),
        ) {
            let read = |items: &[(u8, u32, u32, Option<u8>)]| {
                crate::plan::read(&crate::source::source("p.json", plan_text(items))).expect("a valid plan")
            };
            let (a, b) = (read(&old), read(&new));
            let d = compare(&of(&a), &of(&b));
            let got = (d.moved.len() as u64, d.placed.len() as u64, replicas(&d.unplaced), replicas(&d.removed), d.unchanged);
            prop_assert_eq!(got, naive(&a, &b));
            for list in [&d.unplaced, &d.removed] {
                for w in list.windows(2) {
                    let end = w[0].through.unwrap_or(w[0].replica);
                    let follows = w[0].model == w[1].model && w[0].old.is_none() && w[1].old.is_none() && end + 1 == w[1].replica;
                    prop_assert!((w[0].model.as_str(), end) < (w[1].model.as_str(), w[1].replica));
                    prop_assert!(!follows, "runs that follow on are one");
                }
            }
        }
    }
}
