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
    for (name, text, says) in cases {
        let f = write(dir.path(), name, &text);
        let out = import(&[f.to_str().unwrap()]);
        assert_eq!(code(&out), 2, "{name}: {}", transcript(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{name}: {err}");
        assert!(err.contains(&format!("{name}:")), "{name}: no span: {err}");
    }
    let out = import(&[NODES, "--pods", "tests/data/kubernetes/nodes.json"]);
    assert_eq!(code(&out), 2, "a node list given as pods: {}", transcript(&out));
}
