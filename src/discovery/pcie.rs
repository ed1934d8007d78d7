//! GPU rails: which InfiniBand adapters sit next to the GPUs.
//!
//! On a DGX or HGX node each GPU shares a PCIe switch with its own compute
//! adapter (a rail), while storage and in-band adapters hang elsewhere. A
//! storage port on a subnet of its own would otherwise become a second
//! fabric, and a multi-node replica could be planned over one 200 Gb/s
//! storage port instead of eight 400 Gb/s rails. An adapter is a rail when
//! its PCI device and some GPU's have a nearest common ancestor under
//! `/sys/devices` that is a PCI bridge, not the root complex.

use std::collections::BTreeSet;
use std::path::Path;

use super::gpu::normalize_bus_id;

/// The devices from the root complex down to a PCI device, as sysfs
/// places it: `["pci0000:17", "0000:17:01.0", "0000:18:00.0", ...]`.
fn chain(sysfs: &Path, link: &Path) -> Option<Vec<String>> {
    let real = std::fs::canonicalize(link).ok()?;
    let devices = std::fs::canonicalize(sysfs.join("devices")).ok()?;
    let rel = real.strip_prefix(&devices).ok()?;
    Some(rel.iter().map(|c| c.to_string_lossy().into_owned()).collect())
}

/// Whether two devices meet below the root complex: their chains, less the
/// devices themselves, share the root complex and at least one bridge.
fn share_a_bridge(a: &[String], b: &[String]) -> bool {
    let (a, b) = (&a[..a.len().saturating_sub(1)], &b[..b.len().saturating_sub(1)]);
    a.iter().zip(b).take_while(|(x, y)| x == y).count() >= 2
}

/// The adapters among `hcas` that share a PCIe switch with one of the GPUs
/// (given by PCI bus id).
pub fn rails(sysfs: &Path, gpu_bus_ids: &[&str], hcas: &[&str]) -> BTreeSet<String> {
    let gpus: Vec<Vec<String>> = gpu_bus_ids
        .iter()
        .filter_map(|id| chain(sysfs, &sysfs.join("bus/pci/devices").join(normalize_bus_id(id))))
        .collect();
    hcas.iter()
        .filter(|hca| {
            chain(sysfs, &sysfs.join("class/infiniband").join(hca).join("device"))
                .is_some_and(|h| gpus.iter().any(|g| share_a_bridge(&h, g)))
        })
        .map(|h| (*h).to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::share_a_bridge;

    fn c(s: &str) -> Vec<String> {
        s.split('/').map(str::to_string).collect()
    }

    #[test]
    fn a_switch_is_shared_a_root_complex_is_not() {
        let gpu = c("pci0000:17/0000:17:01.0/0000:18:00.0/0000:19:00.0/0000:1b:00.0");
        let rail = c("pci0000:17/0000:17:01.0/0000:18:00.0/0000:19:01.0/0000:1a:00.0");
        let cpu_nic = c("pci0000:17/0000:17:02.0/0000:30:00.0");
        let flat_gpu = c("pci0000:00/0000:00:04.0");
        let flat_nic = c("pci0000:00/0000:00:05.0");
        assert!(share_a_bridge(&gpu, &rail));
        assert!(!share_a_bridge(&gpu, &cpu_nic));
        assert!(!share_a_bridge(&flat_gpu, &flat_nic));
    }
}
