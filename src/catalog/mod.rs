//! Catalogs: which models to run, how many replicas, and the profiles (engine,
//! GPU class, shape) each replica may be placed with.

mod read;
pub use read::*;

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
