//! GPUs of another vendor: an inventory that holds AMD GPUs next to NVIDIA
//! ones, placed, rendered and imported.

use crate::common::*;

const FLEET: &str = "tests/data/amd/fleet-mixed.toml";
const CATALOG: &str = "tests/data/amd/catalog.toml";

fn at_root(rel: &str) -> String {
    root().join(rel).to_string_lossy().into_owned()
}

#[test]
fn both_loaders_read_the_vendor_and_nvidia_stays_unwritten() {
    let text = std::fs::read_to_string(root().join(FLEET)).unwrap();
    let src = llmgw::diag::source("fleet.toml", text);
    let fast = llmgw::inventory::load_fast(&src).expect("the fast path takes a plain fleet");
    let spanned = llmgw::inventory::load_spanned(&src).unwrap();
    let vendors = |nodes: &[llmgw::inventory::Node]| -> Vec<(String, &'static str)> {
        nodes.iter().map(|n| (n.id.clone(), n.gpus[0].vendor.as_str())).collect()
    };
    assert_eq!(vendors(&fast), vendors(&spanned));
    assert_eq!(vendors(&fast)[0], ("h100-01".to_string(), "nvidia"));
    assert_eq!(vendors(&fast)[1], ("mi300x-01".to_string(), "amd"));
    // Printed back: `vendor` only where it is not NVIDIA, in every format.
    let inv = llmgw::inventory::Inventory { nodes: fast };
    for format in [llmgw::doc::Format::Toml, llmgw::doc::Format::Json, llmgw::doc::Format::Yaml] {
        let out = llmgw::output::render_inventory(&inv, format).unwrap();
        assert_eq!(out.matches("vendor").count(), 16, "{out}");
        assert!(!out.contains("nvidia\""), "{out}");
    }
}

#[test]
fn an_unknown_vendor_is_bad_input_at_its_place() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("x.toml", "[[node]]\nid = \"a\"\n[[node.gpu]]\nindex = 0\nname = \"Gaudi 3\"\nvendor = \"habana\"\n"),
        ("x.json", r#"{"node": [{"id": "a", "gpu": [{"index": 0, "name": "Arc", "vendor": "intel"}]}]}"#),
        ("y.json", r#"{"node": [{"id": "a", "gpu": [{"index": 0, "name": "MI300X", "vendor": "AMD"}]}]}"#),
    ] {
        let f = write(dir.path(), name, text);
        let out = run(&["nodes", "-i", f.to_str().unwrap()]);
        assert_eq!(code(&out), 2, "{}", transcript(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("llmgw::inventory::unknown-vendor") && err.contains("unknown GPU vendor"), "{err}");
        assert!(err.contains("`amd`") || err.contains("nvidia, amd"), "{err}");
        let src = llmgw::diag::source(name, text.to_string());
        assert!(llmgw::inventory::load_fast(&src).is_none(), "{text}");
    }
}

fn placed() -> serde_json::Value {
    let out = run(&["place", &at_root(CATALOG), "-i", &at_root(FLEET), "--format", "json"]);
    // Exit 1: some replicas are left unplaced, as the catalog means them to be.
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    json(&out)
}

#[test]
fn each_profile_is_placed_on_its_class_and_trtllm_not_on_amd() {
    let plan = placed();
    let placements: Vec<(String, String, String)> = plan["placements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["model"].as_str().unwrap().to_string(),
                p["pool"].as_str().unwrap().to_string(),
                p["nodes"][0]["node"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        placements,
        [
            ("llama-3.1-70b".into(), "none/amd-instinct-mi300x-oam".into(), "mi300x-01".into()),
            ("llama-3.1-70b".into(), "none/amd-instinct-mi300x-oam".into(), "mi300x-02".into()),
            ("llama-3.1-8b".into(), "none/h100-80gb-hbm3".into(), "h100-01".into()),
        ]
    );
    let unplaced = plan["unplaced"].as_array().unwrap();
    let reasons = |model: &str| -> Vec<(String, Vec<String>)> {
        let u = unplaced.iter().find(|u| u["model"] == model).unwrap();
        u["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let nodes = r["nodes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_string());
                (r["reason"].as_str().unwrap().to_string(), nodes.collect())
            })
            .collect()
    };
    // The engine check comes after the GPU check: the H100 node has no
    // MI300X at all; the MI300X nodes have them free, of the wrong vendor.
    assert_eq!(
        reasons("qwen-7b-trt"),
        [
            ("does not run on amd GPUs".into(), vec!["mi300x-01".into(), "mi300x-02".into()]),
            ("has 0 free amd-instinct-mi300x-oam GPUs, needs 1".into(), vec!["h100-01".into()]),
        ]
    );
    // The memory fit uses the MI300X's own memory: floor(0.9 x 196592 / 1024)
    // = 172 GiB a GPU, against 1.2 x 810 GB over 2 GPUs = 453 GiB.
    assert_eq!(reasons("llama-3.1-405b")[0].0, "has 172 GiB per amd-instinct-mi300x-oam GPU, needs 453");
}

