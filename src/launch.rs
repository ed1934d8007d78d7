//! How each engine is started: the serve command for one node of a
//! replica, single-node or across nodes, which the Kubernetes and Slurm
//! writers both use. Each platform says only how its processes learn the
//! leader's address and their rank.

use crate::catalog::Profile;
use crate::plan::Entry as Placed;

/// The default image per engine, when the profile names none.
pub fn default_image(engine: &str, gpu: bool) -> &'static str {
    match engine {
        "vllm" => "vllm/vllm-openai:v0.6.3",
        "sglang" => "lmsysorg/sglang:v0.4.1-cu124",
        "llama.cpp" if gpu => "ghcr.io/ggml-org/llama.cpp:server-cuda",
        "llama.cpp" => "ghcr.io/ggml-org/llama.cpp:server",
        "tgi" => "ghcr.io/huggingface/text-generation-inference:2.4.0",
        "trtllm" => "nvcr.io/nvidia/tensorrt-llm/release:0.15.0",
        _ => "ollama/ollama:0.5.4",
    }
}

/// Where a multi-node replica's processes learn the leader's address and
/// their own rank: LeaderWorkerSet's variables, or Slurm's.
pub struct Launch {
    pub leader_address: &'static str,
    pub rank: &'static str,
}

pub const LWS: Launch = Launch { leader_address: "$LWS_LEADER_ADDRESS", rank: "$LWS_WORKER_INDEX" };

/// The engine's serve command for one node of the replica, as a shell line.
/// Multi-node vLLM runs a Ray cluster across the group's nodes, SGLang its
/// own distributed launch; `launch` gives each node the leader's address
/// and its index.
pub fn serve(p: &Profile, source: &str, nodes: u32, leader: bool, launch: &Launch) -> String {
    let tp = p.gpus_per_node.max(1);
    let q = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let extra: String = p.serving.args.iter().map(|a| format!(" {}", q(a))).collect();
    let m = q(source);
    let (addr, rank) = (launch.leader_address, launch.rank);
    match p.engine.name {
        "vllm" if nodes > 1 && !leader => format!("ray start --address={addr}:6379 --block"),
        "vllm" if nodes > 1 => format!(
            "ray start --head --port=6379 && vllm serve {m} --tensor-parallel-size {tp} --pipeline-parallel-size {nodes}{extra}"
        ),
        "vllm" => format!("vllm serve {m} --tensor-parallel-size {tp}{extra}"),
        "sglang" if nodes > 1 => format!(
            "python3 -m sglang.launch_server --model-path {m} --tp {} --nnodes {nodes} --node-rank {rank} --dist-init-addr {addr}:20000{extra}",
            tp * nodes
        ),
        "sglang" => format!("python3 -m sglang.launch_server --model-path {m} --tp {tp}{extra}"),
        "llama.cpp" if p.cpu_only() => format!("llama-server -m {m}{extra}"),
        "llama.cpp" => format!("llama-server -m {m} --n-gpu-layers 999{extra}"),
        "tgi" => format!("text-generation-launcher --model-id {m} --num-shard {tp}{extra}"),
        "trtllm" => format!("trtllm-serve {m} --tp_size {tp}{extra}"),
        _ => format!("ollama serve{extra}"),
    }
}

/// The adapters of a placement, each once, in order.
pub fn hcas(p: &Placed) -> Vec<&str> {
    let mut hcas: Vec<&str> = Vec::new();
    for h in p.nodes.iter().flat_map(|a| a.hcas.iter()) {
        if !hcas.contains(&h.as_str()) {
            hcas.push(h);
        }
    }
    hcas
}
