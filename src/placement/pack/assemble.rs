//! From counts to a plan: which replica runs where, on which GPUs, through
//! the same checks as the default; then every replica still missing is
//! tried once more the default way, and what is left is explained.

use std::sync::Arc;

use super::model::{Program, Var};
use crate::catalog::Catalog;
use crate::inventory::Inventory;
use crate::placement::fast::Index;
use crate::placement::state::{Compiled, Fleet};
use crate::placement::{Decision, Placement, Plan, Summary, Why, profile_order, rank, reference};

/// Starts placing a model on the fleet: its replicas that run count on
/// their nodes, and so do the ones `placed` gives it in this plan.
pub(in crate::placement) fn enter<'a>(
    fleet: &mut Fleet<'_>,
    catalog: &Catalog,
    mi: u32,
    placed: impl Iterator<Item = &'a Placement>,
) {
    let model = &catalog.models[mi as usize];
    fleet.begin_model(mi, &model.name, model.replicas_per_node);
    for p in placed.filter(|p| p.model == mi) {
        for a in &p.nodes {
            fleet.hold(a.node);
        }
    }
}

/// Whether the node passes every check of the profile now.
fn admits(fleet: &Fleet<'_>, node: u32, p: &Compiled<'_>, fabric: Option<u32>) -> bool {
    matches!(reference::check(fleet, node, p, fabric), Ok(Some(_)))
}

/// Whether a placement made elsewhere (the default plan, a greedy pass)
/// still fits as it is: its nodes pass the checks and its GPUs and MIG
/// devices are free.
fn fits(fleet: &Fleet<'_>, p: &Placement, c: &Compiled<'_>) -> bool {
    p.nodes.iter().all(|a| {
        admits(fleet, a.node, c, p.fabric)
            && match (&a.mig_devices[..], c.class) {
                ([m], _) => a.gpus.len() == 1 && !fleet.mig_taken(a.node, a.gpus[0], *m),
                ([], Some(class)) => a.gpus.iter().all(|&g| fleet.gpu_is_free(a.node, g, class)),
                ([], None) => a.gpus.is_empty(),
                _ => false,
            }
    }) && p.nodes.windows(2).all(|w| w[0].node != w[1].node)
}

/// A replica the solver asked for, before its GPUs are chosen.
struct Wanted {
    model: u32,
    profile: u32,
    fabric: Option<u32>,
    nodes: Vec<u32>,
}

/// The solver's counts as placements, committed on a fleet as the
/// inventory leaves it. A replica the default plan already had where the
/// solver wants one keeps the default's GPUs (and replica number).
pub(super) fn items_of(
    catalog: &Catalog,
    inventory: &Inventory,
    prog: &Program,
    x: &[u32],
    default: &[&Placement],
) -> Vec<Placement> {
    let mut kept: Vec<Placement> = Vec::new();
    let mut wanted: Vec<Wanted> = Vec::new();
    let mut used = vec![false; default.len()];
    let take = |model: u32, profile: u32, fabric: Option<u32>, nodes: &[u32], used: &mut Vec<bool>| {
        let found = default.iter().enumerate().position(|(i, d)| {
            !used[i] && d.model == model && d.profile == profile && d.fabric == fabric && same_nodes(d, nodes)
        });
        found.map(|i| {
            used[i] = true;
            default[i].clone()
        })
    };
    for (v, var) in prog.vars.iter().enumerate() {
        match *var {
            Var::Single { model, profile, node } => {
                for _ in 0..x[v] {
                    match take(model, profile, None, &[node], &mut used) {
                        Some(d) => kept.push(d),
                        None => wanted.push(Wanted { model, profile, fabric: None, nodes: vec![node] }),
                    }
                }
            }
            Var::Group { model, profile, fabric, k } => {
                let mut r = x[v];
                let mut parts: Vec<(u32, u32)> = prog
                    .vars
                    .iter()
                    .enumerate()
                    .filter_map(|(i, p)| match *p {
                        Var::Part { group, node } if group == v && x[i] > 0 => Some((node, x[i])),
                        _ => None,
                    })
                    .collect();
                // The default's replicas first, where taking one leaves
                // counts that still split into replicas.
                for (i, d) in default.iter().enumerate() {
                    if used[i] || d.model != model || d.profile != profile || d.fabric != Some(fabric) || r == 0 {
                        continue;
                    }
                    let inside = |n: u32| d.nodes.iter().any(|a| a.node == n);
                    let ok = d.nodes.iter().all(|a| parts.iter().any(|&(n, z)| n == a.node && z > 0))
                        && parts.iter().all(|&(n, z)| inside(n) || z < r);
                    if ok {
                        used[i] = true;
                        r -= 1;
                        for p in parts.iter_mut().filter(|p| inside(p.0)) {
                            p.1 -= 1;
                        }
                        kept.push((*d).clone());
                    }
                }
                // Deal the rest out: node copies in a row, replica j takes
                // every r-th from j, so no replica gets a node twice.
                let row: Vec<u32> = parts.iter().flat_map(|&(n, z)| std::iter::repeat_n(n, z as usize)).collect();
                if r == 0 || row.len() != (r * k) as usize {
                    continue;
                }
                for j in 0..r as usize {
                    let nodes: Vec<u32> = (0..k as usize).map(|i| row[j + i * r as usize]).collect();
                    wanted.push(Wanted { model, profile, fabric: Some(fabric), nodes });
                }
            }
            Var::Part { .. } => {}
        }
    }
    realize(catalog, inventory, kept, wanted)
}

