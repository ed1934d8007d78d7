//! Kubernetes as the source of the fleet: an inventory from what `kubectl
//! get nodes -o json|yaml` (and `kubectl get pods -A -o json`) print. llmgw
//! needs no cluster access of its own. See docs/kubernetes.md.

mod amd;
mod claims;
mod gpus;
pub mod labels;
pub mod lws;
mod pods;
mod podspec;
pub mod quantity;
pub mod render;
mod requests;
pub mod slices;
mod trust;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Node as KubeNode;

/// Reads `kubectl get -o yaml` output as JSON; the library's tests (and
/// callers outside the crate) reach it here.
pub use crate::import::file::yaml_to_json;

use crate::diag::{Code, Diag, Source};
use crate::doc::Span;
use crate::identity as keys;
use crate::import::Problems;
use crate::import::file::{File, Step};
use crate::inventory::{Fabric, FabricKind, Inventory, Node, State};

/// What `inventory import kubernetes` is told besides the files.
#[derive(Default)]
pub struct Settings {
    /// A node label whose value names the node's fabric (e.g.
    /// `network.topology.nvidia.com/spine`), for nodes without llmgw's own.
    pub fabric_label: Option<String>,
    /// The namespaces whose pods may be llmgw's replicas; `None`: every one.
    pub namespaces: Option<Vec<String>>,
}

/// The DRA objects an import reads besides nodes and pods.
#[derive(Default)]
pub struct Dra<'s> {
    /// `kubectl get resourceslices -o json`.
    pub slices: Option<&'s Source>,
    /// `kubectl get resourceclaims -A -o json`.
    pub claims: Option<&'s Source>,
}

/// The node's state: NotReady is down, then the llmgw.io/draining taint,
/// then cordoned (`spec.unschedulable`).
fn state(n: &KubeNode) -> State {
    let ready = n
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Ready"))
        .is_some_and(|c| c.status == "True");
    let spec = n.spec.as_ref();
    if !ready {
        State::Down
    } else if spec.and_then(|s| s.taints.as_ref()).is_some_and(|t| t.iter().any(|t| t.key == keys::DRAINING)) {
        State::Draining
    } else if spec.and_then(|s| s.unschedulable).unwrap_or(false) {
        State::Cordoned
    } else {
        State::Ready
    }
}

/// Taints that keep workloads off (NoSchedule, NoExecute), as `kubectl
/// describe node` writes them (`key=value:Effect`, `key:Effect`); those
/// that are node states already (cordoned, draining, down) are left out.
fn taints(n: &KubeNode) -> Vec<String> {
    const STATES: &[&str] = &[
        "node.kubernetes.io/unschedulable",
        keys::DRAINING,
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ];
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for t in n.spec.as_ref().and_then(|s| s.taints.as_ref()).into_iter().flatten() {
        if STATES.contains(&t.key.as_str()) || !matches!(t.effect.as_str(), "NoSchedule" | "NoExecute") {
            continue;
        }
        let text = match t.value.as_deref().filter(|v| !v.is_empty()) {
            Some(v) => format!("{}={v}:{}", t.key, t.effect),
            None => format!("{}:{}", t.key, t.effect),
        };
        // A key the inventory could not read back (a space, `=` or `:` in
        // it) is no taint Kubernetes accepts either.
        if crate::taints::parse_taint(&text).is_ok() && seen.insert(text.clone()) {
            out.push(text);
        }
    }
    out
}

/// Label-safe text back to what it stood for: `llmgw-0.1.0` -> `llmgw 0.1.0`.
fn discovered_by(v: &str) -> String {
    v.replacen('-', " ", 1)
}

/// What a node offers workloads: its memory (`status.capacity.memory`,
/// MiB), the memory they may request (`status.allocatable.memory`), and
/// its CPUs (`status.allocatable.cpu`, fractions kept).
struct Sizes {
    memory_total_mb: u64,
    memory_allocatable_mb: Option<u64>,
    cpus: Option<f64>,
}

