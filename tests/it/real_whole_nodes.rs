//! Real Kubernetes objects (tests/data/real/kubernetes, see PROVENANCE.md)
//! imported for what the scheduler admits work on: allocatable memory and
//! CPUs below capacity, taints as written, pods that hold nothing once
//! they failed. The facts come from the originals (facts.json).

use llmgw::diag::source;
use serde_json::Value;

use crate::real_outputs::{Check, facts, kube, loads, real};

/// A quantity of the facts in the unit the inventory keeps.
fn mib(q: &str) -> u64 {
    let bytes = llmgw::kubernetes::quantity::parse(q).unwrap();
    (bytes / 1_048_576.0).floor() as u64
}

#[test]
fn whole_node_objects_import_with_their_allocatable_and_taints() {
    let mut c = Check::default();
    let mut seen = 0;
    for (key, f) in facts() {
        let Some(file) = key.strip_prefix("kubernetes/") else { continue };
        if !f["kind"].as_str().unwrap_or_default().starts_with("node (") {
            continue;
        }
        seen += 1;
        let inv = match kube(file, real(&key)) {
            Ok((inv, _)) => inv,
            Err(d) => {
                c.fail(file, llmgw::report::diagnostics::render(&d, false));
                continue;
            }
        };
        loads(&mut c, file, &inv);
        for (id, want) in f["nodes"].as_object().unwrap() {
            let Some(n) = inv.nodes.iter().find(|n| &n.id == id) else {
                c.fail(file, format!("no node {id}"));
                continue;
            };
            let at = format!("{file} {id}");
            c.eq(&at, "memory", n.memory_total_mb, mib(want["capacity"]["memory"].as_str().unwrap()));
            c.eq(
                &at,
                "allocatable memory",
                n.memory_allocatable_mb,
                Some(mib(want["allocatable"]["memory"].as_str().unwrap())),
            );
            let cpus = llmgw::kubernetes::quantity::parse(want["allocatable"]["cpu"].as_str().unwrap());
            c.eq(&at, "cpus", n.cpus, cpus);
            // Taints as `kubectl describe node` writes them; those that are
            // states already are the state, not a taint.
            let taints: Vec<String> = want["taints"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|t| matches!(t["effect"].as_str(), Some("NoSchedule" | "NoExecute")))
                .map(|t| match t["value"].as_str().filter(|v| !v.is_empty()) {
                    Some(v) => format!("{}={v}:{}", t["key"].as_str().unwrap(), t["effect"].as_str().unwrap()),
                    None => format!("{}:{}", t["key"].as_str().unwrap(), t["effect"].as_str().unwrap()),
                })
                .collect();
            c.eq(&at, "taints", n.taints.clone(), taints);
            let ready = want["ready"] == "True" && want["unschedulable"] == false;
            c.eq(&at, "state", n.state.as_str(), if ready { "ready" } else { "not ready" });
            c.eq(&at, "GPUs", n.gpus.len() as u64, want["gpus"].as_u64().unwrap());
        }
    }
    assert!(seen >= 2, "the real whole-node objects are gone from facts.json");
    c.done();
}

/// The master's taint keeps a CPU-only replica off it, with the reason
/// text and the taint as written, while a profile tolerating it is placed;
/// a replica asking for more memory than allocatable (though less than
/// capacity) is refused.
#[test]
fn a_real_tainted_node_refuses_what_does_not_tolerate_it() {
    let file = "openshift-4.11-gcp-master-tainted-node-tuning-operator-must-gather.yaml";
    let (inv, _) = kube(file, real(&format!("kubernetes/{file}"))).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet.toml");
    std::fs::write(&fleet, llmgw::output::render_inventory(&inv, llmgw::doc::Format::Toml).unwrap()).unwrap();
    let catalog = crate::common::write(
        dir.path(),
        "c.toml",
        "[[model]]\nname = \"a\"\n[[model.profile]]\nname = \"cpu\"\nengine = \"llama.cpp\"\n\
         [[model]]\nname = \"c\"\n[[model.profile]]\nname = \"cpu\"\nengine = \"llama.cpp\"\nmemory_gb = 14\ntolerations = [\"node-role.kubernetes.io/master:NoSchedule\"]\n\
         [[model]]\nname = \"b\"\n[[model.profile]]\nname = \"cpu\"\nengine = \"llama.cpp\"\ntolerations = [\"node-role.kubernetes.io/master\"]\n",
    );
    let out =
        crate::common::run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "--format", "json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let reasons = |model: &str| -> Vec<String> {
        v["unplaced"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|u| u["model"] == model)
            .flat_map(|u| {
                u["reasons"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r["reason"].as_str().unwrap().to_string())
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    assert_eq!(reasons("a"), ["has taint node-role.kubernetes.io/master:NoSchedule, not tolerated"], "{v}");
    // 14 GiB: below the 14.6 GiB of capacity, above the 13.5 GiB allocatable.
    assert_eq!(reasons("c"), ["has 13 GiB of free memory, needs 14"], "{v}");
    let placed: Vec<&Value> = v["placements"].as_array().unwrap().iter().collect();
    assert_eq!(placed.len(), 1, "{v}");
    assert_eq!(placed[0]["model"], "b");
    // The CPU-only replica takes the node's free CPUs (3.5: whole ones, 3)
    // and, with no model size, its allocatable memory.
    assert_eq!(placed[0]["nodes"][0]["cpus"], 3);
    assert_eq!(placed[0]["nodes"][0]["memory_mb"], 14222312 / 1024);
}

/// A pod that failed holds nothing, whatever it asked for.
#[test]
fn a_real_failed_gpu_pod_holds_nothing() {
    let pods = "kubernetes/pod-gke-l4-dws-failed-kueue-issue-2213.yaml";
    let f = &facts()[pods];
    assert_eq!(f["pods"]["kueue-dws/dws-pod"]["phase"], "Failed");
    let nodes = source(
        "nodes.json",
        r#"{"kind":"List","items":[{"kind":"Node","metadata":{"name":"n1","labels":{"nvidia.com/gpu.count":"1","nvidia.com/gpu.product":"NVIDIA-L4"}},"status":{"capacity":{"nvidia.com/gpu":"1","cpu":"8","memory":"32Gi"},"allocatable":{"nvidia.com/gpu":"1","cpu":"8","memory":"30Gi"},"conditions":[{"type":"Ready","status":"True"}]}}]}"#.into(),
    );
    let pod_src = source("pods.yaml", real(pods));
    let (inv, _) = llmgw::kubernetes::import(&nodes, Some(&pod_src), &llmgw::kubernetes::Settings::default()).unwrap();
    assert!(inv.nodes[0].allocations.is_empty(), "{:?}", inv.nodes[0].allocations);
}
