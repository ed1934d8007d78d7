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

fn facts() -> serde_json::Map<String, Value> {
    let text = std::fs::read_to_string(root().join("tests/data/real/facts.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// `scontrol show node` lines for `names`: each a GB200 tray of four GPUs.
fn trays<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names.map(|n| format!("NodeName={n} State=IDLE Gres=gpu:gb200:4 CPUTot=144 RealMemory=880000\n")).collect()
}

fn import_slurm(dir: &std::path::Path, nodes: &str, topology: &std::path::Path) -> std::process::Output {
    let n = write(dir, "nodes.txt", nodes);
    run(&[
        "inventory",
        "import",
        "slurm",
        n.to_str().unwrap(),
        "--topology",
        topology.to_str().unwrap(),
        "--format",
        "json",
    ])
}

#[test]
fn real_block_topologies_give_nvlink_domains() {
    let dir = tempfile::tempdir().unwrap();
    let facts = facts();
    let mut seen = 0;
    for (key, f) in facts.iter().filter(|(_, f)| f["kind"].as_str().is_some_and(|k| k.ends_with(" block"))) {
        seen += 1;
        let blocks = f["blocks"].as_object().unwrap();
        let names: Vec<&str> =
            blocks.values().flat_map(|b| b.as_array().unwrap().iter().map(|n| n.as_str().unwrap())).collect();
        let out = import_slurm(dir.path(), &trays(names.iter().copied()), &root().join("tests/data/real").join(key));
        assert_eq!(code(&out), 0, "{key}: {}", transcript(&out));
        let inv = json(&out);
        for (block, nodes) in blocks {
            for n in nodes.as_array().unwrap() {
                let node = inv["node"].as_array().unwrap().iter().find(|x| x["id"] == *n).unwrap();
                assert_eq!(node["fabric"], json!([{"name": block, "kind": "nvlink"}]), "{key}: {n}");
            }
        }
    }
    assert_eq!(seen, 4, "the block topologies of tests/data/real");
}

#[test]
fn a_replica_across_nodes_is_placed_inside_one_block_first() {
    let dir = tempfile::tempdir().unwrap();
    // Azure CycleCloud's GB200 blocks, with the InfiniBand spine every
    // tray is also under (a topology.conf may hold both, as CoreWeave's
    // SUNK writes it).
    let real =
        std::fs::read_to_string(root().join("tests/data/real/slurm/topology-block-azure-cyclecloud-slurm-gb200.conf"))
            .unwrap();
    let topology =
        write(dir.path(), "topology.conf", &format!("{real}SwitchName=ib-spine Nodes=hpcbench-hpc-[1-72]\n"));
    let names: Vec<String> = (1..=72).map(|i| format!("hpcbench-hpc-{i}")).collect();
    let out = import_slurm(dir.path(), &trays(names.iter().map(String::as_str)), &topology);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let fleet = write(dir.path(), "fleet.json", &String::from_utf8_lossy(&out.stdout));
    let catalog = write(
        dir.path(),
        "catalog.toml",
        "[[model]]\nname = \"two\"\n[[model.profile]]\nname = \"pp2\"\nengine = \"vllm\"\ngpu_class = \"gb200\"\ngpus_per_node = 4\nnodes = 2\n\n\
         [[model]]\nname = \"wide\"\n[[model.profile]]\nname = \"pp19\"\nengine = \"vllm\"\ngpu_class = \"gb200\"\ngpus_per_node = 4\nnodes = 19\n",
    );
    let plan = json(&run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "--format", "json"]));
    let two = &plan["placements"][0];
    assert_eq!((&two["model"], &two["fabric"]), (&json!("two"), &json!("block1")), "{plan}");
    let block1 = &facts()["slurm/topology-block-azure-cyclecloud-slurm-gb200.conf"]["blocks"]["block1"];
    for n in two["nodes"].as_array().unwrap() {
        assert!(block1.as_array().unwrap().contains(&n["node"]), "{two}");
    }
    // Nineteen trays fit no 18-tray block: then the spine.
    let wide = &plan["placements"][1];
    assert_eq!((&wide["model"], &wide["fabric"]), (&json!("wide"), &json!("ib-spine")), "{plan}");
}

#[test]
fn scontrol_show_topology_of_blocks_imports_as_topology_conf_does() {
    let dir = tempfile::tempdir().unwrap();
    let shown = root().join("tests/data/real/slurm/scontrol-show-topology-block-slinky-oke-gb300.txt");
    let names = ["10.140.71.103", "10.140.88.115", "10.140.79.152", "10.140.93.120"];
    let out = import_slurm(dir.path(), &trays(names.iter().copied()), &shown);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let inv = json(&out);
    let fabric = |id: &str| inv["node"].as_array().unwrap().iter().find(|n| n["id"] == id).unwrap()["fabric"].clone();
    // The aggregated block (both racks) is no NVLink domain.
    assert_eq!(fabric("10.140.88.115"), json!([{"name": "gb300_b0", "kind": "nvlink"}]));
    assert_eq!(fabric("10.140.93.120"), json!([{"name": "gb300_b1", "kind": "nvlink"}]));
    // Block sizes that are no node counts are refused with the line.
    let bad = write(dir.path(), "bad.conf", "BlockName=b1 Nodes=10.140.71.103\nBlockSizes=18,lots\n");
    let out = import_slurm(dir.path(), &trays(names.iter().copied()), &bad);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(flat(&out.stderr).contains("block sizes are node counts"), "{}", transcript(&out));
}
