//! How each engine is started: the serve command for one node of a
//! replica, single-node or across nodes, as the engines' own documentation
//! says (docs/serving.md gives the sources). The Kubernetes and Slurm
//! writers both use it; each platform says only how its processes learn
//! the leader's address and their rank, and which ports are theirs.
//!
//! What goes wrong without these rules: an engine left on its default
//! 127.0.0.1 answers nobody outside its pod or node; a vLLM leader that
//! starts serving before its Ray workers joined refuses a cluster smaller
//! than TP x PP and restarts the group forever; a Ray worker that tries its
//! head once fails whenever it starts first.

mod command;
pub use command::*;

use crate::catalog::Profile;
use crate::engines::{DIST_PORT, Kind, Master, RAY_CLIENT_PORT, RAY_PORT, TORCH_MASTER_PORT};

/// Where the weights come from: the node's own copy, or the hub.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Weights {
    /// An absolute path on the node (`disk.path/SOURCE`).
    Local(String),
    /// A hub id (or an Ollama model name), fetched by the engine.
    Hub(String),
}

impl Weights {
    pub fn as_str(&self) -> &str {
        match self {
            Weights::Local(s) | Weights::Hub(s) => s,
        }
    }
}

/// The ports one replica's processes use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ports {
    /// The server's HTTP port.
    pub http: u16,
    /// Ray's GCS port on the leader (multi-node vLLM).
    pub ray: u16,
    /// Ray's client server port on the leader (multi-node vLLM); a second
    /// Ray head on the node would fail on the default one.
    pub ray_client: u16,
    /// SGLang's `--dist-init-addr` port on the leader (multi-node SGLang).
    pub dist: u16,
    /// The TGI launcher's shard rendezvous port (sharded TGI; only given
    /// on the command line when another replica on the node has the
    /// default), or vLLM's `--master-port` across nodes.
    pub master: u16,
}

impl Ports {
    /// The profile's port, else the engine's, and the default start-up
    /// ports (the engine table's: defaults when nothing else on the node
    /// uses them).
    pub fn defaults(p: &Profile) -> Ports {
        Ports {
            http: p.serving.port.unwrap_or(p.engine.default_port),
            master: p.engine.master_port,
            ..Ports::unrecorded(0)
        }
    }

    /// A replica's ports where only its HTTP port is known (a recorded
    /// `# llmgw ports:` line that names no other): the default start-up
    /// ports, and torch.distributed's master port.
    pub fn unrecorded(http: u16) -> Ports {
        Ports { http, ray: RAY_PORT, ray_client: RAY_CLIENT_PORT, dist: DIST_PORT, master: TORCH_MASTER_PORT }
    }
}

/// Which ports a replica's start-up needs besides its HTTP port.
pub fn needs_master(p: &Profile, nodes: usize, ray: bool) -> bool {
    match p.engine.master {
        Master::Shards => p.gpus_per_node > 1,
        Master::AcrossNodes => nodes > 1 && !ray,
        Master::None => false,
    }
}

pub fn needs_ray(p: &Profile, nodes: usize, ray: bool) -> bool {
    nodes > 1 && p.engine.ray_before.is_some() && ray
}

/// Whether a multi-node vLLM replica starts over Ray: the profile says
/// `launcher = "ray"`, or the vLLM that runs is older than the first
/// release with the multiprocessing backend across nodes (the engine
/// table's `ray_before`; only vLLM starts over Ray). Which vLLM
/// runs: in a container (`image`: Kubernetes, Slurm with `--container`)
/// the image's, by its tag, whatever the nodes have installed; in a bare
/// Slurm job the one every node reports in `engines`, else the profile
/// image's tag. Unknown: a current vLLM (the default image's).
pub fn vllm_over_ray(p: &Profile, nodes: &[&crate::inventory::Node], image: Option<&str>) -> bool {
    let Some(native_from) = p.engine.ray_before.filter(|_| nodes.len() >= 2) else {
        return false;
    };
    if p.serving.launcher.as_deref() == Some("ray") {
        return true;
    }
    let of_image = |i: Option<&str>| i.and_then(crate::images::tag).and_then(crate::images::version);
    let version = match image {
        Some(i) => of_image(Some(i)),
        None => {
            let reported: Vec<Option<(u32, u32, u32)>> = nodes
                .iter()
                .map(|n| n.engines.as_ref().and_then(|e| e.get(p.engine.name)).and_then(|v| crate::images::version(v)))
                .collect();
            if reported.iter().all(Option::is_some) {
                reported.into_iter().flatten().min()
            } else {
                of_image(p.serving.image.as_deref())
            }
        }
    };
    version.is_some_and(|v| v < native_from)
}

pub fn needs_dist(p: &Profile, nodes: usize) -> bool {
    nodes > 1 && p.engine.dist_init
}

/// One node's part of a replica.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The whole replica on one node.
    Single,
    /// Rank 0 of several: it serves HTTP.
    Leader,
    /// Another rank.
    Worker,
}

/// How a platform tells each process the leader's address and its rank:
/// the names of two environment variables the script reads.
pub struct Platform {
    pub leader: &'static str,
    pub rank: &'static str,
}

/// One replica as its engine is started.
pub struct Spec<'a> {
    pub profile: &'a Profile,
    /// The model's name in the catalog, which clients ask for.
    pub served_name: &'a str,
    pub weights: &'a Weights,
    pub nodes: u32,
    pub ports: Ports,
    /// A multi-node vLLM starts over Ray (`vllm_over_ray`).
    pub ray: bool,
}

/// How long multi-node start-up waits for its peers before it gives up,
/// unless the environment says otherwise.
pub const START_TIMEOUT_S: u32 = 900;

/// How long a replica may take to start serving: the profile's
/// `startup_timeout_s`, else 30 minutes, or an hour for weights over
/// 200 GB (a cold download of a 405B model overruns half an hour).
pub fn startup_timeout_s(p: &Profile, weight_bytes: Option<f64>) -> u32 {
    p.serving.startup_timeout_s.unwrap_or(if weight_bytes.is_some_and(|w| w > 200e9) { 3600 } else { 1800 })
}

/// `NCCL_IB_HCA` naming exactly these adapters: NCCL reads the list as
/// prefixes (`mlx5_1` also selects `mlx5_10` to `mlx5_17`) unless it
/// starts with `=` (NCCL's environment variables, "NCCL_IB_HCA").
pub fn nccl_ib_hca(hcas: &[String]) -> String {
    format!("={}", hcas.join(","))
}

pub use crate::images::default_image;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_only_when_the_shell_would_read_them() {
        assert_eq!(quote("meta-llama/Llama-3.1-8B"), "meta-llama/Llama-3.1-8B");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote("$(touch x)"), "'$(touch x)'");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("`x`;y"), "'`x`;y'");
    }
}
