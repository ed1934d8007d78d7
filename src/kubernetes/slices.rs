//! The GPUs NVIDIA's DRA driver publishes as ResourceSlices (`kubectl get
//! resourceslices -o json`): per node one pool, each GPU and MIG device
//! with its UUID and the device name claims are allocated by. Read for
//! both the current shape (`resource.k8s.io/v1`, `v1beta2`: attributes on
//! the device) and `v1beta1` (under `basic`). See docs/kubernetes.md.

mod api;
use api::*;

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Deserialize;

use crate::diag::{Code, Diag, Source};
use crate::import::Problems;
use crate::import::file::Kinded;
use crate::import::file::{File, Step};
use crate::import::{MAX_GPUS_PER_NODE, MAX_MIG_PER_GPU};
use crate::inventory::{Gpu, MigDevice, Node};

/// The driver whose devices are GPUs.
pub const DRIVER: &str = "gpu.nvidia.com";

/// The most devices one ResourceSlice holds (the API's
/// `ResourceSliceMaxDevices`, `resource.k8s.io/v1`).
const MAX_SLICE_DEVICES: usize = 128;

/// The most devices a node's pools may publish: 1024 GPUs with seven MIG
/// devices each. Past it a pool is not kept, so a file of many slices of
/// one pool costs what the cap allows, not what the file holds.
const MAX_NODE_DEVICES: usize = (MAX_GPUS_PER_NODE * (1 + MAX_MIG_PER_GPU)) as usize;

/// A node's devices from its complete pool.
#[derive(Default)]
pub struct Published {
    /// Pool name -> node name, for claims (which name the pool).
    pub pools: HashMap<String, String>,
    /// Node name -> its GPUs, from its devices.
    pub nodes: BTreeMap<String, Vec<Gpu>>,
}

/// A device as read, with where it is in the file.
struct Placed {
    item: usize,
    at: usize,
    device: Device,
}

/// A pool's newest generation, as far as read.
struct Seen {
    /// The item of the pool's first slice read, for pointing at it.
    first: usize,
    generation: i64,
    slices: i64,
    /// How many slices the pool says it has.
    count: i64,
    node: String,
    devices: Vec<Placed>,
    names: HashSet<String>,
    /// More devices than a node may have: none are kept past the cap.
    over: bool,
}

impl Seen {
    fn new(first: usize, generation: i64, node: String) -> Seen {
        Seen { first, generation, slices: 0, count: 0, node, devices: Vec::new(), names: HashSet::new(), over: false }
    }
}

/// The path of a device in the file.
fn device_path(item: usize, at: usize) -> Vec<Step<'static>> {
    vec![Step::Key("items"), Step::Index(item), Step::Key("spec"), Step::Key("devices"), Step::Index(at)]
}

