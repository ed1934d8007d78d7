//! The words for what a plan is made of: models, profiles, nodes, pools,
//! and the text of every reason a node is refused (the texts
//! docs/placement.md lists under "Reasons"). Every output that names them asks here: place, explain,
//! nodes, map and capacity.

use crate::catalog::{Catalog, Model, Profile};
use crate::placement::{Fleet, Placement, Pool, Reason};
use crate::units::cpus_text;

/// Names for the indices a plan is made of.
pub struct Names<'a> {
    pub catalog: &'a Catalog,
    pub fleet: &'a Fleet<'a>,
    /// Each node's id as a JSON string, escaped once when first asked for.
    node_json: std::cell::OnceCell<Vec<Box<serde_json::value::RawValue>>>,
}

impl<'a> Names<'a> {
    pub fn new(catalog: &'a Catalog, fleet: &'a Fleet<'a>) -> Self {
        Names { catalog, fleet, node_json: std::cell::OnceCell::new() }
    }

    /// A node's id as JSON. A plan that leaves replicas unplaced names
    /// each node once per replica and reason; escaping the id each time
    /// cost more than all the rest of writing it.
    pub fn node_json(&self, n: u32) -> &serde_json::value::RawValue {
        let all = self.node_json.get_or_init(|| {
            (0..self.fleet.node_count())
                .map(|i| {
                    let text = serde_json::to_string(self.node(i)).expect("a string serialises");
                    serde_json::value::RawValue::from_string(text).expect("a JSON string is JSON")
                })
                .collect()
        });
        &all[n as usize]
    }

