//! The most replicas any plan places, by trying every plan: every way of
//! choosing each model's replicas among its profiles and the nodes (or
//! node sets of one fabric) that pass the checks at that point. Only for
//! tiny fleets; the yardstick `--pack most` is held to there.

use crate::catalog::Catalog;
use crate::inventory::Inventory;
use crate::placement::pack::assemble::enter;
use crate::placement::reference;
use crate::placement::state::{Compiled, Fleet};
use crate::placement::{Placement, profile_order};

/// One way to place a replica of a model: a profile, a fabric for one
/// across nodes, and its nodes.
struct Way {
    profile: u32,
    fabric: Option<u32>,
    nodes: Vec<u32>,
}

/// The most new replicas a plan of these inputs places.
pub(super) fn most(cat: &Catalog, inv: &Inventory) -> u64 {
    let mut fleet = Fleet::new(inv);
    let missing: Vec<u32> = cat
        .models
        .iter()
        .map(|m| {
            let have = fleet.existing_of(&m.name).map_or(0, |e| e.keys().filter(|&&r| r < m.replicas).count());
            m.replicas - have as u32
        })
        .collect();
    let ways: Vec<Vec<Way>> = cat.models.iter().map(|m| ways_of(&fleet, m)).collect();
    let mut search = Search { cat, missing, ways, placed: Vec::new(), best: 0 };
    search.model(&mut fleet, 0, 0);
    search.best
}

fn ways_of(fleet: &Fleet<'_>, m: &crate::catalog::Model) -> Vec<Way> {
    let n = fleet.node_count();
    let mut out = Vec::new();
    for pi in profile_order(&m.profiles) {
        let k = m.profiles[pi as usize].nodes;
        if k <= 1 {
            out.extend((0..n).map(|node| Way { profile: pi, fabric: None, nodes: vec![node] }));
            continue;
        }
        for f in 0..fleet.fabrics.len() as u32 {
            let on: Vec<u32> = (0..n).filter(|&x| fleet.attached(x, f).is_some()).collect();
            for set in subsets(&on, k as usize) {
                out.push(Way { profile: pi, fabric: Some(f), nodes: set });
            }
        }
    }
    out
}

fn subsets(items: &[u32], k: usize) -> Vec<Vec<u32>> {
    if k == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for (i, &x) in items.iter().enumerate() {
        for mut rest in subsets(&items[i + 1..], k - 1) {
            rest.insert(0, x);
            out.push(rest);
        }
    }
    out
}

struct Search<'c> {
    cat: &'c Catalog,
    missing: Vec<u32>,
    ways: Vec<Vec<Way>>,
    placed: Vec<(Placement, usize)>,
    best: u64,
}

impl Search<'_> {
    fn left_after(&self, m: usize) -> u64 {
        self.missing[m..].iter().map(|&d| u64::from(d)).sum()
    }

    /// Places model `m`'s replicas, each with a way at or after `from`
    /// (replicas of one model are alike: one order of each choice is
    /// enough), then the next models.
    fn model(&mut self, fleet: &mut Fleet<'_>, m: usize, from: usize) {
        let count = self.placed.len() as u64;
        self.best = self.best.max(count);
        if m >= self.cat.models.len() || count + self.left_after(m) <= self.best {
            return;
        }
        let mine = self.placed.iter().filter(|(p, _)| p.model == m as u32).count() as u32;
        enter(fleet, self.cat, m as u32, self.placed.iter().map(|(p, _)| p));
        let compiled: Vec<Compiled<'_>> = self.cat.models[m].profiles.iter().map(|p| fleet.compile(p)).collect();
        if mine < self.missing[m] {
            for w in from..self.ways[m].len() {
                let way = &self.ways[m][w];
                let c = &compiled[way.profile as usize];
                if !way.nodes.iter().all(|&n| matches!(reference::check(fleet, n, c, way.fabric), Ok(Some(_)))) {
                    continue;
                }
                let nodes = way
                    .nodes
                    .iter()
                    .map(|&n| match (&c.profile.mig_profile, c.class) {
                        (Some(_), _) => {
                            let (g, d) = fleet.free_migs(n, c)[0];
                            fleet.assign(n, c, vec![g], vec![d])
                        }
                        (None, Some(class)) => {
                            fleet.assign(n, c, fleet.pick_gpus(n, class, c.profile.gpus_per_node), Vec::new())
                        }
                        (None, None) => fleet.assign(n, c, Vec::new(), Vec::new()),
                    })
                    .collect();
                let p = Placement { model: m as u32, replica: mine, profile: way.profile, fabric: way.fabric, nodes };
                fleet.commit(&p, c);
                self.placed.push((p, w));
                self.model(fleet, m, w);
                // Back in this model's count, the replica still held, then
                // taken back.
                enter(fleet, self.cat, m as u32, self.placed.iter().map(|(p, _)| p));
                let (p, _) = self.placed.pop().expect("pushed above");
                fleet.release(&p, &compiled[p.profile as usize]);
            }
        }
        self.model(fleet, m + 1, 0);
        enter(fleet, self.cat, m as u32, self.placed.iter().map(|(p, _)| p));
    }
}
