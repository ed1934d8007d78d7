//! Which of two plans `--pack most` prefers, as docs/placement.md
//! ("Packing the most") orders
//! the tie-breaks: the most replicas; then, model by model in catalog
//! order, the most of the earlier model; then, model by model, the most on
//! the profile tried first, then the second...; then the most replicas on
//! the very nodes and GPUs the default plan gave them.

use std::collections::HashMap;

use crate::catalog::Catalog;
use crate::placement::{Placement, profile_order};

/// Where a replica runs, for comparing with the default plan: the model,
/// and each node with its GPUs and MIG devices, in rank order.
type Spot = (u32, Vec<(u32, Vec<u32>, Vec<u32>)>);

fn spot(p: &Placement) -> Spot {
    (p.model, p.nodes.iter().map(|a| (a.node, a.gpus.clone(), a.mig_devices.clone())).collect())
}

/// The default plan's placements, as a multiset of spots.
pub(super) struct Matches(HashMap<Spot, u32>);

impl Matches {
    pub(super) fn of(default: &[&Placement]) -> Matches {
        let mut m = HashMap::new();
        for p in default {
            *m.entry(spot(p)).or_insert(0) += 1;
        }
        Matches(m)
    }

    /// How many of `plan`'s replicas sit where the default put one.
    fn count<'p>(&self, plan: impl Iterator<Item = &'p Placement>) -> u64 {
        let mut left = self.0.clone();
        let mut n = 0;
        for p in plan {
            if let Some(c) = left.get_mut(&spot(p))
                && *c > 0
            {
                *c -= 1;
                n += 1;
            }
        }
        n
    }
}

/// The plan's key: larger is better, compared element by element.
pub(super) fn key<'p>(
    catalog: &Catalog,
    plan: impl Iterator<Item = &'p Placement> + Clone,
    matches: &Matches,
) -> Vec<u64> {
    let models = &catalog.models;
    let ranks: Vec<Vec<usize>> = models
        .iter()
        .map(|m| {
            let mut rank = vec![0; m.profiles.len()];
            for (r, &pi) in profile_order(&m.profiles).iter().enumerate() {
                rank[pi as usize] = r;
            }
            rank
        })
        .collect();
    let mut per_model = vec![0u64; models.len()];
    let mut per_rank: Vec<Vec<u64>> = models.iter().map(|m| vec![0; m.profiles.len()]).collect();
    for p in plan.clone() {
        per_model[p.model as usize] += 1;
        per_rank[p.model as usize][ranks[p.model as usize][p.profile as usize]] += 1;
    }
    let mut key = Vec::with_capacity(2 + models.len() * 3);
    key.push(per_model.iter().sum());
    key.extend(&per_model);
    for r in per_rank {
        key.extend(r);
    }
    key.push(matches.count(plan));
    key
}
