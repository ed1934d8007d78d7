//! What DRA claims were given (`kubectl get resourceclaims -A -o json`):
//! every allocated device of the GPU driver held, on the node of its pool,
//! by the replica llmgw's labels on the claim name (else by the claim
//! itself). The cluster's own word on which GPUs a pod got, where a pod's
//! annotation only says what the plan asked for.

use std::collections::{BTreeMap, HashMap, HashSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;

use super::File;
use super::slices::{DRIVER, Published};
use crate::diag::{Code, Diag, Source};
use crate::import::Problems;
use crate::inventory::{Allocation, Node};

#[derive(Deserialize)]
struct Claim {
    #[serde(default)]
    metadata: ObjectMeta,
    status: Option<Status>,
}

#[derive(Deserialize)]
struct Status {
    allocation: Option<Allocated>,
}

#[derive(Deserialize)]
struct Allocated {
    devices: Option<Results>,
}

#[derive(Deserialize)]
struct Results {
    #[serde(default)]
    results: Vec<Result>,
}

#[derive(Deserialize)]
struct Result {
    #[serde(default)]
    driver: String,
    #[serde(default)]
    pool: String,
    #[serde(default)]
    device: String,
}

/// One claim's devices on one node: whole GPUs, or MIG devices as
/// (GPU, device) pairs.
#[derive(Default)]
struct Held {
    gpus: Vec<u32>,
    migs: Vec<(u32, u32)>,
}

/// Holds every allocated claim's devices on their nodes. `namespaces`:
/// where llmgw's claims may be (others are held under their own name).
pub fn hold(
    src: &Source,
    published: &Published,
    nodes: &mut [Node],
    namespaces: Option<&[String]>,
    warnings: &mut Vec<Diag>,
) -> std::result::Result<(), Vec<Diag>> {
    let file = File::read(src, "kubectl get resourceclaims -A -o json").map_err(|d| vec![d])?;
    let mut problems = Problems::default();
    let mut unknown: Vec<String> = Vec::new();
    let mut twice: Vec<String> = Vec::new();
    let by_id: HashMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id.as_str(), i)).collect();
    let devices = devices(nodes);
    let mut taken: HashSet<(usize, u32, Option<u32>)> = HashSet::new();
    // (model, replica, node) -> what its claims hold there.
    let mut holders: BTreeMap<(String, u32, usize), Held> = BTreeMap::new();
    file.each("ResourceClaim", &mut problems, |_, c: Claim, _| {
        let Some(results) = c.status.and_then(|s| s.allocation).and_then(|a| a.devices) else { return };
        let meta = c.metadata;
        let (ns, name) = (meta.namespace.clone().unwrap_or_default(), meta.name.clone().unwrap_or_default());
        let who = format!("{ns}/{name}");
        let (model, replica) = identity(&meta, &ns, namespaces).unwrap_or((format!("claim:{who}"), 0));
        for r in results.results.iter().filter(|r| r.driver == DRIVER) {
            let node_id = published.pools.get(&r.pool).map_or(r.pool.as_str(), String::as_str);
            let at = by_id.get(node_id).and_then(|&n| Some((n, *devices.get(&(n, r.device.as_str()))?)));
            let Some((n, (g, m))) = at else {
                unknown.push(format!("{} of claim {who} on {node_id}", r.device));
                continue;
            };
            if !taken.insert((n, g, m)) {
                twice.push(format!("{} of {node_id} (claim {who})", r.device));
                continue;
            }
            let h = holders.entry((model.clone(), replica, n)).or_default();
            match m {
                None => h.gpus.push(g),
                Some(m) => h.migs.push((g, m)),
            }
        }
    })?;
    problems.into_result()?;
    for ((model, replica, n), h) in holders {
        give(&mut nodes[n], &model, replica, h);
    }
    if !twice.is_empty() {
        warnings.push(
            Diag::warning(
                Code::OverSubscribed,
                format!(
                    "{} device(s) are allocated to two claims; the first in the file holds each: {}",
                    twice.len(),
                    crate::report::shorten(&twice.iter().map(String::as_str).collect::<Vec<_>>(), 5)
                ),
            )
            .help("give the claims of one cluster, taken at one time"),
        );
    }
    if !unknown.is_empty() {
        warnings.push(
            Diag::warning(
                Code::ClaimUnknownDevice,
                format!(
                    "{} allocated device(s) are not among the GPUs the slices publish, so nothing holds them: {}",
                    unknown.len(),
                    crate::report::shorten(&unknown.iter().map(String::as_str).collect::<Vec<_>>(), 5)
                ),
            )
            .help("give the slices, nodes and claims of one cluster, taken together"),
        );
    }
    Ok(())
}

/// Every device the slices named, by (node, DRA device name): the GPU and,
/// for a MIG device, its index.
fn devices(nodes: &[Node]) -> HashMap<(usize, &str), (u32, Option<u32>)> {
    let mut out = HashMap::new();
    for (n, node) in nodes.iter().enumerate() {
        for g in &node.gpus {
            if let Some(d) = &g.dra_device {
                out.insert((n, d.as_str()), (g.index, None));
            }
            for m in &g.mig_devices {
                if let Some(d) = &m.dra_device {
                    out.insert((n, d.as_str()), (g.index, Some(m.index)));
                }
            }
        }
    }
    out
}

/// The replica llmgw's labels on the claim name (copied there from the
/// claim template render writes), when its namespace may hold llmgw's.
fn identity(meta: &ObjectMeta, ns: &str, namespaces: Option<&[String]>) -> Option<(String, u32)> {
    if namespaces.is_some_and(|list| !list.iter().any(|n| n == ns)) {
        return None;
    }
    let labels = meta.labels.as_ref()?;
    let model = meta
        .annotations
        .as_ref()
        .and_then(|a| a.get("llmgw.io/model"))
        .or_else(|| labels.get("llmgw.io/model"))?
        .clone();
    let replica = labels.get("llmgw.io/replica")?.parse().ok()?;
    Some((model, replica))
}

/// The claim's devices on the node, in place of what the replica's pod
/// said it holds there (its annotation: what the plan chose); the pod's
/// CPUs, memory and profile stay with the first entry.
fn give(node: &mut Node, model: &str, replica: u32, mut h: Held) {
    // In index order, whatever order the driver listed them in: what a
    // replica holds reads (and renders) the same from turn to turn.
    h.gpus.sort_unstable();
    h.migs.sort_unstable();
    let mut entries: Vec<Allocation> = Vec::new();
    if !h.gpus.is_empty() {
        entries.push(Allocation::new(model.to_string(), replica, h.gpus, Vec::new()));
    }
    // One entry per GPU whose MIG devices it holds.
    let mut by_gpu: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (g, m) in h.migs {
        by_gpu.entry(g).or_default().push(m);
    }
    for (g, migs) in by_gpu {
        entries.push(Allocation::new(model.to_string(), replica, vec![g], migs));
    }
    let mine = |a: &Allocation| a.model == model && a.replica == replica;
    let pod = node.allocations.iter().find(|a| mine(a)).cloned();
    if let Some(pod) = pod {
        node.allocations.retain(|a| !mine(a));
        for (n, e) in entries.iter_mut().enumerate() {
            e.profile.clone_from(&pod.profile);
            e.pending = pod.pending;
            if n == 0 {
                (e.cpus, e.memory_mb) = (pod.cpus, pod.memory_mb);
            }
        }
    }
    node.allocations.extend(entries);
}
