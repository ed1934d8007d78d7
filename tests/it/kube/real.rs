//! The control plane is the real thing: its version, the API's own
//! validation of a bad object, the scheduler's own words for a pod that
//! cannot fit, LeaderWorkerSet's own controller and webhooks at work.

use serde_json::json;

use super::fleet::NodeSpec;
use super::*;

#[test]
fn the_control_plane_is_a_real_kubernetes_of_1_34_or_newer() {
    let Some(k) = kube() else { return };
    let v: Value = serde_json::from_str(&k.ok(&["version", "-o", "json"])).unwrap();
    let server = v["serverVersion"]["gitVersion"].as_str().unwrap();
    let minor: u32 = v["serverVersion"]["minor"].as_str().unwrap().trim_end_matches('+').parse().unwrap();
    assert!(server.starts_with("v1.") && minor >= 34, "{v:#}");
    // resource.k8s.io/v1 (DRA, GA in 1.34) is served, and the CRDs of every
    // kind render writes are installed.
    let resources = k.ok(&["api-resources", "-o", "name"]);
    for r in [
        "resourceslices.resource.k8s.io",
        "resourceclaimtemplates.resource.k8s.io",
        "deviceclasses.resource.k8s.io",
        "leaderworkersets.leaderworkerset.x-k8s.io",
        "inferencepools.inference.networking.k8s.io",
        "httproutes.gateway.networking.k8s.io",
        "computedomains.resource.nvidia.com",
    ] {
        assert!(resources.lines().any(|l| l == r), "{r} is not served:\n{resources}");
    }
    let classes = k.get(&["deviceclasses"]);
    let names: Vec<&str> =
        classes["items"].as_array().unwrap().iter().map(|c| c["metadata"]["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"gpu.nvidia.com") && names.contains(&"mig.nvidia.com"), "{names:?}");
}

/// The defect this control plane exists to catch: a node field selector
/// takes exactly one value, so a pod pinned to two nodes by one
/// requirement is refused by the API itself (render now writes one term
/// per node, and the same pod with two terms is accepted).
#[test]
fn the_api_refuses_a_node_field_selector_of_two_values_in_its_own_words() {
    let Some(k) = kube() else { return };
    let scope = Scope::new(k, "validate");
    let pod = |terms: Value| {
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "pinned", "namespace": scope.ns},
            "spec": {
                "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}],
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}},
            },
        })
        .to_string()
    };
    let one_requirement =
        pod(json!([{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]}]));
    let out = k.run(&["create", "--dry-run=server", "-f", "-"], Some(&one_requirement));
    assert!(!out.status.success(), "{}", transcript(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("must be only one value when `operator` is 'In' or 'NotIn' for node field selector"), "{err}");
    let two_terms = pod(json!([
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]},
    ]));
    let out = k.run(&["create", "--dry-run=server", "-f", "-"], Some(&two_terms));
    assert!(out.status.success(), "{}", transcript(&out));
}

#[test]
fn the_scheduler_says_in_its_own_words_why_a_pod_does_not_fit() {
    let Some(k) = kube() else { return };
    let scope = Scope::new(k, "words");
    let mut n = NodeSpec::nvidia("small", "NVIDIA-H100-80GB-HBM3", 2, "81559");
    n.taints = vec![("dedicated", "team-a", "NoSchedule")];
    scope.create(vec![n.value()], vec![]);
    let node = scope.node("small");
    let pod = |name: &str, gpus: &str, tolerate: bool| {
        let tolerations = if tolerate { json!([{"operator": "Exists"}]) } else { json!([]) };
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": scope.ns},
            "spec": {
                "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                "resources": {"limits": {"nvidia.com/gpu": gpus}}}],
                "tolerations": tolerations,
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}},
            },
        })
    };
    k.create(vec![pod("too-many-gpus", "4", true), pod("tainted", "1", false), pod("fits", "2", true)]);
    let pods = scope.settle(3, 60);
    let by = |name: &str| pods.iter().find(|p| p["metadata"]["name"] == name).unwrap();
    assert_eq!(bound(by("fits")), Some(node.as_str()), "{}", scope.describe());
    let msg = unschedulable(by("too-many-gpus")).unwrap_or_default();
    assert!(msg.contains("Insufficient nvidia.com/gpu"), "{msg}");
    let msg = unschedulable(by("tainted")).unwrap_or_default();
    assert!(msg.contains("untolerated taint"), "{msg}");
    let events = scope.failed_scheduling();
    assert!(
        events.iter().any(|(p, m)| p == "too-many-gpus" && m.contains("Insufficient nvidia.com/gpu")),
        "{events:?}"
    );
}
