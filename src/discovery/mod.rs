//! `discover`: this machine as a one-node inventory.
//!
//! Every fact comes through a seam — a root folder standing for `/` (sysfs,
//! procfs, the node config), a PATH, a GPU source — so tests build whole
//! machines in temp dirs and never read the one they run on.
//!
//! Engines are found by looking, not by running them. Asking an engine for
//! `--version` is fine for the engine and not for the wrapper scripts people
//! put in front of one: a script that ignores flags it does not know and
//! execs the server would start an inference server on every node at every
//! discovery. SGLang is the one exception, because a Python module has no
//! path to look up; it is probed with llmgw's own one-line `find_spec`, which
//! does not import it, and the probe's exit code is the answer.

pub mod amd;
mod config;
pub mod gpu;
pub mod ib;
pub mod pcie;
pub mod weights;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use config::NodeConfig;

use crate::diag::{Code, Diag};
use crate::engines::ENGINES;
use crate::inventory::{Disk, Fabric, FabricKind, Gpu, MigDevice, Node, State, normalize_class};

/// The machine being discovered, seam by seam.
pub struct Machine {
    /// Stands for `/`: sysfs under `sys/`, procfs under `proc/`.
    pub root: PathBuf,
    pub path: Option<OsString>,
    pub gpus: Box<dyn GpuSource>,
    pub config: NodeConfig,
    pub probe_timeout: Duration,
    /// Free and total bytes of the filesystem holding a path.
    pub statvfs: fn(&Path) -> Option<(u64, u64)>,
}

pub use gpu::GpuSource;

impl Machine {
    /// This machine: `/`, the real PATH, NVML, and the node config given
    /// (or `/etc/llmgw/node.toml` when present).
    pub fn local() -> Result<Machine, Vec<Diag>> {
        Machine::with(&Seams::default())
    }

    /// A machine with some seams moved: another root, GPU facts from a file.
    pub fn with(seams: &Seams) -> Result<Machine, Vec<Diag>> {
        let root = seams.root.clone().unwrap_or_else(|| PathBuf::from("/"));
        let config = NodeConfig::load(seams.config.as_deref(), &root)?;
        let gpus: Box<dyn GpuSource> = match &seams.gpu_facts {
            Some(path) => Box::new(gpu::FromFile::load(path)?),
            None => Box::new(gpu::Nvml),
        };
        Ok(Machine {
            root,
            path: std::env::var_os("PATH"),
            gpus,
            config,
            probe_timeout: Duration::from_secs_f64(seams.probe_timeout.unwrap_or(5.0).clamp(0.0, 3600.0)),
            statvfs,
        })
    }
}

/// What `discover`'s flags can point elsewhere.
#[derive(Default)]
pub struct Seams {
    pub root: Option<PathBuf>,
    pub config: Option<PathBuf>,
    pub gpu_facts: Option<PathBuf>,
    pub probe_timeout: Option<f64>,
}

/// Free (for an unprivileged user) and total bytes of the file system
/// holding `path`.
pub fn statvfs(path: &Path) -> Option<(u64, u64)> {
    let s = rustix::fs::statvfs(path).ok()?;
    Some((s.f_bavail.saturating_mul(s.f_frsize), s.f_blocks.saturating_mul(s.f_frsize)))
}

/// The node's InfiniBand fabrics (the adapters on the GPUs' rails), and
/// its rack's NVLink domain, as GPU Feature Discovery would label it.
fn fabrics(m: &Machine, gpus: &[Gpu], facts: &[gpu::GpuFacts], warnings: &mut Vec<Diag>) -> Vec<Fabric> {
    let ports = rail_ports(m, gpus, warnings);
    let (fabrics, ib_warnings) = ib::fabrics(&ports, &m.config.fabrics);
    warnings.extend(ib_warnings);
    let mut fabrics: Vec<Fabric> = fabrics
        .into_iter()
        .map(|(name, hcas)| Fabric { name, kind: FabricKind::Infiniband, hcas: Some(hcas) })
        .collect();
    if let Some(clique) = gpu::clique(facts) {
        fabrics.push(Fabric {
            name: crate::inventory::nvlink_fabric_name(&clique),
            kind: FabricKind::Nvlink,
            hcas: None,
        });
    }
    fabrics
}

