//! The inference engines llmgw knows: one registry that discovery, lint,
//! placement, launch, render and engine-check all read, so an engine is
//! added in one place. Each entry holds the engine's facts that other
//! modules would otherwise branch on by name: its ports, how it starts on
//! one node and across nodes, how it is probed, what it reads its weights
//! and caches from. Only the command-line syntax itself (launch.rs builds
//! each engine's argv) is chosen by `Kind`.
//!
//! `table.rs` holds the entries, `probe.rs` how an installed engine is
//! found (PATH, Python modules).

/// Python code run first by the SGLang probe and version command: only
/// absolute entries stay on `sys.path`. `python3 -c` puts the current folder
/// first, so an `sglang/` folder in a git clone would otherwise count as an
/// installed SGLang; a PYTHONPATH install (absolute) still counts.
macro_rules! absolute_sys_path {
    () => {
        "import os, sys; sys.path[:] = [p for p in sys.path if os.path.isabs(p)]"
    };
}

mod probe;
mod table;

pub use probe::{SearchPath, probe_module};
pub use table::ENGINES;

use crate::shape::SizingFlags;
use crate::vendor::Vendor;

/// Which engine's command line launch.rs writes: the one thing chosen by
/// the engine itself rather than by a fact of its entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Vllm,
    Sglang,
    LlamaCpp,
    Tgi,
    Trtllm,
    Ollama,
}

/// How `engine-check` asks an engine for its version.
#[derive(Debug)]
pub struct VersionCommand {
    pub program: &'static str,
    pub args: &'static [&'static str],
}

/// When a replica's start-up needs a torch.distributed rendezvous port
/// (`--master-port`), besides its HTTP port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Master {
    /// Never.
    None,
    /// With more than one GPU on a node: the launcher's shards meet there
    /// (TGI's `text-generation-launcher`).
    Shards,
    /// Across nodes, when not over Ray (vLLM's multiprocessing backend).
    AcrossNodes,
}

/// What the engine is given as its model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WeightsForm {
    /// A hub repository, or the node's copy of it (a folder).
    Repository,
    /// A GGUF file: the node's copy is a `.gguf` file, and a bare file
    /// name names no repository to fetch it from (llama.cpp).
    Gguf,
    /// A name the engine pulls itself, never a path (Ollama).
    Pulled,
}

/// The environment variable that moves an engine's own download cache
/// under the cache folder render mounts.
#[derive(Debug)]
pub struct CacheEnv {
    pub var: &'static str,
    /// Its value on Kubernetes: this folder under the cache folder.
    pub dir: &'static str,
    /// Its value in a Slurm job under pyxis (shell, `$HF_HOME` set).
    pub slurm: &'static str,
}

#[derive(Debug)]
pub struct Engine {
    /// The name catalogs use.
    pub name: &'static str,
    /// Whose command line launch.rs writes.
    pub kind: Kind,
    /// Binaries whose presence on PATH means the engine is installed.
    pub binaries: &'static [&'static str],
    /// A Python module probed by `importlib.util.find_spec`, for engines that
    /// may ship without a launcher on PATH.
    pub python_module: Option<&'static str>,
    /// Whether the engine can serve a model with no GPU at all.
    pub cpu_capable: bool,
    /// Whether one replica can span several nodes (vLLM over Ray, SGLang's
    /// own launcher, TensorRT-LLM over MPI); the others serve from one.
    pub multi_node: bool,
    /// The GPU vendors it runs on (llama.cpp's CUDA and ROCm builds, vLLM
    /// and SGLang through ROCm; TensorRT-LLM is CUDA only).
    pub vendors: &'static [Vendor],
    /// The port its server listens on unless told otherwise.
    pub default_port: u16,
    /// The rendezvous port its launcher uses unless told otherwise (see
    /// `master`); `TORCH_MASTER_PORT` for an engine that takes none (it
    /// is recorded with the replica's ports, never passed).
    pub master_port: u16,
    /// When start-up needs that port.
    pub master: Master,
    /// `Some(v)`: a replica across nodes can start over Ray (`launcher =
    /// "ray"`), and must when the engine is older than `v`, the first
    /// release that starts across nodes on its own (vLLM 0.11.1).
    pub ray_before: Option<(u32, u32, u32)>,
    /// Across nodes, every rank is given the leader's `--dist-init-addr`
    /// port, and the engine takes `DIST_BLOCK` ports from there (SGLang).
    pub dist_init: bool,
    /// Across nodes, one tensor-parallel group spans all of them (SGLang);
    /// the others run a pipeline stage a node.
    pub tp_across_nodes: bool,
    /// With more than one GPU, the replica starts as an MPI job of one task
    /// a GPU (TensorRT-LLM's `trtllm-llmapi-launch`); llmgw starts such a
    /// replica on one node only.
    pub mpi_ranks: bool,
    /// The HTTP path it answers once it can take requests.
    pub health_path: &'static str,
    /// Seconds an HTTP probe waits for that answer.
    pub probe_timeout_s: i32,
    /// A command (the model's name appended) that succeeds once the model
    /// is served, where the server answers its health path before that.
    pub ready_command: Option<&'static [&'static str]>,
    /// LiteLLM's provider for it.
    pub litellm_provider: &'static str,
    /// What it is given as its model.
    pub weights: WeightsForm,
    /// Its own download cache's variable, where it has one.
    pub cache_env: Option<CacheEnv>,
    /// Where its default image's entrypoint is the server itself, the
    /// server's path there (not on PATH): given arguments only.
    pub image_entrypoint: Option<&'static str>,
    /// How it is told the cache size the memory fit checked.
    pub sizing: Option<SizingFlags>,
    pub version: VersionCommand,
}

