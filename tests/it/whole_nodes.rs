//! Whole nodes: what a scheduler admits work on beside GPUs (CPUs,
//! allocatable memory, taints, what pending work holds), one test for each
//! way a plan that fit llmgw used to wait forever in the cluster. The real
//! kube-scheduler's own decisions on what render writes are tests/it/kube.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::*;

fn place(catalog: &Path, fleet: &Path) -> Value {
    let out = run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "--format", "json"]);
    assert!(code(&out) <= 1, "{}", transcript(&out));
    json(&out)
}

/// Every reason text an unplaced replica of `model` got.
fn reasons(plan: &Value, model: &str) -> Vec<String> {
    plan["unplaced"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["model"] == model)
        .flat_map(|u| u["reasons"].as_array().unwrap().iter().map(|r| r["reason"].as_str().unwrap().to_string()))
        .collect()
}

fn placed<'a>(plan: &'a Value, model: &str) -> Vec<&'a Value> {
    plan["placements"].as_array().unwrap().iter().filter(|p| p["model"] == model).collect()
}

fn fleet(dir: &Path, text: &str) -> PathBuf {
    write(dir, "fleet.toml", text)
}

const H100: &str = "[[node.gpu]]\nindex = 0\nname = \"NVIDIA H100 80GB HBM3\"\nmemory_mb = 81559\n\
                    [[node.gpu]]\nindex = 1\nname = \"NVIDIA H100 80GB HBM3\"\nmemory_mb = 81559\n\
                    [[node.gpu]]\nindex = 2\nname = \"NVIDIA H100 80GB HBM3\"\nmemory_mb = 81559\n\
                    [[node.gpu]]\nindex = 3\nname = \"NVIDIA H100 80GB HBM3\"\nmemory_mb = 81559\n";

/// Before: a TP4 replica and a llama.cpp replica on one 64-CPU node asked
/// for 64 + 32 CPUs, and one of the two waited forever. Now the second
/// sees none free and goes elsewhere (here: nowhere, saying why).
#[test]
fn two_replicas_never_ask_one_node_for_more_cpus_than_it_has() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let f = fleet(d, &format!("[[node]]\nid = \"g1\"\ncpus = 64\nmemory_total_mb = 1031987\n{H100}"));
    let c = write(
        d,
        "c.toml",
        "[[model]]\nname = \"llama-70b\"\n[[model.profile]]\nname = \"tp4\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 4\n\
         [[model]]\nname = \"qwen-gguf\"\n[[model.profile]]\nname = \"cpu\"\nengine = \"llama.cpp\"\n",
    );
    let plan = place(&c, &f);
    let tp4 = placed(&plan, "llama-70b");
    assert_eq!(tp4[0]["nodes"][0]["cpus"], 64, "{plan}");
    assert_eq!(tp4[0]["nodes"][0]["memory_mb"], 1031987);
    assert_eq!(reasons(&plan, "qwen-gguf"), ["has no free CPUs"], "{plan}");
    // The scripts ask for exactly what the plan says: 64, once.
    let plan_file = write(d, "plan.json", &plan.to_string());
    let out = run(&[
        "render",
        "slurm",
        plan_file.to_str().unwrap(),
        "--catalog",
        c.to_str().unwrap(),
        "-i",
        f.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let text = stdout(&out);
    assert_eq!(text.matches("#SBATCH --cpus-per-task=").count(), 1, "{text}");
    assert!(text.contains("#SBATCH --cpus-per-task=64\n#SBATCH --mem=1031987M\n"), "{text}");
}

/// Before: `cpus = 500` went onto a 224-CPU node and `memory_gb = 512000`
/// became `--mem=524288000M`, with no word from lint, place or render.
#[test]
fn requests_no_node_can_hold_are_refused_by_place_and_warned_by_lint() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let f = fleet(
        d,
        &format!(
            "[[node]]\nid = \"g1\"\ncpus = 224\nmemory_total_mb = 2063937\nmemory_allocatable_mb = 2053697\n{H100}"
        ),
    );
    let c = write(
        d,
        "c.toml",
        "[[model]]\nname = \"a\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ncpus = 500\n\
         [[model]]\nname = \"b\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\nmemory_gb = 512000\n",
    );
    let plan = place(&c, &f);
    assert_eq!(reasons(&plan, "a"), ["has 224 free CPUs, needs 500"], "{plan}");
    assert_eq!(reasons(&plan, "b"), ["has 2005 GiB of free memory, needs 512000"], "{plan}");
    let lint = run(&["lint", c.to_str().unwrap(), "--inventory", f.to_str().unwrap(), "--format", "json"]);
    let text = stdout(&lint);
    assert!(
        text.contains("asks each node for 500 CPUs, but no node with `h100-80gb-hbm3` GPUs has more than 224"),
        "{text}"
    );
    assert!(
        text.contains(
            "asks each node for 512000 GiB of memory, but no node with `h100-80gb-hbm3` GPUs has more than 2005 GiB"
        ),
        "{text}"
    );
}

