//! What an unplaced replica's rejections come to: reasons grouped per pool
//! (the default JSON form), and the closest misses with what this plan put
//! on them. A fleet of 10,000 nodes rejects each unplaced replica 10,000
//! times; operators read the grouped form, and what it would take.

use std::collections::HashMap;

use serde::Serialize;

use crate::catalog::Profile;
use crate::inventory::Node;
use crate::placement::{Decision, Placement, Pool, PoolTally, Reason, Rejection, Rejections, Why};
use crate::wording::Names;

/// One reason within one profile and pool, and the nodes it applies to.
#[derive(Serialize)]
pub struct ReasonGroup<'a> {
    pub profile: &'a str,
    pub pool: String,
    pub reason: String,
    pub count: usize,
    pub nodes: Vec<&'a serde_json::value::RawValue>,
}

impl PartialEq for ReasonGroup<'_> {
    fn eq(&self, other: &Self) -> bool {
        (self.profile, &self.pool, &self.reason, self.count) == (other.profile, &other.pool, &other.reason, other.count)
            && self.nodes.iter().map(|n| n.get()).eq(other.nodes.iter().map(|n| n.get()))
    }
}

/// Groups rejections: per profile and pool in the order tried, one entry
/// per distinct reason, most nodes first, ties by first occurrence. The
/// counts of a pool add up to the rejections recorded for it.
pub fn grouped<'a>(names: &'a Names<'_>, model: u32, rejections: &[Rejection]) -> Vec<ReasonGroup<'a>> {
    grouped_of(names, model, &rejections.iter().cloned().collect())
}

/// `grouped`, of rejections kept compact: their distinct (profile, pool,
/// reason)s are the groups already, in the order first recorded, so no
/// rejection is hashed (an explained model has millions).
pub fn grouped_of<'a>(names: &'a Names<'_>, model: u32, rejections: &Rejections) -> Vec<ReasonGroup<'a>> {
    let kinds = rejections.kinds();
    let mut nodes: Vec<Vec<u32>> = vec![Vec::new(); kinds.len()];
    let mut counts = vec![0usize; kinds.len()];
    for (node, k) in rejections.entries() {
        counts[k] += 1;
        if let Some(n) = node {
            nodes[k].push(n);
        }
    }
    // Per (profile, pool), in the order first tried: its kinds, in order.
    let mut pools: Vec<((u32, Pool), Vec<usize>)> = Vec::new();
    let mut index: HashMap<(u32, Pool), usize> = HashMap::new();
    for (k, &(profile, pool, _)) in kinds.iter().enumerate() {
        let i = *index.entry((profile, pool)).or_insert_with(|| {
            pools.push(((profile, pool), Vec::new()));
            pools.len() - 1
        });
        pools[i].1.push(k);
    }
    let mut out = Vec::with_capacity(kinds.len());
    for ((profile, pool), mut ks) in pools {
        // Stable: equal counts keep their first occurrence's order.
        ks.sort_by_key(|&k| std::cmp::Reverse(counts[k]));
        let prof = names.profile(model, profile);
        let pool_name = names.pool(pool, prof);
        for k in ks {
            out.push(ReasonGroup {
                profile: &prof.name,
                pool: pool_name.clone(),
                reason: names.reason(kinds[k].2, prof),
                count: counts[k],
                nodes: nodes[k].iter().map(|&n| names.node_json(n)).collect(),
            });
        }
    }
    out
}

/// A replica placed earlier in this plan, holding GPUs on a near node.
#[derive(Clone, Serialize, PartialEq)]
pub struct Taken<'a> {
    pub model: &'a str,
    pub replica: u32,
    pub gpus: Vec<u32>,
}

#[derive(Serialize, PartialEq)]
pub struct Near<'a> {
    pub node: &'a str,
    pub free: u32,
    pub needs: u32,
    pub taken_in_plan: Vec<Taken<'a>>,
}

/// Per profile and pool tried: how many nodes qualified against how many
/// the profile needs, and the nodes that failed only for free GPUs.
#[derive(Serialize, PartialEq)]
pub struct Closest<'a> {
    pub profile: &'a str,
    pub pool: String,
    pub qualify: u32,
    pub needs: u32,
    pub nearest: Vec<Near<'a>>,
}