/// Inspects the machine. Problems that do not stop discovery (no NVML, an
/// ambiguous fabric, a probe that timed out) come back as warnings.
pub fn discover(m: &Machine) -> (Node, Vec<Diag>) {
    let mut warnings = Vec::new();
    let cfg = &m.config;

    let amd = amd::gpus(&m.root.join("sys"));
    let facts = match m.gpus.gpus() {
        Ok(f) => f,
        // A machine with AMD GPUs has no NVML, and needs none, unless it
        // has NVIDIA cards too.
        Err(_) if !amd.is_empty() && !amd::nvidia_cards(&m.root.join("sys")) => Vec::new(),
        Err(why) => {
            warnings.push(Diag::warning(Code::NoGpus, format!("no GPUs reported: {why}")).help(
                "this node is reported as CPU-only; CPU-capable engines (llama.cpp, ollama) can be placed here where they are installed (found on PATH)",
            ));
            Vec::new()
        }
    };
    let peers = gpu::nvlink_peers(&facts, &m.root.join("sys"));
    let mut gpus: Vec<Gpu> = facts
        .iter()
        .zip(peers)
        .map(|(f, peers)| Gpu {
            index: f.index,
            class: normalize_class(&f.name),
            name: f.name.clone(),
            vendor: crate::vendor::Vendor::Nvidia,
            memory_mb: f.memory_mb,
            uuid: f.uuid.clone(),
            dra_device: None,
            pci_bus_id: f.pci_bus_id.clone(),
            mig: f.mig,
            class_override: None,
            nvlink_peers: peers,
            healthy: true,
            mig_devices: f
                .mig_devices
                .iter()
                .map(|m| MigDevice {
                    index: m.index,
                    profile: m.profile.clone(),
                    memory_mb: m.memory_mb,
                    uuid: m.uuid.clone(),
                    dra_device: None,
                })
                .collect(),
        })
        .collect();
    // AMD GPUs after NVIDIA's, in card order.
    let first = gpus.iter().map(|g| g.index + 1).max().unwrap_or(0);
    gpus.extend(amd::inventory_gpus(amd, first, &mut warnings));
    gpus.sort_by_key(|g| g.index);

    let fabrics = fabrics(m, &gpus, &facts, &mut warnings);

    let engines = engines(m, &mut warnings);

    // Every list discovery looked for is written, empty or not: a node it
    // describes is held to them (no model dirs: it looked, in none).
    let (weights, disk) = if cfg.model_dirs.is_empty() {
        (Some(Vec::new()), None)
    } else {
        let disk = cfg.model_dirs.iter().find_map(|d| {
            let (free, total) = (m.statvfs)(&resolve(&m.root, d))?;
            Some(Disk { path: d.to_string_lossy().into_owned(), free_bytes: free, total_bytes: total })
        });
        let mut w: Vec<crate::inventory::Weight> = Vec::new();
        for d in &cfg.model_dirs {
            // Render finds weights under `disk.path` by their name; those
            // of any other model dir say where they are.
            let elsewhere = disk.as_ref().is_none_or(|k| Path::new(&k.path) != d.as_path());
            for found in weights::find(&resolve(&m.root, d), d, elsewhere) {
                if !w.iter().any(|x| x.source == found.source) {
                    w.push(found);
                }
            }
        }
        w.sort_by(|a, b| a.source.cmp(&b.source));
        (Some(w), disk)
    };

    let id = cfg.id.clone().unwrap_or_else(|| hostname(&m.root));
    let node = Node {
        id,
        discovered_by: Some(format!("llmgw {}", env!("CARGO_PKG_VERSION"))),
        state: cfg.state.unwrap_or(State::Ready),
        labels: cfg.labels.clone(),
        memory_total_mb: memory_total_mb(&m.root),
        cpus: usable_cpus(&m.root).map(f64::from),
        memory_allocatable_mb: None,
        taints: Vec::new(),
        engines: Some(engines),
        weights,
        disk,
        gpus,
        fabrics,
        allocations: Vec::new(),
        origin: None,
    };
    (node, warnings)
}

