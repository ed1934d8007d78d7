//! A node's GPUs from NVIDIA GPU Feature Discovery labels and the
//! resources the device plugin advertises (or a cloud's accelerator label).
//!
//! Every count is checked where it is read, before anything is built from
//! it: more than 1024 GPUs, or more than seven MIG devices on a GPU, is an
//! error at the label or resource that says so.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::NodeStatus;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::quantity;
use crate::diag::{Code, Diag};
use crate::import::file::{File, Step};
use crate::import::{MAX_GPUS_PER_NODE, MAX_MIG_PER_GPU, mig};
use crate::inventory::{Gpu, MigDevice};
use crate::units::MAX_MIB;

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
    ("nvidia-tesla-p100", "Tesla P100-PCIE-16GB", 16280),
    ("nvidia-tesla-p4", "Tesla P4", 7611),
    ("nvidia-tesla-k80", "Tesla K80", 11441),
    ("nvidia-b200", "NVIDIA B200", 183359),
];

/// EKS without GPU Feature Discovery: Karpenter labels each node with its
/// EC2 instance type's GPUs (`karpenter.k8s.aws/instance-gpu-name=l4`,
/// `-count`, `-memory` in MiB a GPU, `-manufacturer`); EKS Auto Mode (a
/// managed Karpenter) writes the same under `eks.amazonaws.com/`. EC2 names
/// a GPU by its model only (`a100` on a p4d and a p4de alike): this table
/// gives the product NVML reports, by name and, where one name covers two
/// products, by the memory EC2 gives (MiB; 0: any), so that the classes
/// meet those `discover` writes.
pub const KARPENTER: &[(&str, u64, &str)] = &[
    ("a100", 40960, "NVIDIA A100-SXM4-40GB"),
    ("a100", 81920, "NVIDIA A100-SXM4-80GB"),
    ("h100", 0, "NVIDIA H100 80GB HBM3"),
    ("h200", 0, "NVIDIA H200"),
    ("b200", 0, "NVIDIA B200"),
    ("l4", 0, "NVIDIA L4"),
    ("l40s", 0, "NVIDIA L40S"),
    ("a10g", 0, "NVIDIA A10G"),
    ("t4", 0, "Tesla T4"),
    ("t4g", 0, "NVIDIA T4G"),
    ("v100", 16384, "Tesla V100-SXM2-16GB"),
    ("v100", 32768, "Tesla V100-SXM2-32GB"),
    ("k80", 0, "Tesla K80"),
    ("m60", 0, "Tesla M60"),
];

/// The label prefixes of Karpenter's instance labels: the project's, and
/// EKS Auto Mode's.
const KARPENTER_PREFIXES: [&str; 2] = ["karpenter.k8s.aws/", "eks.amazonaws.com/"];

/// A Karpenter instance label (`instance-gpu-name`, ...) and its key, under
/// whichever prefix the node carries it.
pub(super) fn karpenter<'l>(labels: &'l BTreeMap<String, String>, what: &str) -> Option<(String, &'l str)> {
    KARPENTER_PREFIXES.iter().find_map(|p| {
        let key = format!("{p}instance-gpu-{what}");
        labels.get(&key).map(|v| (key, v.trim()))
    })
}

/// Whether GPU Feature Discovery labelled the node's NVIDIA GPUs.
fn has_gfd(labels: &BTreeMap<String, String>) -> bool {
    labels.contains_key("nvidia.com/gpu.product") || labels.contains_key("nvidia.com/gpu.count")
}

/// The Karpenter labels a node's NVIDIA GPUs are read from: only where GFD
/// did not label it, and only when the manufacturer they name is NVIDIA.
fn karpenter_nvidia(labels: &BTreeMap<String, String>) -> bool {
    !has_gfd(labels)
        && karpenter(labels, "name").is_some()
        && karpenter(labels, "manufacturer").is_none_or(|(_, m)| m.eq_ignore_ascii_case("nvidia"))
}

/// The product NVML names for a Karpenter GPU name and memory: the
/// table's, else the name as EC2 gives it.
pub fn karpenter_product(name: &str, memory_mb: u64) -> String {
    let name = name.to_ascii_lowercase();
    let rows: Vec<&(&str, u64, &str)> = KARPENTER.iter().filter(|(n, _, _)| *n == name).collect();
    rows.iter()
        .find(|(_, mb, _)| *mb == memory_mb)
        .or_else(|| rows.iter().find(|(_, mb, _)| *mb == 0))
        .or_else(|| rows.first())
        .map_or(name.clone(), |(_, _, product)| (*product).to_string())
}

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

