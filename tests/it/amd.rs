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
