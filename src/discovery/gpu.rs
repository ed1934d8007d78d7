//! GPUs: the facts NVML gives, behind a trait so tests can supply a machine.

use std::collections::BTreeSet;
use std::path::Path;

/// What the GPU source says about one GPU.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuFacts {
    pub index: u32,
    pub name: String,
    #[serde(default)]
    pub memory_mb: u64,
    #[serde(default)]
    pub uuid: Option<String>,
    #[serde(default)]
    pub pci_bus_id: Option<String>,
    /// `Some(true)` when MIG mode is on; `None` when the GPU has no MIG.
    #[serde(default)]
    pub mig: Option<bool>,
    /// Remote PCI bus ids of the GPU's active NVLinks.
    #[serde(default)]
    pub active_links: Vec<String>,
    /// The MIG devices of a GPU in MIG mode.
    #[serde(default)]
    pub mig_devices: Vec<MigFacts>,
    /// Its multi-node NVLink fabric (GB200/GB300 NVL72), as NVML's GPU
    /// fabric info gives it; `None` on GPUs without one.
    #[serde(default)]
    pub fabric: Option<FabricFacts>,
}

/// NVML's GPU fabric info: the NVLink domain's cluster UUID and the
/// clique (partition) within it, and whether the GPU has joined it.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FabricFacts {
    pub cluster_uuid: String,
    pub clique_id: u32,
    /// Joined the fabric: registration completed, with success.
    pub completed: bool,
}

/// The clique (`<ClusterUUID>.<CliqueID>`) a node's GPUs are in: the one
/// every GPU that completed fabric registration agrees on (a zero cluster
/// UUID is no fabric), as GPU Feature Discovery decides its label.
pub fn clique(facts: &[GpuFacts]) -> Option<String> {
    let mut seen = facts
        .iter()
        .filter_map(|g| g.fabric.as_ref())
        .filter(|f| f.completed && f.cluster_uuid.chars().any(|c| c.is_ascii_hexdigit() && c != '0'))
        .map(|f| format!("{}.{}", f.cluster_uuid, f.clique_id));
    let first = seen.next()?;
    seen.all(|c| c == first).then_some(first)
}

/// Reads one GPU's fabric info through NVML, where the driver has the call.
/// nvml-wrapper wraps no fabric call, so this is llmgw's one raw FFI call.
#[allow(unsafe_code)]
fn nvml_fabric(nvml: &nvml_wrapper::Nvml, dev: &nvml_wrapper::Device<'_>) -> Option<FabricFacts> {
    use nvml_wrapper_sys::bindings::{
        NVML_GPU_FABRIC_STATE_COMPLETED, nvmlGpuFabricInfo_t, nvmlReturn_enum_NVML_SUCCESS,
    };
    let lib = nvml.lib();
    // Drivers before the call existed: no fabric to report.
    lib.nvmlDeviceGetGpuFabricInfo.as_ref().ok()?;
    let mut info = nvmlGpuFabricInfo_t { clusterUuid: [0; 16], status: 0, cliqueId: 0, state: 0 };
    // SAFETY: the function is loaded (checked above), the handle is the
    // live device's, and `info` is a valid, writable struct of the type
    // the call fills.
    let ret = unsafe { lib.nvmlDeviceGetGpuFabricInfo(dev.handle(), &raw mut info) };
    if ret != nvmlReturn_enum_NVML_SUCCESS {
        return None;
    }
    let u = info.clusterUuid;
    let hex = |r: std::ops::Range<usize>| u[r].iter().map(|b| format!("{b:02x}")).collect::<String>();
    Some(FabricFacts {
        cluster_uuid: format!("{}-{}-{}-{}-{}", hex(0..4), hex(4..6), hex(6..8), hex(8..10), hex(10..16)),
        clique_id: info.cliqueId,
        completed: u32::from(info.state) == NVML_GPU_FABRIC_STATE_COMPLETED
            && info.status == nvmlReturn_enum_NVML_SUCCESS,
    })
}

