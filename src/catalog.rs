//! Catalogs: which models to run, how many replicas, and the profiles (engine,
//! GPU class, shape) each replica may be placed with.

use crate::decode::{Decoder, MapEntry};
use crate::diag::{Code, Diag, Source, suggest};
use crate::doc::{self, Span};
use crate::engines::{self, Engine};
use crate::inventory::normalize_class;

#[derive(Debug)]
pub struct Catalog {
    pub src: Source,
    pub models: Vec<Model>,
}

#[derive(Debug)]
pub struct Model {
    pub name: String,
    pub name_span: Span,
    pub source: Option<String>,
    /// The weights' size in bytes, from `weights_gb` or `params_b` x `dtype`;
    /// `None` when the catalog does not say.
    pub weight_bytes: Option<f64>,
    pub replicas: u32,
    pub profiles: Vec<Profile>,
}

#[derive(Debug)]
pub struct Profile {
    pub name: String,
    pub name_span: Span,
    pub engine: &'static Engine,
    pub engine_span: Span,
    /// Normalised; `None` for a CPU-only profile.
    pub gpu_class: Option<String>,
    pub class_span: Span,
    /// 0 for a CPU-only profile.
    pub gpus_per_node: u32,
    pub nodes: u32,
    pub priority: i64,
    pub priority_span: Span,
    /// Sorted by key: placement checks (and reports) keys in that order.
    pub node_selector: Vec<(String, String)>,
    pub min_memory_gb: u64,
    pub min_disk_gb: u64,
    pub min_disk_span: Span,
    /// One MIG device of this profile ("1g.10gb") instead of whole GPUs.
    pub mig_profile: Option<String>,
    /// For render: the container image, extra engine arguments and
    /// environment (sorted by name).
    pub image: Option<String>,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// The profile's own source, else the model's.
    pub source: Option<String>,
}

impl Profile {
    pub fn cpu_only(&self) -> bool {
        self.gpu_class.is_none()
    }
    /// The hardware half of a pool name: the GPU class, or `cpu`.
    pub fn class_label(&self) -> &str {
        self.gpu_class.as_deref().unwrap_or("cpu")
    }
}

pub const MAX_NODES: u64 = 1024;

pub const MAX_GPUS_PER_NODE: u64 = 64;
const MAX_REPLICAS: u64 = 1_000_000;

const ROOT_FIELDS: &[&str] = &["model"];
const MODEL_FIELDS: &[&str] = &["name", "source", "replicas", "params_b", "dtype", "weights_gb", "profile"];

/// Weight types and their bytes per parameter.
pub const DTYPES: &[(&str, f64)] =
    &[("bf16", 2.0), ("fp16", 2.0), ("fp8", 1.0), ("int8", 1.0), ("int4", 0.5), ("fp4", 0.5)];
const PROFILE_FIELDS: &[&str] = &[
    "name",
    "engine",
    "gpu_class",
    "gpus_per_node",
    "nodes",
    "priority",
    "node_selector",
    "min_memory_gb",
    "min_disk_gb",
    "source",
    "mig_profile",
    "image",
    "args",
    "env",
];

/// Parses and checks a catalog. The catalog comes back only when no error
/// was found; the diagnostics (errors and warnings) always do.
pub fn check(src: &Source) -> (Option<Catalog>, Vec<Diag>) {
    let text = src.text();
    let mut dec = Decoder::new(src.clone());
    let root = match doc::parse(text, src.format()) {
        Ok(root) => root,
        Err(e) => {
            let d = Diag::error(Code::Syntax, format!("{} is not a valid catalog: {}", src.name(), e.message))
                .at(src, e.span, "here")
                .help("fix the syntax; lint shows the rest once the file parses");
            return (None, vec![d]);
        }
    };
    let mut models = Vec::new();
    // An empty YAML document is an empty catalog, as an empty TOML file is.
    let empty = matches!(root.value, doc::Value::Null);
    if let Some(mut t) = if empty { None } else { dec.table(&root, "catalog") } {
        if let Some(list) = t.get("model")
            && let Some(items) = dec.array(list, "model")
        {
            for item in items {
                if let Some(m) = model(&mut dec, item) {
                    models.push(m);
                }
            }
        }
        t.finish(&mut dec, ROOT_FIELDS);
    }
    let had_errors = dec.diags.iter().any(Diag::is_error);
    cross_checks(&mut dec, &models);
    let ok = !had_errors && !dec.diags.iter().any(Diag::is_error);
    let mut diags = dec.diags;
    crate::diag::sort(&mut diags);
    let catalog = ok.then(|| Catalog { src: src.clone(), models });
    (catalog, diags)
}