/// The complete pools of the GPU driver, their devices made GPUs.
pub fn read(src: &Source, warnings: &mut Vec<Diag>) -> Result<Published, Vec<Diag>> {
    let file = File::read(src, "kubectl get resourceslices -o json").map_err(|d| vec![d])?;
    let mut problems = Problems::default();
    let mut pools: BTreeMap<String, Seen> = BTreeMap::new();
    file.each_direct("ResourceSlice", &mut problems, |i, s: Slice, problems| {
        let spec = s.spec;
        if spec.driver != DRIVER || spec.pool.name.is_empty() {
            return;
        }
        let node = spec.node_name.unwrap_or_else(|| spec.pool.name.clone());
        let e = pools.entry(spec.pool.name.clone()).or_insert_with(|| Seen::new(i, spec.pool.generation, node.clone()));
        if spec.pool.generation > e.generation {
            *e = Seen::new(i, spec.pool.generation, node);
        }
        if spec.pool.generation != e.generation || e.over {
            return;
        }
        e.slices += 1;
        e.count = e.count.max(spec.pool.resource_slice_count);
        // A device name is unique in its pool: the first one counts.
        // Places a device could be made in (DynamicMIG) are not devices.
        for (at, d) in spec.devices.0.into_iter().enumerate().filter(|(_, d)| d.consumes_counters.is_none()) {
            if e.names.insert(d.name.clone()) {
                e.devices.push(Placed { item: i, at, device: d });
            }
        }
        if e.devices.len() > MAX_NODE_DEVICES {
            e.over = true;
            e.devices = Vec::new();
            e.names = HashSet::new();
            problems.push(file.error(
                Code::TooManyGpus,
                &[Step::Key("items"), Step::Index(i), Step::Key("spec"), Step::Key("devices")],
                format!(
                    "pool `{}`: its slices publish more than {MAX_NODE_DEVICES} devices, more than the {MAX_GPUS_PER_NODE} GPUs with {MAX_MIG_PER_GPU} MIG devices each a node may have",
                    crate::term::escape(&spec.pool.name)
                ),
                "the devices past the limit",
                "give what `kubectl get resourceslices -o json` prints",
            ));
        }
    })?;
    let mut out = Published::default();
    let mut incomplete = Vec::new();
    // A node's devices over its complete pools, numbered together.
    let mut by_node: BTreeMap<String, (usize, Vec<Placed>)> = BTreeMap::new();
    for (pool, Seen { first, generation, slices: seen, count, node, devices, over, .. }) in pools {
        if over {
            continue;
        }
        if seen < count {
            incomplete.push(format!("{pool} (generation {generation}: {seen} of {count} slices)"));
            continue;
        }
        out.pools.insert(pool, node.clone());
        by_node.entry(node).or_insert_with(|| (first, Vec::new())).1.extend(devices);
    }
    let mut positional = Vec::new();
    for (node, (first, devices)) in by_node {
        let gpus = match gpus(&file, &node, &devices, &mut positional) {
            Ok(g) => g,
            Err(d) => {
                problems.push(d);
                continue;
            }
        };
        let migs = gpus.iter().map(|g| g.mig_devices.len() as u64).max().unwrap_or(0);
        if gpus.len() as u64 > MAX_GPUS_PER_NODE || migs > MAX_MIG_PER_GPU {
            problems.push(file.error(
                Code::TooManyGpus,
                &[Step::Key("items"), Step::Index(first), Step::Key("spec"), Step::Key("devices")],
                format!(
                    "node `{node}`: its slices publish {} GPUs, {migs} MIG devices on one, more than the {MAX_GPUS_PER_NODE} and {MAX_MIG_PER_GPU} a node and a GPU have",
                    gpus.len()
                ),
                "these devices",
                "give what `kubectl get resourceslices -o json` prints",
            ));
            continue;
        }
        out.nodes.insert(node, gpus);
    }
    problems.into_result()?;
    once_each_uuid(&file, &out)?;
    warn(src, &incomplete, &positional, warnings);
    Ok(out)
}

/// One warning for the pools not whole in the file, one for the nodes
/// numbered by bus position.
fn warn(src: &Source, incomplete: &[String], positional: &[String], warnings: &mut Vec<Diag>) {
    if !incomplete.is_empty() {
        warnings.push(
            Diag::warning(
                Code::IncompletePool,
                format!(
                    "{} DRA pool(s) are not whole in {}, so their nodes keep the GPUs their labels give: {}",
                    incomplete.len(),
                    src.name(),
                    crate::diag::shorten(&incomplete.iter().map(String::as_str).collect::<Vec<_>>(), 5)
                ),
            )
            .help("the driver was publishing while the file was taken: run `kubectl get resourceslices -o json` again"),
        );
    }
    if !positional.is_empty() {
        warnings.push(
            Diag::warning(
                Code::SliceNumbering,
                format!(
                    "{} node(s) publish GPUs whose names give no minor number (`gpu-<minor>`), so they are numbered by their place on the PCI bus, and a GPU that stops being published renumbers the rest: {}",
                    positional.len(),
                    crate::diag::shorten(&positional.iter().map(String::as_str).collect::<Vec<_>>(), 5)
                ),
            )
            .help("pods' llmgw.io/gpus annotations name GPUs by these indices: on these nodes, place and render again after a GPU comes or goes"),
        );
    }
}

/// A GPU's (or MIG device's) UUID names one device in the cluster: two
/// devices that publish one are refused, since a claim pinned by UUID (as
/// render writes them) would then be given either.
fn once_each_uuid(file: &File<'_>, out: &Published) -> Result<(), Vec<Diag>> {
    let mut seen: HashMap<&str, (&str, &str)> = HashMap::new();
    let mut problems = Problems::default();
    for (node, gpus) in &out.nodes {
        let devices = gpus.iter().flat_map(|g| {
            std::iter::once((g.uuid.as_deref(), g.dra_device.as_deref()))
                .chain(g.mig_devices.iter().map(|m| (m.uuid.as_deref(), m.dra_device.as_deref())))
        });
        for (uuid, name) in devices {
            let (Some(uuid), Some(name)) = (uuid, name) else { continue };
            if let Some((n, d)) = seen.insert(uuid, (node, name)) {
                problems.push(file.error(
                    Code::DuplicateUuid,
                    &[Step::Key("items")],
                    format!(
                        "the slices publish the uuid {} twice: device {} of node `{}` and device {} of node `{}`",
                        crate::term::escape(uuid),
                        crate::term::escape(d),
                        crate::term::escape(n),
                        crate::term::escape(name),
                        crate::term::escape(node)
                    ),
                    "in these slices",
                    "a GPU's uuid is its own: a claim pinned to it could be given either device; check the driver on those nodes",
                ));
            }
        }
    }
    problems.into_result()
}

