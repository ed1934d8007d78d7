//! The plan document: written by `write` (what `place --format json`
//! prints), and read back here for `diff` and `render`. Read once, with the
//! place of every entry,
//! so that a plan naming one replica twice, or a GPU its node lacks, is
//! reported where it says so.

pub mod reasons;
pub mod write;

use serde::Serialize;

use crate::decode::{Decoder, Table};
use crate::diag::{Code, Diag, Source};
use crate::doc::{self, Node, Span};

/// A plan as read: the replicas it runs (those already running first, as
/// the file lists them, then the new placements), those it leaves
/// unplaced, and the inputs it was made from.
#[derive(Debug)]
pub struct Plan {
    pub src: Source,
    pub entries: Vec<Entry>,
    pub unplaced: Vec<Unplaced>,
    pub inputs: Option<Inputs>,
}

/// Whether a replica was placed by this plan or already ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Placed,
    Existing,
}

/// One replica the plan runs.
#[derive(Clone, Debug)]
pub struct Entry {
    pub kind: Kind,
    pub model: String,
    pub replica: u32,
    /// `None` for a running replica whose allocation does not say.
    pub profile: Option<String>,
    pub engine: Option<String>,
    /// The fabric a multi-node placement runs on; `None` where the plan
    /// does not say (one node, or a replica that already runs).
    pub fabric: Option<String>,
    pub nodes: Vec<At>,
    /// A running replica that is only submitted so far (a pending job).
    pub pending: bool,
    pub span: Span,
}

/// One node of a replica, in rank order. Two are equal when they name the
/// same node, GPUs and MIG devices, and ask for the same CPUs and memory
/// where both say (adapters and places in a file aside).
#[derive(Clone, Debug)]
pub struct At {
    pub node: String,
    /// What the replica asks of the node (render writes exactly this);
    /// CPUs and memory are `None` where the plan does not say.
    pub share: crate::share::Share,
    /// The adapters NCCL is told of on this node; `None` where the plan
    /// does not say (a replica that already runs).
    pub hcas: Option<Vec<String>>,
    pub span: Span,
}

/// A node of a plan reads as its share: `at.gpus`, `at.cpus_millis`.
impl std::ops::Deref for At {
    type Target = crate::share::Share;
    fn deref(&self) -> &crate::share::Share {
        &self.share
    }
}

impl At {
    /// This node as the plan writes it (without rank or adapters).
    pub fn json(&self) -> crate::share::ShareJson<'_> {
        crate::share::ShareJson::of(&self.node, &self.gpus, &self.mig_devices, self.cpus_millis, self.memory_mb)
    }
}

/// `diff` writes a node as the plan does.
impl Serialize for At {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.json().serialize(s)
    }
}

impl PartialEq for At {
    fn eq(&self, o: &At) -> bool {
        let agree = |a: Option<u64>, b: Option<u64>| a.is_none() || b.is_none() || a == b;
        self.node == o.node
            && self.gpus == o.gpus
            && self.mig_devices == o.mig_devices
            && agree(self.cpus_millis, o.cpus_millis)
            && agree(self.memory_mb, o.memory_mb)
    }
}

impl Eq for At {}

impl Entry {
    /// Whether two plans run this replica alike: the same nodes, GPUs and
    /// MIG devices, with the same profile and engine (where both say).
    pub fn same_as(&self, o: &Entry) -> bool {
        let agree = |a: &Option<String>, b: &Option<String>| a.is_none() || b.is_none() || a == b;
        // Ranks aside: a replica that runs is listed by node id, its plan
        // by rank; the same nodes and GPUs are the same placement.
        fn by_node(v: &[At]) -> Vec<&At> {
            let mut v: Vec<&At> = v.iter().collect();
            v.sort_by(|a, b| a.node.cmp(&b.node));
            v
        }
        let (mine, theirs) = (by_node(&self.nodes), by_node(&o.nodes));
        // Another fabric or other adapters on the same GPUs change what
        // NCCL is told (`NCCL_IB_HCA`): the replica has to be restarted.
        let adapters = mine.iter().zip(&theirs).all(|(a, b)| a.hcas.is_none() || b.hcas.is_none() || a.hcas == b.hcas);
        mine == theirs
            && adapters
            && agree(&self.profile, &o.profile)
            && agree(&self.engine, &o.engine)
            && agree(&self.fabric, &o.fabric)
    }

    /// The adapters per node, as diff shows them: "gpu-a01 mlx5_0,mlx5_1;
    /// gpu-a02 mlx5_0"; `None` where the plan names none.
    pub fn adapters(&self) -> Option<String> {
        let said: Vec<String> = self
            .nodes
            .iter()
            .filter_map(|a| a.hcas.as_ref().filter(|h| !h.is_empty()).map(|h| format!("{} {}", a.node, h.join(","))))
            .collect();
        (!said.is_empty()).then(|| said.join("; "))
    }
}

