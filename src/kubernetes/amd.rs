//! A node's AMD GPUs: the AMD device plugin's `amd.com/gpu` resource and
//! the AMD GPU node labeller's labels.
//!
//! The labeller (ROCm/k8s-device-plugin, `cmd/k8s-node-labeller`) writes
//! each property twice. Under `amd.com/gpu.<property>` the value itself
//! when every GPU of the node shares it (`amd.com/gpu.product-name=
//! AMD_Instinct_MI300X_OAM`, `amd.com/gpu.vram=192G`), else one label per
//! value holding how many GPUs have it (`amd.com/gpu.vram.64G=2`). Under
//! the older `beta.amd.com/gpu.<property>` always one label per value with
//! its count, and the bare key too when there is one value. The product
//! name is the board's sysfs `product_name` with spaces made `_` and
//! parentheses dropped; the VRAM is whole GiB, rounded, with a `G`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::NodeStatus;

use super::gpus::{At, resource};
use crate::diag::{Code, Diag};
use crate::import::MAX_GPUS_PER_NODE;
use crate::inventory::Gpu;
use crate::vendor::Vendor;

/// The device plugin's resource.
pub const RESOURCE: &str = crate::vendor::AMD_GPU;

/// The values a node's labels give one labeller property, each with how
/// many GPUs have it when the labels say (`None`: the value alone).
pub fn values(labels: &BTreeMap<String, String>, property: &str) -> Vec<(String, Option<u64>)> {
    for prefix in ["amd.com/gpu.", "beta.amd.com/gpu."] {
        let key = format!("{prefix}{property}");
        let counted: Vec<(String, Option<u64>)> = labels
            .iter()
            .filter_map(|(k, v)| {
                let value = k.strip_prefix(&key)?.strip_prefix('.')?;
                Some((value.to_string(), v.trim().parse::<u64>().ok()))
            })
            .filter(|(value, _)| !value.is_empty())
            .collect();
        if !counted.is_empty() {
            return counted;
        }
        if let Some(v) = labels.get(&key).filter(|v| !v.trim().is_empty()) {
            return vec![(v.trim().to_string(), None)];
        }
    }
    Vec::new()
}

/// The labeller's VRAM value, whole GiB (`192G`), as MiB.
pub fn vram_mib(value: &str) -> Option<u64> {
    let gib: u64 = value.trim().strip_suffix('G')?.parse().ok()?;
    gib.checked_mul(1024).filter(|&m| m <= crate::units::MAX_MIB)
}

/// The product name as the board gives it: the labeller's `_` back to
/// spaces, so that it meets the name `discover` reads from sysfs.
pub fn product_name(label_value: &str) -> String {
    label_value.replace('_', " ")
}

/// How many GPUs the per-value labels count, when they do.
fn counted(values: &[(String, Option<u64>)]) -> Option<u64> {
    // Saturating: labels are anyone's to write, and a sum past u64 is
    // refused as too many GPUs, never an overflow.
    values.iter().try_fold(0u64, |sum, (_, n)| n.map(|n| sum.saturating_add(n))).filter(|&n| n > 0)
}

