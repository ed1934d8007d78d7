//! The spanned loader: an inventory read from the spanned tree, every
//! problem reported with where it is.

use super::check::{AllocPart, GpuPart, U32, check_allocations, check_gpus};
use super::fields::{self, RawAlloc, RawDisk, RawFabric, RawGpu, RawInventory, RawMig, RawNode};
use super::{Allocation, Disk, Fabric, Gpu, MigDevice, Node, State, Weight, duplicate_node, normalize_class};
use crate::decode::Decoder;
use crate::diag::{Code, Diag, Source};
use crate::doc::{self, Span};

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
        if let Some(list) = t.get("node")
            && let Some(items) = dec.array(list, "node")
        {
            nodes.reserve(items.len());
            for item in items {
                if let Some(n) = node(&mut dec, item) {
                    nodes.push(n);
                }
            }
        }
        t.finish(&mut dec, fields::names::<RawInventory>());
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

fn node(dec: &mut Decoder, item: &doc::Node<'_>) -> Option<Node> {
    let mut t = dec.table(item, "node")?;
    let before = dec.diags.len();
    let id_node = t.require(dec, "id");
    let id = id_node.and_then(|n| dec.string(n, "id"));
    let id_span = id_node.map_or(t.span, |n| n.span);
    if id.as_deref() == Some("") {
        dec.error(Code::EmptyNodeId, id_span, "a node's id is empty".into(), "empty id", None);
    }
    if let Some(id) = &id {
        crate::decode::no_control(dec, id, "node id", id_span);
    }
    let discovered_by = t.optional(dec, "discovered_by", |dec, n| dec.string(n, "discovered_by"));
    let state = t.optional(dec, "state", |dec, n| {
        let s = dec.string(n, "state")?;
        super::check::state(dec, &s, n.span)
    });
    let labels = t.optional(dec, "labels", |dec, n| dec.string_map(n, "labels"));
    let taints = t.optional(dec, "taints", taint_list);
    let memory_total_mb = t.optional(dec, "memory_total_mb", |dec, n| dec.uint(n, "memory_total_mb", I64));
    let memory_allocatable_mb =
        t.optional(dec, "memory_allocatable_mb", |dec, n| dec.uint(n, "memory_allocatable_mb", I64));
    let cpus =
        t.optional(dec, "cpus", |dec, n| cpu_count(dec, n, "cpus", "the CPUs workloads may use, e.g. 96 or 95.5"));
    let engines = t.optional(dec, "engines", |dec, n| dec.string_map(n, "engines"));
    let weights = t.optional(dec, "weights", weight_list);
    let disk = t.optional(dec, "disk", disk);
    let gpus = t.list(dec, "gpu", gpu);
    let fabrics = t.list(dec, "fabric", fabric);
    let allocations = t.list(dec, "allocation", allocation);
    t.finish(dec, fields::names::<RawNode>());
    // Keep going after a problem with a field, so the GPU and allocation
    // checks below still report theirs: every problem at once.
    let pairs =
        |m: Option<Vec<crate::decode::MapEntry>>| m.unwrap_or_default().into_iter().map(|e| (e.key, e.value)).collect();
    let mut n = Node {
        id: id.unwrap_or_default(),
        discovered_by: discovered_by.ok().flatten(),
        state: state.ok().flatten().unwrap_or(State::Ready),
        labels: pairs(labels.ok().flatten()),
        taints: taints.ok().flatten().unwrap_or_default(),
        memory_total_mb: memory_total_mb.ok().flatten().unwrap_or(0),
        memory_allocatable_mb: memory_allocatable_mb.ok().flatten(),
        cpus: cpus.ok().flatten(),
        engines: engines.ok().flatten().map(|e| pairs(Some(e))),
        weights: weights.unwrap_or(Some(Vec::new())),
        disk: disk.ok().flatten(),
        gpus: Vec::new(),
        fabrics,
        allocations: Vec::new(),
        origin: Some((dec.src.clone(), id_span)),
    };
    check_gpus(dec, &mut n, gpus);
    check_allocations(dec, &mut n, allocations);
    (dec.diags.len() == before).then_some(n)
}