/// Before: a node tainted for GPU work imported as ready, manifests carried
/// no tolerations, and the pod never scheduled. Now a GPU replica tolerates
/// `nvidia.com/gpu` (and render says so), a CPU replica is kept off, and
/// AKS's `sku=gpu` taint needs the profile's toleration.
#[test]
fn taints_keep_off_what_does_not_tolerate_them_and_render_writes_the_tolerations() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let f = fleet(
        d,
        &format!(
            "[[node]]\nid = \"aks\"\ntaints = [\"sku=gpu:NoSchedule\"]\n{H100}\
             [[node]]\nid = \"gke\"\ntaints = [\"nvidia.com/gpu=present:NoSchedule\"]\n{H100}"
        ),
    );
    let c = write(
        d,
        "c.toml",
        "[[model]]\nname = \"gpu\"\nreplicas = 2\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 4\n\
         [[model]]\nname = \"aks\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ntolerations = [\"sku=gpu\"]\n\
         [[model]]\nname = \"cpu\"\n[[model.profile]]\nname = \"p\"\nengine = \"llama.cpp\"\n",
    );
    let plan = place(&c, &f);
    let gpu = placed(&plan, "gpu");
    assert_eq!((gpu.len(), &gpu[0]["nodes"][0]["node"]), (1, &Value::from("gke")), "{plan}");
    assert_eq!(
        reasons(&plan, "gpu"),
        ["has taint sku=gpu:NoSchedule, not tolerated", "already hosts this model; spreading across failure domains"],
        "{plan}"
    );
    assert_eq!(placed(&plan, "aks")[0]["nodes"][0]["node"], "aks", "{plan}");
    let mut cpu = reasons(&plan, "cpu");
    cpu.sort();
    assert_eq!(
        cpu,
        ["has taint nvidia.com/gpu=present:NoSchedule, not tolerated", "has taint sku=gpu:NoSchedule, not tolerated"]
    );
    let plan_file = write(d, "plan.json", &plan.to_string());
    let out = run(&[
        "render",
        "kubernetes",
        plan_file.to_str().unwrap(),
        "--catalog",
        c.to_str().unwrap(),
        "-i",
        f.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    for doc in crate::render::documents(&stdout(&out)).iter().filter(|d| d["kind"] == "Deployment") {
        let spec = &doc["spec"]["template"]["spec"];
        let tolerations = spec["tolerations"].as_array().unwrap();
        assert!(tolerations.iter().any(|t| t["key"] == "nvidia.com/gpu" && t["operator"] == "Exists"), "{doc}");
        if doc["metadata"]["annotations"]["llmgw.io/model"] == "aks" {
            assert!(
                tolerations.iter().any(|t| t["key"] == "sku" && t["operator"] == "Equal" && t["value"] == "gpu"),
                "{doc}"
            );
        }
    }
}

/// Before: after importing a submitted-but-pending job, the next plan put
/// another replica on the very MIG device the pending one waits for.
#[test]
fn a_pending_replica_holds_the_mig_device_it_waits_for() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let f = fleet(
        d,
        "[[node]]\nid = \"a1\"\ncpus = 32\n\
         [[node.gpu]]\nindex = 0\nname = \"NVIDIA A100-SXM4-80GB\"\nmig = true\n\
         [[node.gpu.mig_device]]\nindex = 0\nprofile = \"3g.40gb\"\n[[node.gpu.mig_device]]\nindex = 1\nprofile = \"3g.40gb\"\n\
         [[node.allocation]]\nmodel = \"m\"\nreplica = 0\ngpus = [0]\nmig_devices = [0]\ncpus = 8\npending = true\njob = 4711\n",
    );
    let c = write(
        d,
        "c.toml",
        "[[model]]\nname = \"m\"\nreplicas = 2\nreplicas_per_node = 2\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"a100-sxm4-80gb\"\nmig_profile = \"3g.40gb\"\n",
    );
    let plan = place(&c, &f);
    assert_eq!(plan["summary"]["existing"], 1, "{plan}");
    let p = placed(&plan, "m");
    assert_eq!(p[0]["replica"], 1);
    assert_eq!(
        p[0]["nodes"][0]["mig_devices"],
        serde_json::json!([1]),
        "the pending replica's device was given away: {plan}"
    );
    // The pending replica holds 8 of 32 CPUs; the new one gets its share
    // (half a GPU of one) of 32, which is free.
    assert_eq!(p[0]["nodes"][0]["cpus"], 16);
    assert_eq!(plan["existing"][0]["pending"], true);
    assert_eq!(plan["existing"][0]["nodes"][0]["cpus"], 8);
}

