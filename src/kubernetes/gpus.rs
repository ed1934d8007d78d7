//! A node's GPUs from NVIDIA GPU Feature Discovery labels and the
//! resources the device plugin advertises (or a cloud's accelerator label).
//!
//! Every count is checked where it is read, before anything is built from
//! it: more than 1024 GPUs, or more than seven MIG devices on a GPU, is an
//! error at the label or resource that says so.

mod strategies;
use strategies::*;

mod karpenter;
pub use karpenter::*;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::NodeStatus;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::quantity;
use crate::diag::{Code, Diag};
use crate::import::file::{File, Step};
use crate::import::{MAX_GPUS_PER_NODE, MAX_MIG_PER_GPU, mig};
use crate::inventory::{Gpu, MigDevice};
use crate::units::MAX_MIB;

/// Where a node's labels and resources are, for pointing at one.
pub(super) struct At<'a, 'f> {
    pub file: &'a File<'f>,
    pub i: usize,
    pub id: &'a str,
}

impl At<'_, '_> {
    fn path<'k>(&self, keys: &[&'static str], last: &'k str) -> Vec<Step<'k>> {
        let mut p: Vec<Step<'k>> = self.file.item_path(self.i);
        p.extend(keys.iter().map(|k| Step::Key(k)));
        p.push(Step::Key(last));
        p
    }

    fn label(&self, key: &str, code: Code, why: String, help: &str) -> Vec<Diag> {
        let p = self.path(&["metadata", "labels"], key);
        vec![self.file.error(code, &p, format!("node `{}`: {why}", self.id), "here", help)]
    }

    /// More GPUs than a node may have, at the count label when there is
    /// one, else at the resource.
    fn too_many(&self, labelled: bool, n: u64, what: &str) -> Vec<Diag> {
        let why = format!("{n} {what} is more than the {MAX_GPUS_PER_NODE} GPUs llmgw takes on a node");
        if labelled {
            self.label("nvidia.com/gpu.count", Code::TooManyGpus, why, "a count this large is a typo, never a node")
        } else {
            self.resource("capacity", crate::vendor::NVIDIA_GPU, why)
        }
    }

    pub(super) fn resource(&self, which: &'static str, key: &str, why: String) -> Vec<Diag> {
        let p = self.path(&["status", which], key);
        vec![self.file.error(
            Code::TooManyGpus,
            &p,
            format!("node `{}`: {why}", self.id),
            "here",
            "the device plugin advertises whole counts, at most 1024 GPUs a node",
        )]
    }
}

/// A count from a label, at most `max`, or a diagnostic at the label.
fn count(at: &At<'_, '_>, labels: &BTreeMap<String, String>, key: &str, max: u64) -> Result<Option<u64>, Vec<Diag>> {
    let Some(v) = labels.get(key) else { return Ok(None) };
    match v.trim().parse::<u64>() {
        Ok(n) if n <= max => Ok(Some(n)),
        Ok(n) => Err(at.label(
            key,
            if key.ends_with(".memory") { Code::OutOfRange } else { Code::TooManyGpus },
            format!("label {key} is {n}, more than the {max} llmgw takes"),
            "a count this large is a typo, never a node",
        )),
        Err(_) => Err(at.label(
            key,
            Code::WrongType,
            format!("label {key} is `{v}`, not a number"),
            "GPU Feature Discovery writes counts and memory as whole numbers",
        )),
    }
}

/// A whole count from a resource quantity (`"8"`), at most `max`.
pub(super) fn resource(
    at: &At<'_, '_>,
    map: Option<&BTreeMap<String, Quantity>>,
    which: &'static str,
    key: &str,
    max: u64,
) -> Result<Option<u64>, Vec<Diag>> {
    let Some(q) = map.and_then(|m| m.get(key)) else { return Ok(None) };
    match quantity::parse(&q.0) {
        Some(v) if v >= 0.0 && v.fract() == 0.0 && v <= max as f64 => Ok(Some(v as u64)),
        Some(v) if v > max as f64 => Err(at.resource(
            which,
            key,
            format!("{which} {key} is `{}`, more than any node offers (llmgw takes at most {max})", q.0),
        )),
        _ => Err(at.resource(which, key, format!("{which} {key} is `{}`, not a whole count", q.0))),
    }
}