/// A node's sizes, each in the range the inventory takes, or the error at
/// the quantity.
fn sizes(
    file: &File<'_>,
    i: usize,
    id: &str,
    status: Option<&k8s_openapi::api::core::v1::NodeStatus>,
) -> Result<Sizes, Vec<Diag>> {
    let at_status = |which: &'static str, key: &'static str| {
        let mut p = file.item_path(i);
        p.extend([Step::Key("status"), Step::Key(which), Step::Key(key)]);
        p
    };
    let memory = |which: &'static str| -> Result<Option<u64>, Vec<Diag>> {
        let map = status.and_then(|s| if which == "capacity" { s.capacity.as_ref() } else { s.allocatable.as_ref() });
        let Some(q) = map.and_then(|c| c.get("memory")) else { return Ok(None) };
        quantity::parse(&q.0).and_then(crate::units::mib_of_bytes).map(Some).ok_or_else(|| {
            vec![file.error(
                Code::OutOfRange,
                &at_status(which, "memory"),
                format!("node `{id}`: {which} memory `{}` is not a Kubernetes quantity of bytes llmgw takes", q.0),
                "not a memory size",
                "a quantity is a number with an optional suffix (2113470464Ki, 2Ti, 64G), from 0 to 8 EiB",
            )]
        })
    };
    let memory_total_mb = memory("capacity")?.unwrap_or(0);
    let memory_allocatable_mb = memory("allocatable")?;
    let allocatable = status.and_then(|s| s.allocatable.as_ref());
    let cpus = match allocatable.and_then(|c| c.get("cpu")) {
        None => None,
        // `95500m` is 95.5 CPUs: kept, as the scheduler counts them.
        Some(q) => Some(
            quantity::parse(&q.0)
                .filter(|c| (0.0..=crate::inventory::MAX_CPUS).contains(c))
                // Millicores are the finest unit Kubernetes counts.
                .map(crate::units::round_cpus)
                .ok_or_else(|| {
                    vec![file.error(
                        Code::OutOfRange,
                        &at_status("allocatable", "cpu"),
                        format!("node `{id}`: allocatable cpu `{}` is not a CPU count llmgw takes", q.0),
                        "not a CPU count",
                        "Kubernetes writes CPUs as a quantity: 96, 95500m",
                    )]
                })?,
        ),
    };
    Ok(Sizes { memory_total_mb, memory_allocatable_mb, cpus })
}

/// One node: id, labels, state, memory, GPUs, llmgw's own labels.
fn node(
    file: &File<'_>,
    i: usize,
    k: &KubeNode,
    settings: &Settings,
    warnings: &mut Vec<Diag>,
) -> Result<Node, Vec<Diag>> {
    let mut at = file.item_path(i);
    at.push(Step::Key("metadata"));
    let id = k.metadata.name.clone().unwrap_or_default();
    if id.is_empty() {
        return Err(vec![file.error(
            Code::MissingField,
            &at,
            format!("node {i} has no metadata.name"),
            "no name",
            "every Node has a name",
        )]);
    }
    if let Some(c) = crate::import::control_in_id(&id) {
        at.push(Step::Key("name"));
        return Err(vec![file.error(
            Code::ControlCharacter,
            &at,
            format!("node `{}` has the control character {} in its name", crate::term::escape(&id), c.escape_default()),
            "this name",
            "node names end up in scripts and file names: Kubernetes' own names never hold one",
        )]);
    }
    let labels: BTreeMap<String, String> = k.metadata.labels.clone().unwrap_or_default();
    let status = k.status.as_ref();
    let Sizes { memory_total_mb, memory_allocatable_mb, cpus } = sizes(file, i, &id, status)?;
    let mut gpus = gpus::of(file, i, &id, &labels, status, warnings)?;
    let first = gpus.last().map_or(0, |g| g.index + 1);
    gpus.extend(amd::of(&gpus::At { file, i, id: &id }, &labels, status, first, warnings)?);
    let mut engines: Option<BTreeMap<String, String>> = None;
    let mut fabrics = Vec::new();
    let mut node = Node {
        id: id.clone(),
        discovered_by: labels.get(keys::DISCOVERED_BY).map(|v| discovered_by(v)),
        state: state(k),
        labels: labels.clone(),
        memory_total_mb,
        memory_allocatable_mb,
        taints: taints(k),
        cpus,
        engines: None,
        weights: None,
        disk: None,
        gpus,
        fabrics: Vec::new(),
        allocations: Vec::new(),
        origin: None,
    };
    for (key, value) in &labels {
        if let Some(engine) = key.strip_prefix(keys::ENGINE_PREFIX) {
            let version = if value == "present" { String::new() } else { value.clone() };
            engines.get_or_insert_default().insert(engine.to_string(), version);
        } else if let Some(name) = key.strip_prefix(keys::FABRIC_PREFIX) {
            // An adapter list too long for a label is written as its count.
            let hcas =
                (!value.bytes().all(|b| b.is_ascii_digit())).then(|| value.split('.').map(str::to_string).collect());
            fabrics.push(Fabric { name: name.to_string(), kind: FabricKind::Infiniband, hcas });
        } else if let Some(gpu) = key.strip_prefix(keys::NVLINK_PREFIX).and_then(|g| g.parse::<u32>().ok()) {
            let peers: Vec<u32> = value.split('.').filter_map(|p| p.parse().ok()).collect();
            if let Some(g) = node.gpus.iter_mut().find(|g| g.index == gpu) {
                g.nvlink_peers = peers;
            }
        }
    }
    let known: Vec<u32> = node.gpus.iter().map(|g| g.index).collect();
    for g in &mut node.gpus {
        g.nvlink_peers.retain(|p| known.contains(p) && *p != g.index);
    }
    if node.discovered_by.is_some() && engines.is_none() {
        engines = Some(BTreeMap::new());
    }
    if fabrics.is_empty()
        && let Some(name) = settings.fabric_label.as_ref().and_then(|k| labels.get(k))
    {
        fabrics.push(Fabric::named(name.clone()));
    }
    // An NVLink domain (a GB200/GB300 NVL72 rack), as GPU Feature Discovery
    // labels it: beside the node's network fabric, not in its place.
    if let Some(clique) = labels.get("nvidia.com/gpu.clique").filter(|v| !v.is_empty()) {
        let name = crate::inventory::nvlink_fabric_name(clique);
        // A fabric label of that name (an older feature file) is the same
        // domain: it is NVLink, whatever that label could not say.
        match fabrics.iter_mut().find(|f| f.name == name) {
            Some(f) => f.kind = FabricKind::Nvlink,
            None => fabrics.push(Fabric { name, kind: FabricKind::Nvlink, hcas: None }),
        }
    }
    node.engines = engines;
    node.fabrics = fabrics;
    Ok(node)
}