/// The node's active InfiniBand ports that may carry a replica. On a node
/// with GPU rails, the other adapters (storage, in-band) join no fabric
/// unless the node config names them.
fn rail_ports(m: &Machine, gpus: &[Gpu], warnings: &mut Vec<Diag>) -> Vec<ib::Port> {
    let cfg = &m.config;
    let sys = m.root.join("sys");
    let mut ports = ib::active_ports(&sys);
    let bus_ids: Vec<&str> = gpus.iter().filter_map(|g| g.pci_bus_id.as_deref()).collect();
    let hcas: Vec<&str> = ports.iter().map(|p| p.hca.as_str()).collect();
    let rails = pcie::rails(&sys, &bus_ids, &hcas);
    if !gpus.is_empty() && !rails.is_empty() {
        let named = |hca: &str| cfg.fabrics.values().any(|h| h.iter().any(|x| x == hca));
        let mut left_out: Vec<String> =
            ports.iter().filter(|p| !rails.contains(&p.hca) && !named(&p.hca)).map(|p| p.hca.clone()).collect();
        left_out.dedup();
        if !left_out.is_empty() {
            warnings.push(
                Diag::warning(
                    Code::NotARail,
                    format!("{} left out of fabrics: no PCIe switch shared with a GPU", left_out.join(", ")),
                )
                .help(
                    "storage and in-band adapters do not carry a replica's traffic; name an adapter in the node \
                     config ([fabrics]) to use it anyway",
                ),
            );
            ports.retain(|p| !left_out.contains(&p.hca));
        }
    }
    ports
}

/// The engines installed, found by path (and SGLang by its one probe).
fn engines(m: &Machine, warnings: &mut Vec<Diag>) -> std::collections::BTreeMap<String, String> {
    let cfg = &m.config;
    let search = crate::engines::SearchPath::new(m.path.as_deref());
    warnings.extend(search.warning());
    let mut engines = std::collections::BTreeMap::new();
    for e in ENGINES {
        if let Some(path) = cfg.engines.get(e.name) {
            if is_executable(path) {
                engines.insert(e.name.to_string(), String::new());
            }
            continue;
        }
        if e.binaries.iter().any(|b| search.find(b).is_some()) {
            engines.insert(e.name.to_string(), String::new());
        } else if let Some(module) = e.python_module {
            match probe_python_module(m, &search, module) {
                Ok(true) => {
                    engines.insert(e.name.to_string(), String::new());
                }
                Ok(false) => {}
                Err(why) => warnings.push(
                    Diag::warning(Code::ProbeFailed, format!("{} left out: {why}", e.name))
                        .help("raise --probe-timeout, or check python3 on this node"),
                ),
            }
        }
    }

    engines
}

