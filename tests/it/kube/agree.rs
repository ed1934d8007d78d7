//! SPEC 19, point 4: llmgw and the real kube-scheduler agree both ways, on
//! seeded random fleets (CPUs, memory and GPUs that others' pods hold,
//! allocatable below capacity, taints, explicit and implicit requests,
//! replicas of one and two nodes). Every replica llmgw places binds where
//! planned; every replica it leaves unplaced for a whole-node reason has,
//! on the node that reason names, a pod of the same requests and
//! tolerations pinned there that the scheduler leaves Pending for the
//! matching reason.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::json;

use super::fleet::{NodeSpec, foreign_pod};
use super::*;

const FLEETS: u64 = 50;

/// splitmix64: a seed gives the same fleet on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<T: Copy>(&mut self, of: &[T]) -> T {
        of[self.below(of.len() as u64) as usize]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// GPU classes a node may have: GFD's product label, its memory (MiB),
/// and the class llmgw derives.
const GPUS: &[(&str, &str, &str)] = &[
    ("NVIDIA-H100-80GB-HBM3", "81559", "h100-80gb-hbm3"),
    ("NVIDIA-A100-SXM4-80GB", "81920", "a100-sxm4-80gb"),
    ("NVIDIA-L40S", "46068", "l40s"),
];

/// The taints a node may carry and the tolerations a profile may write.
const TAINTS: &[(&str, &str, &str)] =
    &[("nvidia.com/gpu", "present", "NoSchedule"), ("dedicated", "team-a", "NoSchedule"), ("special", "", "NoExecute")];
const TOLERATIONS: &[&str] = &["dedicated=team-a:NoSchedule", "special", "dedicated"];

struct Profile {
    class: Option<&'static str>,
    gpus: u32,
    nodes: u32,
    cpus: Option<u32>,
    memory_gb: Option<u32>,
    tolerations: Vec<&'static str>,
}

struct Fleet {
    nodes: Vec<Value>,
    pods: Vec<Value>,
    catalog: String,
    profiles: BTreeMap<(String, String), Profile>,
}

fn fleet(seed: u64) -> Fleet {
    let mut r = Rng(seed);
    let mut nodes = Vec::new();
    let mut pods = Vec::new();
    let fabric = r.chance(50);
    let count = 3 + r.below(4);
    for i in 0..count {
        let name = format!("n{i}");
        let gpu = (!r.chance(20)).then(|| r.pick(GPUS));
        let cores = r.pick(&[16u64, 32, 64, 96, 128]);
        let reserved_m = r.pick(&[0u64, 500, 1000, 2000]);
        let mem_gi = r.pick(&[64u64, 128, 256, 512, 1024]);
        let reserved_mi = r.pick(&[0u64, 1024, 4096]);
        let gpus = r.pick(&[2u32, 4, 8]);
        let (cpu, alloc_cpu) = (cores.to_string(), format!("{}m", cores * 1000 - reserved_m));
        let (memory, alloc_memory) = (format!("{}Mi", mem_gi * 1024), format!("{}Mi", mem_gi * 1024 - reserved_mi));
        let mut spec = match gpu {
            Some((product, mib, _)) => {
                let mut n = NodeSpec::nvidia(&name, product, gpus, mib);
                let healthy = if r.chance(20) { gpus - 1 } else { gpus };
                n.devices = vec![("nvidia.com/gpu", gpus, healthy)];
                if fabric {
                    n.labels.push(("llmgw.io/fabric.ib-a", "mlx5_0"));
                }
                n
            }
            None => NodeSpec::cpu_only(&name),
        };
        spec.cpu = &cpu;
        spec.alloc_cpu = &alloc_cpu;
        spec.memory = &memory;
        spec.alloc_memory = &alloc_memory;
        for &t in TAINTS {
            if r.chance(if t.0 == "nvidia.com/gpu" { 30 } else { 15 }) {
                spec.taints.push(t);
            }
        }
        nodes.push(spec.value());
        for j in 0..r.below(3) {
            let cpu = format!("{}m", 500 + r.below(cores * 500));
            let mem = format!("{}Mi", 512 + r.below(mem_gi * 512));
            let mut req = vec![("cpu", cpu.as_str()), ("memory", mem.as_str())];
            let held = (r.below(u64::from(gpus) / 2 + 1)).to_string();
            if gpu.is_some() && held != "0" {
                req.push(("nvidia.com/gpu", held.as_str()));
            }
            pods.push(foreign_pod(&format!("other-{i}-{j}"), &name, &req));
        }
    }
    let mut catalog = String::new();
    let mut profiles = BTreeMap::new();
    for m in 0..2 + r.below(3) {
        let model = format!("m{m}");
        let _ = writeln!(catalog, "[[model]]\nname = \"{model}\"\nreplicas = {}", 1 + r.below(4));
        let per_node = 1 + r.below(3);
        if per_node > 1 {
            let _ = writeln!(catalog, "replicas_per_node = {per_node}");
        }
        let gpu = !r.chance(20);
        if !gpu {
            let _ = writeln!(catalog, "source = \"Qwen/Qwen2.5-7B-Instruct-GGUF:Q4_K_M\"");
        }
        for p in 0..1 + r.below(2) {
            let name = format!("p{p}");
            let profile = Profile {
                class: gpu.then(|| r.pick(GPUS).2),
                gpus: if gpu { r.pick(&[1, 2, 4, 8]) } else { 0 },
                nodes: if gpu && fabric && r.chance(20) { 2 } else { 1 },
                cpus: r.chance(50).then(|| r.pick(&[2, 4, 8, 16, 32, 48])),
                memory_gb: r.chance(50).then(|| r.pick(&[8, 16, 64, 128, 256, 512])),
                tolerations: TOLERATIONS.iter().copied().filter(|_| r.chance(30)).collect(),
            };
            let _ = writeln!(catalog, "[[model.profile]]\nname = \"{name}\"\npriority = {}", 10 - p);
            match profile.class {
                Some(c) => {
                    let _ = writeln!(
                        catalog,
                        "engine = \"vllm\"\ngpu_class = \"{c}\"\ngpus_per_node = {}\nnodes = {}",
                        profile.gpus, profile.nodes
                    );
                }
                None => {
                    let _ = writeln!(catalog, "engine = \"llama.cpp\"");
                }
            }
            if let Some(c) = profile.cpus {
                let _ = writeln!(catalog, "cpus = {c}");
            }
            if let Some(g) = profile.memory_gb {
                let _ = writeln!(catalog, "memory_gb = {g}");
            }
            if !profile.tolerations.is_empty() {
                let t: Vec<String> = profile.tolerations.iter().map(|t| format!("\"{t}\"")).collect();
                let _ = writeln!(catalog, "tolerations = [{}]", t.join(", "));
            }
            profiles.insert((model.clone(), name), profile);
        }
    }
    Fleet { nodes, pods, catalog, profiles }
}