/// Device plugin resources of GPUs from other vendors, which llmgw does
/// not import yet: never dropped without a word.
const OTHER_VENDORS: &[&str] = &["gpu.intel.com/", "habana.ai/gaudi"];

/// Another vendor's GPUs a node advertises (`status.capacity`), as
/// "node (2 gpu.intel.com/i915)".
fn other_vendor(id: &str, status: Option<&k8s_openapi::api::core::v1::NodeStatus>) -> Vec<String> {
    let mut out = Vec::new();
    for (k, q) in status.and_then(|s| s.capacity.as_ref()).into_iter().flatten() {
        let count = quantity::parse(&q.0).unwrap_or(0.0);
        if count > 0.0 && OTHER_VENDORS.iter().any(|o| if o.ends_with('/') { k.starts_with(o) } else { k == o }) {
            out.push(format!("{} ({count} {k})", crate::term::escape(id)));
        }
    }
    out
}

/// One warning naming the nodes that advertise another vendor's GPUs.
fn other_vendors_warning(seen: &[String]) -> Option<Diag> {
    if seen.is_empty() {
        return None;
    }
    Some(
        Diag::warning(
            Code::OtherVendor,
            format!(
                "{} node(s) advertise GPUs of another vendor, which llmgw does not import yet, so they are left out: {}",
                seen.len(),
                crate::diag::shorten(&seen.iter().map(String::as_str).collect::<Vec<_>>(), 5)
            ),
        )
        .help("those nodes are imported without those GPUs; no GPU profile is placed on them"),
    )
}

/// An inventory from `kubectl get nodes` output, and what the pods hold
/// from `kubectl get pods -A` output; with the warnings to show.
pub fn import(nodes: &Source, pods: Option<&Source>, settings: &Settings) -> Result<(Inventory, Vec<Diag>), Vec<Diag>> {
    import_with(nodes, pods, &Dra::default(), settings)
}