fn gpu(dec: &mut Decoder, item: &doc::Node<'_>) -> Option<GpuPart> {
    let mut t = dec.table(item, "gpu")?;
    let index_node = t.require(dec, "index");
    let index = index_node.and_then(|n| dec.uint(n, "index", U32));
    let name = t.required(dec, "name", |dec, n| dec.string(n, "name"));
    let vendor = t.optional(dec, "vendor", |dec, n| {
        let s = dec.string(n, "vendor")?;
        super::check::vendor(dec, &s, n.span)
    });
    let memory = t.optional(dec, "memory_mb", |dec, n| dec.uint(n, "memory_mb", I64));
    let uuid = t.optional(dec, "uuid", |dec, n| dec.string(n, "uuid"));
    let dra = t.optional(dec, "dra_device", |dec, n| dec.string(n, "dra_device"));
    let pci = t.optional(dec, "pci_bus_id", |dec, n| dec.string(n, "pci_bus_id"));
    let mig = t.optional(dec, "mig", |dec, n| dec.boolean(n, "mig"));
    let class = t.optional(dec, "class", |dec, n| dec.string(n, "class"));
    let peers = t.optional(dec, "nvlink_peers", |dec, n| dec.uint_list(n, "nvlink_peers", I64));
    let healthy = t.optional(dec, "healthy", |dec, n| dec.boolean(n, "healthy"));
    let migs = t.list(dec, "mig_device", mig_device);
    let span = t.span;
    t.finish(dec, fields::names::<RawGpu>());
    let name = name?;
    let class_override = class.ok()?;
    let class = normalize_class(class_override.as_deref().unwrap_or(&name));
    Some(GpuPart {
        gpu: Gpu {
            index: index? as u32,
            name,
            vendor: vendor.ok()?.unwrap_or_default(),
            memory_mb: memory.ok()?.unwrap_or(0),
            uuid: uuid.ok()?,
            dra_device: dra.ok()?,
            pci_bus_id: pci.ok()?,
            mig: mig.ok()?,
            class_override,
            class,
            nvlink_peers: Vec::new(),
            healthy: healthy.ok()?.unwrap_or(true),
            mig_devices: Vec::new(),
        },
        index_span: index_node.map_or(span, |n| n.span),
        peers: peers.ok()?.unwrap_or_default(),
        migs,
    })
}

fn mig_device(dec: &mut Decoder, item: &doc::Node<'_>) -> Option<(MigDevice, Span)> {
    let mut t = dec.table(item, "mig_device")?;
    let index_node = t.require(dec, "index");
    let index = index_node.and_then(|n| dec.uint(n, "index", U32));
    let profile = t.required(dec, "profile", |dec, n| dec.string(n, "profile"));
    let memory = t.optional(dec, "memory_mb", |dec, n| dec.uint(n, "memory_mb", I64));
    let uuid = t.optional(dec, "uuid", |dec, n| dec.string(n, "uuid"));
    let dra = t.optional(dec, "dra_device", |dec, n| dec.string(n, "dra_device"));
    let span = t.span;
    t.finish(dec, fields::names::<RawMig>());
    let device = MigDevice {
        index: index? as u32,
        profile: profile?,
        memory_mb: memory.ok()?.unwrap_or(0),
        uuid: uuid.ok()?,
        dra_device: dra.ok()?,
    };
    Some((device, index_node.map_or(span, |n| n.span)))
}

fn fabric(dec: &mut Decoder, item: &doc::Node<'_>) -> Option<Fabric> {
    let mut t = dec.table(item, "fabric")?;
    let name_node = t.require(dec, "name");
    let name = name_node.and_then(|n| dec.string(n, "name"));
    let kind = t.optional(dec, "kind", |dec, n| {
        let s = dec.string(n, "kind")?;
        super::check::fabric_kind(dec, &s, n.span)
    });
    let hcas = t.optional(dec, "hcas", |dec, n| dec.string_list(n, "hcas"));
    let span = t.span;
    t.finish(dec, fields::names::<RawFabric>());
    if name.as_deref() == Some("") {
        let at = name_node.map_or(span, |n| n.span);
        dec.error(Code::MissingField, at, "a fabric's name is empty".into(), "empty", None);
        return None;
    }
    Some(Fabric { name: name?, kind: kind.ok()?.unwrap_or_default(), hcas: hcas.ok()? })
}