/// The GPUs' product name and memory (MiB): GFD's labels, else a cloud's
/// accelerator label through `ALIASES`.
fn product(
    at: &At<'_, '_>,
    labels: &BTreeMap<String, String>,
    warnings: &mut Vec<Diag>,
) -> Result<(String, u64), Vec<Diag>> {
    let id = at.id;
    if karpenter_nvidia(labels) {
        let (_, name) = karpenter(labels, "name").unwrap_or_default();
        let memory = match karpenter(labels, "memory") {
            Some((key, _)) => count(at, labels, &key, MAX_MIB)?.unwrap_or(0),
            None => 0,
        };
        return Ok((karpenter_product(name, memory), memory));
    }
    let (name, memory) = match (labels.get("nvidia.com/gpu.product"), labels.get("cloud.google.com/gke-accelerator")) {
        (Some(p), _) => (p.clone(), None),
        (None, Some(a)) => match ALIASES.iter().find(|(k, _, _)| k == a) {
            Some((_, name, mb)) => ((*name).to_string(), Some(*mb)),
            None => (a.clone(), Some(0)),
        },
        (None, None) => ("NVIDIA GPU".to_string(), None),
    };
    let memory = match memory {
        Some(mb) => mb,
        None => match count(at, labels, "nvidia.com/gpu.memory", MAX_MIB)?.unwrap_or(0) {
            // More MiB than any GPU has (16 TiB): a value written in bytes,
            // as some GFD outputs print it.
            mb if mb > 1 << 24 => {
                warnings.push(
                    Diag::warning(
                        Code::OutOfRange,
                        format!("node `{id}`: label nvidia.com/gpu.memory is {mb}, more MiB than any GPU has; taken as bytes ({} MiB)", mb >> 20),
                    )
                    .help("GPU Feature Discovery writes the memory in MiB"),
                );
                mb >> 20
            }
            mb => mb,
        },
    };
    Ok((name, memory))
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
    let at = At { file, i, id };
    let capacity_map = status.and_then(|s| s.capacity.as_ref());
    let allocatable_map = status.and_then(|s| s.allocatable.as_ref());
    // Time-sliced GPUs are offered `replicas` times: the resource may count
    // more than 1024, the physical GPUs may not.
    let replicas = count(&at, labels, "nvidia.com/gpu.replicas", u64::from(u32::MAX))?.unwrap_or(1).max(1);
    let offered = MAX_GPUS_PER_NODE.saturating_mul(replicas.max(MAX_MIG_PER_GPU));
    let capacity = resource(&at, capacity_map, "capacity", crate::vendor::NVIDIA_GPU, offered)?;
    let allocatable = resource(&at, allocatable_map, "allocatable", crate::vendor::NVIDIA_GPU, offered)?;
    let (name, memory) = product(&at, labels, warnings)?;
    // Under the single MIG strategy the count is of MIG devices.
    let most = if name.contains("-MIG-") { MAX_GPUS_PER_NODE * MAX_MIG_PER_GPU } else { MAX_GPUS_PER_NODE };
    let label_count = count(&at, labels, "nvidia.com/gpu.count", most)?;
    let labelled = label_count.is_some();
    let too_many = |n: u64, what: &str| at.too_many(labelled, n, what);
    if karpenter_nvidia(labels) {
        return held_to_kubelet(&at, labels, &name, memory, capacity, allocatable, warnings);
    }

    // MIG, single strategy: the product names the profile and the count is
    // of MIG devices; the physical GPUs hold as many as the profile fits.
    if let Some((base, profile)) = name.split_once("-MIG-") {
        let Some(n) = label_count.or(capacity).filter(|&n| n > 0) else { return Ok(Vec::new()) };
        let per = mig::per_gpu(profile);
        let physical = n.div_ceil(per);
        if physical > MAX_GPUS_PER_NODE {
            return Err(too_many(physical, "physical GPUs"));
        }
        let mut left = n;
        return Ok((0..physical as u32)
            .map(|g| {
                let mut x = Gpu::named(g, base, 0);
                x.mig = Some(true);
                let here = left.min(per);
                left -= here;
                x.mig_devices = (0..here as u32).map(|m| MigDevice::new(m, profile, memory)).collect();
                x
            })
            .collect());
    }

    let migs = mig_devices(&at, labels, capacity_map, warnings)?;
    let zeroed_mig = capacity_map.is_some_and(|m| m.keys().any(|k| k.starts_with("nvidia.com/mig-")));
    if migs.is_empty() && zeroed_mig && capacity.unwrap_or(0) > 0 && !labels.contains_key("nvidia.com/gpu.product") {
        warnings.push(
            Diag::warning(
                Code::MigResources,
                format!(
                    "node `{id}`: it advertises nvidia.com/gpu and no MIG devices, but no product label; under GFD's single MIG strategy those may be MIG devices, not GPUs"
                ),
            )
            .help("label the node with GPU Feature Discovery: its product label says whether the GPUs are MIG devices"),
        );
    }
    // Time-slicing: the product says -SHARED and each GPU is offered
    // `replicas` times; the GPUs are the physical ones.
    let shared = name.strip_suffix("-SHARED").filter(|_| replicas > 1);
    let n = label_count.or(capacity).unwrap_or(0);
    let (name, physical, unhealthy) = match shared {
        Some(base) => {
            warnings.push(
                Diag::warning(
                    Code::TimeSliced,
                    format!(
                        "node `{id}`: its {base} GPUs are time-sliced {replicas} ways; llmgw counts the physical GPUs"
                    ),
                )
                .help("a replica on a time-sliced GPU shares its memory and compute with others"),
            );
            let physical = label_count.unwrap_or_else(|| n.div_ceil(replicas));
            let missing = capacity.zip(allocatable).map_or(0, |(c, a)| c.saturating_sub(a) / replicas);
            (base.to_string(), physical, missing)
        }
        None => (name.clone(), n, capacity.zip(allocatable).map_or(0, |(c, a)| c.saturating_sub(a))),
    };
    if migs.is_empty() {
        if physical > MAX_GPUS_PER_NODE {
            return Err(too_many(physical, "GPUs"));
        }
        let mut gpus: Vec<Gpu> = (0..physical as u32).map(|g| Gpu::named(g, &name, memory)).collect();
        // The kubelet offers none of the GPUs the labels count: the device
        // plugin is not running, and no pod gets one.
        let unhealthy = if labelled && physical > 0 && capacity == Some(0) && allocatable.unwrap_or(0) == 0 {
            warnings.push(
                Diag::warning(
                    Code::NoDevicePlugin,
                    format!(
                        "node `{id}`: its labels count {physical} GPU(s) but the kubelet advertises nvidia.com/gpu: 0; all are taken as unhealthy"
                    ),
                )
                .help("the NVIDIA device plugin is not running there: no pod can be given a GPU until it is"),
            );
            physical
        } else {
            unhealthy
        };
        // Allocatable below capacity: the difference is unhealthy, the highest indices.
        for g in gpus.iter_mut().rev().take(unhealthy as usize) {
            g.healthy = false;
        }
        return Ok(gpus);
    }

    let whole = if shared.is_some() { 0 } else { capacity.unwrap_or(0) };
    let mut gpus = mixed(&at, &name, memory, label_count, whole, &migs, warnings)?;
    // Allocatable below capacity: the difference is unhealthy, among the
    // whole GPUs, the highest indices.
    for g in gpus.iter_mut().rev().filter(|g| !g.in_mig_mode()).take(unhealthy as usize) {
        g.healthy = false;
    }
    Ok(gpus)
}