/// As `import`, the GPUs of nodes the DRA driver publishes taken from
/// their slices, and what claims were given held by their replicas.
pub fn import_with(
    nodes: &Source,
    pods: Option<&Source>,
    dra: &Dra<'_>,
    settings: &Settings,
) -> Result<(Inventory, Vec<Diag>), Vec<Diag>> {
    let file = File::read(nodes, "kubectl get nodes -o json").map_err(|d| vec![d])?;
    let mut warnings = Vec::new();
    let mut problems = Problems::default();
    let mut out = Vec::new();
    let mut others = Vec::new();
    // Nodes whose kubelet offers nvidia.com/gpu: NVIDIA's device plugin serves them.
    let mut plugin: std::collections::HashSet<String> = std::collections::HashSet::new();
    file.each("Node", &mut problems, |i, k: KubeNode, problems| match node(&file, i, &k, settings, &mut warnings) {
        Ok(n) => {
            others.extend(other_vendor(&n.id, k.status.as_ref()));
            let offered =
                k.status.as_ref().and_then(|s| s.capacity.as_ref()).and_then(|c| c.get(crate::vendor::NVIDIA_GPU));
            if offered.and_then(|q| quantity::parse(&q.0)).is_some_and(|n| n > 0.0) {
                plugin.insert(n.id.clone());
            }
            out.push(n);
        }
        Err(d) => problems.extend(d),
    })?;
    problems.into_result()?;
    warnings.extend(other_vendors_warning(&others));
    if out.is_empty() {
        return Err(vec![file.error(
            Code::EmptyInput,
            &[Step::Key("items")],
            format!("{} lists no nodes", nodes.name()),
            "no Node here",
            "give what `kubectl get nodes -o json` prints for a cluster with nodes",
        )]);
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    if let Some(w) = out.windows(2).find(|w| w[0].id == w[1].id) {
        return Err(vec![
            Diag::error(Code::DuplicateNode, format!("node `{}` is listed twice", w[0].id))
                .at(nodes, Span::new(0, 0), "in this file")
                .help("give the output of one `kubectl get nodes`"),
        ]);
    }
    let published = match dra.slices {
        Some(src) => {
            let p = slices::read(src, &mut warnings)?;
            slices::apply(&p, &mut out, src, &mut warnings);
            warnings.extend(both_allocators(&p, &plugin));
            p
        }
        None => slices::Published::default(),
    };
    let mut replicas = None;
    if let Some(pods) = pods {
        let pf = File::read(pods, "kubectl get pods -A -o json").map_err(|d| vec![d])?;
        let namespaces = settings.namespaces.as_deref();
        replicas = Some(pods::allocations(&pf, &mut out, namespaces, dra.claims.is_some(), &mut warnings)?);
    }
    if let Some(src) = dra.claims {
        let trust = claims::Trust { namespaces: settings.namespaces.as_deref(), replicas: replicas.as_ref() };
        claims::hold(src, &published, &mut out, &trust, &mut warnings)?;
    }
    warnings.extend(unknown_memory(&out));
    slices::bus_order(&published, &mut out);
    Ok((Inventory { nodes: out }, warnings))
}

/// Nodes whose GPUs NVIDIA's DRA driver publishes while its device plugin
/// offers them too (`nvidia.com/gpu` in the node's capacity): the two
/// hand out GPUs without knowing of each other, so a claim and a pod that
/// asks for `nvidia.com/gpu` can be given the same GPU.
fn both_allocators(published: &slices::Published, plugin: &std::collections::HashSet<String>) -> Option<Diag> {
    let both: Vec<&str> = published.nodes.keys().filter(|id| plugin.contains(*id)).map(String::as_str).collect();
    if both.is_empty() {
        return None;
    }
    Some(
        Diag::warning(
            Code::DraAndDevicePlugin,
            format!(
                "{} node(s) are served by both NVIDIA's DRA driver and its device plugin, which may give one GPU to a claim and to a pod: {}",
                both.len(),
                crate::diag::shorten(&both, 5)
            ),
        )
        .help("run one of the two on a node: NVIDIA's DRA driver documents turning the device plugin off (or labelling the node so it does not run there)"),
    )
}

/// One warning for the GPUs (and MIG devices) whose memory nothing said:
/// the memory fit is skipped for them, so a model may be placed where its
/// weights do not fit. A GPU in MIG mode is never placed whole: its own
/// memory does not matter, its devices' does.
pub fn unknown_memory(nodes: &[Node]) -> Option<Diag> {
    let mut seen = Vec::new();
    for n in nodes {
        let whole = n.gpus.iter().filter(|g| !g.in_mig_mode() && g.memory_mb == 0).count();
        let migs = n.gpus.iter().flat_map(|g| &g.mig_devices).filter(|m| m.memory_mb == 0).count();
        let class = n.gpus.iter().find(|g| !g.in_mig_mode() && g.memory_mb == 0).map_or("", |g| g.class.as_str());
        let what = match (whole, migs) {
            (0, 0) => continue,
            (w, 0) => format!("{w} {class} GPU(s)"),
            (0, m) => format!("{m} MIG device(s)"),
            (w, m) => format!("{w} {class} GPU(s), {m} MIG device(s)"),
        };
        seen.push(format!("{} ({what})", crate::term::escape(&n.id)));
    }
    if seen.is_empty() {
        return None;
    }
    Some(
        Diag::warning(
            Code::UnknownMemory,
            format!(
                "{} node(s) have GPUs whose memory no label gives, so no model is held to it there (the memory fit is skipped): {}",
                seen.len(),
                crate::diag::shorten(&seen.iter().map(String::as_str).collect::<Vec<_>>(), 5)
            ),
        )
        .help("GPU Feature Discovery (nvidia.com/gpu.memory), Karpenter (instance-gpu-memory) or the DRA driver's slices say each GPU's memory; import with one of them"),
    )
}