/// GPUs by Karpenter's labels: the instance type's count, held to what the
/// kubelet offers (`nvidia.com/gpu`): GPUs it does not offer, or offers
/// but not as allocatable, are unhealthy (the highest indices); a kubelet
/// that offers none (the device plugin not running yet, as on a node
/// Karpenter just brought up) leaves all of them unhealthy, with a warning.
fn held_to_kubelet(
    at: &At<'_, '_>,
    labels: &BTreeMap<String, String>,
    name: &str,
    memory: u64,
    capacity: Option<u64>,
    allocatable: Option<u64>,
    warnings: &mut Vec<Diag>,
) -> Result<Vec<Gpu>, Vec<Diag>> {
    let (key, _) = karpenter(labels, "count").unwrap_or_default();
    let labelled = if key.is_empty() { None } else { count(at, labels, &key, MAX_GPUS_PER_NODE)? };
    let n = labelled.or(capacity).unwrap_or(0);
    let offered = capacity.unwrap_or(0).min(n);
    let usable = allocatable.map_or(offered, |a| a.min(offered));
    if n > 0 && offered == 0 {
        warnings.push(
            Diag::warning(
                Code::NoDevicePlugin,
                format!(
                    "node `{}`: Karpenter's labels count {n} GPU(s) but the kubelet advertises no nvidia.com/gpu; all are taken as unhealthy",
                    at.id
                ),
            )
            .help("the NVIDIA device plugin is not running there yet: no pod can be given a GPU until it is; import again once it is"),
        );
    }
    let mut gpus: Vec<Gpu> = (0..n as u32).map(|g| Gpu::named(g, name, memory)).collect();
    for g in gpus.iter_mut().skip(usable as usize) {
        g.healthy = false;
    }
    Ok(gpus)
}

/// MIG, mixed strategy. With `gpu.count`, the devices are dealt to the
/// GPUs in MIG mode in index order (device 1 to GPU 0, device 2 to GPU 1,
/// ...); `nvidia.com/gpu` then counts the GPUs not in MIG mode, the highest
/// indices. Without it, the devices are packed onto as few GPUs as hold
/// them, after the `whole` ones.
fn mixed(
    at: &At<'_, '_>,
    name: &str,
    memory: u64,
    label_count: Option<u64>,
    whole: u64,
    migs: &BTreeMap<String, (u64, u64)>,
    warnings: &mut Vec<Diag>,
) -> Result<Vec<Gpu>, Vec<Diag>> {
    let id = at.id;
    let devices: Vec<(&str, u64)> =
        migs.iter().flat_map(|(p, (n, mb))| (0..*n).map(move |_| (p.as_str(), *mb))).collect();
    let gpus: Vec<Gpu>;
    match label_count {
        Some(physical) => {
            if physical > MAX_GPUS_PER_NODE {
                return Err(at.too_many(true, physical, "GPUs"));
            }
            // The GPUs in MIG mode: all but the whole ones the plugin
            // advertises (when that leaves any).
            let in_mig = if whole < physical { physical - whole } else { physical };
            let per = (devices.len() as u64).div_ceil(in_mig.max(1));
            if in_mig == 0 || per > MAX_MIG_PER_GPU {
                return Err(at.label(
                    "nvidia.com/gpu.count",
                    Code::TooManyGpus,
                    format!(
                        "{} MIG devices on {in_mig} GPU(s) in MIG mode is more than {MAX_MIG_PER_GPU} a GPU",
                        devices.len()
                    ),
                    "a GPU holds at most seven MIG devices: check the MIG resources and gpu.count",
                ));
            }
            let mut all: Vec<Gpu> = (0..physical as u32).map(|g| Gpu::named(g, name, memory)).collect();
            for (k, (profile, mb)) in devices.iter().enumerate() {
                let g = &mut all[k % in_mig as usize];
                g.mig = Some(true);
                let index = g.mig_devices.len() as u32;
                g.mig_devices.push(MigDevice::new(index, *profile, *mb));
            }
            gpus = all;
        }
        None => {
            let profiles: Vec<&str> = devices.iter().map(|d| d.0).collect();
            let packed = mig::pack(&profiles);
            if whole + packed.len() as u64 > MAX_GPUS_PER_NODE {
                return Err(at.too_many(false, whole + packed.len() as u64, "GPUs"));
            }
            warnings.push(
                Diag::warning(
                    Code::MigResources,
                    format!(
                        "node `{id}`: no nvidia.com/gpu.count label; its {} MIG devices are taken as {} GPU(s) in MIG mode",
                        devices.len(),
                        packed.len()
                    ),
                )
                .help("GPU Feature Discovery labels the node with its GPU count; without it llmgw counts as few GPUs as hold the devices"),
            );
            let mut all: Vec<Gpu> = (0..whole as u32).map(|g| Gpu::named(g, name, memory)).collect();
            for held in packed {
                let mut g = Gpu::named(all.len() as u32, name, memory);
                g.mig = Some(true);
                g.mig_devices = held
                    .iter()
                    .enumerate()
                    .map(|(m, &d)| MigDevice {
                        index: m as u32,
                        profile: devices[d].0.to_string(),
                        memory_mb: devices[d].1,
                        uuid: None,
                        dra_device: None,
                    })
                    .collect();
                all.push(g);
            }
            gpus = all;
        }
    }
    Ok(gpus)
}

