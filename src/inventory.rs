//! Inventories: the nodes of a fleet, their GPUs, fabrics, engines, and what
//! already runs on them. `discover` prints this form; `place` reads it.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::decode::Decoder;
use crate::diag::{Code, Diag, Source};
use crate::doc::{self, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Ready,
    Cordoned,
    Draining,
    Down,
}

impl State {
    pub const ALL: [State; 4] = [State::Ready, State::Cordoned, State::Draining, State::Down];
    pub fn as_str(self) -> &'static str {
        match self {
            State::Ready => "ready",
            State::Cordoned => "cordoned",
            State::Draining => "draining",
            State::Down => "down",
        }
    }
    pub fn parse(s: &str) -> Option<State> {
        State::ALL.into_iter().find(|st| st.as_str() == s)
    }
    pub fn schedulable(self) -> bool {
        self == State::Ready
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Inventory {
    #[serde(rename = "node")]
    pub nodes: Vec<Node>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Node {
    pub id: String,
    pub state: State,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "is_zero")]
    pub memory_total_mb: u64,
    /// Engine -> version ("" when only its presence is known). Empty means
    /// the node does not report engines (an older agent): never a reason to
    /// reject it.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub engines: BTreeMap<String, String>,
    /// `None`: the node never looked for weights; `Some([])`: it looked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weights: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk: Option<Disk>,
    #[serde(rename = "gpu", skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<Gpu>,
    #[serde(rename = "fabric", skip_serializing_if = "Vec::is_empty")]
    pub fabrics: Vec<Fabric>,
    #[serde(rename = "allocation", skip_serializing_if = "Vec::is_empty")]
    pub allocations: Vec<Allocation>,
    /// Where the node was defined, for messages about it.
    #[serde(skip)]
    pub origin: Option<(Source, Span)>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_true(v: &bool) -> bool {
    *v
}

#[derive(Clone, Debug, Serialize)]
pub struct Disk {
    pub path: String,
    pub free_bytes: u64,
    pub total_bytes: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Gpu {
    pub index: u32,
    pub name: String,
    #[serde(skip_serializing_if = "is_zero")]
    pub memory_mb: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
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
}

#[derive(Clone, Debug, Serialize)]
pub struct Fabric {
    pub name: String,
    pub hcas: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Allocation {
    pub model: String,
    pub replica: u32,
    pub gpus: Vec<u32>,
}

impl Node {
    pub fn fabric(&self, name: &str) -> Option<&Fabric> {
        self.fabrics.iter().find(|f| f.name == name)
    }
    pub fn reports_engines(&self) -> bool {
        !self.engines.is_empty()
    }
    /// Whether the node is known to hold these weights.
    pub fn holds(&self, source: &str) -> bool {
        self.weights.as_ref().is_some_and(|w| w.iter().any(|s| s == source))
    }
    pub fn gpu_position(&self, index: u32) -> Option<usize> {
        self.gpus.binary_search_by_key(&index, |g| g.index).ok()
    }
}

/// GPU class normalisation (SPEC §3): lower-case; every run of characters
/// other than `a-z0-9.` becomes `-`; leading/trailing `-` dropped; a leading
/// `nvidia-` dropped. So NVML's "NVIDIA H100 80GB HBM3", GPU Feature
/// Discovery's "NVIDIA-H100-80GB-HBM3" and "h100-80gb-hbm3" are one class.
pub fn normalize_class(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut dash = false;
    for c in raw.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' {
            if dash && !out.is_empty() {
                out.push('-');
            }
            dash = false;
            out.push(c);
        } else {
            dash = true;
        }
    }
    match out.strip_prefix("nvidia-") {
        Some(rest) => rest.to_string(),
        None => out,
    }
}

const ROOT_FIELDS: &[&str] = &["node"];
const NODE_FIELDS: &[&str] =
    &["id", "state", "labels", "memory_total_mb", "engines", "weights", "disk", "gpu", "fabric", "allocation"];
const GPU_FIELDS: &[&str] =
    &["index", "name", "memory_mb", "uuid", "pci_bus_id", "mig", "class", "nvlink_peers", "healthy"];
const FABRIC_FIELDS: &[&str] = &["name", "hcas"];
const ALLOC_FIELDS: &[&str] = &["model", "replica", "gpus"];
const DISK_FIELDS: &[&str] = &["path", "free_bytes", "total_bytes"];
const U32: u64 = u32::MAX as u64;
const I64: u64 = i64::MAX as u64;

/// Parses and checks one inventory file through the spanned tree: the path
/// that says exactly what is wrong and where (`load::inventory_file` tries
/// a faster one first). Nodes come back sorted by id, GPUs by index; any
/// error makes the whole file unusable.
pub fn load_spanned(src: &Source) -> Result<Vec<Node>, Vec<Diag>> {
    let text = src.text();
    let root = doc::parse(text, src.format()).map_err(|e| {
        vec![
            Diag::error(Code::Syntax, format!("{} is not a valid inventory: {}", src.name(), e.message))
                .at(src, e.span, "here")
                .help("fix the syntax, then run again"),
        ]
    })?;
    let mut dec = Decoder::new(src.clone());
    let mut nodes = Vec::new();
    // An empty YAML document is an empty inventory, as an empty TOML file is.
    let empty = matches!(root.value, doc::Value::Null);
    if let Some(mut t) = if empty { None } else { dec.table(&root, "inventory") } {
        if let Some(list) = t.get("node") {
            if let Some(items) = dec.array(list, "node") {
                nodes.reserve(items.len());
                for item in items {
                    if let Some(n) = node(&mut dec, item) {
                        nodes.push(n);
                    }
                }
            }
        }
        t.finish(&mut dec, ROOT_FIELDS);
    }
    if dec.diags.is_empty() {
        nodes.sort_by(|a, b| a.id.cmp(&b.id));
        for w in nodes.windows(2) {
            if w[0].id == w[1].id {
                dec.push(duplicate_node(&w[1], &w[0]));
            }
        }
    }
    if dec.diags.is_empty() {
        Ok(nodes)
    } else {
        let mut d = dec.diags;
        crate::diag::sort(&mut d);
        Err(d)
    }
}

/// The error for a node id defined twice, with both places named.
pub fn duplicate_node(again: &Node, first: &Node) -> Diag {
    let mut d = Diag::error(Code::DuplicateNode, format!("node `{}` is defined twice", again.id))
        .help("node ids must be unique across every inventory given: remove or rename one");
    if let Some((src, span)) = &again.origin {
        d = d.at(src, *span, "defined again here");
        if let Some((fsrc, fspan)) = &first.origin {
            if fsrc.name() == src.name() {
                d = d.label(*fspan, "first defined here");
            } else {
                let (line, col) = fsrc.line_col(fspan.start);
                d.message = format!("node `{}` is defined in both {} and {}", again.id, fsrc.name(), src.name());
                d.help = Some(format!(
                    "first defined at {}:{line}:{col}; a node id must appear in only one file",
                    fsrc.name()
                ));
            }
        }
    }
    d
}

fn node(dec: &mut Decoder, item: &doc::Node<'_>) -> Option<Node> {
    let mut t = dec.table(item, "node")?;
    let before = dec.diags.len();
    let id_node = t.require(dec, "id");
    let id = id_node.and_then(|n| dec.string(n, "id"));
    let id_span = id_node.map_or(t.span, |n| n.span);
    if id.as_deref() == Some("") {
        dec.error(Code::EmptyNodeId, id_span, "a node's id is empty".into(), "empty id", None);
    }
    let state = match t.get("state") {
        None => Some(State::Ready),
        Some(n) => dec.string(n, "state").and_then(|s| {
            let st = State::parse(&s);
            if st.is_none() {
                let help = crate::diag::suggest(&s, State::ALL.iter().map(|s| s.as_str()), "a node is one of");
                dec.error(Code::UnknownState, n.span, format!("unknown node state `{s}`"), "unknown state", Some(help));
            }
            st
        }),
    };
    let labels = t.get("labels").map(|n| dec.string_map(n, "labels"));
    let memory_total_mb = t.get("memory_total_mb").map(|n| dec.uint(n, "memory_total_mb", I64));
    let engines = t.get("engines").map(|n| dec.string_map(n, "engines"));
    let weights = t.get("weights").map(|n| dec.string_list(n, "weights"));
    let disk = t.get("disk").map(|n| disk(dec, n));
    let mut gpus = Vec::new();
    if let Some(list) = t.get("gpu") {
        if let Some(items) = dec.array(list, "gpu") {
            for g in items {
                if let Some(g) = gpu(dec, g) {
                    gpus.push(g);
                }
            }
        }
    }
    let mut fabrics = Vec::new();
    if let Some(list) = t.get("fabric") {
        if let Some(items) = dec.array(list, "fabric") {
            for f in items {
                if let Some(f) = fabric(dec, f) {
                    fabrics.push(f);
                }
            }
        }
    }
    let mut allocations = Vec::new();
    if let Some(list) = t.get("allocation") {
        if let Some(items) = dec.array(list, "allocation") {
            for a in items {
                if let Some(a) = allocation(dec, a) {
                    allocations.push(a);
                }
            }
        }
    }
    t.finish(dec, NODE_FIELDS);
    // Keep going after a problem with a field, so the GPU and allocation
    // checks below still report theirs: every problem at once.
    let labels = labels.and_then(|l| l).unwrap_or_default().into_iter().map(|e| (e.key, e.value)).collect();
    let engines = engines.and_then(|e| e).unwrap_or_default().into_iter().map(|e| (e.key, e.value)).collect();
    let mut n = Node {
        id: id.unwrap_or_default(),
        state: state.unwrap_or(State::Ready),
        labels,
        memory_total_mb: memory_total_mb.and_then(|m| m).unwrap_or(0),
        engines,
        weights: weights.map(std::option::Option::unwrap_or_default),
        disk: disk.flatten(),
        gpus: Vec::new(),
        fabrics: fabrics.into_iter().map(|(f, _)| f).collect(),
        allocations: Vec::new(),
        origin: Some((dec.src.clone(), id_span)),
    };
    check_gpus(dec, &mut n, gpus);
    check_allocations(dec, &mut n, allocations);
    (dec.diags.len() == before).then_some(n)
}

struct RawGpu {
    gpu: Gpu,
    index_span: Span,
    peers: Vec<(u64, Span)>,
}

struct RawAlloc {
    alloc: Allocation,
    gpus: Vec<(u64, Span)>,
}

fn check_gpus(dec: &mut Decoder, n: &mut Node, mut raw: Vec<RawGpu>) {
    raw.sort_by_key(|g| g.gpu.index);
    for w in raw.windows(2) {
        if w[0].gpu.index == w[1].gpu.index {
            let (a, b) = if w[0].index_span.start < w[1].index_span.start { (&w[0], &w[1]) } else { (&w[1], &w[0]) };
            let d = Diag::error(Code::DuplicateGpu, format!("node `{}` has two GPUs with index {}", n.id, b.gpu.index))
                .at(&dec.src, b.index_span, "index used again here")
                .label(a.index_span, "first used here")
                .help("each GPU of a node needs its own index, as NVML numbers them");
            dec.push(d);
        }
    }
    let indices: Vec<u32> = raw.iter().map(|g| g.gpu.index).collect();
    for g in &mut raw {
        let mut peers = Vec::with_capacity(g.peers.len());
        for &(p, span) in &g.peers {
            if p > U32 || indices.binary_search(&(p as u32)).is_err() {
                let d = Diag::error(
                    Code::UnknownPeer,
                    format!(
                        "GPU {} of node `{}` lists NVLink peer {p}, which is not a GPU of the node",
                        g.gpu.index, n.id
                    ),
                )
                .at(&dec.src, span, "no such GPU on this node")
                .help(format!("the node's GPUs are {}", list(&indices)));
                dec.push(d);
            } else {
                peers.push(p as u32);
            }
        }
        g.gpu.nvlink_peers = peers;
    }
    n.gpus = raw.into_iter().map(|g| g.gpu).collect();
}

fn check_allocations(dec: &mut Decoder, n: &mut Node, raw: Vec<RawAlloc>) {
    let indices: Vec<u32> = n.gpus.iter().map(|g| g.index).collect();
    let mut taken: BTreeMap<u32, Span> = BTreeMap::new();
    for mut a in raw {
        for &(g, span) in &a.gpus {
            let g32 = g.min(U32) as u32;
            if g > U32 || indices.binary_search(&g32).is_err() {
                let have = if indices.is_empty() {
                    "it has no GPUs".to_string()
                } else {
                    format!("its GPUs are {}", list(&indices))
                };
                let d = Diag::error(
                    Code::UnknownGpu,
                    format!(
                        "an allocation of `{}` on node `{}` names GPU {g}, which the node does not have",
                        a.alloc.model, n.id
                    ),
                )
                .at(&dec.src, span, "no such GPU")
                .help(format!("the node reports its GPUs under [[node.gpu]]; {have}"));
                dec.push(d);
            } else if let Some(first) = taken.get(&g32) {
                let d = Diag::error(Code::GpuAllocatedTwice, format!("GPU {g} of node `{}` is allocated twice", n.id))
                    .at(&dec.src, span, "allocated again here")
                    .label(*first, "first allocated here")
                    .help("a GPU runs one shard at a time: fix whichever allocation is stale");
                dec.push(d);
            } else {
                taken.insert(g32, span);
                a.alloc.gpus.push(g32);
            }
        }
        n.allocations.push(a.alloc);
    }
}

fn list(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

fn gpu(dec: &mut Decoder, item: &doc::Node<'_>) -> Option<RawGpu> {
    let mut t = dec.table(item, "gpu")?;
    let index_node = t.require(dec, "index");
    let index = index_node.and_then(|n| dec.uint(n, "index", U32));
    let name = t.require(dec, "name").and_then(|n| dec.string(n, "name"));
    let memory = t.get("memory_mb").map(|n| dec.uint(n, "memory_mb", I64));
    let uuid = t.get("uuid").map(|n| dec.string(n, "uuid"));
    let pci = t.get("pci_bus_id").map(|n| dec.string(n, "pci_bus_id"));
    let mig = t.get("mig").map(|n| dec.boolean(n, "mig"));
    let class = t.get("class").map(|n| dec.string(n, "class"));
    let peers = t.get("nvlink_peers").map(|n| dec.uint_list(n, "nvlink_peers", I64));
    let healthy = t.get("healthy").map(|n| dec.boolean(n, "healthy"));
    let span = t.span;
    t.finish(dec, GPU_FIELDS);
    let name = name?;
    let class_override = match class {
        Some(c) => Some(c?),
        None => None,
    };
    let class = normalize_class(class_override.as_deref().unwrap_or(&name));
    Some(RawGpu {
        gpu: Gpu {
            index: index? as u32,
            name,
            memory_mb: memory.unwrap_or(Some(0))?,
            uuid: uuid.map_or(Some(None), |u| u.map(Some))?,
            pci_bus_id: pci.map_or(Some(None), |u| u.map(Some))?,
            mig: mig.map_or(Some(None), |m| m.map(Some))?,
            class_override,
            class,
            nvlink_peers: Vec::new(),
            healthy: healthy.unwrap_or(Some(true))?,
        },
        index_span: index_node.map_or(span, |n| n.span),
        peers: peers.unwrap_or(Some(Vec::new()))?,
    })
}

fn fabric(dec: &mut Decoder, item: &doc::Node<'_>) -> Option<(Fabric, Span)> {
    let mut t = dec.table(item, "fabric")?;
    let name_node = t.require(dec, "name");
    let name = name_node.and_then(|n| dec.string(n, "name"));
    let hcas = t.get("hcas").map(|n| dec.string_list(n, "hcas"));
    let span = t.span;
    t.finish(dec, FABRIC_FIELDS);
    if name.as_deref() == Some("") {
        dec.error(
            Code::MissingField,
            name_node.map_or(span, |n| n.span),
            "a fabric's name is empty".into(),
            "empty",
            None,
        );
        return None;
    }
    Some((Fabric { name: name?, hcas: hcas.unwrap_or(Some(Vec::new()))? }, span))
}

fn allocation(dec: &mut Decoder, item: &doc::Node<'_>) -> Option<RawAlloc> {
    let mut t = dec.table(item, "allocation")?;
    let model = t.require(dec, "model").and_then(|n| dec.string(n, "model"));
    let replica = t.require(dec, "replica").and_then(|n| dec.uint(n, "replica", U32));
    let gpus = t.get("gpus").map(|n| dec.uint_list(n, "gpus", I64));
    t.finish(dec, ALLOC_FIELDS);
    Some(RawAlloc {
        alloc: Allocation { model: model?, replica: replica? as u32, gpus: Vec::new() },
        gpus: gpus.unwrap_or(Some(Vec::new()))?,
    })
}

fn disk(dec: &mut Decoder, item: &doc::Node<'_>) -> Option<Disk> {
    let mut t = dec.table(item, "disk")?;
    let path = t.get("path").map(|n| dec.string(n, "path"));
    let free = t.get("free_bytes").map(|n| dec.uint(n, "free_bytes", I64));
    let total = t.get("total_bytes").map(|n| dec.uint(n, "total_bytes", I64));
    t.finish(dec, DISK_FIELDS);
    Some(Disk {
        path: path.unwrap_or(Some(String::new()))?,
        free_bytes: free.unwrap_or(Some(0))?,
        total_bytes: total.unwrap_or(Some(0))?,
    })
}

/// Joins nodes from several files into one inventory, sorted by id. A node id
/// seen in two files is an error naming both.
pub fn merge(files: Vec<Vec<Node>>) -> Result<Inventory, Vec<Diag>> {
    let mut nodes: Vec<Node> = files.into_iter().flatten().collect();
    // Stable: of two nodes with one id, the one from the earlier file stays first.
    nodes.sort_by(|a, b| a.id.cmp(&b.id));
    let mut diags = Vec::new();
    for w in nodes.windows(2) {
        if w[0].id == w[1].id {
            diags.push(duplicate_node(&w[1], &w[0]));
        }
    }
    if diags.is_empty() { Ok(Inventory { nodes }) } else { Err(diags) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_normalise_per_spec() {
        assert_eq!(normalize_class("NVIDIA H100 80GB HBM3"), "h100-80gb-hbm3");
        assert_eq!(normalize_class("NVIDIA A100-SXM4-80GB"), "a100-sxm4-80gb");
        assert_eq!(normalize_class("NVIDIA-H100-80GB-HBM3"), "h100-80gb-hbm3");
        assert_eq!(normalize_class("h100-80gb-hbm3"), "h100-80gb-hbm3");
        assert_eq!(normalize_class("  --NVIDIA L40S--  "), "l40s");
        assert_eq!(normalize_class("Tesla V100-SXM2-16GB (rev 1.0)"), "tesla-v100-sxm2-16gb-rev-1.0");
        assert_eq!(normalize_class("nvidia"), "nvidia");
    }
}
