//! The integer program of `--pack most` (docs/placement.md, "Packing the
//! most"): the same rules as the default, as counts.
//!
//! - `Single`: replicas of a model with a one-node profile on one node.
//! - `Group`: replicas of a model with a profile across `k` nodes of one
//!   fabric; its `Part`s say how often each node of the fabric is used.
//!   A part is at most the group (a replica uses a node once) and the parts
//!   add up to `k` times the group; such counts always split into replicas
//!   of `k` distinct nodes (deal the nodes out round-robin).
//!
//! A variable exists only where the node passes every check of the
//! default on the fleet as it stands (state, spread, fabric adapters,
//! selector, taints, engine, memory, disk, GPUs, memory fit, vendor, CPUs,
//! memory requests). What placing changes is in the rows: free GPUs per
//! class, free MIG devices per profile, `replicas_per_node` per model, and
//! CPUs and memory. A request the profile does not state is counted as
//! what the default would give it (`Fleet::assign`): then any order of
//! committing the plan passes the CPU and memory checks. For the bound the
//! same rows are written as a relaxation instead: one CPU for a request
//! not stated (every replica on a node that reports CPUs takes at least
//! one), no memory.

use crate::catalog::Catalog;
use crate::inventory::Inventory;
use crate::placement::state::{Compiled, Fleet};
use crate::placement::{profile_order, reference};

