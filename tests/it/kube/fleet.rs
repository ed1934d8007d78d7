//! Node and pod objects for the control plane: the project's real
//! `kubectl get nodes` outputs where they go, synthetic ones beyond, moved
//! into a test's scope.

use serde_json::{Map, Value, json};

use super::{SCOPE_LABEL, Scope};

/// A node as a kubelet would register it: capacity, allocatable (memory a
/// little below capacity, as system reservations make it), labels, taints.
pub struct NodeSpec<'a> {
    pub name: &'a str,
    pub cpu: &'a str,
    pub alloc_cpu: &'a str,
    pub memory: &'a str,
    pub alloc_memory: &'a str,
    /// Extended resources (`nvidia.com/gpu`, `amd.com/gpu`, MIG ones):
    /// (name, capacity, allocatable).
    pub devices: Vec<(&'a str, u32, u32)>,
    pub labels: Vec<(&'a str, &'a str)>,
    /// (key, value, effect)
    pub taints: Vec<(&'a str, &'a str, &'a str)>,
}

impl<'a> NodeSpec<'a> {
    pub fn cpu_only(name: &'a str) -> Self {
        NodeSpec {
            name,
            cpu: "32",
            alloc_cpu: "31500m",
            memory: "131072Mi",
            alloc_memory: "128000Mi",
            devices: vec![],
            labels: vec![],
            taints: vec![],
        }
    }

    /// An NVIDIA GPU node as GPU Feature Discovery labels it.
    pub fn nvidia(name: &'a str, product: &'a str, gpus: u32, gpu_memory: &'a str) -> Self {
        let mut n = NodeSpec::cpu_only(name);
        n.cpu = "224";
        n.alloc_cpu = "220";
        n.memory = "2063937Mi";
        n.alloc_memory = "2000000Mi";
        n.devices = vec![("nvidia.com/gpu", gpus, gpus)];
        n.labels = vec![
            ("nvidia.com/gpu.present", "true"),
            ("nvidia.com/gpu.product", product),
            ("nvidia.com/gpu.memory", gpu_memory),
        ];
        n
    }

    pub fn value(&self) -> Value {
        let mut capacity = Map::new();
        let mut allocatable = Map::new();
        capacity.insert("cpu".into(), json!(self.cpu));
        allocatable.insert("cpu".into(), json!(self.alloc_cpu));
        capacity.insert("memory".into(), json!(self.memory));
        allocatable.insert("memory".into(), json!(self.alloc_memory));
        capacity.insert("pods".into(), json!("110"));
        allocatable.insert("pods".into(), json!("110"));
        let mut labels = Map::new();
        for (k, v) in &self.labels {
            labels.insert((*k).into(), json!(v));
        }
        for (r, c, a) in &self.devices {
            capacity.insert((*r).into(), json!(c.to_string()));
            allocatable.insert((*r).into(), json!(a.to_string()));
            if *r == "nvidia.com/gpu" && !labels.contains_key("nvidia.com/gpu.count") {
                labels.insert("nvidia.com/gpu.count".into(), json!(c.to_string()));
            }
        }
        let taints: Vec<Value> =
            self.taints.iter().map(|(k, v, e)| json!({"key": k, "value": v, "effect": e})).collect();
        json!({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": self.name, "labels": labels},
            "spec": if taints.is_empty() { json!({}) } else { json!({"taints": taints}) },
            "status": {"capacity": capacity, "allocatable": allocatable},
        })
    }
}

/// A pod of someone else's, bound to `node` (no scheduler involved, as a
/// pod that ran before), holding what it requests there.
pub fn foreign_pod(name: &str, node: &str, requests: &[(&str, &str)]) -> Value {
    let r: Map<String, Value> = requests.iter().map(|(k, v)| ((*k).to_string(), json!(v))).collect();
    let limits: Map<String, Value> =
        requests.iter().filter(|(k, _)| k.contains('/')).map(|(k, v)| ((*k).to_string(), json!(v))).collect();
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": r, "limits": limits}}],
            "tolerations": [{"operator": "Exists"}],
        },
    })
}

