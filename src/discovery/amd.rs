//! AMD GPUs, read from the amdgpu driver's sysfs files: ROCm has no
//! library that every node has installed the way NVML comes with the
//! NVIDIA driver, and the kernel's files are there wherever the driver is.
//!
//! `class/drm/card<N>/device/` is the PCI device of DRM card N: `vendor`
//! (`0x1002` for AMD), `device` (the PCI device id), `product_name` (the
//! board's name from its FRU EEPROM; absent or empty on virtual functions
//! and older boards), `mem_info_vram_total` (bytes), `uevent`
//! (`PCI_SLOT_NAME=<bus id>`). Connector entries (`card1-DP-1`) are not
//! cards. An NVIDIA card (`0x10de`) is left to NVML.

use std::path::Path;

use crate::diag::{Code, Diag};
use crate::inventory::Gpu;

/// PCI vendor id of AMD (ATI) GPUs.
pub const AMD_VENDOR: &str = "0x1002";

/// One AMD GPU as sysfs describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AmdGpu {
    /// The DRM card number, for ordering.
    pub card: u32,
    pub name: String,
    pub memory_mb: u64,
    pub pci_bus_id: Option<String>,
    /// `mem_info_vram_total` as written, when it is there but no byte count.
    pub unread_memory: Option<String>,
}

/// The AMD GPUs under a sysfs root, in card order.
pub fn gpus(sys: &Path) -> Vec<AmdGpu> {
    let Ok(entries) = std::fs::read_dir(sys.join("class/drm")) else { return Vec::new() };
    let mut out: Vec<AmdGpu> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name();
            let card = card_number(name.to_str()?)?;
            read_card(&e.path().join("device"), card)
        })
        .collect();
    out.sort_by_key(|g| g.card);
    // Two cards on one PCI device are one GPU.
    out.dedup_by(|b, a| a.pci_bus_id.is_some() && a.pci_bus_id == b.pci_bus_id);
    out
}

/// Whether a DRM card of NVIDIA's (vendor 0x10de) is there: NVML's GPUs,
/// which NVML's absence must not make disappear without a word.
pub fn nvidia_cards(sys: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(sys.join("class/drm")) else { return false };
    entries.filter_map(Result::ok).any(|e| {
        e.file_name().to_str().and_then(card_number).is_some()
            && read_trimmed(&e.path().join("device/vendor")).is_some_and(|v| v.eq_ignore_ascii_case("0x10de"))
    })
}

/// The inventory's GPUs of the cards found, numbered from `first` (after
/// NVML's), each memory that did not read said.
pub fn inventory_gpus(found: Vec<AmdGpu>, first: u32, warnings: &mut Vec<Diag>) -> Vec<Gpu> {
    let mut out = Vec::with_capacity(found.len());
    for (index, a) in (first..).zip(found) {
        if let Some(text) = &a.unread_memory {
            warnings.push(
                Diag::warning(
                    Code::UnreadMemory,
                    format!(
                        "card{}: mem_info_vram_total is `{}`, not a byte count; its memory is taken as unknown",
                        a.card,
                        crate::term::escape(text)
                    ),
                )
                .help(
                    "with memory unknown, no model is held to it: a profile may be placed where its weights do not fit",
                ),
            );
        }
        let mut g = Gpu::named(index, &a.name, a.memory_mb);
        g.vendor = crate::vendor::Vendor::Amd;
        g.pci_bus_id = a.pci_bus_id;
        out.push(g);
    }
    out
}

/// `card12` -> 12; connectors (`card1-DP-1`) and render nodes -> `None`.
fn card_number(entry: &str) -> Option<u32> {
    let digits = entry.strip_prefix("card")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn read_trimmed(path: &Path) -> Option<String> {
    let s = super::read_small(path)?;
    let s = s.trim().trim_matches('\0').trim();
    (!s.is_empty()).then(|| s.to_string())
}

fn read_card(device: &Path, card: u32) -> Option<AmdGpu> {
    let vendor = read_trimmed(&device.join("vendor"))?;
    if !vendor.eq_ignore_ascii_case(AMD_VENDOR) {
        return None;
    }
    // The board's name; else the PCI device id, which names the chip.
    let name = read_trimmed(&device.join("product_name"))
        .filter(|n| !n.chars().any(char::is_control))
        .or_else(|| read_trimmed(&device.join("device")).map(|d| d.to_ascii_lowercase()))
        .unwrap_or_else(|| "AMD GPU".to_string());
    let vram = read_trimmed(&device.join("mem_info_vram_total"));
    let bytes = vram.as_deref().and_then(|b| b.parse::<u64>().ok());
    let unread_memory = vram.filter(|_| bytes.is_none());
    Some(AmdGpu { card, name, memory_mb: bytes.map_or(0, |b| b >> 20), pci_bus_id: bus_id(device), unread_memory })
}

/// The PCI bus id: `PCI_SLOT_NAME` in `uevent`, else the name the
/// `device` link points to (`../../../0000:1b:00.0`).
fn bus_id(device: &Path) -> Option<String> {
    let from_uevent = super::read_small(&device.join("uevent"))
        .and_then(|u| u.lines().find_map(|l| l.strip_prefix("PCI_SLOT_NAME=")).map(|s| s.trim().to_ascii_lowercase()));
    from_uevent.or_else(|| {
        let target = std::fs::read_link(device).ok()?;
        let last = target.file_name()?.to_str()?.to_ascii_lowercase();
        (last.len() == 12 && last.as_bytes()[4] == b':').then_some(last)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn cards_are_read_and_connectors_and_other_vendors_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let sys = dir.path();
        put(sys, "class/drm/card10/device/vendor", "0x1002\n");
        put(sys, "class/drm/card10/device/device", "0x74A1\n");
        put(sys, "class/drm/card10/device/mem_info_vram_total", "206141652992\n");
        put(sys, "class/drm/card10/device/uevent", "DRIVER=amdgpu\nPCI_SLOT_NAME=0000:1B:00.0\n");
        put(sys, "class/drm/card2/device/vendor", "0x1002\n");
        put(sys, "class/drm/card2/device/product_name", "AMD Instinct MI300X OAM\n");
        put(sys, "class/drm/card2/device/mem_info_vram_total", "206141652992\n");
        // An NVIDIA card: NVML reports it.
        put(sys, "class/drm/card0/device/vendor", "0x10de\n");
        // A connector of card 2, and a render node.
        put(sys, "class/drm/card2-DP-1/device/vendor", "0x1002\n");
        put(sys, "class/drm/renderD128/device/vendor", "0x1002\n");
        let got = gpus(sys);
        assert_eq!(
            got,
            vec![
                AmdGpu {
                    card: 2,
                    name: "AMD Instinct MI300X OAM".into(),
                    memory_mb: 196_592,
                    pci_bus_id: None,
                    unread_memory: None
                },
                AmdGpu {
                    card: 10,
                    name: "0x74a1".into(),
                    memory_mb: 196_592,
                    pci_bus_id: Some("0000:1b:00.0".into()),
                    unread_memory: None
                },
            ]
        );
    }

    #[test]
    fn no_drm_class_is_no_gpus() {
        let dir = tempfile::tempdir().unwrap();
        assert!(gpus(dir.path()).is_empty());
        assert_eq!(card_number("card"), None);
        assert_eq!(card_number("card3"), Some(3));
        assert_eq!(card_number("card3-HDMI-A-1"), None);
    }
}
