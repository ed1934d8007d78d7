//! What both renderers share: the plan read, checked against the inventory
//! it is rendered on (`check`), and resolved against the catalog into jobs
//! (`resolve`) — each with its profile, its nodes, where its weights come
//! from, and the CPUs and memory it asks for; what a renderer returns
//! (`rendered`), where it is written (`out`), and the endpoints file
//! (`endpoints`). See docs/serving.md.

pub mod check;
pub mod endpoints;
pub mod out;
mod rendered;
mod resolve;

use serde::Serialize;

use crate::catalog::{Model, Profile};
use crate::diag::Diag;
use crate::inventory::Node;
use crate::launch::Weights;
use crate::plan::{Entry, Plan};
pub use rendered::{Names, Rendered, names_of};
pub use resolve::resolve;

/// A replica ready to render.
pub struct Job<'a> {
    pub entry: &'a Entry,
    pub model: &'a Model,
    pub profile: &'a Profile,
    /// The inventory's nodes, in rank order.
    pub nodes: Vec<&'a Node>,
    pub weights: Weights,
    /// What the replica asks of every node (the least over its nodes).
    pub resources: Resources,
    /// What it asks of each node, in rank order.
    pub per_node: Vec<Resources>,
    /// The adapters of a multi-node replica, each once: the plan's, or for
    /// a replica that already runs (whose plan entry names none), its
    /// nodes' adapters on the first fabric they all share.
    pub hcas: Vec<String>,
    /// A multi-node vLLM that starts over Ray (`launch::vllm_over_ray`).
    pub ray: bool,
    /// The NVLink domain a multi-node replica runs in, if it runs in one:
    /// NCCL goes over NVLink there, not over a network's adapters.
    pub nvlink: Option<String>,
}

impl Job<'_> {
    /// Who made the replica's GPUs: the vendor of the first GPU the plan
    /// gives it (a replica's GPUs are of one class); NVIDIA for a
    /// CPU-only one.
    pub fn vendor(&self) -> crate::vendor::Vendor {
        let gpu = self.entry.nodes.first().and_then(|a| a.gpus.first().map(|&g| (a, g)));
        gpu.and_then(|(_, g)| {
            let node = self.nodes.first()?;
            node.gpu_position(g).map(|p| node.gpus[p].vendor)
        })
        .unwrap_or_default()
    }

    /// The architecture of the replica's nodes: arm64 when one of them
    /// says so (GH200, GB200), else x86-64.
    pub fn arch(&self) -> crate::images::Arch {
        use crate::images::Arch;
        if self.nodes.iter().any(|n| crate::images::arch_of(n) == Some(Arch::Arm64)) {
            Arch::Arm64
        } else {
            Arch::Amd64
        }
    }

    /// The image the replica runs: the profile's, else the engine's
    /// default for its GPUs' vendor and its nodes' architecture (an
    /// engine with no image for that architecture: its x86-64 one, which
    /// lint and render warn of).
    pub fn image(&self) -> &str {
        let p = self.profile;
        p.serving.image.as_deref().unwrap_or_else(|| {
            crate::images::default_image_for(p.engine.name, !p.cpu_only(), self.vendor(), self.arch())
                .unwrap_or_else(|| crate::images::default_image_on(p.engine.name, !p.cpu_only(), self.vendor()))
        })
    }
}

/// What a replica asks for on each of its nodes; `None`: not known.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resources {
    pub millicpus: Option<u64>,
    pub memory_mib: Option<u64>,
}

/// The plan's replicas to render, in plan order, and those left out.
pub struct Resolved<'a> {
    pub plan: &'a Plan,
    pub jobs: Vec<Job<'a>>,
    /// Running replicas no profile of their model fits: not rendered, and
    /// their files are left as they are.
    pub skipped: Vec<&'a Entry>,
    pub warnings: Vec<Diag>,
}

/// One line of `--endpoints`: where clients reach a replica.
#[derive(Serialize)]
pub struct Endpoint<'a> {
    pub model: &'a str,
    pub replica: u32,
    pub url: String,
    /// The engine that serves it: which API a client speaks to it.
    #[serde(skip)]
    pub engine: &'static str,
}

/// Writes `{"endpoints": [...]}`.
pub fn endpoints_json(list: &[Endpoint<'_>]) -> String {
    #[derive(Serialize)]
    struct Doc<'a, 'b> {
        endpoints: &'b [Endpoint<'a>],
    }
    let mut s = serde_json::to_string_pretty(&Doc { endpoints: list }).unwrap_or_default();
    s.push('\n');
    s
}

/// The NVLink domain of a multi-node replica: the fabric its plan entry
/// names, else (a replica that already runs) the first NVLink domain by
/// name that all its nodes are in; `None` where that is not an NVLink
/// domain on every one of its nodes.
pub fn nvlink(e: &Entry, nodes: &[&Node]) -> Option<String> {
    use crate::inventory::FabricKind;
    if nodes.len() < 2 {
        return None;
    }
    let on = |name: &str| nodes.iter().all(|n| n.fabric(name).is_some_and(|f| f.kind == FabricKind::Nvlink));
    match &e.fabric {
        Some(f) => on(f).then(|| f.clone()),
        None => {
            let mut shared: Vec<&str> = nodes[0].fabrics.iter().map(|f| f.name.as_str()).filter(|f| on(f)).collect();
            shared.sort_unstable();
            shared.first().map(|f| (*f).to_string())
        }
    }
}

/// One request for several nodes (a Slurm job asks every node for the
/// same; a LeaderWorkerSet's workers share a template): the smallest,
/// which each of them has room for.
pub fn least(of: &[Resources]) -> Resources {
    Resources {
        millicpus: of.iter().filter_map(|r| r.millicpus).min(),
        memory_mib: of.iter().filter_map(|r| r.memory_mib).min(),
    }
}

/// A node id as the host of a URL: a host name or IPv4 address as it is
/// (letters, digits, `.`, `-`, `_`, not beginning with `-` or `.`), an IPv6
/// address in brackets; `None` for anything else, whose `@`, `:`, `/`, `?`
/// or `#` would make the URL point at another host.
pub fn url_host(id: &str) -> Option<String> {
    if let Ok(v6) = id.parse::<std::net::Ipv6Addr>() {
        return Some(format!("[{v6}]"));
    }
    let plain = !id.is_empty()
        && id.len() <= 253
        && !id.starts_with(['-', '.'])
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'));
    plain.then(|| id.to_string())
}