fn model(dec: &mut Decoder, node: &doc::Node<'_>) -> Option<Model> {
    let mut t = dec.table(node, "model")?;
    let name_node = t.require(dec, "name");
    let name = name_node.and_then(|n| dec.string(n, "name"));
    let source = t.get("source").and_then(|n| dec.string(n, "source"));
    let replicas = match t.get("replicas") {
        Some(n) => dec.uint(n, "replicas", MAX_REPLICAS).map(|v| v as u32),
        None => Some(1),
    };
    let params_b = t.optional(dec, "params_b", |dec, n| dec.positive(n, "params_b"));
    let dtype = t.optional(dec, "dtype", |dec, n| {
        let d = dec.string(n, "dtype")?;
        let known = DTYPES.iter().find(|(k, _)| *k == d).map(|(_, b)| *b);
        if known.is_none() {
            let help = suggest(&d, DTYPES.iter().map(|(k, _)| *k), "the weight types are");
            dec.error(Code::UnknownDtype, n.span, format!("unknown dtype `{d}`"), "not a weight type", Some(help));
        }
        known
    });
    let weights_gb = t.optional(dec, "weights_gb", |dec, n| dec.positive(n, "weights_gb"));
    let mut profiles = Vec::new();
    let mut profiles_ok = true;
    if let Some(list) = t.get("profile") {
        match dec.array(list, "profile") {
            Some(items) => {
                for item in items {
                    match profile(dec, item, source.as_deref()) {
                        Some(p) => profiles.push(p),
                        None => profiles_ok = false,
                    }
                }
            }
            None => profiles_ok = false,
        }
    }
    let name_span = name_node.map_or(t.span, |n| n.span);
    t.finish(dec, MODEL_FIELDS);
    if let Some(name) = &name
        && name.is_empty()
    {
        dec.error(Code::MissingField, name_span, "a model's name is empty".into(), "empty", None);
    }
    let (name, replicas) = (name?, replicas?);
    // weights_gb (10^9 bytes) wins; else parameters times bytes per parameter.
    let weight_bytes = match (weights_gb.ok()?, params_b.ok()?, dtype.ok()?) {
        (Some(gb), _, _) => Some(gb * 1e9),
        (None, Some(b), d) => Some(b * 1e9 * d.unwrap_or(2.0)),
        (None, None, _) => None,
    };
    profiles_ok.then_some(Model { name, name_span, source, weight_bytes, replicas, profiles })
}

