//! The placement rules (docs/placement.md), one at a time: a small inventory written for the rule, the
//! real binary, and the exact JSON it must print.

use std::fmt::Write as _;

use crate::common::*;
use serde_json::{Value, json};

/// Places `catalog` on `inventory` (both TOML) and returns the JSON plan.
fn place(catalog: &str, inventory: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let c = write(dir.path(), "catalog.toml", catalog);
    let i = write(dir.path(), "fleet.toml", inventory);
    let args =
        ["place", c.to_str().unwrap(), "--inventory", i.to_str().unwrap(), "--format", "json", "--rejections", "full"];
    let out = run(&args);
    let mut v = json(&out);
    let unplaced = v["summary"]["unplaced"].as_u64().unwrap();
    assert_eq!(code(&out), if unplaced > 0 { 1 } else { 0 }, "{}", transcript(&out));
    // The inputs' digests depend on the temporary files; tested on their own.
    assert_eq!(v["inputs"]["catalog"].as_str().map(str::len), Some(64), "{v}");
    v.as_object_mut().unwrap().remove("inputs");
    // The rules' exact rejections; closest misses are tested on their own.
    for u in v["unplaced"].as_array_mut().unwrap() {
        u.as_object_mut().unwrap().remove("closest");
    }
    v
}

fn explain(catalog: &str, inventory: &str, model: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let c = write(dir.path(), "catalog.toml", catalog);
    let i = write(dir.path(), "fleet.toml", inventory);
    json(&run(&[
        "explain-placement",
        c.to_str().unwrap(),
        "--model",
        model,
        "--inventory",
        i.to_str().unwrap(),
        "--format",
        "json",
    ]))
}

fn h100(n: u32) -> String {
    (0..n).map(|i| format!("[[node.gpu]]\nindex = {i}\nname = \"NVIDIA H100 80GB HBM3\"\n")).collect()
}

/// Just the node ids of each placement, in order.
fn chosen(v: &Value) -> Vec<Vec<String>> {
    v["placements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["nodes"].as_array().unwrap().iter().map(|n| n["node"].as_str().unwrap().to_string()).collect())
        .collect()
}

fn reasons(v: &Value) -> Vec<(String, String, String)> {
    v["unplaced"][0]["rejections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["pool"].as_str().unwrap().into(),
                r["node"].as_str().unwrap().into(),
                r["reason"].as_str().unwrap().into(),
            )
        })
        .collect()
}

#[test]
fn every_single_node_rejection_reason_in_check_order() {
    let catalog = r#"
[[model]]
name = "m"
source = "org/m"
  [[model.profile]]
  name = "p"
  engine = "vllm"
  gpu_class = "h100-80gb-hbm3"
  gpus_per_node = 2
  node_selector = { zone = "a", tier = "gold" }
  min_memory_gb = 512
  min_disk_gb = 100
"#;
    let full = |id: &str, extra: &str| {
        format!(
            "[[node]]\nid = \"{id}\"\nlabels = {{ zone = \"a\", tier = \"gold\" }}\nmemory_total_mb = 1048576\nengines = {{ vllm = \"\" }}\ndisk = {{ path = \"/m\", free_bytes = 214748364800, total_bytes = 1099511627776 }}\n{extra}\n{}",
            h100(1)
        )
    };
    let inventory = [
        "[[node]]\nid = \"a-cordoned\"\nstate = \"cordoned\"\n".to_string(),
        "[[node]]\nid = \"b-draining\"\nstate = \"draining\"\n".to_string(),
        "[[node]]\nid = \"c-down\"\nstate = \"down\"\n".to_string(),
        "[[node]]\nid = \"d-no-zone\"\nlabels = { tier = \"gold\" }\n".to_string(),
        "[[node]]\nid = \"e-wrong-tier\"\nlabels = { zone = \"a\", tier = \"iron\" }\n".to_string(),
        "[[node]]\nid = \"f-no-vllm\"\nlabels = { zone = \"a\", tier = \"gold\" }\nengines = { sglang = \"\" }\n".to_string(),
        "[[node]]\nid = \"g-small\"\nlabels = { zone = \"a\", tier = \"gold\" }\nmemory_total_mb = 262143\n".to_string(),
        "[[node]]\nid = \"h-full-disk\"\nlabels = { zone = \"a\", tier = \"gold\" }\ndisk = { path = \"/m\", free_bytes = 107374182399, total_bytes = 1099511627776 }\n".to_string(),
        full("i-one-gpu", ""),
    ]
    .join("\n");
    let v = place(catalog, &inventory);
    assert_eq!(
        v["unplaced"],
        json!([{"model": "m", "replica": 0, "rejections": [
            {"profile": "p", "pool": "none/h100-80gb-hbm3", "node": "a-cordoned", "reason": "node is cordoned"},
            {"profile": "p", "pool": "none/h100-80gb-hbm3", "node": "b-draining", "reason": "node is draining"},
            {"profile": "p", "pool": "none/h100-80gb-hbm3", "node": "c-down", "reason": "node is down"},
            {"profile": "p", "pool": "none/h100-80gb-hbm3", "node": "d-no-zone", "reason": "does not carry zone=a"},
            {"profile": "p", "pool": "none/h100-80gb-hbm3", "node": "e-wrong-tier", "reason": "does not carry tier=gold"},
            {"profile": "p", "pool": "none/h100-80gb-hbm3", "node": "f-no-vllm", "reason": "does not have vllm installed"},
            {"profile": "p", "pool": "none/h100-80gb-hbm3", "node": "g-small", "reason": "has 255 GB of memory, needs 512"},
            {"profile": "p", "pool": "none/h100-80gb-hbm3", "node": "h-full-disk", "reason": "has 99 GB free for weights, needs 100"},
            {"profile": "p", "pool": "none/h100-80gb-hbm3", "node": "i-one-gpu", "reason": "has 1 free h100-80gb-hbm3 GPUs, needs 2"}
        ]}])
    );
    assert_eq!(v["placements"], json!([]));
    // Nothing could place it; the one free GPU of i-one-gpu is stranded.
    assert_eq!(
        v["summary"],
        json!({"wanted": 1, "existing": 0, "placed": 0, "unplaced": 1, "bound": 0, "stranded": {"h100-80gb-hbm3": 1}})
    );
}