/// A GPU found in a pool, with what orders it: its PCI bus id, its name.
type Found = (Option<String>, Vec<(u64, String)>, Option<u32>, Gpu);

/// MiB of a device's memory: `None` when it publishes none; an error at
/// the quantity when it does not parse or is below zero (a GPU of unknown
/// memory would skip the memory fit).
fn memory(file: &File<'_>, node: &str, p: &Placed) -> Result<Option<u64>, Diag> {
    let Some(text) = p.device.memory_text() else { return Ok(None) };
    let mib = super::quantity::parse(text).filter(|&b| b < 8.0 * 1024f64.powi(6)).and_then(crate::units::mib_of_bytes);
    match mib {
        Some(mib) => Ok(Some(mib)),
        None => {
            let mut path = device_path(p.item, p.at);
            path.extend([Step::Key("capacity"), Step::Key("memory")]);
            Err(file.error(
                Code::OutOfRange,
                &path,
                format!(
                    "node `{node}`: device {} publishes memory `{}`, not a quantity of bytes",
                    crate::term::escape(&p.device.name),
                    crate::term::escape(text)
                ),
                "not a memory size",
                "the driver publishes a GPU's memory as a quantity such as 81559Mi or 80Gi",
            ))
        }
    }
}

/// The GPUs of one node: its `gpu` devices, and the GPUs its `mig`
/// devices name as `parentUUID` (a GPU in MIG mode is published only as
/// its MIG devices). Each GPU's index is its minor number (the driver
/// names it `gpu-<minor>`), so it stays the same when another stops being
/// published; a node whose names give none is numbered in PCI bus order
/// and named in `positional`. Returned by index; `bus_order` lists them in
/// PCI bus order once the import is done.
fn gpus(file: &File<'_>, node: &str, devices: &[Placed], positional: &mut Vec<String>) -> Result<Vec<Gpu>, Diag> {
    let whole: Vec<&Placed> = devices.iter().filter(|p| p.device.attribute("type") == Some("gpu")).collect();
    let mut migs: Vec<&Placed> = devices.iter().filter(|p| p.device.attribute("type") == Some("mig")).collect();
    migs.sort_by_key(|p| natural(&p.device.name));
    let mut found: Vec<Found> = Vec::with_capacity(whole.len());
    for p in &whole {
        let d = &p.device;
        let mut g = Gpu::named(0, d.attribute("productName").unwrap_or("unknown"), memory(file, node, p)?.unwrap_or(0));
        g.uuid = d.attribute("uuid").map(str::to_string);
        g.dra_device = Some(d.name.clone());
        g.pci_bus_id = d.pci_bus_id().map(str::to_string);
        found.push((g.pci_bus_id.clone(), natural(&d.name), d.minor(), g));
    }
    let mut uuids: HashSet<String> = found.iter().filter_map(|f| f.3.uuid.clone()).collect();
    for p in &migs {
        let d = &p.device;
        // The device's own memory: checked here, whatever its parent's.
        memory(file, node, p)?;
        let Some(parent) = d.attribute("parentUUID") else { continue };
        if !uuids.insert(parent.to_string()) {
            continue;
        }
        let mut g = Gpu::named(0, d.attribute("productName").unwrap_or("unknown"), 0);
        g.uuid = Some(parent.to_string());
        g.pci_bus_id = d.pci_bus_id().map(str::to_string);
        found.push((g.pci_bus_id.clone(), natural(parent), d.minor(), g));
    }
    found.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    // By minor number, the GPU's own: a GPU no longer published leaves a
    // gap, never a shift of the others.
    let minors: Vec<u32> = found.iter().filter_map(|f| f.2).collect();
    let by_minor = minors.len() == found.len() && minors.iter().collect::<HashSet<_>>().len() == minors.len();
    if !by_minor && !found.is_empty() {
        positional.push(node.to_string());
    }
    let mut out: Vec<Gpu> = found
        .into_iter()
        .enumerate()
        .map(|(i, (_, _, minor, mut g))| {
            g.index = if by_minor { minor.unwrap_or_default() } else { i as u32 };
            g
        })
        .collect();
    out.sort_by_key(|g| g.index);
    let by_uuid: HashMap<String, usize> =
        out.iter().enumerate().filter_map(|(i, g)| Some((g.uuid.clone()?, i))).collect();
    // Each GPU's MIG devices, numbered by where they start on it.
    let mut per_gpu: BTreeMap<usize, Vec<&Placed>> = BTreeMap::new();
    for p in migs {
        if let Some(&at) = p.device.attribute("parentUUID").and_then(|u| by_uuid.get(u)) {
            per_gpu.entry(at).or_default().push(p);
        }
    }
    for (at, list) in per_gpu {
        let starts: Vec<Option<u32>> = list.iter().map(|p| p.device.mig_start()).collect();
        let known: HashSet<u32> = starts.iter().flatten().copied().collect();
        let by_start = known.len() == list.len();
        let g = &mut out[at];
        g.mig = Some(true);
        for (k, p) in list.iter().enumerate() {
            let d = &p.device;
            let index = if by_start { starts[k].unwrap_or_default() } else { k as u32 };
            let mut m =
                MigDevice::new(index, d.attribute("profile").unwrap_or_default(), memory(file, node, p)?.unwrap_or(0));
            m.uuid = d.attribute("uuid").map(str::to_string);
            m.dra_device = Some(d.name.clone());
            g.mig_devices.push(m);
        }
        g.mig_devices.sort_by_key(|m| m.index);
    }
    Ok(out)
}

