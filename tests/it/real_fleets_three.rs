//! Real fleets, third round: EKS nodes that only Karpenter has labelled,
//! Slurm's block topology, imported as an operator would (the real output,
//! then `place`). Provenance: tests/data/real/PROVENANCE.md. Each test is
//! named after what it pins.

use serde_json::{Value, json};

use crate::common::{code, flat, json, root, run, transcript, write};

const KARPENTER: &str = "tests/data/real/kubernetes/karpenter";

fn part(base: &str, what: &str) -> Value {
    let path = root().join(KARPENTER).join(format!("{base}.{what}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The Node `kubectl describe node` printed, as `kubectl get node -o json`
/// holds it: its labels, capacity, allocatable, taint and Ready condition.
fn described(base: &str, taint: Value) -> Value {
    let labels = part(base, "labels");
    json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": labels["kubernetes.io/hostname"], "labels": labels},
        "spec": {"taints": [taint]},
        "status": {"capacity": part(base, "capacity"), "allocatable": part(base, "allocatable"),
                   "conditions": [{"type": "Ready", "status": "True"}]}})
}

const L4: &str = "karpenter-g6-xlarge-l4-eks-1.36-describe";
const P4D: &str = "karpenter-p4d-24xlarge-a100-eks-1.34-describe";

/// A 70B model in bf16 on one GPU of each class, and an 8B one.
const CATALOG: &str = r#"
[[model]]
name = "llama-70b"
params_b = 70.6
[[model.profile]]
name = "l4"
engine = "vllm"
gpu_class = "l4"
[[model.profile]]
name = "a100"
engine = "vllm"
gpu_class = "a100-sxm4-40gb"

[[model]]
name = "llama-8b"
params_b = 8.0
[[model.profile]]
name = "l4"
engine = "vllm"
gpu_class = "l4"
"#;

fn import(dir: &std::path::Path, nodes: Vec<Value>) -> std::process::Output {
    let f = write(dir, "nodes.json", &json!({"apiVersion": "v1", "kind": "List", "items": nodes}).to_string());
    run(&["inventory", "import", "kubernetes", f.to_str().unwrap(), "--format", "json"])
}

#[test]
fn karpenter_labels_give_eks_gpus_their_class_count_and_memory() {
    let dir = tempfile::tempdir().unwrap();
    let l4 = described(L4, json!({"key": "nvidia.com/gpu", "effect": "NoSchedule"}));
    let p4d = described(P4D, json!({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}));
    let out = import(dir.path(), vec![l4, p4d]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let inv = json(&out);
    let gpus = |id: &str| inv["node"].as_array().unwrap().iter().find(|n| n["id"] == id).unwrap()["gpu"].clone();
    let l4 = gpus("ip-10-0-13-72.ec2.internal");
    assert_eq!(l4.as_array().unwrap().len(), 1);
    assert_eq!((&l4[0]["name"], &l4[0]["memory_mb"]), (&json!("NVIDIA L4"), &json!(22888)));
    let a100 = gpus("ip-10-0-5-152.ap-northeast-2.compute.internal");
    assert_eq!(a100.as_array().unwrap().len(), 8);
    // The class `discover` gives a p4d's A100s (their product as NVML names it).
    assert!(
        a100.as_array().unwrap().iter().all(|g| g["name"] == "NVIDIA A100-SXM4-40GB" && g["memory_mb"] == 40960),
        "{a100}"
    );
    assert!(a100.as_array().unwrap().iter().all(|g| g.get("healthy").is_none_or(|h| h == true)), "{a100}");
    assert!(!flat(&out.stderr).contains("unknown-memory"), "{}", transcript(&out));
    // As an operator would: the 70B model in bf16 fits neither GPU alone,
    // the 8B one fits the L4.
    let fleet = write(dir.path(), "fleet.json", &String::from_utf8_lossy(&out.stdout));
    let catalog = write(dir.path(), "catalog.toml", CATALOG);
    let plan = run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&plan), 1, "{}", transcript(&plan));
    let plan = json(&plan);
    assert_eq!(plan["placements"][0]["model"], "llama-8b", "{plan}");
    // 70.6e9 parameters x 2 bytes x 1.2 = 157.8 GiB; an L4's 22888 MiB
    // and an A100's 40960 MiB hold 90% of that: 20 and 36 GiB.
    let why = plan["unplaced"][0]["reasons"].to_string();
    assert!(why.contains("has 20 GiB per l4 GPU, needs 158"), "{why}");
    assert!(why.contains("has 36 GiB per a100-sxm4-40gb GPU, needs 158"), "{why}");
}

#[test]
fn karpenter_gpus_are_held_to_what_the_kubelet_offers() {
    let dir = tempfile::tempdir().unwrap();
    // Karpenter has just brought the node up: no device plugin yet.
    let mut fresh = described(P4D, json!({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}));
    for which in ["capacity", "allocatable"] {
        fresh["status"][which].as_object_mut().unwrap().remove("nvidia.com/gpu");
    }
    let out = import(dir.path(), vec![fresh.clone()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let gpus = json(&out)["node"][0]["gpu"].clone();
    assert_eq!(gpus.as_array().unwrap().len(), 8);
    assert!(gpus.as_array().unwrap().iter().all(|g| g["healthy"] == false), "{gpus}");
    assert!(
        flat(&out.stderr).contains("Karpenter's labels count 8 GPU(s) but the kubelet advertises no nvidia.com/gpu")
    );
    // Six offered, five allocatable: two unhealthy, then one more.
    fresh["status"]["capacity"]["nvidia.com/gpu"] = "6".into();
    fresh["status"]["allocatable"]["nvidia.com/gpu"] = "5".into();
    let gpus = json(&import(dir.path(), vec![fresh.clone()]))["node"][0]["gpu"].clone();
    let healthy = gpus.as_array().unwrap().iter().filter(|g| g.get("healthy").is_none_or(|h| h == true)).count();
    assert_eq!(healthy, 5, "{gpus}");
    // GPU Feature Discovery's labels win where it has labelled the node.
    let labels = fresh["metadata"]["labels"].as_object_mut().unwrap();
    labels.insert("nvidia.com/gpu.product".into(), "NVIDIA-A100-SXM4-40GB".into());
    labels.insert("nvidia.com/gpu.count".into(), "8".into());
    labels.insert("nvidia.com/gpu.memory".into(), "40960".into());
    let g = json(&import(dir.path(), vec![fresh]))["node"][0]["gpu"][0].clone();
    assert_eq!(g["name"], "NVIDIA-A100-SXM4-40GB");
}

#[test]
fn a_gpu_whose_memory_no_label_gives_is_warned_about_once() {
    let dir = tempfile::tempdir().unwrap();
    let bare = |name: &str| {
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {}},
            "status": {"capacity": {"nvidia.com/gpu": "4"}, "allocatable": {"nvidia.com/gpu": "4"},
                       "conditions": [{"type": "Ready", "status": "True"}]}})
    };
    let out = import(dir.path(), vec![bare("a"), bare("b")]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let err = flat(&out.stderr);
    assert_eq!(err.matches("llmgw::import::unknown-memory").count(), 1, "{err}");
    assert!(err.contains("2 node(s) have GPUs whose memory no label gives"), "{err}");
    assert!(err.contains("a (4 gpu GPU(s))"), "{err}");
}
