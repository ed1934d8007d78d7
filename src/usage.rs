//! What every GPU of a fleet is doing, after a plan or before one: free,
//! given by the plan, running a replica of the catalog, pending, held by
//! someone else, or unhealthy. One answer for `nodes`, `place` and `map`,
//! so that the map, the per-class lines and the summary after a plan never
//! count the same GPU two ways.
//!
//! A GPU is counted once, by its first holder: a plan that gave a GPU an
//! allocation already holds is a stale plan, refused before it gets here
//! (`render::check::stale`).

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::inventory::{Inventory, Node};

/// What a GPU (or MIG device) is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Use {
    /// Given by this plan.
    New,
    /// A replica of the catalog that already runs there.
    Existing,
    /// A pending allocation: submitted, waiting for what it asked for.
    Pending,
    /// Someone else's allocation (another workload, a surplus replica).
    Held,
    /// Nobody holds it and it is unhealthy.
    Unhealthy,
    /// Healthy and nobody holds it.
    Free,
}

impl Use {
    pub const ALL: [Use; 6] = [Use::Free, Use::New, Use::Existing, Use::Pending, Use::Held, Use::Unhealthy];
    /// The map's `data-state` values (docs/map.md).
    pub fn as_str(self) -> &'static str {
        match self {
            Use::New => "new",
            Use::Existing => "existing",
            Use::Pending => "pending",
            Use::Held => "held",
            Use::Unhealthy => "unhealthy",
            Use::Free => "free",
        }
    }
}

/// A replica or allocation holding GPUs: who, and everywhere it holds them.
#[derive(Clone, Debug)]
pub struct Holder<'a> {
    pub state: Use,
    pub model: &'a str,
    pub replica: u32,
    pub profile: Option<&'a str>,
    pub engine: Option<&'a str>,
    /// (node index into the inventory, GPUs, MIG devices), in rank order
    /// for a placement, node order for an allocation.
    pub at: Vec<(u32, Vec<u32>, Vec<u32>)>,
}

/// A replica the plan places, by node index.
pub struct New<'a> {
    pub model: &'a str,
    pub replica: u32,
    pub profile: Option<&'a str>,
    pub engine: Option<&'a str>,
    pub at: Vec<(u32, Vec<u32>, Vec<u32>)>,
}

/// One GPU or MIG device: what it is doing and, when held, by whom
/// (an index into `Usage::holders`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    pub state: Use,
    pub holder: Option<u32>,
}

/// One GPU: the GPU as a whole and, in MIG mode, each MIG device in the
/// order the inventory lists them.
#[derive(Clone, Debug)]
pub struct GpuUse {
    pub whole: Cell,
    pub mig: Vec<Cell>,
}

pub struct Usage<'a> {
    pub holders: Vec<Holder<'a>>,
    /// Per node of the inventory, per GPU in its order.
    pub nodes: Vec<Vec<GpuUse>>,
}

/// GPUs of one class, by what they are doing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClassUse<'a> {
    pub class: &'a str,
    pub total: u64,
    pub new: u64,
    pub existing: u64,
    pub pending: u64,
    pub held: u64,
    pub free: u64,
    pub unhealthy: u64,
    /// In MIG mode with none of its devices held: usable only as MIG
    /// devices, never whole, so neither free nor used.
    pub mig_idle: u64,
    /// Of `free`, those on nodes that take no new work (cordoned,
    /// draining, down).
    pub free_not_ready: u64,
}

impl ClassUse<'_> {
    pub fn used(&self) -> u64 {
        self.new + self.existing + self.pending + self.held
    }
}

