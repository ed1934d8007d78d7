//! `--pack most`: the profiles and nodes of every new replica chosen
//! together, to place the most (docs/placement.md, "Packing the most").
//!
//! The order (docs/placement.md, "Order") decides one replica at a time and never looks
//! back, so on a full fleet it strands GPUs: a TP1 model spread one GPU per
//! node keeps every TP8 replica out, a model that takes the H100s first
//! leaves a later H100-only model nothing. Here the same rules are a
//! packing problem over counts: how many replicas of each model, with which
//! profile, on which node (or fabric, for a replica across nodes).
//!
//! - Small fleets (the program fits `model::MAX_VARS`) are solved as an
//!   integer program with microlp, stage by stage for the tie-breaks of
//!   docs/placement.md, "Packing the most":
//!   the most replicas, then per model in catalog order, then the profiles
//!   tried first, then the default plan's own choices.
//! - Larger ones are packed greedily in a few orders of the models (the
//!   largest replicas first, as first-fit-decreasing does), and the best
//!   plan by the same tie-breaks wins.
//!
//! Whatever is chosen is then committed through the same checks as the
//! default (`assemble`), so every hard rule holds however the count was
//! reached, and what is still missing is tried once more the default way.
//! The default plan is always a candidate: `most` never places fewer.

pub(in crate::placement) mod assemble;
mod bound;
mod explain;
mod greedy;
mod model;
mod score;
mod solve;

use super::state::Fleet;
use super::{Decision, Options, Placement, Plan};
use crate::catalog::Catalog;
use crate::inventory::Inventory;

pub(super) use bound::measure;
pub use bound::stranded;

/// How `place` chooses the new replicas' profiles and nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Pack {
    /// Models in catalog order, each replica the first profile and node
    /// that finds a home (the reference)
    #[default]
    Order,
    /// All new replicas chosen together, to place as many as the fleet holds
    Most,
}

/// The `--pack most` plan, with the fleet as it leaves it.
pub(super) fn most<'i>(catalog: &Catalog, inventory: &'i Inventory, opts: Options) -> (Plan, Fleet<'i>) {
    let plain = Options { explain: None, measure: false, pack: Pack::Order, ..opts };
    let (order_plan, order_fleet, _) = super::in_order(catalog, inventory, plain);
    let missing = missing(catalog, &order_plan);
    let default: Vec<&Placement> = placed(&order_plan).collect();
    let matches = score::Matches::of(&default);
    let mut best: (Vec<u64>, Option<Vec<Placement>>) = (score::key(catalog, default.iter().copied(), &matches), None);
    let consider = |best: &mut (Vec<u64>, Option<Vec<Placement>>), found: Vec<Placement>| {
        let key = score::key(catalog, found.iter(), &matches);
        if key > best.0 {
            *best = (key, Some(found));
        }
    };
    // The greedy orders first: cheap, and the best of them starts the
    // solver off.
    let passes = greedy::orders(catalog);
    let mut solved = None;
    if order_plan.summary.unplaced > 0 || model::worth_solving(catalog, inventory) {
        for order in &passes {
            consider(&mut best, greedy::pass(catalog, inventory, order, &missing));
        }
        let start: Vec<&Placement> = match &best.1 {
            Some(p) => p.iter().collect(),
            None => default.clone(),
        };
        if let Some(program) = model::Program::build(catalog, inventory, &missing)
            && let Some(s) = solve::lexicographic(&program, &start, &default)
        {
            consider(&mut best, assemble::items_of(catalog, inventory, &program, &s.values, &default));
            solved = s.bound;
        }
    }
    let (mut plan, mut fleet) = match best.1 {
        None => (order_plan, order_fleet),
        Some(found) => {
            let placements = assemble::renumber(found, &missing);
            assemble::plan(catalog, inventory, &placements, &missing, &order_plan)
        }
    };
    plan.pack = Pack::Most;
    if let Some(mi) = opts.explain {
        explain::attach(catalog, &mut fleet, &mut plan, mi);
    } else if opts.measure {
        bound::measure_with(catalog, inventory, &mut plan, &fleet, None, solved);
    }
    (plan, fleet)
}

/// Per catalog model, the replica indices a plan has to decide: those the
/// inventory does not already run, ascending.
fn missing(catalog: &Catalog, plan: &Plan) -> Vec<Vec<u32>> {
    let mut out = vec![Vec::new(); catalog.models.len()];
    for d in &plan.decisions {
        let (m, r) = match d {
            Decision::Placed(p) => (p.model, p.replica),
            Decision::Unplaced { model, replica, .. } => (*model, *replica),
        };
        out[m as usize].push(r);
    }
    for list in &mut out {
        list.sort_unstable();
    }
    out
}

fn placed(plan: &Plan) -> impl Iterator<Item = &Placement> {
    plan.decisions.iter().filter_map(|d| match d {
        Decision::Placed(p) => Some(p),
        Decision::Unplaced { .. } => None,
    })
}
