//! SPEC 19, point 3: with ResourceSlices published as NVIDIA's DRA driver
//! publishes them (the project's real slices among them), every
//! ResourceClaim the rendered templates produce is allocated by the real
//! scheduler to exactly the planned GPUs, by UUID, MIG devices included.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::json;

use super::fleet::{NodeSpec, items};
use super::*;

/// A GPU as the driver publishes it (cmd/gpu-kubelet-plugin deviceinfo.go:
/// `gpu-<minor>`, its attributes and memory capacity).
fn gpu_device(minor: u32, uuid: &str, product: &str, bus: &str, memory: &str) -> Value {
    json!({
        "name": format!("gpu-{minor}"),
        "attributes": {
            "type": {"string": "gpu"},
            "uuid": {"string": uuid},
            "productName": {"string": product},
            "brand": {"string": "Nvidia"},
            "architecture": {"string": "Hopper"},
            "cudaComputeCapability": {"version": "9.0.0"},
            "driverVersion": {"version": "580.82.7"},
            "cudaDriverVersion": {"version": "13.0.0"},
            "resource.kubernetes.io/pciBusID": {"string": bus},
            "resource.kubernetes.io/pcieRoot": {"string": format!("pci0000:{:02x}", 0x15 + minor / 2)},
        },
        "capacity": {"memory": {"value": memory}},
    })
}