fn same_nodes(d: &Placement, nodes: &[u32]) -> bool {
    let mut a: Vec<u32> = d.nodes.iter().map(|a| a.node).collect();
    a.sort_unstable();
    let mut b = nodes.to_vec();
    b.sort_unstable();
    a == b
}

/// Commits the kept placements as they are, then the wanted ones with GPUs
/// chosen the default's way; a replica that does not pass is dropped.
fn realize(catalog: &Catalog, inventory: &Inventory, kept: Vec<Placement>, wanted: Vec<Wanted>) -> Vec<Placement> {
    let mut fleet = Fleet::new(inventory);
    let mut out: Vec<Placement> = Vec::new();
    for (mi, model) in catalog.models.iter().enumerate() {
        let mi = mi as u32;
        enter(&mut fleet, catalog, mi, std::iter::empty());
        let compiled: Vec<_> = model.profiles.iter().map(|p| fleet.compile(p)).collect();
        for p in kept.iter().filter(|p| p.model == mi) {
            let c = &compiled[p.profile as usize];
            if fits(&fleet, p, c) {
                fleet.commit(p, c);
                out.push(p.clone());
            }
        }
    }
    for (mi, model) in catalog.models.iter().enumerate() {
        let mi = mi as u32;
        enter(&mut fleet, catalog, mi, out.iter());
        let compiled: Vec<_> = model.profiles.iter().map(|p| fleet.compile(p)).collect();
        let mut next = 1_000_000u32;
        for w in wanted.iter().filter(|w| w.model == mi) {
            let c = &compiled[w.profile as usize];
            if !w.nodes.iter().all(|&n| admits(&fleet, n, c, w.fabric)) {
                continue;
            }
            let mut nodes = w.nodes.clone();
            if w.fabric.is_some() {
                nodes.sort_by_key(|&n| rank::emptiest(fleet.free_of(n, c.class), n));
            }
            let assigns = nodes
                .iter()
                .map(|&n| match (&c.profile.mig_profile, c.class) {
                    (Some(_), _) => {
                        let (g, m) = fleet.free_migs(n, c)[0];
                        fleet.assign(n, c, vec![g], vec![m])
                    }
                    (None, Some(class)) => {
                        fleet.assign(n, c, fleet.pick_gpus(n, class, c.profile.gpus_per_node), Vec::new())
                    }
                    (None, None) => fleet.assign(n, c, Vec::new(), Vec::new()),
                })
                .collect();
            let p = Placement { model: mi, replica: next, profile: w.profile, fabric: w.fabric, nodes: assigns };
            next += 1;
            fleet.commit(&p, c);
            out.push(p);
        }
    }
    out
}

