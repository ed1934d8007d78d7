//! Catalogs: which models to run, how many replicas, and the profiles (engine,
//! GPU class, shape) each replica may be placed with.

use crate::decode::Decoder;
use crate::diag::{Code, Diag, Source, suggest};
use crate::doc::{self, Span};
use crate::engines::Engine;
use crate::inventory::normalize_class;

mod arch;
mod checks;
mod context;
mod fleet;
mod values;

pub use arch::{ARCH_FIELDS, Memory, ModelShape};
pub use fleet::{fleet_checks, hardware_checks};
use values::{
    at_least_one, engine_spans, env_names, gpu_engine_has_class, gpus_in_range, known_engine, nodes_in_range,
    selector_entries,
};

#[derive(Debug, Clone)]
pub struct Catalog {
    pub src: Source,
    pub models: Vec<Model>,
}

#[derive(Debug, Clone)]
pub struct Model {
    pub name: String,
    pub name_span: Span,
    pub source: Option<String>,
    /// The weights' size in bytes, from `weights_gb` or `params_b` x `dtype`;
    /// `None` when the catalog does not say.
    pub weight_bytes: Option<f64>,
    /// From `config` or `arch`: what the fit sizes the KV cache by.
    pub shape: Option<ModelShape>,
    pub replicas: u32,
    /// How many of its replicas one node may hold (at least 1).
    pub replicas_per_node: u32,
    pub profiles: Vec<Profile>,
}

#[derive(Debug, Clone)]
pub struct Profile {
    pub name: String,
    pub name_span: Span,
    pub engine: &'static Engine,
    pub engine_span: Span,
    /// Normalised; `None` for a CPU-only profile.
    pub gpu_class: Option<String>,
    /// A `gpu_class` list (the names GFD and a Slurm site give one GPU):
    /// the profile is tried once per class, in list order, as that many
    /// profiles of one name and priority; each of them holds the whole
    /// list here. Empty for one class.
    pub classes: Vec<String>,
    pub class_span: Span,
    /// 0 for a CPU-only profile.
    pub gpus_per_node: u32,
    pub nodes: u32,
    pub priority: i64,
    pub priority_span: Span,
    /// Sorted by key: placement checks (and reports) keys in that order.
    pub node_selector: Vec<(String, String)>,
    pub selector_span: Span,
    /// The node taints it may be placed despite (docs/catalog.md); a GPU
    /// profile also tolerates `nvidia.com/gpu` taints without saying so.
    pub tolerations: Vec<crate::taints::Toleration>,
    pub min_memory_gb: u64,
    pub min_disk_gb: u64,
    pub min_disk_span: Span,
    /// One MIG device of this profile ("1g.10gb") instead of whole GPUs.
    pub mig_profile: Option<String>,
    pub mig_span: Span,
    /// What render needs to start the engine; placement never reads it.
    pub serving: Serving,
    /// The profile's own source, else the model's.
    pub source: Option<String>,
    /// The model's size as this profile runs it, and the settings of the
    /// fit from the model's shape (docs/catalog.md, "Memory fit").
    pub memory: Memory,
}

/// A profile's fields for render: how its engine is started and what it is given.
#[derive(Debug, Default, Clone)]
pub struct Serving {
    /// The container image; `None`: the engine's default.
    pub image: Option<String>,
    /// Extra engine arguments.
    pub args: Vec<String>,
    /// Extra environment, sorted by name; names are POSIX identifiers.
    pub env: Vec<(String, String)>,
    /// The port the server listens on; `None`: the engine's default.
    pub port: Option<u16>,
    /// CPUs and host memory (GiB) per node; `None`: the node's share.
    pub cpus: Option<u32>,
    pub memory_gb: Option<u64>,
    /// Where `cpus` and `memory_gb` are written, for lint.
    pub cpus_span: Span,
    pub memory_span: Span,
    /// /dev/shm on Kubernetes, GiB; `None`: 16.
    pub shm_gb: Option<u64>,
    /// How long the engine may take to start serving (the startup probe,
    /// and the wait for the other nodes); `None`: the default for the
    /// weights' size (docs/serving.md).
    pub startup_timeout_s: Option<u32>,
    /// `Some("ray")`: start vLLM across nodes over Ray whatever its version.
    pub launcher: Option<String>,
    /// Where `launcher` is written, for lint.
    pub launcher_span: Span,
    /// Kubernetes settings for this profile's pods, over the render flags.
    pub kubernetes: KubernetesKnobs,
    /// Slurm settings for this profile's jobs, over the render flags.
    pub slurm: SlurmKnobs,
}