/// The most integer variables the solver is given; past it the greedy
/// orders decide. A 40-node fleet with eight models needs a few hundred;
/// microlp's branch and bound stays within milliseconds to a second up to
/// a few thousand (docs/placement.md has the measurements).
pub const MAX_VARS: usize = 4000;
/// Nodes times profiles beyond which the program is not even built.
const MAX_PAIRS: usize = 60_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Var {
    Single { model: u32, profile: u32, node: u32 },
    Group { model: u32, profile: u32, fabric: u32, k: u32 },
    Part { group: usize, node: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Op {
    Le,
    Eq,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Row {
    pub terms: Vec<(usize, f64)>,
    pub op: Op,
    pub rhs: f64,
}

/// Per catalog model: how many replicas are missing, and the variables
/// that count them, all and by the rank of their profile.
#[derive(Default)]
pub(super) struct ModelVars {
    pub demand: u32,
    pub count: Vec<usize>,
    pub by_rank: Vec<Vec<usize>>,
}

pub(super) struct Program {
    pub vars: Vec<Var>,
    /// Upper bounds with requests read firmly, and loosely (for the bound).
    pub ub: Vec<u32>,
    pub ub_loose: Vec<u32>,
    /// Rows every variant shares.
    pub rows: Vec<Row>,
    /// CPU and memory rows with requests as the default would make them.
    pub firm: Vec<Row>,
    /// The same rows as a relaxation (for the bound).
    pub loose: Vec<Row>,
    pub models: Vec<ModelVars>,
}

impl Program {
    /// Whether its optimum is the true one: the CPU and memory rows are
    /// the same whether read firmly or loosely.
    pub fn exact(&self) -> bool {
        self.firm == self.loose && self.ub == self.ub_loose
    }

    /// Builds the program for the fleet as the inventory leaves it, or
    /// `None` when it would be too large to solve.
    pub fn build(catalog: &Catalog, inventory: &Inventory, missing: &[Vec<u32>]) -> Option<Program> {
        let pairs: usize = catalog.models.iter().map(|m| m.profiles.len()).sum::<usize>() * inventory.nodes.len();
        if pairs > MAX_PAIRS {
            return None;
        }
        let mut b = Builder::new(inventory);
        for (mi, model) in catalog.models.iter().enumerate() {
            let demand = missing[mi].len() as u32;
            b.prog.models.push(ModelVars { demand, ..ModelVars::default() });
            if demand == 0 {
                continue;
            }
            b.fleet.begin_model(mi as u32, &model.name, model.replicas_per_node);
            let compiled: Vec<_> = model.profiles.iter().map(|p| b.fleet.compile(p)).collect();
            for (rank, &pi) in profile_order(&model.profiles).iter().enumerate() {
                b.add_profile(mi as u32, pi, rank, &compiled[pi as usize], demand);
            }
            b.finish_model(mi as u32, demand);
            if b.prog.vars.len() > MAX_VARS {
                return None;
            }
        }
        Some(b.finish())
    }
}

/// Whether the program is small enough to be worth building at all.
pub(super) fn worth_solving(catalog: &Catalog, inventory: &Inventory) -> bool {
    catalog.models.iter().map(|m| m.profiles.len()).sum::<usize>() * inventory.nodes.len() <= MAX_PAIRS
}

/// What one replica of a profile asks of a node, in each reading.
#[derive(Clone, Copy)]
struct Ask {
    /// GPU class (whole GPUs) or MIG (class, profile) slot, and how many.
    gpus: Option<(Slot, u32)>,
    cpu_firm: u64,
    cpu_loose: u64,
    mem_firm: u64,
    mem_loose: u64,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Slot {
    Class(u32),
    /// A MIG profile's devices, by (class, index of the profile's name in
    /// the builder's list).
    Mig(u32, u32),
}

/// How many replicas of the profile the node could take on its own, and
/// what each asks of it; `None` where it fails a check.
pub(super) fn units(fleet: &Fleet<'_>, node: u32, p: &Compiled<'_>, fabric: Option<u32>, loose: bool) -> Option<u32> {
    let free = reference::check(fleet, node, p, fabric).ok()??;
    let mut n = fleet.per_node().saturating_sub(fleet.held_here(node));
    let prof = p.profile;
    if !prof.cpu_only() {
        n = n.min(if prof.mig_profile.is_some() { free } else { free / prof.gpus_per_node.max(1) });
    }
    let ask = ask(fleet, node, p);
    let (cpu, mem) = fleet.free_resources(node);
    let (c, m) = if loose { (ask.cpu_loose, ask.mem_loose) } else { (ask.cpu_firm, ask.mem_firm) };
    if let (Some(free), true) = (cpu, c > 0) {
        n = n.min((free / c) as u32);
    }
    if let (Some(free), true) = (mem, m > 0 && prof.serving.memory_gb.is_some()) {
        n = n.min((free / m) as u32);
    }
    (n > 0).then_some(n)
}

fn ask(fleet: &Fleet<'_>, node: u32, p: &Compiled<'_>) -> Ask {
    let prof = p.profile;
    let (gpus, migs) = match (&prof.mig_profile, p.class) {
        (Some(_), _) => match fleet.free_migs(node, p).first() {
            Some(&(g, m)) => (vec![g], vec![m]),
            None => (Vec::new(), Vec::new()),
        },
        (None, Some(c)) => (fleet.pick_gpus(node, c, prof.gpus_per_node), Vec::new()),
        (None, None) => (Vec::new(), Vec::new()),
    };
    // What the default would ask, on the node as it stands.
    let a = fleet.assign(node, p, gpus, migs);
    let reports_cpus = a.cpus_millis.is_some();
    Ask {
        gpus: None,
        cpu_firm: a.cpus_millis.unwrap_or(0).max(if reports_cpus { 1000 } else { 0 }),
        cpu_loose: match prof.serving.cpus {
            Some(c) => u64::from(c) * 1000,
            None if reports_cpus => 1000,
            None => 0,
        },
        mem_firm: a.memory_mb.unwrap_or(0),
        mem_loose: prof.serving.memory_gb.map_or(0, |g| g.saturating_mul(1024)),
    }
}

struct Builder<'i> {
    fleet: Fleet<'i>,
    prog: Program,
    /// Per node: the variables on it, with what each asks.
    on_node: Vec<Vec<(usize, Ask)>>,
    /// Per node: (model, variables of it on the node) of the current model.
    room: Vec<Vec<usize>>,
    migs: Vec<String>,
}

impl<'i> Builder<'i> {
    fn new(inventory: &'i Inventory) -> Self {
        let fleet = Fleet::new(inventory);
        let n = fleet.node_count() as usize;
        Builder {
            fleet,
            prog: Program {
                vars: Vec::new(),
                ub: Vec::new(),
                ub_loose: Vec::new(),
                rows: Vec::new(),
                firm: Vec::new(),
                loose: Vec::new(),
                models: Vec::new(),
            },
            on_node: vec![Vec::new(); n],
            room: vec![Vec::new(); n],
            migs: Vec::new(),
        }
    }

    fn var(&mut self, v: Var, ub: (u32, u32)) -> usize {
        self.prog.vars.push(v);
        self.prog.ub.push(ub.0);
        self.prog.ub_loose.push(ub.1);
        self.prog.vars.len() - 1
    }

    /// Replicas of the profile the node could take on its own, firmly and
    /// loosely read; `None` where it fails a check.
    fn units(&self, node: u32, p: &Compiled<'_>, fabric: Option<u32>) -> Option<(u32, u32)> {
        let firm = units(&self.fleet, node, p, fabric, false)?;
        Some((firm, units(&self.fleet, node, p, fabric, true).unwrap_or(firm).max(firm)))
    }

    fn slot(&mut self, p: &Compiled<'_>) -> Option<(Slot, u32)> {
        let class = p.class?;
        Some(match &p.profile.mig_profile {
            Some(mig) => {
                let i = match self.migs.iter().position(|m| m == mig) {
                    Some(i) => i,
                    None => {
                        self.migs.push(mig.clone());
                        self.migs.len() - 1
                    }
                };
                (Slot::Mig(class, i as u32), 1)
            }
            None => (Slot::Class(class), p.profile.gpus_per_node),
        })
    }

    /// A variable on a node: it counts towards the node's rows.
    fn on(&mut self, node: u32, v: usize, p: &Compiled<'_>) {
        let mut a = ask(&self.fleet, node, p);
        a.gpus = self.slot(p);
        self.on_node[node as usize].push((v, a));
        self.room[node as usize].push(v);
    }

    fn add_profile(&mut self, mi: u32, pi: u32, rank: usize, p: &Compiled<'_>, demand: u32) {
        let mv = mi as usize;
        let count_start = self.prog.vars.len();
        if p.profile.nodes <= 1 {
            for node in 0..self.fleet.node_count() {
                let Some((firm, loose)) = self.units(node, p, None) else { continue };
                let v = self.var(Var::Single { model: mi, profile: pi, node }, (firm.min(demand), loose.min(demand)));
                self.on(node, v, p);
            }
        } else {
            let k = p.profile.nodes;
            for f in self.fleet.fabric_order.clone() {
                let parts: Vec<(u32, (u32, u32))> =
                    (0..self.fleet.node_count()).filter_map(|n| self.units(n, p, Some(f)).map(|u| (n, u))).collect();
                let most = |pick: fn(&(u32, u32)) -> u32| {
                    let total: u64 = parts.iter().map(|(_, u)| u64::from(pick(u))).sum();
                    (total / u64::from(k)).min(u64::from(demand)) as u32
                };
                let most = (most(|u| u.0), most(|u| u.1));
                if (parts.len() as u32) < k || most.1 == 0 {
                    continue;
                }
                let g = self.var(Var::Group { model: mi, profile: pi, fabric: f, k }, most);
                let mut sum = vec![(g, -f64::from(k))];
                for (n, u) in parts {
                    let z = self.var(Var::Part { group: g, node: n }, (u.0.min(most.0), u.1.min(most.1)));
                    self.prog.rows.push(Row { terms: vec![(z, 1.0), (g, -1.0)], op: Op::Le, rhs: 0.0 });
                    sum.push((z, 1.0));
                    self.on(n, z, p);
                }
                self.prog.rows.push(Row { terms: sum, op: Op::Eq, rhs: 0.0 });
            }
        }
        let counted: Vec<usize> =
            (count_start..self.prog.vars.len()).filter(|&v| !matches!(self.prog.vars[v], Var::Part { .. })).collect();
        let m = &mut self.prog.models[mv];
        if m.by_rank.len() <= rank {
            m.by_rank.resize(rank + 1, Vec::new());
        }
        m.by_rank[rank].extend(&counted);
        m.count.extend(counted);
    }

    /// The model's demand row, and its `replicas_per_node` on each node.
    fn finish_model(&mut self, mi: u32, demand: u32) {
        let count = &self.prog.models[mi as usize].count;
        let total: u64 = count.iter().map(|&v| u64::from(self.prog.ub_loose[v])).sum();
        if total > u64::from(demand) {
            let terms = count.iter().map(|&v| (v, 1.0)).collect();
            self.prog.rows.push(Row { terms, op: Op::Le, rhs: f64::from(demand) });
        }
        for node in 0..self.fleet.node_count() {
            let vars = std::mem::take(&mut self.room[node as usize]);
            let room = self.fleet.per_node().saturating_sub(self.fleet.held_here(node));
            let total: u64 = vars.iter().map(|&v| u64::from(self.prog.ub_loose[v])).sum();
            if total > u64::from(room) {
                let terms = vars.iter().map(|&v| (v, 1.0)).collect();
                self.prog.rows.push(Row { terms, op: Op::Le, rhs: f64::from(room) });
            }
        }
    }

    /// The rows of each node: GPUs per class, MIG devices per profile,
    /// CPUs and memory.
    fn finish(mut self) -> Program {
        for node in 0..self.fleet.node_count() {
            let vars = std::mem::take(&mut self.on_node[node as usize]);
            if vars.is_empty() {
                continue;
            }
            let mut slots: Vec<Slot> = vars.iter().filter_map(|(_, a)| a.gpus.map(|g| g.0)).collect();
            slots.sort_unstable_by_key(|s| match *s {
                Slot::Class(c) => (c, 0, 0),
                Slot::Mig(c, m) => (c, 1, m),
            });
            slots.dedup();
            for slot in slots {
                let terms: Vec<(usize, f64)> = vars
                    .iter()
                    .filter_map(|(v, a)| a.gpus.filter(|g| g.0 == slot).map(|g| (*v, f64::from(g.1))))
                    .collect();
                let have = match slot {
                    Slot::Class(c) => u64::from(self.fleet.free_of(node, Some(c))),
                    Slot::Mig(..) => self.mig_free(node, slot),
                };
                self.push_if_binding(Which::Shared, terms, have);
            }
            let (cpu, mem) = self.fleet.free_resources(node);
            if let Some(free) = cpu {
                let firm = vars.iter().map(|(v, a)| (*v, a.cpu_firm as f64)).collect();
                let loose = vars.iter().map(|(v, a)| (*v, a.cpu_loose as f64)).collect();
                self.push_pair(firm, loose, free);
            }
            // Memory is checked only against a stated request: a node whose
            // replicas all take their share is never full.
            let stated = vars.iter().any(|(_, a)| a.mem_loose > 0);
            if let (Some(free), true) = (mem, stated) {
                let firm = vars.iter().map(|(v, a)| (*v, a.mem_firm as f64)).collect();
                let loose = vars.iter().map(|(v, a)| (*v, a.mem_loose as f64)).collect();
                self.push_pair(firm, loose, free);
            }
        }
        self.prog
    }

    fn mig_free(&self, node: u32, slot: Slot) -> u64 {
        let Slot::Mig(class, m) = slot else { return 0 };
        let n = self.fleet.node(node);
        let class = self.fleet.classes[class as usize];
        let mig = &self.migs[m as usize];
        n.gpus
            .iter()
            .filter(|g| g.healthy && g.in_mig_mode() && g.class == class)
            .flat_map(|g| g.mig_devices.iter().filter(|d| &d.profile == mig).map(move |d| (g.index, d.index)))
            .filter(|&(g, d)| !self.fleet.mig_taken(node, g, d))
            .count() as u64
    }

    fn push_if_binding(&mut self, which: Which, terms: Vec<(usize, f64)>, rhs: u64) {
        let most: f64 = terms.iter().map(|&(v, c)| c * f64::from(self.prog.ub_loose[v])).sum();
        let terms: Vec<(usize, f64)> = terms.into_iter().filter(|t| t.1 != 0.0).collect();
        if terms.is_empty() || most <= rhs as f64 {
            return;
        }
        let row = Row { terms, op: Op::Le, rhs: rhs as f64 };
        match which {
            Which::Shared => self.prog.rows.push(row),
            Which::Firm => self.prog.firm.push(row),
            Which::Loose => self.prog.loose.push(row),
        }
    }

    fn push_pair(&mut self, firm: Vec<(usize, f64)>, loose: Vec<(usize, f64)>, free: u64) {
        self.push_if_binding(Which::Firm, firm, free);
        self.push_if_binding(Which::Loose, loose, free);
    }
}

#[derive(Clone, Copy)]
enum Which {
    Shared,
    Firm,
    Loose,
}

/// What a replica of a profile draws on, for pooling (`bound`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Resource {
    /// Whole GPUs of a class.
    Class(u32),
    /// MIG devices of a profile on GPUs of a class.
    Mig(u32, String),
    /// No GPU.
    Cpu,
}

/// The resource of a profile; `None` for a class no node has.
pub(super) fn resource(p: &Compiled<'_>) -> Option<Resource> {
    if p.profile.cpu_only() {
        return Some(Resource::Cpu);
    }
    let class = p.class?;
    Some(match &p.profile.mig_profile {
        Some(m) => Resource::Mig(class, m.clone()),
        None => Resource::Class(class),
    })
}

/// How much of a resource the ready nodes have free; `None` for CPUs,
/// which are not pooled.
pub(super) fn pool_size(fleet: &Fleet<'_>, res: &Resource) -> Option<u64> {
    let ready = (0..fleet.node_count()).filter(|&n| fleet.state_reason(n).is_none());
    match res {
        Resource::Class(c) => Some(ready.map(|n| u64::from(fleet.free_of(n, Some(*c)))).sum()),
        Resource::Mig(c, mig) => {
            let class = fleet.classes[*c as usize];
            Some(
                ready
                    .map(|n| {
                        let node = fleet.node(n);
                        node.gpus
                            .iter()
                            .filter(|g| g.healthy && g.in_mig_mode() && g.class == class)
                            .flat_map(|g| {
                                g.mig_devices.iter().filter(|d| &d.profile == mig).map(move |d| (g.index, d.index))
                            })
                            .filter(|&(g, d)| !fleet.mig_taken(n, g, d))
                            .count() as u64
                    })
                    .sum(),
            )
        }
        Resource::Cpu => None,
    }
}
