//! Amounts of CPU and memory: read into one unit each, and written back
//! for people and for JSON, in one place.
//!
//! CPUs are counted in millicores, the finest unit Kubernetes and Slurm
//! schedule; a count read from a number is rounded to the nearest
//! millicore. Memory is counted in whole MiB; bytes are rounded down, so
//! a node never looks bigger than it is.

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

/// Bytes as whole MiB, or `None` when out of what the loader takes
/// (negative, not finite, above `MAX_MIB`).
pub fn mib_of_bytes(bytes: f64) -> Option<u64> {
    let mib = (bytes / (1024.0 * 1024.0)).floor();
    (mib.is_finite() && mib >= 0.0 && mib <= MAX_MIB as f64).then_some(mib as u64)
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
    }
}
