//! What every plan says of itself beside what it placed (docs/placement.md,
//! "The bound" and "Stranded GPUs"): how many new replicas no plan of the
//! same inputs can exceed, and which free GPUs the replicas left unplaced
//! cannot use.
//!
//! The bound is the least of several relaxations, each an upper bound on
//! its own, tried cheapest first and only while the bound stays above what
//! was placed (a plan that places everything needs none):
//! 1. each model alone: the replicas it could place on the fleet with no
//!    other model there (`caps`);
//! 2. the GPUs of each class pooled, node boundaries ignored: a linear
//!    program over models and classes, each replica costing its smallest
//!    profile's GPUs (`pooled`);
//! 3. on fleets small enough, the linear relaxation of the whole packing
//!    program of `model`, requests read loosely;
//! 4. under `--pack most`, the solver's own optimum where it proved one on
//!    an exact program.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use microlp::{ComparisonOp, OptimizationDirection, Problem};

use super::model::{self, Program};
use crate::catalog::Catalog;
use crate::inventory::Inventory;
use crate::placement::fast::Index;
use crate::placement::state::{Compiled, Fleet};
use crate::placement::{Decision, Plan};

/// Fills the summary's `bound` and `stranded` for a plan made in order.
pub(in crate::placement) fn measure(
    catalog: &Catalog,
    inventory: &Inventory,
    plan: &mut Plan,
    fleet: &Fleet<'_>,
    index: Option<&mut Index>,
) {
    measure_with(catalog, inventory, plan, fleet, index, None);
}

pub(super) fn measure_with(
    catalog: &Catalog,
    inventory: &Inventory,
    plan: &mut Plan,
    fleet: &Fleet<'_>,
    mut index: Option<&mut Index>,
    solved: Option<u64>,
) {
    plan.summary.bound = bound(catalog, inventory, plan, fleet, index.as_deref_mut(), solved);
    plan.summary.stranded = stranded_with(catalog, fleet, plan, index);
}

/// Per GPU class, the free GPUs that the replicas a plan leaves unplaced
/// cannot use: free whole GPUs (healthy, held by nobody, not in MIG mode)
/// on a node that passes every unchanging check of a whole-GPU profile of
/// an unplaced replica for that class (state, selector, taints, engine,
/// memory, disk, memory fit, vendor). Every plan llmgw makes leaves no
/// unplaced replica a home, so those GPUs are free in pieces that replica
/// cannot use (too few on the node, or the node's CPUs, memory or
/// `replicas_per_node` spent, or too few such nodes on one fabric). Free
/// GPUs no unplaced replica would ever take (another class, another
/// label) are spare, not stranded; a plan that places everything strands
/// none. Only classes with stranded GPUs are listed, by name.
///
/// `fleet` is the fleet as the plan leaves it (`plan_with_fleet`'s).
pub fn stranded(catalog: &Catalog, fleet: &Fleet<'_>, plan: &Plan) -> BTreeMap<String, u64> {
    stranded_with(catalog, fleet, plan, None)
}

fn stranded_with(
    catalog: &Catalog,
    fleet: &Fleet<'_>,
    plan: &Plan,
    mut index: Option<&mut Index>,
) -> BTreeMap<String, u64> {
    let mut wanted: BTreeSet<(u32, u32)> = BTreeSet::new();
    for mi in unplaced_models(plan) {
        for p in &catalog.models[mi as usize].profiles {
            let c = fleet.compile(p);
            let (Some(class), None) = (c.class, &p.mig_profile) else { continue };
            for n in passing(fleet, index.as_deref_mut(), &c) {
                wanted.insert((n, class));
            }
        }
    }
    let mut out = BTreeMap::new();
    for (n, class) in wanted {
        let free = u64::from(fleet.free_of(n, Some(class)));
        if free > 0 {
            *out.entry(fleet.classes[class as usize].to_string()).or_insert(0) += free;
        }
    }
    out
}

/// Models with a replica left unplaced, in catalog order.
fn unplaced_models(plan: &Plan) -> Vec<u32> {
    let set: BTreeSet<u32> = plan
        .decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Unplaced { model, .. } => Some(*model),
            Decision::Placed(_) => None,
        })
        .collect();
    set.into_iter().collect()
}

/// The ready nodes passing the profile's unchanging checks.
fn passing(fleet: &Fleet<'_>, index: Option<&mut Index>, p: &Compiled<'_>) -> Vec<u32> {
    if !p.profile.cpu_only() && p.class.is_none() {
        return Vec::new();
    }
    match index {
        Some(ix) => ix.passing(fleet, p).list.clone(),
        None => (0..fleet.node_count())
            .filter(|&n| {
                fleet.state_reason(n).is_none() && fleet.static_check(n, p).is_ok() && fleet.fit_check(n, p).is_ok()
            })
            .collect(),
    }
}