/// The node's AMD GPUs, numbered from `first` (after its NVIDIA ones).
pub fn of(
    at: &At<'_, '_>,
    labels: &BTreeMap<String, String>,
    status: Option<&NodeStatus>,
    first: u32,
    warnings: &mut Vec<Diag>,
) -> Result<Vec<Gpu>, Vec<Diag>> {
    let capacity = resource(at, status.and_then(|s| s.capacity.as_ref()), "capacity", RESOURCE, MAX_GPUS_PER_NODE)?;
    let allocatable =
        resource(at, status.and_then(|s| s.allocatable.as_ref()), "allocatable", RESOURCE, MAX_GPUS_PER_NODE)?;
    let mut names = values(labels, "product-name");
    let ids = values(labels, "device-id");
    let vram = values(labels, "vram");
    // Without the labeller, Karpenter's labels of an AMD instance type
    // (`instance-gpu-manufacturer=amd`): its name, count and MiB a GPU.
    let mut karpenter_memory = None;
    if names.is_empty() && ids.is_empty() && vram.is_empty() {
        let amd = super::gpus::karpenter(labels, "manufacturer").is_some_and(|(_, m)| m.eq_ignore_ascii_case("amd"));
        if let (true, Some((_, name))) = (amd, super::gpus::karpenter(labels, "name")) {
            let number = |what: &str| super::gpus::karpenter(labels, what).and_then(|(_, v)| v.parse::<u64>().ok());
            names = vec![(name.to_string(), Some(number("count").unwrap_or(0).min(MAX_GPUS_PER_NODE + 1)))];
            karpenter_memory = number("memory").filter(|&m| m <= crate::units::MAX_MIB);
        }
    }
    // The labels count GPUs only in their per-value form.
    let labelled = counted(&ids).or_else(|| counted(&names)).or_else(|| counted(&vram)).unwrap_or(0);
    // The labels' count matters only where the kubelet's does not say.
    let by_labels = match (capacity, allocatable) {
        (None, _) => true,
        (Some(0), a) => a.unwrap_or(0) == 0,
        _ => false,
    };
    if by_labels && labelled > MAX_GPUS_PER_NODE {
        return Err(at.resource(
            "capacity",
            RESOURCE,
            format!("its AMD labels count {labelled} GPUs, more than the {MAX_GPUS_PER_NODE} llmgw takes on a node"),
        ));
    }
    let (count, unhealthy) = match (capacity, allocatable) {
        (Some(0), a) if labelled > 0 && a.unwrap_or(0) == 0 => {
            warnings.push(
                Diag::warning(
                    Code::NoDevicePlugin,
                    format!(
                        "node `{}`: its labels count {labelled} AMD GPU(s) but the kubelet advertises amd.com/gpu: 0; all are taken as unhealthy",
                        at.id
                    ),
                )
                .help("the AMD device plugin is not running there: no pod can be given a GPU until it is"),
            );
            (labelled, labelled)
        }
        (Some(c), a) => (c, a.map_or(0, |a| c.saturating_sub(a))),
        (None, _) => (labelled, 0),
    };
    // Memory: the one VRAM value; of several, the smallest (no GPU is
    // promised more than it has).
    let memory = vram.iter().filter_map(|(v, _)| vram_mib(v)).min().or(karpenter_memory).unwrap_or(0);
    // A value that does not read is memory unknown: placement then cannot
    // hold a model to it, which is said.
    let unread: Vec<&str> = vram.iter().map(|(v, _)| v.as_str()).filter(|v| vram_mib(v).is_none()).collect();
    if !unread.is_empty() && count > 0 {
        warnings.push(
            Diag::warning(
                Code::UnreadMemory,
                format!(
                    "node `{}`: amd.com/gpu.vram `{}` is not whole GiB with a G (e.g. 192G); its GPUs' memory is taken as unknown",
                    at.id,
                    crate::term::escape(unread[0])
                ),
            )
            .help("with memory unknown, no model is held to it: a profile may be placed where its weights do not fit"),
        );
    }
    // Names: the product names with their counts in label order; the PCI
    // device id (`0x74a1`, as sysfs spells it) where the board has none
    // (a virtual function).
    let mut named: Vec<(String, u64)> = names.iter().map(|(v, n)| (product_name(v), n.unwrap_or(count))).collect();
    if named.is_empty() {
        named = ids.iter().map(|(v, n)| (format!("0x{}", v.to_ascii_lowercase()), n.unwrap_or(count))).collect();
    }
    let fallback = named.first().map_or_else(|| "AMD GPU".to_string(), |(n, _)| n.clone());
    let mut dealt = named.into_iter().flat_map(|(name, n)| std::iter::repeat_n(name, n as usize));
    let mut gpus: Vec<Gpu> = (0..count as u32)
        .map(|k| {
            let name = dealt.next().unwrap_or_else(|| fallback.clone());
            let mut g = Gpu::named(first + k, &name, memory);
            g.vendor = Vendor::Amd;
            g
        })
        .collect();
    // Allocatable below capacity: the difference is unhealthy, the highest indices.
    for g in gpus.iter_mut().rev().take(unhealthy as usize) {
        g.healthy = false;
    }
    Ok(gpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect()
    }

    #[test]
    fn one_value_is_the_label_itself_several_are_counted() {
        let l = labels(&[
            ("amd.com/gpu.product-name", "AMD_Instinct_MI300X_OAM"),
            ("amd.com/gpu.vram.64G", "2"),
            ("amd.com/gpu.vram.32G", "1"),
            ("beta.amd.com/gpu.product-name.AMD_Instinct_MI300X_OAM", "8"),
        ]);
        assert_eq!(values(&l, "product-name"), [("AMD_Instinct_MI300X_OAM".to_string(), None)]);
        assert_eq!(values(&l, "vram"), [("32G".to_string(), Some(1)), ("64G".to_string(), Some(2))]);
        assert!(values(&l, "device-id").is_empty());
        let huge = labels(&[("beta.amd.com/gpu.vram.1G", "18446744073709551615"), ("beta.amd.com/gpu.vram.2G", "9")]);
        assert_eq!(counted(&values(&huge, "vram")), Some(u64::MAX));
    }

    #[test]
    fn the_older_beta_spelling_is_read_when_the_current_one_is_absent() {
        let l = labels(&[("beta.amd.com/gpu.device-id.6860", "1"), ("beta.amd.com/gpu.vram.16G", "1")]);
        assert_eq!(values(&l, "device-id"), [("6860".to_string(), Some(1))]);
        assert_eq!(counted(&values(&l, "vram")), Some(1));
        let bare = labels(&[("beta.amd.com/gpu.product-name", "AMD_Instinct_MI210")]);
        assert_eq!(values(&bare, "product-name"), [("AMD_Instinct_MI210".to_string(), None)]);
    }

    #[test]
    fn vram_is_whole_gib_and_names_get_their_spaces_back() {
        assert_eq!(vram_mib("192G"), Some(196_608));
        assert_eq!(vram_mib("16G"), Some(16_384));
        assert_eq!(vram_mib("192"), None);
        assert_eq!(vram_mib("99999999999999999G"), None);
        assert_eq!(product_name("AMD_Instinct_MI300X_OAM"), "AMD Instinct MI300X OAM");
        assert_eq!(
            crate::inventory::normalize_class(&product_name("AMD_Instinct_MI300X_OAM")),
            crate::inventory::normalize_class("AMD Instinct MI300X OAM")
        );
    }
}
