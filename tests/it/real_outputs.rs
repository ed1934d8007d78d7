//! Every real output under tests/data/real (public sources, see
//! PROVENANCE.md) imported, and the facts an operator reads off each
//! original (facts.json) asserted on what the import gives. Each check
//! collects its failures by file, so a failing file names itself.

use std::collections::{BTreeMap, BTreeSet};

use llmgw::diag::{Diag, source};
use llmgw::inventory::{Inventory, Node, normalize_class};
use serde_json::{Value, json};

use crate::common::root;

pub(crate) fn real(path: &str) -> String {
    std::fs::read_to_string(root().join("tests/data/real").join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub(crate) fn facts() -> BTreeMap<String, Value> {
    serde_json::from_str(&real("facts.json")).unwrap()
}

/// Failures, by file.
#[derive(Default)]
pub(crate) struct Check(Vec<String>);

impl Check {
    pub(crate) fn eq<T: PartialEq + std::fmt::Debug>(&mut self, file: &str, what: &str, got: T, want: T) {
        if got != want {
            self.0.push(format!("{file}: {what}: got {got:?}, want {want:?}"));
        }
    }
    pub(crate) fn fail(&mut self, file: &str, why: String) {
        self.0.push(format!("{file}: {why}"));
    }
    pub(crate) fn done(self) {
        assert!(self.0.is_empty(), "{} failure(s):\n{}", self.0.len(), self.0.join("\n"));
    }
}

/// What an import wrote loads with llmgw's own loader.
pub(crate) fn loads(c: &mut Check, file: &str, inv: &Inventory) {
    let text = llmgw::output::render_inventory(inv, llmgw::doc::Format::Toml).unwrap();
    if let Err(d) = llmgw::load::inventory_file(&source("x.toml", text)) {
        c.fail(file, format!("the import does not load: {}", llmgw::report::diagnostics::render(&d, false)));
    }
}

fn render(d: &[Diag]) -> String {
    llmgw::report::diagnostics::render(d, false)
}

pub(crate) fn kube(file: &str, text: String) -> Result<(Inventory, Vec<Diag>), Vec<Diag>> {
    llmgw::kubernetes::import(&source(file, text), None, &llmgw::kubernetes::Settings::default())
}

fn devices_by_profile(n: &Node) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for d in n.gpus.iter().flat_map(|g| &g.mig_devices) {
        *out.entry(d.profile.clone()).or_default() += 1;
    }
    out
}

#[test]
fn every_real_output_has_its_facts() {
    let facts = facts();
    let mut c = Check::default();
    for kind in ["kubernetes", "slurm"] {
        for e in std::fs::read_dir(root().join("tests/data/real").join(kind)).unwrap() {
            let e = e.unwrap();
            // A folder (kubernetes/dra) has its own provenance and tests.
            if e.file_type().unwrap().is_dir() {
                continue;
            }
            let name = format!("{kind}/{}", e.file_name().to_string_lossy());
            if !facts.contains_key(&name) {
                c.fail(&name, "no entry in facts.json".into());
            }
        }
    }
    c.done();
}

/// The GFD outputs: label maps as `jq` printed them and the `Capacity:`
/// of `kubectl describe node`, put into the Node object they came from.
#[test]
fn gpu_feature_discovery_outputs_import_with_their_facts() {
    let facts = facts();
    let mut c = Check::default();
    let mut paired = BTreeSet::new();
    let mut cases: Vec<(String, Option<String>)> = Vec::new();
    for (key, f) in &facts {
        let Some(file) = key.strip_prefix("kubernetes/") else { continue };
        if file.ends_with("labels.json") {
            let pair = f["pair"].as_str().map(str::to_string).or_else(|| {
                let stem = file.split(".labels.json").next().unwrap().split(".partial-labels").next().unwrap();
                let cap = format!("{stem}.capacity.json");
                facts.contains_key(&format!("kubernetes/{cap}")).then_some(cap)
            });
            if let Some(p) = &pair {
                paired.insert(p.clone());
            }
            cases.push((file.to_string(), pair));
        }
    }
    for (key, _) in facts.iter().filter(|(k, _)| k.starts_with("kubernetes/") && k.ends_with(".capacity.json")) {
        let file = key.trim_start_matches("kubernetes/");
        if !paired.contains(file) {
            cases.push((String::new(), Some(file.to_string())));
        }
    }
    for (labels_file, cap_file) in cases {
        gfd_case(&mut c, &facts, &labels_file, cap_file.as_deref());
    }
    c.done();
}

/// One GFD case: a labels file and its capacity file (either may be
/// missing), as a Node, imported and held to the facts of both.
fn gfd_case(c: &mut Check, facts: &BTreeMap<String, Value>, labels_file: &str, cap_file: Option<&str>) {
    let name = if labels_file.is_empty() { cap_file.unwrap().to_string() } else { labels_file.to_string() };
    let labels: Value = if labels_file.is_empty() {
        json!({})
    } else {
        serde_json::from_str(&real(&format!("kubernetes/{labels_file}"))).unwrap()
    };
    let capacity: Value =
        cap_file.map_or(json!({}), |f| serde_json::from_str(&real(&format!("kubernetes/{f}"))).unwrap());
    let id = labels["kubernetes.io/hostname"].as_str().unwrap_or("node").to_string();
    let node = json!({"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": id, "labels": labels},
        "status": {"capacity": capacity, "allocatable": capacity, "conditions": [{"type": "Ready", "status": "True"}]}}]});
    let (inv, warnings) = match kube(&name, node.to_string()) {
        Ok(x) => x,
        Err(d) => {
            c.fail(&name, format!("refused: {}", render(&d)));
            return;
        }
    };
    loads(c, &name, &inv);
    let n = &inv.nodes[0];
    // The facts of the labels file and of its capacity file, together.
    let mut want = serde_json::Map::new();
    for f in [labels_file, cap_file.unwrap_or_default()] {
        if let Some(o) = facts.get(&format!("kubernetes/{f}")).and_then(|x| x["nodes"].as_object()) {
            for node_facts in o.values() {
                want.extend(node_facts.as_object().unwrap().clone());
            }
        }
    }
    // Capacity alone, without GFD's product label, cannot say that the
    // GPUs it counts are MIG devices: the import says it may be so.
    if labels_file.is_empty() && want.contains_key("mig") && labels.get("nvidia.com/gpu.product").is_none() {
        let said = render(&warnings);
        if devices_by_profile(n).is_empty() {
            c.eq(&name, "warned that the GPUs may be MIG devices", said.contains("may be MIG devices"), true);
            return;
        }
    }
    let count = want.get("physical_gpus").or_else(|| want.get("gpus")).and_then(Value::as_u64);
    if let Some(g) = count {
        c.eq(&name, "GPUs", n.gpus.len() as u64, g);
    }
    // A label value, not a note the facts write where none was printed.
    if let Some(t) = want.get("gpu_type").and_then(Value::as_str).filter(|t| !t.contains(' ')) {
        let base = t.split("-MIG-").next().unwrap().trim_end_matches("-SHARED");
        for g in &n.gpus {
            c.eq(&name, "GPU class", g.class.clone(), normalize_class(base));
        }
    }
    let single = want.get("mig_strategy").and_then(Value::as_str) == Some("single");
    if let Some(mb) = want.get("gpu_memory_mib").and_then(Value::as_u64) {
        for g in &n.gpus {
            let have = if single && g.in_mig_mode() { g.mig_devices[0].memory_mb } else { g.memory_mb };
            c.eq(&name, "GPU memory", have, mb);
        }
    }
    // MIG devices: what the node advertises when it advertises them.
    let mig = want.get("mig_per_capacity").or_else(|| want.get("mig"));
    if let Some(m) = mig.and_then(Value::as_object) {
        let want_mig: BTreeMap<String, u64> = m.iter().map(|(p, n)| (p.clone(), n.as_u64().unwrap())).collect();
        c.eq(&name, "MIG devices", devices_by_profile(n), want_mig);
    }
    if let Some(m) = want.get("mig_memory_mib").and_then(Value::as_object) {
        for d in n.gpus.iter().flat_map(|g| &g.mig_devices) {
            // A profile the labels name otherwise (3g.21gb for the
            // resource 3g.20gb) keeps the memory of the label with its slices.
            let slices = |p: &str| p.split('g').next().unwrap().to_string();
            let mb = m.get(&d.profile).or_else(|| m.iter().find(|(p, _)| slices(p) == slices(&d.profile)).map(|x| x.1));
            if let Some(mb) = mb.and_then(Value::as_u64) {
                c.eq(&name, &format!("memory of a {} device", d.profile), d.memory_mb, mb);
            }
        }
    }
    if let Some(0) = want.get("whole_gpus_free").and_then(Value::as_u64) {
        c.eq(&name, "whole GPUs", n.gpus.iter().filter(|g| !g.in_mig_mode()).count(), 0);
    }
    // The AMD node labeller: GPUs counted by its per-value labels (no
    // capacity was printed), named by the device id where no product name
    // is labelled, VRAM in whole GiB.
    if let Some(amd) = want.get("amd_gpus").and_then(Value::as_u64) {
        let of_amd: Vec<_> = n.gpus.iter().filter(|g| g.vendor == llmgw::vendor::Vendor::Amd).collect();
        c.eq(&name, "AMD GPUs", of_amd.len() as u64, amd);
        if let Some(label) = want.get("gpus_with_property").and_then(Value::as_u64) {
            c.eq(&name, "AMD GPUs as the labels count them", of_amd.len() as u64, label);
        }
        for g in &of_amd {
            c.eq(&name, "AMD GPU name", Some(g.name.as_str()), want["amd_gpu_name"].as_str());
            c.eq(&name, "AMD GPU memory", Some(g.memory_mb), want.get("amd_gpu_memory_mib").and_then(Value::as_u64));
        }
    }
    if let Some(cpus) = want.get("cpus").and_then(Value::as_u64) {
        c.eq(&name, "cpus", n.cpus, Some(cpus as f64));
    }
    if let Some(kib) = want.get("memory_kib").and_then(Value::as_u64) {
        c.eq(&name, "memory", n.memory_total_mb, kib / 1024);
    }
    // Printed in bytes (15 GiB), not MiB: read as what it is.
    if let Some(bytes) = want.get("gpu_memory_label").and_then(Value::as_str).and_then(|b| b.parse::<u64>().ok()) {
        for g in &n.gpus {
            c.eq(&name, "GPU memory from a label in bytes", g.memory_mb, bytes >> 20);
        }
    }
    if let Some(rev) = want.get("cuda_driver_rev").and_then(Value::as_str) {
        c.eq(&name, "label cuda.driver.rev", n.labels.get("nvidia.com/cuda.driver.rev").map(String::as_str), Some(rev));
    }
}