#[test]
fn avoid_adapters_no_fabric_and_pool_too_small() {
    let catalog = r#"
[[model]]
name = "m"
replicas = 2
  [[model.profile]]
  name = "one"
  engine = "vllm"
  gpu_class = "h100-80gb-hbm3"
  priority = 10
  node_selector = { only = "n1" }
  [[model.profile]]
  name = "two"
  engine = "vllm"
  gpu_class = "h100-80gb-hbm3"
  nodes = 2
"#;
    // No fabric at all: one rejection with no pool and no node.
    let inv = format!("[[node]]\nid = \"n1\"\nlabels = {{ only = \"n1\" }}\n{}", h100(1));
    let v = place(catalog, &inv);
    assert_eq!(v["placements"][0]["nodes"][0]["node"], "n1");
    assert_eq!(
        v["unplaced"][0]["rejections"],
        json!([
            {"profile": "one", "pool": "none/h100-80gb-hbm3", "node": "n1", "reason": "already hosts this model; spreading across failure domains"},
            {"profile": "two", "pool": "", "node": "", "reason": "needs 2 nodes on one fabric, but no node reports a fabric"}
        ])
    );
    // A fabric, but n2 has no adapters on it and n3 is not attached (skipped
    // silently): the pool is too small.
    let inv = format!(
        "[[node]]\nid = \"n1\"\nlabels = {{ only = \"n1\" }}\n{g}[[node.fabric]]\nname = \"ib-a\"\nhcas = [\"mlx5_0\"]\n\n\
         [[node]]\nid = \"n2\"\n{g}[[node.fabric]]\nname = \"ib-a\"\nhcas = []\n\n[[node]]\nid = \"n3\"\n{g}",
        g = h100(1)
    );
    let v = place(catalog, &inv);
    assert_eq!(
        reasons(&v),
        vec![
            (
                "none/h100-80gb-hbm3".into(),
                "n1".into(),
                "already hosts this model; spreading across failure domains".into()
            ),
            ("none/h100-80gb-hbm3".into(), "n2".into(), "does not carry only=n1".into()),
            ("none/h100-80gb-hbm3".into(), "n3".into(), "does not carry only=n1".into()),
            (
                "ib-a/h100-80gb-hbm3".into(),
                "n1".into(),
                "already hosts this model; spreading across failure domains".into()
            ),
            ("ib-a/h100-80gb-hbm3".into(), "n2".into(), "attached to ib-a but reports no adapters for it".into()),
            ("ib-a/h100-80gb-hbm3".into(), "".into(), "needs 2 nodes, only 0 qualify".into()),
        ]
    );
}

#[test]
fn a_fabric_only_on_a_cordoned_node_still_counts() {
    let catalog = "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\nnodes = 2\n";
    let inv = format!(
        "[[node]]\nid = \"n1\"\nstate = \"cordoned\"\n{}[[node.fabric]]\nname = \"ib-x\"\nhcas = [\"mlx5_0\"]\n\n[[node]]\nid = \"n2\"\n{}",
        h100(8),
        h100(8)
    );
    // The cordoned node is rejected per fabric, attached or not; n2 is not
    // attached and is skipped without a word.
    assert_eq!(
        reasons(&place(catalog, &inv)),
        vec![
            ("ib-x/h100-80gb-hbm3".into(), "n1".into(), "node is cordoned".into()),
            ("ib-x/h100-80gb-hbm3".into(), "".into(), "needs 2 nodes, only 0 qualify".into()),
        ]
    );
}