fn profile(dec: &mut Decoder, node: &doc::Node<'_>, model_source: Option<&str>) -> Option<Profile> {
    let mut t = dec.table(node, "profile")?;
    let name_node = t.require(dec, "name");
    let name = name_node.and_then(|n| dec.string(n, "name"));
    let engine_node = t.require(dec, "engine");
    let engine_name = engine_node.and_then(|n| dec.string(n, "engine"));
    let class_node = t.get("gpu_class");
    let class = class_node.and_then(|n| dec.string(n, "gpu_class"));
    let gpus_node = t.get("gpus_per_node");
    let nodes_node = t.get("nodes");
    let priority_node = t.get("priority");
    let priority = priority_node.map(|n| dec.int(n, "priority"));
    let selector = t.get("node_selector").map(|n| dec.string_map(n, "node_selector"));
    let min_memory = t.get("min_memory_gb").map(|n| dec.uint(n, "min_memory_gb", u64::MAX >> 1));
    let disk_node = t.get("min_disk_gb");
    let min_disk = disk_node.map(|n| dec.uint(n, "min_disk_gb", u64::MAX >> 1));
    let source = t.get("source").and_then(|n| dec.string(n, "source"));
    let mig_node = t.get("mig_profile");
    let mig_profile = mig_node.and_then(|n| dec.string(n, "mig_profile"));
    let image = t.optional(dec, "image", |dec, n| dec.string(n, "image"));
    let args = t.optional(dec, "args", |dec, n| dec.string_list(n, "args"));
    let env = t.optional(dec, "env", |dec, n| dec.string_map(n, "env"));
    let span = t.span;
    // A misspelt field (`gpu_clas`) should not also read as a missing one.
    let misspelt = t.finish(dec, PROFILE_FIELDS) > 0;

    let engine_span = engine_node.map_or(span, |n| n.span);
    let engine = engine_name.and_then(|e| known_engine(dec, &e, engine_span));
    let class_span = class_node.map_or(span, |n| n.span);
    let gpu_class = class.map(|c| normalize_class(&c));
    let mut ok = !misspelt;
    if gpu_class.as_deref().is_some_and(str::is_empty) {
        dec.error(Code::WrongType, class_span, "`gpu_class` is empty".into(), "no class left after normalising", None);
        ok = false;
    }
    if let (Some(engine), None, false) = (engine, &gpu_class, misspelt) {
        ok &= gpu_engine_has_class(dec, engine, engine_span);
    }
    let nodes = match nodes_node {
        Some(n) => dec.int(n, "nodes").and_then(|v| nodes_in_range(dec, v, n.span)),
        None => Some(1),
    };
    let gpus_per_node = match gpus_node {
        Some(n) => {
            dec.int(n, "gpus_per_node").and_then(|v| gpus_in_range(dec, v, n.span, gpu_class.is_some(), &mut ok))
        }
        None => Some(u32::from(gpu_class.is_some())),
    };
    // A MIG device is one slice of one GPU: one per node, one node.
    if let (Some(_), Some(n)) = (&mig_profile, mig_node) {
        let g = gpus_per_node.unwrap_or(1);
        let k = nodes.unwrap_or(1);
        if gpu_class.is_none() || g != 1 || k != 1 {
            dec.error(
                Code::MigProfileShape,
                n.span,
                format!("a mig_profile places one MIG device, but this profile asks for {g} GPUs on each of {k} nodes"),
                "one MIG device",
                Some("set gpus_per_node = 1 and nodes = 1 (and a gpu_class) on a profile with mig_profile".into()),
            );
            ok = false;
        }
    }
    let node_selector = match selector {
        None => Some(Vec::new()),
        Some(None) => None,
        Some(Some(entries)) => selector_entries(dec, entries, &mut ok),
    };
    if !ok {
        return None;
    }
    Some(Profile {
        name: name?,
        name_span: name_node.map_or(span, |n| n.span),
        engine: engine?,
        engine_span,
        gpu_class,
        class_span,
        gpus_per_node: gpus_per_node?,
        nodes: nodes?,
        priority: priority.unwrap_or(Some(0))?,
        priority_span: priority_node.map_or(span, |n| n.span),
        node_selector: node_selector?,
        min_memory_gb: min_memory.unwrap_or(Some(0))?,
        min_disk_gb: min_disk.unwrap_or(Some(0))?,
        min_disk_span: disk_node.map_or(span, |n| n.span),
        mig_profile,
        source: source.or_else(|| model_source.map(str::to_owned)),
        image: image.ok()?,
        args: args.ok()?.unwrap_or_default(),
        env: {
            let mut env: Vec<(String, String)> =
                env.ok()?.unwrap_or_default().into_iter().map(|e| (e.key, e.value)).collect();
            env.sort();
            env
        },
    })
}

/// The engine a catalog names, or a report that llmgw knows no such engine.
fn known_engine(dec: &mut Decoder, name: &str, span: Span) -> Option<&'static engines::Engine> {
    let found = engines::find(name);
    if found.is_none() {
        let help = suggest(name, engines::names(), "known engines");
        dec.error(
            Code::UnknownEngine,
            span,
            format!("unknown engine `{name}`"),
            "not an engine llmgw knows",
            Some(help),
        );
    }
    found
}

