//! Synthetic fleets and catalogs for the benchmarks and the scale check.
#![allow(dead_code)]

use std::fmt::Write as _;

use llmgw::synth::{Group, SHAPES, synthesize};

pub mod measure;
pub mod oversubscribed;

fn shape(name: &str) -> &'static llmgw::synth::Shape {
    SHAPES.iter().find(|s| s.name == name).expect("known shape")
}

/// A fleet of `nodes` nodes, nearly all with 8 GPUs: DGX H100s on two
/// InfiniBand fabrics, HGX A100s, a few L40S boxes and CPU nodes; 2%
/// cordoned and 20% of GPUs already busy.
pub fn fleet(nodes: u32) -> llmgw::inventory::Inventory {
    let part = |f: f64| ((f64::from(nodes) * f).round() as u32).max(1);
    let group = |name: &str, count: u32, fabric: Option<&str>, label: (&str, &str)| Group {
        shape: shape(name),
        count,
        fabric: fabric.map(str::to_owned),
        labels: [(label.0.to_string(), label.1.to_string())].into(),
    };
    let groups = vec![
        group("dgx-h100", part(0.40), Some("ib-east"), ("zone", "a")),
        group("dgx-h100", part(0.35), Some("ib-west"), ("zone", "b")),
        group("hgx-a100", part(0.20), Some("ib-west"), ("zone", "a")),
        group("l40s-pcie", part(0.025), None, ("zone", "b")),
        group("cpu", part(0.025), None, ("role", "cpu")),
    ];
    synthesize(&groups, 0.02, 0.2, 42, "node")
}

/// Models for a fleet of `nodes`: 200 for 10,000 nodes, about 9,700 replicas.
pub fn models_for(nodes: u32) -> usize {
    ((nodes / 50) as usize).max(20)
}

/// A catalog of `models` models (about 49 replicas each on average):
/// single-node TP1/TP4/TP8 with fallbacks, multi-node 2x8 and 4x8,
/// selectors, priorities, CPU models, and one model no node can hold.
pub fn catalog(models: usize) -> String {
    let mut s = String::new();
    let profile = |s: &mut String,
                   name: &str,
                   engine: &str,
                   class: Option<&str>,
                   gpus: u32,
                   nodes: u32,
                   prio: i32,
                   sel: Option<&str>| {
        let _ = writeln!(s, "  [[model.profile]]\n  name = \"{name}\"\n  engine = \"{engine}\"\n  priority = {prio}");
        if let Some(c) = class {
            let _ = writeln!(s, "  gpu_class = \"{c}\"\n  gpus_per_node = {gpus}\n  nodes = {nodes}");
        }
        if let Some(sel) = sel {
            let _ = writeln!(s, "  node_selector = {{ {sel} }}");
        }
        let _ = writeln!(s, "  min_memory_gb = 64");
    };
    for i in 0..models {
        let (replicas, kind) = match i % 10 {
            0..=3 => (85, "tp1"),
            4 | 5 => (40, "tp4"),
            6 => (20, "tp8"),
            7 => (5, "2x8"),
            8 => (2, "4x8"),
            _ => (40, "cpu"),
        };
        let _ = writeln!(
            s,
            "[[model]]\nname = \"model-{i:04}-{kind}\"\nsource = \"org/model-{i:04}\"\nreplicas = {replicas}"
        );
        let h100 = Some("h100-80gb-hbm3");
        let a100 = Some("a100-sxm4-80gb");
        match kind {
            "tp1" => {
                profile(&mut s, "h100", "vllm", h100, 1, 1, 100, None);
                profile(&mut s, "a100", "vllm", a100, 1, 1, 50, None);
                profile(&mut s, "l40s", "vllm", Some("l40s"), 1, 1, 20, None);
                profile(&mut s, "cpu", "llama.cpp", None, 0, 1, 0, None);
            }
            "tp4" => {
                profile(
                    &mut s,
                    "h100-zone",
                    "sglang",
                    h100,
                    4,
                    1,
                    100,
                    Some(if i % 20 < 10 { "zone = \"a\"" } else { "zone = \"b\"" }),
                );
                profile(&mut s, "a100", "tgi", a100, 4, 1, 50, None);
                profile(&mut s, "l40s", "vllm", Some("l40s"), 4, 1, 10, None);
            }
            "tp8" => {
                profile(&mut s, "h100", "vllm", h100, 8, 1, 100, None);
                profile(&mut s, "a100", "vllm", a100, 8, 1, 50, None);
            }
            "2x8" => {
                profile(&mut s, "h100", "sglang", h100, 8, 2, 100, None);
                profile(&mut s, "a100", "vllm", a100, 8, 2, 50, None);
            }
            "4x8" => profile(&mut s, "h100", "vllm", h100, 8, 4, 100, None),
            _ => profile(&mut s, "cpu", "llama.cpp", None, 0, 1, 0, Some("role = \"cpu\"")),
        }
    }
    // Nobody has a B200: every replica of this one is explained.
    let _ = writeln!(s, "[[model]]\nname = \"model-b200\"\nreplicas = 3");
    profile(&mut s, "b200", "vllm", Some("b200"), 8, 1, 0, None);
    s
}

/// `models` more models that no node can hold, one replica each, as a
/// catalog that outgrew its fleet has: each asks for hosts with more memory
/// than any node reports, so every node of the fleet is rejected for each
/// (about 9,500 by memory at 10,000 nodes, the rest cordoned or without
/// vLLM), and each is explained on its own.
pub fn unplaceable(models: usize) -> String {
    let mut s = String::new();
    for i in 0..models {
        let _ = writeln!(
            s,
            "[[model]]\nname = \"too-big-{i:03}\"\nsource = \"org/too-big-{i:03}\"\n\
             [[model.profile]]\nname = \"h100-tp8\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n\
             gpus_per_node = 8\nmin_memory_gb = {}",
            4096 + i
        );
    }
    s
}

/// `fleet(nodes)` as a scheduler reports it (docs/inventory.md): each node's
/// CPUs and allocatable memory, GPU nodes tainted
/// `nvidia.com/gpu=present:NoSchedule` as several clouds taint them, one
/// node in twenty also `dedicated=research:NoSchedule`, and the busy GPUs'
/// allocations holding their share of CPUs and memory. What whole-node
/// placement costs is measured on it.
pub fn whole_node_fleet(nodes: u32) -> llmgw::inventory::Inventory {
    let mut inv = fleet(nodes);
    for (i, n) in inv.nodes.iter_mut().enumerate() {
        let cpus: f64 = match n.gpus.first().map(|g| g.class.as_str()) {
            Some("h100-80gb-hbm3") => 224.0,
            Some("a100-sxm4-80gb") => 255.5,
            Some(_) => 63.5,
            None => 96.0,
        };
        n.cpus = Some(cpus);
        n.memory_allocatable_mb = Some(n.memory_total_mb / 100 * 99);
        if !n.gpus.is_empty() {
            n.taints.push("nvidia.com/gpu=present:NoSchedule".into());
        }
        if i % 20 == 7 {
            n.taints.push("dedicated=research:NoSchedule".into());
        }
        let gpus = n.gpus.len().max(1) as f64;
        let memory = n.memory_total_mb;
        for a in &mut n.allocations {
            let share = a.gpus.len() as f64 / gpus;
            a.cpus = Some((cpus * share).floor());
            a.memory_mb = Some((memory as f64 * share) as u64);
        }
    }
    inv
}