#[test]
fn older_agents_are_never_excluded() {
    let catalog = r#"
[[model]]
name = "m"
source = "org/m"
  [[model.profile]]
  name = "p"
  engine = "sglang"
  gpu_class = "h100-80gb-hbm3"
  min_memory_gb = 1024
  min_disk_gb = 10000
"#;
    // Reports no engines, no memory, no disk, no weights.
    let v = place(catalog, &format!("[[node]]\nid = \"old\"\n{}", h100(1)));
    assert_eq!(chosen(&v), vec![vec!["old".to_string()]]);
    // Reporting an empty engine table is the same as not reporting.
    let v = place(catalog, &format!("[[node]]\nid = \"old\"\nengines = {{}}\nmemory_total_mb = 0\n{}", h100(1)));
    assert_eq!(chosen(&v), vec![vec!["old".to_string()]]);
}

#[test]
fn disk_is_not_checked_on_a_node_that_holds_the_weights() {
    let catalog = "[[model]]\nname = \"m\"\nsource = \"org/m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\nmin_disk_gb = 500\n";
    let inv = format!(
        "[[node]]\nid = \"full\"\nweights = [\"org/m\"]\ndisk = {{ path = \"/m\", free_bytes = 1, total_bytes = 2 }}\n{}",
        h100(1)
    );
    let v = place(catalog, &inv);
    assert_eq!(chosen(&v), vec![vec!["full".to_string()]]);
}

#[test]
fn best_fit_picks_the_fullest_node_that_fits() {
    let catalog = "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 2\n";
    let inv = format!(
        "[[node]]\nid = \"a-empty\"\n{g8}\n[[node]]\nid = \"b-three-free\"\n{g8}[[node.allocation]]\nmodel = \"x\"\nreplica = 0\ngpus = [0, 1, 2, 3, 4]\n\n\
         [[node]]\nid = \"c-one-free\"\n{g8}[[node.allocation]]\nmodel = \"x\"\nreplica = 1\ngpus = [0, 1, 2, 3, 4, 5, 6]\n",
        g8 = h100(8)
    );
    let v = place(catalog, &inv);
    assert_eq!(
        v["placements"],
        json!([{"model": "m", "replica": 0, "profile": "p", "engine": "vllm", "pool": "none/h100-80gb-hbm3",
                "fabric": null, "nodes": [{"node": "b-three-free", "rank": 0, "gpus": [5, 6], "hcas": []}]}])
    );
}

#[test]
fn weights_beat_best_fit() {
    let catalog = "[[model]]\nname = \"m\"\nsource = \"org/m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n";
    let inv = format!(
        "[[node]]\nid = \"a-one-free\"\nweights = []\n{g2}[[node.allocation]]\nmodel = \"x\"\nreplica = 0\ngpus = [0]\n\n\
         [[node]]\nid = \"b-has-weights\"\nweights = [\"org/m\"]\n{g8}\n[[node]]\nid = \"c-unknown\"\n{g2}",
        g2 = h100(2),
        g8 = h100(8)
    );
    assert_eq!(chosen(&place(catalog, &inv)), vec![vec!["b-has-weights".to_string()]]);
}

#[test]
fn cpu_only_replicas_spread_by_allocation_count() {
    let catalog = "[[model]]\nname = \"m\"\nreplicas = 3\n[[model.profile]]\nname = \"cpu\"\nengine = \"llama.cpp\"\n";
    let busy = |id: &str, n: usize| {
        let allocs: String =
            (0..n).map(|i| format!("[[node.allocation]]\nmodel = \"other\"\nreplica = {i}\ngpus = []\n")).collect();
        format!("[[node]]\nid = \"{id}\"\n{allocs}\n")
    };
    let inv = [busy("a", 2), busy("b", 0), busy("c", 1), busy("d", 0)].join("\n");
    let v = place(catalog, &inv);
    assert_eq!(chosen(&v), vec![vec!["b".to_string()], vec!["d".to_string()], vec!["c".to_string()]]);
    assert_eq!(v["placements"][0]["pool"], "none/cpu");
    assert_eq!(v["placements"][0]["nodes"][0]["gpus"], json!([]));
}