/// What each GPU of `inv` is doing once `new` is placed. `existing` says
/// whether an allocation (model, replica) is a replica of the catalog
/// already running; without a catalog (`nodes`) every allocation is held.
pub fn of<'a>(inv: &'a Inventory, new: Vec<New<'a>>, existing: &dyn Fn(&str, u32) -> bool) -> Usage<'a> {
    let mut holders: Vec<Holder<'a>> = new
        .into_iter()
        .map(|n| Holder {
            state: Use::New,
            model: n.model,
            replica: n.replica,
            profile: n.profile,
            engine: n.engine,
            at: n.at,
        })
        .collect();
    // One holder per (state, model, replica): a replica across nodes has
    // an allocation on each, and its tooltip names them all.
    let mut index: HashMap<(Use, &str, u32), u32> = HashMap::new();
    for (ni, node) in inv.nodes.iter().enumerate() {
        for a in &node.allocations {
            let state = if a.pending {
                Use::Pending
            } else if existing(&a.model, a.replica) {
                Use::Existing
            } else {
                Use::Held
            };
            let h = *index.entry((state, a.model.as_str(), a.replica)).or_insert_with(|| {
                holders.push(Holder {
                    state,
                    model: &a.model,
                    replica: a.replica,
                    profile: a.profile.as_deref(),
                    engine: None,
                    at: Vec::new(),
                });
                (holders.len() - 1) as u32
            });
            holders[h as usize].at.push((ni as u32, a.gpus.clone(), a.mig_devices.clone()));
        }
    }
    let mut nodes: Vec<Vec<GpuUse>> = inv
        .nodes
        .iter()
        .map(|n| {
            n.gpus
                .iter()
                .map(|g| {
                    let idle = Cell { state: if g.healthy { Use::Free } else { Use::Unhealthy }, holder: None };
                    GpuUse { whole: idle, mig: vec![idle; if g.in_mig_mode() { g.mig_devices.len() } else { 0 }] }
                })
                .collect()
        })
        .collect();
    for (hi, h) in holders.iter().enumerate() {
        for (ni, gpus, migs) in &h.at {
            let node = &inv.nodes[*ni as usize];
            for &g in gpus {
                let Some(pos) = node.gpu_position(g) else { continue };
                let cell = Cell { state: h.state, holder: Some(hi as u32) };
                let gpu = &mut nodes[*ni as usize][pos];
                // MIG devices named: those only; none named: the GPU whole,
                // every device with it.
                let whole = migs.is_empty() || gpus.len() != 1;
                for (mi, d) in node.gpus[pos].mig_devices.iter().enumerate() {
                    if mi < gpu.mig.len() && gpu.mig[mi].holder.is_none() && (whole || migs.contains(&d.index)) {
                        gpu.mig[mi] = cell;
                    }
                }
                if gpu.whole.holder.is_none() && (whole || gpu.mig.is_empty()) {
                    gpu.whole = cell;
                }
            }
        }
    }
    // A MIG-mode GPU is as busy as the busiest of its devices.
    for gpu in nodes.iter_mut().flatten() {
        if gpu.whole.holder.is_none()
            && let Some(c) = gpu.mig.iter().filter(|c| c.holder.is_some()).min_by_key(|c| c.state)
        {
            gpu.whole = *c;
        }
    }
    Usage { holders, nodes }
}

/// GPUs per class, classes by name; only the nodes `keep` says.
pub fn by_class<'a>(inv: &'a Inventory, usage: &Usage<'_>, keep: &dyn Fn(&Node) -> bool) -> Vec<ClassUse<'a>> {
    let mut classes: std::collections::BTreeMap<&'a str, ClassUse<'a>> = std::collections::BTreeMap::new();
    for (node, gpus) in inv.nodes.iter().zip(&usage.nodes) {
        if !keep(node) {
            continue;
        }
        for (g, u) in node.gpus.iter().zip(gpus) {
            let c =
                classes.entry(g.class.as_str()).or_insert_with(|| ClassUse { class: &g.class, ..ClassUse::default() });
            c.total += 1;
            match u.whole.state {
                Use::New => c.new += 1,
                Use::Existing => c.existing += 1,
                Use::Pending => c.pending += 1,
                Use::Held => c.held += 1,
                Use::Unhealthy => c.unhealthy += 1,
                // As placement counts it: a GPU in MIG mode is never free whole.
                Use::Free if g.in_mig_mode() => c.mig_idle += 1,
                Use::Free => {
                    c.free += 1;
                    c.free_not_ready += u64::from(!node.state.schedulable());
                }
            }
        }
    }
    classes.into_values().collect()
}

/// GPUs per class once an in-memory plan is placed on the inventory it
/// was made on: what `place` ends with.
pub fn after_plan<'a>(
    catalog: &crate::catalog::Catalog,
    inv: &'a Inventory,
    plan: &crate::placement::Plan,
) -> Vec<ClassUse<'a>> {
    let new = plan
        .decisions
        .iter()
        .filter_map(|d| match d {
            crate::placement::Decision::Placed(p) => Some(New {
                model: "",
                replica: p.replica,
                profile: None,
                engine: None,
                at: p.nodes.iter().map(|a| (a.node, a.gpus.clone(), a.mig_devices.clone())).collect(),
            }),
            crate::placement::Decision::Unplaced { .. } => None,
        })
        .collect();
    let wanted: HashMap<&str, u32> = catalog.models.iter().map(|m| (m.name.as_str(), m.replicas)).collect();
    let usage = of(inv, new, &|m, r| wanted.get(m).is_some_and(|&n| r < n));
    by_class(inv, &usage, &|_| true)
}

/// Free GPUs per class that no replica the plan left unplaced can use
/// (docs/placement.md, "Stranded GPUs"), when the plan says.
///
/// The stranded GPUs per class `place`'s human summary shows: the plan's
/// own `summary.stranded` (free GPUs no replica left unplaced can use,
/// worked out by placement; docs/placement.md), a class with none at 0.
pub fn stranded(plan: &crate::placement::Plan) -> Option<std::collections::BTreeMap<String, u64>> {
    Some(plan.summary.stranded.clone())
}

