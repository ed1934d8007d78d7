//! Inventories: the nodes of a fleet, their GPUs, fabrics, engines, and what
//! already runs on them. `discover` prints this form; `place` reads it.

mod devices;
pub use devices::*;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::diag::{Code, Diag, Source};
use crate::doc::Span;
use crate::vendor::Vendor;

mod check;
mod decode;
mod fast;
mod fields;
pub mod lint;

pub use decode::{MAX_CPUS, load_spanned};

/// The fields the loaders know, per table, for the docs' test:
/// `node`, `gpu`, `mig_device`, `fabric`, `allocation`, `disk`.
pub fn field_names(table: &str) -> &'static [&'static str] {
    use fields::{RawAlloc, RawDisk, RawFabric, RawGpu, RawMig, RawNode, names};
    match table {
        "node" => names::<RawNode>(),
        "gpu" => names::<RawGpu>(),
        "mig_device" => names::<RawMig>(),
        "fabric" => names::<RawFabric>(),
        "allocation" => names::<RawAlloc>(),
        "disk" => names::<RawDisk>(),
        _ => &[],
    }
}
pub use fast::load as load_fast;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Ready,
    Cordoned,
    Draining,
    Down,
}

impl State {
    pub const ALL: [State; 4] = [State::Ready, State::Cordoned, State::Draining, State::Down];
    pub fn as_str(self) -> &'static str {
        match self {
            State::Ready => "ready",
            State::Cordoned => "cordoned",
            State::Draining => "draining",
            State::Down => "down",
        }
    }
    pub fn parse(s: &str) -> Option<State> {
        State::ALL.into_iter().find(|st| st.as_str() == s)
    }
    pub fn schedulable(self) -> bool {
        self == State::Ready
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Inventory {
    #[serde(rename = "node")]
    pub nodes: Vec<Node>,
}

impl Inventory {
    /// Per GPU class (by the ids `class_ids` gives them): the vendor of its
    /// GPUs, `None` when both vendors make one; its resource is the taint a
    /// replica of the class tolerates without saying so.
    pub fn class_vendors(&self, class_ids: &std::collections::HashMap<&str, u32>) -> Vec<Option<Vendor>> {
        let mut vendors: Vec<Option<Option<Vendor>>> = vec![None; class_ids.len()];
        for g in self.nodes.iter().flat_map(|node| &node.gpus) {
            let v = &mut vendors[class_ids[g.class.as_str()] as usize];
            *v = match *v {
                None => Some(Some(g.vendor)),
                Some(Some(seen)) if seen == g.vendor => Some(Some(seen)),
                _ => Some(None),
            };
        }
        vendors.into_iter().map(Option::flatten).collect()
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Node {
    pub id: String,
    /// Set by `discover` ("llmgw 0.1.0"): engines and weights were looked
    /// for, so those lists are complete and an empty one means none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discovered_by: Option<String>,
    pub state: State,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Taints as written (`key=value:Effect`, `key:Effect`): workloads that
    /// do not tolerate one with effect NoSchedule or NoExecute stay off.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<String>,
    #[serde(skip_serializing_if = "is_zero")]
    pub memory_total_mb: u64,
    /// The memory workloads may request (Kubernetes' allocatable, Slurm's
    /// RealMemory less MemSpecLimit); `None`: `memory_total_mb`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_allocatable_mb: Option<u64>,
    /// Logical CPUs that workloads may use, perhaps fractional (`95.5`);
    /// `None`: not reported.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "crate::units::cpu_count")]
    pub cpus: Option<f64>,
    /// Engine -> version ("" when only its presence is known). Absent or
    /// empty, on a node not discovered by llmgw, means the node does not
    /// report engines (an older agent): never a reason to reject it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engines: Option<BTreeMap<String, String>>,
    /// `None`: the node never looked for weights; `Some([])`: it looked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weights: Option<Vec<Weight>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk: Option<Disk>,
    #[serde(rename = "gpu", skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<Gpu>,
    #[serde(rename = "fabric", skip_serializing_if = "Vec::is_empty")]
    pub fabrics: Vec<Fabric>,
    #[serde(rename = "allocation", skip_serializing_if = "Vec::is_empty")]
    pub allocations: Vec<Allocation>,
    /// Where the node was defined, for messages about it.
    #[serde(skip)]
    pub origin: Option<(Source, Span)>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_true(v: &bool) -> bool {
    *v
}

/// Weights a node holds: a source (`ORG/NAME`, as the catalog names it)
/// and, where it is not `disk.path/SOURCE`, where it really is (a Hugging
/// Face cache keeps a model under `models--ORG--NAME/snapshots/<rev>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Weight {
    pub source: String,
    pub path: Option<String>,
}

impl Weight {
    pub fn named(source: impl Into<String>) -> Weight {
        Weight { source: source.into(), path: None }
    }
}

/// A plain string when there is no path (the form every inventory before
/// used), else `{ source, path }`.
impl Serialize for Weight {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        match &self.path {
            None => s.serialize_str(&self.source),
            Some(p) => {
                let mut t = s.serialize_struct("Weight", 2)?;
                t.serialize_field("source", &self.source)?;
                t.serialize_field("path", p)?;
                t.end()
            }
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Disk {
    pub path: String,
    pub free_bytes: u64,
    pub total_bytes: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Allocation {
    pub model: String,
    pub replica: u32,
    pub gpus: Vec<u32>,
    /// With one GPU in `gpus`: the MIG devices of that GPU it holds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mig_devices: Vec<u32>,
    /// The CPUs it holds (a pod's requests, a Slurm job's CPUs), when known.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "crate::units::cpu_count")]
    pub cpus: Option<f64>,
    /// The memory it holds, MiB, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
    /// The catalog profile it runs, when the scheduler's record says so
    /// (llmgw's labels and job comments carry it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The replica is submitted but waits for its resources (a pending
    /// Slurm job or pod): it exists, so no second copy is started, and it
    /// holds what it asked for (GPUs, MIG devices, CPUs, memory) as a
    /// running one does, so nothing else is planned onto them.
    #[serde(skip_serializing_if = "is_false")]
    pub pending: bool,
    /// The Slurm job id, when the import knows it (`render slurm --stop`
    /// cancels by it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<u64>,
}

fn is_false(v: &bool) -> bool {
    !*v
}

impl Allocation {
    /// What an import knows of a workload: who, which replica, which GPUs.
    pub fn new(model: String, replica: u32, gpus: Vec<u32>, mig_devices: Vec<u32>) -> Allocation {
        Allocation {
            model,
            replica,
            gpus,
            mig_devices,
            cpus: None,
            memory_mb: None,
            profile: None,
            pending: false,
            job: None,
        }
    }
}

impl Node {
    pub fn fabric(&self, name: &str) -> Option<&Fabric> {
        self.fabrics.iter().find(|f| f.name == name)
    }
    /// Whether the node's engine list can say no: it was discovered by llmgw,
    /// or it lists some.
    pub fn reports_engines(&self) -> bool {
        self.discovered_by.is_some() || self.engines.as_ref().is_some_and(|e| !e.is_empty())
    }
    /// The engines listed (none when not reported).
    pub fn engine_names(&self) -> impl Iterator<Item = &str> {
        self.engines.iter().flat_map(|e| e.keys().map(String::as_str))
    }
    /// Whether the node is known to hold these weights.
    pub fn holds(&self, source: &str) -> bool {
        self.weights.as_ref().is_some_and(|w| w.iter().any(|s| s.source == source))
    }
    /// Where the node keeps these weights: the path it reports for them,
    /// else `disk.path/SOURCE`; `None` when it does not hold them, or holds
    /// them without saying where.
    pub fn local_copy(&self, source: &str) -> Option<String> {
        let w = self.weights.as_ref()?.iter().find(|w| w.source == source)?;
        if let Some(p) = &w.path {
            return Some(p.clone());
        }
        let dir = self.disk.as_ref().map(|d| d.path.trim_end_matches('/')).filter(|d| !d.is_empty())?;
        Some(format!("{dir}/{}", source.trim_start_matches('/')))
    }
    /// The `.gguf` file llama.cpp is to load for a source: the source's own
    /// copy when it is a file, else the first `SOURCE/*.gguf` the node
    /// lists (discover lists each GGUF file of a cached model that way).
    pub fn gguf_copy(&self, source: &str) -> Option<String> {
        if source.ends_with(".gguf") {
            return self.local_copy(source);
        }
        let prefix = format!("{}/", source.trim_end_matches('/'));
        let file = self
            .weights
            .as_ref()?
            .iter()
            .filter(|w| w.source.starts_with(&prefix) && w.source.ends_with(".gguf"))
            .map(|w| w.source.as_str())
            .min()?;
        self.local_copy(file)
    }
    /// The memory workloads may request, MiB (0: not reported).
    pub fn memory_schedulable_mb(&self) -> u64 {
        self.memory_allocatable_mb.unwrap_or(self.memory_total_mb)
    }
    /// The taints that keep workloads off (NoSchedule, NoExecute), parsed;
    /// the loaders refuse a taint that does not parse.
    pub fn repelling_taints(&self) -> impl Iterator<Item = (&str, crate::taints::Taint<'_>)> {
        self.taints
            .iter()
            .filter_map(|t| crate::taints::parse_taint(t).ok().map(|p| (t.as_str(), p)))
            .filter(|(_, p)| p.effect.repels())
    }
    pub fn gpu_position(&self, index: u32) -> Option<usize> {
        self.gpus.binary_search_by_key(&index, |g| g.index).ok()
    }
}

/// GPU class normalisation (docs/catalog.md, "GPU classes"): lower-case; every run of characters
/// other than `a-z0-9.` becomes `-`; leading/trailing `-` dropped; a leading
/// `nvidia-` dropped. So NVML's "NVIDIA H100 80GB HBM3", GPU Feature
/// Discovery's "NVIDIA-H100-80GB-HBM3" and "h100-80gb-hbm3" are one class.
pub fn normalize_class(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut dash = false;
    for c in raw.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' {
            if dash && !out.is_empty() {
                out.push('-');
            }
            dash = false;
            out.push(c);
        } else {
            dash = true;
        }
    }
    match out.strip_prefix("nvidia-") {
        Some(rest) => rest.to_string(),
        None => out,
    }
}

/// The error for a node id defined twice, with both places named.
pub fn duplicate_node(again: &Node, first: &Node) -> Diag {
    let mut d = Diag::error(Code::DuplicateNode, format!("node `{}` is defined twice", again.id))
        .help("node ids must be unique across every inventory given: remove or rename one");
    if let Some((src, span)) = &again.origin {
        d = d.at(src, *span, "defined again here");
        if let Some((fsrc, fspan)) = &first.origin {
            if fsrc.name() == src.name() {
                d = d.label(*fspan, "first defined here");
            } else {
                let (line, col) = fsrc.line_col(fspan.start);
                d.message = format!("node `{}` is defined in both {} and {}", again.id, fsrc.name(), src.name());
                d.help = Some(format!(
                    "first defined at {}:{line}:{col}; a node id must appear in only one file",
                    fsrc.name()
                ));
            }
        }
    }
    d
}

/// Joins nodes from several files into one inventory, sorted by id. A node id
/// seen in two files is an error naming both.
pub fn merge(files: Vec<Vec<Node>>) -> Result<Inventory, Vec<Diag>> {
    let mut nodes: Vec<Node> = files.into_iter().flatten().collect();
    // Stable: of two nodes with one id, the one from the earlier file stays first.
    nodes.sort_by(|a, b| a.id.cmp(&b.id));
    let mut diags = Vec::new();
    for w in nodes.windows(2) {
        if w[0].id == w[1].id {
            diags.push(duplicate_node(&w[1], &w[0]));
        }
    }
    if diags.is_empty() { Ok(Inventory { nodes }) } else { Err(diags) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_normalise_per_spec() {
        assert_eq!(normalize_class("NVIDIA H100 80GB HBM3"), "h100-80gb-hbm3");
        assert_eq!(normalize_class("NVIDIA A100-SXM4-80GB"), "a100-sxm4-80gb");
        assert_eq!(normalize_class("NVIDIA-H100-80GB-HBM3"), "h100-80gb-hbm3");
        assert_eq!(normalize_class("h100-80gb-hbm3"), "h100-80gb-hbm3");
        assert_eq!(normalize_class("  --NVIDIA L40S--  "), "l40s");
        assert_eq!(normalize_class("Tesla V100-SXM2-16GB (rev 1.0)"), "tesla-v100-sxm2-16gb-rev-1.0");
        assert_eq!(normalize_class("nvidia"), "nvidia");
    }
}