fn bound(
    catalog: &Catalog,
    inventory: &Inventory,
    plan: &Plan,
    fleet: &Fleet<'_>,
    mut index: Option<&mut Index>,
    solved: Option<u64>,
) -> u64 {
    let placed = plan.summary.placed;
    let mut best = placed + plan.summary.unplaced;
    if let Some(s) = solved {
        best = best.min(s);
    }
    let short = unplaced_models(plan);
    // A model left short whose profiles no node even passes the unchanging
    // checks of places nothing in any plan: nothing more to ask.
    let hopeless = short.iter().all(|&m| {
        catalog.models[m as usize]
            .profiles
            .iter()
            .all(|p| passing(fleet, index.as_deref_mut(), &fleet.compile(p)).is_empty())
    });
    if best <= placed || hopeless {
        return placed;
    }
    let mut demand = vec![0u64; catalog.models.len()];
    for d in &plan.decisions {
        let m = match d {
            Decision::Placed(p) => p.model,
            Decision::Unplaced { model, .. } => *model,
        };
        demand[m as usize] += 1;
    }
    let mut f0 = Fleet::new(inventory);
    let mut caps: Vec<Option<Caps>> = (0..catalog.models.len()).map(|_| None).collect();
    let mut alike = Alike::default();
    // 1. Each model alone.
    let short_set: HashSet<u32> = short.iter().copied().collect();
    let mut alone = 0u64;
    for (mi, &d) in demand.iter().enumerate() {
        if !short_set.contains(&(mi as u32)) {
            alone += d;
            continue;
        }
        let c = alike.caps(catalog, &mut f0, mi, d, index.as_deref_mut());
        alone += c.total.min(d);
        caps[mi] = Some(c);
    }
    best = best.min(alone);
    if best <= placed {
        return placed;
    }
    // 2. GPUs pooled per class.
    for (mi, &d) in demand.iter().enumerate() {
        if caps[mi].is_none() && d > 0 {
            caps[mi] = Some(alike.caps(catalog, &mut f0, mi, d, index.as_deref_mut()));
        }
    }
    if let Some(b) = pooled(&f0, &caps, &demand) {
        best = best.min(b);
    }
    // 3. The whole program, relaxed, where it is small.
    if best > placed {
        let missing = super::missing(catalog, plan);
        if let Some(prog) = Program::build(catalog, inventory, &missing)
            && let Some(b) = super::solve::relaxed(&prog)
        {
            best = best.min(b);
        }
    }
    best.max(placed)
}

/// `caps_of`, once per kind of model: a model none of whose replicas runs
/// yet is seen by the fleet only through its profiles, its
/// `replicas_per_node` and its demand (a profile's source only through
/// the nodes holding its weights), so models alike in those have the same
/// caps. A catalog of many models alike (one model per tenant, say)
/// otherwise costs a pass over the fleet per model: at 50,000 nodes and
/// 1,000 models, most of `place`'s time.
#[derive(Default)]
struct Alike(std::collections::HashMap<(String, u32, u64), Caps>);

impl Alike {
    fn caps(
        &mut self,
        catalog: &Catalog,
        f0: &mut Fleet<'_>,
        mi: usize,
        demand: u64,
        index: Option<&mut Index>,
    ) -> Caps {
        let model = &catalog.models[mi];
        if f0.existing_of(&model.name).is_some_and(|e| !e.is_empty()) {
            return caps_of(catalog, f0, mi, demand, index);
        }
        // A profile's source matters only through the nodes holding its
        // weights (and whether it names one at all): models alike but for
        // the repository they pull from are alike here.
        let profiles: Vec<_> = model
            .profiles
            .iter()
            .map(|p| {
                let mut p = p.clone();
                if p.source.is_some() {
                    p.source = Some(format!("{:?}", f0.compile(&p).holders));
                }
                p
            })
            .collect();
        let key = (without_spans(&format!("{profiles:?}")), model.replicas_per_node, demand);
        if let Some(c) = self.0.get(&key) {
            return c.clone();
        }
        let c = caps_of(catalog, f0, mi, demand, index);
        self.0.insert(key, c.clone());
        c
    }
}

/// A profile's debug text without the places in the catalog file it was
/// read from (`Span { start: 10, end: 14 }`), which differ from model to
/// model and decide nothing.
fn without_spans(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("Span { start: ") {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        match rest.find(" }") {
            Some(j) => rest = &rest[j + 2..],
            None => break,
        }
    }
    out.push_str(rest);
    out
}

/// What one model could place with no other model on the fleet: in all,
/// and per resource (a GPU class, a MIG profile, CPUs), with the fewest
/// GPUs one of its replicas takes there.
#[derive(Clone)]
struct Caps {
    total: u64,
    by: BTreeMap<model::Resource, (u64, u32)>,
}