/// Numbers each model's placements with its lowest missing indices: a
/// placement keeps its number where that is one of them, the others take
/// the rest in order.
pub(super) fn renumber(mut found: Vec<Placement>, missing: &[Vec<u32>]) -> Vec<Placement> {
    found.sort_by_key(|p| (p.model, p.replica));
    let mut out = Vec::with_capacity(found.len());
    let mut start = 0;
    while start < found.len() {
        let m = found[start].model;
        let end = start + found[start..].iter().take_while(|p| p.model == m).count();
        let group: Vec<Placement> = found[start..end].to_vec();
        let allowed: Vec<u32> = missing[m as usize].iter().copied().take(group.len()).collect();
        let mut taken = vec![false; allowed.len()];
        let mut keeps = vec![false; group.len()];
        for (i, p) in group.iter().enumerate() {
            if let Ok(pos) = allowed.binary_search(&p.replica)
                && !taken[pos]
            {
                taken[pos] = true;
                keeps[i] = true;
            }
        }
        let mut free = allowed.iter().zip(&taken).filter(|(_, t)| !**t).map(|(r, _)| *r);
        // As many numbers as placements: no candidate places more than a
        // model misses; one that did would lose its extra replicas here.
        let mut numbered = Vec::with_capacity(group.len());
        for (i, mut p) in group.into_iter().enumerate() {
            if !keeps[i] {
                let Some(r) = free.next() else { continue };
                p.replica = r;
            }
            numbered.push(p);
        }
        let mut group = numbered;
        group.sort_by_key(|p| p.replica);
        out.extend(group);
        start = end;
    }
    out
}

/// The plan: `placements` committed as they are, then each model's
/// missing replicas tried once more the default way (models in catalog
/// order), and those left explained on the fleet as it then stands.
pub(super) fn plan<'i>(
    catalog: &Catalog,
    inventory: &'i Inventory,
    placements: &[Placement],
    missing: &[Vec<u32>],
    order_plan: &Plan,
) -> (Plan, Fleet<'i>) {
    let mut fleet = Fleet::new(inventory);
    let mut index = Index::new(&fleet);
    let mut placed: Vec<Placement> = Vec::with_capacity(placements.len());
    for (mi, model) in catalog.models.iter().enumerate() {
        enter(&mut fleet, catalog, mi as u32, std::iter::empty());
        let compiled: Vec<_> = model.profiles.iter().map(|p| fleet.compile(p)).collect();
        for p in placements.iter().filter(|p| p.model == mi as u32) {
            let c = &compiled[p.profile as usize];
            if fits(&fleet, p, c) {
                let changes = fleet.commit(p, c);
                index.update(&fleet, &changes);
                placed.push(p.clone());
            }
        }
    }
    let mut unplaced: Vec<Decision> = Vec::new();
    for (mi, model) in catalog.models.iter().enumerate() {
        let mi32 = mi as u32;
        let mut left: Vec<u32> = missing[mi]
            .iter()
            .copied()
            .filter(|r| !placed.iter().any(|p| p.model == mi32 && p.replica == *r))
            .collect();
        if left.is_empty() {
            continue;
        }
        enter(&mut fleet, catalog, mi32, placed.iter());
        let order = profile_order(&model.profiles);
        let compiled: Vec<_> = model.profiles.iter().map(|p| fleet.compile(p)).collect();
        let mut failed = vec![false; model.profiles.len()];
        while let Some(&r) = left.first() {
            let Some(p) = index.place(&fleet, &compiled, &order, &mut failed, mi32, r) else { break };
            let changes = fleet.commit(&p, &compiled[p.profile as usize]);
            index.update(&fleet, &changes);
            placed.push(p);
            left.remove(0);
        }
        if let Some(&first) = left.first() {
            let a = reference::attempt(&fleet, &compiled, &order, mi32, first);
            let why = Arc::new(Why { rejections: a.rejections.to_vec(), tallies: a.tallies });
            unplaced.extend(left.iter().map(|&replica| Decision::Unplaced { model: mi32, replica, why: why.clone() }));
        }
    }
    placed.sort_by_key(|p| (p.model, p.replica));
    let summary = Summary {
        wanted: order_plan.summary.wanted,
        existing: order_plan.summary.existing,
        placed: placed.len() as u64,
        unplaced: unplaced.len() as u64,
        ..Summary::default()
    };
    let mut decisions: Vec<Decision> = placed.into_iter().map(Decision::Placed).collect();
    decisions.extend(unplaced);
    let plan = Plan {
        decisions,
        summary,
        surplus: order_plan.surplus.clone(),
        attempts: Vec::new(),
        existing_of_explained: Vec::new(),
        pack: super::Pack::Most,
    };
    (plan, fleet)
}