/// Before: a node whose GFD labels count a GPU while the kubelet offers
/// none imported as one free, healthy GPU; a node with AMD GPUs imported
/// as none, without a word. (AMD GPUs are imported now; Intel's are named.)
#[test]
fn gpus_the_kubelet_does_not_offer_are_unhealthy_and_other_vendors_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let node = |name: &str, labels: Value, capacity: Value| {
        serde_json::json!({"kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"capacity": capacity, "allocatable": capacity, "conditions": [{"type": "Ready", "status": "True"}]}})
    };
    let list = serde_json::json!({"kind": "List", "items": [
        node("l4", serde_json::json!({"nvidia.com/gpu.count": "1", "nvidia.com/gpu.product": "NVIDIA-L4"}),
             serde_json::json!({"nvidia.com/gpu": "0", "cpu": "8", "memory": "32Gi"})),
        node("mi300", serde_json::json!({}), serde_json::json!({"amd.com/gpu": "8", "cpu": "192", "memory": "2Ti"})),
        node("arc", serde_json::json!({}), serde_json::json!({"gpu.intel.com/i915": "1", "cpu": "16", "memory": "64Gi"})),
    ]});
    let f = write(dir.path(), "nodes.json", &list.to_string());
    let out = run(&["inventory", "import", "kubernetes", f.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("llmgw::kubernetes::no-device-plugin") && err.contains("node `l4`"), "{err}");
    assert!(err.contains("llmgw::import::other-vendor") && err.contains("arc (1 gpu.intel.com/i915)"), "{err}");
    // The AMD node's GPUs are imported, not named among other vendors'
    // (its memory, which no label gives, is said apart).
    let others = err.split("llmgw::import::other-vendor").nth(1).unwrap_or_default();
    let others = others.split("llmgw::").next().unwrap_or_default();
    assert!(!others.contains("mi300"), "{err}");
    assert!(err.contains("llmgw::import::unknown-memory") && err.contains("mi300 (8 amd-gpu GPU(s))"), "{err}");
    let v = json(&out);
    let mi300 = v["node"].as_array().unwrap().iter().find(|n| n["id"] == "mi300").unwrap();
    assert_eq!(mi300["gpu"].as_array().unwrap().len(), 8, "{mi300}");
    assert_eq!(mi300["gpu"][7]["vendor"], "amd", "{mi300}");
    let l4 = v["node"].as_array().unwrap().iter().find(|n| n["id"] == "l4").unwrap();
    assert_eq!(l4["gpu"][0]["healthy"], false, "{l4}");
}

// What render writes on this fleet is bound by the real kube-scheduler, on
// the real control plane, to exactly the planned nodes: tests/it/kube
// (apply.rs, whose fleet is this one, and agree.rs on random fleets). The
// re-implementation of NodeResourcesFit and TaintToleration that stood
// here is retired: the scheduler itself now decides.

/// A GPU profile tolerates `nvidia.com/gpu` whatever the fleet holds of its
/// class (SPEC 12): on a node whose GPUs are of another class it is the GPU
/// check that refuses, as kube-scheduler would (the rendered pod tolerates
/// the taint). Found by the agreement test on the real scheduler.
#[test]
fn a_gpu_profile_of_a_class_the_fleet_lacks_still_tolerates_the_nvidia_taint() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let f = fleet(d, &format!("[[node]]\nid = \"gke\"\ntaints = [\"nvidia.com/gpu=present:NoSchedule\"]\n{H100}"));
    let c = write(
        d,
        "c.toml",
        "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"l40s\"\n",
    );
    let plan = place(&c, &f);
    assert_eq!(reasons(&plan, "m"), ["has 0 free l40s GPUs, needs 1"], "{plan}");
}
