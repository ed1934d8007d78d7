//! What a node is made of beside CPUs and memory: its GPUs, their MIG
//! devices, and the fabrics it is attached to.

use super::*;

#[derive(Clone, Debug, Serialize)]
pub struct Gpu {
    pub index: u32,
    pub name: String,
    /// Written only when not NVIDIA, so inventories of NVIDIA GPUs read as
    /// they always have.
    #[serde(skip_serializing_if = "Vendor::is_nvidia")]
    pub vendor: Vendor,
    #[serde(skip_serializing_if = "is_zero")]
    pub memory_mb: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// The device's name in NVIDIA's DRA driver (`gpu-<minor>`), when the
    /// cluster publishes its GPUs as ResourceSlices.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dra_device: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pci_bus_id: Option<String>,
    /// MIG mode, when the GPU supports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mig: Option<bool>,
    /// The class as written in the file (an override), if any.
    #[serde(rename = "class", skip_serializing_if = "Option::is_none")]
    pub class_override: Option<String>,
    /// Normalised class: the override's, else the name's.
    #[serde(skip)]
    pub class: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nvlink_peers: Vec<u32>,
    #[serde(skip_serializing_if = "is_true")]
    pub healthy: bool,
    /// The MIG devices of a GPU in MIG mode, by index.
    #[serde(rename = "mig_device", skip_serializing_if = "Vec::is_empty")]
    pub mig_devices: Vec<MigDevice>,
}

impl Gpu {
    /// A healthy GPU known by index, name and memory only, its class from
    /// the name: what a scheduler's view of a node gives.
    pub fn named(index: u32, name: &str, memory_mb: u64) -> Gpu {
        Gpu {
            index,
            name: name.to_string(),
            vendor: Vendor::Nvidia,
            memory_mb,
            uuid: None,
            dra_device: None,
            pci_bus_id: None,
            mig: None,
            class_override: None,
            class: normalize_class(name),
            nvlink_peers: Vec::new(),
            healthy: true,
            mig_devices: Vec::new(),
        }
    }

    /// MIG mode is on: CUDA cannot use the GPU whole, only its MIG devices.
    pub fn in_mig_mode(&self) -> bool {
        self.mig == Some(true)
    }
}

/// One MIG device of a GPU: a slice with its own memory and compute.
#[derive(Clone, Debug, Serialize)]
pub struct MigDevice {
    pub index: u32,
    /// As NVML names it: "3g.40gb".
    pub profile: String,
    #[serde(skip_serializing_if = "is_zero")]
    pub memory_mb: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// Its name in NVIDIA's DRA driver (`gpu-0-mig-1g12gb-19-0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dra_device: Option<String>,
}

impl MigDevice {
    /// A device known by its place and profile only.
    pub fn new(index: u32, profile: impl Into<String>, memory_mb: u64) -> MigDevice {
        MigDevice { index, profile: profile.into(), memory_mb, uuid: None, dra_device: None }
    }
}

/// What a fabric is made of. A multi-node replica is tried on NVLink
/// domains first: tensor parallelism over NVLink is several times faster
/// than over a network.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FabricKind {
    #[default]
    Infiniband,
    Roce,
    Nvlink,
}

impl FabricKind {
    pub const ALL: [FabricKind; 3] = [FabricKind::Infiniband, FabricKind::Roce, FabricKind::Nvlink];
    pub fn as_str(self) -> &'static str {
        match self {
            FabricKind::Infiniband => "infiniband",
            FabricKind::Roce => "roce",
            FabricKind::Nvlink => "nvlink",
        }
    }
    pub fn parse(s: &str) -> Option<FabricKind> {
        FabricKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
    pub(super) fn is_default(&self) -> bool {
        *self == FabricKind::Infiniband
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Fabric {
    pub name: String,
    /// Absent in a file: InfiniBand, what every fabric was before kinds.
    #[serde(skip_serializing_if = "FabricKind::is_default")]
    pub kind: FabricKind,
    /// The node's adapters on it; `None`: not reported (an import from a
    /// scheduler cannot know them), never a reason to reject.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hcas: Option<Vec<String>>,
}

/// The fabric of an NVLink domain, from its clique (`<ClusterUUID>.<CliqueID>`,
/// as GPU Feature Discovery's `nvidia.com/gpu.clique` label and NVML's
/// fabric info give it; compared whole, since two racks may share a
/// CliqueID): `nvl-` and the value, sanitised, cut to 63 characters with a
/// short hash of the whole value when it does not fit.
pub fn nvlink_fabric_name(clique: &str) -> String {
    let clean: String = clique
        .chars()
        .flat_map(char::to_lowercase)
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-') { c } else { '-' })
        .collect();
    let name = format!("nvl-{clean}");
    if name.len() <= 63 && clean == clique {
        return name;
    }
    // Cut, or changed by sanitising (two values could now read alike).
    let cut: String = name.chars().take(52).collect();
    format!("{cut}-{}", crate::names::short_hash(clique, 10))
}

impl Fabric {
    /// A network fabric known by name only (adapters not reported).
    pub fn named(name: impl Into<String>) -> Fabric {
        Fabric { name: name.into(), kind: FabricKind::Infiniband, hcas: None }
    }
}
