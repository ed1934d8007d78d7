//! What a node offers a profile: the checks a node must pass, in the order
//! the seed runs them, and the GPUs and MIG devices a placement takes.

use super::{Compiled, Fleet, MIB};
use crate::placement::{Assign, Reason};

impl Fleet<'_> {
    /// CPUs and free memory, the last checks (docs/placement.md): a profile
    /// that says `cpus` / `memory_gb` needs that much free; one that does
    /// not needs one free CPU where the node reports CPUs, and some free
    /// memory where it reports memory. What a node does not report is
    /// never checked.
    pub fn resource_check(&self, node: u32, p: &Compiled<'_>) -> Result<(), Reason> {
        let ni = node as usize;
        let serving = &p.profile.serving;
        if let Some(total) = self.cpu_total[ni] {
            let free = total.saturating_sub(self.cpu_held[ni]);
            match serving.cpus {
                Some(c) if free < u64::from(c) * 1000 => return Err(Reason::Cpus { free_millis: free }),
                None if free < 1000 => return Err(Reason::NoCpus),
                _ => {}
            }
        }
        if let Some(total) = self.mem_total[ni] {
            let free = total.saturating_sub(self.mem_held[ni]);
            match serving.memory_gb {
                Some(gb) if free < gb.saturating_mul(1024) => return Err(Reason::FreeMemory { free_gib: free / 1024 }),
                // A replica given no memory at all would be rendered with no
                // request: Kubernetes then admits it anywhere, and a Slurm job
                // without --mem gets the site's default, often the whole node.
                None if free == 0 => return Err(Reason::NoMemory),
                _ => {}
            }
        }
        Ok(())
    }

    /// What a replica asks of a node it is placed on, given the GPUs (or
    /// MIG device) it takes there: the profile's `cpus` / `memory_gb`, else
    /// the node's CPUs and memory in proportion to its GPUs (a CPU-only
    /// replica: all free CPUs on a node without GPUs, else one GPU's share;
    /// its memory what the weights need when the model says, else as its
    /// CPUs), capped at what is free; whole CPUs (at least one), MiB.
    pub fn assign(&self, node: u32, p: &Compiled<'_>, gpus: Vec<u32>, mig_devices: Vec<u32>) -> Assign {
        let ni = node as usize;
        let n = self.node(node);
        let serving = &p.profile.serving;
        // The share of the node a GPU replica's GPUs are.
        let gpu_share = || -> f64 {
            let count = n.gpus.len().max(1) as f64;
            match (gpus.as_slice(), mig_devices.as_slice()) {
                ([g], [m]) => {
                    let Some(gpu) = n.gpu_position(*g).map(|i| &n.gpus[i]) else { return 1.0 / count };
                    let device = gpu.mig_devices.iter().find(|d| d.index == *m);
                    let part = match device {
                        Some(d) if d.memory_mb > 0 && gpu.memory_mb > 0 => {
                            (d.memory_mb as f64 / gpu.memory_mb as f64).min(1.0)
                        }
                        _ => 1.0 / gpu.mig_devices.len().max(1) as f64,
                    };
                    part / count
                }
                _ => gpus.len() as f64 / count,
            }
        };
        let cpu_only = p.profile.cpu_only();
        let cpus_millis = self.cpu_total[ni].map(|total| {
            let free = total.saturating_sub(self.cpu_held[ni]);
            let want = match serving.cpus {
                Some(c) => return u64::from(c) * 1000,
                None if cpu_only && n.gpus.is_empty() => free,
                None if cpu_only => total / n.gpus.len() as u64,
                None => (total as f64 * gpu_share()) as u64,
            };
            let whole = want.min(free) / 1000 * 1000;
            if whole == 0 && free >= 1000 { 1000 } else { whole }
        });
        let memory_mb = self.mem_total[ni].map(|total| {
            let free = total.saturating_sub(self.mem_held[ni]);
            let want = match serving.memory_gb {
                Some(gb) => return gb.saturating_mul(1024),
                None if cpu_only => match p.need {
                    Some(need) => (need.bytes / MIB) as u64,
                    None if n.gpus.is_empty() => free,
                    None => total / n.gpus.len() as u64,
                },
                None => (total as f64 * gpu_share()) as u64,
            };
            want.min(free)
        });
        Assign { node, share: crate::share::Share { gpus, mig_devices, cpus_millis, memory_mb } }
    }

    /// The checks after the GPU count that do not change while a plan is
    /// made: the engine runs on the vendor of the node's GPUs of the class,
    /// then the memory fit (see `memory`).
    pub fn fit_check(&self, node: u32, p: &Compiled<'_>) -> Result<(), Reason> {
        self.vendor_check(node, p)?;
        self.fit(node, p.profile, p.need)
    }

    /// An engine built for one vendor's GPUs (TensorRT-LLM: CUDA only)
    /// cannot use another's, however many are free.
    pub(super) fn vendor_check(&self, node: u32, p: &Compiled<'_>) -> Result<(), Reason> {
        let prof = p.profile;
        let Some(class) = prof.gpu_class.as_deref() else { return Ok(()) };
        if prof.engine.runs_on_every_vendor() {
            return Ok(());
        }
        match self.node(node).gpus.iter().find(|g| g.class == class && !prof.engine.runs_on(g.vendor)) {
            Some(g) => Err(Reason::Vendor(g.vendor)),
            None => Ok(()),
        }
    }

    /// Whether a MIG device is held (by the inventory or this plan).
    pub fn mig_taken(&self, node: u32, gpu: u32, mig: u32) -> bool {
        self.mig_held.contains(&(node, gpu, mig))
    }

    /// The free MIG devices of the profile's MIG profile on the node's
    /// healthy GPUs of its class, as (GPU index, MIG index), lowest first.
    pub fn free_migs(&self, node: u32, p: &Compiled<'_>) -> Vec<(u32, u32)> {
        let (Some(mig), Some(class)) = (&p.profile.mig_profile, p.profile.gpu_class.as_deref()) else {
            return Vec::new();
        };
        let n = self.node(node);
        n.gpus
            .iter()
            .filter(|g| g.healthy && g.in_mig_mode() && g.class == class)
            .flat_map(|g| g.mig_devices.iter().filter(|m| &m.profile == mig).map(move |m| (g.index, m.index)))
            .filter(|&(g, m)| !self.mig_held.contains(&(node, g, m)))
            .collect()
    }

    pub fn free_of(&self, node: u32, class: Option<u32>) -> u32 {
        let Some(c) = class else { return 0 };
        self.free[node as usize].iter().find(|e| e.0 == c).map_or(0, |e| e.1)
    }

    /// Whether the node is known to hold the profile's weights.
    pub fn holds(&self, node: u32, p: &Compiled<'_>) -> bool {
        p.holders.binary_search(&node).is_ok()
    }

    /// The checks that do not change while a plan is made, in the order of
    /// docs/placement.md:
    /// selector, taints, engine, memory, disk.
    pub fn static_check(&self, node: u32, p: &Compiled<'_>) -> Result<(), Reason> {
        let n = self.node(node);
        let prof = p.profile;
        for (i, (k, v)) in prof.node_selector.iter().enumerate() {
            if n.labels.get(k) != Some(v) {
                return Err(Reason::Selector(i as u32));
            }
        }
        // Taints, before the engine: a workload that does not tolerate one
        // never schedules there, whatever else fits.
        if let Some(&t) = self.node_taints[node as usize].iter().find(|&&t| !p.tolerates[t as usize]) {
            return Err(Reason::Taint(t));
        }
        // A node that reports no engines is an older agent: never excluded.
        if let Some(set) = self.engine_sets[node as usize]
            && set & p.engine == 0
        {
            return Err(Reason::Engine);
        }
        // Unreported memory is never a reason to reject.
        if prof.min_memory_gb > 0 && n.memory_total_mb > 0 {
            let have_gb = n.memory_total_mb / 1024;
            if have_gb < prof.min_memory_gb {
                return Err(Reason::Memory { have_gb });
            }
        }
        // Room for the weights, only on a node that would have to fetch
        // them, and only where the node reports its disk at all.
        if prof.min_disk_gb > 0
            && prof.source.is_some()
            && !self.holds(node, p)
            && let Some(d) = n.disk.as_ref().filter(|d| d.total_bytes > 0)
        {
            let have_gb = d.free_bytes >> 30;
            if have_gb < prof.min_disk_gb {
                return Err(Reason::Disk { have_gb });
            }
        }
        Ok(())
    }

    /// Chooses `want` of the node's free GPUs of `class`.
    ///
    /// Within a node, a tensor-parallel group that has to fall back to PCIe
    /// for its all-reduces runs several times slower, so a set joined by
    /// NVLink is preferred: each free GPU in index order seeds a group grown
    /// from its peers in their listed order; the first group big enough wins.
    /// Without one, the lowest free indices.
    pub fn pick_gpus(&self, node: u32, class: u32, want: u32) -> Vec<u32> {
        let n = self.node(node);
        let base = self.gpu_base[node as usize] as usize;
        let is_free = |pos: usize| self.gpu_free[base + pos] && self.gpu_class[base + pos] == class;
        let want = want as usize;
        if want == 1 {
            return (0..n.gpus.len()).find(|&p| is_free(p)).map(|p| vec![n.gpus[p].index]).unwrap_or_default();
        }
        let mut free: Vec<usize> = Vec::with_capacity(n.gpus.len());
        for p in 0..n.gpus.len() {
            if is_free(p) {
                free.push(p);
            }
        }
        let mut group: Vec<u32> = Vec::with_capacity(want);
        for &seed in &free {
            let seed_index = n.gpus[seed].index;
            group.clear();
            group.push(seed_index);
            for &peer in &n.gpus[seed].nvlink_peers {
                if peer == seed_index || group.contains(&peer) {
                    continue;
                }
                if n.gpu_position(peer).is_some_and(is_free) {
                    group.push(peer);
                    if group.len() == want {
                        group.sort_unstable();
                        return group;
                    }
                }
            }
        }
        free.iter().take(want).map(|&p| n.gpus[p].index).collect()
    }
}
