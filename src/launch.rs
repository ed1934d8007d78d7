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

use crate::catalog::Profile;
use crate::engines::Engine;

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
    /// The TGI launcher's shard rendezvous port (sharded TGI); only given
    /// on the command line when another replica on the node has the default.
    pub master: u16,
}

/// The defaults when nothing else on the node uses them.
pub const RAY_PORT: u16 = 6379;
pub const RAY_CLIENT_PORT: u16 = 10001;
pub const DIST_PORT: u16 = 20000;
pub const TGI_MASTER_PORT: u16 = 29500;

impl Ports {
    /// The profile's port, else the engine's, and the default start-up ports.
    pub fn defaults(p: &Profile) -> Ports {
        Ports {
            http: p.serving.port.unwrap_or(p.engine.default_port),
            ray: RAY_PORT,
            ray_client: RAY_CLIENT_PORT,
            dist: DIST_PORT,
            master: TGI_MASTER_PORT,
        }
    }
}

/// Which ports a replica's start-up needs besides its HTTP port.
pub fn needs_master(p: &Profile) -> bool {
    p.engine.name == "tgi" && p.gpus_per_node > 1
}

pub fn needs_ray(p: &Profile, nodes: usize) -> bool {
    nodes > 1 && p.engine.name == "vllm"
}

pub fn needs_dist(p: &Profile, nodes: usize) -> bool {
    nodes > 1 && p.engine.name == "sglang"
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

/// The HTTP path a server answers when it can take requests. Ollama has
/// no /health: its root answers once the server is up.
pub fn health_path(engine: &Engine) -> &'static str {
    if engine.name == "ollama" { "/" } else { "/health" }
}

