//! What an unplaced replica's rejections come to: reasons grouped per pool
//! (the default JSON form), and the closest misses with what this plan put
//! on them. A fleet of 10,000 nodes rejects each unplaced replica 10,000
//! times; operators read the grouped form, and what it would take.

use std::collections::HashMap;

use serde::Serialize;

use super::Names;
use crate::catalog::Profile;
use crate::inventory::Node;
use crate::placement::{Decision, Placement, Pool, PoolTally, Reason, Rejection, Why};

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
    // Per (profile, pool) in the order tried: each reason and its nodes.
    type ByReason = Vec<(Reason, Vec<Option<u32>>)>;
    let mut pools: Vec<(u32, Pool, ByReason)> = Vec::new();
    // Indexed: a node on thousands of fabrics makes thousands of pools.
    let mut index: std::collections::HashMap<(u32, Pool), usize> = std::collections::HashMap::new();
    // Rejections come in runs of one pool (every node of it in turn): the
    // pool of the last one is asked first, and the index only between runs.
    let mut last: Option<((u32, Pool), usize)> = None;
    for r in rejections {
        let key = (r.profile, r.pool);
        let i = match last {
            Some((k, i)) if k == key => i,
            _ => {
                let i = *index.entry(key).or_insert_with(|| {
                    pools.push((r.profile, r.pool, Vec::new()));
                    pools.len() - 1
                });
                last = Some((key, i));
                i
            }
        };
        let reasons = &mut pools[i].2;
        match reasons.iter_mut().find(|(reason, _)| *reason == r.reason) {
            Some((_, nodes)) => nodes.push(r.node),
            None => reasons.push((r.reason, vec![r.node])),
        }
    }
    let mut out = Vec::new();
    for (profile, pool, mut reasons) in pools {
        // Stable: equal counts keep their first occurrence's order.
        reasons.sort_by_key(|(_, nodes)| std::cmp::Reverse(nodes.len()));
        let prof = names.profile(model, profile);
        for (reason, nodes) in reasons {
            out.push(ReasonGroup {
                profile: &prof.name,
                pool: names.pool(pool, prof),
                reason: names.reason(reason, prof),
                count: nodes.len(),
                nodes: nodes.iter().flatten().map(|&n| names.node_json(n)).collect(),
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
