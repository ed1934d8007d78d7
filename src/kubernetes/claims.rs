//! What DRA claims were given (`kubectl get resourceclaims -A -o json`):
//! every allocated device of the GPU driver held, on the node of its pool,
//! by the replica llmgw's labels on the claim name (else by the claim
//! itself). The cluster's own word on which GPUs a pod got, where a pod's
//! annotation only says what the plan asked for.

use std::collections::BTreeMap;

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
    let mut claims: Vec<(String, u32, BTreeMap<String, Held>)> = Vec::new();
    file.each("ResourceClaim", &mut problems, |_, c: Claim, _| {
        let Some(results) = c.status.and_then(|s| s.allocation).and_then(|a| a.devices) else { return };
        let meta = c.metadata;
        let (ns, name) = (meta.namespace.clone().unwrap_or_default(), meta.name.clone().unwrap_or_default());
        let who = format!("{ns}/{name}");
        let mut held: BTreeMap<String, Held> = BTreeMap::new();
        for r in results.results.iter().filter(|r| r.driver == DRIVER) {
            let node_id = published.pools.get(&r.pool).cloned().unwrap_or_else(|| r.pool.clone());
            let Some(node) = nodes.iter().find(|n| n.id == node_id) else {
                unknown.push(format!("{} of claim {who} on {node_id}", r.device));
                continue;
            };
            let h = held.entry(node_id.clone()).or_default();
            match locate(node, &r.device) {
                Some((g, None)) => h.gpus.push(g),
                Some((g, Some(m))) => h.migs.push((g, m)),
                None => unknown.push(format!("{} of claim {who} on {node_id}", r.device)),
            }
        }
        let (model, replica) = identity(&meta, &ns, namespaces).unwrap_or((format!("claim:{who}"), 0));
        claims.push((model, replica, held));
    })?;
    problems.into_result()?;
    for (model, replica, held) in claims {
        for (node_id, h) in held {
            let Some(node) = nodes.iter_mut().find(|n| n.id == node_id) else { continue };
            give(node, &model, replica, h);
        }
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

/// The GPU (and MIG device) the driver calls `device` on the node.
fn locate(node: &Node, device: &str) -> Option<(u32, Option<u32>)> {
    for g in &node.gpus {
        if g.dra_device.as_deref() == Some(device) {
            return Some((g.index, None));
        }
        if let Some(m) = g.mig_devices.iter().find(|m| m.dra_device.as_deref() == Some(device)) {
            return Some((g.index, Some(m.index)));
        }
    }
    None
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
fn give(node: &mut Node, model: &str, replica: u32, h: Held) {
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