/// What the scheduler must say of a pod like the replica's on a node llmgw
/// rejected for `reason`, if that reason is the node's as a whole (and the
/// probe pod's requests for it).
fn expected(reason: &str, class_there: bool) -> Option<(&'static str, Probe)> {
    let words: Vec<&str> = reason.split_whitespace().collect();
    match words.as_slice() {
        ["has", "taint", ..] => Some(("untolerated taint", Probe::default())),
        ["has", "no", "free", "CPUs"] => {
            Some(("Insufficient cpu", Probe { cpu_at_least_one: true, ..Probe::default() }))
        }
        ["has", _, "free", "CPUs,", "needs", _] => Some(("Insufficient cpu", Probe::default())),
        ["has", "no", "free", "memory"] => {
            Some(("Insufficient memory", Probe { memory_at_least_one: true, ..Probe::default() }))
        }
        ["has", _, "GiB", "of", "free", "memory,", "needs", _] => Some(("Insufficient memory", Probe::default())),
        // Only where the node has GPUs of the class: to the scheduler every
        // NVIDIA GPU is `nvidia.com/gpu`.
        ["has", _, "free", _, "GPUs,", "needs", _] if class_there => {
            Some(("Insufficient nvidia.com/gpu", Probe::default()))
        }
        _ => None,
    }
}

#[derive(Default)]
struct Probe {
    cpu_at_least_one: bool,
    memory_at_least_one: bool,
}

