//! The indexed path: the same decisions as `reference`, found without
//! scanning the fleet for every replica.
//!
//! Ready nodes sit in buckets by how many GPUs of a class they have free, one
//! set of buckets per class and per (fabric, class). Best fit walks buckets
//! upwards from the profile's GPU count, the emptiest-first multi-node search
//! walks them downwards, and within a bucket nodes come in id order — which is
//! exactly the order the reference path's stable sorts produce. CPU-only
//! profiles walk the ready nodes by allocation count the same way.
//!
//! The checks that cannot change during a plan (selector, engine, memory,
//! disk) are evaluated once per distinct profile shape, into a set of nodes
//! that pass them; a walk then costs a bit test per node. When that set is
//! much smaller than the walk would be (a selector naming one rack), it is
//! scanned directly instead.

use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

use super::state::{Change, Compiled, Fleet};
use super::{Assign, Placement, rank};

type Buckets = Vec<BTreeSet<u32>>;

pub struct Index {
    /// class -> free count -> ready nodes with that many free.
    by_class: Vec<Buckets>,
    /// class -> how many ready nodes have GPUs of it.
    class_nodes: Vec<u32>,
    /// (fabric, class) -> free count -> ready nodes with adapters on the fabric.
    by_fabric_class: HashMap<(u32, u32), Buckets>,
    /// fabric -> ready nodes with adapters on it, for CPU-only multi-node.
    by_fabric: Vec<Vec<u32>>,
    /// (allocation count, node) over ready nodes, for CPU spreading.
    by_allocs: BTreeSet<(u32, u32)>,
    ready: u32,
    /// Ready nodes passing a profile shape's unchanging checks.
    passing: HashMap<Shape, Rc<Passing>>,
}

/// What the unchanging checks of a profile depend on.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Shape {
    selector: Vec<(String, String)>,
    engine: &'static str,
    min_memory_gb: u64,
    min_disk_gb: u64,
    /// Only when the disk check applies: it is skipped where these weights are.
    disk_source: Option<String>,
    /// The memory fit: the class, the MIG profile, the bytes needed and the
    /// share of the device usable (as bits, to hash).
    fit: Option<(Option<String>, Option<String>, u64, u64)>,
    /// Which of the fleet's taints the profile tolerates.
    tolerates: Vec<bool>,
    /// The class, for an engine that runs on one vendor's GPUs only: the
    /// vendor check depends on it.
    vendor_class: Option<String>,
}

pub(super) struct Passing {
    bits: Vec<u64>,
    /// Ascending.
    pub(super) list: Vec<u32>,
}

impl Passing {
    fn has(&self, n: u32) -> bool {
        self.bits[(n / 64) as usize] & (1 << (n % 64)) != 0
    }
}

fn bucket_insert(b: &mut Buckets, free: u32, node: u32) {
    if free == 0 {
        return;
    }
    if b.len() <= free as usize {
        b.resize_with(free as usize + 1, BTreeSet::new);
    }
    b[free as usize].insert(node);
}

fn bucket_move(b: &mut Buckets, before: u32, after: u32, node: u32) {
    if before > 0
        && let Some(set) = b.get_mut(before as usize)
    {
        set.remove(&node);
    }
    bucket_insert(b, after, node);
}

impl Index {
    pub fn new(fleet: &Fleet<'_>) -> Self {
        let mut ix = Index {
            by_class: vec![Vec::new(); fleet.classes.len()],
            class_nodes: vec![0; fleet.classes.len()],
            by_fabric_class: HashMap::new(),
            by_fabric: vec![Vec::new(); fleet.fabrics.len()],
            by_allocs: BTreeSet::new(),
            ready: 0,
            passing: HashMap::new(),
        };
        for node in 0..fleet.node_count() {
            if fleet.state_reason(node).is_some() {
                continue;
            }
            ix.ready += 1;
            ix.by_allocs.insert((fleet.allocs[node as usize], node));
            for &(fabric, adapters) in &fleet.attach[node as usize] {
                if adapters {
                    ix.by_fabric[fabric as usize].push(node);
                }
            }
            for &(class, free) in &fleet.free[node as usize] {
                ix.class_nodes[class as usize] += 1;
                bucket_insert(&mut ix.by_class[class as usize], free, node);
                for &(fabric, adapters) in &fleet.attach[node as usize] {
                    if adapters {
                        bucket_insert(ix.by_fabric_class.entry((fabric, class)).or_default(), free, node);
                    }
                }
            }
        }
        ix
    }