#[test]
fn a_gke_node_list_in_yaml_and_a_crd_that_is_no_node_list() {
    let facts = facts();
    let mut c = Check::default();
    let file = "gke-node-k80-no-gfd-kubernetes-issue-55005.partial.yaml";
    match kube(file, real(&format!("kubernetes/{file}"))) {
        Err(d) => c.fail(file, format!("refused: {}", render(&d))),
        Ok((inv, _)) => {
            loads(&mut c, file, &inv);
            for (id, f) in facts[&format!("kubernetes/{file}")]["nodes"].as_object().unwrap() {
                let Some(n) = inv.nodes.iter().find(|n| n.id == *id) else {
                    c.fail(file, format!("no node {id}"));
                    continue;
                };
                c.eq(
                    file,
                    "nodepool",
                    n.labels.get("cloud.google.com/gke-nodepool").cloned(),
                    f["nodepool"].as_str().map(str::to_string),
                );
                c.eq(
                    file,
                    "accelerator",
                    n.labels.get("cloud.google.com/gke-accelerator").cloned(),
                    f["gke_accelerator"].as_str().map(str::to_string),
                );
                // Its status (capacity) was trimmed from the original: no GPU count.
                c.eq(file, "GPUs", n.gpus.len(), 0);
            }
        }
    }
    let crd = "lws-crd-v0.7.0.yaml";
    match kube(crd, real(&format!("kubernetes/{crd}"))) {
        Ok(_) => c.fail(crd, "a CustomResourceDefinition imported as nodes".into()),
        Err(d) => c.eq(crd, "refused as", d[0].message.contains("is not a Node list"), true),
    }
    c.done();
}

