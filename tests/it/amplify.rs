//! Small inputs that once cost gigabytes or minutes: runs of unplaced
//! replicas (`through`) expanded one by one, and comparisons that missed a
//! change. Each test is named after what it pins; how long the large cases
//! take is measured by `cargo bench --bench amplify`, never asserted here.

use crate::common::*;
use serde_json::json;

/// A placement of `m` replica `r` on two nodes of a fabric, with adapters.
fn spanning(r: u32, fabric: &str, hca: &str) -> serde_json::Value {
    json!({
        "model": "m", "replica": r, "profile": "two", "engine": "vllm", "pool": format!("{fabric}/h100"),
        "fabric": fabric,
        "nodes": [
            {"node": "n1", "rank": 0, "gpus": [0, 1], "hcas": [hca]},
            {"node": "n2", "rank": 1, "gpus": [0, 1], "hcas": [hca]},
        ],
    })
}

fn plan(placements: &serde_json::Value, unplaced: &serde_json::Value) -> String {
    json!({"placements": placements, "unplaced": unplaced}).to_string()
}

#[test]
fn diff_of_a_run_to_the_last_index_is_compared_as_ranges() {
    let dir = tempfile::tempdir().unwrap();
    // 75 bytes that once made diff expand four billion replicas.
    let old =
        write(dir.path(), "old.json", &plan(&json!([]), &json!([{"model": "m", "replica": 0, "through": u32::MAX}])));
    let placed = json!([{"model": "m", "replica": 10, "profile": "p", "engine": "vllm", "pool": "none/h100", "fabric": null,
        "nodes": [{"node": "n1", "rank": 0, "gpus": [0]}]}]);
    let new = write(dir.path(), "new.json", &plan(&placed, &json!([{"model": "m", "replica": 0, "through": 9}])));
    let out = run(&["diff", old.to_str().unwrap(), new.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    let d = json(&out);
    assert_eq!(d["unchanged"], 10);
    assert_eq!(d["placed"][0]["replica"], 10);
    assert_eq!(d["removed"], json!([{"model": "m", "replica": 11, "through": u32::MAX, "old": null}]));
    let human = run(&["diff", old.to_str().unwrap(), new.to_str().unwrap()]);
    let text = stdout(&human);
    assert!(text.contains(&format!("11-{} ({})", u32::MAX, u64::from(u32::MAX) - 10)), "{text}");
    assert!(
        text.contains(&format!("0 moved, 1 placed, 0 unplaced, {} removed, 10 unchanged", u64::from(u32::MAX) - 10)),
        "{text}"
    );
}

#[test]
fn diff_keeps_runs_that_follow_on_as_one_and_splits_them_at_a_placed_replica() {
    let dir = tempfile::tempdir().unwrap();
    let old = write(dir.path(), "old.json", &plan(&json!([]), &json!([])));
    let placed = json!([{"model": "m", "replica": 7, "profile": "p", "engine": "vllm", "pool": "none/h100", "fabric": null,
        "nodes": [{"node": "n1", "rank": 0, "gpus": [0]}]}]);
    // Two runs that follow on (other reasons), then one after the placed replica.
    let unplaced = json!([
        {"model": "m", "replica": 0, "through": 3},
        {"model": "m", "replica": 4, "through": 6},
        {"model": "m", "replica": 8, "through": 1_000_000_000},
    ]);
    let new = write(dir.path(), "new.json", &plan(&placed, &unplaced));
    let out = run(&["diff", old.to_str().unwrap(), new.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    let d = json(&out);
    assert_eq!(
        d["unplaced"],
        json!([
            {"model": "m", "replica": 0, "through": 6, "old": null},
            {"model": "m", "replica": 8, "through": 1_000_000_000, "old": null},
        ])
    );
    assert_eq!(d["placed"][0]["replica"], 7);
}

#[test]
fn diff_sees_a_move_to_another_fabric_and_other_adapters_on_the_same_gpus() {
    let dir = tempfile::tempdir().unwrap();
    let old = write(dir.path(), "old.json", &plan(&json!([spanning(0, "ib-a", "mlx5_0")]), &json!([])));
    let new = write(dir.path(), "new.json", &plan(&json!([spanning(0, "ib-b", "mlx5_1")]), &json!([])));
    let out = run(&["diff", old.to_str().unwrap(), new.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    let d = json(&out);
    assert_eq!(d["moved"][0]["fabric"], json!({"old": "ib-a", "new": "ib-b"}));
    assert_eq!(d["moved"][0]["adapters"], json!({"old": "n1 mlx5_0; n2 mlx5_0", "new": "n1 mlx5_1; n2 mlx5_1"}));
    // Other adapters alone are a move too: NCCL_IB_HCA changes.
    let same_fabric = write(dir.path(), "same.json", &plan(&json!([spanning(0, "ib-a", "mlx5_1")]), &json!([])));
    let out = run(&["diff", old.to_str().unwrap(), same_fabric.to_str().unwrap()]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    assert!(stdout(&out).contains("adapters n1 mlx5_0; n2 mlx5_0 -> n1 mlx5_1; n2 mlx5_1"), "{}", stdout(&out));
    // The same plan is no change.
    let out = run(&["diff", old.to_str().unwrap(), old.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
}

#[test]
fn stop_names_a_replica_that_moved_to_another_fabric() {
    let dir = tempfile::tempdir().unwrap();
    let old = write(dir.path(), "old.json", &plan(&json!([spanning(0, "ib-a", "mlx5_0")]), &json!([])));
    let new = write(dir.path(), "new.json", &plan(&json!([spanning(0, "ib-b", "mlx5_0")]), &json!([])));
    let out = llmgw()
        .args(["render", "slurm", "--stop", old.to_str().unwrap(), new.to_str().unwrap()])
        .env("USER", "ops")
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert_eq!(stdout(&out), "scancel --name=llmgw-m-r0 --user=ops\n");
    let out = run(&["render", "kubernetes", "--stop", old.to_str().unwrap(), new.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert!(stdout(&out).contains("llmgw-m-r0"), "{}", stdout(&out));
}

const NO_FIT: &str = r#"
[[model]]
name = "m"
replicas = 1000000
  [[model.profile]]
  name = "b200"
  engine = "vllm"
  gpu_class = "b200"
  gpus_per_node = 8
"#;

const FLEET: &str = r#"
[[node]]
id = "n1"
state = "ready"
engines = { vllm = "0.11.1" }
  [[node.gpu]]
  index = 0
  name = "NVIDIA H100 80GB HBM3"
  memory_mb = 81559
  [[node.allocation]]
  model = "m"
  replica = 3
  gpus = [0]
"#;

#[test]
fn explain_of_a_million_unplaced_replicas_is_one_run_per_stretch() {
    let dir = tempfile::tempdir().unwrap();
    let cat = write(dir.path(), "catalog.toml", NO_FIT);
    let inv = write(dir.path(), "fleet.toml", FLEET);
    let args = ["explain-placement", cat.to_str().unwrap(), "--model", "m", "-i", inv.to_str().unwrap()];
    let out = llmgw().args(args).args(["--format", "json"]).output().unwrap();
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    let d = json(&out);
    let runs: Vec<(u64, Option<u64>)> = d["replicas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["replica"].as_u64().unwrap(), r["through"].as_u64()))
        .collect();
    // Replica 3 runs: it splits the run.
    assert_eq!(runs, vec![(0, Some(2)), (4, Some(999_999))]);
    assert_eq!(d["replicas"][0]["placement"], serde_json::Value::Null);
    assert_eq!(d["replicas"][0]["rejections"], d["replicas"][1]["rejections"]);
    let human = stdout(&llmgw().args(args).output().unwrap());
    assert!(human.contains("replicas 4-999999 (999996): not placed"), "{human}");
    // One replica asked about is that replica alone.
    let out = llmgw().args(args).args(["--replica", "500000", "--format", "json"]).output().unwrap();
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    let d = json(&out);
    assert_eq!(d["replicas"].as_array().unwrap().len(), 1);
    assert_eq!(d["replicas"][0]["replica"], 500_000);
    assert!(d["replicas"][0].get("through").is_none(), "{d}");
}

/// Bounded before they are kept: each hostile input below once cost tens
/// or hundreds of times its size in memory (figures: benches/amplify.rs).
/// Each is held to 50 times its size (less where the bound is tighter)
/// over what llmgw takes to read a one-node file.
mod kept {
    use crate::common::*;
    use serde_json::json;

    fn nodes(dir: &std::path::Path) -> std::path::PathBuf {
        let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {}},
            "status": {"capacity": {"cpu": "96", "memory": "2Ti", "nvidia.com/gpu": "8"},
                       "allocatable": {"cpu": "96", "memory": "2Ti", "nvidia.com/gpu": "8"},
                       "conditions": [{"type": "Ready", "status": "True"}]}});
        write(dir, "nodes.json", &json!({"apiVersion": "v1", "kind": "List", "items": [node]}).to_string())
    }

    /// Peak memory of `args` over the baseline, against `times` x `input` bytes.
    fn within(times: u64, args: &[&str], baseline: &[&str], input: &std::path::Path, want_code: i32) {
        let size = std::fs::metadata(input).unwrap().len();
        let (Some((_, base)), Some((code, peak))) = (peak_rss(baseline), peak_rss(args)) else {
            eprintln!(
                "SKIPPED: peak memory is measured with GNU time (/usr/bin/time); the Debian package `time` installs it"
            );
            return;
        };
        assert_eq!(code, want_code, "{args:?}");
        let over = peak.saturating_sub(base);
        assert!(
            over <= times * size,
            "{args:?}: {} MB over a baseline of {} MB for {} MB of input",
            over >> 20,
            base >> 20,
            size >> 20
        );
    }

    #[test]
    fn a_pod_of_150000_containers_costs_what_it_asks_not_a_value_per_field() {
        let dir = tempfile::tempdir().unwrap();
        let n = nodes(dir.path());
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "x"},
            "spec": {"nodeName": "n1", "containers": vec![json!({"name": "c"}); 150_000]}, "status": {"phase": "Running"}});
        let pods =
            write(dir.path(), "pods.json", &json!({"apiVersion": "v1", "kind": "List", "items": [pod]}).to_string());
        let (n, p) = (n.to_str().unwrap(), pods.to_str().unwrap());
        within(
            50,
            &["inventory", "import", "kubernetes", n, "--pods", p],
            &["inventory", "import", "kubernetes", n],
            &pods,
            0,
        );
    }

    #[test]
    fn a_resourceslice_pool_past_the_cap_is_refused_before_it_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let n = nodes(dir.path());
        let device = |i: usize| {
            json!({"name": format!("gpu-{i}"), "attributes": {"type": {"string": "gpu"}, "uuid": {"string": format!("GPU-{i:08}")},
                "productName": {"string": "NVIDIA H100"}}, "capacity": {"memory": {"value": "80Gi"}}})
        };
        // One slice of 40,000 devices: the API holds a slice to 128.
        let slices = vec![
            json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s0"},
            "spec": {"driver": "gpu.nvidia.com", "nodeName": "n1", "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                     "devices": (0..40_000).map(device).collect::<Vec<_>>()}}),
        ];
        let file =
            write(dir.path(), "slices.json", &json!({"apiVersion": "v1", "kind": "List", "items": slices}).to_string());
        let (n, s) = (n.to_str().unwrap(), file.to_str().unwrap());
        // No more of the pool is kept than a node may have (8,192 devices):
        // the cost is reading the file, a few times its size (it was 32).
        within(
            10,
            &["inventory", "import", "kubernetes", n, "--resource-slices", s],
            &["inventory", "import", "kubernetes", n],
            &file,
            2,
        );
    }

    #[test]
    fn a_job_list_of_items_that_hold_nothing_keeps_none_of_them() {
        let dir = tempfile::tempdir().unwrap();
        let nodes =
            write(dir.path(), "nodes.txt", "NodeName=n1 CPUTot=64 RealMemory=512000 Gres=gpu:h100:8 State=IDLE\n");
        let n = nodes.to_str().unwrap();
        // Two million finished (empty) jobs, then two million that are no job.
        for (name, item, code) in [("empty.json", "{}", 0), ("zeros.json", "0", 2)] {
            let list = vec![item; 2_000_000].join(",");
            let jobs = write(dir.path(), name, &format!("{{\"jobs\": [{list}]}}"));
            let j = jobs.to_str().unwrap();
            within(
                50,
                &["inventory", "import", "slurm", n, "--jobs", j, "--jobs-user", "root"],
                &["inventory", "import", "slurm", n],
                &jobs,
                code,
            );
        }
    }
}
