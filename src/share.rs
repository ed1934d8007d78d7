//! A replica's share of one node: the GPUs, MIG devices, CPUs and memory
//! it holds there. Placement decides it (`placement::Assign`), the plan
//! writes it and reads it back (`plan::At`), and render asks exactly it
//! of the scheduler; all three hold this one shape.

use serde::Serialize;

use crate::units::Cpus;

/// What a replica holds of one node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Share {
    /// Sorted GPU indices; empty for a CPU-only replica.
    pub gpus: Vec<u32>,
    /// For a MIG profile: the MIG devices of the one GPU in `gpus`.
    pub mig_devices: Vec<u32>,
    /// CPUs in millicores (docs/placement.md, "CPUs and memory"); `None`
    /// where the node does not report CPUs, or the plan does not say.
    pub cpus_millis: Option<u64>,
    /// MiB; `None` where the node does not report memory, or the plan does
    /// not say.
    pub memory_mb: Option<u64>,
}

/// One node of a replica as the plan document writes it: `node`, then
/// `rank` and `hcas` for a new placement (not for one that already runs),
/// then the share. The keys and their order are the plan's format
/// (docs/placement.md), read back by `plan::read`.
#[derive(Serialize)]
pub struct ShareJson<'a> {
    pub node: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    pub gpus: &'a [u32],
    /// Only on a MIG placement: the MIG devices of the one GPU.
    #[serde(skip_serializing_if = "<[u32]>::is_empty")]
    pub mig_devices: &'a [u32],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hcas: Option<&'a [String]>,
    /// What the replica asks of the node, where the node reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpus: Option<Cpus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
}

impl<'a> ShareJson<'a> {
    /// `node`'s share as the plan writes it, without rank or adapters.
    pub fn of(
        node: &'a str,
        gpus: &'a [u32],
        mig_devices: &'a [u32],
        cpus: Option<u64>,
        memory_mb: Option<u64>,
    ) -> Self {
        ShareJson { node, rank: None, gpus, mig_devices, hcas: None, cpus: cpus.map(Cpus), memory_mb }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_replica_has_no_rank_or_adapters_and_a_placed_one_has_both() {
        let running = ShareJson::of("n1", &[0, 1], &[], Some(1500), None);
        assert_eq!(serde_json::to_string(&running).unwrap(), r#"{"node":"n1","gpus":[0,1],"cpus":1.5}"#);
        let hcas = ["mlx5_0".to_string()];
        let placed = ShareJson { rank: Some(0), hcas: Some(&hcas), ..ShareJson::of("n1", &[3], &[2], None, Some(64)) };
        assert_eq!(
            serde_json::to_string(&placed).unwrap(),
            r#"{"node":"n1","rank":0,"gpus":[3],"mig_devices":[2],"hcas":["mlx5_0"],"memory_mb":64}"#
        );
    }
}