/// A Slurm state as a facts entry writes it, in llmgw's terms (SPEC 8).
fn llmgw_state(f: &Value) -> &'static str {
    let mut words: Vec<String> = match &f["state"] {
        Value::String(s) => s.split('+').map(str::to_ascii_uppercase).collect(),
        Value::Array(a) => a.iter().map(|w| w.as_str().unwrap().to_ascii_uppercase()).collect(),
        _ => Vec::new(),
    };
    words.extend(f["state_flags"].as_array().into_iter().flatten().map(|w| w.as_str().unwrap().to_ascii_uppercase()));
    let has = |s: &[&str]| words.iter().any(|w| s.contains(&w.as_str()));
    if has(&["DOWN", "NOT_RESPONDING", "FAIL", "UNKNOWN", "POWERED_DOWN", "POWERING_DOWN", "REBOOT_ISSUED"]) {
        "down"
    } else if has(&["DRAIN", "DRAINED", "DRAINING", "POWER_DOWN"]) {
        "draining"
    } else if has(&["RESERVED", "MAINT", "MAINTENANCE"]) {
        "cordoned"
    } else {
        "ready"
    }
}

fn slurm(
    file: &str,
    text: String,
    topology: Option<(&str, String)>,
    jobs: Option<(&str, String)>,
) -> Result<(Inventory, Vec<Diag>), Vec<Diag>> {
    let topo = topology.map(|(n, t)| source(n, t));
    let jobs = jobs.map(|(n, t)| source(n, t));
    let settings = llmgw::slurm::Settings { jobs_user: "root".into(), ..llmgw::slurm::Settings::default() };
    llmgw::slurm::import(&source(file, text), topo.as_ref(), jobs.as_ref(), &settings)
}