    pub fn model(&self, m: u32) -> &'a Model {
        &self.catalog.models[m as usize]
    }
    pub fn profile(&self, m: u32, p: u32) -> &'a Profile {
        &self.model(m).profiles[p as usize]
    }
    pub fn node(&self, n: u32) -> &'a str {
        &self.fleet.node(n).id
    }
    pub fn fabric(&self, f: u32) -> &'a str {
        self.fleet.fabrics[f as usize]
    }

    /// `none/<class>`, `<fabric>/<class>`, or "" for a rejection with no pool.
    pub fn pool(&self, pool: Pool, profile: &Profile) -> String {
        match pool {
            Pool::Nothing => String::new(),
            Pool::Single => format!("none/{}", profile.class_label()),
            Pool::Fabric(f) => format!("{}/{}", self.fabric(f), profile.class_label()),
        }
    }

    /// The exact reason texts (docs/placement.md, "Reasons").
    pub fn reason(&self, reason: Reason, p: &Profile) -> String {
        match reason {
            Reason::State(s) => format!("node is {}", s.as_str()),
            Reason::Avoid { per_node: 1 } => "already hosts this model; spreading across failure domains".into(),
            Reason::Avoid { per_node: k } => {
                format!("already hosts {k} replicas of this model (replicas_per_node = {k})")
            }
            Reason::NoAdapters(f) => format!("attached to {} but reports no adapters for it", self.fabric(f)),
            Reason::Selector(i) => {
                let (k, v) = &p.node_selector[i as usize];
                format!("does not carry {k}={v}")
            }
            Reason::Taint(t) => format!("has taint {}, not tolerated", self.fleet.taints[t as usize]),
            Reason::Engine => format!("does not have {} installed", p.engine.name),
            Reason::Memory { have_gb } => {
                format!("has {have_gb} GB of memory, needs {}", p.min_memory_gb)
            }
            Reason::Disk { have_gb } => {
                format!("has {have_gb} GB free for weights, needs {}", p.min_disk_gb)
            }
            Reason::Gpus { free } => {
                format!("has {free} free {} GPUs, needs {}", p.class_label(), p.gpus_per_node)
            }
            Reason::Mig { free } => format!(
                "has {free} free {} MIG {} devices, needs 1",
                p.class_label(),
                p.mig_profile.as_deref().unwrap_or_default()
            ),
            Reason::GpuFit { have_gib, need_gib } => {
                format!("has {have_gib} GiB per {} GPU, needs {need_gib}", p.class_label())
            }
            Reason::HostFit { have_gib, need_gib } => {
                format!("has {have_gib} GiB of memory for weights, needs {need_gib}")
            }
            Reason::Vendor(v) => format!("does not run on {} GPUs", v.as_str()),
            Reason::NoFabric => format!("needs {} nodes on one fabric, but no node reports a fabric", p.nodes),
            Reason::PoolTooSmall { qualify } => {
                format!("needs {} nodes, only {qualify} qualify", p.nodes)
            }
            Reason::Cpus { free_millis } => {
                format!("has {} free CPUs, needs {}", cpus_text(free_millis), p.serving.cpus.unwrap_or_default())
            }
            Reason::NoCpus => "has no free CPUs".into(),
            Reason::NoMemory => "has no free memory".into(),
            Reason::FreeMemory { free_gib } => {
                format!("has {free_gib} GiB of free memory, needs {}", p.serving.memory_gb.unwrap_or_default())
            }
        }
    }

    /// The same reason said of `count` nodes at once, for summaries:
    /// "31 have 2 free h100-80gb-hbm3 GPUs, needs 4".
    pub fn reason_plural(&self, reason: Reason, p: &Profile, count: usize) -> String {
        let one = count == 1;
        let (is, has, does) = if one { ("is", "has", "does") } else { ("are", "have", "do") };
        let text = match reason {
            Reason::State(s) => format!("{is} {}", s.as_str()),
            Reason::Avoid { per_node: 1 } => format!("already host{} this model", if one { "s" } else { "" }),
            Reason::Avoid { per_node: k } => {
                format!(
                    "already host{} {k} replicas of this model (replicas_per_node = {k})",
                    if one { "s" } else { "" }
                )
            }
            Reason::NoAdapters(f) => {
                format!(
                    "{is} attached to {} but report{} no adapters for it",
                    self.fabric(f),
                    if one { "s" } else { "" }
                )
            }
            Reason::Selector(i) => {
                let (k, v) = &p.node_selector[i as usize];
                format!("{does} not carry {k}={v}")
            }
            Reason::Taint(t) => format!("{has} taint {}, not tolerated", self.fleet.taints[t as usize]),
            Reason::Engine => format!("{does} not have {} installed", p.engine.name),
            // The summaries are human output: binary sizes say GiB (the
            // reason texts above keep the seed's "GB").
            Reason::Memory { have_gb } => {
                format!("{has} {have_gb} GiB of memory, needs {}", p.min_memory_gb)
            }
            Reason::Disk { have_gb } => format!("{has} {have_gb} GiB free for weights, needs {}", p.min_disk_gb),
            Reason::Gpus { free } => {
                format!("{has} {free} free {} GPUs, needs {}", p.class_label(), p.gpus_per_node)
            }
            Reason::Mig { free } => format!(
                "{has} {free} free {} MIG {} devices, needs 1",
                p.class_label(),
                p.mig_profile.as_deref().unwrap_or_default()
            ),
            Reason::GpuFit { have_gib, need_gib } => {
                format!("{has} {have_gib} GiB per {} GPU, needs {need_gib}", p.class_label())
            }
            Reason::HostFit { have_gib, need_gib } => {
                format!("{has} {have_gib} GiB of memory for weights, needs {need_gib}")
            }
            Reason::Vendor(v) => format!("{has} {} GPUs, which {} does not run on", v.as_str(), p.engine.name),
            Reason::Cpus { free_millis } => {
                format!("{has} {} free CPUs, needs {}", cpus_text(free_millis), p.serving.cpus.unwrap_or_default())
            }
            Reason::NoCpus => format!("{has} no free CPUs"),
            Reason::NoMemory => format!("{has} no free memory"),
            Reason::FreeMemory { free_gib } => {
                format!("{has} {free_gib} GiB of free memory, needs {}", p.serving.memory_gb.unwrap_or_default())
            }
            Reason::NoFabric | Reason::PoolTooSmall { .. } => return self.reason(reason, p),
        };
        format!("{count} {text}")
    }

    pub fn hcas(&self, placement: &Placement, node: u32) -> &'a [String] {
        match placement.fabric {
            Some(f) => self.fleet.node(node).fabric(self.fabric(f)).and_then(|fab| fab.hcas.as_deref()).unwrap_or(&[]),
            None => &[],
        }
    }
}
