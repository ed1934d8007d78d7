//! Who may claim a replica through Kubernetes: only pods in the namespaces
//! `--namespace` names, one claim a replica. Each test pins a defect of the
//! third hostile probe: a labelled pod in any namespace made `place` say a
//! replica was pending and never place it.

use serde_json::{Value, json};

use crate::common::*;

fn node(name: &str) -> Value {
    let capacity = json!({"nvidia.com/gpu": "8", "cpu": "64", "memory": "512Gi"});
    json!({"apiVersion": "v1", "kind": "Node",
           "metadata": {"name": name, "labels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "8"}},
           "status": {"capacity": capacity, "allocatable": capacity, "conditions": [{"type": "Ready", "status": "True"}]}})
}

/// An llmgw-labelled pod of `m` replica `r`, bound to `on` or (None)
/// waiting, pinned to n1.
fn pod(ns: &str, name: &str, r: u32, on: Option<&str>) -> Value {
    let mut spec = json!({"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "8"}}}],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}}});
    if let Some(n) = on {
        spec["nodeName"] = n.into();
    }
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": ns,
                        "labels": {"llmgw.io/model": "m", "llmgw.io/replica": r.to_string(), "llmgw.io/profile": "p"}},
           "spec": spec, "status": {"phase": if on.is_some() { "Running" } else { "Pending" }}})
}

const CATALOG: &str = "[[model]]\nname = \"m\"\nreplicas = 2\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\n\
gpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\n";

fn import(dir: &std::path::Path, pods: &[Value], extra: &[&str]) -> std::process::Output {
    let list = |items: Vec<Value>| json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string();
    let nodes = write(dir, "nodes.json", &list(vec![node("n1"), node("n2"), node("n3")]));
    let pods = write(dir, "pods.json", &list(pods.to_vec()));
    let mut args = vec!["inventory", "import", "kubernetes", nodes.to_str().unwrap(), "--pods", pods.to_str().unwrap()];
    args.extend_from_slice(extra);
    run(&args)
}

fn err(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_labelled_pod_in_another_namespace_is_foreign_not_a_pending_replica() {
    let dir = tempfile::tempdir().unwrap();
    // serving runs m r0 on n2; someone in `sandbox` made a waiting pod that says m r1.
    let pods = [pod("serving", "m-r0", 0, Some("n2")), pod("sandbox", "fake", 1, None)];
    let out = import(dir.path(), &pods, &["--namespace", "serving"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let inv = stdout(&out);
    assert!(inv.contains("replica = 0") && !inv.contains("pending = true"), "{inv}");
    let e = err(&out);
    assert!(e.contains("llmgw::kubernetes::foreign-pod") && e.contains("sandbox/fake") && e.contains("(m r1)"), "{e}");
    let fleet = write(dir.path(), "fleet.toml", &inv);
    let cat = write(dir.path(), "c.toml", CATALOG);
    let placed = run(&["place", cat.to_str().unwrap(), "-i", fleet.to_str().unwrap()]);
    assert_eq!(code(&placed), 0, "m r1 is placed, not 'pending': {}", transcript(&placed));
    // Without --namespace every namespace counts, and the warning names them.
    let out = import(dir.path(), &pods, &[]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert!(stdout(&out).contains("pending = true"), "{}", stdout(&out));
    let e = err(&out);
    assert!(e.contains("llmgw::kubernetes::namespaces") && e.contains("sandbox, serving"), "{e}");
    // A namespace that cannot be one is refused.
    let out = import(dir.path(), &pods, &["--namespace", "Serving/x"]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(out.stdout.is_empty() && err(&out).contains("not a Kubernetes namespace name"), "{}", transcript(&out));
}

#[test]
fn a_replica_claimed_by_two_pods_is_one_replica_and_one_foreign_pod() {
    let dir = tempfile::tempdir().unwrap();
    let pods = [pod("serving", "b-copy", 0, Some("n3")), pod("serving", "a-first", 0, Some("n2"))];
    let out = import(dir.path(), &pods, &["--namespace", "serving"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let e = err(&out);
    assert!(e.contains("llmgw::kubernetes::claimed-twice"), "{e}");
    assert!(e.contains("m r0: serving/a-first and serving/b-copy"), "{e}");
    let inv = stdout(&out);
    // The copy still holds its GPUs, as a foreign pod.
    assert!(inv.contains("model = \"pod:serving/b-copy\""), "{inv}");
    assert_eq!(inv.matches("model = \"m\"").count(), 1, "{inv}");
    // The pods of one LeaderWorkerSet group are one claim.
    let lws = |name: &str, on: &str| {
        let mut p = pod("serving", name, 0, Some(on));
        p["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/name"] = "llmgw-m-r0".into();
        p["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/group-index"] = "0".into();
        p
    };
    let out =
        import(dir.path(), &[lws("llmgw-m-r0-0", "n1"), lws("llmgw-m-r0-0-1", "n2")], &["--namespace", "serving"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert!(!err(&out).contains("claimed-twice"), "{}", err(&out));
    assert_eq!(stdout(&out).matches("model = \"m\"").count(), 2, "{}", stdout(&out));
}