/// The placements made so far in a plan, per node, with the class of GPUs
/// they hold, as the decisions are walked in order.
#[derive(Default)]
pub struct SoFar<'a> {
    on: HashMap<u32, Vec<(&'a str, Taken<'a>)>>,
}

impl<'a> SoFar<'a> {
    pub fn add(&mut self, names: &Names<'a>, p: &Placement) {
        let prof = names.profile(p.model, p.profile);
        let Some(class) = prof.gpu_class.as_deref() else { return };
        for a in &p.nodes {
            let taken = Taken { model: &names.model(p.model).name, replica: p.replica, gpus: a.gpus.clone() };
            self.on.entry(a.node).or_default().push((class, taken));
        }
    }

    fn taken(&self, node: u32, class: &str) -> Vec<Taken<'a>> {
        self.on.get(&node).into_iter().flatten().filter(|(c, _)| *c == class).map(|(_, t)| t.clone()).collect()
    }
}

/// How many nearest nodes are shown per pool.
const NEAREST: usize = 3;

pub fn closest<'a>(names: &Names<'a>, model: u32, why: &Why, so_far: &SoFar<'a>) -> Vec<Closest<'a>> {
    closest_of(names, model, &why.rejections, &why.tallies, so_far)
}

pub fn closest_of<'a>(
    names: &Names<'a>,
    model: u32,
    rejections: &[Rejection],
    tallies: &[PoolTally],
    so_far: &SoFar<'a>,
) -> Vec<Closest<'a>> {
    // The GPU-count misses of each pool, gathered once: thousands of pools
    // (a node on thousands of fabrics) must not each scan every rejection.
    let miss = |r: &Rejection| match (r.node, r.reason) {
        (Some(n), Reason::Gpus { free } | Reason::Mig { free }) => Some((n, free)),
        _ => None,
    };
    // A few pools: one pass over the rejections each is cheapest; many
    // (a node on thousands of fabrics): gathered once, by pool.
    let mut misses: std::collections::HashMap<(u32, Pool), Vec<(u32, u32)>> = std::collections::HashMap::new();
    let indexed = tallies.len() > 8;
    if indexed {
        for r in rejections {
            if let Some(m) = miss(r) {
                misses.entry((r.profile, r.pool)).or_default().push(m);
            }
        }
    }
    tallies
        .iter()
        .map(|t| {
            let prof = names.profile(model, t.profile);
            let class = prof.gpu_class.as_deref().unwrap_or_default();
            let mut near: Vec<(u32, u32)> = if indexed {
                misses.get(&(t.profile, t.pool)).map_or_else(Vec::new, Clone::clone)
            } else {
                rejections.iter().filter(|r| r.profile == t.profile && r.pool == t.pool).filter_map(miss).collect()
            };
            near.retain(|&(n, _)| has_hardware(names.fleet.node(n), prof));
            // Most free first; ties keep the order tried.
            near.sort_by_key(|&(_, free)| std::cmp::Reverse(free));
            let needs = if prof.mig_profile.is_some() { 1 } else { prof.gpus_per_node };
            Closest {
                profile: &prof.name,
                pool: names.pool(t.pool, prof),
                qualify: t.qualified,
                needs: prof.nodes,
                nearest: near
                    .into_iter()
                    .take(NEAREST)
                    .map(|(n, free)| Near { node: names.node(n), free, needs, taken_in_plan: so_far.taken(n, class) })
                    .collect(),
            }
        })
        .collect()
}

/// Whether the node has any GPU of the profile's class (healthy or not, in
/// MIG mode or not), and for a MIG profile a device of that profile on one:
/// freeing GPUs of a class a node lacks is not a step an operator can take,
/// so such a node is never a closest miss.
pub(crate) fn has_hardware(node: &Node, prof: &Profile) -> bool {
    let Some(class) = prof.gpu_class.as_deref() else { return true };
    node.gpus.iter().filter(|g| g.class == class).any(|g| match &prof.mig_profile {
        None => true,
        Some(mig) => g.mig_devices.iter().any(|d| &d.profile == mig),
    })
}

/// Walks a plan's decisions with the placements made before each.
pub fn walk<'d, 'a, F: FnMut(&'d Decision, &SoFar<'a>)>(names: &Names<'a>, decisions: &'d [Decision], mut f: F) {
    let mut so_far = SoFar::default();
    for d in decisions {
        f(d, &so_far);
        if let Decision::Placed(p) = d {
            so_far.add(names, p);
        }
    }
}