fn model_gpus(n: &Node, model: &str) -> Vec<u32> {
    n.allocations.iter().filter(|a| a.model == model).flat_map(|a| a.gpus.clone()).collect()
}

#[test]
fn slurm_node_outputs_import_with_their_facts() {
    let facts = facts();
    let mut c = Check::default();
    for (key, f) in &facts {
        let Some(file) = key.strip_prefix("slurm/") else { continue };
        let Some(nodes) = f["nodes"].as_object() else { continue };
        if file.starts_with("topology") || file.starts_with("slurmd-G") {
            continue;
        }
        let (inv, warnings) = match slurm(file, real(key), None, None) {
            Ok(x) => x,
            Err(d) => {
                c.fail(file, format!("refused: {}", render(&d)));
                continue;
            }
        };
        loads(&mut c, file, &inv);
        c.eq(file, "nodes", inv.nodes.len(), nodes.len());
        for (id, want) in nodes {
            let Some(n) = inv.nodes.iter().find(|n| n.id == *id) else {
                c.fail(file, format!("no node {id}"));
                continue;
            };
            let at = format!("{file} {id}");
            c.eq(&at, "state", n.state.as_str(), llmgw_state(want));
            if let Some(mb) = want["memory_mb"].as_u64() {
                c.eq(&at, "memory", n.memory_total_mb, mb);
            }
            // What jobs may use: CPUEfctv where Slurm prints it, else CPUTot.
            if let Some(cpus) = want["cpus_effective"].as_u64().or(want["cpus"].as_u64()) {
                c.eq(&at, "cpus", n.cpus, Some(cpus as f64));
            }
            let whole = n.gpus.iter().filter(|g| !g.in_mig_mode()).count() as u64;
            if let Some(g) = want["gpus"].as_u64() {
                c.eq(&at, "GPUs", whole, g);
            }
            if let Some(t) = want["gpu_type"].as_str() {
                c.eq(&at, "gres type", n.labels.get("slurm/gres-type").map(String::as_str), Some(t));
            }
            for feature in want["features"].as_array().into_iter().flatten() {
                c.eq(&at, "feature", n.labels.get(feature.as_str().unwrap()).map(String::as_str), Some("true"));
            }
            for p in want["partitions"].as_array().into_iter().flatten() {
                let label = format!("slurm/partition.{}", p.as_str().unwrap());
                c.eq(&at, "partition", n.labels.get(&label).map(String::as_str), Some("true"));
            }
            // MemSpecLimit is the system's.
            if let Some(spec) = want["mem_spec_limit_mb"].as_u64() {
                let total = want["memory_mb"].as_u64().unwrap();
                c.eq(&at, "allocatable memory", n.memory_allocatable_mb, Some(total - spec));
            }
            let busy = model_gpus(n, "slurm:busy");
            if let Some(used) = want["gpus_in_use"].as_array() {
                let want_used: Vec<u32> = used.iter().map(|g| g.as_u64().unwrap() as u32).collect();
                c.eq(&at, "GPUs in use", busy.clone(), want_used);
            } else if let Some(k) = want["gpus_in_use_count"].as_u64() {
                c.eq(&at, "GPUs in use", busy.len() as u64, k);
            } else if let Some(k) = want["gpus_allocated_per_alloctres"].as_u64() {
                // Without -d only AllocTRES says how many: the lowest ones.
                c.eq(&at, "GPUs in use (AllocTRES)", busy.clone(), (0..k as u32).collect::<Vec<_>>());
            }
            // What the node says is allocated is held, CPUs and memory.
            let held = n.allocations.iter().filter(|a| a.model == "slurm:busy");
            let (cpus, mem) =
                held.fold((0.0, 0), |(c, m), a| (c + a.cpus.unwrap_or(0.0), m + a.memory_mb.unwrap_or(0)));
            if let Some(a) = want["alloc_cpus"].as_u64() {
                c.eq(&at, "CPUs allocated", cpus, a as f64);
            }
            if let Some(a) = want["alloc_mem_mb"].as_u64() {
                c.eq(&at, "memory allocated", mem, a);
            }
            // Every CPU allocated: the GPUs left can start nothing.
            let usable = want["cpus_effective"].as_u64().or(want["cpus"].as_u64());
            let full = matches!((usable, want["alloc_cpus"].as_u64()), (Some(t), Some(a)) if t > 0 && a >= t);
            let held: usize = n.allocations.iter().map(|a| a.gpus.len()).sum();
            if full {
                c.eq(&at, "GPUs held on a CPU-full node", held as u64, whole);
            } else {
                c.eq(&at, "slurm:cpus-full", model_gpus(n, "slurm:cpus-full"), Vec::new());
            }
        }
        let _ = warnings;
    }
    c.done();
}