/// A GPU-only engine needs a `gpu_class`; false (and a report) when missing.
fn gpu_engine_has_class(dec: &mut Decoder, engine: &engines::Engine, span: Span) -> bool {
    if engine.cpu_capable {
        return true;
    }
    let cpu: Vec<_> = engines::ENGINES.iter().filter(|e| e.cpu_capable).map(|e| e.name).collect();
    dec.error(
        Code::GpuClassRequired,
        span,
        format!("{} needs a GPU, but this profile has no `gpu_class`", engine.name),
        "GPU-only engine",
        Some(format!("add `gpu_class = \"...\"`, or use a CPU-capable engine ({})", cpu.join(", "))),
    );
    false
}

fn nodes_in_range(dec: &mut Decoder, n: i64, span: Span) -> Option<u32> {
    if (1..=MAX_NODES as i64).contains(&n) {
        return Some(n as u32);
    }
    dec.error(
        Code::NodesRange,
        span,
        format!("`nodes` must be between 1 and {MAX_NODES}, found {n}"),
        "out of range",
        Some("a replica spans at least one node".into()),
    );
    None
}

/// `gpus_per_node` of a GPU profile; on a CPU-only one it is ignored (0),
/// but a negative number is still a typo worth pointing at.
fn gpus_in_range(dec: &mut Decoder, g: i64, span: Span, gpu: bool, ok: &mut bool) -> Option<u32> {
    if !gpu {
        if g < 0 {
            let message = format!("`gpus_per_node` must not be negative, found {g}");
            dec.error(Code::GpusPerNodeRange, span, message, "out of range", None);
            *ok = false;
        }
        return Some(0);
    }
    if (1..=MAX_GPUS_PER_NODE as i64).contains(&g) {
        return Some(g as u32);
    }
    dec.error(
        Code::GpusPerNodeRange,
        span,
        format!("`gpus_per_node` must be between 1 and {MAX_GPUS_PER_NODE} on a GPU profile, found {g}"),
        "out of range",
        Some("omit `gpu_class` for a CPU-only profile instead".into()),
    );
    None
}

/// A node selector, sorted by key; an empty key or value is reported.
fn selector_entries(dec: &mut Decoder, entries: Vec<MapEntry>, ok: &mut bool) -> Option<Vec<(String, String)>> {
    for MapEntry { key, key_span, value, value_span } in &entries {
        let bad = if key.is_empty() {
            Some((*key_span, "empty label key"))
        } else if value.is_empty() {
            Some((*value_span, "empty label value"))
        } else {
            None
        };
        if let Some((s, what)) = bad {
            dec.error(
                Code::EmptyLabel,
                s,
                format!("node_selector has an {what}"),
                what,
                Some("a selector entry needs a key and a value: `zone = \"a\"`".into()),
            );
            *ok = false;
        }
    }
    let mut sel: Vec<_> = entries.into_iter().map(|e| (e.key, e.value)).collect();
    sel.sort();
    Some(sel)
}