/// A profile's `kubernetes = { ... }`.
#[derive(Debug, Default, Clone)]
pub struct KubernetesKnobs {
    pub priority_class: Option<String>,
    pub service_account: Option<String>,
    pub image_pull_secrets: Vec<String>,
    /// Extra labels and annotations on the pods, sorted by key.
    pub labels: Vec<(String, String)>,
    pub annotations: Vec<(String, String)>,
}

/// A profile's `slurm = { ... }`.
#[derive(Debug, Default, Clone)]
pub struct SlurmKnobs {
    pub partition: Option<String>,
    pub account: Option<String>,
    pub qos: Option<String>,
    pub time: Option<String>,
    pub constraint: Option<String>,
}

impl Profile {
    pub fn cpu_only(&self) -> bool {
        self.gpu_class.is_none()
    }
    /// The hardware half of a pool name: the GPU class, or `cpu`.
    pub fn class_label(&self) -> &str {
        self.gpu_class.as_deref().unwrap_or("cpu")
    }
    /// A llama.cpp source that is only a file name
    /// (`qwen2.5-7b-q4_k_m.gguf`): no repository to fetch it from.
    pub fn is_gguf_file_name(&self, source: &str) -> bool {
        self.engine.weights == crate::engines::WeightsForm::Gguf && !source.contains('/')
    }
}

/// What to give llama.cpp instead of a bare file name.
pub const GGUF_HELP: &str = "give the repository, `ORG/REPO:QUANT` (llama.cpp picks the file) or `ORG/REPO/FILE.gguf`, or put the file on the nodes (discover lists it under `weights`)";

pub const MAX_NODES: u64 = 1024;

pub const MAX_GPUS_PER_NODE: u64 = 64;
const MAX_REPLICAS: u64 = 1_000_000;

const ROOT_FIELDS: &[&str] = &["model"];
pub const MODEL_FIELDS: &[&str] = &[
    "name",
    "source",
    "replicas",
    "replicas_per_node",
    "params_b",
    "dtype",
    "weights_gb",
    "config",
    "arch",
    "profile",
];

/// Weight types and their bytes per parameter.
pub const DTYPES: &[(&str, f64)] =
    &[("bf16", 2.0), ("fp16", 2.0), ("fp8", 1.0), ("int8", 1.0), ("int4", 0.5), ("fp4", 0.5)];
pub const PROFILE_FIELDS: &[&str] = &[
    "name",
    "engine",
    "gpu_class",
    "gpus_per_node",
    "nodes",
    "priority",
    "node_selector",
    "tolerations",
    "min_memory_gb",
    "min_disk_gb",
    "source",
    "mig_profile",
    "image",
    "args",
    "env",
    "port",
    "cpus",
    "memory_gb",
    "shm_gb",
    "startup_timeout_s",
    "launcher",
    "kubernetes",
    "slurm",
    "dtype",
    "kv_cache_dtype",
    "max_model_len",
    "max_num_seqs",
    "gpu_memory_utilization",
    "overhead_gb",
];

/// The fields of a profile's `kubernetes` and `slurm` tables.
pub const KUBERNETES_FIELDS: &[&str] =
    &["priority_class", "service_account", "image_pull_secrets", "labels", "annotations"];