#[test]
fn explain_says_which_vendor_an_engine_lacks() {
    let out = run(&["explain-placement", &at_root(CATALOG), "--model", "qwen-7b-trt", "-i", &at_root(FLEET)]);
    let text = stdout(&out);
    assert!(text.contains("2 have amd GPUs, which trtllm does not run on"), "{text}");
}

/// A cluster of one H100 node (GPU Feature Discovery) and two MI300X nodes
/// (the AMD device plugin's resource and the node labeller's labels, in
/// the forms its source writes: the value alone when all GPUs share it,
/// and the older `beta.amd.com` per-value counts).
fn cluster() -> serde_json::Value {
    let ready = serde_json::json!([{"type": "Ready", "status": "True"}]);
    let node = |name: &str, labels: serde_json::Value, gpus: (&str, &str)| {
        let cap = serde_json::json!({gpus.0: gpus.1, "cpu": "192", "memory": "2113470464Ki"});
        serde_json::json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"capacity": cap, "allocatable": cap, "conditions": ready}})
    };
    let mi300x = serde_json::json!({
        "amd.com/gpu.cu-count": "304",
        "amd.com/gpu.device-id": "74a1",
        "amd.com/gpu.family": "AI",
        "amd.com/gpu.product-name": "AMD_Instinct_MI300X_OAM",
        "amd.com/gpu.vram": "192G",
        "beta.amd.com/gpu.device-id.74a1": "8",
        "beta.amd.com/gpu.product-name.AMD_Instinct_MI300X_OAM": "8",
        "beta.amd.com/gpu.vram.192G": "8",
    });
    let h100 = serde_json::json!({
        "nvidia.com/gpu.count": "8", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.memory": "81559",
    });
    serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [
        node("h100-01", h100, ("nvidia.com/gpu", "8")),
        node("mi300x-01", mi300x.clone(), ("amd.com/gpu", "8")),
        node("mi300x-02", mi300x, ("amd.com/gpu", "8")),
    ]})
}