/// What NEW stops of what OLD runs: each replica OLD has (placed or
/// running) that NEW removes, leaves unplaced, or runs elsewhere or
/// otherwise — never one NEW lists as running, wherever it says (Slurm
/// may have given it other GPU indices than OLD planned).
pub fn stopped(old: &Plan, new: &Plan) -> std::collections::HashSet<*const Entry> {
    let now: std::collections::HashMap<(&str, u32), &Entry> =
        new.entries.iter().map(|n| ((n.model.as_str(), n.replica), n)).collect();
    old.entries
        .iter()
        .filter(|e| match now.get(&(e.model.as_str(), e.replica)) {
            Some(n) if n.kind == Kind::Existing => false,
            Some(n) => !n.same_as(e),
            None => true,
        })
        .map(std::ptr::from_ref)
        .collect()
}

/// A run of replicas left unplaced: `replica..=through` (one when equal).
#[derive(Clone, Debug)]
pub struct Unplaced {
    pub model: String,
    pub replica: u32,
    pub through: u32,
    pub span: Span,
}

/// The sha256 (lower-case hex) of the catalog's and the inventories' bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Inputs {
    pub catalog: String,
    pub inventory: String,
}

const HELP: &str = "give the JSON that `llmgw place --format json` prints (any --rejections form)";

/// Reads a plan. Keys llmgw does not need (reasons, pools, the summary)
/// are passed over; a replica listed twice is an error at both places.
pub fn read(src: &Source) -> Result<Plan, Vec<Diag>> {
    read_plan(src).map_err(|d| crate::kinds::wrong(src, &crate::kinds::Kind::Plan).map_or(d, |w| vec![w]))
}

fn read_plan(src: &Source) -> Result<Plan, Vec<Diag>> {
    let root = doc::parse(src.text(), doc::Format::Json).map_err(|e| {
        vec![
            Diag::error(Code::Syntax, format!("{} is not a plan: {}", src.name(), e.message))
                .at(src, e.span, "here")
                .help(HELP),
        ]
    })?;
    let mut dec = Decoder::new(src.clone());
    let mut plan = Plan { src: src.clone(), entries: Vec::new(), unplaced: Vec::new(), inputs: None };
    if let Some(mut t) = dec.table(&root, "plan") {
        let placements = t.require(&mut dec, "placements");
        let existing = t.get("existing");
        let unplaced = t.require(&mut dec, "unplaced");
        if let Some(list) = existing.and_then(|n| dec.array(n, "existing")) {
            plan.entries.extend(list.iter().filter_map(|n| entry(&mut dec, n, Kind::Existing)));
        }
        if let Some(list) = placements.and_then(|n| dec.array(n, "placements")) {
            plan.entries.extend(list.iter().filter_map(|n| entry(&mut dec, n, Kind::Placed)));
        }
        if let Some(list) = unplaced.and_then(|n| dec.array(n, "unplaced")) {
            plan.unplaced.extend(list.iter().filter_map(|n| unplaced_run(&mut dec, n)));
        }
        plan.inputs = t.optional(&mut dec, "inputs", inputs).ok().flatten();
    }
    if dec.diags.is_empty() {
        twice(&mut dec, &plan);
    }
    if dec.diags.is_empty() { Ok(plan) } else { Err(dec.diags) }
}

fn entry(dec: &mut Decoder, n: &Node<'_>, kind: Kind) -> Option<Entry> {
    let what = if kind == Kind::Placed { "placement" } else { "existing replica" };
    let mut t = dec.table(n, what)?;
    let model = t.required(dec, "model", |dec, n| dec.string(n, "model"));
    let replica = t.required(dec, "replica", |dec, n| dec.uint(n, "replica", u64::from(u32::MAX)));
    // A running replica's profile is null when its allocation does not say.
    let profile = match t.get("profile") {
        Some(p) if matches!(p.value, doc::Value::Null) && kind == Kind::Existing => Ok(None),
        Some(p) => dec.string(p, "profile").map(Some).ok_or(()),
        None if kind == Kind::Existing => Ok(None),
        None => {
            t.require(dec, "profile");
            Err(())
        }
    };
    let engine = t.optional(dec, "engine", |dec, n| dec.string(n, "engine"));
    let fabric = match t.get("fabric") {
        Some(f) if matches!(f.value, doc::Value::Null) => Ok(None),
        Some(f) => dec.string(f, "fabric").map(Some).ok_or(()),
        None => Ok(None),
    };
    let pending = t.optional(dec, "pending", |dec, n| dec.boolean(n, "pending"));
    let nodes = t.require(dec, "nodes").and_then(|n| dec.array(n, "nodes"));
    let nodes: Option<Vec<At>> = nodes.map(|items| items.iter().filter_map(|n| at(dec, n)).collect());
    let (model, replica, profile, engine, nodes) = (model?, replica?, profile.ok()?, engine.ok()?, nodes?);
    let fabric = fabric.ok()?;
    let pending = pending.ok()?.unwrap_or(false);
    if nodes.is_empty() {
        let message = format!("the plan runs `{model}` replica {replica} on no node");
        dec.error(Code::MissingField, n.span, message, "no nodes", Some(HELP.into()));
        return None;
    }
    Some(Entry { kind, model, replica: replica as u32, profile, engine, fabric, nodes, pending, span: n.span })
}

