//! Random fleets and catalogs for the placement properties, written as
//! the files a user would write.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use proptest::prelude::*;

pub(super) const CLASSES: &[&str] = &["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA L40S"];
pub(super) const ENGINES: &[&str] = &["vllm", "sglang", "llama.cpp", "trtllm"];
/// The last is an NVLink domain: tried first, though its name sorts last.
pub(super) const FABRICS: &[&str] = &["ib-a", "ib-b", "ib-c", "nvl-z"];
pub(super) const TAINTS: &[&str] =
    &["nvidia.com/gpu=present:NoSchedule", "sku=gpu:NoSchedule", "dedicated=llm:NoExecute", "soft:PreferNoSchedule"];
pub(super) const TOLERATIONS: &[&str] =
    &["sku", "sku=gpu", "dedicated=llm:NoExecute", "dedicated:NoSchedule", "nvidia.com/gpu"];
pub(super) const NODE_CPUS: &[&str] = &["0.5", "4", "16", "64", "95.5", "224"];

#[derive(Debug, Clone)]
pub(super) struct GenNode {
    pub(super) state: u8,
    pub(super) zone: u8,
    pub(super) class: usize,
    pub(super) gpus: u8,
    pub(super) unhealthy: u8,
    pub(super) used: u8,
    pub(super) peers: u8,
    /// Fabric, and its adapters: 0 some, 1 none (`[]`), 2 not reported.
    pub(super) fabrics: Vec<(usize, u8)>,
    pub(super) engines: Option<Vec<usize>>,
    /// Discovered by llmgw: its (possibly empty) engine list is complete.
    pub(super) discovered: bool,
    pub(super) memory_gb: Option<u32>,
    pub(super) weights: Option<Vec<u8>>,
    pub(super) disk_gb: Option<u32>,
    /// Existing replicas of catalog models: (model, replica).
    pub(super) runs: Vec<(u8, u8)>,
    pub(super) cpu_allocs: u8,
    /// GPU 0 in MIG mode: 0 no, 1 three 1g.10gb devices, 2 one 3g.40gb.
    pub(super) mig: u8,
    /// How many of those devices an existing allocation holds.
    pub(super) mig_held: u8,
    /// Whole nodes: CPUs (index into NODE_CPUS), allocatable memory (GiB),
    /// taints (indices into TAINTS), and what the CPU allocations hold
    /// (CPUs, GiB).
    pub(super) cpus: Option<usize>,
    pub(super) allocatable_gb: Option<u32>,
    pub(super) taints: Vec<usize>,
    pub(super) held: (u8, u16),
}

#[derive(Debug, Clone)]
pub(super) struct GenProfile {
    pub(super) engine: usize,
    pub(super) class: Option<usize>,
    pub(super) gpus: u8,
    pub(super) nodes: u8,
    pub(super) priority: i8,
    pub(super) zone: Option<u8>,
    pub(super) memory_gb: u32,
    pub(super) disk_gb: u32,
    /// A MIG profile: 0 1g.10gb, 1 3g.40gb.
    pub(super) mig: Option<u8>,
    /// Explicit requests, and tolerations (indices into TOLERATIONS).
    pub(super) cpus: Option<u16>,
    pub(super) request_gb: Option<u16>,
    pub(super) tolerations: Vec<usize>,
}

pub(super) const MIG_PROFILES: &[(&str, u64)] = &[("1g.10gb", 9856), ("3g.40gb", 40192)];

#[derive(Debug, Clone)]
pub(super) struct GenModel {
    /// weights_gb, when the model gives its size.
    pub(super) size_gb: Option<u16>,
    pub(super) replicas: u8,
    /// `replicas_per_node`; 1 (the default, left out of the file) unless a
    /// test asks for more.
    pub(super) per_node: u8,
    pub(super) source: Option<u8>,
    pub(super) profiles: Vec<GenProfile>,
}