/// A node list for the nodes a job file names, each with 16 untyped GPUs
/// and 256 CPUs, so every index a job names is a GPU of its node.
fn nodes_for(names: &BTreeSet<String>) -> String {
    names.iter().map(|n| format!("NodeName={n} State=MIXED Gres=gpu:16 CPUTot=256 CPUAlloc=1\n")).collect()
}

fn job_nodes(f: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for j in f["jobs"].as_object().unwrap().values() {
        match &j["nodes"] {
            Value::String(s) if !s.is_empty() => out.extend(llmgw::slurm::hostlist::expand(s).unwrap()),
            Value::Array(a) => out.extend(a.iter().map(|n| n.as_str().unwrap().to_string())),
            _ => {}
        }
        out.extend(j["gpus_per_node"].as_object().into_iter().flatten().map(|(k, _)| k.clone()));
    }
    out
}

/// The job file with one job's comment made llmgw's: JSON's `comment`,
/// or a `Comment=` field after the text record's `JobId=`.
/// The listing with job `id` made one of llmgw's: its comment set where
/// Slurm prints it (after `WorkDir=`, before the output paths and
/// `Power=`), submitted by root (whose jobs `slurm()` trusts).
fn as_llmgw(text: &str, json_file: bool, id: &str, comment: &str) -> String {
    if json_file {
        let mut v: Value = serde_json::from_str(text).unwrap();
        for j in v["jobs"].as_array_mut().unwrap() {
            if j["job_id"].as_u64().map(|n| n.to_string()).as_deref() == Some(id) {
                j["comment"] = comment.into();
                j["user_name"] = "root".into();
                j["user_id"] = 0.into();
            }
        }
        v.to_string()
    } else {
        let key = format!("JobId={id}");
        let start = text
            .match_indices(&key)
            .map(|(at, _)| at)
            .find(|&at| text[at + key.len()..].starts_with(char::is_whitespace))
            .unwrap();
        let end = text[start..].find("\nJobId=").map_or(text.len(), |e| start + e + 1);
        let mut record = text[start..end].to_string();
        let user = record.find("UserId=").unwrap();
        let user_end = user + record[user..].find(')').unwrap() + 1;
        record.replace_range(user..user_end, "UserId=root(0)");
        let at = ["Extra=", "StdErr=", "StdIn=", "StdOut=", "Power="]
            .iter()
            .filter_map(|k| record.find(k))
            .min()
            .unwrap_or(record.trim_end().len());
        let indent: String = record[..at].chars().rev().take_while(|c| *c == ' ').collect();
        let sep = if record[..at].trim_end_matches(' ').ends_with('\n') { format!("\n{indent}") } else { " ".into() };
        record.insert_str(at, &format!("Comment={comment}{sep}"));
        format!("{}{record}{}", &text[..start], &text[end..])
    }
}

