//! DRA claims and slices on a shared cluster: a claim is a replica's on
//! the terms a pod is, a device is known by its name and UUID (never by
//! its place in the slices), and what the slices publish is checked as
//! the cluster would (one UUID a device, memory a quantity). Each test is
//! named after what it pins.

use serde_json::{Value, json};

use crate::common::{code, flat, json, transcript};
use crate::dra::{import, list, node, slice, uuid};

/// A pod of replica `model` r`replica` (or a foreign one when `model` is
/// empty), bound to `on`, that names a DRA claim and, when llmgw's, the
/// GPUs render pinned it to.
fn pod(ns: &str, name: &str, on: &str, model: &str, replica: u32, gpus: &str) -> Value {
    let mut p = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
        "spec": {"nodeName": on, "containers": [{"name": "c", "resources": {"claims": [{"name": "gpus"}]}}],
                 "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": format!("{name}-gpus")}]},
        "status": {"phase": "Running"}});
    if !model.is_empty() {
        p["metadata"]["labels"] = json!({"llmgw.io/model": model, "llmgw.io/replica": replica.to_string()});
        p["metadata"]["annotations"] = json!({"llmgw.io/model": model, "llmgw.io/gpus": format!("{on}={gpus}")});
    }
    p
}

/// An allocated claim of `devices` on `pool`, owned by and reserved for
/// `for_pod` (none: reserved for no pod), with llmgw's labels when `model`
/// is given.
fn claim(
    ns: &str,
    name: &str,
    pool: &str,
    devices: &[&str],
    for_pod: Option<&str>,
    model: Option<(&str, u32)>,
) -> Value {
    let results: Vec<Value> = devices
        .iter()
        .map(|d| json!({"request": "gpus", "driver": "gpu.nvidia.com", "pool": pool, "device": d}))
        .collect();
    let mut c = json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": ns},
        "status": {"allocation": {"devices": {"results": results}}}});
    if let Some(p) = for_pod {
        c["metadata"]["ownerReferences"] =
            json!([{"apiVersion": "v1", "kind": "Pod", "name": p, "uid": format!("uid-{p}")}]);
        c["status"]["reservedFor"] = json!([{"resource": "pods", "name": p, "uid": format!("uid-{p}")}]);
    }
    if let Some((m, r)) = model {
        c["metadata"]["labels"] = json!({"llmgw.io/model": m, "llmgw.io/replica": r.to_string()});
        c["metadata"]["annotations"] = json!({"llmgw.io/model": m});
    }
    c
}

/// Each node's allocations as (model, replica, GPUs).
fn held(inv: &Value, node: &str) -> Vec<(String, u64, Vec<u64>)> {
    let n = inv["node"].as_array().unwrap().iter().find(|n| n["id"] == node).unwrap();
    n["allocation"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|a| {
                    let gpus = a["gpus"].as_array().unwrap().iter().map(|g| g.as_u64().unwrap()).collect();
                    (a["model"].as_str().unwrap().to_string(), a["replica"].as_u64().unwrap_or(0), gpus)
                })
                .collect()
        })
        .unwrap_or_default()
}

fn two_nodes() -> (Value, Value) {
    (list(vec![node("n1", &json!({})), node("n2", &json!({}))]), list(vec![slice("n1", 4, 1, 1), slice("n2", 4, 1, 1)]))
}

#[test]
fn a_claim_outside_the_namespace_is_foreign_and_without_one_every_namespace_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let (nodes, slices) = two_nodes();
    let claims = list(vec![
        claim("serving", "m-r0-gpus-x1", "n1", &["gpu-0"], Some("m-r0"), Some(("m", 0))),
        claim("users", "mine-gpus-x2", "n2", &["gpu-0"], Some("mine"), Some(("m", 1))),
    ]);
    let args = [("--resource-slices", &slices), ("--claims", &claims)];
    let out = import(dir.path(), &nodes, &args);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let err = flat(&out.stderr);
    assert!(err.contains("llmgw::kubernetes::namespaces"), "{err}");
    assert!(err.contains("llmgw's claims were taken from every namespace they are in: serving, users"), "{err}");
    // With --namespace, the user's claim holds its GPU as itself.
    let n = dir.path().join("nodes.json");
    let out = crate::common::run(&[
        "inventory",
        "import",
        "kubernetes",
        n.to_str().unwrap(),
        "--resource-slices",
        dir.path().join("resource-slices.json").to_str().unwrap(),
        "--claims",
        dir.path().join("claims.json").to_str().unwrap(),
        "--namespace",
        "serving",
        "--format",
        "json",
    ]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let inv = json(&out);
    assert_eq!(held(&inv, "n1"), [("m".to_string(), 0, vec![0])]);
    assert_eq!(held(&inv, "n2"), [("claim:users/mine-gpus-x2".to_string(), 0, vec![0])]);
    let err = flat(&out.stderr);
    assert!(err.contains("llmgw::kubernetes::foreign-claim") && err.contains("users/mine-gpus-x2 (m r1)"), "{err}");
}

