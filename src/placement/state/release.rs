//! What `--pack most` asks of the fleet beyond what the order needs: a
//! placement taken back, and the free CPUs and memory it packs into.

use super::{Change, Compiled, Fleet};
use crate::placement::Placement;

impl Fleet<'_> {
    /// Undoes `commit` of the same placement: its GPUs, MIG devices, CPUs
    /// and memory are free again, and its nodes hold one replica of the
    /// current model less. `--pack most` explains a replica it placed by
    /// asking what the fleet looks like without it.
    pub fn release(&mut self, p: &Placement, prof: &Compiled<'_>) -> Vec<Change> {
        let mut changes = Vec::with_capacity(p.nodes.len());
        for a in &p.nodes {
            let ni = a.node as usize;
            let node = self.inv.nodes.get(ni).expect("placement names a fleet node");
            let mut free = None;
            if let [g] = a.gpus[..]
                && !a.mig_devices.is_empty()
            {
                for &m in &a.mig_devices {
                    self.mig_held.remove(&(a.node, g, m));
                }
            } else if let Some(c) = prof.class {
                let before = self.free_of(a.node, Some(c));
                for &g in &a.gpus {
                    if let Some(pos) = node.gpu_position(g) {
                        self.gpu_free[self.gpu_base[ni] as usize + pos] = true;
                    }
                }
                let after = before + a.gpus.len() as u32;
                if let Some(e) = self.free[ni].iter_mut().find(|e| e.0 == c) {
                    e.1 = after;
                }
                free = Some((c, before, after));
            }
            self.cpu_held[ni] = self.cpu_held[ni].saturating_sub(a.cpus_millis.unwrap_or(0));
            self.mem_held[ni] = self.mem_held[ni].saturating_sub(a.memory_mb.unwrap_or(0));
            changes.push(Change { node: a.node, free, allocs_before: self.allocs[ni] });
            self.allocs[ni] = self.allocs[ni].saturating_sub(1);
            let h = &mut self.held[ni];
            if h.0 == self.stamp {
                h.1 = h.1.saturating_sub(1);
            }
        }
        changes
    }

    /// Free CPUs (millicores) and memory (MiB) of a node, where it reports
    /// them: what the `--pack most` model packs replicas' requests into.
    pub fn free_resources(&self, node: u32) -> (Option<u64>, Option<u64>) {
        let ni = node as usize;
        (
            self.cpu_total[ni].map(|t| t.saturating_sub(self.cpu_held[ni])),
            self.mem_total[ni].map(|t| t.saturating_sub(self.mem_held[ni])),
        )
    }

    /// How many replicas of the current model the node holds.
    pub fn held_here(&self, node: u32) -> u32 {
        let h = self.held[node as usize];
        if h.0 == self.stamp { h.1 } else { 0 }
    }

    /// The current model's `replicas_per_node`.
    pub fn per_node(&self) -> u32 {
        self.per_node
    }

    /// Whether the GPU (by index) is healthy, not held and of the class:
    /// a placement of another plan can be taken over only where it is.
    pub fn gpu_is_free(&self, node: u32, gpu: u32, class: u32) -> bool {
        let ni = node as usize;
        let Some(pos) = self.inv.nodes[ni].gpu_position(gpu) else { return false };
        let at = self.gpu_base[ni] as usize + pos;
        self.gpu_free[at] && self.gpu_class[at] == class
    }
}