#[test]
fn slurm_job_outputs_import_with_their_facts() {
    let facts = facts();
    let mut c = Check::default();
    let files: Vec<(String, Value)> = facts
        .iter()
        .filter(|(k, f)| k.starts_with("slurm/") && f.get("jobs").is_some())
        .map(|(k, f)| (k.clone(), f.clone()))
        .collect();
    for (key, f) in files {
        let file = key.trim_start_matches("slurm/").to_string();
        let text = real(&key);
        let names = job_nodes(&f);
        let nodes =
            if names.is_empty() { "NodeName=n1 State=IDLE Gres=gpu:16\n".to_string() } else { nodes_for(&names) };
        let json_file = file.ends_with(".json");
        // As printed: foreign jobs' GPUs are busy on their nodes.
        match slurm("nodes.txt", nodes.clone(), None, Some((&file, text.clone()))) {
            Err(d) => c.fail(&file, format!("refused: {}", render(&d))),
            Ok((inv, _)) => {
                loads(&mut c, &file, &inv);
                let mut want: BTreeMap<String, BTreeSet<u32>> = BTreeMap::new();
                for j in f["jobs"].as_object().unwrap().values() {
                    let running = j["state"].to_string().contains("RUNNING");
                    for (node, g) in j["gpus_per_node"].as_object().into_iter().flatten() {
                        if running {
                            want.entry(node.clone()).or_default().extend(
                                g["gpu_indices"].as_array().into_iter().flatten().map(|x| x.as_u64().unwrap() as u32),
                            );
                        }
                    }
                }
                for n in &inv.nodes {
                    let got: BTreeSet<u32> = model_gpus(n, "slurm:busy").into_iter().collect();
                    c.eq(&format!("{file} {}", n.id), "GPUs busy", got, want.remove(&n.id).unwrap_or_default());
                }
            }
        }
        // The same jobs, each running one with GPUs taken as llmgw's: it
        // becomes the replica's allocation with exactly Slurm's indices.
        for (id, j) in f["jobs"].as_object().unwrap() {
            if !j["state"].to_string().contains("RUNNING") {
                continue;
            }
            let comment = "llmgw.io/model=real,llmgw.io/replica=3,llmgw.io/profile=p";
            let edited = as_llmgw(&text, json_file, id, comment);
            let at = format!("{file} job {id}");
            match slurm("nodes.txt", nodes.clone(), None, Some((&file, edited))) {
                Err(d) => c.fail(&at, format!("refused: {}", render(&d))),
                Ok((inv, _)) => {
                    for n in &inv.nodes {
                        let want: Vec<u32> = j["gpus_per_node"][&n.id]["gpu_indices"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|x| x.as_u64().unwrap() as u32)
                            .collect();
                        let on_node = j["nodes"].as_array().is_some_and(|a| a.iter().any(|x| x == &json!(n.id)))
                            || j["nodes"]
                                .as_str()
                                .is_some_and(|s| llmgw::slurm::hostlist::expand(s).unwrap().contains(&n.id));
                        if on_node {
                            c.eq(&format!("{at} {}", n.id), "replica's GPUs", model_gpus(n, "real"), want);
                            if let Some(ids) = j["cpu_ids"][&n.id].as_str() {
                                let cpus: f64 = ids
                                    .split(',')
                                    .map(|r| {
                                        let (a, b) = r.split_once('-').unwrap_or((r, r));
                                        (b.parse::<f64>().unwrap() - a.parse::<f64>().unwrap()) + 1.0
                                    })
                                    .sum();
                                let got = n.allocations.iter().find(|a| a.model == "real").and_then(|a| a.cpus);
                                c.eq(&format!("{at} {}", n.id), "replica's CPUs", got, Some(cpus));
                            }
                        }
                    }
                }
            }
        }
    }
    c.done();
}

