//! The entries: one per engine, every fact of it in one place.

use super::{CacheEnv, Engine, Kind, Master, TORCH_MASTER_PORT, VersionCommand, WeightsForm};
use crate::shape::SizingFlags;
use crate::vendor::Vendor;

const BOTH: &[Vendor] = &[Vendor::Nvidia, Vendor::Amd];

/// What most engines share; each entry says how it differs.
const BASE: Engine = Engine {
    name: "",
    kind: Kind::Vllm,
    binaries: &[],
    python_module: None,
    cpu_capable: false,
    multi_node: false,
    vendors: BOTH,
    default_port: 8000,
    master_port: TORCH_MASTER_PORT,
    master: Master::None,
    ray_before: None,
    dist_init: false,
    tp_across_nodes: false,
    mpi_ranks: false,
    health_path: "/health",
    // The others' /health answers at once.
    probe_timeout_s: 5,
    ready_command: None,
    // Every engine llmgw starts but vLLM serves the OpenAI API under `/v1`
    // (SGLang, TGI's Messages API, llama.cpp's server, trtllm-serve,
    // Ollama's compatibility endpoint), which LiteLLM's `openai` speaks.
    litellm_provider: "openai",
    weights: WeightsForm::Repository,
    cache_env: None,
    image_entrypoint: None,
    sizing: None,
    version: VersionCommand { program: "", args: &[] },
};

pub static ENGINES: &[Engine] = &[
    Engine {
        name: "vllm",
        kind: Kind::Vllm,
        binaries: &["vllm"],
        multi_node: true,
        default_port: 8000,
        // vLLM 0.29.0 vllm/config/parallel.py:280, ParallelConfig.master_port.
        master_port: 29501,
        master: Master::AcrossNodes,
        // docs/serving.md cites the release: `vllm serve --nnodes
        // --node-rank --master-addr --master-port`, `--headless` elsewhere.
        ray_before: Some((0, 11, 1)),
        // vLLM has its own LiteLLM provider.
        litellm_provider: "hosted_vllm",
        sizing: Some(SizingFlags::Vllm),
        version: VersionCommand { program: "vllm", args: &["--version"] },
        ..BASE
    },
    Engine {
        name: "sglang",
        kind: Kind::Sglang,
        binaries: &["sglang"],
        python_module: Some("sglang"),
        multi_node: true,
        default_port: 30000,
        dist_init: true,
        tp_across_nodes: true,
        // SGLang's /health runs a one-token generation (and waits for it)
        // before it answers.
        probe_timeout_s: 30,
        sizing: Some(SizingFlags::Sglang),
        version: VersionCommand {
            program: "python3",
            args: &[
                "-c",
                concat!(absolute_sys_path!(), "; import importlib.metadata as m; print(m.version('sglang'))"),
            ],
        },
        ..BASE
    },
    Engine {
        name: "llama.cpp",
        kind: Kind::LlamaCpp,
        binaries: &["llama-server"],
        cpu_capable: true,
        default_port: 8080,
        weights: WeightsForm::Gguf,
        cache_env: Some(CacheEnv { var: "LLAMA_CACHE", dir: "llama.cpp", slurm: "$HF_HOME" }),
        // The llama.cpp server image's entrypoint is the server itself,
        // and it is not on PATH there.
        image_entrypoint: Some("/app/llama-server"),
        sizing: Some(SizingFlags::LlamaCpp),
        version: VersionCommand { program: "llama-server", args: &["--version"] },
        ..BASE
    },
    Engine {
        name: "tgi",
        kind: Kind::Tgi,
        binaries: &["text-generation-launcher"],
        default_port: 8080,
        master: Master::Shards,
        version: VersionCommand { program: "text-generation-launcher", args: &["--version"] },
        ..BASE
    },
    Engine {
        name: "trtllm",
        kind: Kind::Trtllm,
        binaries: &["trtllm-serve"],
        multi_node: true,
        vendors: &[Vendor::Nvidia],
        default_port: 8000,
        mpi_ranks: true,
        version: VersionCommand { program: "trtllm-serve", args: &["--version"] },
        ..BASE
    },
    Engine {
        name: "ollama",
        kind: Kind::Ollama,
        binaries: &["ollama"],
        cpu_capable: true,
        default_port: 11434,
        // Ollama has no /health: its root answers once the server is up,
        // before its model is pulled; ready once the model is there.
        health_path: "/",
        ready_command: Some(&["ollama", "show"]),
        weights: WeightsForm::Pulled,
        cache_env: Some(CacheEnv { var: "OLLAMA_MODELS", dir: "ollama", slurm: "$HF_HOME/ollama" }),
        version: VersionCommand { program: "ollama", args: &["--version"] },
        ..BASE
    },
];
