//! SPEC 19, points 1 and 2: every object render writes is accepted by
//! `kubectl apply --server-side` (the API's validation, the CRDs' schemas
//! and CEL rules, LWS' webhooks), and every pod the real controllers make
//! of it is bound by the real kube-scheduler to exactly the node the plan
//! names, on a fleet with taints, allocatable below capacity and others'
//! pods holding CPUs, memory and GPUs.

use serde_json::Value;

use super::fleet::{NodeSpec, foreign_pod, items};
use super::*;

pub const CATALOG: &str = "tests/data/kubernetes/control-plane/catalog.toml";

/// The project's test nodes (`tests/data/kubernetes/nodes.json`: taints,
/// a cordoned and a draining node, allocatable below capacity, MIG in
/// both strategies, a time-sliced L4) with the pods of others on them that
/// still run, and beside them: ten H100 nodes on one InfiniBand fabric
/// (tainted for GPU work, RDMA adapters advertised, one half taken by
/// someone's job), two AMD MI300X nodes and two CPU nodes, one of them
/// dedicated by a taint.
pub fn mixed_fleet() -> (Vec<Value>, Vec<Value>) {
    let mut nodes = items("tests/data/kubernetes/nodes.json");
    // A node with adapters on the fabric has the RDMA device plugin's
    // resource too, as `--rdma-resource` expects of every such node.
    for n in &mut nodes {
        let on_fabric =
            n["metadata"]["labels"].as_object().is_some_and(|l| l.keys().any(|k| k.starts_with("llmgw.io/fabric.")));
        if on_fabric {
            n["status"]["capacity"]["rdma/ib"] = "4".into();
            n["status"]["allocatable"]["rdma/ib"] = "4".into();
        }
    }
    let pods: Vec<Value> = items("tests/data/kubernetes/pods.json")
        .into_iter()
        .filter(|p| {
            let running = !matches!(p["status"]["phase"].as_str(), Some("Succeeded" | "Failed"));
            // A replica llmgw rendered is the loop's business (looped.rs);
            // an unbound pod would be scheduled here, which is not the point.
            running && p["spec"]["nodeName"].is_string() && p["metadata"]["labels"]["llmgw.io/model"].is_null()
        })
        .collect();
    let names: Vec<String> = (1..=10).map(|i| format!("ib-h100-{i:02}")).collect();
    for name in &names {
        let mut n = NodeSpec::nvidia(name, "NVIDIA-H100-80GB-HBM3", 8, "81559");
        n.devices.push(("rdma/ib", 4, 4));
        n.labels.push(("llmgw.io/fabric.ib-east", "mlx5_0.mlx5_1.mlx5_2.mlx5_3"));
        n.taints.push(("nvidia.com/gpu", "present", "NoSchedule"));
        nodes.push(n.value());
    }
    for name in ["mi300x-01", "mi300x-02"] {
        let mut n = NodeSpec::cpu_only(name);
        n.cpu = "192";
        n.alloc_cpu = "190";
        n.memory = "2063937Mi";
        n.alloc_memory = "2000000Mi";
        n.devices = vec![("amd.com/gpu", 8, 8)];
        n.labels = vec![("amd.com/gpu.product-name", "AMD_Instinct_MI300X_OAM"), ("amd.com/gpu.vram", "192G")];
        nodes.push(n.value());
    }
    let mut cpu = NodeSpec::cpu_only("cpu-01");
    nodes.push(cpu.value());
    cpu.name = "cpu-02";
    cpu.taints = vec![("dedicated", "cpu", "NoSchedule")];
    nodes.push(cpu.value());
    let mut pods = pods;
    pods.push(foreign_pod("training-0", "ib-h100-03", &[("cpu", "100"), ("memory", "500Gi"), ("nvidia.com/gpu", "4")]));
    (nodes, pods)
}

/// Places the catalog on the scope's cluster as imported from the API
/// server, renders it with `flags`, applies it, and holds every pod to the
/// plan. Returns the plan.
pub fn round(scope: &Scope, flags: &[&str]) -> Value {
    let catalog = root().join(CATALOG);
    let fleet = scope.import(false, &[]);
    let (plan_file, plan) = place(scope.dir.path(), &catalog, &fleet, &[]);
    let out_dir = render(scope, &plan_file, &catalog, &fleet, flags);
    assert_bound_as_planned(scope, &out_dir, &plan);
    plan
}

fn placed(plan: &Value, model: &str) -> usize {
    plan["placements"].as_array().unwrap().iter().filter(|p| p["model"] == model).count()
}