/// Fields the API server sets, which a create must not carry.
fn strip_server_fields(meta: &mut Value) {
    if let Some(m) = meta.as_object_mut() {
        for k in [
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "managedFields",
            "selfLink",
            "generation",
            "ownerReferences",
        ] {
            m.remove(k);
        }
    }
}

/// A node moved into the scope: renamed, its hostname label too (the
/// pods' anti-affinity spreads by it), labelled with the scope, Ready as
/// of now; a node its kubelet reported not Ready gets the taint the node
/// lifecycle controller would give it.
pub fn scoped_node(scope: &Scope, mut n: Value) -> Value {
    let name = scope.node(n["metadata"]["name"].as_str().unwrap());
    strip_server_fields(&mut n["metadata"]);
    n["metadata"]["name"] = json!(name);
    if !n["metadata"]["labels"].is_object() {
        n["metadata"]["labels"] = json!({});
    }
    let labels = n["metadata"]["labels"].as_object_mut().unwrap();
    labels.insert("kubernetes.io/hostname".into(), json!(name));
    labels.insert(SCOPE_LABEL.into(), json!(scope.id));
    labels.entry("kubernetes.io/os").or_insert(json!("linux"));
    labels.entry("kubernetes.io/arch").or_insert(json!("amd64"));
    let status = n["status"].as_object_mut().unwrap();
    status.remove("images");
    // What the kubelet reports of itself: a partial copy fails validation.
    status.remove("nodeInfo");
    status.remove("volumesInUse");
    status.remove("volumesAttached");
    let alloc = status.entry("allocatable").or_insert(json!({})).as_object_mut().unwrap();
    alloc.entry("pods").or_insert(json!("110"));
    let cap = status.entry("capacity").or_insert(json!({})).as_object_mut().unwrap();
    cap.entry("pods").or_insert(json!("110"));
    let ready = status
        .get("conditions")
        .and_then(Value::as_array)
        .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
        .is_none_or(|c| c["status"] == "True");
    let now = now();
    status.insert(
        "conditions".into(),
        json!([{
            "type": "Ready",
            "status": if ready { "True" } else { "False" },
            "reason": if ready { "KubeletReady" } else { "KubeletNotReady" },
            "lastHeartbeatTime": now,
            "lastTransitionTime": now,
        }]),
    );
    if !ready {
        let taints = n["spec"]["taints"].as_array().cloned().unwrap_or_default();
        if !taints.iter().any(|t| t["key"] == "node.kubernetes.io/not-ready") {
            let mut t = taints;
            t.push(json!({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}));
            n["spec"]["taints"] = json!(t);
        }
    }
    n
}

/// A pod moved into the scope's namespace, bound to its scoped node.
pub fn scoped_pod(scope: &Scope, mut p: Value) -> Value {
    strip_server_fields(&mut p["metadata"]);
    let ns = p["metadata"]["namespace"].as_str().map(str::to_string);
    if let Some(ns) = ns {
        let name = p["metadata"]["name"].as_str().unwrap().to_string();
        p["metadata"]["name"] = json!(format!("{ns}-{name}"));
    }
    p["metadata"]["namespace"] = json!(scope.ns);
    if let Some(node) = p["spec"]["nodeName"].as_str().map(str::to_string) {
        p["spec"]["nodeName"] = json!(scope.node(&node));
    }
    if let Some(o) = p.as_object_mut() {
        o.remove("status");
    }
    p
}

/// RFC 3339, as the API writes times.
pub fn now() -> String {
    let out = std::process::Command::new("date").args(["-u", "+%Y-%m-%dT%H:%M:%SZ"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The items of a `kubectl get -o json` file of the project's.
pub fn items(path: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(crate::common::root().join(path)).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["items"].as_array().cloned().unwrap_or_else(|| vec![v])
}