#[test]
fn multi_node_takes_the_emptiest_nodes_of_one_fabric_and_its_hcas() {
    let catalog = "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 4\nnodes = 2\n";
    let node = |id: &str, used: &[u32]| {
        let alloc = if used.is_empty() {
            String::new()
        } else {
            format!("[[node.allocation]]\nmodel = \"x\"\nreplica = 0\ngpus = {used:?}\n")
        };
        format!(
            "[[node]]\nid = \"{id}\"\n{}[[node.fabric]]\nname = \"ib-a\"\nhcas = [\"mlx5_0\", \"mlx5_1\"]\n[[node.fabric]]\nname = \"roce-storage\"\nhcas = [\"mlx5_8\"]\n{alloc}\n",
            h100(8)
        )
    };
    let inv = [node("a", &[0, 1, 2]), node("b", &[]), node("c", &[0]), node("d", &[])].join("\n");
    let v = place(catalog, &inv);
    assert_eq!(
        v["placements"],
        json!([{"model": "m", "replica": 0, "profile": "p", "engine": "vllm", "pool": "ib-a/h100-80gb-hbm3",
        "fabric": "ib-a", "nodes": [
            {"node": "b", "rank": 0, "gpus": [0, 1, 2, 3], "hcas": ["mlx5_0", "mlx5_1"]},
            {"node": "d", "rank": 1, "gpus": [0, 1, 2, 3], "hcas": ["mlx5_0", "mlx5_1"]}
        ]}])
    );
}

#[test]
fn a_fabric_with_too_few_nodes_is_skipped_for_the_next() {
    let catalog = "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\nnodes = 2\n";
    let node = |id: &str, fabric: &str| {
        format!("[[node]]\nid = \"{id}\"\n{}[[node.fabric]]\nname = \"{fabric}\"\nhcas = [\"mlx5_0\"]\n\n", h100(8))
    };
    let inv = [node("a", "ib-a"), node("b", "ib-b"), node("c", "ib-b")].join("");
    let v = place(catalog, &inv);
    assert_eq!(v["placements"][0]["fabric"], "ib-b");
    assert_eq!(chosen(&v), vec![vec!["b".to_string(), "c".to_string()]]);
    // Never a mix of the two fabrics, however well a and b would fit.
    let v = place(catalog, &[node("a", "ib-a"), node("b", "ib-b")].join(""));
    assert_eq!(v["summary"]["unplaced"], 1);
}

#[test]
fn nvlink_island_choice_on_a_node_with_two_islands() {
    // GPUs 0,1 and 2,3 are NVLink pairs; 0 is taken. A pair must come from
    // one island: the seed 1 finds no free peer, the seed 2 finds 3.
    let catalog = "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 2\n";
    let gpu = |i: u32, peers: &str| {
        format!("[[node.gpu]]\nindex = {i}\nname = \"NVIDIA H100 80GB HBM3\"\nnvlink_peers = {peers}\n")
    };
    let inv = format!(
        "[[node]]\nid = \"pcie\"\n{}{}{}{}[[node.allocation]]\nmodel = \"x\"\nreplica = 0\ngpus = [0]\n",
        gpu(0, "[1]"),
        gpu(1, "[0, 0]"),
        gpu(2, "[3]"),
        gpu(3, "[2]")
    );
    let v = place(catalog, &inv);
    assert_eq!(v["placements"][0]["nodes"][0]["gpus"], json!([2, 3]));
}

#[test]
fn peers_of_another_class_are_never_chosen() {
    let catalog = "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 2\n";
    let inv = "[[node]]\nid = \"mixed\"\n\
        [[node.gpu]]\nindex = 0\nname = \"NVIDIA H100 80GB HBM3\"\nnvlink_peers = [1, 3]\n\
        [[node.gpu]]\nindex = 1\nname = \"NVIDIA A100-SXM4-80GB\"\nnvlink_peers = [0]\n\
        [[node.gpu]]\nindex = 2\nname = \"NVIDIA H100 80GB HBM3\"\n\
        [[node.gpu]]\nindex = 3\nname = \"NVIDIA H100 80GB HBM3\"\nnvlink_peers = [0]\n";
    let v = place(catalog, inv);
    assert_eq!(v["placements"][0]["nodes"][0]["gpus"], json!([0, 3]));
}

#[test]
fn unhealthy_gpus_are_never_free() {
    let catalog = "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 2\n";
    let inv = "[[node]]\nid = \"n\"\n\
        [[node.gpu]]\nindex = 0\nname = \"NVIDIA H100 80GB HBM3\"\nhealthy = false\n\
        [[node.gpu]]\nindex = 1\nname = \"NVIDIA H100 80GB HBM3\"\n\
        [[node.gpu]]\nindex = 2\nname = \"NVIDIA H100 80GB HBM3\"\n";
    let v = place(catalog, inv);
    assert_eq!(v["placements"][0]["nodes"][0]["gpus"], json!([1, 2]));
    let v = place(&catalog.replace("gpus_per_node = 2", "gpus_per_node = 3"), inv);
    assert_eq!(reasons(&v)[0].2, "has 2 free h100-80gb-hbm3 GPUs, needs 3");
}