/// A configured path inside the machine's root (the root is `/` for real).
fn resolve(root: &Path, p: &Path) -> PathBuf {
    match p.strip_prefix("/") {
        Ok(rel) => root.join(rel),
        Err(_) => root.join(p),
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn probe_python_module(m: &Machine, search: &crate::engines::SearchPath, module: &str) -> Result<bool, String> {
    let Some(python) = search.find("python3") else {
        return Ok(false);
    };
    crate::engines::probe_module(&python, module, m.path.as_deref(), m.probe_timeout)
}

/// The CPUs workloads here may use: the online CPUs, capped by the cgroup's
/// CPU quota (a container given 8 of a host's 224 CPUs has 8) and, on the
/// real machine, by this process's affinity mask. `None` when the machine
/// does not say.
fn usable_cpus(root: &Path) -> Option<u32> {
    let online = read_small(&root.join("sys/devices/system/cpu/online"));
    let mut cpus = online.as_deref().and_then(count_cpu_list);
    if root == Path::new("/")
        && let Ok(n) = std::thread::available_parallelism()
    {
        // Affinity and the cgroup quota, as the standard library reads them.
        let n = u32::try_from(n.get()).unwrap_or(u32::MAX);
        cpus = Some(cpus.map_or(n, |c| c.min(n)));
    }
    if let Some(max) = read_small(&root.join("sys/fs/cgroup/cpu.max")) {
        let mut it = max.split_whitespace();
        if let (Some(Ok(quota)), Some(Ok(period))) =
            (it.next().map(str::parse::<u64>), it.next().map(str::parse::<u64>))
            && period > 0
        {
            let q = u32::try_from(quota.div_ceil(period)).unwrap_or(u32::MAX).max(1);
            cpus = Some(cpus.map_or(q, |c| c.min(q)));
        }
    }
    cpus.filter(|&c| c > 0)
}

/// How many CPUs a kernel CPU list names: `0-223`, `0-3,8-11`, `5`.
fn count_cpu_list(list: &str) -> Option<u32> {
    let mut n: u32 = 0;
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?),
            None => {
                let a = part.trim().parse::<u32>().ok()?;
                (a, a)
            }
        };
        n = n.checked_add(b.checked_sub(a)?.checked_add(1)?)?;
    }
    Some(n)
}

fn memory_total_mb(root: &Path) -> u64 {
    let Some(text) = read_small(&root.join("proc/meminfo")) else {
        return 0;
    };
    text.lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kb| kb / 1024)
}

fn hostname(root: &Path) -> String {
    read_small(&root.join("proc/sys/kernel/hostname"))
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

/// The most `discover` reads of one small file (sysfs and procfs
/// attributes, a cache's `refs/main`).
const SMALL: u64 = 1 << 20;

/// A small file's text, read the way `discover` reads every file it finds
/// on the machine: opened without waiting (a FIFO planted in a model
/// folder would wait forever for a writer), only when it is a regular file
/// (a link to `/dev/zero` never ends), and at most `SMALL` bytes.
pub fn read_small(path: &std::path::Path) -> Option<String> {
    use rustix::fs::OFlags;
    use std::io::Read;
    let fd =
        rustix::fs::open(path, OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC, rustix::fs::Mode::empty()).ok()?;
    let file = std::fs::File::from(fd);
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(SMALL).read_to_end(&mut bytes).ok()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod cpu_tests {
    use super::*;

    #[test]
    fn cpu_lists_count_as_the_kernel_writes_them() {
        assert_eq!(count_cpu_list("0-223\n"), Some(224));
        assert_eq!(count_cpu_list("0-3,8-11"), Some(8));
        assert_eq!(count_cpu_list("5"), Some(1));
        assert_eq!(count_cpu_list("3-1"), None);
        assert_eq!(count_cpu_list("x"), None);
    }

    #[test]
    fn a_cgroup_quota_caps_the_online_cpus() {
        let root = tempfile::tempdir().unwrap();
        let cpu = root.path().join("sys/devices/system/cpu");
        std::fs::create_dir_all(&cpu).unwrap();
        std::fs::write(cpu.join("online"), "0-63\n").unwrap();
        assert_eq!(usable_cpus(root.path()), Some(64));
        let cg = root.path().join("sys/fs/cgroup");
        std::fs::create_dir_all(&cg).unwrap();
        std::fs::write(cg.join("cpu.max"), "max 100000\n").unwrap();
        assert_eq!(usable_cpus(root.path()), Some(64));
        std::fs::write(cg.join("cpu.max"), "750000 100000\n").unwrap();
        assert_eq!(usable_cpus(root.path()), Some(8));
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(usable_cpus(empty.path()), None);
    }
}
