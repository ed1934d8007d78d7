//! A node's GPUs from NVIDIA GPU Feature Discovery labels (or a cloud's
//! accelerator label), and the GPUs its pods hold.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{NodeStatus, Pod};

use super::{File, Step, quantity};
use crate::diag::{Code, Diag};
use crate::inventory::{Gpu, MigDevice, Node};

/// Cloud accelerator labels without GFD, and what each stands for: the
/// product name NVML reports (so the class matches what `discover` writes)
/// and its memory in MiB. GKE's `cloud.google.com/gke-accelerator` values.
pub const ALIASES: &[(&str, &str, u64)] = &[
    ("nvidia-h100-80gb", "NVIDIA H100 80GB HBM3", 81559),
    ("nvidia-h100-mega-80gb", "NVIDIA H100 80GB HBM3", 81559),
    ("nvidia-h200-141gb", "NVIDIA H200", 143771),
    ("nvidia-a100-80gb", "NVIDIA A100-SXM4-80GB", 81920),
    ("nvidia-tesla-a100", "NVIDIA A100-SXM4-40GB", 40960),
    ("nvidia-l4", "NVIDIA L4", 23034),
    ("nvidia-tesla-t4", "Tesla T4", 15360),
    ("nvidia-tesla-v100", "Tesla V100-SXM2-16GB", 16384),
    ("nvidia-b200", "NVIDIA B200", 183359),
];

/// MIG devices a profile gives one GPU (A100/H100): 1g 7, 2g 3, 3g 2, 4g and 7g 1.
fn per_gpu(profile: &str) -> u32 {
    match profile.split('g').next() {
        Some("1") => 7,
        Some("2") => 3,
        Some("3") => 2,
        _ => 1,
    }
}

/// A count from a label, or a diagnostic at the label.
fn count(
    file: &File<'_>,
    i: usize,
    id: &str,
    labels: &BTreeMap<String, String>,
    key: &str,
) -> Result<Option<u64>, Vec<Diag>> {
    let Some(v) = labels.get(key) else { return Ok(None) };
    v.trim().parse::<u64>().map(Some).map_err(|_| {
        let mut p = file.item_path(i);
        p.extend([Step::Key("metadata"), Step::Key("labels"), Step::Key(key)]);
        vec![file.error(
            Code::WrongType,
            &p,
            format!("node `{id}`: label {key} is `{v}`, not a number"),
            "not a number",
            "GPU Feature Discovery writes counts and memory as whole numbers",
        )]
    })
}

fn resource(
    status: Option<&NodeStatus>,
    which: fn(&NodeStatus) -> Option<&BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>,
    key: &str,
) -> Option<u64> {
    status.and_then(which).and_then(|m| m.get(key)).and_then(|q| quantity::parse(&q.0)).map(|v| v as u64)
}

