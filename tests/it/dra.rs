//! Exact devices and NVLink domains: real ResourceSlices and claims of
//! NVIDIA's DRA driver imported and held to what they say, rendered claim
//! templates decoded as Kubernetes' own types and their CEL selectors
//! evaluated (with a CEL implementation) against the devices the slices
//! publish, the loop closed through claims a scheduler would allocate,
//! and GB200 racks kept apart by their clique labels.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use k8s_openapi::api::resource::v1::ResourceClaimTemplate;
use serde_json::{Value, json};

use crate::common::{code, flat, json, placed_plan, render_plan, root, run, stdout, transcript, write};
use crate::render::documents;

const DRA: &str = "tests/data/real/kubernetes/dra";

pub(crate) fn real(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(root().join(DRA).join(name)).unwrap()).unwrap()
}

/// The example GB200 rack of docs/kubernetes.md.
const EXAMPLE: &str = "examples/dra";

/// The example rack imported with its slices, as a file in `dir`.
fn example_fleet(dir: &Path) -> PathBuf {
    let ex = |f: &str| root().join(EXAMPLE).join(f).display().to_string();
    let fleet = dir.join("f.toml");
    let out = run(&[
        "inventory",
        "import",
        "kubernetes",
        &ex("nodes.json"),
        "--resource-slices",
        &ex("resourceslices.json"),
        "-o",
        fleet.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    fleet
}

pub(crate) fn node(name: &str, labels: &Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
        "status": {"conditions": [{"type": "Ready", "status": "True"}],
                   "capacity": {"cpu": "144", "memory": "1024Gi"}, "allocatable": {"cpu": "144", "memory": "1024Gi"}}})
}

pub(crate) fn list(items: Vec<Value>) -> Value {
    json!({"apiVersion": "v1", "kind": "List", "items": items})
}

