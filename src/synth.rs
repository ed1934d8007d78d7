//! `inventory synth`: a synthetic fleet for capacity planning and benchmarks
//! ("would this catalog fit on 64 DGX H100s over two fabrics?").

use std::collections::BTreeMap;

use crate::diag::{Code, Diag, suggest};
use crate::inventory::{Allocation, Disk, Fabric, Gpu, Inventory, Node, State, normalize_class};

/// A kind of machine: what one node of it has.
pub struct Shape {
    pub name: &'static str,
    pub gpu_name: &'static str,
    pub gpus: u32,
    pub gpu_memory_mb: u64,
    /// All GPUs on one NVSwitch (mutual peers), or NVLink pairs (0-1, 2-3, …),
    /// or none.
    pub nvlink: NvLink,
    pub hcas: u32,
    pub memory_mb: u64,
    pub engines: &'static [(&'static str, &'static str)],
}

impl Shape {
    /// What one node of the shape has, for help and completions:
    /// "8 x NVIDIA H100 80GB HBM3 on NVSwitch, 8 HCAs".
    pub fn describe(&self) -> String {
        if self.gpus == 0 {
            return "CPU only".to_string();
        }
        let links = match self.nvlink {
            NvLink::Switch => " on NVSwitch",
            NvLink::Pairs => " in NVLink pairs",
            NvLink::None => ", PCIe only",
        };
        let hcas = if self.hcas == 1 { "1 HCA".to_string() } else { format!("{} HCAs", self.hcas) };
        format!("{} x {}{links}, {hcas}", self.gpus, self.gpu_name)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum NvLink {
    Switch,
    Pairs,
    None,
}

pub static SHAPES: &[Shape] = &[
    Shape {
        name: "dgx-h100",
        gpu_name: "NVIDIA H100 80GB HBM3",
        gpus: 8,
        gpu_memory_mb: 81559,
        nvlink: NvLink::Switch,
        hcas: 8,
        memory_mb: 2_063_937,
        engines: &[("sglang", "0.4.1"), ("trtllm", "0.15.0"), ("vllm", "0.6.3")],
    },
    Shape {
        name: "hgx-a100",
        gpu_name: "NVIDIA A100-SXM4-80GB",
        gpus: 8,
        gpu_memory_mb: 81920,
        nvlink: NvLink::Switch,
        hcas: 4,
        memory_mb: 1_031_891,
        engines: &[("tgi", "2.4.0"), ("vllm", "0.6.3")],
    },
    Shape {
        name: "l40s-pcie",
        gpu_name: "NVIDIA L40S",
        gpus: 4,
        gpu_memory_mb: 46068,
        nvlink: NvLink::None,
        hcas: 1,
        memory_mb: 515_565,
        engines: &[("llama.cpp", ""), ("vllm", "0.6.3")],
    },
    Shape {
        name: "pcie-a100-pairs",
        gpu_name: "NVIDIA A100 80GB PCIe",
        gpus: 4,
        gpu_memory_mb: 81920,
        nvlink: NvLink::Pairs,
        hcas: 1,
        memory_mb: 515_565,
        engines: &[("vllm", "0.6.3")],
    },
    Shape {
        name: "cpu",
        gpu_name: "",
        gpus: 0,
        gpu_memory_mb: 0,
        nvlink: NvLink::None,
        hcas: 0,
        memory_mb: 257_589,
        engines: &[("llama.cpp", ""), ("ollama", "0.5.4")],
    },
];

/// One `SHAPE:COUNT[@FABRIC][,key=value...]` argument.
pub struct Group {
    pub shape: &'static Shape,
    pub count: u32,
    pub fabric: Option<String>,
    pub labels: BTreeMap<String, String>,
}

pub fn parse_group(s: &str) -> Result<Group, Diag> {
    let bad = |why: String| {
        Diag::error(Code::BadArgument, format!("cannot read node group `{s}`: {why}"))
            .help("write SHAPE:COUNT[@FABRIC][,key=value...], e.g. dgx-h100:64@ib-east,zone=a")
    };
    let mut parts = s.split(',');
    let head = parts.next().unwrap_or("");
    let (shape_name, rest) = head.split_once(':').ok_or_else(|| bad("no `:COUNT`".into()))?;
    let shape = SHAPES.iter().find(|sh| sh.name == shape_name).ok_or_else(|| {
        let hint = suggest(shape_name, SHAPES.iter().map(|s| s.name), "shapes are");
        bad(format!("unknown shape `{shape_name}` ({hint})"))
    })?;
    let (count, fabric) = match rest.split_once('@') {
        Some((c, f)) if !f.is_empty() => (c, Some(f.to_string())),
        Some(_) => return Err(bad("empty fabric after `@`".into())),
        None => (rest, None),
    };
    let count: u32 = count.parse().map_err(|_| bad(format!("`{count}` is not a node count")))?;
    if count > 1_000_000 {
        return Err(bad("at most 1,000,000 nodes per group".into()));
    }
    let labels = labels(parts).map_err(bad)?;
    Ok(Group { shape, count, fabric, labels })
}

/// The `,key=value` labels that follow a node shape, or what is wrong.
pub fn labels<'a>(parts: impl Iterator<Item = &'a str>) -> Result<BTreeMap<String, String>, String> {
    let mut labels = BTreeMap::new();
    for kv in parts {
        let (k, v) = kv
            .split_once('=')
            .filter(|(k, v)| !k.is_empty() && !v.is_empty())
            .ok_or(format!("`{kv}` is not key=value"))?;
        labels.insert(k.to_string(), v.to_string());
    }
    Ok(labels)
}

/// splitmix64: small, fast, and the same numbers everywhere for one seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One node of a shape: its GPUs, NVLink, memory, engines, a fabric with
/// its adapters when one is given, the labels and `shape`; ready, empty,
/// with 90% of 30 TiB free for weights.
pub fn node_of(sh: &Shape, id: String, fabric: Option<&str>, mut labels: BTreeMap<String, String>) -> Node {
    let class = normalize_class(sh.gpu_name);
    let gpus: Vec<Gpu> = (0..sh.gpus)
        .map(|i| Gpu {
            index: i,
            name: sh.gpu_name.to_string(),
            vendor: crate::vendor::Vendor::Nvidia,
            memory_mb: sh.gpu_memory_mb,
            uuid: None,
            dra_device: None,
            pci_bus_id: None,
            mig: None,
            class_override: None,
            class: class.clone(),
            nvlink_peers: match sh.nvlink {
                NvLink::Switch => (0..sh.gpus).filter(|&j| j != i).collect(),
                NvLink::Pairs => vec![i ^ 1],
                NvLink::None => Vec::new(),
            },
            healthy: true,
            mig_devices: Vec::new(),
        })
        .collect();
    labels.insert("shape".into(), sh.name.into());
    let total_bytes = 30u64 << 40;
    Node {
        id,
        discovered_by: None,
        state: State::Ready,
        labels,
        memory_total_mb: sh.memory_mb,
        cpus: None,
        memory_allocatable_mb: None,
        taints: Vec::new(),
        engines: Some(sh.engines.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()),
        weights: None,
        disk: Some(Disk { path: "/models".into(), free_bytes: total_bytes / 10 * 9, total_bytes }),
        gpus,
        fabrics: match fabric {
            Some(f) if sh.hcas > 0 => {
                vec![Fabric {
                    name: f.to_string(),
                    kind: crate::inventory::FabricKind::Infiniband,
                    hcas: Some((0..sh.hcas).map(|i| format!("mlx5_{i}")).collect()),
                }]
            }
            _ => Vec::new(),
        },
        allocations: Vec::new(),
        origin: None,
    }
}

pub fn synthesize(groups: &[Group], cordoned: f64, load: f64, seed: u64, prefix: &str) -> Inventory {
    let mut rng = Rng(seed);
    let total: u64 = groups.iter().map(|g| u64::from(g.count)).sum();
    let width = total.max(1).to_string().len().max(4);
    let mut nodes = Vec::with_capacity(total as usize);
    let mut serial = 0u64;
    // Exactly round(cordoned x total) nodes, chosen by selection sampling:
    // each node is picked with the chance (still to pick) / (still to see).
    let mut to_cordon = (cordoned * total as f64).round() as u64;
    for g in groups {
        let sh = g.shape;
        for _ in 0..g.count {
            serial += 1;
            let id = format!("{prefix}-{serial:0width$}");
            let mut node = node_of(sh, id, g.fabric.as_deref(), g.labels.clone());
            for (i, gpu) in node.gpus.iter_mut().enumerate() {
                gpu.uuid = Some(format!("GPU-{:08x}-{:04x}-{:04x}", rng.next() as u32, serial as u16, i));
            }
            let unseen = total - serial + 1;
            let state = if rng.unit() * (unseen as f64) < to_cordon as f64 {
                to_cordon -= 1;
                State::Cordoned
            } else {
                State::Ready
            };
            let busy = (0..sh.gpus).filter(|_| rng.unit() < load).count() as u32;
            let allocations = if busy > 0 {
                vec![Allocation::new("synthetic-load".into(), serial as u32, (0..busy).collect(), Vec::new())]
            } else {
                Vec::new()
            };
            let total_bytes = 30u64 << 40;
            let free_bytes = (total_bytes as f64 * (0.2 + 0.7 * rng.unit())) as u64;
            node.state = state;
            node.allocations = allocations;
            node.disk = Some(Disk { path: "/models".into(), free_bytes, total_bytes });
            nodes.push(node);
        }
    }
    Inventory { nodes }
}
