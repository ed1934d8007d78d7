//! Output that says what is used: `nodes` with CPUs, memory, taints and
//! allocations and a line per GPU class; `place` ending with GPUs used
//! and free per class (and saying so with `-o`); `render` with totals and
//! the replicas left unplaced; input of the wrong kind saying what to run;
//! `capacity` per model and per shape.

use std::path::Path;

use crate::common::*;

#[test]
fn nodes_shows_what_is_free_and_what_holds_it_and_labels_only_when_wide() {
    let out = run(&["nodes", "-i", "examples/whole-nodes.toml"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let text = stdout(&out);
    for header in ["GPUS FREE", "CPU/MEM FREE", "TAINTS", "ALLOCATIONS"] {
        assert!(text.contains(header), "{text}");
    }
    // gpu-01: 224 CPUs, 0.5 held by the DCGM exporter; 2053696 MiB
    // allocatable, 512 held; tainted; the exporter named.
    assert!(text.contains("223.5/224 CPUs"), "{text}");
    assert!(text.contains("2005/2005 GiB"), "{text}");
    assert!(text.contains("nvidia.com/gpu=present:NoSchedule"), "{text}");
    assert!(text.contains("pod:kube-system/nvidia-dcgm-exporter-x7k2p r0"), "{text}");
    assert!(!text.contains("LABELS"), "{text}");
    assert!(text.ends_with("2 nodes\nh100-80gb-hbm3: 4/4 free\n"), "{text}");
    let wide = stdout(&run(&["nodes", "-i", "examples/fleet.toml", "--wide"]));
    assert!(wide.contains("LABELS") && wide.contains("rack=r1"), "{wide}");
    let plain = stdout(&run(&["nodes", "-i", "examples/fleet.toml"]));
    assert!(!plain.contains("rack=r1"), "{plain}");
    // The per-class lines add up the column, over the nodes shown.
    assert!(
        plain.ends_with("13 nodes\na100-sxm4-80gb: 24/24 free\nh100-80gb-hbm3: 39/48 free\nl40s: 4/4 free\n"),
        "{plain}"
    );
    let zone_a = stdout(&run(&["nodes", "-i", "examples/fleet.toml", "-l", "zone=a"]));
    assert!(zone_a.ends_with("a100-sxm4-80gb: 8/8 free\nh100-80gb-hbm3: 20/24 free\nl40s: 4/4 free\n"), "{zone_a}");
    let v = json(&run(&["nodes", "-i", "examples/whole-nodes.toml", "--format", "json"]));
    let n = v["nodes"].as_array().unwrap().iter().find(|n| n["id"] == "gpu-01").unwrap();
    assert_eq!(n["cpus"], serde_json::json!({"free": 223.5, "total": 224}));
    assert_eq!(n["memory"], serde_json::json!({"free_mb": 2053184, "total_mb": 2053696}));
    assert_eq!(n["taints"][0], "nvidia.com/gpu=present:NoSchedule");
    assert_eq!(n["workloads"][0]["model"], "pod:kube-system/nvidia-dcgm-exporter-x7k2p");
    assert_eq!(v["classes"], serde_json::json!([{"class": "h100-80gb-hbm3", "free": 4, "total": 4}]));
}

/// kubectl reads `-l zone=b,role=cpu` as both; so does llmgw (it matched
/// no node at all: the value was taken as `b,role=cpu`).
#[test]
fn a_selector_with_commas_means_every_pair() {
    let out = run(&["nodes", "-i", "examples/fleet.toml", "-l", "zone=b,role=cpu"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert!(stdout(&out).contains("\n2 of 13 nodes\n"), "{}", transcript(&out));
    assert!(stdout(&out).contains("cpu-02") && stdout(&out).contains("cpu-03"));
    let out = run(&["nodes", "-i", "examples/fleet.toml", "-l", "zone=b,role"]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
}

#[test]
fn place_ends_with_the_gpus_used_and_free_per_class() {
    let out = run(&["place", "catalog/fleet.toml", "-i", "examples/fleet.toml"]);
    assert_eq!(code(&out), 1);
    let text = stdout(&out);
    let tail = "14 wanted, 3 existing, 9 placed, 2 unplaced\n\
                placed 9 of 11; no plan places more than 10; 12 a100-sxm4-80gb, 8 h100-80gb-hbm3 GPUs stranded\n\
                a100-sxm4-80gb: 4 used, 20 free, 12 stranded (24 GPUs)\n\
                h100-80gb-hbm3: 28 used, 19 free, 8 stranded (1 unhealthy, 48 GPUs)\n\
                l40s: 0 used, 4 free, 0 stranded (4 GPUs)\n";
    assert!(text.ends_with(tail), "{text}");
    // Written to a file, the plan is the file's; the summary goes to stderr.
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.json");
    let out = run(&["place", "catalog/fleet.toml", "-i", "examples/fleet.toml", "-o", plan.to_str().unwrap()]);
    assert_eq!(code(&out), 1);
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).ends_with(tail), "{}", transcript(&out));
    // The counts agree with the plan: 20 new H100 GPUs, 4 new A100 ones.
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    let mut new = std::collections::BTreeMap::new();
    for p in v["placements"].as_array().unwrap() {
        let class = if p["pool"].as_str().unwrap().ends_with("a100-sxm4-80gb") { "a100" } else { "h100" };
        for n in p["nodes"].as_array().unwrap() {
            *new.entry(class).or_insert(0) += n["gpus"].as_array().unwrap().len();
        }
    }
    assert_eq!(new, [("a100", 4), ("h100", 20)].into());
}

/// A fleet of `n` DGX nodes on one fabric and a catalog of `n` TP8
/// replicas and one that no node can hold.
fn big(dir: &Path, n: u32) -> (std::path::PathBuf, std::path::PathBuf) {
    let fleet = dir.join("fleet.json");
    let out = run(&["inventory", "synth", &format!("dgx-h100:{n}@ib"), "-o", fleet.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let catalog = write(
        dir,
        "catalog.toml",
        &format!(
            "[[model]]\nname = \"m\"\nreplicas = {n}\n[[model.profile]]\nname = \"tp8\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\n\
             [[model]]\nname = \"b200\"\nreplicas = 3\n[[model.profile]]\nname = \"tp8\"\nengine = \"vllm\"\ngpu_class = \"b200\"\ngpus_per_node = 8\n"
        ),
    );
    (fleet, catalog)
}

#[test]
fn render_gives_totals_past_fifty_files_and_names_what_it_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let (fleet, catalog) = big(dir.path(), 60);
    let plan = dir.path().join("plan.json");
    let out = run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    let jobs = dir.path().join("jobs");
    let o = jobs.to_str().unwrap();
    let out = render_plan("slurm", &plan, &catalog, &fleet, &["-o", o]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let text = stdout(&out);
    assert_eq!(
        text,
        format!(
            "61 files in {o}: 61 new, 0 changed, 0 unchanged, 0 removed (--format json lists each)\n\
             the plan leaves 3 replicas unplaced, not rendered: b200 replicas 0-2\n"
        )
    );
    let out = render_plan("slurm", &plan, &catalog, &fleet, &["-o", o, "--format", "json"]);
    let v = json(&out);
    assert_eq!(v["files"].as_array().unwrap().len(), 61);
    assert_eq!(v["totals"], serde_json::json!({"new": 0, "changed": 0, "unchanged": 61, "removed": 0}));
    assert_eq!(v["unplaced"], serde_json::json!([{"model": "b200", "replica": 0, "through": 2}]));
    // Streamed, the manifests are stdout; what was left out goes to stderr.
    let out = render_plan("kubernetes", &plan, &catalog, &fleet, &[]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("the plan leaves 3 replicas unplaced, not rendered: b200 replicas 0-2")
    );
    // At most fifty files: a line each, as before, then what was left out.
    let small = tempfile::tempdir().unwrap();
    let (fleet, catalog) = big(small.path(), 3);
    let plan = small.path().join("plan.json");
    run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
    let jobs = small.path().join("jobs");
    let out = render_plan("slurm", &plan, &catalog, &fleet, &["-o", jobs.to_str().unwrap()]);
    let text = stdout(&out);
    assert_eq!(text.lines().filter(|l| l.starts_with("new ")).count(), 4, "{text}");
    assert!(text.ends_with("the plan leaves 3 replicas unplaced, not rendered: b200 replicas 0-2\n"), "{text}");
}

#[test]
fn input_of_the_wrong_kind_says_what_to_run() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = "tests/data/kubernetes/nodes.json";
    let scontrol = "tests/data/real/slurm/scontrol-show-node-22.05.10-dccn-donders.txt";
    let sinfo = "tests/data/real/slurm/sinfo-json-v0.0.37-21.08.5-rivosinc.json";
    let node_yaml = "tests/data/kubernetes/node.yaml";
    let plan = dir.path().join("plan.json");
    run(&["place", "catalog/fleet.toml", "-i", "examples/fleet.toml", "-o", plan.to_str().unwrap()]);
    let plan = plan.to_str().unwrap();
    for (args, says) in [
        (vec!["nodes", "-i", nodes], format!("import it first: llmgw inventory import kubernetes {nodes}")),
        (vec!["nodes", "-i", node_yaml], format!("import it first: llmgw inventory import kubernetes {node_yaml}")),
        (
            vec!["place", "catalog/fleet.toml", "-i", scontrol],
            format!("import it first: llmgw inventory import slurm {scontrol}"),
        ),
        (vec!["nodes", "-i", sinfo], format!("import it first: llmgw inventory import slurm {sinfo}")),
        (vec!["nodes", "-i", "tests/data/kubernetes/pods.json"], "--pods tests/data/kubernetes/pods.json".to_string()),
        (
            vec!["place", "examples/fleet.toml", "-i", "catalog/fleet.toml"],
            "is not a catalog: it is an inventory (it lists `node`s)".into(),
        ),
        (
            vec!["place", "catalog/fleet.toml", "-i", "catalog/fleet.toml"],
            "is not an inventory: it is a catalog (it lists `model`s)".into(),
        ),
        (vec!["nodes", "-i", plan], "is not an inventory: it is a plan (what `place --format json` writes)".into()),
        (
            vec!["map", "catalog/fleet.toml", "-i", "examples/fleet.toml"],
            "is not a plan: it is a catalog (it lists `model`s)".into(),
        ),
    ] {
        let out = run(&args);
        assert_eq!(code(&out), 2, "{args:?}: {}", transcript(&out));
        // Words as one line, and the help's wrapping (inside a long path) undone.
        let err: String = flat(&out.stderr).split_whitespace().collect();
        let says: String = says.split_whitespace().collect();
        assert!(err.contains("llmgw::input::wrong-kind") && err.contains(&says), "{args:?}: {err}");
    }
    // A broken inventory is still told what is wrong with it, not what it is.
    let out = run(&["nodes", "-i", "tests/data/bad/duplicate-node.toml"]);
    assert!(!flat(&out.stderr).contains("wrong-kind"), "{}", transcript(&out));
}

#[test]
fn capacity_answers_per_model_and_per_shape() {
    let base = ["capacity", "catalog/fleet.toml", "-i", "examples/fleet.toml"];
    let out = run(&[&base[..], &["--add", "dgx-h100@ib-east", "--add", "hgx-a100@ib-west"]].concat());
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    let text = stdout(&out);
    assert!(text.starts_with("add 3 x dgx-h100 on ib-east: 14/14 replicas placed (12 without)\n"), "{text}");
    assert!(text.contains("even 1024 x hgx-a100 on ib-west leave 1 of 14 replicas unplaced"), "{text}");
    let v = json(&run(
        &[&base[..], &["--add", "dgx-h100@ib-east", "--add", "hgx-a100@ib-west", "--format", "json"]].concat()
    ));
    let answers = v.as_array().expect("several shapes: a list");
    assert_eq!((answers[0]["added"].as_u64(), answers[1]["added"].as_u64()), (Some(3), None));
    let models = answers[0]["models"].as_array().unwrap();
    assert_eq!(models.len(), 6);
    let deepseek = models.iter().find(|m| m["model"] == "deepseek-v3").unwrap();
    assert_eq!(deepseek, &serde_json::json!({"model": "deepseek-v3", "added": 1, "wanted": 1, "placed_without": 0}));
    let placed = models.iter().find(|m| m["model"] == "llama-3.1-8b").unwrap();
    assert_eq!(placed["added"], 0);
    // One model alone: the 405B's second replica fits without any.
    let out = run(&[&base[..], &["--add", "dgx-h100@ib-east", "--model", "deepseek-v3", "--format", "json"]].concat());
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let v = json(&out);
    assert_eq!((v["added"].as_u64(), v["wanted"].as_u64()), (Some(1), Some(1)));
    let out = run(&[&base[..], &["--add", "dgx-h100", "--model", "llama-3"]].concat());
    assert_eq!(code(&out), 2, "{}", transcript(&out));
}