pub(crate) fn import(dir: &Path, nodes: &Value, extra: &[(&str, &Value)]) -> std::process::Output {
    let n = write(dir, "nodes.json", &nodes.to_string());
    let mut args = vec!["inventory".to_string(), "import".into(), "kubernetes".into(), n.display().to_string()];
    for (flag, v) in extra {
        let f = write(dir, &format!("{}.json", flag.trim_start_matches('-')), &v.to_string());
        args.push((*flag).into());
        args.push(f.display().to_string());
    }
    args.extend(["--format".into(), "json".into()]);
    run(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

#[test]
fn the_drivers_own_slice_imports_to_its_gpu_and_mig_device() {
    let dir = tempfile::tempdir().unwrap();
    let slices = real("slice-docs-20c35fe2.list.json");
    let out = import(dir.path(), &list(vec![node("ipp1-0033", &json!({}))]), &[("--resource-slices", &slices)]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let inv = json(&out);
    let g = &inv["node"][0]["gpu"][0];
    assert_eq!(inv["node"][0]["gpu"].as_array().unwrap().len(), 1);
    assert_eq!(g["name"], "NVIDIA A100-PCIE-40GB");
    assert_eq!(g["memory_mb"], 40 * 1024);
    assert_eq!(g["uuid"], "GPU-2fa81118-5a5f-aa66-7660-471eed407181");
    assert_eq!(g["dra_device"], "gpu-0");
    assert_eq!(g["pci_bus_id"], "0000:65:00.0");
    assert_eq!(g["mig"], true);
    let m = &g["mig_device"][0];
    assert_eq!(
        (&m["profile"], &m["memory_mb"], &m["uuid"], &m["dra_device"]),
        (
            &json!("1g.5gb"),
            &json!(4864),
            &json!("MIG-1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"),
            &json!("gpu-0-mig-1g.5gb-0")
        )
    );
    // The same slice in the v1beta1 shape (attributes under `basic`), as
    // Kubernetes 1.32 prints it: the same GPUs.
    let mut beta = slices.clone();
    beta["items"][0]["apiVersion"] = "resource.k8s.io/v1beta1".into();
    for d in beta["items"][0]["spec"]["devices"].as_array_mut().unwrap() {
        let (a, c) = (d["attributes"].take(), d["capacity"].take());
        *d = json!({"name": d["name"], "basic": {"attributes": a, "capacity": c}});
    }
    let again = json(&import(dir.path(), &list(vec![node("ipp1-0033", &json!({}))]), &[("--resource-slices", &beta)]));
    assert_eq!(again["node"][0]["gpu"], inv["node"][0]["gpu"]);
}

#[test]
fn a_mig_node_whose_gpus_are_published_only_as_mig_devices_keeps_them() {
    // Issue 719 of the driver: an A100 80GB in MIG mode, published as its
    // MIG devices, each naming its GPU as parentUUID.
    let dir = tempfile::tempdir().unwrap();
    let slices = real("slice-a100-mig-v1-issue719.reconstructed.list.json");
    let id = "aks-migpool-68842551-vmss000001";
    let out = import(dir.path(), &list(vec![node(id, &json!({}))]), &[("--resource-slices", &slices)]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let g = &json(&out)["node"][0]["gpu"][0];
    assert_eq!(
        (&g["name"], &g["uuid"], &g["mig"]),
        (&json!("NVIDIA A100 80GB PCIe"), &json!("GPU-ddf64803-f421-0e5b-883e-cd752de16db7"), &json!(true))
    );
    assert_eq!(g["pci_bus_id"], "0001:00:00.0", "the driver's older pcieBusID attribute");
    assert_eq!(g["mig_device"][0]["profile"], "1g.10gb");
    assert_eq!(g["mig_device"][0]["memory_mb"], 9728);
    assert_eq!(g["mig_device"][0]["uuid"], "MIG-6a0297e8-9708-515f-99e2-f111fc87221d");
}

/// A ResourceSlice publishing `gpus` GB200s for `node`, each device shaped
/// as the driver's documented GPU entry, with its own name, UUID and bus id.
pub(crate) fn slice(node: &str, gpus: usize, generation: i64, count: i64) -> Value {
    let real = real("slice-docs-20c35fe2.list.json");
    let template = &real["items"][0]["spec"]["devices"][0];
    let devices: Vec<Value> = (0..gpus)
        .map(|i| {
            let mut d = template.clone();
            d["name"] = format!("gpu-{i}").into();
            d["attributes"]["uuid"]["string"] = uuid(node, i).into();
            d["attributes"]["productName"]["string"] = "NVIDIA GB200".into();
            // Bus ids in the opposite order of the names: the import lists
            // GPUs by bus id, and numbers each by its name's minor number.
            d["attributes"]["resource.kubernetes.io/pciBusID"]["string"] =
                format!("{:04x}:{:02x}:00.0", i / 64, 0x40 - i % 64).into();
            d["capacity"]["memory"]["value"] = "189471Mi".into();
            d
        })
        .collect();
    json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": format!("{node}-gpu.nvidia.com-{generation}")},
        "spec": {"driver": "gpu.nvidia.com", "nodeName": node,
                 "pool": {"name": node, "generation": generation, "resourceSliceCount": count}, "devices": devices}})
}

pub(crate) fn uuid(node: &str, i: usize) -> String {
    let n: u32 = node.bytes().map(u32::from).sum();
    format!("GPU-{n:08x}-0000-4000-8000-{i:012x}")
}

#[test]
fn only_a_whole_pool_of_its_newest_generation_is_taken() {
    let dir = tempfile::tempdir().unwrap();
    let labels = json!({"nvidia.com/gpu.product": "NVIDIA-GB200", "nvidia.com/gpu.count": "4"});
    let nodes = list(vec![node("a", &labels), node("b", &labels)]);
    // a: generation 1 (4 GPUs) then generation 2 (2 GPUs); b: one of two slices.
    let slices = list(vec![slice("a", 4, 1, 1), slice("a", 2, 2, 1), slice("b", 4, 1, 2)]);
    let out = import(dir.path(), &nodes, &[("--resource-slices", &slices)]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let inv = json(&out);
    let gpus = |i: usize| inv["node"][i]["gpu"].as_array().unwrap().clone();
    assert_eq!(gpus(0).len(), 2, "a: the newest generation");
    assert!(gpus(0).iter().all(|g| g["dra_device"].is_string()));
    // By bus id: gpu-1 (0x3f) before gpu-0 (0x40).
    assert_eq!(gpus(0)[0]["dra_device"], "gpu-1");
    assert_eq!(gpus(1).len(), 4, "b keeps its labels' GPUs");
    assert!(gpus(1).iter().all(|g| g.get("dra_device").is_none()));
    let err = flat(&out.stderr);
    assert!(
        err.contains("llmgw::kubernetes::incomplete-pool") && err.contains("b (generation 1: 1 of 2 slices)"),
        "{err}"
    );
    assert!(
        err.contains("llmgw::kubernetes::slices-disagree")
            && err.contains("a (4 gb200 by its labels, 2 gb200 in its slices)"),
        "{err}"
    );
}

/// Nodes `n1`..`n<count>` of four GB200s, their slices, a catalog, and the
/// plan placed on them.
struct Fleet {
    dir: tempfile::TempDir,
    nodes: Value,
    slices: Value,
    inventory: PathBuf,
    catalog: PathBuf,
    plan: PathBuf,
}

const CATALOG: &str = "[[model]]\nname = \"chat\"\nreplicas = 2\n[[model.profile]]\nname = \"tp2\"\nengine = \"vllm\"\ngpu_class = \"gb200\"\ngpus_per_node = 2\n\
[[model]]\nname = \"big\"\nreplicas = 1\n[[model.profile]]\nname = \"two-nodes\"\nengine = \"vllm\"\ngpu_class = \"gb200\"\ngpus_per_node = 4\nnodes = 2\n\
[[model]]\nname = \"tiny\"\nreplicas = 1\n[[model.profile]]\nname = \"mig\"\nengine = \"vllm\"\ngpu_class = \"a100-pcie-40gb\"\nmig_profile = \"1g.5gb\"\n";

fn fleet(count: usize) -> Fleet {
    let dir = tempfile::tempdir().unwrap();
    // One GB200 rack: an NVLink domain, for the 2-node replica.
    let rack = json!({"nvidia.com/gpu.clique": "7b968a6d-c8aa-45e1-9e07-e1e51be99c31.1"});
    let mut nodes: Vec<Value> = (1..=count).map(|i| node(&format!("n{i}"), &rack)).collect();
    let mut slices: Vec<Value> = (1..=count).map(|i| slice(&format!("n{i}"), 4, 1, 1)).collect();
    // And the driver's own MIG example node.
    nodes.push(node("ipp1-0033", &json!({})));
    slices.extend(real("slice-docs-20c35fe2.list.json")["items"].as_array().unwrap().iter().cloned());
    let (nodes, slices) = (list(nodes), list(slices));
    let out = import(dir.path(), &nodes, &[("--resource-slices", &slices)]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let inventory = write(dir.path(), "fleet.json", &stdout(&out));
    let catalog = write(dir.path(), "c.toml", CATALOG);
    let plan = placed_plan(dir.path(), &catalog, &inventory);
    Fleet { dir, nodes, slices, inventory, catalog, plan }
}

impl Fleet {
    fn render(&self, extra: &[&str]) -> std::process::Output {
        render_plan("kubernetes", &self.plan, &self.catalog, &self.inventory, extra)
    }

    fn plan(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(&self.plan).unwrap()).unwrap()
    }
}

/// Each published device as CEL sees it: `device.driver`,
/// `device.attributes["gpu.nvidia.com"]` (the driver's own attributes, as
/// values), with its node and name beside it (which CEL does not see).
fn devices(slices: &Value) -> Vec<(String, String, String, Value)> {
    let mut out = Vec::new();
    for s in slices["items"].as_array().unwrap() {
        let node = s["spec"]["nodeName"].as_str().unwrap().to_string();
        for d in s["spec"]["devices"].as_array().unwrap() {
            let mut attrs = serde_json::Map::new();
            for (k, v) in d["attributes"].as_object().unwrap() {
                if !k.contains('/') {
                    let value = v.as_object().unwrap().values().next().unwrap().clone();
                    attrs.insert(k.clone(), value);
                }
            }
            let kind = attrs["type"].as_str().unwrap().to_string();
            let device = json!({"driver": "gpu.nvidia.com", "attributes": {"gpu.nvidia.com": attrs}});
            out.push((node.clone(), d["name"].as_str().unwrap().to_string(), kind, device));
        }
    }
    out
}

/// The devices a claim template's request admits: those of its class's
/// type whose selector evaluates to true.
fn admitted(t: &ResourceClaimTemplate, all: &[(String, String, String, Value)]) -> BTreeSet<(String, String)> {
    let request = &t.spec.spec.devices.as_ref().unwrap().requests.as_ref().unwrap()[0];
    let exactly = request.exactly.as_ref().unwrap();
    let kind = match exactly.device_class_name.as_str() {
        "gpu.nvidia.com" => "gpu",
        "mig.nvidia.com" => "mig",
        other => panic!("class {other}"),
    };
    let expression = &exactly.selectors.as_ref().unwrap()[0].cel.as_ref().unwrap().expression;
    let program = cel::Program::compile(expression).unwrap_or_else(|e| panic!("{expression}: {e:?}"));
    all.iter()
        .filter(|(_, _, k, _)| k == kind)
        .filter(|(_, _, _, device)| {
            let mut ctx = cel::Context::default();
            ctx.add_variable("device", device.clone()).unwrap();
            match program.execute(&ctx) {
                Ok(cel::Value::Bool(b)) => b,
                other => panic!("{expression} on {device}: {other:?}"),
            }
        })
        .map(|(node, name, _, _)| (node.clone(), name.clone()))
        .collect()
}

/// The nodes a claim template's pods run on: its workload's pod template
/// (leader or workers) pins them by name.
fn template_nodes(docs: &[Value], template: &str) -> Vec<String> {
    for d in docs {
        let templates: Vec<&Value> = match d["kind"].as_str() {
            Some("Deployment") => vec![&d["spec"]["template"]],
            Some("LeaderWorkerSet") => vec![
                &d["spec"]["leaderWorkerTemplate"]["leaderTemplate"],
                &d["spec"]["leaderWorkerTemplate"]["workerTemplate"],
            ],
            _ => continue,
        };
        for t in templates {
            let claims = t["spec"]["resourceClaims"].as_array().cloned().unwrap_or_default();
            if claims.iter().any(|c| c["resourceClaimTemplateName"] == template) {
                let terms = &t["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
                return terms
                    .as_array()
                    .unwrap()
                    .iter()
                    .flat_map(|t| t["matchFields"][0]["values"].as_array().unwrap())
                    .map(|v| v.as_str().unwrap().to_string())
                    .collect();
            }
        }
    }
    panic!("no pod names claim template {template}")
}

// Which GPUs each claim is given is decided by the real scheduler on the
// real control plane: tests/it/kube/dra.rs (the CEL evaluation that stood
// here imitated its allocator).

#[test]
fn a_gpu_without_a_uuid_cannot_be_pinned_and_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let inv = write(
        dir.path(),
        "i.toml",
        "[[node]]\nid = \"n1\"\n[[node.gpu]]\nindex = 0\nname = \"NVIDIA GB200\"\nmemory_mb = 189471\n[[node.gpu]]\nindex = 1\nname = \"NVIDIA GB200\"\nmemory_mb = 189471\n",
    );
    let catalog = write(
        dir.path(),
        "c.toml",
        "[[model]]\nname = \"chat\"\n[[model.profile]]\nname = \"tp2\"\nengine = \"vllm\"\ngpu_class = \"gb200\"\ngpus_per_node = 2\n",
    );
    let plan = placed_plan(dir.path(), &catalog, &inv);
    let out_dir = dir.path().join("out");
    let out = run(&[
        "render",
        "kubernetes",
        plan.to_str().unwrap(),
        "--catalog",
        catalog.to_str().unwrap(),
        "-i",
        inv.to_str().unwrap(),
        "--devices",
        "dra",
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    let err = flat(&out.stderr);
    assert!(err.contains("chat r0: GPU 0 of n1 has no uuid, so a DRA claim cannot pin it"), "{err}");
    assert!(err.contains("llmgw::render::no-uuid"), "{err}");
    assert!(!out_dir.exists(), "nothing written");
}

/// The claims a scheduler allocates for the rendered pods: each pod's
/// claim, from its template, given the devices its selector admits on the
/// pod's node, except where `instead` says which devices to give.
fn allocate(docs: &[Value], slices: &Value, instead: &BTreeMap<String, Vec<String>>) -> Vec<Value> {
    let all = devices(slices);
    let mut out = Vec::new();
    for d in docs.iter().filter(|d| d["kind"] == "ResourceClaimTemplate") {
        let t: ResourceClaimTemplate = serde_json::from_value(d.clone()).unwrap();
        let name = t.metadata.name.clone().unwrap();
        let count = t.spec.spec.devices.as_ref().unwrap().requests.as_ref().unwrap()[0]
            .exactly
            .as_ref()
            .unwrap()
            .count
            .unwrap() as usize;
        let admitted = admitted(&t, &all);
        for node in template_nodes(docs, &name) {
            let given: Vec<String> = match instead.get(&name) {
                Some(list) => list.clone(),
                None => admitted.iter().filter(|(n, _)| *n == node).map(|(_, d)| d.clone()).take(count).collect(),
            };
            let meta = t.spec.metadata.clone().unwrap();
            out.push(json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": format!("{name}-{node}-x7k2p"), "namespace": "serving", "labels": meta.labels, "annotations": meta.annotations},
                "spec": d["spec"]["spec"].clone(),
                "status": {"allocation": {"devices": {"results": given.iter().map(|g| json!({"request": "gpus", "driver": "gpu.nvidia.com", "pool": node, "device": g})).collect::<Vec<_>>()}}}}));
        }
    }
    out
}

#[test]
fn the_loop_with_exact_devices_holds_what_each_claim_was_given() {
    let f = fleet(4);
    let out = f.render(&["--devices", "dra"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let docs = documents(&stdout(&out));
    let plan = f.plan();
    // chat r0's claim was given two other GPUs of its node than planned.
    let chat0 =
        plan["placements"].as_array().unwrap().iter().find(|p| p["model"] == "chat" && p["replica"] == 0).unwrap();
    let node0 = chat0["nodes"][0]["node"].as_str().unwrap().to_string();
    let inventory: Value = serde_json::from_str(&std::fs::read_to_string(&f.inventory).unwrap()).unwrap();
    let n = inventory["node"].as_array().unwrap().iter().find(|n| n["id"] == node0.as_str()).unwrap();
    let planned: Vec<u64> = chat0["nodes"][0]["gpus"].as_array().unwrap().iter().map(|g| g.as_u64().unwrap()).collect();
    let taken: BTreeSet<u64> = plan["placements"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| {
            p["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|a| a["node"] == node0.as_str())
                .flat_map(|a| a["gpus"].as_array().unwrap().iter().map(|g| g.as_u64().unwrap()))
        })
        .collect();
    let other: Vec<(u64, String)> = n["gpu"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| !taken.contains(&g["index"].as_u64().unwrap()))
        .map(|g| (g["index"].as_u64().unwrap(), g["dra_device"].as_str().unwrap().to_string()))
        .take(2)
        .collect();
    assert_eq!(other.len(), 2, "the fleet leaves two GPUs of {node0} free");
    let template = docs
        .iter()
        .find(|d| {
            d["kind"] == "ResourceClaimTemplate"
                && d["spec"]["metadata"]["annotations"]["llmgw.io/model"] == "chat"
                && d["spec"]["metadata"]["labels"]["llmgw.io/replica"] == "0"
        })
        .unwrap();
    let instead: BTreeMap<String, Vec<String>> =
        [(template["metadata"]["name"].as_str().unwrap().to_string(), other.iter().map(|o| o.1.clone()).collect())]
            .into();
    let claims = list(allocate(&docs, &f.slices, &instead));
    let pods: Vec<Value> = docs
        .iter()
        .filter(|d| d["kind"] == "Deployment" || d["kind"] == "LeaderWorkerSet")
        .flat_map(|d| crate::kubernetes::pods_of(d, &plan))
        .map(|p| serde_json::to_value(p).unwrap())
        .collect();
    let pods = list(pods);
    // Without the claims, the pods hold the GPUs llmgw's annotation names
    // (the plan's): the turn still places nothing twice.
    let out = import(f.dir.path(), &f.nodes, &[("--resource-slices", &f.slices), ("--pods", &pods)]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let pods_only = write(f.dir.path(), "pods-only.json", &stdout(&out));
    let turn =
        json(&run(&["place", f.catalog.to_str().unwrap(), "-i", pods_only.to_str().unwrap(), "--format", "json"]));
    assert_eq!(
        turn["summary"],
        json!({"wanted": 4, "existing": 4, "placed": 0, "unplaced": 0, "bound": 0, "stranded": {}}),
        "{turn}"
    );
    let out =
        import(f.dir.path(), &f.nodes, &[("--resource-slices", &f.slices), ("--claims", &claims), ("--pods", &pods)]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let again = write(f.dir.path(), "again.json", &stdout(&out));
    let second = json(&run(&["place", f.catalog.to_str().unwrap(), "-i", again.to_str().unwrap(), "--format", "json"]));
    assert_eq!(
        second["summary"],
        json!({"wanted": 4, "existing": 4, "placed": 0, "unplaced": 0, "bound": 0, "stranded": {}}),
        "{second}"
    );
    // chat r0 holds what its claim was given, not what the plan chose.
    let inv = json(&out);
    let holds: Vec<u64> =
        inv["node"].as_array().unwrap().iter().find(|n| n["id"] == node0.as_str()).unwrap()["allocation"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["model"] == "chat" && a["replica"] == 0)
            .flat_map(|a| a["gpus"].as_array().unwrap().iter().map(|g| g.as_u64().unwrap()))
            .collect();
    // In index order (the inventory lists a node's GPUs in bus order).
    let mut given: Vec<u64> = other.iter().map(|o| o.0).collect();
    given.sort_unstable();
    assert_eq!(holds, given);
    assert_ne!(holds, planned);
}

#[test]
fn two_gb200_racks_that_share_a_clique_id_are_two_nvlink_domains() {
    // Driver issue 377: four GB200 nodes, two racks, one CliqueID (17044)
    // under two ClusterUUIDs.
    let dir = tempfile::tempdir().unwrap();
    let racks = [
        ("10.140.53.239", "3183419e-9edc-4f0e-86e8-d895a9fb06be.17044"),
        ("10.140.58.46", "bbc2edac-6ffb-43a0-9053-cae96152c90a.17044"),
        ("10.140.61.191", "3183419e-9edc-4f0e-86e8-d895a9fb06be.17044"),
        ("10.140.63.250", "bbc2edac-6ffb-43a0-9053-cae96152c90a.17044"),
    ];
    let nodes: Vec<Value> = racks
        .iter()
        .map(|(n, c)| {
            let mut v = node(n, &json!({"nvidia.com/gpu.clique": c, "nvidia.com/gpu.product": "NVIDIA-GB200", "nvidia.com/gpu.count": "4", "network.topology.nvidia.com/spine": "ib-1"}));
            v["status"]["capacity"]["nvidia.com/gpu"] = "4".into();
            v["status"]["allocatable"]["nvidia.com/gpu"] = "4".into();
            v
        })
        .collect();
    let n = write(dir.path(), "nodes.json", &list(nodes).to_string());
    let out = run(&[
        "inventory",
        "import",
        "kubernetes",
        n.to_str().unwrap(),
        "--fabric-label",
        "network.topology.nvidia.com/spine",
        "--format",
        "json",
    ]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let inv = json(&out);
    let rack = |i: usize| {
        inv["node"][i]["fabric"].as_array().unwrap().iter().find(|f| f["kind"] == "nvlink").unwrap()["name"].clone()
    };
    assert_eq!(rack(0), "nvl-3183419e-9edc-4f0e-86e8-d895a9fb06be.17044");
    assert_eq!(rack(0), rack(2));
    assert_eq!(rack(1), rack(3));
    assert_ne!(rack(0), rack(1));
    // Every node is also on one InfiniBand spine: a 2-node replica still
    // goes to one rack's NVLink domain.
    let fleet = write(dir.path(), "fleet.json", &stdout(&out));
    let catalog = write(
        dir.path(),
        "c.toml",
        "[[model]]\nname = \"big\"\nreplicas = 2\n[[model.profile]]\nname = \"two-nodes\"\nengine = \"vllm\"\ngpu_class = \"gb200\"\ngpus_per_node = 4\nnodes = 2\n",
    );
    let plan = dir.path().join("plan.json");
    let out = run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let p: Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    let fabrics: BTreeSet<String> =
        p["placements"].as_array().unwrap().iter().map(|x| x["fabric"].as_str().unwrap().to_string()).collect();
    assert_eq!(fabrics, [rack(0), rack(1)].iter().map(|r| r.as_str().unwrap().to_string()).collect());
    // Rendered: a ComputeDomain per replica, its channel claim in every pod,
    // no NCCL_IB_HCA; each ComputeDomain fits the driver's CRD schema.
    let out = render_plan("kubernetes", &plan, &catalog, &fleet, &[]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let text = stdout(&out);
    assert!(!text.contains("NCCL_IB_HCA"), "{text}");
    let docs = documents(&text);
    let crd = llmgw::kubernetes::yaml_to_json(
        &std::fs::read_to_string(root().join(DRA).join("computedomain-crd-61de3f2f.yaml")).unwrap(),
    )
    .unwrap();
    let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    let domains: Vec<&Value> = docs.iter().filter(|d| d["kind"] == "ComputeDomain").collect();
    assert_eq!(domains.len(), 2);
    for cd in &domains {
        assert_eq!(crate::openapi::check(schema, cd), Vec::<String>::new(), "{cd}");
        let channel = cd["spec"]["channel"]["resourceClaimTemplate"]["name"].clone();
        let lws = docs
            .iter()
            .find(|d| d["kind"] == "LeaderWorkerSet" && d["metadata"]["name"] == cd["metadata"]["name"])
            .unwrap();
        for role in ["leaderTemplate", "workerTemplate"] {
            let t = &lws["spec"]["leaderWorkerTemplate"][role]["spec"];
            assert_eq!(t["resourceClaims"], json!([{"name": "imex", "resourceClaimTemplateName": channel}]));
            assert_eq!(t["containers"][0]["resources"]["claims"], json!([{"name": "imex"}]));
        }
    }
    // The checker is not blind: a misspelt field and a wrong type fail.
    let mut bad = domains[0].clone();
    bad["spec"]["numNode"] = 1.into();
    bad["spec"]["channel"]["allocationMode"] = 1.into();
    let problems = crate::openapi::check(schema, &bad).join("\n");
    assert!(problems.contains("$.spec.numNode: not a field"), "{problems}");
    assert!(problems.contains("$.spec.channel.allocationMode: want a string"), "{problems}");
}

#[test]
fn a_fabric_kind_llmgw_does_not_know_is_refused_where_it_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let inv =
        write(dir.path(), "i.toml", "[[node]]\nid = \"n1\"\n[[node.fabric]]\nname = \"rack-1\"\nkind = \"nvl\"\n");
    let out = run(&["nodes", "-i", inv.to_str().unwrap()]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    let err = flat(&out.stderr);
    assert!(
        err.contains("llmgw::inventory::unknown-fabric-kind") && err.contains("unknown fabric kind `nvl`"),
        "{err}"
    );
    assert!(err.contains("i.toml:5"), "points at the line: {err}");
}

#[test]
fn discover_and_the_clique_label_name_a_rack_alike() {
    // What discover finds from NVML's fabric info, and what the import
    // makes of the label GPU Feature Discovery writes from the same info.
    let dir = tempfile::tempdir().unwrap();
    let fabric = r#"{"cluster_uuid": "3183419e-9edc-4f0e-86e8-d895a9fb06be", "clique_id": 17044, "completed": true}"#;
    let facts = write(
        dir.path(),
        "gpus.json",
        &format!(r#"[{{"index": 0, "name": "NVIDIA GB200", "uuid": "GPU-0", "fabric": {fabric}}}]"#),
    );
    let discover = |format: &str| {
        let out = run(&[
            "discover",
            "--root",
            dir.path().to_str().unwrap(),
            "--gpu-facts",
            facts.to_str().unwrap(),
            "--format",
            format,
        ]);
        assert_eq!(code(&out), 0, "{}", transcript(&out));
        out
    };
    let discovered = json(&discover("json"));
    let nfd = stdout(&discover("nfd"));
    assert!(!nfd.contains("llmgw.io/fabric."), "GFD labels the domain, not llmgw's feature file: {nfd}");
    let mut labels: serde_json::Map<String, Value> = nfd
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.into()))
        .collect();
    labels.insert("nvidia.com/gpu.clique".into(), "3183419e-9edc-4f0e-86e8-d895a9fb06be.17044".into());
    // An older feature file's fabric label of the same name changes nothing.
    labels.insert("llmgw.io/fabric.nvl-3183419e-9edc-4f0e-86e8-d895a9fb06be.17044".into(), "0".into());
    let id = discovered["node"][0]["id"].as_str().unwrap();
    let imported = json(&import(dir.path(), &list(vec![node(id, &Value::Object(labels))]), &[]));
    assert_eq!(imported["node"][0]["fabric"], discovered["node"][0]["fabric"]);
    assert_eq!(imported["node"][0]["fabric"][0]["kind"], "nvlink");
}

#[test]
fn a_claim_pasted_in_the_drivers_issues_is_held_on_its_pool() {
    // Issue 426: a claim pinned by UUID, allocated `gpu-0` of pool
    // `cdiadmin` (its slice was not pasted: one GPU of that UUID stands in).
    let dir = tempfile::tempdir().unwrap();
    let claims = real("claim-issue426.list.json");
    let expression =
        claims["items"][0]["spec"]["devices"]["requests"][0]["exactly"]["selectors"][0]["cel"]["expression"]
            .as_str()
            .unwrap()
            .to_string();
    let mut s = slice("cdiadmin", 2, 1, 1);
    s["spec"]["devices"][0]["attributes"]["uuid"]["string"] = "GPU-60191ee1-f437-565c-ab0f-914032019dc5".into();
    let slices = list(vec![s]);
    // The user's own selector, evaluated as the scheduler would: gpu-0 only.
    let program = cel::Program::compile(&expression).unwrap();
    let chosen: Vec<String> = devices(&slices)
        .into_iter()
        .filter(|(_, _, _, d)| {
            let mut ctx = cel::Context::default();
            ctx.add_variable("device", d.clone()).unwrap();
            program.execute(&ctx) == Ok(cel::Value::Bool(true))
        })
        .map(|(_, name, _, _)| name)
        .collect();
    assert_eq!(chosen, ["gpu-0"]);
    let out = import(
        dir.path(),
        &list(vec![node("cdiadmin", &json!({}))]),
        &[("--resource-slices", &slices), ("--claims", &claims)],
    );
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let n = &json(&out)["node"][0];
    let gpu0 = n["gpu"].as_array().unwrap().iter().find(|g| g["dra_device"] == "gpu-0").unwrap()["index"].clone();
    // Pasted without metadata: held under the claim's own (empty) name.
    assert_eq!(n["allocation"], json!([{"model": "claim:/", "replica": 0, "gpus": [gpu0]}]));
}

#[test]
fn a_mig_device_without_its_own_uuid_is_claimed_by_its_gpu_and_profile() {
    // Devices the driver creates on demand carry no uuid until they exist:
    // the claim names the GPU's uuid and the profile instead.
    let f = fleet(4);
    let mut inv: Value = serde_json::from_str(&std::fs::read_to_string(&f.inventory).unwrap()).unwrap();
    for n in inv["node"].as_array_mut().unwrap() {
        for g in n["gpu"].as_array_mut().unwrap() {
            for m in g.get_mut("mig_device").and_then(Value::as_array_mut).into_iter().flatten() {
                m.as_object_mut().unwrap().remove("uuid");
            }
        }
    }
    std::fs::write(&f.inventory, inv.to_string()).unwrap();
    let out = f.render(&["--devices", "dra"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let docs = documents(&stdout(&out));
    let tiny = docs
        .iter()
        .find(|d| d["kind"] == "ResourceClaimTemplate" && d["metadata"]["annotations"]["llmgw.io/model"] == "tiny")
        .unwrap();
    let t: ResourceClaimTemplate = serde_json::from_value(tiny.clone()).unwrap();
    let exactly = t.spec.spec.devices.as_ref().unwrap().requests.as_ref().unwrap()[0].exactly.clone().unwrap();
    assert_eq!(exactly.device_class_name, "mig.nvidia.com");
    let expression = &exactly.selectors.as_ref().unwrap()[0].cel.as_ref().unwrap().expression;
    assert_eq!(
        expression,
        "device.attributes[\"gpu.nvidia.com\"].parentUUID == \"GPU-2fa81118-5a5f-aa66-7660-471eed407181\" && device.attributes[\"gpu.nvidia.com\"].profile == \"1g.5gb\""
    );
    let got = admitted(&t, &devices(&f.slices));
    assert_eq!(got, [("ipp1-0033".to_string(), "gpu-0-mig-1g.5gb-0".to_string())].into());
}

#[test]
fn lint_says_when_nodes_disagree_on_what_a_fabric_is() {
    let dir = tempfile::tempdir().unwrap();
    let inv = write(
        dir.path(),
        "i.toml",
        "[[node]]\nid = \"a\"\nstate = \"ready\"\n[[node.fabric]]\nname = \"rack-1\"\nkind = \"nvlink\"\n\
         [[node]]\nid = \"b\"\nstate = \"ready\"\n[[node.fabric]]\nname = \"rack-1\"\n",
    );
    let out = run(&["lint", inv.to_str().unwrap()]);
    let err = flat(&out.stderr);
    assert!(err.contains("llmgw::inventory::fabric-kinds"), "{err}");
    assert!(err.contains("fabric `rack-1` is infiniband on node `b` but nvlink on node `a`"), "{err}");
}

/// The workloads' pods of a render, as a controller makes them.
fn pods(docs: &[Value], plan: &Value) -> Vec<Value> {
    docs.iter()
        .filter(|d| d["kind"] == "Deployment" || d["kind"] == "LeaderWorkerSet")
        .flat_map(|d| crate::kubernetes::pods_of(d, plan))
        .map(|p| serde_json::to_value(p).unwrap())
        .collect()
}

// The next turn renders a running replica's claim templates unchanged:
// `kubectl diff --server-side` against the real API, tests/it/kube/dra.rs.

#[test]
fn without_claims_dra_pods_hold_what_their_claims_are_pinned_to_waiting_or_not() {
    let f = fleet(4);
    let out = f.render(&["--devices", "dra"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let docs = documents(&stdout(&out));
    let mut pods = pods(&docs, &f.plan());
    // chat r0's pod waits, its claim pinned (by its annotation) to GPUs 2
    // and 3 of its node: it holds those, not the lowest free ones a device
    // plugin would give.
    let chat = pods
        .iter_mut()
        .find(|p| {
            p["metadata"]["annotations"]["llmgw.io/model"] == "chat"
                && p["metadata"]["labels"]["llmgw.io/replica"] == "0"
        })
        .unwrap();
    let node = chat["spec"]["nodeName"].as_str().unwrap().to_string();
    chat["spec"].as_object_mut().unwrap().remove("nodeName");
    chat["status"]["phase"] = "Pending".into();
    chat["metadata"]["annotations"]["llmgw.io/gpus"] = format!("{node}=2,3").into();
    let out = import(f.dir.path(), &f.nodes, &[("--resource-slices", &f.slices), ("--pods", &list(pods))]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let inv = json(&out);
    let held = |n: &str, model: &str| -> Vec<Value> {
        inv["node"].as_array().unwrap().iter().find(|x| x["id"] == n).unwrap()["allocation"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["model"] == model)
            .cloned()
            .collect()
    };
    let chat0 = held(&node, "chat");
    assert_eq!(chat0.len(), 1, "{chat0:?}");
    assert_eq!((&chat0[0]["gpus"], &chat0[0]["pending"]), (&json!([2, 3]), &json!(true)));
    // The MIG replica holds the device its annotation names, so a second
    // replica is not planned onto it.
    let tiny = held("ipp1-0033", "tiny");
    assert_eq!((&tiny[0]["gpus"], &tiny[0]["mig_devices"]), (&json!([0]), &json!([0])), "{tiny:?}");
}

#[test]
fn a_running_mig_replica_whose_device_is_unknown_is_refused_not_a_panic() {
    let f = fleet(4);
    // tiny r0 runs on ipp1-0033, but the import could not say which device.
    let mut inv: Value = serde_json::from_str(&std::fs::read_to_string(&f.inventory).unwrap()).unwrap();
    let n = inv["node"].as_array_mut().unwrap().iter_mut().find(|n| n["id"] == "ipp1-0033").unwrap();
    n["allocation"] = json!([{"model": "tiny", "replica": 0, "gpus": [], "profile": "mig"}]);
    std::fs::write(&f.inventory, inv.to_string()).unwrap();
    let next = f.dir.path().join("next.json");
    let out =
        run(&["place", f.catalog.to_str().unwrap(), "-i", f.inventory.to_str().unwrap(), "-o", next.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let out = render_plan("kubernetes", &next, &f.catalog, &f.inventory, &["--devices", "dra"]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    let err = flat(&out.stderr);
    assert!(
        err.contains("tiny r0: which GPUs it holds on ipp1-0033 is not known, so a DRA claim cannot pin them"),
        "{err}"
    );
}

#[test]
fn stop_deletes_a_moving_replicas_claim_templates_with_its_workload() {
    let dir = tempfile::tempdir().unwrap();
    let old = write(
        dir.path(),
        "old.json",
        r#"{"placements": [
        {"model": "chat", "replica": 0, "profile": "tp2", "engine": "vllm", "fabric": null, "nodes": [{"node": "n1", "rank": 0, "gpus": [0, 1], "hcas": []}]},
        {"model": "big", "replica": 0, "profile": "two-nodes", "engine": "vllm", "fabric": "nvl-a", "nodes": [{"node": "n2", "rank": 0, "gpus": [0, 1, 2, 3], "hcas": []}, {"node": "n3", "rank": 1, "gpus": [0, 1, 2, 3], "hcas": []}]}],
        "existing": [], "unplaced": []}"#,
    );
    let new = write(dir.path(), "new.json", r#"{"placements": [], "existing": [], "unplaced": []}"#);
    let out = run(&[
        "render",
        "kubernetes",
        "--stop",
        old.to_str().unwrap(),
        new.to_str().unwrap(),
        "--devices",
        "dra",
        "-n",
        "serving",
    ]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert_eq!(
        stdout(&out),
        "kubectl delete deployment/llmgw-chat-r0 -n serving\n\
         kubectl delete resourceclaimtemplate/llmgw-chat-r0-gpus -n serving --ignore-not-found\n\
         kubectl delete leaderworkerset/llmgw-big-r0 -n serving\n\
         kubectl delete resourceclaimtemplate/llmgw-big-r0-leader-gpus -n serving --ignore-not-found\n\
         kubectl delete resourceclaimtemplate/llmgw-big-r0-worker-gpus -n serving --ignore-not-found\n\
         kubectl delete service/llmgw-chat -n serving\n\
         kubectl delete service/llmgw-big -n serving\n"
    );
    // The device plugin's way: the workloads only, as before.
    let out = run(&["render", "kubernetes", "--stop", old.to_str().unwrap(), new.to_str().unwrap(), "-n", "serving"]);
    assert!(!stdout(&out).contains("resourceclaimtemplate"), "{}", stdout(&out));
}

#[test]
fn two_nvlink_replicas_on_one_node_are_warned_of() {
    // NVIDIA's driver puts a node in one ComputeDomain at a time.
    let dir = tempfile::tempdir().unwrap();
    let fleet = example_fleet(dir.path());
    let catalog = write(
        dir.path(),
        "c.toml",
        "[[model]]\nname = \"a\"\n[[model.profile]]\nname = \"half\"\nengine = \"vllm\"\ngpu_class = \"gb200\"\ngpus_per_node = 2\nnodes = 2\n\
         [[model]]\nname = \"b\"\n[[model.profile]]\nname = \"half\"\nengine = \"vllm\"\ngpu_class = \"gb200\"\ngpus_per_node = 2\nnodes = 2\n",
    );
    let plan = placed_plan(dir.path(), &catalog, &fleet);
    let out = render_plan("kubernetes", &plan, &catalog, &fleet, &[]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let err = flat(&out.stderr);
    assert!(err.contains("llmgw::render::shared-compute-domain") && err.contains("(a r0, b r0)"), "{err}");
    // Each ComputeDomain counts its replica's nodes.
    let domains: Vec<Value> = documents(&stdout(&out)).into_iter().filter(|d| d["kind"] == "ComputeDomain").collect();
    // 0, as the CRD recommends (its numNodes is deprecated; a count only
    // gates the domain's status).
    assert!(domains.iter().all(|d| d["spec"]["numNodes"] == 0), "{domains:?}");
}

#[test]
fn a_device_named_twice_in_a_pool_counts_once_and_places_for_devices_do_not_count() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = slice("n1", 2, 1, 2);
    let b = slice("n1", 2, 1, 2);
    // A DynamicMIG place: no uuid, consumes its GPU's counters.
    let mut place = b["spec"]["devices"][0].clone();
    place["name"] = "gpu-0-mig-1g24gb-0".into();
    place["attributes"] =
        json!({"type": {"string": "mig"}, "parentUUID": {"string": uuid("n1", 0)}, "profile": {"string": "1g.24gb"}});
    place["consumesCounters"] = json!([{"counterSet": "gpu-0-counters", "counters": {"memory": {"value": "24Gi"}}}]);
    a["spec"]["devices"].as_array_mut().unwrap().push(place);
    let out = import(dir.path(), &list(vec![node("n1", &json!({}))]), &[("--resource-slices", &list(vec![a, b]))]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let gpus = json(&out)["node"][0]["gpu"].clone();
    assert_eq!(gpus.as_array().unwrap().len(), 2, "{gpus}");
    assert!(gpus.as_array().unwrap().iter().all(|g| g.get("mig_device").is_none() && g.get("mig").is_none()), "{gpus}");
}

#[test]
fn every_kind_render_writes_carries_the_label_the_loops_prune_selects() {
    // `kubectl apply --prune -l app.kubernetes.io/managed-by=llmgw`: an
    // object without the label would never be pruned.
    let dir = tempfile::tempdir().unwrap();
    let fleet = example_fleet(dir.path());
    let plan = placed_plan(dir.path(), &root().join(EXAMPLE).join("catalog.toml"), &fleet);
    let out = render_plan(
        "kubernetes",
        &plan,
        &root().join(EXAMPLE).join("catalog.toml"),
        &fleet,
        &[
            "--devices",
            "dra",
            "--gateway",
            "inference-pool",
            "--epp",
            "epp",
            "--gateway-parent",
            "gw/inference-gateway",
        ],
    );
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let docs = documents(&stdout(&out));
    let kinds: BTreeSet<String> = docs.iter().map(|d| d["kind"].as_str().unwrap().to_string()).collect();
    let want: BTreeSet<String> = [
        "ComputeDomain",
        "Deployment",
        "HTTPRoute",
        "InferencePool",
        "LeaderWorkerSet",
        "ResourceClaimTemplate",
        "Service",
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    assert_eq!(kinds, want);
    for d in &docs {
        assert_eq!(d["metadata"]["labels"]["app.kubernetes.io/managed-by"], "llmgw", "{}", d["metadata"]["name"]);
    }
}
