//! `inventory import kubernetes` on realistic `kubectl` output: GPU
//! Feature Discovery labels, MIG strategies, time-slicing, a GKE node, node
//! states, llmgw's own labels, and pods as allocations.

use crate::common::*;

const NODES: &str = "tests/data/kubernetes/nodes.json";
const PODS: &str = "tests/data/kubernetes/pods.json";

fn import(args: &[&str]) -> std::process::Output {
    let mut a = vec!["inventory", "import", "kubernetes"];
    a.extend_from_slice(args);
    run(&a)
}

#[test]
fn nodes_and_pods_become_an_inventory() {
    let out = import(&[NODES, "--pods", PODS, "--fabric-label", "network.topology.nvidia.com/spine"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    insta::assert_snapshot!(transcript(&out));
}

#[test]
fn the_imported_fleet_places_and_keeps_what_runs() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet.json");
    let out = import(&[NODES, "--pods", PODS, "-o", fleet.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let c = write(
        dir.path(),
        "c.toml",
        "[[model]]\nname = \"llama-3.1-70b\"\nreplicas = 2\n[[model.profile]]\nname = \"tp4\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 4\n",
    );
    let out = run(&["place", c.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "--format", "json"]);
    let v = json(&out);
    // Replica 0 runs (its pod's labels); replica 1 avoids its node.
    assert_eq!(v["summary"]["existing"], 1);
    assert_eq!(v["placements"][0]["nodes"][0]["node"], "gke-a3-pool-1", "{}", transcript(&out));
}

#[test]
fn a_single_node_in_yaml_reads_too() {
    let out = import(&["tests/data/kubernetes/node.yaml", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let v = json(&out);
    assert_eq!(v["node"][0]["id"], "gpu-yaml-01");
    assert_eq!(v["node"][0]["state"], "cordoned");
    assert_eq!(v["node"][0]["gpu"].as_array().unwrap().len(), 8);
    assert_eq!(v["node"][0]["memory_total_mb"], 2063936);
}

#[test]
fn bad_kubectl_output_points_at_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = std::fs::read_to_string(root().join(NODES)).unwrap();
    let cases = [
        ("pods.json", std::fs::read_to_string(root().join(PODS)).unwrap(), "item 0 is a Pod, not a Node"),
        ("deployment.json", "{\"kind\": \"Deployment\", \"metadata\": {}}".to_string(), "is not a Node list"),
        ("memory.json", nodes.replacen("\"2113470464Ki\"", "\"lots\"", 1), "is not a Kubernetes quantity"),
        (
            "count.json",
            nodes.replacen("\"nvidia.com/gpu.count\": \"8\"", "\"nvidia.com/gpu.count\": \"eight\"", 1),
            "not a number",
        ),
        ("cut.json", nodes[..nodes.len() / 2].to_string(), "is not valid JSON"),
    ];
    assert_each_refused(dir.path(), cases.into(), |f| import(&[f]));
    let out = import(&[NODES, "--pods", "tests/data/kubernetes/nodes.json"]);
    assert_eq!(code(&out), 2, "a node list given as pods: {}", transcript(&out));
}

#[test]
fn discover_then_label_then_import_gives_the_node_back() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // A machine: two NVLinked GPUs, two InfiniBand ports named by the
    // node config, vLLM and llama.cpp on PATH (never run).
    let facts = write(
        root,
        "gpus.json",
        r#"[{"index": 0, "name": "NVIDIA H100 80GB HBM3", "memory_mb": 81559, "pci_bus_id": "00000000:18:00.0", "active_links": ["00000000:2A:00.0"]},
            {"index": 1, "name": "NVIDIA H100 80GB HBM3", "memory_mb": 81559, "pci_bus_id": "00000000:2A:00.0", "active_links": ["00000000:18:00.0"]}]"#,
    );
    for hca in ["mlx5_0", "mlx5_1"] {
        let d = format!("sys/class/infiniband/{hca}/ports/1");
        write(root, &format!("{d}/state"), "4: ACTIVE\n");
        write(root, &format!("{d}/link_layer"), "InfiniBand\n");
        write(root, &format!("{d}/gids/0"), "fe80:0000:0000:0001:0000:0000:0000:0001\n");
    }
    write(root, "proc/sys/kernel/hostname", "gpu-rt-01\n");
    let config = write(root, "node.toml", "[fabrics]\nib-east = [\"mlx5_0\", \"mlx5_1\"]\n");
    let bin = root.join("bin");
    executable(&bin.join("vllm"), "#!/bin/sh\nexit 1\n");
    executable(&bin.join("llama-server"), "#!/bin/sh\nexit 1\n");
    let discover = |format: &str| {
        llmgw()
            .args(["discover", "--root", root.to_str().unwrap(), "--gpu-facts", facts.to_str().unwrap()])
            .args(["--config", config.to_str().unwrap(), "--format", format])
            .env("PATH", &bin)
            .output()
            .unwrap()
    };
    let nfd = discover("nfd");
    assert_eq!(code(&nfd), 0, "{}", transcript(&nfd));
    let labels: serde_json::Map<String, serde_json::Value> = stdout(&nfd)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.into()))
        .collect();
    assert!(labels.contains_key("llmgw.io/nvlink.0") && labels["llmgw.io/engine.vllm"] == "present", "{labels:?}");
    // The node as kubectl shows it once NFD has labelled it.
    let mut all = labels.clone();
    all.insert("nvidia.com/gpu.product".into(), "NVIDIA-H100-80GB-HBM3".into());
    all.insert("nvidia.com/gpu.count".into(), "2".into());
    let node = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "gpu-rt-01", "labels": all},
        "status": {"capacity": {"nvidia.com/gpu": "2"}, "allocatable": {"nvidia.com/gpu": "2"},
                   "conditions": [{"type": "Ready", "status": "True"}]}}]});
    let kubectl = write(root, "nodes.json", &node.to_string());
    let imported = json(&import(&[kubectl.to_str().unwrap(), "--format", "json"]));
    let discovered = json(&discover("json"));
    let (a, b) = (&imported["node"][0], &discovered["node"][0]);
    assert_eq!(a["discovered_by"], b["discovered_by"]);
    assert_eq!(a["engines"], b["engines"]);
    assert_eq!(a["fabric"], b["fabric"]);
    let peers = |n: &serde_json::Value| {
        n["gpu"].as_array().unwrap().iter().map(|g| g["nvlink_peers"].clone()).collect::<Vec<_>>()
    };
    assert_eq!(peers(a), peers(b));
    assert_eq!(peers(a), vec![serde_json::json!([1]), serde_json::json!([0])]);
}

