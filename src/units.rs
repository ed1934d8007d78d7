//! Amounts of CPU and memory: read into one unit each, and written back
//! for people and for JSON, in one place.
//!
//! CPUs are counted in millicores, the finest unit Kubernetes and Slurm
//! schedule; every CPU count read (a node's, a pod's request, a job's, a
//! plan's) is rounded to the nearest millicore, once, here (`millis`,
//! `round_cpus`). Memory is counted in whole MiB: what a node or a device
//! has is rounded down, so it never looks bigger than it is; what a pod
//! asks is rounded up, so it never looks smaller (`mib_of_bytes`,
//! `mib_up_of_bytes`). Either way a value out of range is `None`, for the
//! reader to report with its place in the file.

use serde::{Serialize, Serializer};

/// CPUs as millicores, the finest unit a scheduler counts.
pub fn millis(cpus: f64) -> u64 {
    (cpus * 1000.0).round() as u64
}

/// A CPU count in millicores, written as a whole number when it is one
/// (`16`, not `16.0`), else as a decimal (`0.5`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cpus(pub u64);

impl Serialize for Cpus {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.is_multiple_of(1000) {
            s.serialize_u64(self.0 / 1000)
        } else {
            s.serialize_f64(self.0 as f64 / 1000.0)
        }
    }
}

/// An inventory's CPU count: as `Cpus` writes it where it is a whole
/// number of millicores (`16`, not `16.0`, so a file written reads as it
/// would be typed), else the number as it was read.
pub fn cpu_count<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(c) if (0.0..=f64::from(u32::MAX)).contains(c) && round_cpus(*c) == *c => Cpus(millis(*c)).serialize(s),
        Some(c) => s.serialize_f64(*c),
        None => s.serialize_none(),
    }
}

/// A CPU count from millicores, as people write it: `16`, `95.5`, `0.25`.
pub fn cpus_text(millis: u64) -> String {
    if millis.is_multiple_of(1000) {
        return (millis / 1000).to_string();
    }
    let s = format!("{}.{:03}", millis / 1000, millis % 1000);
    s.trim_end_matches('0').to_string()
}

/// The largest value the inventory loader takes for a MiB count.
pub const MAX_MIB: u64 = i64::MAX as u64;

/// Bytes as whole MiB, rounded down (what a node or device has), or
/// `None` when out of what the loader takes (negative, not finite, above
/// `MAX_MIB`).
pub fn mib_of_bytes(bytes: f64) -> Option<u64> {
    in_range(bytes, (bytes / MIB).floor())
}

/// Bytes as whole MiB, rounded up (what a pod asks), or `None` as
/// `mib_of_bytes`.
pub fn mib_up_of_bytes(bytes: f64) -> Option<u64> {
    in_range(bytes, (bytes / MIB).ceil())
}

const MIB: f64 = 1024.0 * 1024.0;

fn in_range(bytes: f64, mib: f64) -> Option<u64> {
    (bytes >= 0.0 && mib.is_finite() && mib <= MAX_MIB as f64).then_some(mib as u64)
}

/// A CPU count rounded to the nearest millicore, as the count it reads
/// as (`95.5004` -> `95.5`): what an importer keeps of a quantity.
pub fn round_cpus(cpus: f64) -> f64 {
    millis(cpus) as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_out_of_the_loaders_range_is_none() {
        assert_eq!(mib_of_bytes(2.0 * 1024.0 * 1024.0), Some(2));
        assert_eq!(mib_of_bytes(1e300), None);
        assert_eq!(mib_of_bytes(-1.0), None);
        assert_eq!(mib_of_bytes(f64::NAN), None);
        assert_eq!(mib_of_bytes(1.5 * MIB), Some(1));
        assert_eq!(mib_up_of_bytes(1.5 * MIB), Some(2));
        assert_eq!(mib_up_of_bytes(2.0 * MIB), Some(2));
        assert_eq!(mib_up_of_bytes(-1.0), None);
    }

    #[test]
    fn cpus_round_to_the_nearest_millicore_and_read_back_as_written() {
        assert_eq!(millis(95.5), 95_500);
        assert_eq!(millis(0.0004), 0);
        assert_eq!(millis(0.0006), 1);
        assert_eq!(round_cpus(95.500_4), 95.5);
        assert_eq!(cpus_text(95_500), "95.5");
        assert_eq!(cpus_text(16_000), "16");
        assert_eq!(cpus_text(250), "0.25");
        assert_eq!(serde_json::to_string(&Cpus(16_000)).unwrap(), "16");
        assert_eq!(serde_json::to_string(&Cpus(500)).unwrap(), "0.5");
    }
}
