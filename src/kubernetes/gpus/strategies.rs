//! MIG devices: what a node's labels, capacity and allocatable say it has
//! in each strategy, held to what the kubelet offers.

use super::*;

/// GPUs by Karpenter's labels: the instance type's count, held to what the
/// kubelet offers (`nvidia.com/gpu`): GPUs it does not offer, or offers
/// but not as allocatable, are unhealthy (the highest indices); a kubelet
/// that offers none (the device plugin not running yet, as on a node
/// Karpenter just brought up) leaves all of them unhealthy, with a warning.
pub(super) fn held_to_kubelet(
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
pub(super) fn mixed(
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
pub(super) fn mig_devices(
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