/// The node's GPUs, numbered 0.. in the order GFD counts them.
pub fn of(
    file: &File<'_>,
    i: usize,
    id: &str,
    labels: &BTreeMap<String, String>,
    status: Option<&NodeStatus>,
    warnings: &mut Vec<Diag>,
) -> Result<Vec<Gpu>, Vec<Diag>> {
    let capacity = resource(status, |s| s.capacity.as_ref(), "nvidia.com/gpu");
    let allocatable = resource(status, |s| s.allocatable.as_ref(), "nvidia.com/gpu");
    let label_count = count(file, i, id, labels, "nvidia.com/gpu.count")?;
    let memory = count(file, i, id, labels, "nvidia.com/gpu.memory")?.unwrap_or(0);
    let replicas = count(file, i, id, labels, "nvidia.com/gpu.replicas")?.unwrap_or(1).max(1);
    let (name, memory) = match (labels.get("nvidia.com/gpu.product"), labels.get("cloud.google.com/gke-accelerator")) {
        (Some(p), _) => (p.clone(), memory),
        (None, Some(a)) => match ALIASES.iter().find(|(k, _, _)| k == a) {
            Some((_, name, mb)) => ((*name).to_string(), *mb),
            None => (a.clone(), 0),
        },
        (None, None) => ("NVIDIA GPU".to_string(), memory),
    };
    let Some(n) = label_count.or(capacity).filter(|&n| n > 0) else { return Ok(Vec::new()) };

    // MIG, single strategy: the product names the profile and the count is
    // of MIG devices; the physical GPUs hold as many as the profile fits.
    if let Some((base, profile)) = name.split_once("-MIG-") {
        let per = u64::from(per_gpu(profile));
        let physical = n.div_ceil(per);
        let mut left = n;
        return Ok((0..physical as u32)
            .map(|g| {
                let mut x = Gpu::named(g, base, 0);
                x.mig = Some(true);
                let here = left.min(per);
                left -= here;
                x.mig_devices = (0..here as u32)
                    .map(|m| MigDevice { index: m, profile: profile.to_string(), memory_mb: memory, uuid: None })
                    .collect();
                x
            })
            .collect());
    }
    // Time-slicing: the product says -SHARED and each GPU is offered
    // `replicas` times; the GPUs are the physical ones.
    let (name, physical, unhealthy) = match name.strip_suffix("-SHARED") {
        Some(base) if replicas > 1 => {
            warnings.push(
                Diag::warning(
                    Code::TimeSliced,
                    format!(
                        "node `{id}`: its {base} GPUs are time-sliced {replicas} ways; llmgw counts the physical GPUs"
                    ),
                )
                .help("a replica on a time-sliced GPU shares its memory and compute with others"),
            );
            let physical = label_count.unwrap_or_else(|| n / replicas);
            let missing = capacity.zip(allocatable).map_or(0, |(c, a)| c.saturating_sub(a) / replicas);
            (base.to_string(), physical, missing)
        }
        _ => (name.clone(), n, capacity.zip(allocatable).map_or(0, |(c, a)| c.saturating_sub(a))),
    };
    let mut gpus: Vec<Gpu> = (0..physical as u32).map(|g| Gpu::named(g, &name, memory)).collect();
    // Allocatable below capacity: the difference is unhealthy, the highest indices.
    for g in gpus.iter_mut().rev().take(unhealthy as usize) {
        g.healthy = false;
    }
    // MIG, mixed strategy: nvidia.com/mig-<profile>.count devices, dealt to
    // the GPUs in index order.
    let mut dealt = 0usize;
    for (key, value) in labels {
        let Some(profile) = key.strip_prefix("nvidia.com/mig-").and_then(|k| k.strip_suffix(".count")) else {
            continue;
        };
        let devices = count(file, i, id, labels, key)?.unwrap_or(0);
        let _ = value;
        for _ in 0..devices {
            let g = &mut gpus[dealt % physical as usize];
            g.mig = Some(true);
            let index = g.mig_devices.len() as u32;
            g.mig_devices.push(MigDevice { index, profile: profile.to_string(), memory_mb: 0, uuid: None });
            dealt += 1;
        }
    }
    Ok(gpus)
}

/// The part of an `llmgw.io/gpus` annotation for one node:
/// `a=0,1;b=2,3` gives `[0, 1]` for `a`.
fn part<'a>(annotation: &'a str, node: &str) -> Option<&'a str> {
    annotation.split(';').find_map(|p| p.split_once('=').filter(|(n, _)| n.trim() == node).map(|(_, v)| v))
}

/// MIG devices a pod holds: the one its annotation names
/// (`<gpu>:<index>`), else the lowest free ones of each profile.
fn hold_migs(
    node: &mut Node,
    model: &str,
    replica: u32,
    migs: &[(String, u64)],
    named: Option<&str>,
    assumed: &mut dyn FnMut(),
) {
    let named = named.and_then(|v| {
        let (g, m) = v.split_once(':')?;
        Some((g.trim().parse::<u32>().ok()?, m.trim().parse::<u32>().ok()?))
    });
    for (profile, n) in migs {
        let held: BTreeSet<(u32, u32)> = node
            .allocations
            .iter()
            .filter(|a| !a.mig_devices.is_empty())
            .flat_map(|a| a.mig_devices.iter().map(move |m| (a.gpus[0], *m)))
            .collect();
        let chosen: Vec<(u32, u32)> = match named {
            Some(d) => vec![d],
            None => {
                assumed();
                node.gpus
                    .iter()
                    .filter(|g| g.in_mig_mode() && g.healthy)
                    .flat_map(|g| {
                        g.mig_devices.iter().filter(|d| &d.profile == profile).map(move |d| (g.index, d.index))
                    })
                    .filter(|d| !held.contains(d))
                    .take(*n as usize)
                    .collect()
            }
        };
        for (g, m) in chosen {
            node.allocations.push(super::allocation(model.to_string(), replica, vec![g], vec![m]));
        }
    }
}

/// MIG devices wanted, per profile.
type MigCounts = Vec<(String, u64)>;

/// A pod that holds GPUs now: its node, whole GPUs, and MIG devices per
/// profile, from its containers' limits. Unbound and finished pods hold none.
fn holding(pod: &Pod) -> Option<(&str, u64, MigCounts)> {
    let spec = pod.spec.as_ref()?;
    let node = spec.node_name.as_deref()?;
    if matches!(pod.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Succeeded" | "Failed")) {
        return None;
    }
    let mut whole = 0u64;
    let mut migs: Vec<(String, u64)> = Vec::new();
    for c in &spec.containers {
        for (k, q) in c.resources.as_ref().and_then(|r| r.limits.as_ref()).into_iter().flatten() {
            let v = quantity::parse(&q.0).unwrap_or(0.0) as u64;
            if k == "nvidia.com/gpu" {
                whole += v;
            } else if let Some(profile) = k.strip_prefix("nvidia.com/mig-") {
                migs.push((profile.to_string(), v));
            }
        }
    }
    (whole > 0 || migs.iter().any(|m| m.1 > 0)).then_some((node, whole, migs))
}