impl Spec<'_> {
    fn engine(&self) -> &'static str {
        self.profile.engine.name
    }

    fn tp(&self) -> u32 {
        self.profile.gpus_per_node.max(1)
    }

    /// The serve command of a single-node replica, program first, as
    /// words (no shell): what a container's `command` or `srun` runs.
    /// `None` for Ollama, whose model is pulled after its server starts.
    pub fn argv(&self) -> Option<Vec<String>> {
        let w = |s: &str| s.to_string();
        let (port, tp) = (self.ports.http.to_string(), self.tp().to_string());
        let src = self.weights.as_str().to_string();
        let mut v: Vec<String> = match self.engine() {
            "vllm" => vec![w("vllm"), w("serve"), src, w("--host"), w("0.0.0.0"), w("--port"), port]
                .into_iter()
                .chain([w("--tensor-parallel-size"), tp, w("--served-model-name"), w(self.served_name)])
                .collect(),
            "sglang" => vec![w("python3"), w("-m"), w("sglang.launch_server"), w("--model-path"), src]
                .into_iter()
                .chain([w("--host"), w("0.0.0.0"), w("--port"), port, w("--tp"), tp])
                .chain([w("--served-model-name"), w(self.served_name)])
                .collect(),
            "tgi" => {
                let mut v: Vec<String> =
                    vec![w("text-generation-launcher"), w("--model-id"), src, w("--hostname"), w("0.0.0.0")]
                        .into_iter()
                        .chain([w("--port"), port, w("--num-shard"), tp])
                        .collect();
                // A second sharded launcher on the node: its own rendezvous
                // port and shard sockets, else it fails on the first one's.
                if self.ports.master != TGI_MASTER_PORT {
                    let m = self.ports.master.to_string();
                    v.extend([w("--master-port"), m.clone(), w("--shard-uds-path"), format!("/tmp/llmgw-tgi-{m}")]);
                }
                v
            }
            "llama.cpp" => {
                let model = match self.weights {
                    Weights::Local(_) => w("-m"),
                    Weights::Hub(_) => w("-hf"),
                };
                let mut v = vec![w("llama-server"), model, src, w("--host"), w("0.0.0.0"), w("--port"), port];
                if !self.profile.cpu_only() {
                    v.extend([w("--n-gpu-layers"), w("999")]);
                }
                v
            }
            "trtllm" => vec![w("trtllm-serve"), src, w("--host"), w("0.0.0.0"), w("--port"), port, w("--tp_size"), tp],
            _ => return None,
        };
        // What the memory fit checked, for a model with a shape
        // (docs/catalog.md, "Memory fit"); the profile's args still last.
        if let Some(sizing) = &self.profile.memory.sizing {
            v.extend(sizing.engine_args(self.engine()));
        }
        v.extend(self.profile.serving.args.iter().cloned());
        Some(v)
    }

    /// The node's start-up as a POSIX shell script, for one role.
    pub fn script(&self, role: Role, p: &Platform) -> String {
        match (self.engine(), role) {
            ("vllm", Role::Leader) => self.ray_leader(p),
            ("vllm", Role::Worker) => self.ray_worker(p),
            ("sglang", Role::Leader | Role::Worker) => self.sglang_rank(p),
            ("ollama", _) => self.ollama(),
            _ => format!("exec {}", words(&self.argv().unwrap_or_default())),
        }
    }

    /// The deadline every wait of the start-up shares.
    fn deadline() -> String {
        format!("deadline=$(( $(date +%s) + ${{LLMGW_START_TIMEOUT:-{START_TIMEOUT_S}}} ))\n")
    }

    /// vLLM's leader: a Ray head of its own, then wait until all N nodes
    /// have joined it (vLLM refuses a smaller cluster at once), then serve
    /// over Ray. RAY_ADDRESS pins the poll and vLLM to this head, never to
    /// whichever Ray cluster the node ran last.
    fn ray_leader(&self, p: &Platform) -> String {
        let n = self.nodes;
        let ports = self.ports;
        let mut serve = self.argv().unwrap_or_default();
        let at = serve.iter().position(|a| a == "--served-model-name").unwrap_or(serve.len());
        serve.splice(
            at..at,
            [
                "--pipeline-parallel-size".to_string(),
                n.to_string(),
                "--distributed-executor-backend".to_string(),
                "ray".to_string(),
            ],
        );
        let count = "import ray; ray.init(); print(sum(1 for n in ray.nodes() if n[\"Alive\"]))";
        format!(
            "export RAY_ADDRESS=\"${leader}:{ray}\"\n\
             ray start --head --port={ray} --ray-client-server-port={client} --include-dashboard=false --disable-usage-stats\n\
             {deadline}\
             while :; do\n\
             \x20 alive=$(python3 -c {count} 2>/dev/null | tail -n 1)\n\
             \x20 case \"$alive\" in ''|*[!0-9]*) alive=0 ;; esac\n\
             \x20 [ \"$alive\" -ge {n} ] && break\n\
             \x20 if [ \"$(date +%s)\" -ge \"$deadline\" ]; then\n\
             \x20   echo \"llmgw: only $alive of {n} nodes joined the Ray cluster at $RAY_ADDRESS before the deadline (LLMGW_START_TIMEOUT=${{LLMGW_START_TIMEOUT:-{START_TIMEOUT_S}}} s); giving up\" >&2\n\
             \x20   exit 1\n\
             \x20 fi\n\
             \x20 sleep 5\n\
             done\n\
             exec {serve}",
            leader = p.leader,
            ray = ports.ray,
            client = ports.ray_client,
            deadline = Self::deadline(),
            count = quote(count),
            serve = words(&serve),
        )
    }

    /// A Ray worker joins its leader's head, retrying until the head is up:
    /// nothing makes the leader start first.
    fn ray_worker(&self, p: &Platform) -> String {
        format!(
            "{deadline}\
             until ray start --address=\"${leader}:{ray}\" --disable-usage-stats --block; do\n\
             \x20 if [ \"$(date +%s)\" -ge \"$deadline\" ]; then\n\
             \x20   echo \"llmgw: could not join the Ray head at ${leader}:{ray} before the deadline (LLMGW_START_TIMEOUT=${{LLMGW_START_TIMEOUT:-{START_TIMEOUT_S}}} s); giving up\" >&2\n\
             \x20   exit 1\n\
             \x20 fi\n\
             \x20 sleep 5\n\
             done",
            deadline = Self::deadline(),
            leader = p.leader,
            ray = self.ports.ray,
        )
    }

    /// SGLang across nodes: every rank runs the server with the total
    /// tensor-parallel size, its rank, and the leader's address.
    fn sglang_rank(&self, p: &Platform) -> String {
        let n = self.nodes;
        let mut argv = self.argv().unwrap_or_default();
        if let Some(i) = argv.iter().position(|a| a == "--tp") {
            argv[i + 1] = (self.tp() * n).to_string();
        }
        let at = argv.iter().position(|a| a == "--served-model-name").unwrap_or(argv.len());
        let head = words(&argv[..at]);
        let tail = words(&argv[at..]);
        format!(
            "exec {head} --nnodes {n} --node-rank \"${rank}\" --dist-init-addr \"${leader}:{dist}\" {tail}",
            rank = p.rank,
            leader = p.leader,
            dist = self.ports.dist,
        )
    }

    /// Ollama: the server on all interfaces, then the model pulled into it
    /// and copied to the catalog's name (every other engine answers under
    /// it, and a gateway asks for it). The shell stays to wait for the
    /// server and hands it the signal that stops the container.
    fn ollama(&self) -> String {
        let mut serve = vec!["ollama".to_string(), "serve".to_string()];
        serve.extend(self.profile.serving.args.iter().cloned());
        let source = self.weights.as_str();
        let copy = if source == self.served_name {
            String::new()
        } else {
            format!(
                "ollama cp {src} {name} || {{ echo \"llmgw: ollama could not name {src_text} {name_text}\" >&2; kill \"$server\"; exit 1; }}\n",
                src = quote(source),
                name = quote(self.served_name),
                src_text = shell_text(source),
                name_text = shell_text(self.served_name),
            )
        };
        format!(
            "export OLLAMA_HOST=0.0.0.0:{port}\n\
             {serve} &\n\
             server=$!\n\
             trap 'kill -TERM \"$server\" 2>/dev/null' TERM INT\n\
             {deadline}\
             until ollama list >/dev/null 2>&1; do\n\
             \x20 kill -0 \"$server\" 2>/dev/null || exit 1\n\
             \x20 [ \"$(date +%s)\" -ge \"$deadline\" ] && {{ echo \"llmgw: ollama did not come up on port {port}\" >&2; exit 1; }}\n\
             \x20 sleep 1\n\
             done\n\
             ollama pull {model} || {{ echo \"llmgw: ollama could not pull {model_text}\" >&2; kill \"$server\"; exit 1; }}\n\
             {copy}\
             {wait}",
            port = self.ports.http,
            serve = words(&serve),
            deadline = Self::deadline(),
            model = quote(source),
            model_text = shell_text(source),
            wait = WAIT_SERVER,
        )
    }
}

/// Waits for `$server`: a signal the trap forwards interrupts the wait,
/// so wait again until the server has finished, and exit as it did.
const WAIT_SERVER: &str = "wait \"$server\"\n\
     code=$?\n\
     while kill -0 \"$server\" 2>/dev/null; do wait \"$server\"; code=$?; done\n\
     exit \"$code\"";

/// Text inside a double-quoted message: nothing the shell would expand.
fn shell_text(s: &str) -> String {
    s.replace(['"', '$', '`', '\\'], "?")
}

/// A word for the shell: as it is when it holds nothing the shell would
/// read, else single-quoted. Callers refuse control characters first.
pub fn quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ':' | '=' | '@' | '%' | '+' | ',')
        });
    if plain { s.to_string() } else { format!("'{}'", s.replace('\'', "'\\''")) }
}

/// Words joined into one shell command line, each quoted.
pub fn words(v: &[String]) -> String {
    v.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

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
