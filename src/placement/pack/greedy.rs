//! Greedy packing in other orders of the models: the default's rules for
//! each replica (best fit, weights first, the emptiest nodes for a replica
//! across nodes), but the models taken largest replica first. Bin packing
//! has long done it so (first-fit-decreasing): a TP1 model spread one GPU
//! per node before the TP8 model comes keeps every TP8 replica out.

use crate::catalog::{Catalog, Profile};
use crate::inventory::Inventory;
use crate::placement::fast::Index;
use crate::placement::state::Fleet;
use crate::placement::{Placement, profile_order};

/// The orders of the models worth a pass, each different from catalog
/// order (which is the default plan itself) and from one another.
pub(super) fn orders(catalog: &Catalog) -> Vec<Vec<usize>> {
    let n = catalog.models.len();
    let catalog_order: Vec<usize> = (0..n).collect();
    let size = |m: usize| catalog.models[m].profiles.iter().map(gpus_of).max().unwrap_or(0);
    // Fewest ways to place first: a model with one profile has nowhere
    // else to go when another takes its GPUs.
    let choices = |m: usize| catalog.models[m].profiles.len();
    let mut largest = catalog_order.clone();
    largest.sort_by_key(|&m| std::cmp::Reverse(size(m)));
    let mut narrowest = catalog_order.clone();
    narrowest.sort_by_key(|&m| (choices(m), std::cmp::Reverse(size(m))));
    let mut out: Vec<Vec<usize>> = Vec::new();
    for o in [largest, narrowest] {
        if o != catalog_order && !out.contains(&o) {
            out.push(o);
        }
    }
    out
}

/// GPUs one replica of the profile holds in all (a MIG device counts as
/// none: it takes a slice no whole-GPU replica could use).
fn gpus_of(p: &Profile) -> u32 {
    if p.mig_profile.is_some() { 0 } else { p.gpus_per_node * p.nodes }
}

/// The default's choices for each replica, the models in `order`; each
/// model's new replicas numbered from its lowest missing index.
pub(super) fn pass(catalog: &Catalog, inventory: &Inventory, order: &[usize], missing: &[Vec<u32>]) -> Vec<Placement> {
    let mut fleet = Fleet::new(inventory);
    let mut index = Index::new(&fleet);
    let mut out = Vec::new();
    for &mi in order {
        let model = &catalog.models[mi];
        if missing[mi].is_empty() {
            continue;
        }
        fleet.begin_model(mi as u32, &model.name, model.replicas_per_node);
        let tried = profile_order(&model.profiles);
        let compiled: Vec<_> = model.profiles.iter().map(|p| fleet.compile(p)).collect();
        let mut failed = vec![false; model.profiles.len()];
        for &replica in &missing[mi] {
            // Once one replica finds no home, neither does any later one:
            // nothing was freed meanwhile.
            let Some(p) = index.place(&fleet, &compiled, &tried, &mut failed, mi as u32, replica) else { break };
            let changes = fleet.commit(&p, &compiled[p.profile as usize]);
            index.update(&fleet, &changes);
            out.push(p);
        }
    }
    out
}
