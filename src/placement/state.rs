//! The fleet as placement sees it: names turned into indices, GPU freedom in
//! flat arrays, and the counters that change as replicas are placed.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::rc::Rc;

use super::{Placement, Reason, StateCode};
use crate::catalog::Profile;
use crate::inventory::{Inventory, Node};
use crate::taints::Taint;
use crate::units::millis;

mod checks;
mod release;
mod vendor;

pub struct Fleet<'i> {
    pub inv: &'i Inventory,
    /// The sorted set of fabric names any node reports, whatever its state.
    pub fabrics: Vec<&'i str>,
    /// The order a multi-node replica tries the fabrics in: NVLink domains
    /// first, then the rest, each by name (with no NVLink domain, by name).
    pub fabric_order: Vec<u32>,
    pub classes: Vec<&'i str>,
    class_ids: HashMap<&'i str, u32>,
    /// Per class: the vendor of its GPUs (`None` when both make one), whose
    /// GPU taint a replica of that class tolerates.
    class_vendor: Vec<Option<crate::vendor::Vendor>>,
    /// Per node: offset of its first GPU in the flat arrays below.
    gpu_base: Vec<u32>,
    gpu_class: Vec<u32>,
    /// Healthy and not allocated.
    gpu_free: Vec<bool>,
    /// Per node: (class, free GPUs of that class), one entry per class it has.
    pub free: Vec<Vec<(u32, u32)>>,
    /// Per node: allocation entries of any model, for CPU spreading.
    pub allocs: Vec<u32>,
    /// Per node: (fabric index, whether it reports adapters on it).
    pub attach: Vec<Vec<(u32, bool)>>,
    /// Per node: how many replicas of the model being placed it holds, as
    /// (stamp, count); a stamp other than the current one means none.
    held: Vec<(u32, u32)>,
    stamp: u32,
    /// The model's `replicas_per_node`: a node holding this many is avoided.
    per_node: u32,
    /// model name -> replica index -> nodes, from the inventory's allocations.
    existing: HashMap<&'i str, BTreeMap<u32, Vec<u32>>>,
    /// source -> nodes that report holding it, ascending.
    holders: HashMap<&'i str, Rc<[u32]>>,
    /// Per node: the known engines it reports, one bit each in the order of
    /// `engines::ENGINES` (None: it reports none).
    engine_sets: Vec<Option<u64>>,
    /// MIG devices held, as (node, GPU index, MIG index).
    mig_held: HashSet<(u32, u32, u32)>,
    /// Per node: the CPUs workloads may use, in millicores, and the memory
    /// they may request, MiB (`None`: not reported, never checked).
    cpu_total: Vec<Option<u64>>,
    mem_total: Vec<Option<u64>>,
    /// Per node: what its allocations (pending ones too) and this plan's
    /// replicas hold of them.
    cpu_held: Vec<u64>,
    mem_held: Vec<u64>,
    /// The distinct taints nodes carry that keep workloads off, as written
    /// and parsed; per node, the ones it carries.
    pub taints: Vec<&'i str>,
    taint_parsed: Vec<Taint<'i>>,
    node_taints: Vec<Vec<u32>>,
}

/// A profile with its names resolved against this fleet.
pub struct Compiled<'p> {
    pub profile: &'p Profile,
    /// The GPU class's id, if any node has that class.
    pub class: Option<u32>,
    pub holders: Rc<[u32]>,
    /// The profile's engine as a bit of a node's engine set.
    pub engine: u64,
    /// What the replica needs per GPU (a GPU profile, a MIG device) or of
    /// host memory (a CPU-only one), when the model gives its size.
    pub need: Option<super::memory::Need>,
    /// Per taint of the fleet (`Fleet::taints`): whether the profile
    /// tolerates it.
    pub tolerates: Vec<bool>,
}

const MIB: f64 = 1024.0 * 1024.0;