/// One MIG device, as NVML describes it.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MigFacts {
    pub index: u32,
    /// "3g.40gb", from the device name "NVIDIA A100-SXM4-80GB MIG 3g.40gb".
    pub profile: String,
    #[serde(default)]
    pub memory_mb: u64,
    #[serde(default)]
    pub uuid: Option<String>,
}

/// The MIG profile in a MIG device's name: the word after "MIG".
pub fn mig_profile(name: &str) -> Option<String> {
    let mut words = name.split_whitespace();
    words.find(|w| *w == "MIG")?;
    words.next().map(str::to_string)
}

/// GPU facts from a JSON file (`discover --gpu-facts`): a machine described
/// rather than probed, for tests and dry runs.
pub struct FromFile(Vec<GpuFacts>);

impl FromFile {
    pub fn load(path: &Path) -> Result<FromFile, Vec<crate::diag::Diag>> {
        let src = crate::load::read(path).map_err(|d| vec![d])?;
        serde_json::from_str(src.text()).map(FromFile).map_err(|e| {
            let at = crate::source::offset_of(src.text(), e.line(), e.column());
            vec![
                crate::diag::Diag::error(crate::diag::Code::Syntax, format!("{} is not a list of GPU facts: {e}", path.display()))
                    .at(&src, crate::doc::Span::new(at, at), "here")
                    .help("write [{\"index\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", \"pci_bus_id\": \"0000:18:00.0\", \"active_links\": []}]"),
            ]
        })
    }
}

impl GpuSource for FromFile {
    fn gpus(&self) -> Result<Vec<GpuFacts>, String> {
        Ok(self.0.clone())
    }
}

/// Where GPU facts come from: NVML on a real machine, a fixture in tests.
pub trait GpuSource {
    /// The GPUs, or why there are none to report (no library, no driver).
    fn gpus(&self) -> Result<Vec<GpuFacts>, String>;
}

/// NVML_NVLINK_MAX_LINKS in nvml.h (Hopper has 18 links per GPU).
const NVLINK_MAX_LINKS: u32 = 18;

/// NVML, loaded at run time: a machine without `libnvidia-ml.so.1`, or with
/// it but no driver, is a CPU-only node.
pub struct Nvml;

impl GpuSource for Nvml {
    fn gpus(&self) -> Result<Vec<GpuFacts>, String> {
        use nvml_wrapper::error::NvmlError;
        let nvml = nvml_wrapper::Nvml::init().map_err(|e| match e {
            NvmlError::LibloadingError(_) => "the NVML library (libnvidia-ml.so.1) is not installed".to_string(),
            NvmlError::DriverNotLoaded => "the NVIDIA driver is not loaded".to_string(),
            other => format!("NVML could not start: {other}"),
        })?;
        let count = nvml.device_count().map_err(|e| format!("NVML could not count GPUs: {e}"))?;
        let mut out = Vec::new();
        for i in 0..count {
            let Ok(dev) = nvml.device_by_index(i) else {
                continue;
            };
            let mig = dev.mig_mode().ok().map(|m| m.current == 1);
            let mut links = Vec::new();
            if mig != Some(true) {
                for l in 0..NVLINK_MAX_LINKS {
                    let link = dev.link_wrapper_for(l);
                    if link.is_active().unwrap_or(false) {
                        // remote_device_type() is unreliable (always Unknown):
                        // the remote is classified by its bus id instead.
                        if let Ok(pci) = link.remote_pci_info() {
                            links.push(pci.bus_id);
                        }
                    }
                }
            }
            // mig_device_count() is the most the GPU can have, not how many
            // it has: every index is asked, and the missing ones skipped.
            let mut mig_devices = Vec::new();
            if mig == Some(true) {
                for m in 0..dev.mig_device_count().unwrap_or(0) {
                    let Ok(md) = dev.mig_device_by_index(m) else { continue };
                    let name = md.name().unwrap_or_default();
                    mig_devices.push(MigFacts {
                        index: m,
                        profile: mig_profile(&name).unwrap_or(name),
                        memory_mb: md.memory_info().map_or(0, |x| x.total >> 20),
                        uuid: md.uuid().ok(),
                    });
                }
            }
            out.push(GpuFacts {
                index: dev.index().unwrap_or(i),
                name: dev.name().unwrap_or_else(|_| "unknown".into()),
                memory_mb: dev.memory_info().map_or(0, |m| m.total >> 20),
                uuid: dev.uuid().ok(),
                pci_bus_id: dev.pci_info().ok().map(|p| p.bus_id),
                mig,
                active_links: links,
                mig_devices,
                fabric: nvml_fabric(&nvml, &dev),
            });
        }
        Ok(out)
    }
}