pub(super) fn node_strategy() -> impl Strategy<Value = GenNode> {
    (
        (
            0u8..10,
            0u8..3,
            prop::sample::select(vec![0usize, 0, 0, 1, 2]),
            0u8..9,
            prop::sample::select(vec![0u8, 0, 0, 1, 2]),
            prop::sample::select(vec![0u8, 0, 1, 2, 3, 5, 8]),
            0u8..5,
        ),
        prop::collection::vec((0..FABRICS.len(), prop::sample::select(vec![0u8, 0, 0, 0, 0, 0, 0, 1, 2, 2])), 0..3),
        (prop::option::weighted(0.7, prop::collection::vec(0..ENGINES.len(), 0..4)), prop::bool::weighted(0.3)),
        prop::option::of(0u32..2048),
        prop::option::weighted(0.7, prop::collection::vec(0u8..3, 0..3)),
        prop::option::of(0u32..1000),
        prop::collection::vec((0u8..4, 0u8..4), 0..2),
        (0u8..3, prop::sample::select(vec![0u8, 0, 1, 2]), prop::sample::select(vec![0u8, 0, 0, 1, 2])),
        (
            prop::option::weighted(0.5, 0..NODE_CPUS.len()),
            prop::option::weighted(0.3, prop::sample::select(vec![0u32, 8, 64, 900])),
            prop::collection::vec(0..TAINTS.len(), 0..2),
            (prop::sample::select(vec![0u8, 0, 1, 8, 60]), prop::sample::select(vec![0u16, 0, 4, 500])),
        ),
    )
        .prop_map(
            |(
                (state, zone, class, gpus, unhealthy, used, peers),
                fabrics,
                (engines, discovered),
                memory_gb,
                weights,
                disk_gb,
                runs,
                (cpu_allocs, mig, mig_held),
                (cpus, allocatable_gb, taints, held),
            )| GenNode {
                cpus,
                allocatable_gb,
                taints,
                held,
                mig,
                mig_held,
                discovered: discovered && engines.is_some(),
                state,
                zone,
                class,
                gpus,
                unhealthy,
                used,
                peers,
                fabrics,
                engines,
                memory_gb,
                weights,
                disk_gb,
                runs,
                cpu_allocs,
            },
        )
}

pub(super) fn profile_strategy() -> impl Strategy<Value = GenProfile> {
    (
        0..ENGINES.len(),
        prop::option::weighted(0.85, prop::sample::select(vec![0usize, 0, 0, 1, 2])),
        prop::sample::select(vec![1u8, 1, 2, 2, 3, 4, 8]),
        prop::sample::select(vec![1u8, 1, 1, 2, 3]),
        -2i8..3,
        prop::option::weighted(0.3, 0u8..3),
        prop::sample::select(vec![0u32, 0, 512, 1024]),
        (prop::sample::select(vec![0u32, 0, 100, 500]), prop::option::weighted(0.2, 0u8..2)),
        (
            prop::option::weighted(0.3, prop::sample::select(vec![1u16, 8, 32, 500])),
            prop::option::weighted(0.3, prop::sample::select(vec![1u16, 64, 512, 4096])),
            prop::collection::vec(0..TOLERATIONS.len(), 0..2),
        ),
    )
        .prop_map(
            |(
                engine,
                class,
                gpus,
                nodes,
                priority,
                zone,
                memory_gb,
                (disk_gb, mig),
                (cpus, request_gb, tolerations),
            )| GenProfile {
                cpus,
                request_gb,
                tolerations,
                // A GPU-only engine needs a class; keep the catalog valid. A MIG
                // profile is one device: one GPU, one node, a class.
                // llama.cpp serves from one node: a multi-node profile uses vLLM.
                engine: match (class.is_none() && mig.is_none(), engine == 2 && nodes > 1) {
                    (true, _) => 2,
                    (false, true) => 0,
                    (false, false) => engine,
                },
                class: if mig.is_some() { Some(class.unwrap_or(1)) } else { class },
                gpus: if mig.is_some() { 1 } else { gpus },
                nodes: if mig.is_some() || (class.is_none() && mig.is_none()) { 1 } else { nodes },
                mig,
                priority,
                zone,
                memory_gb,
                disk_gb,
            },
        )
}

pub(super) fn model_strategy() -> impl Strategy<Value = GenModel> {
    (
        0u8..6,
        prop::option::weighted(0.7, 0u8..3),
        prop::collection::vec(profile_strategy(), 0..4),
        prop::option::weighted(0.4, prop::sample::select(vec![8u16, 60, 140, 300, 800])),
    )
        .prop_map(|(replicas, source, profiles, size_gb)| GenModel {
            size_gb,
            replicas,
            per_node: 1,
            source,
            profiles,
        })
}