fn at(dec: &mut Decoder, n: &Node<'_>) -> Option<At> {
    let mut t = dec.table(n, "node of a placement")?;
    let node = t.required(dec, "node", |dec, n| dec.string(n, "node"));
    let gpus = t.optional(dec, "gpus", |dec, n| dec.uint_list(n, "gpus", u64::from(u32::MAX)));
    let migs = t.optional(dec, "mig_devices", |dec, n| dec.uint_list(n, "mig_devices", u64::from(u32::MAX)));
    let hcas = t.optional(dec, "hcas", |dec, n| dec.string_list(n, "hcas"));
    let cpus = t.optional(dec, "cpus", |dec, n| {
        let c = dec.number_above(n, "cpus", true, "the CPUs the replica asks of the node, e.g. 16")?;
        if c > crate::inventory::MAX_CPUS {
            let message = format!("`cpus` must be at most {}, found {c}", u32::MAX);
            dec.error(Code::OutOfRange, n.span, message, "too large", Some(HELP.into()));
            return None;
        }
        Some(crate::units::millis(c))
    });
    let memory_mb = t.optional(dec, "memory_mb", |dec, n| dec.uint(n, "memory_mb", i64::MAX as u64));
    let indices = |v: Vec<(u64, Span)>| v.into_iter().map(|(i, _)| i as u32).collect::<Vec<u32>>();
    let share = crate::share::Share {
        gpus: indices(gpus.ok()?.unwrap_or_default()),
        mig_devices: indices(migs.ok()?.unwrap_or_default()),
        cpus_millis: cpus.ok()?,
        memory_mb: memory_mb.ok()?,
    };
    Some(At { node: node?, share, hcas: hcas.ok()?, span: n.span })
}

fn unplaced_run(dec: &mut Decoder, n: &Node<'_>) -> Option<Unplaced> {
    let mut t = dec.table(n, "unplaced replica")?;
    let model = t.required(dec, "model", |dec, n| dec.string(n, "model"));
    let replica = t.required(dec, "replica", |dec, n| dec.uint(n, "replica", u64::from(u32::MAX)));
    let through = t.optional(dec, "through", |dec, n| dec.uint(n, "through", u64::from(u32::MAX)));
    let (model, replica, through) = (model?, replica? as u32, through.ok()?);
    let through = through.map_or(replica, |t| t as u32);
    if through < replica {
        let message = format!("`through` ({through}) is below `replica` ({replica})");
        dec.error(Code::OutOfRange, n.span, message, "an empty run", Some(HELP.into()));
        return None;
    }
    Some(Unplaced { model, replica, through, span: n.span })
}

fn inputs(dec: &mut Decoder, n: &Node<'_>) -> Option<Inputs> {
    let mut t: Table<'_, '_> = dec.table(n, "inputs")?;
    let catalog = t.required(dec, "catalog", |dec, n| dec.string(n, "catalog"));
    let inventory = t.required(dec, "inventory", |dec, n| dec.string(n, "inventory"));
    Some(Inputs { catalog: catalog?, inventory: inventory? })
}

/// A replica the plan lists twice (placed and placed, placed and running,
/// placed and unplaced): which one did the operator mean? Runs of
/// unplaced replicas are compared as ranges, so a run of a million costs
/// what one entry costs.
fn twice(dec: &mut Decoder, plan: &Plan) {
    let mut ranges: Vec<(&str, u32, u32, Span)> = plan
        .entries
        .iter()
        .map(|e| (e.model.as_str(), e.replica, e.replica, e.span))
        .chain(plan.unplaced.iter().map(|u| (u.model.as_str(), u.replica, u.through, u.span)))
        .collect();
    ranges.sort_by(|a, b| (a.0, a.1, a.3.start).cmp(&(b.0, b.1, b.3.start)));
    let mut last: Option<(&str, u32, Span)> = None;
    for (model, lo, hi, span) in ranges {
        match last {
            Some((m, end, first)) if m == model && lo <= end => {
                let (again, first) = if span.start > first.start { (span, first) } else { (first, span) };
                let d = Diag::error(Code::DuplicateReplica, format!("the plan lists `{model}` replica {lo} twice"))
                    .at(&dec.src, again, "listed again here")
                    .label(first, "first listed here")
                    .help("a plan says once where each replica runs: make it again with `llmgw place --format json`");
                dec.push(d);
                last = Some((m, end.max(hi), first));
            }
            _ => last = Some((model, hi, span)),
        }
    }
}

impl Plan {
    /// Every replica the plan leaves unplaced, one by one.
    pub fn unplaced_replicas(&self) -> impl Iterator<Item = (&str, u32)> {
        self.unplaced.iter().flat_map(|u| (u.replica..=u.through).map(move |r| (u.model.as_str(), r)))
    }
}