use k8s_openapi::api::core::v1::Pod;

/// The pods a controller would make of a rendered object, bound to its
/// nodes: a Deployment's one pod, or a LeaderWorkerSet's leader (on the
/// first planned node) and workers.
pub fn pods_of(doc: &serde_json::Value, plan: &serde_json::Value) -> Vec<Pod> {
    if doc["kind"] == "Service" {
        return Vec::new();
    }
    let name = doc["metadata"]["name"].as_str().unwrap();
    let (model, replica) = (
        doc["metadata"]["annotations"]["llmgw.io/model"].clone(),
        doc["metadata"]["labels"]["llmgw.io/replica"].clone(),
    );
    let is = |p: &&serde_json::Value| {
        p["model"] == model && p["replica"].as_u64().map(|r| r.to_string()).as_deref() == replica.as_str()
    };
    // What already runs keeps its pods: applying the same object again
    // changes nothing there.
    if plan["existing"].as_array().unwrap().iter().any(|p| is(&p)) {
        return Vec::new();
    }
    let placed = plan["placements"].as_array().unwrap().iter().find(is).unwrap();
    placed["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let template = match (doc["kind"].as_str(), i) {
                (Some("Deployment"), _) => doc["spec"]["template"].clone(),
                (_, 0) => doc["spec"]["leaderWorkerTemplate"]["leaderTemplate"].clone(),
                _ => doc["spec"]["leaderWorkerTemplate"]["workerTemplate"].clone(),
            };
            let mut pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": template["metadata"].clone(), "spec": template["spec"].clone(), "status": {"phase": "Running"}});
            pod["metadata"]["name"] = format!("{name}-{i}").into();
            pod["metadata"]["namespace"] = "serving".into();
            pod["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/worker-index"] = i.to_string().into();
            // The LWS controller labels every pod of a group with the set's
            // name and the group's index.
            if doc["kind"] == "LeaderWorkerSet" {
                pod["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/name"] = name.into();
                pod["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/group-index"] = "0".into();
            }
            pod["spec"]["nodeName"] = n["node"].clone();
            serde_json::from_value(pod).unwrap()
        })
        .collect()
}

#[test]
fn a_rendered_plan_running_is_a_plan_with_nothing_left_to_place() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet.toml");
    // The cluster as imported, with the fixture's pods running.
    let out = import(&[
        NODES,
        "--pods",
        PODS,
        "--fabric-label",
        "network.topology.nvidia.com/spine",
        "-o",
        fleet.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let catalog = write(
        dir.path(),
        "c.toml",
        "[[model]]\nname = \"llama-3.1-70b\"\nreplicas = 2\n[[model.profile]]\nname = \"tp4\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 4\n\
         [[model]]\nname = \"llama-3.1-8b\"\nreplicas = 2\n[[model.profile]]\nname = \"mig\"\nengine = \"vllm\"\ngpu_class = \"a100-sxm4-80gb\"\nmig_profile = \"1g.10gb\"\n\
         [[model.profile]]\nname = \"tp1\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\npriority = -1\n",
    );
    let plan_file = dir.path().join("plan.json");
    let out =
        run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "-o", plan_file.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let plan: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&plan_file).unwrap()).unwrap();
    assert!(!plan["placements"].as_array().unwrap().is_empty());
    let out = run(&[
        "render",
        "kubernetes",
        plan_file.to_str().unwrap(),
        "--catalog",
        catalog.to_str().unwrap(),
        "-i",
        fleet.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    // The rendered pods run beside the ones that already did.
    let fixture: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root().join(PODS)).unwrap()).unwrap();
    let mut items = fixture["items"].as_array().unwrap().clone();
    for doc in crate::render::documents(&stdout(&out)) {
        items.extend(pods_of(&doc, &plan).into_iter().map(|p| serde_json::to_value(p).unwrap()));
    }
    let pods = write(
        dir.path(),
        "pods.json",
        &serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string(),
    );
    let again = dir.path().join("again.toml");
    let out = import(&[
        NODES,
        "--pods",
        pods.to_str().unwrap(),
        "--fabric-label",
        "network.topology.nvidia.com/spine",
        "-o",
        again.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let second = json(&run(&["place", catalog.to_str().unwrap(), "-i", again.to_str().unwrap(), "--format", "json"]));
    assert_eq!(
        second["summary"],
        serde_json::json!({"wanted": 4, "existing": 4, "placed": 0, "unplaced": 0, "bound": 0, "stranded": {}}),
        "{second}"
    );
}