/// Models that may pack several replicas onto one node, with more replicas
/// than nodes would take one at a time.
pub(super) fn packing_model_strategy() -> impl Strategy<Value = GenModel> {
    (model_strategy(), prop::sample::select(vec![1u8, 2, 2, 3, 4]), 0u8..12)
        .prop_map(|(m, per_node, replicas)| GenModel { per_node, replicas, ..m })
}

/// Every seventh node's GPUs are AMD's (TensorRT-LLM never runs there).
pub(super) fn inventory_text(nodes: &[GenNode], order: &[usize]) -> String {
    let mut s = String::new();
    for &i in order {
        let n = &nodes[i];
        let state = ["ready", "ready", "ready", "ready", "ready", "ready", "ready", "cordoned", "draining", "down"]
            [n.state as usize];
        let _ = writeln!(s, "[[node]]\nid = \"n{i:03}\"\nstate = \"{state}\"\nlabels = {{ zone = \"z{}\" }}", n.zone);
        if n.discovered {
            let _ = writeln!(s, "discovered_by = \"llmgw test\"");
        }
        if let Some(e) = &n.engines {
            let list: Vec<String> =
                e.iter().collect::<BTreeSet<_>>().iter().map(|&&e| format!("\"{}\" = \"\"", ENGINES[e])).collect();
            let _ = writeln!(s, "engines = {{ {} }}", list.join(", "));
        }
        if let Some(m) = n.memory_gb {
            let _ = writeln!(s, "memory_total_mb = {}", u64::from(m) * 1024 + 17);
        }
        whole_node(&mut s, n);
        if let Some(w) = &n.weights {
            let list: Vec<String> = w.iter().collect::<BTreeSet<_>>().iter().map(|w| format!("\"org/w{w}\"")).collect();
            let _ = writeln!(s, "weights = [{}]", list.join(", "));
        }
        if let Some(d) = n.disk_gb {
            let _ = writeln!(
                s,
                "disk = {{ path = \"/m\", free_bytes = {}, total_bytes = {} }}",
                u64::from(d) << 30,
                2u64 << 40
            );
        }
        // GPUs in reverse index order: the loader must sort them.
        for g in (0..n.gpus).rev() {
            let peers: Vec<u8> = match n.peers {
                0 => vec![],
                1 => (0..n.gpus).filter(|&p| p != g).collect(),
                2 => vec![g ^ 1].into_iter().filter(|&p| p < n.gpus).collect(),
                3 => vec![g ^ 1, g ^ 1].into_iter().filter(|&p| p < n.gpus).collect(),
                _ => (0..n.gpus)
                    .rev()
                    .filter(|&p| p != g && p % 3 != 0)
                    .chain([g ^ 1].into_iter().filter(|&p| p < n.gpus))
                    .collect(),
            };
            // Every third node mixes in a GPU of the next class.
            let class = if i % 3 == 0 && g == 1 { (n.class + 1) % CLASSES.len() } else { n.class };
            let mig = g == 0 && n.mig > 0;
            let _ = writeln!(
                s,
                "[[node.gpu]]\nindex = {g}\nname = \"{}\"\n{}nvlink_peers = {:?}\nhealthy = {}\nmemory_mb = {}\nmig = {mig}",
                CLASSES[class],
                if i % 7 == 6 { "vendor = \"amd\"\n" } else { "" },
                if mig { Vec::new() } else { peers },
                g >= n.unhealthy,
                // Every fifth node does not report its GPU memory.
                if i % 5 == 4 { 0 } else { [81559, 81920, 46068][class] }
            );
            if mig {
                let (profile, memory) = MIG_PROFILES[usize::from(n.mig - 1)];
                for m in 0..(5 - 2 * n.mig) {
                    let memory = if i % 5 == 4 { 0 } else { memory };
                    let _ = writeln!(
                        s,
                        "[[node.gpu.mig_device]]\nindex = {m}\nprofile = \"{profile}\"\nmemory_mb = {memory}"
                    );
                }
            }
        }
        fabrics_text(&mut s, n);
        let used = n.used.min(n.gpus);
        // A MIG-mode GPU 0 whose devices are held is not also held whole
        // (the loader refuses that): the whole-GPU allocation skips it.
        let first = u8::from(n.mig > 0 && n.mig_held > 0);
        let whole: Vec<u8> = (first..used.max(first)).collect();
        if !whole.is_empty() {
            let _ = writeln!(s, "[[node.allocation]]\nmodel = \"other\"\nreplica = {i}\ngpus = {whole:?}");
        }
        for (m, r) in n.runs.iter().collect::<BTreeSet<_>>() {
            let _ = writeln!(s, "[[node.allocation]]\nmodel = \"m{m}\"\nreplica = {r}\ngpus = []");
        }
        if n.mig > 0 && n.gpus > 0 && n.mig_held > 0 {
            let held: Vec<u8> = (0..n.mig_held.min(5 - 2 * n.mig)).collect();
            let _ = writeln!(
                s,
                "[[node.allocation]]\nmodel = \"mig-other\"\nreplica = {i}\ngpus = [0]\nmig_devices = {held:?}"
            );
        }
        for c in 0..n.cpu_allocs {
            let _ = writeln!(s, "[[node.allocation]]\nmodel = \"cpu-other\"\nreplica = {c}\ngpus = []");
            // The first holds CPUs and memory, as a pod's requests would.
            if c == 0 && n.held.0 > 0 {
                let _ = writeln!(s, "cpus = {}.5", n.held.0 - 1);
            }
            if c == 0 && n.held.1 > 0 {
                let _ = writeln!(s, "memory_mb = {}", u32::from(n.held.1) * 1024);
            }
        }
    }
    s
}