#[test]
fn higher_priority_wins_and_ties_keep_file_order() {
    let catalog = r#"
[[model]]
name = "m"
replicas = 3
  [[model.profile]]
  name = "first-tie"
  engine = "llama.cpp"
  priority = 5
  [[model.profile]]
  name = "best"
  engine = "vllm"
  gpu_class = "h100-80gb-hbm3"
  priority = 10
  [[model.profile]]
  name = "second-tie"
  engine = "llama.cpp"
  priority = 5
"#;
    let inv = format!("[[node]]\nid = \"a\"\n{}\n[[node]]\nid = \"b\"\n\n[[node]]\nid = \"c\"\n", h100(1));
    let v = place(catalog, &inv);
    let profiles: Vec<_> = v["placements"].as_array().unwrap().iter().map(|p| p["profile"].clone()).collect();
    assert_eq!(profiles, vec![json!("best"), json!("first-tie"), json!("first-tie")]);
}

#[test]
fn existing_allocations_count_block_gpus_and_surplus_is_avoided() {
    let catalog = "[[model]]\nname = \"m\"\nreplicas = 3\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n";
    let inv = format!(
        "[[node]]\nid = \"a\"\n{g2}[[node.allocation]]\nmodel = \"m\"\nreplica = 1\ngpus = [0]\n\n\
         [[node]]\nid = \"b\"\n{g2}[[node.allocation]]\nmodel = \"m\"\nreplica = 7\ngpus = [1]\n\n\
         [[node]]\nid = \"c\"\n{g2}[[node.allocation]]\nmodel = \"other\"\nreplica = 0\ngpus = [0]\n\n\
         [[node]]\nid = \"d\"\n{g2}",
        g2 = h100(2)
    );
    let v = place(catalog, &inv);
    // Replica 1 exists; 0 and 2 are placed; a (replica 1) and b (surplus
    // replica 7) are avoided; c's GPU 0 is taken.
    assert_eq!(
        v["summary"],
        json!({"wanted": 3, "existing": 1, "placed": 2, "unplaced": 0, "bound": 2, "stranded": {}})
    );
    let placed: Vec<_> = v["placements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["replica"].clone(), p["nodes"][0]["node"].clone(), p["nodes"][0]["gpus"].clone()))
        .collect();
    assert_eq!(placed, vec![(json!(0), json!("c"), json!([1])), (json!(2), json!("d"), json!([0]))]);
}

#[test]
fn replicas_of_one_model_never_share_a_node() {
    let catalog = "[[model]]\nname = \"m\"\nreplicas = 3\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n";
    let inv = format!("[[node]]\nid = \"a\"\n{g8}\n[[node]]\nid = \"b\"\n{g8}", g8 = h100(8));
    let v = place(catalog, &inv);
    assert_eq!(chosen(&v), vec![vec!["a".to_string()], vec!["b".to_string()]]);
    assert_eq!(v["unplaced"][0]["replica"], 2);
}

#[test]
fn zero_replicas_places_nothing() {
    let catalog = "[[model]]\nname = \"m\"\nreplicas = 0\n[[model.profile]]\nname = \"p\"\nengine = \"llama.cpp\"\n";
    let v = place(catalog, "[[node]]\nid = \"a\"\n");
    assert_eq!(
        v,
        json!({"placements": [], "existing": [], "unplaced": [], "summary": {"wanted": 0, "existing": 0, "placed": 0, "unplaced": 0, "bound": 0, "stranded": {}}})
    );
}

#[test]
fn explain_lists_the_winners_passed_over_nodes() {
    let catalog = r#"
[[model]]
name = "m"
  [[model.profile]]
  name = "big"
  engine = "vllm"
  gpu_class = "h100-80gb-hbm3"
  gpus_per_node = 8
  priority = 1
  [[model.profile]]
  name = "small"
  engine = "vllm"
  gpu_class = "h100-80gb-hbm3"
"#;
    let inv = format!("[[node]]\nid = \"a\"\nstate = \"down\"\n\n[[node]]\nid = \"b\"\n{}", h100(2));
    let v = explain(catalog, &inv, "m");
    assert_eq!(
        v,
        json!({"model": "m", "replicas": [{"replica": 0,
        "placement": {"model": "m", "replica": 0, "profile": "small", "engine": "vllm", "pool": "none/h100-80gb-hbm3",
                      "fabric": null, "nodes": [{"node": "b", "rank": 0, "gpus": [0], "hcas": []}]},
        "rejections": [
            {"profile": "big", "pool": "none/h100-80gb-hbm3", "node": "a", "reason": "node is down"},
            {"profile": "big", "pool": "none/h100-80gb-hbm3", "node": "b", "reason": "has 2 free h100-80gb-hbm3 GPUs, needs 8"},
            {"profile": "small", "pool": "none/h100-80gb-hbm3", "node": "a", "reason": "node is down"}
        ],
        // Explain keeps the full list and gains the grouped one.
        "reasons": [
            {"profile": "big", "pool": "none/h100-80gb-hbm3", "reason": "node is down", "count": 1, "nodes": ["a"]},
            {"profile": "big", "pool": "none/h100-80gb-hbm3", "reason": "has 2 free h100-80gb-hbm3 GPUs, needs 8", "count": 1, "nodes": ["b"]},
            {"profile": "small", "pool": "none/h100-80gb-hbm3", "reason": "node is down", "count": 1, "nodes": ["a"]}
        ]}]})
    );
}

#[test]
fn gpu_class_names_normalise_on_both_sides() {
    let catalog = "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"NVIDIA-H100-80GB-HBM3\"\n";
    let inv = "[[node]]\nid = \"a\"\n[[node.gpu]]\nindex = 0\nname = \"whatever\"\nclass = \"NVIDIA H100 80GB HBM3\"\n";
    let v = place(catalog, inv);
    assert_eq!(v["placements"][0]["pool"], "none/h100-80gb-hbm3");
}

#[test]
fn a_discovered_node_is_held_to_its_engine_list_an_older_agent_is_not() {
    let catalog = "[[model]]\nname = \"m\"\nreplicas = 2\n[[model.profile]]\nname = \"cpu\"\nengine = \"llama.cpp\"\n";
    // The laptop was discovered by llmgw and has no engines; the old agent
    // reports none at all.
    let inventory = "[[node]]\nid = \"laptop\"\ndiscovered_by = \"llmgw 0.1.0\"\nengines = {}\nweights = []\n\n\
                     [[node]]\nid = \"old-agent\"\n";
    let v = place(catalog, inventory);
    assert_eq!(chosen(&v), vec![vec!["old-agent".to_string()]]);
    assert_eq!(
        v["unplaced"][0]["rejections"],
        json!([
            {"profile": "cpu", "pool": "none/cpu", "node": "laptop", "reason": "does not have llama.cpp installed"},
            {"profile": "cpu", "pool": "none/cpu", "node": "old-agent",
             "reason": "already hosts this model; spreading across failure domains"}
        ])
    );
}

#[test]
fn adapters_not_reported_pass_reported_as_none_fail() {
    let catalog = "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"2x8\"\nengine = \"vllm\"\n\
                   gpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\nnodes = 2\n";
    let node = |id: &str, hcas: &str| {
        format!("[[node]]\nid = \"{id}\"\n{}[[node.fabric]]\nname = \"spine-1\"\n{hcas}\n", h100(8))
    };
    // An import from a scheduler knows the fabric, not the adapters.
    let inventory = node("a", "") + &node("b", "") + &node("c", "hcas = []");
    let v = place(catalog, &inventory);
    assert_eq!(chosen(&v), vec![vec!["a".to_string(), "b".to_string()]]);
    assert_eq!(v["placements"][0]["nodes"][0]["hcas"], json!([]));
    let inventory = node("a", "") + &node("c", "hcas = []");
    let v = place(catalog, &inventory);
    assert_eq!(
        reasons(&v),
        vec![
            ("spine-1/h100-80gb-hbm3".into(), "c".into(), "attached to spine-1 but reports no adapters for it".into()),
            ("spine-1/h100-80gb-hbm3".into(), "".into(), "needs 2 nodes, only 1 qualify".into()),
        ]
    );
}

#[test]
fn memory_fit_after_the_gpu_count_with_its_reason() {
    // 405B in bf16 is 810 GB; with the 1.2 room, 243 GB per GPU on TP4.
    let catalog = "[[model]]\nname = \"llama-3.1-405b\"\nparams_b = 405\n[[model.profile]]\nname = \"tp4\"\n\
                   engine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 4\n";
    let gpus = |n: u32| -> String {
        (0..n)
            .map(|i| format!("[[node.gpu]]\nindex = {i}\nname = \"NVIDIA H100 80GB HBM3\"\nmemory_mb = 81559\n"))
            .collect()
    };
    let inventory = format!("[[node]]\nid = \"big\"\n{}\n[[node]]\nid = \"small\"\n{}", gpus(8), gpus(2));
    let v = place(catalog, &inventory);
    assert_eq!(
        reasons(&v),
        vec![
            ("none/h100-80gb-hbm3".into(), "big".into(), "has 71 GiB per h100-80gb-hbm3 GPU, needs 227".into()),
            // The GPU count is checked first.
            ("none/h100-80gb-hbm3".into(), "small".into(), "has 2 free h100-80gb-hbm3 GPUs, needs 4".into()),
        ]
    );
    // Split over 2 x 8 GPUs it fits: 61 GB per GPU.
    let catalog = catalog.replace("gpus_per_node = 4", "gpus_per_node = 8\nnodes = 2");
    let node = |id: &str| format!("[[node]]\nid = \"{id}\"\n{}[[node.fabric]]\nname = \"ib\"\n", gpus(8));
    let v = place(&catalog, &(node("a") + &node("b")));
    assert_eq!(chosen(&v), vec![vec!["a".to_string(), "b".to_string()]]);
}

#[test]
fn host_memory_fit_for_a_cpu_replica_and_unreported_memory_passes() {
    // 70B in int4: 35 GB, 42 GB with room: 40 GiB.
    let catalog = "[[model]]\nname = \"m\"\nparams_b = 70\ndtype = \"int4\"\nreplicas = 2\n[[model.profile]]\n\
                   name = \"cpu\"\nengine = \"llama.cpp\"\n";
    let inventory = "[[node]]\nid = \"a-small\"\nmemory_total_mb = 32768\n\n[[node]]\nid = \"b-unknown\"\n";
    let v = place(catalog, inventory);
    assert_eq!(chosen(&v), vec![vec!["b-unknown".to_string()]]);
    assert_eq!(v["unplaced"][0]["rejections"][0]["reason"], "has 28 GiB of memory for weights, needs 40");
    // weights_gb overrides params_b x dtype.
    let v = place(&catalog.replace("dtype = \"int4\"", "weights_gb = 20"), inventory);
    assert_eq!(chosen(&v), vec![vec!["a-small".to_string()], vec!["b-unknown".to_string()]]);
}

/// A DGX A100-like node: GPU 0 in MIG mode with `migs` devices of `profile`
/// (the first `held` held by `holder`), GPUs 1..`gpus` whole.
fn mig_node(id: &str, gpus: u32, profile: &str, migs: u32, held: u32, holder: &str) -> String {
    let mut s =
        format!("[[node]]\nid = \"{id}\"\n[[node.gpu]]\nindex = 0\nname = \"NVIDIA A100-SXM4-80GB\"\nmig = true\n");
    for m in 0..migs {
        let _ = writeln!(s, "[[node.gpu.mig_device]]\nindex = {m}\nprofile = \"{profile}\"\nmemory_mb = 9856");
    }
    for g in 1..gpus {
        let _ = writeln!(s, "[[node.gpu]]\nindex = {g}\nname = \"NVIDIA A100-SXM4-80GB\"\nmemory_mb = 81920");
    }
    if held > 0 {
        let _ = writeln!(
            s,
            "[[node.allocation]]\nmodel = \"{holder}\"\nreplica = 0\ngpus = [0]\nmig_devices = {:?}",
            (0..held).collect::<Vec<_>>()
        );
    }
    s
}

#[test]
fn a_gpu_in_mig_mode_is_never_free_whole() {
    let tp = |g: u32| {
        format!(
            "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"tp{g}\"\nengine = \"vllm\"\ngpu_class = \"a100-sxm4-80gb\"\ngpus_per_node = {g}\n"
        )
    };
    let inventory = mig_node("dgx", 8, "1g.10gb", 7, 0, "");
    let v = place(&tp(8), &inventory);
    assert_eq!(
        reasons(&v),
        vec![("none/a100-sxm4-80gb".into(), "dgx".into(), "has 7 free a100-sxm4-80gb GPUs, needs 8".into())]
    );
    let v = place(&tp(1), &inventory);
    assert_eq!(v["placements"][0]["nodes"][0]["gpus"], json!([1]));
    assert!(v["placements"][0]["nodes"][0].get("mig_devices").is_none(), "only MIG placements carry the key");
}

#[test]
fn a_mig_profile_takes_one_device_best_fit_lowest_index() {
    let catalog = "[[model]]\nname = \"small\"\nreplicas = 2\n[[model.profile]]\nname = \"mig\"\nengine = \"vllm\"\n\
                   gpu_class = \"a100-sxm4-80gb\"\nmig_profile = \"1g.10gb\"\n";
    // a has 2 of 3 devices free, b 5 of 7: best fit takes a, device 1.
    let inventory = mig_node("a", 1, "1g.10gb", 3, 1, "other") + &mig_node("b", 1, "1g.10gb", 7, 2, "other");
    let v = place(catalog, &inventory);
    assert_eq!(
        v["placements"],
        json!([
            {"model": "small", "replica": 0, "profile": "mig", "engine": "vllm", "pool": "none/a100-sxm4-80gb",
             "fabric": null, "nodes": [{"node": "a", "rank": 0, "gpus": [0], "mig_devices": [1], "hcas": []}]},
            {"model": "small", "replica": 1, "profile": "mig", "engine": "vllm", "pool": "none/a100-sxm4-80gb",
             "fabric": null, "nodes": [{"node": "b", "rank": 0, "gpus": [0], "mig_devices": [2], "hcas": []}]}
        ])
    );
    // No device of the profile: the reason says so.
    let inventory = mig_node("c", 2, "3g.40gb", 2, 0, "");
    let v = place(catalog, &inventory);
    assert_eq!(reasons(&v)[0].2, "has 0 free a100-sxm4-80gb MIG 1g.10gb devices, needs 1");
    // The device's own memory is what the model must fit: 9856 MiB.
    let big = catalog.replace("replicas = 2", "replicas = 1\nweights_gb = 9");
    let v = place(&big, &mig_node("a", 1, "1g.10gb", 3, 0, ""));
    assert_eq!(reasons(&v)[0].2, "has 8 GiB per a100-sxm4-80gb GPU, needs 11");
}

#[test]
fn mig_inventory_errors_are_refused_with_their_codes() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "[[node]]\nid = \"a\"\n[[node.gpu]]\nindex = 0\nname = \"X\"\n[[node.gpu.mig_device]]\nindex = 0\nprofile = \"1g.10gb\"\n",
            "mig-without-mig-mode",
        ),
        (
            "[[node]]\nid = \"a\"\n[[node.gpu]]\nindex = 0\nname = \"X\"\nmig = true\n[[node.gpu.mig_device]]\nindex = 0\nprofile = \"1g.10gb\"\n[[node.gpu.mig_device]]\nindex = 0\nprofile = \"1g.10gb\"\n",
            "duplicate-mig",
        ),
        (
            "[[node]]\nid = \"a\"\n[[node.gpu]]\nindex = 0\nname = \"X\"\nmig = true\n[[node.allocation]]\nmodel = \"m\"\nreplica = 0\ngpus = [0]\nmig_devices = [3]\n",
            "unknown-mig-device",
        ),
        (
            "[[node]]\nid = \"a\"\n[[node.gpu]]\nindex = 0\nname = \"X\"\nmig = true\n[[node.gpu.mig_device]]\nindex = 0\nprofile = \"1g.10gb\"\n[[node.allocation]]\nmodel = \"m\"\nreplica = 0\ngpus = [0]\nmig_devices = [0]\n[[node.allocation]]\nmodel = \"n\"\nreplica = 0\ngpus = [0]\nmig_devices = [0]\n",
            "mig-device-held-twice",
        ),
        (
            "[[node]]\nid = \"a\"\n[[node.gpu]]\nindex = 0\nname = \"X\"\nmig = true\n[[node.gpu]]\nindex = 1\nname = \"X\"\n[[node.allocation]]\nmodel = \"m\"\nreplica = 0\ngpus = [0, 1]\nmig_devices = [0]\n",
            "mig-needs-one-gpu",
        ),
    ];
    for (i, (text, code_name)) in cases.iter().enumerate() {
        let f = write(dir.path(), &format!("f{i}.toml"), text);
        let out = run(&["nodes", "--inventory", f.to_str().unwrap()]);
        assert_eq!(code(&out), 2, "{code_name}: {}", transcript(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("llmgw::inventory::{code_name}")), "{code_name}: {err}");
    }
}