impl<'i> Fleet<'i> {
    pub fn new(inv: &'i Inventory) -> Self {
        let n = inv.nodes.len();
        let mut fabrics: Vec<&str> =
            inv.nodes.iter().flat_map(|node| node.fabrics.iter().map(|f| f.name.as_str())).collect();
        fabrics.sort_unstable();
        fabrics.dedup();
        let fabric_order = fabric_order(inv, &fabrics);
        let mut classes: Vec<&str> =
            inv.nodes.iter().flat_map(|node| node.gpus.iter().map(|g| g.class.as_str())).collect();
        classes.sort_unstable();
        classes.dedup();
        let class_ids: HashMap<&str, u32> = classes.iter().enumerate().map(|(i, c)| (*c, i as u32)).collect();
        let class_vendor = inv.class_vendors(&class_ids);
        let mut f = Fleet {
            inv,
            gpu_base: Vec::with_capacity(n + 1),
            gpu_class: Vec::new(),
            gpu_free: Vec::new(),
            free: Vec::with_capacity(n),
            allocs: Vec::with_capacity(n),
            attach: Vec::with_capacity(n),
            held: vec![(0, 0); n],
            stamp: 0,
            per_node: 1,
            existing: HashMap::new(),
            holders: HashMap::new(),
            engine_sets: Vec::with_capacity(n),
            mig_held: HashSet::new(),
            cpu_total: Vec::with_capacity(n),
            mem_total: Vec::with_capacity(n),
            cpu_held: Vec::with_capacity(n),
            mem_held: Vec::with_capacity(n),
            taints: Vec::new(),
            taint_parsed: Vec::new(),
            node_taints: Vec::with_capacity(n),
            fabrics,
            fabric_order,
            classes,
            class_ids,
            class_vendor,
        };
        let mut holders: HashMap<&str, Vec<u32>> = HashMap::new();
        let mut taint_ids: HashMap<&str, u32> = HashMap::new();
        for (ni, node) in inv.nodes.iter().enumerate() {
            f.add_whole_node(node, &mut taint_ids);
            f.gpu_base.push(f.gpu_class.len() as u32);
            let mut taken = vec![false; node.gpus.len()];
            for a in &node.allocations {
                for &g in &a.gpus {
                    if let Some(pos) = node.gpu_position(g) {
                        taken[pos] = true;
                    }
                }
                if let [g] = a.gpus[..] {
                    f.mig_held.extend(a.mig_devices.iter().map(|&m| (ni as u32, g, m)));
                }
                // A GPU in MIG mode held whole: none of its MIG devices is
                // free either, whatever another allocation says.
                if a.mig_devices.is_empty() {
                    for gpu in a.gpus.iter().filter_map(|&g| node.gpu_position(g).map(|p| &node.gpus[p])) {
                        if gpu.in_mig_mode() {
                            f.mig_held.extend(gpu.mig_devices.iter().map(|m| (ni as u32, gpu.index, m.index)));
                        }
                    }
                }
                f.existing.entry(a.model.as_str()).or_default().entry(a.replica).or_default().push(ni as u32);
            }
            let mut free: Vec<(u32, u32)> = Vec::new();
            for (pos, g) in node.gpus.iter().enumerate() {
                let c = f.class_ids[g.class.as_str()];
                // A GPU in MIG mode is never free whole: CUDA cannot use it so.
                let is_free = g.healthy && !taken[pos] && !g.in_mig_mode();
                f.gpu_class.push(c);
                f.gpu_free.push(is_free);
                match free.iter_mut().find(|e| e.0 == c) {
                    Some(e) => e.1 += u32::from(is_free),
                    None => free.push((c, u32::from(is_free))),
                }
            }
            f.free.push(free);
            f.allocs.push(node.allocations.len() as u32);
            f.attach.push(attachments(&f.fabrics, node));
            if let Some(w) = &node.weights {
                for s in w {
                    let list = holders.entry(s.source.as_str()).or_default();
                    if list.last() != Some(&(ni as u32)) {
                        list.push(ni as u32);
                    }
                }
            }
            f.engine_sets.push(node.reports_engines().then(|| node.engine_names().fold(0, |m, e| m | engine_bit(e))));
        }
        f.gpu_base.push(f.gpu_class.len() as u32);
        f.holders = holders.into_iter().map(|(k, v)| (k, Rc::from(v))).collect();
        for list in f.existing.values_mut() {
            for nodes in list.values_mut() {
                nodes.sort_unstable();
                nodes.dedup();
            }
        }
        f
    }