#[test]
fn a_moved_replicas_old_claim_does_not_rejoin_it() {
    let dir = tempfile::tempdir().unwrap();
    let (nodes, slices) = two_nodes();
    // m r0 ran on n1 and now runs on n2; its old claim lingers on n1.
    let pods = list(vec![pod("serving", "m-r0-new", "n2", "m", 0, "0")]);
    let claims = list(vec![
        claim("serving", "m-r0-old-gpus-a", "n1", &["gpu-0"], Some("m-r0-old"), Some(("m", 0))),
        claim("serving", "m-r0-new-gpus-b", "n2", &["gpu-0"], Some("m-r0-new"), Some(("m", 0))),
    ]);
    let out = import(dir.path(), &nodes, &[("--resource-slices", &slices), ("--claims", &claims), ("--pods", &pods)]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let inv = json(&out);
    assert_eq!(held(&inv, "n2"), [("m".to_string(), 0, vec![0])], "the replica, where its pod runs");
    assert_eq!(
        held(&inv, "n1"),
        [("claim:serving/m-r0-old-gpus-a".to_string(), 0, vec![0])],
        "the old claim holds, as itself"
    );
    assert!(flat(&out.stderr).contains("are not the claims of that replica's pods"), "{}", transcript(&out));
    // Without the pods: the old claim, reserved for no pod, is a leftover.
    let claims = list(vec![
        claim("serving", "m-r0-old-gpus-a", "n1", &["gpu-0"], None, Some(("m", 0))),
        claim("serving", "m-r0-new-gpus-b", "n2", &["gpu-0"], Some("m-r0-new"), Some(("m", 0))),
    ]);
    let inv = json(&import(dir.path(), &nodes, &[("--resource-slices", &slices), ("--claims", &claims)]));
    assert_eq!(held(&inv, "n2"), [("m".to_string(), 0, vec![0])]);
    assert_eq!(held(&inv, "n1")[0].0, "claim:serving/m-r0-old-gpus-a");
}

#[test]
fn an_admin_access_claim_on_a_replicas_gpu_is_read_not_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (nodes, slices) = two_nodes();
    let pods = list(vec![pod("serving", "m-r0", "n1", "m", 0, "0")]);
    let mut admin = claim("monitoring", "dcgm-gpus", "n1", &["gpu-0"], Some("dcgm"), None);
    admin["status"]["allocation"]["devices"]["results"][0]["adminAccess"] = true.into();
    let claims = list(vec![admin, claim("serving", "m-r0-gpus-a", "n1", &["gpu-0"], Some("m-r0"), Some(("m", 0)))]);
    let out = import(dir.path(), &nodes, &[("--resource-slices", &slices), ("--claims", &claims), ("--pods", &pods)]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert!(!flat(&out.stderr).contains("bug in llmgw"), "{}", transcript(&out));
    assert_eq!(held(&json(&out), "n1"), [("m".to_string(), 0, vec![0])]);
}

#[test]
fn gpus_keep_their_index_when_another_stops_being_published() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = list(vec![node("n1", &json!({}))]);
    let before = json(&import(dir.path(), &nodes, &[("--resource-slices", &list(vec![slice("n1", 4, 1, 1)]))]));
    let index_of = |inv: &Value| -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = inv["node"][0]["gpu"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| (g["uuid"].as_str().unwrap().to_string(), g["index"].as_u64().unwrap()))
            .collect();
        v.sort();
        v
    };
    // The GPU first on the bus (gpu-3) stops being published.
    let mut gone = slice("n1", 4, 2, 1);
    gone["spec"]["devices"].as_array_mut().unwrap().retain(|d| d["name"] != "gpu-3");
    let pods = list(vec![pod("serving", "m-r0", "n1", "m", 0, "1,2")]);
    let out = import(dir.path(), &nodes, &[("--resource-slices", &list(vec![gone])), ("--pods", &pods)]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let after = json(&out);
    let mut kept = index_of(&before);
    kept.retain(|(u, _)| *u != uuid("n1", 3));
    assert_eq!(index_of(&after), kept, "every GPU still published keeps its index");
    // The pod pinned to GPUs 1 and 2 holds those very GPUs (gpu-1, gpu-2).
    let uuids: Vec<String> = held(&after, "n1")[0]
        .2
        .iter()
        .map(|&g| {
            let gpu = after["node"][0]["gpu"].as_array().unwrap().iter().find(|x| x["index"] == g).unwrap();
            gpu["dra_device"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(uuids, ["gpu-1", "gpu-2"]);
}

#[test]
fn without_claims_a_foreign_pods_dra_gpus_are_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let (nodes, slices) = two_nodes();
    let pods = list(vec![pod("research", "train-0", "n1", "", 0, "")]);
    let out = import(dir.path(), &nodes, &[("--resource-slices", &slices), ("--pods", &pods)]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let err = flat(&out.stderr);
    assert!(err.contains("llmgw::kubernetes::claims-not-given") && err.contains("research/train-0"), "{err}");
}

#[test]
fn two_devices_that_publish_one_uuid_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (nodes, _) = two_nodes();
    let mut copy = slice("n2", 2, 1, 1);
    copy["spec"]["devices"][1]["attributes"]["uuid"]["string"] = uuid("n1", 0).into();
    let out = import(dir.path(), &nodes, &[("--resource-slices", &list(vec![slice("n1", 2, 1, 1), copy]))]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    let err = flat(&out.stderr);
    assert!(err.contains("llmgw::kubernetes::duplicate-uuid"), "{err}");
    assert!(err.contains("device gpu-0 of node `n1` and device gpu-1 of node `n2`"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn a_device_memory_that_is_no_quantity_is_an_error_not_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = list(vec![node("n1", &json!({}))]);
    for bad in ["-5Gi", "lots", "1e400"] {
        let mut s = slice("n1", 2, 1, 1);
        s["spec"]["devices"][1]["capacity"]["memory"]["value"] = bad.into();
        let out = import(dir.path(), &nodes, &[("--resource-slices", &list(vec![s]))]);
        assert_eq!(code(&out), 2, "{bad}: {}", transcript(&out));
        let err = flat(&out.stderr);
        assert!(err.contains(&format!("device gpu-1 publishes memory `{bad}`, not a quantity of bytes")), "{err}");
        assert!(err.contains("resource-slices.json:"), "a span in the file: {err}");
    }
}

#[test]
fn a_node_served_by_the_dra_driver_and_the_device_plugin_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let mut both = node("n1", &json!({}));
    both["status"]["capacity"]["nvidia.com/gpu"] = "4".into();
    both["status"]["allocatable"]["nvidia.com/gpu"] = "4".into();
    let nodes = list(vec![both, node("n2", &json!({}))]);
    let slices = list(vec![slice("n1", 4, 1, 1), slice("n2", 4, 1, 1)]);
    let out = import(dir.path(), &nodes, &[("--resource-slices", &slices)]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let err = flat(&out.stderr);
    assert!(err.contains("llmgw::kubernetes::dra-and-device-plugin"), "{err}");
    assert!(err.contains("1 node(s) are served by both NVIDIA's DRA driver and its device plugin"), "{err}");
    assert!(err.contains(": n1"), "{err}");
}

#[test]
fn a_slice_past_the_apis_device_limit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = list(vec![node("n1", &json!({}))]);
    let out = import(dir.path(), &nodes, &[("--resource-slices", &list(vec![slice("n1", 129, 1, 1)]))]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(flat(&out.stderr).contains("more than 128 devices"), "{}", transcript(&out));
    // A pool of many slices past what a node may have: refused, not kept.
    let many: Vec<Value> = (0..65)
        .map(|k| {
            let mut s = slice("n1", 128, 1, 65);
            for (i, d) in s["spec"]["devices"].as_array_mut().unwrap().iter_mut().enumerate() {
                d["name"] = format!("gpu-{}", k * 128 + i).into();
            }
            s
        })
        .collect();
    let out = import(dir.path(), &nodes, &[("--resource-slices", &list(many))]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(flat(&out.stderr).contains("its slices publish more than 8192 devices"), "{}", transcript(&out));
}