#[test]
fn grouped_reasons_and_what_this_plan_took_from_the_closest_nodes() {
    let dir = tempfile::tempdir().unwrap();
    let model = |name: &str, gpus: u32| {
        format!(
            "[[model]]\nname = \"{name}\"\n[[model.profile]]\nname = \"tp{gpus}\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = {gpus}\n"
        )
    };
    let c = write(
        dir.path(),
        "c.toml",
        &(model("llama-3.1-70b", 4) + &model("qwen2.5-72b", 4) + &model("llama-3.1-405b", 8)),
    );
    let inventory = format!(
        "[[node]]\nid = \"h1\"\n{}\n[[node]]\nid = \"h2\"\n{}[[node.allocation]]\nmodel = \"other\"\nreplica = 0\ngpus = [0, 1, 2, 3]\n\n[[node]]\nid = \"h3\"\nstate = \"cordoned\"\n{}",
        h100(8),
        h100(8),
        h100(8)
    );
    let i = write(dir.path(), "fleet.toml", &inventory);
    let out = run(&["place", c.to_str().unwrap(), "--inventory", i.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    let v = json(&out);
    assert_eq!(chosen(&v), vec![vec!["h2".to_string()], vec!["h1".to_string()]]);
    assert_eq!(
        v["unplaced"],
        json!([{
            "model": "llama-3.1-405b", "replica": 0,
            "reasons": [
                {"profile": "tp8", "pool": "none/h100-80gb-hbm3", "reason": "has 4 free h100-80gb-hbm3 GPUs, needs 8", "count": 1, "nodes": ["h1"]},
                {"profile": "tp8", "pool": "none/h100-80gb-hbm3", "reason": "has 0 free h100-80gb-hbm3 GPUs, needs 8", "count": 1, "nodes": ["h2"]},
                {"profile": "tp8", "pool": "none/h100-80gb-hbm3", "reason": "node is cordoned", "count": 1, "nodes": ["h3"]}
            ],
            "closest": [{
                "profile": "tp8", "pool": "none/h100-80gb-hbm3", "qualify": 0, "needs": 1,
                "nearest": [
                    {"node": "h1", "free": 4, "needs": 8, "taken_in_plan": [{"model": "qwen2.5-72b", "replica": 0, "gpus": [0, 1, 2, 3]}]},
                    {"node": "h2", "free": 0, "needs": 8, "taken_in_plan": [{"model": "llama-3.1-70b", "replica": 0, "gpus": [4, 5, 6, 7]}]}
                ]
            }]
        }])
    );
}