/// Every kind of replica was placed (the fleet is made for it), so every
/// kind was applied and bound.
fn every_kind_placed(plan: &Value) {
    for (model, n) in [
        ("qwen-7b", 3),
        ("llama-70b", 1),
        ("tiny-mig", 2),
        ("llama-405b", 1),
        ("deepseek-v3", 1),
        ("qwen-72b", 1),
        ("llama-70b-rocm", 1),
        ("qwen-gguf", 2),
    ] {
        assert_eq!(placed(plan, model), n, "{model}: {plan:#}");
    }
}

#[test]
fn every_kind_render_writes_is_accepted_and_bound_where_planned() {
    let Some(k) = kube() else { return };
    let scope = Scope::new(k, "apply");
    let (nodes, pods) = mixed_fleet();
    scope.create(nodes, pods);
    let plan = round(&scope, &[]);
    every_kind_placed(&plan);
}

/// The same with every render flag that changes what is written: a
/// namespace, InferencePools and HTTPRoutes, RDMA adapters requested.
#[test]
fn every_kind_with_gateways_namespace_and_rdma_is_accepted_and_bound() {
    let Some(k) = kube() else { return };
    let scope = Scope::new(k, "flags");
    let (nodes, pods) = mixed_fleet();
    scope.create(nodes, pods);
    let parent = format!("{}/gateway", scope.ns);
    let plan = round(
        &scope,
        &[
            "--namespace",
            &scope.ns,
            "--gateway",
            "inference-pool",
            "--epp",
            "llmgw-epp",
            "--gateway-parent",
            &parent,
            "--rdma-resource",
            "rdma/ib",
        ],
    );
    every_kind_placed(&plan);
    let pools = k.get(&["inferencepools", "-n", &scope.ns]);
    let routes = k.get(&["httproutes", "-n", &scope.ns]);
    assert_eq!(pools["items"].as_array().unwrap().len(), 8, "one pool a model: {pools:#}");
    assert_eq!(routes["items"].as_array().unwrap().len(), 8, "one route a model: {routes:#}");
    // The multi-node pods asked for the fabric's adapters.
    let lws_pods: Vec<Value> = scope
        .pods()
        .into_iter()
        .filter(|p| p["metadata"]["labels"]["leaderworkerset.sigs.k8s.io/name"].is_string())
        .collect();
    assert!(!lws_pods.is_empty());
    for p in &lws_pods {
        let limits = &p["spec"]["containers"][0]["resources"]["limits"];
        assert_eq!(limits["rdma/ib"], "1", "{}", p["metadata"]["name"]);
    }
}

/// A fleet whose only room is what others leave: the scheduler binds each
/// replica exactly where llmgw counted the room (no node is left with
/// less than a pod asks).
#[test]
fn replicas_fill_what_others_leave_exactly() {
    let Some(k) = kube() else { return };
    let scope = Scope::new(k, "tight");
    let mut a = NodeSpec::nvidia("h100-a", "NVIDIA-H100-80GB-HBM3", 8, "81559");
    a.alloc_cpu = "30";
    a.cpu = "32";
    a.alloc_memory = "262144Mi";
    a.memory = "270000Mi";
    let mut b = NodeSpec::nvidia("h100-b", "NVIDIA-H100-80GB-HBM3", 8, "81559");
    b.devices = vec![("nvidia.com/gpu", 8, 6)];
    let pods = vec![
        foreign_pod("notebook", "h100-a", &[("cpu", "6"), ("memory", "64Gi"), ("nvidia.com/gpu", "2")]),
        foreign_pod("batch", "h100-b", &[("cpu", "200"), ("nvidia.com/gpu", "1")]),
    ];
    scope.create(vec![a.value(), b.value()], pods);
    let catalog = write(
        scope.dir.path(),
        "catalog.toml",
        "[[model]]\nname = \"m\"\nreplicas = 12\nreplicas_per_node = 12\n[[model.profile]]\nname = \"tp1\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ncpus = 4\nmemory_gb = 32\n",
    );
    let fleet = scope.import(false, &[]);
    let (plan_file, plan) = place(scope.dir.path(), &catalog, &fleet, &[]);
    // h100-a: 24 CPUs, 192 GiB and 6 GPUs left: 6 replicas; h100-b: 20
    // CPUs and 5 healthy GPUs left: 5. The twelfth fits nowhere.
    let on = |n: &str| {
        plan["placements"].as_array().unwrap().iter().filter(|p| p["nodes"][0]["node"] == scope.node(n)).count()
    };
    assert_eq!((on("h100-a"), on("h100-b")), (6, 5), "{plan:#}");
    let out_dir = render(&scope, &plan_file, &catalog, &fleet, &[]);
    assert_bound_as_planned(&scope, &out_dir, &plan);
}
