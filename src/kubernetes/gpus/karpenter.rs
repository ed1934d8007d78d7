//! GPU facts Karpenter's labels give (instance type, GPU name, count and
//! memory) where GPU feature discovery has not labelled a node.

use super::*;

/// Cloud accelerator labels without GFD, and what each stands for: the
/// product name NVML reports (so the class matches what `discover` writes)
/// and its memory in MiB. GKE's `cloud.google.com/gke-accelerator` values.
pub const ALIASES: &[(&str, &str, u64)] = &[
    ("nvidia-h100-80gb", "NVIDIA H100 80GB HBM3", 81559),
    ("nvidia-h100-mega-80gb", "NVIDIA H100 80GB HBM3", 81559),
    ("nvidia-h200-141gb", "NVIDIA H200", 143771),
    ("nvidia-a100-80gb", "NVIDIA A100-SXM4-80GB", 81920),
    ("nvidia-tesla-a100", "NVIDIA A100-SXM4-40GB", 40960),
    ("nvidia-l4", "NVIDIA L4", 23034),
    ("nvidia-tesla-t4", "Tesla T4", 15360),
    ("nvidia-tesla-v100", "Tesla V100-SXM2-16GB", 16384),
    ("nvidia-tesla-p100", "Tesla P100-PCIE-16GB", 16280),
    ("nvidia-tesla-p4", "Tesla P4", 7611),
    ("nvidia-tesla-k80", "Tesla K80", 11441),
    ("nvidia-b200", "NVIDIA B200", 183359),
];

/// EKS without GPU Feature Discovery: Karpenter labels each node with its
/// EC2 instance type's GPUs (`karpenter.k8s.aws/instance-gpu-name=l4`,
/// `-count`, `-memory` in MiB a GPU, `-manufacturer`); EKS Auto Mode (a
/// managed Karpenter) writes the same under `eks.amazonaws.com/`. EC2 names
/// a GPU by its model only (`a100` on a p4d and a p4de alike): this table
/// gives the product NVML reports, by name and, where one name covers two
/// products, by the memory EC2 gives (MiB; 0: any), so that the classes
/// meet those `discover` writes.
pub const KARPENTER: &[(&str, u64, &str)] = &[
    ("a100", 40960, "NVIDIA A100-SXM4-40GB"),
    ("a100", 81920, "NVIDIA A100-SXM4-80GB"),
    ("h100", 0, "NVIDIA H100 80GB HBM3"),
    ("h200", 0, "NVIDIA H200"),
    ("b200", 0, "NVIDIA B200"),
    ("l4", 0, "NVIDIA L4"),
    ("l40s", 0, "NVIDIA L40S"),
    ("a10g", 0, "NVIDIA A10G"),
    ("t4", 0, "Tesla T4"),
    ("t4g", 0, "NVIDIA T4G"),
    ("v100", 16384, "Tesla V100-SXM2-16GB"),
    ("v100", 32768, "Tesla V100-SXM2-32GB"),
    ("k80", 0, "Tesla K80"),
    ("m60", 0, "Tesla M60"),
];

/// The label prefixes of Karpenter's instance labels: the project's, and
/// EKS Auto Mode's.
pub(super) const KARPENTER_PREFIXES: [&str; 2] = ["karpenter.k8s.aws/", "eks.amazonaws.com/"];

/// A Karpenter instance label (`instance-gpu-name`, ...) and its key, under
/// whichever prefix the node carries it.
pub(crate) fn karpenter<'l>(labels: &'l BTreeMap<String, String>, what: &str) -> Option<(String, &'l str)> {
    KARPENTER_PREFIXES.iter().find_map(|p| {
        let key = format!("{p}instance-gpu-{what}");
        labels.get(&key).map(|v| (key, v.trim()))
    })
}

/// Whether GPU Feature Discovery labelled the node's NVIDIA GPUs.
pub(super) fn has_gfd(labels: &BTreeMap<String, String>) -> bool {
    labels.contains_key("nvidia.com/gpu.product") || labels.contains_key("nvidia.com/gpu.count")
}

/// The Karpenter labels a node's NVIDIA GPUs are read from: only where GFD
/// did not label it, and only when the manufacturer they name is NVIDIA.
pub(super) fn karpenter_nvidia(labels: &BTreeMap<String, String>) -> bool {
    !has_gfd(labels)
        && karpenter(labels, "name").is_some()
        && karpenter(labels, "manufacturer").is_none_or(|(_, m)| m.eq_ignore_ascii_case("nvidia"))
}

/// The product NVML names for a Karpenter GPU name and memory: the
/// table's, else the name as EC2 gives it.
pub fn karpenter_product(name: &str, memory_mb: u64) -> String {
    let name = name.to_ascii_lowercase();
    let rows: Vec<&(&str, u64, &str)> = KARPENTER.iter().filter(|(n, _, _)| *n == name).collect();
    rows.iter()
        .find(|(_, mb, _)| *mb == memory_mb)
        .or_else(|| rows.iter().find(|(_, mb, _)| *mb == 0))
        .or_else(|| rows.first())
        .map_or(name.clone(), |(_, _, product)| (*product).to_string())
}