/// "h100-80gb-hbm3: 27 used, 37 free, 6 stranded (64 GPUs)": the lines
/// `place` ends with.
pub fn after_plan_lines(
    classes: &[ClassUse<'_>],
    stranded: Option<&std::collections::BTreeMap<String, u64>>,
) -> Vec<String> {
    classes
        .iter()
        .map(|c| {
            let mut line = format!("{}: {} used, {} free", c.class, c.used(), c.free);
            if let Some(s) = stranded {
                let _ = write!(line, ", {} stranded", s.get(c.class).copied().unwrap_or(0));
            }
            let mut notes = Vec::new();
            if c.unhealthy > 0 {
                notes.push(format!("{} unhealthy", c.unhealthy));
            }
            if c.mig_idle > 0 {
                notes.push(format!("{} in MIG mode", c.mig_idle));
            }
            notes.push(format!("{} GPU{}", c.total, if c.total == 1 { "" } else { "s" }));
            format!("{line} ({})", notes.join(", "))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::{Allocation, MigDevice, State};

    fn node(id: &str, gpus: u32) -> Node {
        let mut inv = crate::synth::synthesize(
            &[crate::synth::Group {
                shape: &crate::synth::SHAPES[0],
                count: 1,
                fabric: None,
                labels: Default::default(),
            }],
            0.0,
            0.0,
            1,
            "n",
        );
        let mut n = inv.nodes.remove(0);
        n.id = id.into();
        n.gpus.truncate(gpus as usize);
        n.allocations.clear();
        n
    }

    #[test]
    fn each_gpu_is_counted_once_by_what_holds_it() {
        let mut a = node("a", 8);
        a.allocations.push(Allocation::new("ours".into(), 0, vec![0, 1], vec![]));
        let mut pending = Allocation::new("ours".into(), 1, vec![2], vec![]);
        pending.pending = true;
        a.allocations.push(pending);
        a.allocations.push(Allocation::new("theirs".into(), 0, vec![3], vec![]));
        a.gpus[7].healthy = false;
        let mut b = node("b", 8);
        b.state = State::Cordoned;
        b.gpus[0].mig = Some(true);
        b.gpus[0].mig_devices = vec![MigDevice::new(0, "3g.40gb", 40000), MigDevice::new(1, "3g.40gb", 40000)];
        b.allocations.push(Allocation::new("theirs".into(), 1, vec![0], vec![1]));
        b.gpus[1].mig = Some(true);
        b.gpus[1].mig_devices = vec![MigDevice::new(0, "7g.80gb", 80000)];
        let inv = Inventory { nodes: vec![a, b] };
        let new = vec![New {
            model: "ours",
            replica: 2,
            profile: Some("tp2"),
            engine: Some("vllm"),
            at: vec![(0, vec![4, 5], vec![])],
        }];
        let u = of(&inv, new, &|m, r| m == "ours" && r < 2);
        let states: Vec<&str> = u.nodes[0].iter().map(|g| g.whole.state.as_str()).collect();
        assert_eq!(states, ["existing", "existing", "pending", "held", "new", "new", "free", "unhealthy"]);
        let mig: Vec<&str> = u.nodes[1][0].mig.iter().map(|c| c.state.as_str()).collect();
        assert_eq!((mig.as_slice(), u.nodes[1][0].whole.state), (&["free", "held"][..], Use::Held));
        assert_eq!(u.nodes[1][1].whole.state, Use::Free);
        let c = by_class(&inv, &u, &|_| true);
        assert_eq!(c.len(), 1);
        let c = &c[0];
        assert_eq!((c.total, c.new, c.existing, c.pending, c.held, c.unhealthy), (16, 2, 2, 1, 2, 1));
        // b's GPU 1 is in MIG mode: never free whole. b is cordoned.
        assert_eq!((c.free, c.mig_idle, c.free_not_ready), (7, 1, 6));
        assert_eq!(c.used() + c.free + c.unhealthy + c.mig_idle, c.total);
    }

    #[test]
    fn the_summary_line_leaves_out_what_it_does_not_know() {
        let c = ClassUse { class: "h100", total: 64, new: 20, existing: 7, free: 37, ..ClassUse::default() };
        assert_eq!(after_plan_lines(std::slice::from_ref(&c), None), ["h100: 27 used, 37 free (64 GPUs)"]);
        let s = [("h100".to_string(), 6)].into();
        assert_eq!(after_plan_lines(&[c], Some(&s)), ["h100: 27 used, 37 free, 6 stranded (64 GPUs)"]);
    }
}