/// CPUs, allocatable memory and taints, where the node reports them.
fn whole_node(s: &mut String, n: &GenNode) {
    if let Some(c) = n.cpus {
        let _ = writeln!(s, "cpus = {}", NODE_CPUS[c]);
    }
    if let Some(a) = n.allocatable_gb {
        let _ = writeln!(s, "memory_allocatable_mb = {}", u64::from(a) * 1024 + 5);
    }
    if !n.taints.is_empty() {
        let list: Vec<String> = n.taints.iter().map(|&t| format!("\"{}\"", TAINTS[t])).collect();
        let _ = writeln!(s, "taints = [{}]", list.join(", "));
    }
}

pub(super) fn catalog_text(models: &[GenModel]) -> String {
    let mut s = String::new();
    for (mi, m) in models.iter().enumerate() {
        let _ = writeln!(s, "[[model]]\nname = \"m{mi}\"\nreplicas = {}", m.replicas);
        if m.per_node != 1 {
            let _ = writeln!(s, "replicas_per_node = {}", m.per_node);
        }
        if let Some(gb) = m.size_gb {
            let _ = writeln!(s, "weights_gb = {gb}");
        }
        if let Some(src) = m.source {
            let _ = writeln!(s, "source = \"org/w{src}\"");
        }
        for (pi, p) in m.profiles.iter().enumerate() {
            let _ = writeln!(
                s,
                "[[model.profile]]\nname = \"p{pi}\"\nengine = \"{}\"\ngpus_per_node = {}\nnodes = {}\npriority = {}\nmin_memory_gb = {}\nmin_disk_gb = {}",
                ENGINES[p.engine], p.gpus, p.nodes, p.priority, p.memory_gb, p.disk_gb
            );
            if let Some(c) = p.class {
                let _ = writeln!(s, "gpu_class = \"{}\"", CLASSES[c]);
            }
            if let Some(z) = p.zone {
                let _ = writeln!(s, "node_selector = {{ zone = \"z{z}\" }}");
            }
            if let Some(m) = p.mig {
                let _ = writeln!(s, "mig_profile = \"{}\"", MIG_PROFILES[usize::from(m)].0);
            }
            if let Some(c) = p.cpus {
                let _ = writeln!(s, "cpus = {c}");
            }
            if let Some(g) = p.request_gb {
                let _ = writeln!(s, "memory_gb = {g}");
            }
            if !p.tolerations.is_empty() {
                let list: Vec<String> = p.tolerations.iter().map(|&t| format!("\"{}\"", TOLERATIONS[t])).collect();
                let _ = writeln!(s, "tolerations = [{}]", list.join(", "));
            }
        }
    }
    s
}

fn fabrics_text(s: &mut String, n: &GenNode) {
    for (f, adapters) in n.fabrics.iter().copied().collect::<BTreeMap<usize, u8>>() {
        let _ = writeln!(s, "[[node.fabric]]\nname = \"{}\"", FABRICS[f]);
        if FABRICS[f].starts_with("nvl-") {
            s.push_str("kind = \"nvlink\"\n");
        }
        match adapters {
            0 => s.push_str("hcas = [\"mlx5_0\"]\n"),
            1 => s.push_str("hcas = []\n"),
            _ => {}
        }
    }
}
