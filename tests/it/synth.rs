//! `inventory synth`: reproducible synthetic fleets for capacity planning.

use crate::common::*;

#[test]
fn same_seed_same_fleet() {
    let args = [
        "inventory",
        "synth",
        "dgx-h100:3@ib-east,zone=a",
        "cpu:2",
        "--cordoned",
        "0.3",
        "--load",
        "0.5",
        "--seed",
        "7",
    ];
    let a = run(&args);
    assert_eq!(code(&a), 0, "{}", transcript(&a));
    assert_eq!(stdout(&a), stdout(&run(&args)));
    let mut other = args.to_vec();
    let last = other.len() - 1;
    other[last] = "8";
    assert_ne!(stdout(&a), stdout(&run(&other)));
}

#[test]
fn shapes_counts_fabrics_and_labels() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.json");
    let out = run(&[
        "inventory",
        "synth",
        "dgx-h100:2@ib-a,zone=a",
        "hgx-a100:1@ib-b",
        "l40s-pcie:1",
        "cpu:1",
        "-o",
        path.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let nodes = json(&run(&["nodes", "--inventory", path.to_str().unwrap(), "--format", "json"]));
    let nodes = nodes["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 5);
    assert_eq!(nodes[0]["gpus"][0], serde_json::json!({"class": "h100-80gb-hbm3", "free": 8, "total": 8}));
    assert_eq!(nodes[0]["fabrics"], serde_json::json!(["ib-a"]));
    assert_eq!(nodes[2]["fabrics"], serde_json::json!(["ib-b"]));
    assert_eq!(nodes[3]["fabrics"], serde_json::json!([]));
    assert_eq!(nodes[4]["gpus"], serde_json::json!([]));
}

#[test]
fn load_and_cordoned_fractions() {
    let full = json(&run(&["inventory", "synth", "dgx-h100:4", "--load", "1", "--format", "json"]));
    for n in full["node"].as_array().unwrap() {
        assert_eq!(n["allocation"][0]["gpus"].as_array().unwrap().len(), 8);
    }
    let cordoned = json(&run(&["inventory", "synth", "cpu:5", "--cordoned", "1", "--format", "json"]));
    assert!(cordoned["node"].as_array().unwrap().iter().all(|n| n["state"] == "cordoned"));
}

#[test]
fn would_this_catalog_fit() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet.toml");
    let out = run(&[
        "inventory",
        "synth",
        "dgx-h100:8@ib-east",
        "dgx-h100:8@ib-west",
        "hgx-a100:8@ib-west",
        "l40s-pcie:2",
        "cpu:4,role=cpu",
        "-o",
        fleet.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0);
    let plan = run(&["place", "catalog/fleet.toml", "--inventory", fleet.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&plan), 0, "{}", transcript(&plan));
    assert_eq!(json(&plan)["summary"]["placed"], 14);
}

#[test]
fn bad_groups_are_bad_input() {
    for bad in ["dgx-h10:4", "dgx-h100", "dgx-h100:x", "dgx-h100:2@", "cpu:2,zone"] {
        let out = run(&["inventory", "synth", bad]);
        assert_eq!(code(&out), 2, "{bad}: {}", transcript(&out));
    }
    assert_eq!(code(&run(&["inventory", "synth", "cpu:1", "--load", "1.5"])), 2);
    let out = run(&["inventory", "synth", "dgx-h10:4"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("did you mean `dgx-h100`?"));
}