fn caps_of(catalog: &Catalog, f0: &mut Fleet<'_>, mi: usize, demand: u64, mut index: Option<&mut Index>) -> Caps {
    let model = &catalog.models[mi];
    f0.begin_model(mi as u32, &model.name, model.replicas_per_node);
    let compiled: Vec<_> = model.profiles.iter().map(|p| f0.compile(p)).collect();
    // Per node, per resource: the most replicas of one single-node profile.
    let mut per_node: BTreeMap<u32, BTreeMap<model::Resource, u64>> = BTreeMap::new();
    let mut by: BTreeMap<model::Resource, (u64, u32)> = BTreeMap::new();
    let mut multi = 0u64;
    for c in &compiled {
        let Some(res) = model::resource(c) else { continue };
        let nodes = passing(f0, index.as_deref_mut(), c);
        let cost = if c.profile.mig_profile.is_some() || c.profile.cpu_only() {
            0
        } else {
            c.profile.gpus_per_node * c.profile.nodes
        };
        let mut found = 0u64;
        if c.profile.nodes <= 1 {
            for &n in &nodes {
                if let Some(u) = model::units(f0, n, c, None, true) {
                    let e = per_node.entry(n).or_default().entry(res.clone()).or_insert(0);
                    *e = (*e).max(u64::from(u));
                    found += 1;
                }
            }
        } else {
            let k = u64::from(c.profile.nodes);
            for f in f0.fabric_order.clone() {
                let s: u64 = nodes.iter().filter_map(|&n| model::units(f0, n, c, Some(f), true)).map(u64::from).sum();
                let here = (s / k).min(demand);
                multi += here;
                found += here;
                by.entry(res.clone()).or_insert((0, u32::MAX)).0 += here;
            }
        }
        if found > 0 {
            let e = by.entry(res).or_insert((0, u32::MAX));
            e.1 = e.1.min(cost);
        }
    }
    let mut total = multi;
    for (n, per) in per_node {
        let room = u64::from(f0.per_node().saturating_sub(f0.held_here(n)));
        total += room.min(per.values().sum());
        for (res, u) in per {
            by.entry(res).or_insert((0, u32::MAX)).0 += room.min(u);
        }
    }
    for v in by.values_mut() {
        v.0 = v.0.min(demand);
    }
    Caps { total: total.min(demand), by }
}

/// The GPUs of each class (MIG devices of each profile) pooled: the most
/// replicas whose smallest profiles fit in the pools, each model within
/// what it could place alone; a linear program of models by resources.
fn pooled(f0: &Fleet<'_>, caps: &[Option<Caps>], demand: &[u64]) -> Option<u64> {
    let mut p = Problem::new(OptimizationDirection::Maximize);
    let mut use_of: BTreeMap<model::Resource, Vec<(microlp::Variable, f64)>> = BTreeMap::new();
    let mut any = false;
    for (mi, c) in caps.iter().enumerate() {
        let Some(c) = c else { continue };
        let vars: Vec<microlp::Variable> =
            c.by.iter()
                .filter(|(_, (cap, _))| *cap > 0)
                .map(|(res, &(cap, cost))| {
                    let v = p.add_var(1.0, (0.0, cap as f64));
                    use_of.entry(res.clone()).or_default().push((v, f64::from(cost)));
                    v
                })
                .collect();
        if vars.is_empty() {
            continue;
        }
        any = true;
        let terms: Vec<(microlp::Variable, f64)> = vars.iter().map(|&v| (v, 1.0)).collect();
        p.add_constraint(&terms[..], ComparisonOp::Le, c.total.min(demand[mi]) as f64);
    }
    if !any {
        return Some(0);
    }
    for (res, terms) in use_of {
        let have = model::pool_size(f0, &res);
        let terms: Vec<(microlp::Variable, f64)> = terms.into_iter().filter(|t| t.1 > 0.0).collect();
        if let (Some(have), false) = (have, terms.is_empty()) {
            p.add_constraint(&terms[..], ComparisonOp::Le, have as f64);
        }
    }
    let sol = super::solve::guarded(|| p.solve())?.ok()?;
    Some(super::solve::floor(sol.solution()?.objective()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn spans_are_left_out_of_a_models_kind() {
        let a = "Profile { name: \"h100\", name_span: Span { start: 10, end: 14 }, nodes: 1 }";
        let b = "Profile { name: \"h100\", name_span: Span { start: 910, end: 914 }, nodes: 1 }";
        assert_eq!(super::without_spans(a), super::without_spans(b));
        assert_eq!(super::without_spans(a), "Profile { name: \"h100\", name_span: , nodes: 1 }");
        assert_ne!(super::without_spans(a), super::without_spans(&a.replace("nodes: 1", "nodes: 2")));
    }
}