fn allocation(dec: &mut Decoder, item: &doc::Node<'_>) -> Option<AllocPart> {
    let mut t = dec.table(item, "allocation")?;
    let model = t.required(dec, "model", |dec, n| dec.string(n, "model"));
    let replica = t.required(dec, "replica", |dec, n| dec.uint(n, "replica", U32));
    let gpus = t.optional(dec, "gpus", |dec, n| dec.uint_list(n, "gpus", I64));
    let migs = t.optional(dec, "mig_devices", |dec, n| dec.uint_list(n, "mig_devices", I64));
    let cpus =
        t.optional(dec, "cpus", |dec, n| cpu_count(dec, n, "cpus", "the CPUs the allocation holds, e.g. 16 or 0.5"));
    let memory_mb = t.optional(dec, "memory_mb", |dec, n| dec.uint(n, "memory_mb", I64));
    let profile = t.optional(dec, "profile", |dec, n| dec.string(n, "profile"));
    let pending = t.optional(dec, "pending", |dec, n| dec.boolean(n, "pending"));
    let job = t.optional(dec, "job", |dec, n| dec.uint(n, "job", I64));
    t.finish(dec, fields::names::<RawAlloc>());
    Some(AllocPart {
        alloc: Allocation {
            cpus: cpus.ok()?,
            memory_mb: memory_mb.ok()?,
            profile: profile.ok()?,
            pending: pending.ok()?.unwrap_or(false),
            job: job.ok()?,
            ..Allocation::new(model?, replica? as u32, Vec::new(), Vec::new())
        },
        gpus: gpus.ok()?.unwrap_or_default(),
        migs: migs.ok()?.unwrap_or_default(),
    })
}

/// `weights = ["ORG/NAME", { source = "ORG/NAME", path = "/abs/path" }]`.
fn weight_list(dec: &mut Decoder, n: &doc::Node<'_>) -> Option<Vec<Weight>> {
    let items = dec.array(n, "weights")?;
    let mut out = Vec::with_capacity(items.len());
    let mut ok = true;
    for item in items {
        let w = match &item.value {
            doc::Value::Table(_) => weight_table(dec, item),
            _ => dec.string(item, "weights").map(Weight::named),
        };
        match w {
            Some(w) => out.push(w),
            None => ok = false,
        }
    }
    ok.then_some(out)
}

fn weight_table(dec: &mut Decoder, item: &doc::Node<'_>) -> Option<Weight> {
    let mut t = dec.table(item, "weights entry")?;
    let source = t.required(dec, "source", |dec, n| dec.string(n, "source"));
    let path_node = t.require(dec, "path");
    let path = path_node.and_then(|n| dec.string(n, "path"));
    t.finish(dec, fields::names::<fields::RawWeightAt>());
    let (source, path) = (source?, path?);
    if !weight_path_ok(&path) {
        let at = path_node.map_or(item.span, |n| n.span);
        let help = "the path an engine is given on the node: absolute, as discover writes it";
        dec.error(Code::WrongType, at, format!("`{path}` is not an absolute path"), "not absolute", Some(help.into()));
        return None;
    }
    Some(Weight { source, path: Some(path) })
}

/// A weights path: absolute, without control characters.
pub fn weight_path_ok(p: &str) -> bool {
    p.starts_with('/') && !p.chars().any(char::is_control)
}

/// The most CPUs a node or an allocation may say it has.
pub const MAX_CPUS: f64 = u32::MAX as f64;

/// A CPU count: a finite number from 0 to `MAX_CPUS`, fractions allowed.
fn cpu_count(dec: &mut Decoder, n: &doc::Node<'_>, field: &str, help: &str) -> Option<f64> {
    let c = dec.number_above(n, field, true, help)?;
    if c > MAX_CPUS {
        dec.error(
            Code::OutOfRange,
            n.span,
            format!("`{field}` must be at most {}, found {c}", u32::MAX),
            "too large",
            Some(help.into()),
        );
        return None;
    }
    Some(c)
}

/// `taints = ["key=value:Effect", ...]`, each checked where it is written.
fn taint_list(dec: &mut Decoder, n: &doc::Node<'_>) -> Option<Vec<String>> {
    let items = dec.array(n, "taints")?;
    let mut out = Vec::with_capacity(items.len());
    let mut ok = true;
    for item in items {
        let Some(s) = dec.string(item, "taints") else {
            ok = false;
            continue;
        };
        if let Err(why) = crate::taints::parse_taint(&s) {
            let help = "write the taint as `kubectl describe node` shows it: `nvidia.com/gpu=present:NoSchedule`";
            dec.error(Code::BadTaint, item.span, why, "not a taint", Some(help.into()));
            ok = false;
            continue;
        }
        out.push(s);
    }
    ok.then_some(out)
}

fn disk(dec: &mut Decoder, item: &doc::Node<'_>) -> Option<Disk> {
    let mut t = dec.table(item, "disk")?;
    let path = t.optional(dec, "path", |dec, n| dec.string(n, "path"));
    let free = t.optional(dec, "free_bytes", |dec, n| dec.uint(n, "free_bytes", I64));
    let total = t.optional(dec, "total_bytes", |dec, n| dec.uint(n, "total_bytes", I64));
    t.finish(dec, fields::names::<RawDisk>());
    Some(Disk {
        path: path.ok()?.unwrap_or_default(),
        free_bytes: free.ok()?.unwrap_or(0),
        total_bytes: total.ok()?.unwrap_or(0),
    })
}