/// Ray's GCS port on a head node, unless told otherwise.
pub const RAY_PORT: u16 = 6379;
/// Ray's client server port on a head node, unless told otherwise.
pub const RAY_CLIENT_PORT: u16 = 10001;
/// The `--dist-init-addr` port llmgw gives SGLang's leader first.
pub const DIST_PORT: u16 = 20000;
/// SGLang's scheduler and detokenizer take the ports after its
/// `--dist-init-addr` one: a replica books this many from there.
pub const DIST_BLOCK: u16 = 8;
/// torch.distributed's default `MASTER_PORT`, which TGI's launcher keeps.
pub const TORCH_MASTER_PORT: u16 = 29500;

impl Engine {
    /// Whether it runs on this vendor's GPUs.
    pub fn runs_on(&self, v: Vendor) -> bool {
        self.vendors.contains(&v)
    }
    /// Whether it runs on the GPUs of every vendor llmgw knows.
    pub fn runs_on_every_vendor(&self) -> bool {
        Vendor::ALL.iter().all(|&v| self.runs_on(v))
    }
}

pub fn find(name: &str) -> Option<&'static Engine> {
    ENGINES.iter().find(|e| e.name == name)
}

pub fn names() -> impl Iterator<Item = &'static str> + Clone {
    ENGINES.iter().map(|e| e.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_path_entries_are_left_out() {
        let sp = super::SearchPath::new(Some(std::ffi::OsStr::new(":/usr/bin:.:rel/bin:/bin")));
        assert_eq!(sp.ignored, ["", ".", "rel/bin"]);
        assert!(sp.warning().is_some_and(|d| d.message.contains("`rel/bin`")));
        assert!(super::SearchPath::new(Some(std::ffi::OsStr::new("."))).find("sh").is_none());
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = super::names().collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), super::ENGINES.len());
    }

    #[test]
    fn kinds_are_unique() {
        for (i, e) in ENGINES.iter().enumerate() {
            assert!(ENGINES[i + 1..].iter().all(|o| o.kind != e.kind), "{}", e.name);
        }
    }

    /// vLLM 0.29.0, vllm/config/parallel.py line 280, in `ParallelConfig`:
    /// `master_port: int = 29501` ("distributed master port for multi-node
    /// distributed inference when distributed_executor_backend is mp");
    /// `vllm serve --master-port` defaults to it (engine/arg_utils.py, line
    /// 506: `master_port: int = ParallelConfig.master_port`). Its
    /// `data_parallel_master_port` is the one at 29500 (line 145).
    /// tests/it/engines.rs asks an installed vLLM the same.
    #[test]
    fn vllm_master_port_is_vllms_own_default() {
        assert_eq!(find("vllm").unwrap().master_port, 29501);
        assert_eq!(find("tgi").unwrap().master_port, TORCH_MASTER_PORT);
    }
}