fn cross_checks(dec: &mut Decoder, models: &[Model]) {
    let mut seen: std::collections::HashMap<&str, Span> = std::collections::HashMap::new();
    for m in models {
        if let Some(first) = seen.get(m.name.as_str()) {
            let d = Diag::error(Code::DuplicateModel, format!("model `{}` is defined twice", m.name))
                .at(&dec.src, m.name_span, "defined again here")
                .label(*first, "first defined here")
                .help("model names must be unique in a catalog: rename one, or merge their profiles");
            dec.push(d);
        } else {
            seen.insert(&m.name, m.name_span);
        }
        let mut profiles: std::collections::HashMap<&str, Span> = std::collections::HashMap::new();
        for p in &m.profiles {
            if let Some(first) = profiles.get(p.name.as_str()) {
                let d = Diag::error(
                    Code::DuplicateProfile,
                    format!("model `{}` has two profiles named `{}`", m.name, p.name),
                )
                .at(&dec.src, p.name_span, "defined again here")
                .label(*first, "first defined here")
                .help("profile names must be unique within a model");
                dec.push(d);
            } else {
                profiles.insert(&p.name, p.name_span);
            }
            if p.min_disk_gb > 0 && p.source.is_none() {
                let d = Diag::warning(
                    Code::DiskWithoutSource,
                    format!("profile `{}` of `{}` sets min_disk_gb but no source", p.name, m.name),
                )
                .at(&dec.src, p.min_disk_span, "never checked")
                .help("the disk check only applies to weights llmgw can name: add `source` to the model or profile");
                dec.push(d);
            }
        }
        for (i, p) in m.profiles.iter().enumerate() {
            if let Some(q) = m.profiles[..i].iter().find(|q| q.priority == p.priority) {
                let d = Diag::warning(
                    Code::EqualPriority,
                    format!("profiles `{}` and `{}` of `{}` share priority {}", q.name, p.name, m.name, p.priority),
                )
                .at(&dec.src, p.priority_span, "same priority")
                .label(q.priority_span, "as this one")
                .help("ties are tried in file order; give each profile its own priority to say which comes first");
                dec.push(d);
                break;
            }
        }
        if m.profiles.is_empty() && m.replicas > 0 {
            let d = Diag::warning(Code::NoProfiles, format!("model `{}` has no profile", m.name))
                .at(&dec.src, m.name_span, "nothing to place it with")
                .help("add a [[model.profile]], or set replicas = 0");
            dec.push(d);
        }
    }
}

/// Warnings that need a fleet: a class nobody has, a shape nobody can hold,
/// an engine nobody has installed.
pub fn fleet_checks(cat: &Catalog, inv: &crate::inventory::Inventory) -> Vec<Diag> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut most_per_class: BTreeMap<&str, u32> = BTreeMap::new();
    let mut engines_seen: BTreeSet<&str> = BTreeSet::new();
    let mut any_reports_engines = false;
    for n in &inv.nodes {
        let mut per_class: BTreeMap<&str, u32> = BTreeMap::new();
        for g in &n.gpus {
            *per_class.entry(g.class.as_str()).or_default() += 1;
        }
        for (c, k) in per_class {
            let e = most_per_class.entry(c).or_default();
            *e = (*e).max(k);
        }
        if n.reports_engines() {
            any_reports_engines = true;
            engines_seen.extend(n.engine_names());
        }
    }
    let mut out = Vec::new();
    for m in &cat.models {
        for p in &m.profiles {
            if let Some(class) = &p.gpu_class {
                match most_per_class.get(class.as_str()) {
                    None => {
                        let help = if most_per_class.is_empty() {
                            "the inventory has no GPUs at all".to_string()
                        } else {
                            suggest(class, most_per_class.keys().copied(), "the inventory's classes are")
                        };
                        out.push(
                            Diag::warning(
                                Code::UnknownGpuClass,
                                format!("no node has a `{class}` GPU (profile `{}` of `{}`)", p.name, m.name),
                            )
                            .at(&cat.src, p.class_span, "no such class in the fleet")
                            .help(help),
                        );
                    }
                    Some(&most) if most < p.gpus_per_node => {
                        out.push(
                            Diag::warning(
                                Code::NeverFits,
                                format!(
                                    "profile `{}` of `{}` needs {} `{class}` GPUs per node, but no node has more than {most}",
                                    p.name, m.name, p.gpus_per_node
                                ),
                            )
                            .at(&cat.src, p.class_span, "no node is this big")
                            .help("lower gpus_per_node and raise nodes, or add bigger nodes"),
                        );
                    }
                    Some(_) => {}
                }
            }
            if any_reports_engines && !engines_seen.contains(p.engine.name) {
                out.push(
                    Diag::warning(
                        Code::EngineNowhere,
                        format!(
                            "no node that reports its engines has {} installed (profile `{}` of `{}`)",
                            p.engine.name, p.name, m.name
                        ),
                    )
                    .at(&cat.src, p.engine_span, "installed nowhere")
                    .help("only nodes that report no engines at all (older agents) could take this profile"),
                );
            }
        }
    }
    out
}