fn slice(node: &str, devices: Vec<Value>) -> Value {
    json!({
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": format!("{node}-gpu.nvidia.com")},
        "spec": {
            "driver": "gpu.nvidia.com",
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    })
}

/// A project's real slice moved onto a scope's node.
fn real_slice(scope: &Scope, mut s: Value) -> (String, Value) {
    let node = s["spec"]["nodeName"].as_str().unwrap().to_string();
    let scoped = scope.node(&node);
    s["metadata"] = json!({"name": format!("{scoped}-gpu.nvidia.com")});
    s["spec"]["nodeName"] = json!(scoped);
    s["spec"]["pool"]["name"] = json!(scoped);
    (node, s)
}

#[test]
fn claims_are_allocated_exactly_the_planned_gpus_by_uuid() {
    let Some(k) = kube() else { return };
    let scope = Scope::new(k, "dra");
    let mut nodes = Vec::new();
    let mut slices = Vec::new();
    // Four H100 nodes published by the driver only (no device plugin: no
    // nvidia.com/gpu in their capacity), on one fabric.
    for n in 1..=4 {
        let name = format!("dra-h100-{n:02}");
        let mut spec = NodeSpec::cpu_only(&name);
        spec.cpu = "224";
        spec.alloc_cpu = "220";
        spec.memory = "2063937Mi";
        spec.alloc_memory = "2000000Mi";
        spec.labels = vec![("llmgw.io/fabric.ib-east", "mlx5_0.mlx5_1")];
        nodes.push(spec.value());
        let devices = (0..8)
            .map(|g| {
                let uuid = format!("GPU-{n:08x}-5a5f-aa66-7660-4710000000{g:02}");
                gpu_device(g, &uuid, "NVIDIA H100 80GB HBM3", &format!("0000:{:02x}:00.0", 0x18 + g * 0x10), "81559Mi")
            })
            .collect();
        slices.push(slice(&scope.node(&name), devices));
    }
    // The real MIG slice of an AKS A100 80GB node (driver issue 719).
    for s in items("tests/data/real/kubernetes/dra/slice-a100-mig-v1-issue719.reconstructed.list.json") {
        let (node, s) = real_slice(&scope, s);
        nodes.push(NodeSpec::cpu_only(&node).value());
        slices.push(s);
    }
    scope.create(nodes, vec![]);
    k.create(slices);
    let catalog = write(
        scope.dir.path(),
        "catalog.toml",
        r#"
[[model]]
name = "small"
replicas = 3
replicas_per_node = 3
[[model.profile]]
name = "tp1"
engine = "vllm"
gpu_class = "h100-80gb-hbm3"

[[model]]
name = "mid"
[[model.profile]]
name = "tp4"
engine = "vllm"
gpu_class = "h100-80gb-hbm3"
gpus_per_node = 4

[[model]]
name = "big"
[[model.profile]]
name = "2x8"
engine = "vllm"
gpu_class = "h100-80gb-hbm3"
gpus_per_node = 8
nodes = 2

[[model]]
name = "tiny"
[[model.profile]]
name = "mig"
engine = "vllm"
gpu_class = "a100-80gb-pcie"
mig_profile = "1g.10gb"
"#,
    );
    let fleet = scope.import(true, &[]);
    let (plan_file, plan) = place(scope.dir.path(), &catalog, &fleet, &[]);
    assert_eq!(plan["summary"]["unplaced"], 0, "{plan:#}");
    let out_dir = render(&scope, &plan_file, &catalog, &fleet, &["--devices", "dra"]);
    let pods = assert_bound_as_planned(&scope, &out_dir, &plan);

    let want = planned_uuids(&plan, &fleet);
    let got = allocated_uuids(k, &scope, &pods);
    assert_eq!(got, want, "allocated (left) and planned (right)");

    // The loop through the real API server: slices and the claims as the
    // scheduler allocated them, imported, are every replica running.
    let fleet = scope.import(true, &[]);
    let (again_file, again) = place(scope.dir.path(), &catalog, &fleet, &[]);
    assert_eq!(again["summary"]["placed"], 0, "{again:#}");
    assert_eq!(again["summary"]["existing"], plan["summary"]["placed"], "{again:#}");
    // The next turn renders every object the same: a claim template cannot
    // be changed once it exists, and the API would refuse the apply.
    let next = render(&scope, &again_file, &catalog, &fleet, &["--devices", "dra"]);
    let out = k.run(
        &["diff", "--server-side", "--field-manager=llmgw-test", "-n", &scope.ns, "-f", next.to_str().unwrap()],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "the next turn's render differs from what runs: {}", transcript(&out));
}

type Uuids = BTreeMap<(String, u64, String), BTreeSet<String>>;

/// The planned UUIDs of each (model, replica, node), from the plan and
/// the inventory it was made on.
fn planned_uuids(plan: &Value, fleet: &std::path::Path) -> Uuids {
    let inventory: Value = serde_json::from_str(&std::fs::read_to_string(fleet).unwrap()).unwrap();
    let node_of = |id: &str| inventory["node"].as_array().unwrap().iter().find(|n| n["id"] == id).unwrap().clone();
    let mut want = Uuids::new();
    for p in plan["placements"].as_array().unwrap() {
        for n in p["nodes"].as_array().unwrap() {
            let node = node_of(n["node"].as_str().unwrap());
            let gpu = |i: &Value| node["gpu"].as_array().unwrap().iter().find(|g| &g["index"] == i).unwrap().clone();
            let uuids: BTreeSet<String> = match n["mig_devices"].as_array() {
                Some(mig) => {
                    let g = gpu(&n["gpus"][0]);
                    mig.iter()
                        .map(|m| {
                            let d = g["mig_device"].as_array().unwrap().iter().find(|d| &d["index"] == m).unwrap();
                            d["uuid"].as_str().unwrap().to_string()
                        })
                        .collect()
                }
                None => {
                    n["gpus"].as_array().unwrap().iter().map(|i| gpu(i)["uuid"].as_str().unwrap().to_string()).collect()
                }
            };
            let key = (
                p["model"].as_str().unwrap().to_string(),
                p["replica"].as_u64().unwrap(),
                n["node"].as_str().unwrap().to_string(),
            );
            want.insert(key, uuids);
        }
    }
    want
}

/// The UUIDs the scheduler allocated each pod's claim, by (model, replica,
/// node), through the slices' devices.
fn allocated_uuids(k: &Kube, scope: &Scope, pods: &[Value]) -> Uuids {
    // Every device's UUID, by (pool, device name), from the slices.
    let mut uuid_of: BTreeMap<(String, String), String> = BTreeMap::new();
    for s in k.get(&["resourceslices"])["items"].as_array().unwrap() {
        let pool = s["spec"]["pool"]["name"].as_str().unwrap();
        for d in s["spec"]["devices"].as_array().into_iter().flatten() {
            if let Some(u) = d["attributes"]["uuid"]["string"].as_str() {
                uuid_of.insert((pool.to_string(), d["name"].as_str().unwrap().to_string()), u.to_string());
            }
        }
    }
    let claims = k.get(&["resourceclaims", "-n", &scope.ns]);
    let mut got = Uuids::new();
    for c in claims["items"].as_array().unwrap() {
        let owner = c["metadata"]["ownerReferences"][0]["name"].as_str().unwrap();
        let pod = pods.iter().find(|p| p["metadata"]["name"] == owner).unwrap();
        let (model, replica) = replica_of(pod).unwrap();
        let node = bound(pod).unwrap().to_string();
        let results = c["status"]["allocation"]["devices"]["results"].as_array();
        let results = results.unwrap_or_else(|| panic!("{owner}'s claim was not allocated: {c:#}"));
        let entry = got.entry((model, replica, node.clone())).or_default();
        for r in results {
            assert_eq!(r["pool"], node.as_str(), "{c:#}");
            entry.insert(
                uuid_of[&(r["pool"].as_str().unwrap().to_string(), r["device"].as_str().unwrap().to_string())].clone(),
            );
        }
    }
    got
}

/// What NVIDIA's ComputeDomain controller and its kubelet plugin would
/// add for a ComputeDomain: the channel claim template its pods name (a
/// request of the default-channel class, the domain's id as the driver's
/// opaque config) and, per node of the rack, the IMEX channel device. The
/// scheduler then allocates the pods' channel claims itself.
fn compute_domain_objects(k: &Kube, scope: &Scope, nodes: &[String]) {
    let domains = k.get(&["computedomains", "-n", &scope.ns]);
    let mut objects = Vec::new();
    for cd in domains["items"].as_array().unwrap() {
        let template = cd["spec"]["channel"]["resourceClaimTemplate"]["name"].as_str().unwrap();
        objects.push(json!({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": template, "namespace": scope.ns},
            "spec": {"spec": {"devices": {
                "requests": [{"name": "channel", "exactly": {"deviceClassName": "compute-domain-default-channel.nvidia.com"}}],
                "config": [{"requests": ["channel"], "opaque": {"driver": "compute-domain.nvidia.com", "parameters": {
                    "apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomainChannelConfig",
                    "domainID": cd["metadata"]["uid"], "allocationMode": "Single"}}}],
            }}},
        }));
    }
    for node in nodes {
        objects.push(json!({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": format!("{node}-compute-domain.nvidia.com")},
            "spec": {
                "driver": "compute-domain.nvidia.com", "nodeName": node,
                "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": "channel-0", "attributes": {"type": {"string": "channel"}, "id": {"int": 0}}}],
            },
        }));
    }
    k.create(objects);
}

