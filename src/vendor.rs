//! GPU vendors, and the resource each one's device plugin offers GPUs as.

use serde::Serialize;

/// NVIDIA's device plugin resource, and the key of the taint clouds put on
/// NVIDIA GPU nodes.
pub const NVIDIA_GPU: &str = "nvidia.com/gpu";
/// AMD's device plugin resource (ROCm/k8s-device-plugin), and the key of
/// the taint on AMD GPU nodes.
pub const AMD_GPU: &str = "amd.com/gpu";

/// Who made a GPU: it decides which engines run on it and which device
/// plugin resource a pod asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    #[default]
    Nvidia,
    Amd,
}

impl Vendor {
    pub const ALL: [Vendor; 2] = [Vendor::Nvidia, Vendor::Amd];
    pub fn as_str(self) -> &'static str {
        match self {
            Vendor::Nvidia => "nvidia",
            Vendor::Amd => "amd",
        }
    }
    pub fn parse(s: &str) -> Option<Vendor> {
        Vendor::ALL.into_iter().find(|v| v.as_str() == s)
    }
    pub fn is_nvidia(&self) -> bool {
        *self == Vendor::Nvidia
    }
    /// The resource its device plugin offers GPUs as, and so the key of
    /// the taint clouds put on its GPU nodes (`nvidia.com/gpu`,
    /// `amd.com/gpu`): a pod asking for that resource tolerates it.
    pub fn resource(self) -> &'static str {
        match self {
            Vendor::Nvidia => NVIDIA_GPU,
            Vendor::Amd => AMD_GPU,
        }
    }
}