pub const SLURM_FIELDS: &[&str] = &["partition", "account", "qos", "time", "constraint"];
/// The launchers a profile may ask for.
pub const LAUNCHERS: &[&str] = &["ray"];

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
    checks::cross_checks(&mut dec, &models);
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
    let per_node = t.optional(dec, "replicas_per_node", |dec, n| {
        let v = dec.uint(n, "replicas_per_node", u64::from(u32::MAX))?;
        if v == 0 {
            let help = "1 (the default) keeps every replica on its own node; 2 or more lets small models share one";
            dec.error(
                Code::OutOfRange,
                n.span,
                "`replicas_per_node` must be at least 1".into(),
                "0",
                Some(help.into()),
            );
            return None;
        }
        Some(v as u32)
    });
    let params_b = t.optional(dec, "params_b", |dec, n| dec.positive(n, "params_b"));
    let dtype = t.optional(dec, "dtype", dtype_bytes);
    let weights_gb = t.optional(dec, "weights_gb", |dec, n| dec.positive(n, "weights_gb"));
    let shape = arch::model_shape(dec, &mut t);
    let mut profiles = Vec::new();
    let mut profiles_ok = true;
    if let Some(list) = t.get("profile") {
        match dec.array(list, "profile") {
            Some(items) => {
                for item in items {
                    match profile(dec, item, source.as_deref()) {
                        // One profile a class of its list, in list order.
                        Some((p, fit)) if !p.classes.is_empty() => {
                            for c in p.classes.clone() {
                                profiles.push((Profile { gpu_class: Some(c), ..p.clone() }, fit.clone()));
                            }
                        }
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
    let name = name.filter(|n| crate::decode::no_control(dec, n, "model name", name_span));
    let (name, replicas, replicas_per_node) = (name?, replicas?, per_node.ok()?.unwrap_or(1));
    let (weights_gb, params_b, dtype, shape) = (weights_gb.ok()?, params_b.ok()?, dtype.ok()?, shape.ok()?);
    // The catalog's dtype, else the config's quantisation, else 2 bytes.
    let bytes_per_param = dtype.or(shape.as_ref().and_then(|s| s.bytes_per_param)).unwrap_or(2.0);
    // weights_gb (10^9 bytes) wins; else parameters times bytes per parameter.
    let weight_bytes = match (weights_gb, params_b) {
        (Some(gb), _) => Some(gb * 1e9),
        (None, Some(b)) => Some(b * 1e9 * bytes_per_param),
        (None, None) => None,
    };
    let size = arch::ModelSize { params_b, weights_gb, bytes_per_param, weight_bytes };
    let mut resolved = Vec::with_capacity(profiles.len());
    for (mut p, fit) in profiles {
        profiles_ok &= values::ray_in_image(dec, p.engine, p.nodes, p.cpu_only(), &p.serving);
        let who = (name.as_str(), p.name.as_str(), p.name_span);
        match arch::resolve(dec, &fit, &size, shape.as_ref(), who, p.cpu_only()) {
            Some(m) => p.memory = m,
            None => profiles_ok = false,
        }
        resolved.push(p);
    }
    let profiles = resolved;
    profiles_ok.then_some(Model { name, name_span, source, weight_bytes, shape, replicas, replicas_per_node, profiles })
}

/// A weight type's bytes a parameter; `None` (and an error) for an unknown one.
fn dtype_bytes(dec: &mut Decoder, n: &doc::Node<'_>) -> Option<f64> {
    let d = dec.string(n, "dtype")?;
    let known = DTYPES.iter().find(|(k, _)| *k == d).map(|(_, b)| *b);
    if known.is_none() {
        let help = suggest(&d, DTYPES.iter().map(|(k, _)| *k), "the weight types are");
        dec.error(Code::UnknownDtype, n.span, format!("unknown dtype `{d}`"), "not a weight type", Some(help));
    }
    known
}

fn profile(dec: &mut Decoder, node: &doc::Node<'_>, model_source: Option<&str>) -> Option<(Profile, arch::FitFields)> {
    let mut t = dec.table(node, "profile")?;
    let name_node = t.require(dec, "name");
    let name = name_node.and_then(|n| dec.string(n, "name"));
    let engine_node = t.require(dec, "engine");
    let engine_name = engine_node.and_then(|n| dec.string(n, "engine"));
    let class_node = t.get("gpu_class");
    let (gpus_node, nodes_node) = (t.get("gpus_per_node"), t.get("nodes"));
    let priority_node = t.get("priority");
    let priority = priority_node.map(|n| dec.int(n, "priority"));
    let selector = t.get("node_selector").map(|n| dec.string_map(n, "node_selector"));
    let selector_span = t.get("node_selector").map(|n| n.span);
    let tolerations = t.optional(dec, "tolerations", toleration_list);
    let min_memory = t.get("min_memory_gb").map(|n| dec.uint(n, "min_memory_gb", u64::MAX >> 1));
    let disk_node = t.get("min_disk_gb");
    let min_disk = disk_node.map(|n| dec.uint(n, "min_disk_gb", u64::MAX >> 1));
    let source = t.get("source").and_then(|n| dec.string(n, "source"));
    let mig_node = t.get("mig_profile");
    let mig_profile = mig_node.and_then(|n| dec.string(n, "mig_profile"));
    let serving = serving(dec, &mut t);
    let fit = arch::fit_fields(dec, &mut t);
    let span = t.span;
    // A misspelt field (`gpu_clas`) should not also read as a missing one.
    let misspelt = t.finish(dec, PROFILE_FIELDS) > 0;

    let engine_span = engine_node.map_or(span, |n| n.span);
    let engine = engine_name.and_then(|e| known_engine(dec, &e, engine_span));
    let name_span = name_node.map_or(span, |n| n.span);
    let mut ok = !misspelt;
    if let Some(name) = &name {
        ok &= crate::decode::no_control(dec, name, "profile name", name_span);
    }
    let class_span = class_node.map_or(span, |n| n.span);
    let (gpu_class, classes) = class_list(dec, class_node, class_span, &mut ok);
    if gpu_class.as_deref().is_some_and(str::is_empty) || classes.iter().any(String::is_empty) {
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
    if let (Some(engine), Some(k), Some(n)) = (engine, nodes, nodes_node) {
        ok &= engine_spans(dec, engine, k, n.span);
    }
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
    let Ok(tolerations) = tolerations else { return None };
    if !ok {
        return None;
    }
    let profile = Profile {
        name: name?,
        name_span,
        engine: engine?,
        engine_span,
        gpu_class,
        classes,
        class_span,
        gpus_per_node: gpus_per_node?,
        nodes: nodes?,
        priority: priority.unwrap_or(Some(0))?,
        priority_span: priority_node.map_or(span, |n| n.span),
        node_selector: node_selector?,
        selector_span: selector_span.unwrap_or(span),
        tolerations: tolerations.unwrap_or_default(),
        min_memory_gb: min_memory.unwrap_or(Some(0))?,
        min_disk_gb: min_disk.unwrap_or(Some(0))?,
        min_disk_span: disk_node.map_or(span, |n| n.span),
        mig_profile,
        mig_span: mig_node.map_or(span, |n| n.span),
        source: source.or_else(|| model_source.map(str::to_owned)),
        serving: serving?,
        memory: Memory::default(),
    };
    Some((profile, fit?))
}

/// `tolerations = ["key", "key=value", "key:Effect", "key=value:Effect"]`,
/// each checked where it is written.
fn toleration_list(dec: &mut Decoder, n: &doc::Node<'_>) -> Option<Vec<crate::taints::Toleration>> {
    let items = dec.array(n, "tolerations")?;
    let mut out: Vec<crate::taints::Toleration> = Vec::with_capacity(items.len());
    // Each once, without a search of the list per item (80,000 of them).
    let mut seen: std::collections::HashSet<crate::taints::Toleration> = std::collections::HashSet::new();
    let mut ok = true;
    for item in items {
        let Some(s) = dec.string(item, "tolerations") else {
            ok = false;
            continue;
        };
        match crate::taints::Toleration::parse(&s) {
            Ok(t) => {
                if seen.insert(t.clone()) {
                    out.push(t);
                }
            }
            Err(why) => {
                let help = "tolerate a taint by its key (`sku`), key and value (`sku=gpu`), and perhaps its effect (`sku=gpu:NoSchedule`)";
                dec.error(Code::BadToleration, item.span, why, "not a toleration", Some(help.into()));
                ok = false;
            }
        }
    }
    ok.then_some(out)
}

/// A profile's `gpu_class` (one, or a list), normalised: the first class,
/// and the whole list when it names two or more.
fn class_list(
    dec: &mut Decoder,
    node: Option<&doc::Node<'_>>,
    span: Span,
    ok: &mut bool,
) -> (Option<String>, Vec<String>) {
    let classes: Option<Vec<String>> = node.and_then(|n| match &n.value {
        doc::Value::Array(_) => dec.string_list(n, "gpu_class"),
        _ => dec.string(n, "gpu_class").map(|c| vec![c]),
    });
    let mut classes: Vec<String> = classes.unwrap_or_default().iter().map(|c| normalize_class(c)).collect();
    if classes.is_empty() && node.is_some_and(|n| matches!(n.value, doc::Value::Array(_))) {
        dec.error(Code::WrongType, span, "`gpu_class` is an empty list".into(), "no class", None);
        *ok = false;
    }
    let mut seen = std::collections::HashSet::new();
    classes.retain(|c| seen.insert(c.clone()));
    let first = classes.first().cloned();
    if classes.len() < 2 {
        classes.clear();
    }
    (first, classes)
}

/// The render-only fields of a profile; `None` when one is unusable.
fn serving(dec: &mut Decoder, t: &mut crate::decode::Table<'_, '_>) -> Option<Serving> {
    let image = t.optional(dec, "image", |dec, n| dec.string(n, "image"));
    let args = t.optional(dec, "args", |dec, n| dec.string_list(n, "args"));
    let env = t.optional(dec, "env", |dec, n| dec.string_map(n, "env"));
    let port = t.optional(dec, "port", |dec, n| {
        let v = dec.int(n, "port")?;
        if !(1..=i64::from(u16::MAX)).contains(&v) {
            let message = format!("`port` must be between 1 and 65535, found {v}");
            let help = Some("use a port from 1 to 65535 (the engines' own: vllm 8000, sglang 30000, ...)".into());
            dec.error(Code::OutOfRange, n.span, message, "not a port", help);
            return None;
        }
        Some(v as u16)
    });
    let mut cpus_span = Span::default();
    let mut memory_span = Span::default();
    let cpus = t.optional(dec, "cpus", |dec, n| {
        cpus_span = n.span;
        at_least_one(dec, n, "cpus", u64::from(u32::MAX)).map(|v| v as u32)
    });
    let memory_gb = t.optional(dec, "memory_gb", |dec, n| {
        memory_span = n.span;
        at_least_one(dec, n, "memory_gb", u64::MAX >> 31)
    });
    let shm_gb = t.optional(dec, "shm_gb", |dec, n| at_least_one(dec, n, "shm_gb", u64::MAX >> 31));
    let startup = t.optional(dec, "startup_timeout_s", |dec, n| {
        at_least_one(dec, n, "startup_timeout_s", 7 * 24 * 3600).map(|v| v as u32)
    });
    let mut launcher_span = Span::default();
    let launcher = t.optional(dec, "launcher", |dec, n| {
        launcher_span = n.span;
        let l = dec.string(n, "launcher")?;
        if !LAUNCHERS.contains(&l.as_str()) {
            let help = suggest(&l, LAUNCHERS.iter().copied(), "the launchers are");
            dec.error(Code::WrongType, n.span, format!("unknown launcher `{l}`"), "not a launcher", Some(help));
            return None;
        }
        Some(l)
    });
    let kubernetes = t.optional(dec, "kubernetes", values::kubernetes_knobs);
    let slurm = t.optional(dec, "slurm", values::slurm_knobs);
    let env = match env.ok()? {
        None => Vec::new(),
        Some(entries) => {
            if !env_names(dec, &entries) {
                return None;
            }
            let mut env: Vec<(String, String)> = entries.into_iter().map(|e| (e.key, e.value)).collect();
            env.sort();
            env
        }
    };
    Some(Serving {
        image: image.ok()?,
        args: args.ok()?.unwrap_or_default(),
        env,
        port: port.ok()?,
        cpus: cpus.ok()?,
        memory_gb: memory_gb.ok()?,
        cpus_span,
        memory_span,
        shm_gb: shm_gb.ok()?,
        startup_timeout_s: startup.ok()?,
        launcher: launcher.ok()?,
        launcher_span,
        kubernetes: kubernetes.ok()?.unwrap_or_default(),
        slurm: slurm.ok()?.unwrap_or_default(),
    })
}