/// Lists the GPUs of nodes whose slices give every GPU's PCI bus id in
/// bus order, the order NVML numbers them in (their indices stay their
/// minor numbers; llmgw's loader orders GPUs by index when it reads them).
pub fn bus_order(published: &Published, nodes: &mut [Node]) {
    for n in nodes.iter_mut().filter(|n| published.nodes.contains_key(&n.id)) {
        if n.gpus.iter().all(|g| g.pci_bus_id.is_some()) {
            n.gpus.sort_by(|a, b| a.pci_bus_id.cmp(&b.pci_bus_id));
        }
    }
}

/// A name compared with its digit runs as numbers: `gpu-2` before `gpu-10`.
fn natural(s: &str) -> Vec<(u64, String)> {
    let mut out = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if digits > 0 {
            out.push((rest[..digits].parse().unwrap_or(u64::MAX), String::new()));
            rest = &rest[digits..];
        } else {
            let text = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
            out.push((0, rest[..text].to_string()));
            rest = &rest[text..];
        }
    }
    out
}

/// Puts each node's published GPUs in place of those its labels gave,
/// warning where the two disagree.
pub fn apply(published: &Published, nodes: &mut [Node], src: &Source, warnings: &mut Vec<Diag>) {
    let mut disagree = Vec::new();
    let mut unknown = Vec::new();
    let by_id: HashMap<String, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id.clone(), i)).collect();
    for (id, gpus) in &published.nodes {
        let Some(n) = by_id.get(id).map(|&i| &mut nodes[i]) else {
            unknown.push(id.clone());
            continue;
        };
        let classes = |g: &[Gpu]| {
            let mut c: Vec<&str> = g.iter().map(|g| g.class.as_str()).collect();
            c.sort_unstable();
            c.iter().map(ToString::to_string).collect::<Vec<_>>()
        };
        if !n.gpus.is_empty() && (n.gpus.len() != gpus.len() || classes(&n.gpus) != classes(gpus)) {
            disagree.push(format!(
                "{id} ({} {} by its labels, {} {} in its slices)",
                n.gpus.len(),
                n.gpus.first().map_or("", |g| g.class.as_str()),
                gpus.len(),
                gpus.first().map_or("", |g| g.class.as_str())
            ));
        }
        n.gpus.clone_from(gpus);
    }
    let list = |v: &[String]| crate::diag::shorten(&v.iter().map(String::as_str).collect::<Vec<_>>(), 5);
    if !disagree.is_empty() {
        warnings.push(
            Diag::warning(
                Code::SlicesDisagree,
                format!(
                    "{} node(s) label other GPUs than their slices publish; the slices' are taken: {}",
                    disagree.len(),
                    list(&disagree)
                ),
            )
            .help("the DRA driver publishes what the node has now; GPU Feature Discovery's labels may be stale"),
        );
    }
    if !unknown.is_empty() {
        warnings.push(
            Diag::warning(
                Code::SliceUnknownNode,
                format!("{} publishes GPUs of node(s) the node list does not have: {}", src.name(), list(&unknown)),
            )
            .help("give the node list and the slices of one cluster, taken together"),
        );
    }
}