#[test]
fn a_mixed_cluster_imports_renders_each_vendors_resource_and_image_and_comes_back() {
    use k8s_openapi::api::apps::v1::Deployment;
    let dir = tempfile::tempdir().unwrap();
    let nodes = write(dir.path(), "nodes.json", &cluster().to_string());
    let fleet = dir.path().join("fleet.toml");
    let out = run(&["inventory", "import", "kubernetes", nodes.to_str().unwrap(), "-o", fleet.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    // No "other vendor" warning: the AMD GPUs are imported.
    assert!(!String::from_utf8_lossy(&out.stderr).contains("other-vendor"), "{}", transcript(&out));
    let inv = llmgw::load::inventories(&[fleet.to_str().unwrap()]).unwrap();
    let mi = inv.nodes.iter().find(|n| n.id == "mi300x-01").unwrap();
    assert_eq!(mi.gpus.len(), 8);
    for g in &mi.gpus {
        // The labeller's name with its spaces back: the class discover gives.
        assert_eq!(
            (g.name.as_str(), g.class.as_str(), g.vendor.as_str(), g.memory_mb),
            ("AMD Instinct MI300X OAM", "amd-instinct-mi300x-oam", "amd", 192 * 1024)
        );
    }

    let plan_file = dir.path().join("plan.json");
    let out = run(&["place", &at_root(CATALOG), "-i", fleet.to_str().unwrap(), "-o", plan_file.to_str().unwrap()]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    let plan: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&plan_file).unwrap()).unwrap();
    assert_eq!(plan["placements"].as_array().unwrap().len(), 3, "{plan}");
    let out = render_plan("kubernetes", &plan_file, std::path::Path::new(&at_root(CATALOG)), &fleet, &[]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let docs = crate::render::documents(&stdout(&out));
    let mut seen = Vec::new();
    for doc in docs.iter().filter(|d| d["kind"] == "Deployment") {
        let d: Deployment = serde_json::from_value(doc.clone()).unwrap();
        let spec = d.spec.unwrap().template.spec.unwrap();
        let c = &spec.containers[0];
        let limits = c.resources.as_ref().unwrap().limits.clone().unwrap();
        let gpu_keys: Vec<&str> = limits.keys().map(String::as_str).filter(|k| k.contains("gpu")).collect();
        let tolerates_nvidia = spec.tolerations.iter().flatten().any(|t| t.key.as_deref() == Some("nvidia.com/gpu"));
        let node = doc["metadata"]["annotations"]["llmgw.io/gpus"].as_str().unwrap().split('=').next().unwrap();
        seen.push((node.to_string(), gpu_keys.join(","), c.image.clone().unwrap(), tolerates_nvidia));
        // Nothing asks for /dev/kfd or /dev/dri: the AMD device plugin
        // gives a pod the devices of the GPUs it is allocated.
        let text = doc.to_string();
        assert!(!text.contains("/dev/kfd") && !text.contains("/dev/dri") && !text.contains("privileged"), "{doc}");
    }
    seen.sort();
    assert_eq!(
        seen,
        [
            ("h100-01".into(), "nvidia.com/gpu".into(), "lmsysorg/sglang:v0.5.20-cu130".into(), true),
            ("mi300x-01".into(), "amd.com/gpu".into(), "vllm/vllm-openai-rocm:v0.29.0".into(), false),
            ("mi300x-02".into(), "amd.com/gpu".into(), "vllm/vllm-openai-rocm:v0.29.0".into(), false),
        ]
    );

    // The rendered pods running, as `kubectl get pods` prints them: the
    // import counts their amd.com/gpu as GPUs held, and placing again
    // finds nothing new to place.
    let items: Vec<serde_json::Value> = docs
        .iter()
        .flat_map(|d| crate::kubernetes::pods_of(d, &plan))
        .map(|p| serde_json::to_value(p).unwrap())
        .collect();
    let pods = write(
        dir.path(),
        "pods.json",
        &serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string(),
    );
    let again = dir.path().join("again.toml");
    let out = run(&[
        "inventory",
        "import",
        "kubernetes",
        nodes.to_str().unwrap(),
        "--pods",
        pods.to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let inv = llmgw::load::inventories(&[again.to_str().unwrap()]).unwrap();
    let held: Vec<(String, String, Vec<u32>)> = inv
        .nodes
        .iter()
        .flat_map(|n| n.allocations.iter().map(move |a| (n.id.clone(), a.model.clone(), a.gpus.clone())))
        .collect();
    assert_eq!(
        held,
        [
            ("h100-01".into(), "llama-3.1-8b".into(), vec![0]),
            ("mi300x-01".into(), "llama-3.1-70b".into(), vec![0]),
            ("mi300x-02".into(), "llama-3.1-70b".into(), vec![0]),
        ]
    );
    let second = json(&run(&["place", &at_root(CATALOG), "-i", again.to_str().unwrap(), "--format", "json"]));
    assert_eq!(second["placements"], serde_json::json!([]), "{second}");
    assert_eq!(second["summary"]["existing"], 3, "{second}");
}

#[test]
fn a_foreign_pod_holding_amd_gpus_holds_amd_gpus() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = write(dir.path(), "nodes.json", &cluster().to_string());
    // A pod of someone else's asking two AMD GPUs, and one asking an
    // NVIDIA GPU, without saying which: each gets the lowest free GPUs of
    // its own vendor.
    let pod = |name: &str, node: &str, resource: &str, n: &str| {
        serde_json::json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "research"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x",
                "resources": {"limits": {resource: n}}}]},
            "status": {"phase": "Running"}})
    };
    let pods = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [
        pod("train", "mi300x-01", "amd.com/gpu", "2"),
        pod("notebook", "h100-01", "nvidia.com/gpu", "1"),
    ]});
    let pods = write(dir.path(), "pods.json", &pods.to_string());
    let out = run(&[
        "inventory",
        "import",
        "kubernetes",
        nodes.to_str().unwrap(),
        "--pods",
        pods.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let v = json(&out);
    let allocs = |id: &str| v["node"].as_array().unwrap().iter().find(|n| n["id"] == id).unwrap()["allocation"].clone();
    assert_eq!(allocs("mi300x-01")[0]["model"], "pod:research/train");
    assert_eq!(allocs("mi300x-01")[0]["gpus"], serde_json::json!([0, 1]));
    assert_eq!(allocs("h100-01")[0]["gpus"], serde_json::json!([0]));
    assert!(allocs("mi300x-02").is_null());
}

#[test]
fn slurm_asks_gres_as_for_any_gpu_and_leaves_the_visible_devices_to_slurm() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.json");
    let out = run(&["place", &at_root(CATALOG), "-i", &at_root(FLEET), "-o", plan.to_str().unwrap()]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    let out = render_plan("slurm", &plan, &root().join(CATALOG), &root().join(FLEET), &["--container", "pyxis"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let text = stdout(&out);
    assert!(flat(&out.stderr).contains("llmgw::render::untyped-gres"), "{}", transcript(&out));
    let scripts: Vec<&str> = text.split("#!/bin/bash").filter(|s| !s.trim().is_empty()).collect();
    assert_eq!(scripts.len(), 3, "{text}");
    for s in scripts {
        let amd = s.contains("--nodelist=mi300x");
        let image = if amd { "vllm/vllm-openai-rocm:v0.29.0" } else { "lmsysorg/sglang:v0.5.20-cu130" };
        assert!(s.contains(&format!("--container-image={image}")), "{s}");
        // Not imported from Slurm: no gres type llmgw could know (its class
        // is none of Slurm's names), so an untyped gres, and a warning.
        assert!(s.contains("#SBATCH --gres=gpu:1\n"), "{s}");
        // Slurm sets ROCR_VISIBLE_DEVICES (CUDA_VISIBLE_DEVICES) for the
        // GPUs it allocates; the script sets neither.
        for var in ["ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"] {
            assert!(!s.contains(var), "{var} in {s}");
        }
    }
}

#[test]
fn lint_says_an_engine_never_runs_on_a_class_and_fits_with_amd_memory() {
    let out = run(&["lint", &at_root(CATALOG), "--inventory", &at_root(FLEET)]);
    let err = String::from_utf8_lossy(&out.stderr).to_string() + &stdout(&out);
    assert!(err.contains("runs trtllm, which does not run on the fleet's"), "{err}");
    // The 405B model's own fit, against the MI300X's 192 GiB.
    assert!(err.contains("377.2 GiB of weights per GPU against 192.0 GiB"), "{err}");
}

/// Two TensorRT-LLM profiles alike in all but their class: what one
/// learned of the nodes (no GPU of its class on the AMD node, so nothing
/// against it) must not pass the AMD node for the other.
#[test]
fn the_vendor_check_is_per_class_on_the_fast_path_too() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = write(
        dir.path(),
        "fleet.toml",
        "[[node]]\nid = \"amd-1\"\n[[node.gpu]]\nindex = 0\nname = \"AMD Instinct MI300X OAM\"\nvendor = \"amd\"\n\
         [[node]]\nid = \"nv-1\"\n[[node.gpu]]\nindex = 0\nname = \"NVIDIA H100 80GB HBM3\"\n",
    );
    let catalog = write(
        dir.path(),
        "catalog.toml",
        "[[model]]\nname = \"a\"\nreplicas = 1\n[[model.profile]]\nname = \"h100\"\nengine = \"trtllm\"\ngpu_class = \"h100-80gb-hbm3\"\n\
         [[model]]\nname = \"b\"\nreplicas = 1\n[[model.profile]]\nname = \"mi300x\"\nengine = \"trtllm\"\ngpu_class = \"amd-instinct-mi300x-oam\"\n",
    );
    let out = run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    let plan = json(&out);
    assert_eq!(plan["placements"].as_array().unwrap().len(), 1, "{plan}");
    assert_eq!(plan["placements"][0]["model"], "a");
    assert_eq!(plan["unplaced"][0]["reasons"][0]["reason"], "does not run on amd GPUs", "{plan}");
}

#[test]
fn dra_pins_nvidia_gpus_only_and_amd_pods_keep_their_device_plugin() {
    // NVIDIA's DRA driver publishes NVIDIA GPUs: the H100 (given UUIDs, as
    // an import from its slices would) is claimed, the MI300X keep
    // `amd.com/gpu`, and no AMD GPU is refused for lacking a UUID.
    let dir = tempfile::tempdir().unwrap();
    let nodes = write(dir.path(), "nodes.json", &cluster().to_string());
    let out = run(&["inventory", "import", "kubernetes", nodes.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let mut inv = json(&out);
    for n in inv["node"].as_array_mut().unwrap() {
        let id = n["id"].as_str().unwrap().to_string();
        for g in n["gpu"].as_array_mut().unwrap().iter_mut().filter(|g| g.get("vendor").is_none()) {
            g["uuid"] = format!("GPU-{id}-{}", g["index"]).into();
        }
    }
    let fleet = write(dir.path(), "fleet.json", &inv.to_string());
    let plan = dir.path().join("plan.json");
    let out = run(&["place", &at_root(CATALOG), "-i", fleet.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    let out = render_plan("kubernetes", &plan, std::path::Path::new(&at_root(CATALOG)), &fleet, &["--devices", "dra"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let docs = crate::render::documents(&stdout(&out));
    let mut seen = Vec::new();
    for d in docs.iter().filter(|d| d["kind"] == "Deployment") {
        let spec = &d["spec"]["template"]["spec"];
        let node = d["metadata"]["annotations"]["llmgw.io/gpus"].as_str().unwrap().split('=').next().unwrap();
        let limits = spec["containers"][0]["resources"]["limits"].clone();
        seen.push((node.to_string(), spec.get("resourceClaims").is_some(), limits.get("amd.com/gpu").is_some()));
    }
    seen.sort();
    assert!(seen.iter().any(|s| s.0 == "h100-01" && s.1 && !s.2), "{seen:?}");
    assert!(seen.iter().filter(|s| s.0.starts_with("mi300x")).all(|s| !s.1 && s.2), "{seen:?}");
    assert!(seen.iter().any(|s| s.0.starts_with("mi300x")), "{seen:?}");
}

#[test]
fn a_class_given_to_both_vendors_is_linted_and_a_replica_across_them_refused() {
    let dir = tempfile::tempdir().unwrap();
    let inv = write(
        dir.path(),
        "mixed.toml",
        "[[node]]\nid = \"n1\"\nstate = \"ready\"\n\
         [[node.gpu]]\nindex = 0\nname = \"NVIDIA H100 80GB HBM3\"\nclass = \"big\"\nmemory_mb = 81559\n\
         [[node.gpu]]\nindex = 1\nname = \"AMD Instinct MI300X OAM\"\nvendor = \"amd\"\nclass = \"big\"\nmemory_mb = 196592\n",
    );
    let out = run(&["lint", inv.to_str().unwrap()]);
    let err: String = flat(&out.stderr);
    assert!(
        err.contains("llmgw::inventory::mixed-vendor-class")
            && err.contains("class `big` holds amd GPUs on node `n1` and nvidia GPUs on node `n1`"),
        "{err}"
    );
    let catalog = write(
        dir.path(),
        "c.toml",
        "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"big\"\ngpus_per_node = 2\n",
    );
    let plan = placed_plan(dir.path(), &catalog, &inv);
    let out = render_plan("kubernetes", &plan, &catalog, &inv, &[]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("m r0: its GPUs are of two vendors (amd and nvidia)"),
        "{}",
        transcript(&out)
    );
}

#[test]
fn an_amd_vram_label_that_does_not_read_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let cap = serde_json::json!({"amd.com/gpu": "8", "cpu": "192", "memory": "2113470464Ki"});
    let nodes = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "mi-1", "labels": {"amd.com/gpu.product-name": "AMD_Instinct_MI300X_OAM", "amd.com/gpu.vram": "192GB"}},
        "status": {"capacity": cap, "allocatable": cap, "conditions": [{"type": "Ready", "status": "True"}]}}]});
    let file = write(dir.path(), "nodes.json", &nodes.to_string());
    let out = run(&["inventory", "import", "kubernetes", file.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let err: String = flat(&out.stderr);
    assert!(err.contains("llmgw::import::unread-memory") && err.contains("amd.com/gpu.vram `192GB`"), "{err}");
    assert!(json(&out)["node"][0]["gpu"][0].get("memory_mb").is_none());
}

#[test]
fn labels_that_overcount_do_not_fail_a_node_whose_kubelet_counts() {
    // The labeller's per-value counts matter only where the kubelet gives
    // none; with `amd.com/gpu: 8` a count of 2000 in a label is ignored.
    let dir = tempfile::tempdir().unwrap();
    let node = |cap: Option<&str>| {
        let mut status = serde_json::json!({"conditions": [{"type": "Ready", "status": "True"}]});
        if let Some(c) = cap {
            status["capacity"] = serde_json::json!({"amd.com/gpu": c});
            status["allocatable"] = serde_json::json!({"amd.com/gpu": c});
        }
        serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "mi-1", "labels": {"beta.amd.com/gpu.vram.192G": "2000", "amd.com/gpu.product-name": "AMD_Instinct_MI300X_OAM"}},
            "status": status}]})
    };
    let file = write(dir.path(), "nodes.json", &node(Some("8")).to_string());
    let out = run(&["inventory", "import", "kubernetes", file.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert_eq!(json(&out)["node"][0]["gpu"].as_array().unwrap().len(), 8);
    // Without the kubelet's count, the labels' is refused as no node.
    let file = write(dir.path(), "nodes.json", &node(None).to_string());
    let out = run(&["inventory", "import", "kubernetes", file.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("its AMD labels count 2000 GPUs"), "{}", transcript(&out));
}