/// A replica on a GB200 NVL72 rack (its nodes share `nvidia.com/gpu.clique`)
/// renders a ComputeDomain: the CRD accepts it, and with what NVIDIA's
/// driver adds for it, every pod binds where planned with its channel.
#[test]
fn a_replica_on_an_nvlink_domain_gets_its_compute_domain_and_binds() {
    let Some(k) = kube() else { return };
    let scope = Scope::new(k, "nvl");
    let mut nodes = Vec::new();
    for n in 1..=4 {
        let name = format!("gb200-{n:02}");
        let mut spec = NodeSpec::nvidia(&name, "NVIDIA-GB200", 4, "189471");
        spec.labels.push(("nvidia.com/gpu.clique", "3f2a9c1e-5b7d-4e21-9a0c-7d3b5e8f1a24.32766"));
        spec.labels.push(("kubernetes.io/arch", "arm64"));
        nodes.push(spec.value());
    }
    scope.create(nodes, vec![]);
    let catalog = write(
        scope.dir.path(),
        "catalog.toml",
        "[[model]]\nname = \"deepseek\"\nsource = \"deepseek-ai/DeepSeek-V3\"\n[[model.profile]]\nname = \"nvl\"\nengine = \"sglang\"\ngpu_class = \"gb200\"\ngpus_per_node = 4\nnodes = 2\n",
    );
    let fleet = scope.import(false, &[]);
    let (plan_file, plan) = place(scope.dir.path(), &catalog, &fleet, &[]);
    assert_eq!(plan["placements"][0]["fabric"].as_str().map(|f| f.starts_with("nvl-")), Some(true), "{plan:#}");
    let out_dir = render(&scope, &plan_file, &catalog, &fleet, &[]);
    let applied = scope.apply(&out_dir);
    assert!(applied.status.success(), "{}", transcript(&applied));
    let domains = k.get(&["computedomains", "-n", &scope.ns]);
    assert_eq!(domains["items"].as_array().unwrap().len(), 1, "{domains:#}");
    let rack: Vec<String> = (1..=4).map(|n| scope.node(&format!("gb200-{n:02}"))).collect();
    compute_domain_objects(k, &scope, &rack);
    assert_bound_as_planned(&scope, &out_dir, &plan);
    // Every pod's channel claim was allocated on its own node.
    let claims = k.get(&["resourceclaims", "-n", &scope.ns]);
    let allocated: Vec<&Value> = claims["items"].as_array().unwrap().iter().collect();
    assert_eq!(allocated.len(), 2, "{claims:#}");
    for c in allocated {
        let r = &c["status"]["allocation"]["devices"]["results"][0];
        assert_eq!(
            (r["driver"].as_str(), r["device"].as_str()),
            (Some("compute-domain.nvidia.com"), Some("channel-0")),
            "{c:#}"
        );
    }
}