/// PCI bus ids as sysfs spells them: lower case, a 4-digit domain
/// (NVML writes `00000000:18:00.0`, sysfs `0000:18:00.0`).
pub fn normalize_bus_id(id: &str) -> String {
    let id = id.trim().to_ascii_lowercase();
    match id.split_once(':') {
        Some((domain, rest)) if domain.len() > 4 && domain.starts_with("0000") => {
            format!("{}:{rest}", &domain[domain.len() - 4..])
        }
        _ => id,
    }
}

/// NVLink peers (docs/inventory.md, "What discover writes"): a link to a local GPU makes it a peer; a link to
/// an NVSwitch, or to a device that is not visible, puts the GPU on the
/// switch, and all switch-attached GPUs are mutual peers. A MIG-enabled GPU
/// has no peers.
pub fn nvlink_peers(gpus: &[GpuFacts], sysfs_root: &Path) -> Vec<Vec<u32>> {
    let bus: Vec<Option<String>> = gpus.iter().map(|g| g.pci_bus_id.as_deref().map(normalize_bus_id)).collect();
    let mut peers: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); gpus.len()];
    let mut on_switch: Vec<usize> = Vec::new();
    for (i, g) in gpus.iter().enumerate() {
        if g.mig == Some(true) {
            continue;
        }
        let mut switched = false;
        for remote in &g.active_links {
            let remote = normalize_bus_id(remote);
            if let Some(j) = bus.iter().position(|b| b.as_deref() == Some(remote.as_str())) {
                // NVML reports each end of a link from its own GPU, so each
                // GPU's list comes from its own links.
                if j != i && gpus[j].mig != Some(true) {
                    peers[i].insert(gpus[j].index);
                }
            } else if remote == "ffff:ff:ff.0" || remote == "ffffffff:ff:ff.0" || is_nvswitch(sysfs_root, &remote) {
                switched = true;
            }
        }
        if switched {
            on_switch.push(i);
        }
    }
    for &i in &on_switch {
        for &j in &on_switch {
            if i != j {
                peers[i].insert(gpus[j].index);
            }
        }
    }
    peers.into_iter().map(|s| s.into_iter().collect()).collect()
}

/// PCI class 0x0680xx is a bridge of class "other": NVSwitch.
fn is_nvswitch(sysfs_root: &Path, bus_id: &str) -> bool {
    let path = sysfs_root.join("bus/pci/devices").join(bus_id).join("class");
    super::read_small(&path).is_some_and(|c| c.trim().to_ascii_lowercase().starts_with("0x0680"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_ids_normalise_to_sysfs_spelling() {
        assert_eq!(normalize_bus_id("00000000:1B:00.0"), "0000:1b:00.0");
        assert_eq!(normalize_bus_id("0000:1b:00.0"), "0000:1b:00.0");
        assert_eq!(normalize_bus_id("FFFFFFFF:FF:FF.0"), "ffffffff:ff:ff.0");
    }
}