    /// Whether the node is attached to fabric `f`, and if so whether
    /// through adapters (`attach` is sorted by fabric).
    pub fn attached(&self, node: u32, f: u32) -> Option<bool> {
        let list = &self.attach[node as usize];
        list.binary_search_by_key(&f, |a| a.0).ok().map(|i| list[i].1)
    }

    /// A node's CPUs, memory and taints: what the scheduler admits work on
    /// beside its GPUs.
    fn add_whole_node(&mut self, node: &'i Node, taint_ids: &mut HashMap<&'i str, u32>) {
        self.cpu_total.push(node.cpus.map(millis));
        self.mem_total.push(match node.memory_allocatable_mb {
            Some(m) => Some(m),
            None => (node.memory_total_mb > 0).then_some(node.memory_total_mb),
        });
        self.cpu_held.push(node.allocations.iter().filter_map(|a| a.cpus).map(millis).fold(0, u64::saturating_add));
        self.mem_held.push(node.allocations.iter().filter_map(|a| a.memory_mb).fold(0, u64::saturating_add));
        let mut mine = Vec::new();
        // Each taint once, in the node's order, without a search per taint.
        let mut seen = HashSet::new();
        for (text, parsed) in node.repelling_taints() {
            let id = *taint_ids.entry(text).or_insert_with(|| {
                self.taints.push(text);
                self.taint_parsed.push(parsed);
                (self.taints.len() - 1) as u32
            });
            if seen.insert(id) {
                mine.push(id);
            }
        }
        self.node_taints.push(mine);
    }

    pub fn node(&self, i: u32) -> &'i Node {
        &self.inv.nodes[i as usize]
    }

    pub fn node_count(&self) -> u32 {
        self.inv.nodes.len() as u32
    }

    pub fn compile<'p>(&self, p: &'p Profile) -> Compiled<'p> {
        Compiled {
            profile: p,
            class: p.gpu_class.as_deref().and_then(|c| self.class_ids.get(c).copied()),
            holders: p.source.as_deref().and_then(|s| self.holders.get(s)).cloned().unwrap_or_else(|| Rc::from([])),
            engine: engine_bit(p.engine.name),
            need: super::memory::need(p),
            tolerates: {
                let by_key = crate::taints::ByKey::new(&p.tolerations, self.implicit_toleration(p));
                self.taint_parsed.iter().map(|t| by_key.tolerates(t)).collect()
            },
        }
    }

    /// Starts a model: counts the replicas of it each node already runs
    /// (surplus ones too; a multi-node replica once on each of its nodes),
    /// and returns its existing replica indices with their nodes.
    pub fn begin_model(&mut self, _model: u32, name: &str, per_node: u32) -> BTreeMap<u32, Vec<u32>> {
        // A fresh stamp each time, not one per model: a model begun again
        // (`--pack most` commits a plan model by model, then explains)
        // counts from its existing replicas again, not on top of before.
        self.stamp += 1;
        self.per_node = per_node.max(1);
        let existing = self.existing.get(name).cloned().unwrap_or_default();
        for nodes in existing.values() {
            for &n in nodes {
                self.hold(n);
            }
        }
        existing
    }

    /// One more replica of the current model on the node.
    pub(super) fn hold(&mut self, node: u32) {
        let h = &mut self.held[node as usize];
        *h = if h.0 == self.stamp { (h.0, h.1 + 1) } else { (self.stamp, 1) };
    }

    /// The replicas of a model the inventory already runs, with their nodes.
    pub fn existing_of(&self, model: &str) -> Option<&BTreeMap<u32, Vec<u32>>> {
        self.existing.get(model)
    }

    /// Whether the node already holds as many replicas of the current model
    /// as one node may (one, unless the model sets `replicas_per_node`).
    pub fn avoided(&self, node: u32) -> bool {
        let h = self.held[node as usize];
        h.0 == self.stamp && h.1 >= self.per_node
    }

    /// The avoid rejection, for the model being placed.
    pub fn avoid_reason(&self) -> Reason {
        Reason::Avoid { per_node: self.per_node }
    }

    pub fn state_reason(&self, node: u32) -> Option<Reason> {
        StateCode::of(self.node(node).state).map(Reason::State)
    }

    /// Records a placement: its GPUs are taken, its nodes hold one more
    /// allocation and one more replica of this model. Says what changed per
    /// node, for whoever keeps an index of free GPUs.
    pub fn commit(&mut self, p: &Placement, prof: &Compiled<'_>) -> Vec<Change> {
        let mut changes = Vec::with_capacity(p.nodes.len());
        for a in &p.nodes {
            let ni = a.node as usize;
            let node = self.inv.nodes.get(ni).expect("placement names a fleet node");
            let mut free = None;
            if let [g] = a.gpus[..]
                && !a.mig_devices.is_empty()
            {
                self.mig_held.extend(a.mig_devices.iter().map(|&m| (a.node, g, m)));
            } else if let Some(c) = prof.class {
                let before = self.free_of(a.node, Some(c));
                for &g in &a.gpus {
                    if let Some(pos) = node.gpu_position(g) {
                        self.gpu_free[self.gpu_base[ni] as usize + pos] = false;
                    }
                }
                let after = before - a.gpus.len() as u32;
                if let Some(e) = self.free[ni].iter_mut().find(|e| e.0 == c) {
                    e.1 = after;
                }
                free = Some((c, before, after));
            }
            self.cpu_held[ni] = self.cpu_held[ni].saturating_add(a.cpus_millis.unwrap_or(0));
            self.mem_held[ni] = self.mem_held[ni].saturating_add(a.memory_mb.unwrap_or(0));
            changes.push(Change { node: a.node, free, allocs_before: self.allocs[ni] });
            self.allocs[ni] += 1;
            self.hold(a.node);
        }
        changes
    }
}