    /// Moves the nodes a commit changed to their new buckets.
    pub fn update(&mut self, fleet: &Fleet<'_>, changes: &[Change]) {
        for c in changes {
            if let Some((class, before, after)) = c.free {
                self.free_changed(fleet, c.node, class, before, after);
            }
            self.allocs_changed(fleet, c.node, c.allocs_before);
        }
    }

    fn free_changed(&mut self, fleet: &Fleet<'_>, node: u32, class: u32, before: u32, after: u32) {
        if fleet.state_reason(node).is_some() {
            return;
        }
        bucket_move(&mut self.by_class[class as usize], before, after, node);
        for &(fabric, adapters) in &fleet.attach[node as usize] {
            if adapters && let Some(b) = self.by_fabric_class.get_mut(&(fabric, class)) {
                bucket_move(b, before, after, node);
            }
        }
    }

    fn allocs_changed(&mut self, fleet: &Fleet<'_>, node: u32, before: u32) {
        if self.by_allocs.remove(&(before, node)) {
            self.by_allocs.insert((fleet.allocs[node as usize], node));
        }
    }

    /// The ready nodes passing `p`'s unchanging checks, computed once per shape.
    pub(super) fn passing(&mut self, fleet: &Fleet<'_>, p: &Compiled<'_>) -> Rc<Passing> {
        let prof = p.profile;
        let disk_applies = prof.min_disk_gb > 0 && prof.source.is_some();
        let shape = Shape {
            selector: prof.node_selector.clone(),
            engine: prof.engine.name,
            min_memory_gb: prof.min_memory_gb,
            min_disk_gb: if disk_applies { prof.min_disk_gb } else { 0 },
            disk_source: if disk_applies { prof.source.clone() } else { None },
            fit: p
                .need
                .map(|n| (prof.gpu_class.clone(), prof.mig_profile.clone(), n.bytes.to_bits(), n.usable.to_bits())),
            tolerates: p.tolerates.clone(),
            vendor_class: if prof.engine.runs_on_every_vendor() { None } else { prof.gpu_class.clone() },
        };
        if let Some(set) = self.passing.get(&shape) {
            return set.clone();
        }
        let n = fleet.node_count();
        let mut set = Passing { bits: vec![0; (n as usize).div_ceil(64)], list: Vec::new() };
        for node in 0..n {
            if fleet.state_reason(node).is_none()
                && fleet.static_check(node, p).is_ok()
                && fleet.fit_check(node, p).is_ok()
            {
                set.bits[(node / 64) as usize] |= 1 << (node % 64);
                set.list.push(node);
            }
        }
        let set = Rc::new(set);
        self.passing.insert(shape, set.clone());
        set
    }

