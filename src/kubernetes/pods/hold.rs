//! What a pod holds of its node: its GPUs by index, its MIG devices, its
//! CPUs and memory, held to what the node has.

use super::*;

/// What one pod holds on its node, as allocations there. A pending pod
/// (`pending`) holds the lowest free GPUs (its annotation says what the
/// plan chose, not what the device plugin will give), or the MIG device
/// its annotation names.
pub(super) fn hold(file: &File<'_>, h: &Held, node: &mut Node, report: &mut Report, pending: bool) -> Result<(), Diag> {
    let (model, replica, profile) = identity(file, h.i, &h.labels, &h.annotations, &h.ns, &h.name)?;
    let annotation_error = |key: &'static str, why: String| {
        let mut p = path(file, h.i, &["metadata", "annotations"]);
        p.push(Step::Key(key));
        file.error(
            Code::GpuAnnotation,
            &p,
            format!("pod {}: {key} on `{}`: {why}", h.who(), node.id),
            "this annotation",
            "render writes `<node>=<gpu>,<gpu>...` (`<node>=<gpu>:<device>` for MIG), naming what the pod holds; fix or remove it",
        )
    };
    let mut allocs: Vec<Allocation> = Vec::new();
    // Under GFD's single MIG strategy `nvidia.com/gpu` counts MIG devices.
    let single = !node.gpus.is_empty() && node.gpus.iter().all(crate::inventory::Gpu::in_mig_mode);
    let (whole, mut migs) = if single && h.d.whole > 0 {
        let mut m = h.d.migs.clone();
        m.push((String::new(), h.d.whole));
        (0, m)
    } else {
        (h.d.whole, h.d.migs.clone())
    };
    migs.retain(|m| m.1 > 0);
    // Each vendor's GPUs answer its own resource: `nvidia.com/gpu`, `amd.com/gpu`.
    for (whole, vendor) in [(whole, Vendor::Nvidia), (h.d.amd, Vendor::Amd)] {
        if whole == 0 {
            continue;
        }
        let taken: BTreeSet<u32> =
            node.allocations.iter().filter(|a| a.mig_devices.is_empty()).flat_map(|a| a.gpus.iter().copied()).collect();
        // A pending pod gets what the device plugin gives, the lowest free
        // GPUs; a DRA pod's claim is pinned to what its annotation names.
        let named = match h.annotations.get(keys::GPUS).filter(|_| !pending || h.dra.0 > 0) {
            None => None,
            Some(a) => part(a, &node.id).map_err(|w| annotation_error(keys::GPUS, w))?,
        };
        let gpus: Vec<u32> = match named {
            Some(list) => {
                let mut out = Vec::new();
                for g in list.split(',').map(str::trim).filter(|g| !g.is_empty()) {
                    let g: u32 =
                        g.parse().map_err(|_| annotation_error(keys::GPUS, format!("`{g}` is not a GPU index")))?;
                    if node.gpu_position(g).is_none() {
                        let have = node.gpus.len();
                        return Err(annotation_error(
                            keys::GPUS,
                            format!("GPU {g} is not one of the node's {have} GPUs"),
                        ));
                    }
                    if out.contains(&g) {
                        return Err(annotation_error(keys::GPUS, format!("GPU {g} is named twice")));
                    }
                    out.push(g);
                }
                // A pod asking both vendors' GPUs names both kinds.
                out.retain(|&g| node.gpu_position(g).is_some_and(|p| node.gpus[p].vendor == vendor));
                if (out.len() as u64) < whole {
                    return Err(annotation_error(
                        keys::GPUS,
                        format!("it names {} GPU(s), but the pod's limit is {whole}", out.len()),
                    ));
                }
                out
            }
            None => {
                if !pending {
                    report.assumed.push(h.who());
                }
                node.gpus
                    .iter()
                    .filter(|g| g.vendor == vendor && g.healthy && !taken.contains(&g.index) && !g.in_mig_mode())
                    .map(|g| g.index)
                    .take(whole as usize)
                    .collect()
            }
        };
        let free: Vec<u32> = gpus.iter().copied().filter(|g| !taken.contains(g)).collect();
        if (free.len() as u64) < whole && !pending {
            report.over.push(format!("{} on {} (asks {whole}, holds {})", h.who(), node.id, free.len()));
        }
        if !free.is_empty() {
            allocs.push(Allocation::new(model.clone(), replica, free, Vec::new()));
        }
    }
    if !migs.is_empty() {
        hold_migs(h, node, &migs, (&model, replica), report, &mut allocs, pending)
            .map_err(|w| annotation_error(keys::MIG_DEVICES, w))?;
    }
    // An llmgw replica that holds no GPU (a CPU profile, or a pending pod
    // whose GPUs are taken) still exists; a foreign pod is kept for its
    // CPUs and memory.
    if allocs.is_empty() && (h.llmgw() || h.d.cpus > 0.0 || h.d.memory_mib > 0) {
        allocs.push(Allocation::new(model.clone(), replica, Vec::new(), Vec::new()));
    }
    for (n, mut a) in allocs.into_iter().enumerate() {
        a.profile = profile.clone();
        a.pending = pending;
        // The pod's CPUs and memory, counted once.
        a.cpus = (n == 0 && h.d.cpus > 0.0).then_some(h.d.cpus);
        a.memory_mb = (n == 0 && h.d.memory_mib > 0).then_some(h.d.memory_mib);
        node.allocations.push(a);
    }
    Ok(())
}