/// A pod with the replica's requests and tolerations, as render writes
/// them, pinned to `node`.
fn probe_pod(name: &str, ns: &str, node: &str, p: &Profile, probe: &Probe) -> Value {
    let mut requests = serde_json::Map::new();
    let mut limits = serde_json::Map::new();
    if let Some(c) = p.cpus {
        requests.insert("cpu".into(), json!(c.to_string()));
    } else if probe.cpu_at_least_one {
        requests.insert("cpu".into(), json!("1"));
    }
    if let Some(g) = p.memory_gb {
        requests.insert("memory".into(), json!(format!("{g}Gi")));
    } else if probe.memory_at_least_one {
        requests.insert("memory".into(), json!("1Mi"));
    }
    let mut tolerations: Vec<Value> = p
        .tolerations
        .iter()
        .map(|t| {
            let (kv, effect) = t.split_once(':').map_or((*t, None), |(a, b)| (a, Some(b)));
            let mut o = match kv.split_once('=') {
                Some((k, v)) => json!({"key": k, "operator": "Equal", "value": v}),
                None => json!({"key": kv, "operator": "Exists"}),
            };
            if let Some(e) = effect {
                o["effect"] = json!(e);
            }
            o
        })
        .collect();
    if p.class.is_some() {
        limits.insert("nvidia.com/gpu".into(), json!(p.gpus.to_string()));
        tolerations.push(json!({"key": "nvidia.com/gpu", "operator": "Exists"}));
    }
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": {"llmgw.test/probe": "true"}},
        "spec": {
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": requests, "limits": limits}}],
            "tolerations": tolerations,
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}},
        },
    })
}

/// One fleet: what llmgw places binds, what it refuses is refused. The
/// number of whole-node refusals the scheduler confirmed.
fn agree(k: &'static Kube, seed: u64) -> usize {
    let f = fleet(seed);
    let scope = Scope::new(k, &format!("agree{seed}"));
    scope.create(f.nodes, f.pods);
    let catalog = write(scope.dir.path(), "catalog.toml", &f.catalog);
    let fleet_file = scope.import(false, &[]);
    let (plan_file, plan) = place(scope.dir.path(), &catalog, &fleet_file, &[]);
    if !plan["placements"].as_array().unwrap().is_empty() {
        let out_dir = render(&scope, &plan_file, &catalog, &fleet_file, &[]);
        assert_bound_as_planned(&scope, &out_dir, &plan);
    }
    let inventory: Value = serde_json::from_str(&std::fs::read_to_string(&fleet_file).unwrap()).unwrap();
    let classes: BTreeMap<&str, Vec<&str>> = inventory["node"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            let c = n["gpu"].as_array().into_iter().flatten().filter_map(|g| g["class"].as_str()).collect();
            (n["id"].as_str().unwrap(), c)
        })
        .collect();
    let mut probes = Vec::new();
    let mut want = Vec::new();
    for u in plan["unplaced"].as_array().unwrap() {
        let model = u["model"].as_str().unwrap();
        for rej in u["rejections"].as_array().unwrap() {
            let (node, reason) = (rej["node"].as_str().unwrap(), rej["reason"].as_str().unwrap());
            if node.is_empty() {
                continue;
            }
            let profile = &f.profiles[&(model.to_string(), rej["profile"].as_str().unwrap().to_string())];
            let class_there = profile.class.is_some_and(|c| classes[node].contains(&c));
            let Some((says, probe)) = expected(reason, class_there) else { continue };
            let name = format!("probe-{}", probes.len());
            probes.push(probe_pod(&name, &scope.ns, node, profile, &probe));
            want.push((name, says, format!("{model} r{} on {node}: {reason}", u["replica"])));
        }
    }
    k.create(probes);
    let pods = scope.settle(0, 60);
    let probes: BTreeMap<&str, &Value> = pods
        .iter()
        .filter(|p| p["metadata"]["labels"]["llmgw.test/probe"] == "true")
        .map(|p| (p["metadata"]["name"].as_str().unwrap(), p))
        .collect();
    for (name, says, why) in &want {
        let p = probes[name.as_str()];
        if let Some(node) = bound(p) {
            panic!("seed {seed}: llmgw refused {why}, but the scheduler bound a pod like it to {node}\n{}", f.catalog);
        }
        let msg = unschedulable(p).unwrap_or_else(|| panic!("seed {seed}: {name} ({why}) was never decided"));
        assert!(msg.contains(says), "seed {seed}: llmgw refused {why}; the scheduler says: {msg}\n{}", f.catalog);
    }
    want.len()
}

#[test]
fn llmgw_and_the_scheduler_agree_both_ways_on_random_fleets() {
    let Some(k) = kube() else { return };
    let next = std::sync::atomic::AtomicU64::new(0);
    let confirmed = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..6 {
            s.spawn(|| {
                loop {
                    let seed = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if seed >= FLEETS {
                        break;
                    }
                    confirmed.fetch_add(agree(k, seed), std::sync::atomic::Ordering::Relaxed);
                }
            });
        }
    });
    let confirmed = confirmed.into_inner();
    eprintln!("{FLEETS} fleets: the scheduler confirmed {confirmed} whole-node refusals");
    assert!(confirmed >= 50, "the fleets refuse too little to show agreement: {confirmed}");
}