/// GPUs (and MIG devices) the pods hold, as allocations on their nodes.
pub fn allocations(
    file: &File<'_>,
    pods: &[Pod],
    nodes: &mut [Node],
    warnings: &mut Vec<Diag>,
) -> Result<(), Vec<Diag>> {
    // Pods that say which GPUs they hold go first; the others get the
    // lowest free ones, in (namespace, name) order.
    let mut order: Vec<usize> = (0..pods.len()).collect();
    let key = |p: &Pod| (p.metadata.namespace.clone().unwrap_or_default(), p.metadata.name.clone().unwrap_or_default());
    let says = |p: &Pod| {
        p.metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key("llmgw.io/gpus") || a.contains_key("llmgw.io/mig-devices"))
    };
    order.sort_by_key(|&i| (!says(&pods[i]), key(&pods[i])));
    let mut errors = Vec::new();
    let mut assumed = Vec::new();
    for i in order {
        let pod = &pods[i];
        let Some((node_name, whole, migs)) = holding(pod) else { continue };
        let (ns, name) = key(pod);
        let Some(node) = nodes.iter_mut().find(|n| n.id == node_name) else {
            warnings.push(Diag::warning(
                Code::PodOnUnknownNode,
                format!("pod {ns}/{name} holds GPUs on `{node_name}`, which the node list does not have"),
            ));
            continue;
        };
        let labels = pod.metadata.labels.clone().unwrap_or_default();
        let annotations = pod.metadata.annotations.clone().unwrap_or_default();
        // render writes the exact model name as an annotation too: a label
        // cannot hold every name.
        let model = annotations
            .get("llmgw.io/model")
            .or_else(|| labels.get("llmgw.io/model"))
            .cloned()
            .unwrap_or_else(|| format!("pod:{ns}/{name}"));
        let replica = match labels.get("llmgw.io/replica") {
            None => 0,
            Some(r) => match r.parse::<u32>() {
                Ok(r) => r,
                Err(_) => {
                    let mut p = file.item_path(i);
                    p.extend([Step::Key("metadata"), Step::Key("labels"), Step::Key("llmgw.io/replica")]);
                    errors.push(file.error(
                        Code::WrongType,
                        &p,
                        format!("pod {ns}/{name}: llmgw.io/replica is `{r}`, not a replica index"),
                        "not a number",
                        "render writes the replica index, a whole number",
                    ));
                    continue;
                }
            },
        };
        let taken: BTreeSet<u32> =
            node.allocations.iter().filter(|a| a.mig_devices.is_empty()).flat_map(|a| a.gpus.clone()).collect();
        if whole > 0 {
            let named: Option<Vec<u32>> = annotations
                .get("llmgw.io/gpus")
                .and_then(|a| part(a, node_name))
                .map(|v| v.split(',').filter_map(|g| g.trim().parse().ok()).collect());
            let gpus = match named {
                Some(g) => g,
                None => {
                    assumed.push(format!("{ns}/{name}"));
                    node.gpus
                        .iter()
                        .filter(|g| g.healthy && !taken.contains(&g.index) && !g.in_mig_mode())
                        .map(|g| g.index)
                        .take(whole as usize)
                        .collect()
                }
            };
            if let Some(g) = gpus.iter().find(|g| taken.contains(g) || node.gpu_position(**g).is_none()) {
                let mut p = file.item_path(i);
                p.extend([Step::Key("metadata"), Step::Key("annotations")]);
                errors.push(file.error(
                    Code::GpuAllocatedTwice,
                    &p,
                    format!(
                        "pod {ns}/{name} holds GPU {g} of `{node_name}`, which another pod holds or the node lacks"
                    ),
                    "GPU named here",
                    "fix the llmgw.io/gpus annotation of one of the pods",
                ));
                continue;
            }
            node.allocations.push(super::allocation(model.clone(), replica, gpus, Vec::new()));
        }
        let named = annotations.get("llmgw.io/mig-devices").and_then(|a| part(a, node_name));
        hold_migs(node, &model, replica, &migs, named, &mut || assumed.push(format!("{ns}/{name}")));
    }
    if !assumed.is_empty() {
        assumed.dedup();
        warnings.push(
            Diag::warning(
                Code::GpusAssumed,
                format!(
                    "{} pod(s) name no GPUs (no llmgw.io/gpus annotation); the lowest free ones were assumed: {}",
                    assumed.len(),
                    crate::report::shorten(&assumed.iter().map(String::as_str).collect::<Vec<_>>(), 5)
                ),
            )
            .help("pods rendered by llmgw carry the annotation; for others, which GPUs they hold is a guess"),
        );
    }
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}
