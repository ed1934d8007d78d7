//! The indexed path: the same decisions as `reference`, found without
//! scanning the fleet for every replica.
//!
//! Ready nodes sit in buckets by how many GPUs of a class they have free, one
//! set of buckets per class and per (fabric, class). Best fit walks buckets
//! upwards from the profile's GPU count, the emptiest-first multi-node search
//! walks them downwards, and within a bucket nodes come in id order — which is
//! exactly the order the reference path's stable sorts produce. CPU-only
//! profiles walk the ready nodes by allocation count the same way.

use std::collections::{BTreeSet, HashMap};

use super::state::{Compiled, Fleet};
use super::{Assign, Placement};

type Buckets = Vec<BTreeSet<u32>>;

pub struct Index {
    /// class -> free count -> ready nodes with that many free.
    by_class: Vec<Buckets>,
    /// (fabric, class) -> free count -> ready nodes with adapters on the fabric.
    by_fabric_class: HashMap<(u32, u32), Buckets>,
    /// fabric -> ready nodes with adapters on it, for CPU-only multi-node.
    by_fabric: Vec<Vec<u32>>,
    /// (allocation count, node) over ready nodes, for CPU spreading.
    by_allocs: BTreeSet<(u32, u32)>,
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
    if before > 0 {
        if let Some(set) = b.get_mut(before as usize) {
            set.remove(&node);
        }
    }
    bucket_insert(b, after, node);
}

impl Index {
    pub fn new(fleet: &Fleet<'_>) -> Self {
        let mut ix = Index {
            by_class: vec![Vec::new(); fleet.classes.len()],
            by_fabric_class: HashMap::new(),
            by_fabric: vec![Vec::new(); fleet.fabrics.len()],
            by_allocs: BTreeSet::new(),
        };
        for node in 0..fleet.node_count() {
            if fleet.state_reason(node).is_some() {
                continue;
            }
            ix.by_allocs.insert((fleet.allocs[node as usize], node));
            for &(fabric, adapters) in &fleet.attach[node as usize] {
                if adapters {
                    ix.by_fabric[fabric as usize].push(node);
                }
            }
            for &(class, free) in &fleet.free[node as usize] {
                bucket_insert(&mut ix.by_class[class as usize], free, node);
                for &(fabric, adapters) in &fleet.attach[node as usize] {
                    if adapters {
                        bucket_insert(
                            ix.by_fabric_class.entry((fabric, class)).or_default(),
                            free,
                            node,
                        );
                    }
                }
            }
        }
        ix
    }

    pub fn free_changed(
        &mut self,
        fleet: &Fleet<'_>,
        node: u32,
        class: u32,
        before: u32,
        after: u32,
    ) {
        if fleet.state_reason(node).is_some() {
            return;
        }
        bucket_move(&mut self.by_class[class as usize], before, after, node);
        for &(fabric, adapters) in &fleet.attach[node as usize] {
            if adapters {
                if let Some(b) = self.by_fabric_class.get_mut(&(fabric, class)) {
                    bucket_move(b, before, after, node);
                }
            }
        }
    }

    pub fn allocs_changed(&mut self, fleet: &Fleet<'_>, node: u32, before: u32) {
        if self.by_allocs.remove(&(before, node)) {
            self.by_allocs.insert((fleet.allocs[node as usize], node));
        }
    }

    /// Places one replica, or says no; records nothing about why.
    pub fn place(
        &self,
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
            let found = if p.profile.nodes <= 1 {
                self.single(fleet, p)
            } else {
                self.multi(fleet, p)
            };
            match found {
                Some((fabric, nodes)) => {
                    return Some(Placement {
                        model,
                        replica,
                        profile: pi,
                        fabric,
                        nodes,
                    });
                }
                None => failed[pi as usize] = true,
            }
        }
        None
    }

    fn passes(fleet: &Fleet<'_>, node: u32, p: &Compiled<'_>) -> bool {
        !fleet.avoided(node) && fleet.static_check(node, p).is_ok()
    }

    fn single(&self, fleet: &Fleet<'_>, p: &Compiled<'_>) -> Option<(Option<u32>, Vec<Assign>)> {
        let prof = p.profile;
        let ready = |n: u32| fleet.state_reason(n).is_none();
        if prof.cpu_only() {
            // Weight holders first; among them, and then among everyone, the
            // fewest allocations, then node order.
            let holder = p
                .holders
                .iter()
                .copied()
                .filter(|&n| ready(n) && Self::passes(fleet, n, p))
                .min_by_key(|&n| (fleet.allocs[n as usize], n));
            let node = holder.or_else(|| {
                self.by_allocs
                    .iter()
                    .map(|&(_, n)| n)
                    .find(|&n| Self::passes(fleet, n, p))
            })?;
            return Some((
                None,
                vec![Assign {
                    node,
                    gpus: Vec::new(),
                }],
            ));
        }
        let class = p.class?;
        let want = prof.gpus_per_node;
        let holder = p
            .holders
            .iter()
            .copied()
            .filter(|&n| ready(n))
            .map(|n| (fleet.free_of(n, Some(class)), n))
            .filter(|&(free, n)| free >= want && Self::passes(fleet, n, p))
            .min();
        let node = match holder {
            Some((_, n)) => n,
            None => {
                let buckets = &self.by_class[class as usize];
                buckets
                    .iter()
                    .skip(want as usize)
                    .flat_map(|set| set.iter().copied())
                    .find(|&n| Self::passes(fleet, n, p))?
            }
        };
        Some((
            None,
            vec![Assign {
                node,
                gpus: fleet.pick_gpus(node, class, want),
            }],
        ))
    }

    fn multi(&self, fleet: &Fleet<'_>, p: &Compiled<'_>) -> Option<(Option<u32>, Vec<Assign>)> {
        let prof = p.profile;
        let want = prof.nodes as usize;
        for f in 0..fleet.fabrics.len() as u32 {
            let mut chosen: Vec<u32> = Vec::with_capacity(want);
            if prof.cpu_only() {
                for &n in &self.by_fabric[f as usize] {
                    if Self::passes(fleet, n, p) {
                        chosen.push(n);
                        if chosen.len() == want {
                            break;
                        }
                    }
                }
            } else {
                let class = p.class?;
                let Some(buckets) = self.by_fabric_class.get(&(f, class)) else {
                    continue;
                };
                'walk: for set in buckets.iter().skip(prof.gpus_per_node as usize).rev() {
                    for &n in set {
                        if Self::passes(fleet, n, p) {
                            chosen.push(n);
                            if chosen.len() == want {
                                break 'walk;
                            }
                        }
                    }
                }
            }
            if chosen.len() == want {
                let nodes = chosen
                    .into_iter()
                    .map(|node| Assign {
                        node,
                        gpus: p.class.map_or_else(Vec::new, |c| {
                            fleet.pick_gpus(node, c, prof.gpus_per_node)
                        }),
                    })
                    .collect();
                return Some((Some(f), nodes));
            }
        }
        None
    }
}