/// The recordings of the test controller (tests/data/slurm/README.md):
/// job 4 is llmgw's r0 on gpu01 with GPUs 0-1, job 5 a foreign job on GPU
/// 2, job 6 llmgw's r1 pending; the three job listings agree.
#[test]
fn recorded_jobs_of_the_test_controller_give_llmgws_replicas() {
    let mut c = Check::default();
    for file in ["squeue-22.05.json", "scontrol-jobs-22.05.txt", "scontrol-jobs-plain-22.05.txt"] {
        let text = std::fs::read_to_string(root().join("tests/data/slurm").join(file)).unwrap();
        let file = file.to_string();
        // 22.05: job 4 llmgw's r0 on gpu01 GPUs 0-1; job 5 foreign, GPU 2;
        // job 6 r1 pending for 8 GPUs there: it holds the 5 still free, so
        // the node's CPUs being all allocated leaves none to hold as cpus-full.
        let nodes = std::fs::read_to_string(root().join("tests/data/slurm/scontrol-jobs-nodes-22.05.txt")).unwrap();
        match slurm("nodes.txt", nodes, None, Some((&file, text))) {
            Err(d) => c.fail(&file, format!("refused: {}", render(&d))),
            Ok((inv, _)) => {
                loads(&mut c, &file, &inv);
                let n = &inv.nodes[0];
                let m: Vec<(u32, Vec<u32>, bool, Option<String>)> = n
                    .allocations
                    .iter()
                    .filter(|a| a.model == "m")
                    .map(|a| (a.replica, a.gpus.clone(), a.pending, a.profile.clone()))
                    .collect();
                c.eq(
                    &file,
                    "llmgw replicas",
                    m,
                    vec![(0, vec![0, 1], false, Some("p".into())), (1, vec![3, 4, 5, 6, 7], true, Some("p".into()))],
                );
                let jobs: Vec<Option<u64>> = n.allocations.iter().filter(|a| a.model == "m").map(|a| a.job).collect();
                c.eq(&file, "job ids", jobs, vec![Some(4), Some(6)]);
                let pending = n.allocations.iter().find(|a| a.pending).map(|a| (a.cpus, a.memory_mb));
                c.eq(&file, "pending request", pending, Some((Some(1.0), Some(100))));
                c.eq(&file, "busy", model_gpus(n, "slurm:busy"), vec![2]);
                c.eq(&file, "cpus-full", model_gpus(n, "slurm:cpus-full"), vec![]);
            }
        }
    }
    c.done();
}