    /// Places one replica, or says no; records nothing about why.
    pub fn place(
        &mut self,
        fleet: &Fleet<'_>,
        compiled: &[Compiled<'_>],
        order: &[u32],
        failed: &mut [bool],
        model: u32,
        replica: u32,
    ) -> Option<Placement> {
        for &pi in order {
            if failed[pi as usize] {
                continue;
            }
            let p = &compiled[pi as usize];
            let passing = self.passing(fleet, p);
            let found =
                if p.profile.nodes <= 1 { self.single(fleet, p, &passing) } else { self.multi(fleet, p, &passing) };
            match found {
                Some((fabric, nodes)) => return Some(Placement { model, replica, profile: pi, fabric, nodes }),
                None => failed[pi as usize] = true,
            }
        }
        None
    }

    fn single(&self, fleet: &Fleet<'_>, p: &Compiled<'_>, ok: &Passing) -> Option<(Option<u32>, Vec<Assign>)> {
        let prof = p.profile;
        let usable = |n: u32| ok.has(n) && !fleet.avoided(n) && fleet.resource_check(n, p).is_ok();
        // Few nodes pass the unchanging checks: look at each of them rather
        // than walk past everyone else.
        let scan = (ok.list.len() as u64) * 4 <= u64::from(self.ready);
        if prof.cpu_only() {
            // Weight holders first; among them, and then among everyone, the
            // fewest allocations, then node order.
            let rank = |n: u32| rank::spread(fleet.allocs[n as usize], n);
            let holder = p.holders.iter().copied().filter(|&n| usable(n)).min_by_key(|&n| rank(n));
            let node = match holder {
                Some(n) => n,
                None if scan => ok.list.iter().copied().filter(|&n| usable(n)).min_by_key(|&n| rank(n))?,
                None => self.by_allocs.iter().map(|&(_, n)| n).find(|&n| usable(n))?,
            };
            return Some((None, vec![fleet.assign(node, p, Vec::new(), Vec::new())]));
        }
        if prof.mig_profile.is_some() {
            return self.single_mig(fleet, p, ok);
        }
        let class = p.class?;
        let want = prof.gpus_per_node;
        let best_of = |nodes: &mut dyn Iterator<Item = u32>| {
            nodes
                .filter(|&n| usable(n))
                .map(|n| (fleet.free_of(n, Some(class)), n))
                .filter(|&(free, _)| free >= want)
                .min_by_key(|&(free, n)| rank::best_fit(free, n))
                .map(|(_, n)| n)
        };
        let node = match best_of(&mut p.holders.iter().copied()) {
            Some(n) => n,
            None if (ok.list.len() as u64) * 4 <= u64::from(self.class_nodes[class as usize]) => {
                best_of(&mut ok.list.iter().copied())?
            }
            None => self.by_class[class as usize]
                .iter()
                .skip(want as usize)
                .flat_map(|set| set.iter().copied())
                .find(|&n| usable(n))?,
        };
        Some((None, vec![fleet.assign(node, p, fleet.pick_gpus(node, class, want), Vec::new())]))
    }

    /// One MIG device: the node with the fewest free devices of the profile
    /// (weight holders first), then its lowest (GPU, MIG index). MIG
    /// profiles are few; their candidates are scanned, not indexed.
    fn single_mig(&self, fleet: &Fleet<'_>, p: &Compiled<'_>, ok: &Passing) -> Option<(Option<u32>, Vec<Assign>)> {
        let best = |nodes: &mut dyn Iterator<Item = u32>| {
            nodes
                .filter(|&n| ok.has(n) && !fleet.avoided(n) && fleet.resource_check(n, p).is_ok())
                .map(|n| (fleet.free_migs(n, p), n))
                .filter(|(free, _)| !free.is_empty())
                .min_by_key(|(free, n)| rank::best_fit(free.len() as u32, *n))
        };
        let (free, node) = best(&mut p.holders.iter().copied()).or_else(|| best(&mut ok.list.iter().copied()))?;
        let (gpu, mig) = free[0];
        Some((None, vec![fleet.assign(node, p, vec![gpu], vec![mig])]))
    }

    fn multi(&self, fleet: &Fleet<'_>, p: &Compiled<'_>, ok: &Passing) -> Option<(Option<u32>, Vec<Assign>)> {
        let prof = p.profile;
        let want = prof.nodes as usize;
        let usable = |n: u32| ok.has(n) && !fleet.avoided(n) && fleet.resource_check(n, p).is_ok();
        for &f in &fleet.fabric_order {
            let mut chosen: Vec<u32> = Vec::with_capacity(want);
            if prof.cpu_only() {
                chosen.extend(self.by_fabric[f as usize].iter().copied().filter(|&n| usable(n)).take(want));
            } else {
                let class = p.class?;
                let Some(buckets) = self.by_fabric_class.get(&(f, class)) else { continue };
                // Buckets from the most free down, each in node order: the
                // order of `rank::emptiest`, without sorting.
                chosen.extend(
                    buckets
                        .iter()
                        .skip(prof.gpus_per_node as usize)
                        .rev()
                        .flat_map(|set| set.iter().copied())
                        .filter(|&n| usable(n))
                        .take(want),
                );
            }
            if chosen.len() == want {
                let nodes = chosen
                    .into_iter()
                    .map(|node| {
                        let gpus = p.class.map_or_else(Vec::new, |c| fleet.pick_gpus(node, c, prof.gpus_per_node));
                        fleet.assign(node, p, gpus, Vec::new())
                    })
                    .collect();
                return Some((Some(f), nodes));
            }
        }
        None
    }
}
