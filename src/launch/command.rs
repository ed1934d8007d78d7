//! The command line and the script that start one replica's engine: the
//! argv each engine's own parser reads, and the shell around it that waits
//! for peers, starts Ray where it must, and hands the server the signals.

use super::*;

impl Spec<'_> {
    pub(super) fn engine(&self) -> Kind {
        self.profile.engine.kind
    }

    pub(super) fn tp(&self) -> u32 {
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
            Kind::Vllm => vec![w("vllm"), w("serve"), src, w("--host"), w("0.0.0.0"), w("--port"), port]
                .into_iter()
                .chain([w("--tensor-parallel-size"), tp, w("--served-model-name"), w(self.served_name)])
                .collect(),
            Kind::Sglang => vec![w("python3"), w("-m"), w("sglang.launch_server"), w("--model-path"), src]
                .into_iter()
                .chain([w("--host"), w("0.0.0.0"), w("--port"), port, w("--tp"), tp])
                .chain([w("--served-model-name"), w(self.served_name)])
                .collect(),
            Kind::Tgi => {
                let mut v: Vec<String> =
                    vec![w("text-generation-launcher"), w("--model-id"), src, w("--hostname"), w("0.0.0.0")]
                        .into_iter()
                        .chain([w("--port"), port, w("--num-shard"), tp])
                        .collect();
                // A second sharded launcher on the node: its own rendezvous
                // port and shard sockets, else it fails on the first one's.
                if self.ports.master != self.profile.engine.master_port {
                    let m = self.ports.master.to_string();
                    v.extend([w("--master-port"), m.clone(), w("--shard-uds-path"), format!("/tmp/llmgw-tgi-{m}")]);
                }
                v
            }
            Kind::LlamaCpp => {
                let mut v = vec![w("llama-server")];
                v.extend(gguf_args(self.weights));
                v.extend([w("--host"), w("0.0.0.0"), w("--port"), port]);
                if !self.profile.cpu_only() {
                    v.extend([w("--n-gpu-layers"), w("999")]);
                }
                v
            }
            Kind::Trtllm => {
                vec![w("trtllm-serve"), src, w("--host"), w("0.0.0.0"), w("--port"), port, w("--tp_size"), tp]
            }
            Kind::Ollama => return None,
        };
        // What the memory fit checked, for a model with a shape
        // (docs/catalog.md, "Memory fit"); the profile's args still last.
        if let Some(sizing) = &self.profile.memory.sizing {
            v.extend(sizing.engine_args(self.profile.engine.sizing));
        }
        v.extend(self.profile.serving.args.iter().cloned());
        Some(v)
    }

    /// The context the memory fit assumed, in tokens: the profile's
    /// `max_model_len`, else the model's own; `None` for a model without a
    /// shape (the fit assumed none).
    pub fn context(&self) -> Option<u32> {
        self.profile.memory.sizing.as_ref().map(|s| s.max_model_len)
    }

    /// The node's start-up as a POSIX shell script, for one role.
    pub fn script(&self, role: Role, p: &Platform) -> String {
        match (self.engine(), role) {
            (Kind::Vllm, Role::Leader) if self.ray => self.ray_leader(p),
            (Kind::Vllm, Role::Worker) if self.ray => self.ray_worker(p),
            (Kind::Vllm, Role::Leader | Role::Worker) => self.vllm_rank(role, p),
            (Kind::Sglang, Role::Leader | Role::Worker) => self.sglang_rank(p),
            (Kind::Ollama, _) => self.ollama(),
            _ => format!("exec {}", words(&self.argv().unwrap_or_default())),
        }
    }

    /// The deadline every wait of the start-up shares.
    pub(super) fn deadline() -> String {
        // A number before any arithmetic: bash evaluates `a[$(cmd)]` inside
        // `$(( ))`, so a value from the environment is checked first.
        format!(
            "case \"${{LLMGW_START_TIMEOUT:-{START_TIMEOUT_S}}}\" in ''|*[!0-9]*|??????????*) echo \"llmgw: LLMGW_START_TIMEOUT must be a number of seconds\" >&2; exit 1 ;; esac\n\
             deadline=$(( $(date +%s) + ${{LLMGW_START_TIMEOUT:-{START_TIMEOUT_S}}} ))\n"
        )
    }

    /// vLLM across nodes on its own multiprocessing backend: every node
    /// runs `vllm serve` with the replica's whole TP x PP, the node count,
    /// its rank and the leader's address; the others `--headless` (only
    /// rank 0 serves HTTP). vLLM waits for its peers itself.
    pub(super) fn vllm_rank(&self, role: Role, p: &Platform) -> String {
        let n = self.nodes;
        let mut argv = self.argv().unwrap_or_default();
        let at = argv.iter().position(|a| a == "--served-model-name").unwrap_or(argv.len());
        argv.splice(at..at, ["--pipeline-parallel-size".to_string(), n.to_string()]);
        let head = words(&argv[..at + 2]);
        let tail = words(&argv[at + 2..]);
        let headless = if role == Role::Worker { " --headless" } else { "" };
        format!(
            "exec {head} --nnodes {n} --node-rank \"${rank}\" --master-addr \"${leader}\" --master-port {port}{headless} {tail}",
            rank = p.rank,
            leader = p.leader,
            port = self.ports.master,
        )
    }

    /// vLLM's leader on Ray (older vLLM, or `launcher = "ray"`): a Ray head
    /// of its own, then wait until all N nodes have joined it (vLLM refuses
    /// a smaller cluster at once), then serve over Ray. RAY_ADDRESS pins
    /// the poll and vLLM to this head, never to whichever Ray cluster the
    /// node ran last. No Ray client server: it needs grpcio, which vLLM's
    /// Ray does not bring, and vLLM does not use it. A head that fails to
    /// start ends the script at once, with Ray's own message above.
    pub(super) fn ray_leader(&self, p: &Platform) -> String {
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
            "{ray_here}\
             export RAY_ADDRESS=\"${leader}:{ray}\"\n\
             ray start --head --port={ray} --include-dashboard=false --disable-usage-stats || {{ echo \"llmgw: ray start --head failed (see above); giving up\" >&2; exit 1; }}\n\
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
            ray_here = RAY_HERE,
            leader = p.leader,
            ray = ports.ray,
            deadline = Self::deadline(),
            count = quote(count),
            serve = words(&serve),
        )
    }

    /// A Ray worker joins its leader's head, retrying until the head is up:
    /// nothing makes the leader start first. The shell hands it the signal
    /// that stops the container and waits for it, so a stop is not held up
    /// for the whole grace period.
    pub(super) fn ray_worker(&self, p: &Platform) -> String {
        format!(
            "{ray_here}\
             stopping=0\n\
             trap 'stopping=1; kill -TERM \"$server\" 2>/dev/null' TERM INT\n\
             {deadline}\
             while :; do\n\
             \x20 ray start --address=\"${leader}:{ray}\" --disable-usage-stats --block &\n\
             \x20 server=$!\n\
             \x20 wait \"$server\"; code=$?\n\
             \x20 while kill -0 \"$server\" 2>/dev/null; do wait \"$server\"; code=$?; done\n\
             \x20 [ \"$stopping\" = 1 ] && exit \"$code\"\n\
             \x20 if [ \"$(date +%s)\" -ge \"$deadline\" ]; then\n\
             \x20   echo \"llmgw: could not join the Ray head at ${leader}:{ray} before the deadline (LLMGW_START_TIMEOUT=${{LLMGW_START_TIMEOUT:-{START_TIMEOUT_S}}} s); giving up\" >&2\n\
             \x20   exit 1\n\
             \x20 fi\n\
             \x20 sleep 5\n\
             done",
            ray_here = RAY_HERE,
            deadline = Self::deadline(),
            leader = p.leader,
            ray = self.ports.ray,
        )
    }

    /// SGLang across nodes: every rank runs the server with the total
    /// tensor-parallel size, its rank, and the leader's address.
    pub(super) fn sglang_rank(&self, p: &Platform) -> String {
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
    pub(super) fn ollama(&self) -> String {
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
        // The context the memory fit assumed (else Ollama's default, which
        // truncates longer prompts without a word), and the model kept
        // loaded: Ollama unloads an idle one after 5 minutes, and the next
        // request waits for it to load again. The profile's env wins.
        let own = |k: &str| self.profile.serving.env.iter().any(|(name, _)| name == k);
        let mut knobs = self
            .context()
            .filter(|_| !own("OLLAMA_CONTEXT_LENGTH"))
            .map(|n| format!("export OLLAMA_CONTEXT_LENGTH={n}\n"))
            .unwrap_or_default();
        if !own("OLLAMA_KEEP_ALIVE") {
            knobs.push_str("export OLLAMA_KEEP_ALIVE=-1\n");
        }
        format!(
            "export OLLAMA_HOST=0.0.0.0:{port}\n\
             {knobs}\
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

/// Ray must be there: current vLLM images no longer ship it, and a
/// script that carried on without it would only time out.
/// Pipeline parallelism over Ray (every node a stage) needs Ray's
/// compiled graphs: vLLM's own requirement is `ray[cgraph]`.
pub(super) const RAY_HERE: &str = "command -v ray >/dev/null 2>&1 || { echo \"llmgw: this vLLM starts across nodes over Ray, but ray is not installed here (install 'ray[cgraph]': pipeline parallelism needs Ray's compiled graphs; or run vLLM 0.11.1 or later without launcher = ray: it needs no Ray)\" >&2; exit 1; }\n";

/// Waits for `$server`: a signal the trap forwards interrupts the wait,
/// so wait again until the server has finished, and exit as it did.
pub(super) const WAIT_SERVER: &str = "wait \"$server\"\n\
     code=$?\n\
     while kill -0 \"$server\" 2>/dev/null; do wait \"$server\"; code=$?; done\n\
     exit \"$code\"";

/// Text inside a double-quoted message: nothing the shell would expand.
pub(super) fn shell_text(s: &str) -> String {
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

/// How llama.cpp is told its model: a local file `-m PATH`; from the hub
/// `ORG/REPO/FILE.gguf` as `--hf-repo ORG/REPO --hf-file FILE.gguf`, and
/// `ORG/REPO[:QUANT]` as `-hf ORG/REPO[:QUANT]` (llama.cpp picks the file
/// of that quantisation).
pub fn gguf_args(weights: &Weights) -> Vec<String> {
    match weights {
        Weights::Local(path) => vec!["-m".into(), path.clone()],
        Weights::Hub(src) => {
            let mut parts = src.splitn(3, '/');
            match (parts.next(), parts.next(), parts.next()) {
                (Some(org), Some(repo), Some(file)) if file.ends_with(".gguf") => {
                    vec!["--hf-repo".into(), format!("{org}/{repo}"), "--hf-file".into(), file.to_string()]
                }
                _ => vec!["-hf".into(), src.clone()],
            }
        }
    }
}