/// An engine's bit in a node's engine set: its place among the engines
/// llmgw knows. An engine it does not know is no profile's, so has none.
fn engine_bit(name: &str) -> u64 {
    crate::engines::ENGINES.iter().position(|e| e.name == name).map_or(0, |i| 1 << i)
}

/// What committing a placement changed on one node.
pub struct Change {
    pub node: u32,
    /// The class whose free GPUs changed, and their count before and after.
    pub free: Option<(u32, u32, u32)>,
    pub allocs_before: u32,
}

/// The fabrics' indices, NVLink domains (a fabric any node says is one)
/// first; a stable partition, so each part stays in name order.
fn fabric_order(inv: &Inventory, fabrics: &[&str]) -> Vec<u32> {
    let mut nvlink = vec![false; fabrics.len()];
    for f in inv.nodes.iter().flat_map(|n| &n.fabrics).filter(|f| f.kind == crate::inventory::FabricKind::Nvlink) {
        if let Ok(i) = fabrics.binary_search(&f.name.as_str()) {
            nvlink[i] = true;
        }
    }
    let mut order: Vec<u32> = (0..fabrics.len() as u32).collect();
    order.sort_by_key(|&f| !nvlink[f as usize]);
    order
}

/// A node's fabrics by id, sorted, each once: a fabric listed twice counts
/// as its first entry (what `Node::fabric` finds, and so what the HCAs come
/// from). Sorted, so that a node on thousands of fabrics is looked up by
/// bisection, never by scanning.
fn attachments(fabrics: &[&str], node: &Node) -> Vec<(u32, bool)> {
    let mut attach: Vec<(u32, bool)> = node
        .fabrics
        .iter()
        .map(|fab| {
            let id = fabrics.binary_search(&fab.name.as_str()).unwrap_or(0) as u32;
            // Adapters not reported pass; reported as none, fail.
            (id, fab.hcas.as_ref().is_none_or(|h| !h.is_empty()))
        })
        .collect();
    // Stable: of equal ids, the first listed stays first and is kept.
    attach.sort_by_key(|a| a.0);
    attach.dedup_by_key(|a| a.0);
    attach
}