#[test]
fn real_topologies_import_with_their_facts() {
    let facts = facts();
    let mut c = Check::default();
    for (key, f) in facts.iter().filter(|(_, f)| f["kind"] == "topology.conf" || f["kind"] == "topology.yaml") {
        let file = key.trim_start_matches("slurm/");
        // The tree to expect: the cluster's default topology for YAML.
        let tree = if f["kind"] == "topology.yaml" {
            let t = f["topologies"].as_object().unwrap().values().find(|t| t["cluster_default"] == true).unwrap();
            t["tree"].clone()
        } else {
            f["switches"].clone()
        };
        let mut fabrics: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (top, nodes) in tree["top_level"].as_object().unwrap() {
            for n in nodes.as_array().unwrap() {
                fabrics.entry(n.as_str().unwrap().to_string()).or_default().insert(top.clone());
            }
        }
        // The cluster's nodes: the topology's, less the names that are not
        // node names of the cluster, plus nodes under no switch.
        let stray: BTreeSet<String> = f["names_not_in_circe_naming"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|n| n.as_str().unwrap().to_string())
            .collect();
        let mut names: BTreeSet<String> = fabrics.keys().filter(|n| !stray.contains(*n)).cloned().collect();
        names.extend(
            f["node_missing_from_all_switches"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|n| n.as_str().unwrap().to_string()),
        );
        let nodes: String = names.iter().map(|n| format!("NodeName={n} State=IDLE\n")).collect();
        let (inv, warnings) = match slurm("nodes.txt", nodes, Some((file, real(key))), None) {
            Ok(x) => x,
            Err(d) => {
                c.fail(file, format!("refused: {}", render(&d)));
                continue;
            }
        };
        loads(&mut c, file, &inv);
        for n in &inv.nodes {
            let got: BTreeSet<String> = n.fabrics.iter().map(|f| f.name.clone()).collect();
            c.eq(&format!("{file} {}", n.id), "fabrics", got, fabrics.get(&n.id).cloned().unwrap_or_default());
        }
        let shown = render(&warnings);
        for (n, leaves) in f["nodes_under_two_leaf_switches"].as_object().into_iter().flatten() {
            let leaves: Vec<&str> = leaves.as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
            let said = format!("{n} ({})", leaves.join(", "));
            c.eq(file, "two-switch warning", shown.contains(&said), true);
        }
        if !stray.is_empty() {
            c.eq(
                file,
                "unmatched names warned",
                shown.contains(&format!("{} node name(s) match no imported node", stray.len())),
                true,
            );
        }
    }
    c.done();
}

/// `slurmd -G` is no importer input, but it says what gres a MIG node of
/// that cluster reports: those gres as a node's `Gres=` give two whole
/// H100s and two more in MIG mode, each a 4g.40gb and three 1g.10gb.
#[test]
fn the_mig_gres_a_real_slurmd_reports_become_mig_devices() {
    let facts = facts();
    let f = &facts["slurm/slurmd-G-mig-h100-stackhpc-docs.txt"];
    let mut c = Check::default();
    for (id, n) in f["nodes"].as_object().unwrap() {
        let gres: Vec<String> = n["gres_types"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(t, k)| format!("gpu:{t}:{}", k.as_u64().unwrap()))
            .collect();
        let text = format!("NodeName={id} State=IDLE Gres={}\n", gres.join(","));
        match slurm("nodes.txt", text, None, None) {
            Err(d) => c.fail(id, render(&d)),
            Ok((inv, warnings)) => {
                loads(&mut c, id, &inv);
                let node = &inv.nodes[0];
                c.eq(id, "whole GPUs", node.gpus.iter().filter(|g| !g.in_mig_mode()).count(), 2);
                c.eq(id, "GPUs in MIG mode", node.gpus.iter().filter(|g| g.in_mig_mode()).count(), 2);
                let want: BTreeMap<String, u64> = [("1g.10gb".to_string(), 6), ("4g.40gb".to_string(), 2)].into();
                c.eq(id, "MIG devices", devices_by_profile(node), want);
                c.eq(id, "parents' class", node.gpus[3].class.clone(), "h100-80gb-hbm3".to_string());
                c.eq(id, "warned", render(&warnings).contains("llmgw::slurm::mig-gres"), true);
            }
        }
    }
    c.done();
}
