//! The GPUs NVIDIA's DRA driver publishes as ResourceSlices (`kubectl get
//! resourceslices -o json`): per node one pool, each GPU and MIG device
//! with its UUID and the device name claims are allocated by. Read for
//! both the current shape (`resource.k8s.io/v1`, `v1beta2`: attributes on
//! the device) and `v1beta1` (under `basic`). See docs/kubernetes.md.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Deserialize;

use super::{File, Step};
use crate::diag::{Code, Diag, Source};
use crate::import::Problems;
use crate::import::{MAX_GPUS_PER_NODE, MAX_MIG_PER_GPU};
use crate::inventory::{Gpu, MigDevice, Node};

/// The driver whose devices are GPUs.
pub const DRIVER: &str = "gpu.nvidia.com";

#[derive(Deserialize)]
struct Slice {
    #[serde(default)]
    spec: SliceSpec,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct SliceSpec {
    #[serde(default)]
    driver: String,
    node_name: Option<String>,
    #[serde(default)]
    pool: Pool,
    #[serde(default)]
    devices: Vec<Device>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Pool {
    #[serde(default)]
    name: String,
    #[serde(default)]
    generation: i64,
    #[serde(default = "one")]
    resource_slice_count: i64,
}

fn one() -> i64 {
    1
}

#[derive(Deserialize, Default, Clone)]
pub(super) struct Device {
    #[serde(default)]
    name: String,
    #[serde(default)]
    attributes: BTreeMap<String, Attribute>,
    #[serde(default)]
    capacity: BTreeMap<String, Capacity>,
    /// `v1beta1`: the attributes and capacity one level down.
    basic: Option<Box<Device>>,
    /// A place a device could be made in (DynamicMIG), not a device.
    #[serde(default, rename = "consumesCounters")]
    consumes_counters: Option<serde_json::Value>,
}

#[derive(Deserialize, Default, Clone)]
struct Attribute {
    string: Option<String>,
    version: Option<String>,
}

/// `{value: "40Gi"}`, or a bare quantity (the alpha shape).
#[derive(Deserialize, Clone)]
#[serde(untagged)]
enum Capacity {
    Value { value: String },
    Plain(String),
}

impl Device {
    fn attribute(&self, key: &str) -> Option<&str> {
        let own = self.attributes.get(key).or_else(|| self.basic.as_ref()?.attributes.get(key))?;
        own.string.as_deref().or(own.version.as_deref())
    }

    fn memory_mb(&self) -> u64 {
        let cap = self.capacity.get("memory").or_else(|| self.basic.as_ref()?.capacity.get("memory"));
        let text = match cap {
            Some(Capacity::Value { value } | Capacity::Plain(value)) => value,
            None => return 0,
        };
        super::quantity::parse(text).map_or(0, |b| (b / (1024.0 * 1024.0)).floor() as u64)
    }

    /// Where the device sits on the PCI bus: the standard attribute, else
    /// the driver's older spelling.
    fn pci_bus_id(&self) -> Option<&str> {
        self.attribute("resource.kubernetes.io/pciBusID").or_else(|| self.attribute("pcieBusID"))
    }
}

/// A node's devices from its complete pool.
#[derive(Default)]
pub struct Published {
    /// Pool name -> node name, for claims (which name the pool).
    pub pools: HashMap<String, String>,
    /// Node name -> its GPUs, from its devices.
    pub nodes: BTreeMap<String, Vec<Gpu>>,
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
    devices: Vec<Device>,
    names: HashSet<String>,
}

impl Seen {
    fn new(first: usize, generation: i64, node: String) -> Seen {
        Seen { first, generation, slices: 0, count: 0, node, devices: Vec::new(), names: HashSet::new() }
    }
}

/// The complete pools of the GPU driver, their devices made GPUs.
pub fn read(src: &Source, warnings: &mut Vec<Diag>) -> Result<Published, Vec<Diag>> {
    let file = File::read(src, "kubectl get resourceslices -o json").map_err(|d| vec![d])?;
    let mut problems = Problems::default();
    // Pool -> (highest generation, slices of it seen, count they say, node, devices).
    let mut pools: BTreeMap<String, Seen> = BTreeMap::new();
    file.each("ResourceSlice", &mut problems, |i, s: Slice, _| {
        let spec = s.spec;
        if spec.driver != DRIVER || spec.pool.name.is_empty() {
            return;
        }
        let node = spec.node_name.unwrap_or_else(|| spec.pool.name.clone());
        let e = pools.entry(spec.pool.name.clone()).or_insert_with(|| Seen::new(i, spec.pool.generation, node.clone()));
        if spec.pool.generation > e.generation {
            *e = Seen::new(i, spec.pool.generation, node);
        }
        if spec.pool.generation == e.generation {
            e.slices += 1;
            e.count = e.count.max(spec.pool.resource_slice_count);
            // A device name is unique in its pool: the first one counts.
            // Places a device could be made in (DynamicMIG) are not devices.
            for d in spec.devices.into_iter().filter(|d| d.consumes_counters.is_none()) {
                if e.names.insert(d.name.clone()) {
                    e.devices.push(d);
                }
            }
        }
    })?;
    let mut out = Published::default();
    let mut incomplete = Vec::new();
    // A node's devices over its complete pools, numbered together.
    let mut by_node: BTreeMap<String, (usize, Vec<Device>)> = BTreeMap::new();
    for (pool, Seen { first, generation, slices: seen, count, node, devices, .. }) in pools {
        if seen < count {
            incomplete.push(format!("{pool} (generation {generation}: {seen} of {count} slices)"));
            continue;
        }
        out.pools.insert(pool, node.clone());
        by_node.entry(node).or_insert_with(|| (first, Vec::new())).1.extend(devices);
    }
    for (node, (first, devices)) in by_node {
        let gpus = gpus(&devices);
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
    if !incomplete.is_empty() {
        warnings.push(
            Diag::warning(
                Code::IncompletePool,
                format!(
                    "{} DRA pool(s) are not whole in {}, so their nodes keep the GPUs their labels give: {}",
                    incomplete.len(),
                    src.name(),
                    crate::report::shorten(&incomplete.iter().map(String::as_str).collect::<Vec<_>>(), 5)
                ),
            )
            .help("the driver was publishing while the file was taken: run `kubectl get resourceslices -o json` again"),
        );
    }
    Ok(out)
}

/// A GPU found in a pool, with what orders it: its PCI bus id, its name.
type Found = (Option<String>, Vec<(u64, String)>, Gpu);

/// The GPUs of one pool: its `gpu` devices, and the GPUs its `mig`
/// devices name as `parentUUID` (a GPU in MIG mode is published only as
/// its MIG devices), in PCI bus order (the driver's device names follow
/// the kernel's minor numbers, not NVML's indices), numbered from 0.
fn gpus(devices: &[Device]) -> Vec<Gpu> {
    let whole: Vec<&Device> = devices.iter().filter(|d| d.attribute("type") == Some("gpu")).collect();
    let mut migs: Vec<&Device> = devices.iter().filter(|d| d.attribute("type") == Some("mig")).collect();
    migs.sort_by_key(|d| natural(&d.name));
    // (PCI bus id, name, the GPU): whole ones, then parents seen only
    // through their MIG devices.
    let mut found: Vec<Found> = whole
        .iter()
        .map(|d| {
            let mut g = Gpu::named(0, d.attribute("productName").unwrap_or("unknown"), d.memory_mb());
            g.uuid = d.attribute("uuid").map(str::to_string);
            g.dra_device = Some(d.name.clone());
            g.pci_bus_id = d.pci_bus_id().map(str::to_string);
            (g.pci_bus_id.clone(), natural(&d.name), g)
        })
        .collect();
    let mut uuids: HashSet<String> = found.iter().filter_map(|(_, _, g)| g.uuid.clone()).collect();
    for d in &migs {
        let Some(parent) = d.attribute("parentUUID") else { continue };
        if !uuids.insert(parent.to_string()) {
            continue;
        }
        let mut g = Gpu::named(0, d.attribute("productName").unwrap_or("unknown"), 0);
        g.uuid = Some(parent.to_string());
        g.pci_bus_id = d.pci_bus_id().map(str::to_string);
        found.push((g.pci_bus_id.clone(), natural(parent), g));
    }
    found.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    let mut out: Vec<Gpu> = found
        .into_iter()
        .enumerate()
        .map(|(i, (_, _, mut g))| {
            g.index = i as u32;
            g
        })
        .collect();
    let by_uuid: HashMap<String, usize> =
        out.iter().enumerate().filter_map(|(i, g)| Some((g.uuid.clone()?, i))).collect();
    for d in migs {
        let Some(&at) = d.attribute("parentUUID").and_then(|p| by_uuid.get(p)) else { continue };
        let g = &mut out[at];
        g.mig = Some(true);
        let mut m =
            MigDevice::new(g.mig_devices.len() as u32, d.attribute("profile").unwrap_or_default(), d.memory_mb());
        m.uuid = d.attribute("uuid").map(str::to_string);
        m.dra_device = Some(d.name.clone());
        g.mig_devices.push(m);
    }
    out
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
    let list = |v: &[String]| crate::report::shorten(&v.iter().map(String::as_str).collect::<Vec<_>>(), 5);
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