/// Profile -> (devices, MiB each). The node's MIG resources
/// (`status.capacity["nvidia.com/mig-<profile>"]`) are the truth for which
/// devices exist; GFD's `nvidia.com/mig-<profile>.count` labels only when
/// the node advertises none. Labels that say otherwise are warned about.
fn mig_devices(
    at: &At<'_, '_>,
    labels: &BTreeMap<String, String>,
    capacity: Option<&BTreeMap<String, Quantity>>,
    warnings: &mut Vec<Diag>,
) -> Result<BTreeMap<String, (u64, u64)>, Vec<Diag>> {
    let cap_limit = MAX_GPUS_PER_NODE * MAX_MIG_PER_GPU;
    let mut from_capacity = BTreeMap::new();
    for key in capacity.into_iter().flat_map(BTreeMap::keys) {
        let Some(profile) = key.strip_prefix("nvidia.com/mig-").filter(|p| mig::is_profile(p)) else { continue };
        if let Some(n) = resource(at, capacity, "capacity", key, cap_limit)?.filter(|&n| n > 0) {
            from_capacity.insert(profile.to_string(), n);
        }
    }
    let mut from_labels = BTreeMap::new();
    for key in labels.keys() {
        let Some(profile) = key.strip_prefix("nvidia.com/mig-").and_then(|k| k.strip_suffix(".count")) else {
            continue;
        };
        if let Some(n) = count(at, labels, key, cap_limit)?.filter(|&n| n > 0) {
            from_labels.insert(profile.to_string(), n);
        }
    }
    let total: u64 = from_capacity.values().chain(from_labels.values()).sum();
    if total > cap_limit {
        return Err(at.resource(
            "capacity",
            crate::vendor::NVIDIA_GPU,
            format!("{total} MIG devices is more than {cap_limit}"),
        ));
    }
    let chosen = if from_capacity.is_empty() {
        from_labels
    } else {
        if !from_labels.is_empty() && from_labels != from_capacity {
            let show =
                |m: &BTreeMap<String, u64>| m.iter().map(|(p, n)| format!("{n} {p}")).collect::<Vec<_>>().join(", ");
            warnings.push(
                Diag::warning(
                    Code::MigResources,
                    format!(
                        "node `{}`: its MIG labels say {}, but it advertises {}; the advertised devices are taken",
                        at.id,
                        show(&from_labels),
                        show(&from_capacity)
                    ),
                )
                .help("GPU Feature Discovery relabels the node after a MIG reconfiguration; until then its labels are stale"),
            );
        }
        from_capacity
    };
    let mut out = BTreeMap::new();
    for (profile, n) in chosen {
        // GFD may name a profile otherwise than the resource does (the
        // label `mig-3g.21gb` for the resource `mig-3g.20gb`): then the
        // memory label of the one profile with as many slices.
        let mut key = format!("nvidia.com/mig-{profile}.memory");
        if !labels.contains_key(&key) {
            let alike: Vec<&String> = labels
                .keys()
                .filter(|k| {
                    k.strip_prefix("nvidia.com/mig-")
                        .and_then(|p| p.strip_suffix(".memory"))
                        .is_some_and(|p| mig::slices(p).is_some() && mig::slices(p) == mig::slices(&profile))
                })
                .collect();
            if let [one] = alike[..] {
                key.clone_from(one);
            }
        }
        let mb = count(at, labels, &key, MAX_MIB)?.unwrap_or(0);
        out.insert(profile, (n, mb));
    }
    Ok(out)
}
