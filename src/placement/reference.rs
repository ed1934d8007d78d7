//! The placement rules (docs/placement.md) as written: every profile, every pool, every node, each check in
//! order, every rejection recorded. Slow on purpose — it is the definition
//! the fast path is held to, and the record `explain-placement` prints.

use super::state::{Compiled, Fleet};
use super::{Assign, Attempt, Placement, Pool, PoolTally, Reason, Rejection, rank};

/// One replica, profile by profile in `order`, recording every rejection and
/// how many nodes qualified in each pool.
pub fn attempt(fleet: &Fleet<'_>, compiled: &[Compiled<'_>], order: &[u32], model: u32, replica: u32) -> Attempt {
    let mut out =
        Attempt { replica, through: replica, placement: None, rejections: Default::default(), tallies: Vec::new() };
    for &pi in order {
        let p = &compiled[pi as usize];
        let found = if p.profile.nodes <= 1 { single(fleet, p, pi, &mut out) } else { multi(fleet, p, pi, &mut out) };
        if let Some((fabric, nodes)) = found {
            out.placement = Some(Placement { model, replica, profile: pi, fabric, nodes });
            break;
        }
    }
    // What `candidates` reserved and did not use (an explained model's
    // placed replicas are rejected by a few nodes, not the fleet).
    out.rejections.shrink_to_fit();
    out
}

/// Hard checks for one node in one pool. `Ok(None)` is a silent skip (not
/// attached to the fabric); `Ok(Some(free))` a candidate with its free GPUs.
pub(super) fn check(
    fleet: &Fleet<'_>,
    node: u32,
    p: &Compiled<'_>,
    fabric: Option<u32>,
) -> Result<Option<u32>, Reason> {
    if let Some(r) = fleet.state_reason(node) {
        return Err(r);
    }
    if fleet.avoided(node) {
        return Err(fleet.avoid_reason());
    }
    if let Some(f) = fabric {
        match fleet.attached(node, f) {
            None => return Ok(None),
            Some(false) => return Err(Reason::NoAdapters(f)),
            Some(true) => {}
        }
    }
    fleet.static_check(node, p)?;
    let free = if p.profile.cpu_only() {
        0
    } else if p.profile.mig_profile.is_some() {
        let free = fleet.free_migs(node, p).len() as u32;
        if free == 0 {
            return Err(Reason::Mig { free });
        }
        free
    } else {
        let free = fleet.free_of(node, p.class);
        if free < p.profile.gpus_per_node {
            return Err(Reason::Gpus { free });
        }
        free
    };
    fleet.fit_check(node, p)?;
    fleet.resource_check(node, p)?;
    Ok(Some(free))
}

fn candidates(fleet: &Fleet<'_>, p: &Compiled<'_>, pi: u32, pool: Pool, out: &mut Attempt) -> Vec<(u32, u32)> {
    let fabric = match pool {
        Pool::Fabric(f) => Some(f),
        _ => None,
    };
    let mut cands = Vec::new();
    // Room for a rejection from every node, reserved once: an unplaced
    // replica on a large fleet is rejected by nearly all of them, and
    // growing the list by doubling copied it over and over.
    out.rejections.reserve(fleet.node_count() as usize);
    for node in 0..fleet.node_count() {
        match check(fleet, node, p, fabric) {
            Ok(Some(free)) => cands.push((node, free)),
            Ok(None) => {}
            Err(reason) => out.rejections.push(Rejection { profile: pi, pool, node: Some(node), reason }),
        }
    }
    out.tallies.push(PoolTally { profile: pi, pool, qualified: cands.len() as u32 });
    cands
}

/// The node a single-node replica goes to: ordered by `rank`, then the
/// nodes holding the weights moved to the front (keeping that order), the
/// first. Only the first is ever taken, so it is looked for, not sorted
/// for: an explained model of 1,500 replicas sorted 10,000 nodes each time.
fn first<K: Ord>(fleet: &Fleet<'_>, p: &Compiled<'_>, cands: &[(u32, u32)], rank: impl Fn(&(u32, u32)) -> K) -> u32 {
    let holders = !p.holders.is_empty();
    cands.iter().min_by_key(|c| (holders && !fleet.holds(c.0, p), rank(c))).expect("candidates").0
}

fn single(fleet: &Fleet<'_>, p: &Compiled<'_>, pi: u32, out: &mut Attempt) -> Option<(Option<u32>, Vec<Assign>)> {
    let cands = candidates(fleet, p, pi, Pool::Single, out);
    if cands.is_empty() {
        return None;
    }
    if p.profile.cpu_only() {
        // Nothing to pack, so spread: two CPU replicas on one machine fight
        // over the same cores, and no GPU allocation stops them.
        let node = first(fleet, p, &cands, |c| rank::spread(fleet.allocs[c.0 as usize], c.0));
        return Some((None, vec![fleet.assign(node, p, Vec::new(), Vec::new())]));
    }
    // Best fit: the fullest node that still fits keeps whole nodes free for
    // models that cannot be split. Weights beat packing: moving tens of
    // gigabytes costs more than an imperfectly packed node.
    let node = first(fleet, p, &cands, |c| rank::best_fit(c.1, c.0));
    if p.profile.mig_profile.is_some() {
        // The lowest (GPU, MIG index) of the node's free devices.
        let (gpu, mig) = fleet.free_migs(node, p)[0];
        return Some((None, vec![fleet.assign(node, p, vec![gpu], vec![mig])]));
    }
    let class = p.class.expect("a GPU candidate has free GPUs of a known class");
    Some((None, vec![fleet.assign(node, p, fleet.pick_gpus(node, class, p.profile.gpus_per_node), Vec::new())]))
}

fn multi(fleet: &Fleet<'_>, p: &Compiled<'_>, pi: u32, out: &mut Attempt) -> Option<(Option<u32>, Vec<Assign>)> {
    let want = p.profile.nodes;
    if fleet.fabrics.is_empty() {
        out.rejections.push(Rejection { profile: pi, pool: Pool::Nothing, node: None, reason: Reason::NoFabric });
        return None;
    }
    // Candidates are gathered per fabric and a replica is formed from within
    // one of them. There is no path that combines fabrics, however well the
    // nodes would otherwise fit.
    for &f in &fleet.fabric_order {
        let pool = Pool::Fabric(f);
        let mut cands = candidates(fleet, p, pi, pool, out);
        if (cands.len() as u32) < want {
            let reason = Reason::PoolTooSmall { qualify: cands.len() as u32 };
            out.rejections.push(Rejection { profile: pi, pool, node: None, reason });
            continue;
        }
        // The emptiest nodes: a replica spanning nodes is the least movable
        // thing in the fleet, so it gets the cleanest machines.
        cands.sort_by_key(|c| rank::emptiest(c.1, c.0));
        let nodes = cands[..want as usize]
            .iter()
            .map(|&(node, _)| {
                let gpus = p.class.map_or_else(Vec::new, |c| fleet.pick_gpus(node, c, p.profile.gpus_per_node));
                fleet.assign(node, p, gpus, Vec::new())
            })
            .collect();
        return Some((Some(f), nodes));
    }
    None
}
