//! The memory fit of a profile on a node (docs/placement.md, check 10):
//! what one GPU (MIG device, host) of a replica needs, and whether the
//! node's smallest device of the class offers it.
//!
//! A model without a shape needs 1.2 x its weights spread over its GPUs,
//! within 0.9 of each (the seed's rule, kept exactly). A model with one
//! needs its share of the weights, its KV cache and the overhead, within
//! the profile's `gpu_memory_utilization` of each GPU (docs/catalog.md,
//! "Memory fit").

use super::{Fleet, Reason};
use crate::catalog::Profile;

/// Room a replica of a model without a shape needs beyond its weights:
/// 1.2 x the weights in all.
pub const NEED_FACTOR: f64 = 1.2;
/// The share of a device's memory the rule for a model without a shape
/// lets an engine use (vLLM's default `gpu_memory_utilization` when it
/// was written).
pub const USABLE: f64 = 0.9;
const MIB: f64 = 1024.0 * 1024.0;
const GIB: f64 = 1024.0 * MIB;

/// Bytes one device of a replica needs, and the share of the device's
/// memory it may have.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Need {
    pub bytes: f64,
    pub usable: f64,
}

/// The tensor- and pipeline-parallel sizes of a profile's replica: 1 and 1
/// for a CPU-only or MIG profile.
pub fn parallel(p: &Profile) -> (u32, u32) {
    if p.cpu_only() || p.mig_profile.is_some() { (1, 1) } else { split(p, p.gpus_per_node, p.nodes) }
}

/// How a replica of `gpus` GPUs on each of `nodes` nodes is split, as
/// render starts it: tensor parallel within a node and a pipeline stage
/// per node; SGLang runs one tensor-parallel group across all its nodes.
pub fn split(p: &Profile, gpus: u32, nodes: u32) -> (u32, u32) {
    let (gpus, nodes) = (gpus.max(1), nodes.max(1));
    if p.engine.tp_across_nodes { (gpus * nodes, 1) } else { (gpus, nodes) }
}

/// What one device of a replica of this profile needs, when the model
/// gives its size.
pub fn need(p: &Profile) -> Option<Need> {
    let weights = p.memory.weight_bytes?;
    let (tp, pp) = parallel(p);
    Some(match &p.memory.sizing {
        None => Need { bytes: weights * NEED_FACTOR / f64::from(tp * pp), usable: USABLE },
        Some(s) => Need { bytes: s.parts(weights, tp, pp).total(), usable: s.utilization },
    })
}

impl Fleet<'_> {
    /// The memory of the node's smallest device a replica of the profile
    /// would get, MiB: a GPU of the class, a MIG device of the profile, or
    /// the host's for a CPU-only one; 0 when the node does not report it.
    pub fn device_memory_mb(&self, node: u32, p: &Profile) -> u64 {
        let n = self.node(node);
        let class = p.gpu_class.as_deref().unwrap_or_default();
        match &p.mig_profile {
            _ if p.cpu_only() => n.memory_total_mb,
            // A MIG device offers its own memory.
            Some(mig) => n
                .gpus
                .iter()
                .filter(|g| g.class == class && g.in_mig_mode())
                .flat_map(|g| g.mig_devices.iter().filter(|m| &m.profile == mig))
                .map(|m| m.memory_mb)
                .min()
                .unwrap_or(0),
            None => n.gpus.iter().filter(|g| g.class == class).map(|g| g.memory_mb).min().unwrap_or(0),
        }
    }

    /// Whether the replica fits the node's memory: its need per device
    /// within the usable share of the smallest device of the class (or of
    /// the host's memory for a CPU replica). Memory not reported is never
    /// a reason to reject.
    pub fn fit(&self, node: u32, p: &Profile, need: Option<Need>) -> Result<(), Reason> {
        let Some(need) = need else { return Ok(()) };
        let have_mb = self.device_memory_mb(node, p);
        if have_mb == 0 || need.bytes <= need.usable * have_mb as f64 * MIB {
            return Ok(());
        }
        let need_gib = (need.bytes / GIB).ceil() as u64;
        let have_gib = (need.usable * have_mb as f64 / 1024.0).floor() as u64;
        Err(if p.cpu_only() { Reason::HostFit { have_gib, need_gib } } else { Reason::GpuFit { have_gib, need_gib } })
    }
}