/// MIG devices a pod holds: the ones its annotation names (`<gpu>:<index>`,
/// comma-separated), else the lowest free ones of each profile it asks for
/// (an empty profile: any, under the single strategy).
pub(super) fn hold_migs(
    h: &Held,
    node: &Node,
    migs: &[(String, u64)],
    (model, replica): (&str, u32),
    report: &mut Report,
    allocs: &mut Vec<Allocation>,
    pending: bool,
) -> Result<(), String> {
    let held: BTreeSet<(u32, u32)> = node
        .allocations
        .iter()
        .chain(allocs.iter())
        .filter(|a| !a.mig_devices.is_empty())
        .flat_map(|a| a.mig_devices.iter().filter_map(move |m| Some((*a.gpus.first()?, *m))))
        .collect();
    let wanted: u64 = migs.iter().map(|m| m.1).sum();
    let profile_of = |g: u32, m: u32| {
        node.gpu_position(g)
            .and_then(|p| node.gpus[p].mig_devices.iter().find(|d| d.index == m))
            .map(|d| d.profile.as_str())
    };
    let chosen: Vec<(u32, u32)> =
        match h.annotations.get(keys::MIG_DEVICES).map(|a| part(a, &node.id)).transpose()?.flatten() {
            Some(list) => {
                let mut out = Vec::new();
                for d in list.split(',').map(str::trim).filter(|d| !d.is_empty()) {
                    let parsed = d
                        .split_once(':')
                        .and_then(|(g, m)| Some((g.trim().parse::<u32>().ok()?, m.trim().parse::<u32>().ok()?)));
                    let Some((g, m)) = parsed else { return Err(format!("`{d}` is not `<gpu>:<device>`")) };
                    let Some(p) = profile_of(g, m) else {
                        return Err(format!("the node has no MIG device {m} on GPU {g}"));
                    };
                    if !migs.iter().any(|(want, _)| want.is_empty() || want == p) {
                        return Err(format!("MIG device {g}:{m} is a {p}, which the pod does not ask for"));
                    }
                    if out.contains(&(g, m)) {
                        return Err(format!("MIG device {g}:{m} is named twice"));
                    }
                    out.push((g, m));
                }
                if (out.len() as u64) < wanted {
                    return Err(format!("it names {} MIG device(s), but the pod asks for {wanted}", out.len()));
                }
                out
            }
            None => {
                if !pending {
                    report.assumed.push(h.who());
                }
                let mut out = Vec::new();
                for (profile, n) in migs {
                    let free = node
                        .gpus
                        .iter()
                        .filter(|g| g.in_mig_mode() && g.healthy)
                        .flat_map(|g| g.mig_devices.iter().map(move |d| (g.index, d)))
                        .filter(|(_, d)| profile.is_empty() || d.profile == *profile)
                        .map(|(g, d)| (g, d.index))
                        .filter(|d| !held.contains(d) && !out.contains(d))
                        .take(*n as usize)
                        .collect::<Vec<_>>();
                    out.extend(free);
                }
                out
            }
        };
    let free: Vec<(u32, u32)> = chosen.into_iter().filter(|d| !held.contains(d)).collect();
    if (free.len() as u64) < wanted && !pending {
        report.over.push(format!("{} on {} (asks {wanted} MIG, holds {})", h.who(), node.id, free.len()));
    }
    let mut by_gpu: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (g, m) in free {
        by_gpu.entry(g).or_default().push(m);
    }
    for (g, ms) in by_gpu {
        allocs.push(Allocation::new(model.to_string(), replica, vec![g], ms));
    }
    Ok(())
}
