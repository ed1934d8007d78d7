//! What render writes, held to the engines' own argument parsers (SPEC 20):
//! every vLLM and SGLang start, as the pod or the job runs it (its shell
//! run, the platform's variables set), goes through vLLM's and SGLang's
//! own code at the version the default image pins (`.ci/engines` installs
//! them from PyPI; tests/engines/parse.py runs them); every llama-server
//! flag is one its pinned release lists (tests/data/llama.cpp). Each
//! engine x launcher render can write is covered: one node, several nodes
//! over vLLM's multiprocessing and over Ray, SGLang across nodes; on
//! Kubernetes, bare Slurm and Slurm under pyxis.
//!
//! The starts are recorded, not run: small scripts named after the
//! engines' programs (tests/engines/capture.py) stand first on PATH, with
//! an `srun` that runs the job's command once per node with the
//! `SLURM_NODEID` Slurm gives it.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::*;

/// The python of an environment with the engine (`.ci/engines ENGINE`).
fn engine_python(engine: &str) -> Option<String> {
    let var = format!("LLMGW_{}_PYTHON", engine.to_ascii_uppercase());
    let py = std::env::var(&var).ok().filter(|p| !p.is_empty());
    if py.is_none() {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: no {engine} to parse with ({var} is unset or empty); `.ci/engines {engine}` installs it and prints its python, .ci/run always does"
        );
    }
    py
}

fn real_python3() -> Option<String> {
    let out = Command::new("sh").args(["-c", "command -v python3"]).output().ok()?;
    let p = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if p.is_empty() {
        let _ = writeln!(std::io::stderr(), "SKIPPED: no python3 to record the engines' starts with");
        return None;
    }
    Some(p)
}

/// The recording PATH: the engines' programs, `python3 -m
/// sglang.launch_server`, Ray (a head and a cluster that every node has
/// joined), `srun` and `scontrol`.
fn shims(d: &Path, python: &str) -> PathBuf {
    let bin = d.join("shims");
    let capture = root().join("tests/engines/capture.py");
    let record = |name: &str| format!("#!/bin/sh\nexec {python} {} {name} \"$@\"\n", capture.display());
    for name in ["vllm", "llama-server", "trtllm-serve", "text-generation-launcher", "ollama"] {
        executable(&bin.join(name), &record(name));
    }
    executable(
        &bin.join("python3"),
        &format!(
            "#!/bin/sh\n\
             if [ \"$1\" = -m ] && [ \"$2\" = sglang.launch_server ]; then exec {python} {} python3 \"$@\"; fi\n\
             # The Ray leader's poll of its cluster: every node has joined.\n\
             if [ \"$1\" = -c ]; then case \"$2\" in *ray.nodes*) echo 99; exit 0 ;; esac; fi\n\
             exec {python} \"$@\"\n",
            capture.display()
        ),
    );
    executable(&bin.join("ray"), "#!/bin/sh\nexit 0\n");
    executable(
        &bin.join("srun"),
        "#!/bin/sh\n\
         # The job's command once per node, with the rank Slurm gives it. A\n\
         # node other than the first may end in failure: a Ray worker whose\n\
         # head never answers gives up (it starts no engine).\n\
         while [ $# -gt 0 ]; do case \"$1\" in -*) shift ;; *) break ;; esac; done\n\
         [ \"$1\" = trtllm-llmapi-launch ] && shift\n\
         [ \"$1\" = /app/llama-server ] && { shift; set -- llama-server \"$@\"; }\n\
         i=0\n\
         while [ \"$i\" -lt \"${SLURM_JOB_NUM_NODES:-1}\" ]; do\n\
         \x20 SLURM_NODEID=$i SLURM_PROCID=$i \"$@\" || [ \"$i\" -gt 0 ] || exit 1\n\
         \x20 i=$((i + 1))\n\
         done\n",
    );
    executable(&bin.join("scontrol"), "#!/bin/sh\necho \"$3\" | tr ',' '\\n'\n");
    bin
}

/// One recorded start: its argv, the variables it ran with, and whether
/// Ray is installed where it runs.
struct Start {
    argv: Vec<String>,
    env: BTreeMap<String, String>,
    ray: bool,
    at: String,
}

fn read_captures(file: &Path, ray: bool, at: &str) -> Vec<Start> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            Start {
                argv: v["argv"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_string()).collect(),
                env: v["env"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap().into()))
                    .collect(),
                ray,
                at: at.to_string(),
            }
        })
        .collect()
}

/// Runs every script `render slurm -o DIR` wrote, as its job would.
fn run_slurm(dir: &Path, bin: &Path, work: &Path, ray: bool) -> Vec<Start> {
    let mut out = Vec::new();
    for f in files(dir).into_iter().filter(|f| f.ends_with(".sbatch")) {
        let text = std::fs::read_to_string(dir.join(&f)).unwrap();
        let field =
            |k: &str| text.lines().find_map(|l| l.strip_prefix(&format!("#SBATCH --{k}="))).unwrap().to_string();
        let capture = work.join(format!("{f}.jsonl"));
        let status = Command::new("bash")
            .arg(dir.join(&f))
            .env("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default()))
            .env("HOME", work)
            .env("LLMGW_CAPTURE", &capture)
            .env("LLMGW_START_TIMEOUT", "0")
            .env("SLURM_JOB_NUM_NODES", field("nodes"))
            .env("SLURM_JOB_NODELIST", field("nodelist"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "{f} did not run to its end:\n{text}");
        out.extend(read_captures(&capture, ray, &f));
    }
    out
}

/// The container's environment as the kubelet and LeaderWorkerSet give
/// it: values, and fieldRefs to the pod's worker index label.
fn pod_env(c: &Value, index: u64, leader: &str, size: u64) -> Vec<(String, String)> {
    let mut env = vec![
        ("LWS_LEADER_ADDRESS".to_string(), leader.to_string()),
        ("LWS_GROUP_SIZE".to_string(), size.to_string()),
        ("LWS_WORKER_INDEX".to_string(), index.to_string()),
    ];
    for e in c["env"].as_array().into_iter().flatten() {
        let name = e["name"].as_str().unwrap().to_string();
        if let Some(v) = e["value"].as_str() {
            env.push((name, v.to_string()));
        } else if let Some(path) = e["valueFrom"]["fieldRef"]["fieldPath"].as_str() {
            assert_eq!(path, "metadata.labels['leaderworkerset.sigs.k8s.io/worker-index']", "{e}");
            env.push((name, index.to_string()));
        }
    }
    env
}

/// Runs every container of every pod `render kubernetes -o DIR` wrote:
/// a Deployment's one pod, a LeaderWorkerSet's leader and each worker.
fn run_kubernetes(dir: &Path, bin: &Path, work: &Path, ray: bool) -> Vec<Start> {
    let mut out = Vec::new();
    for f in files(dir).into_iter().filter(|f| f.starts_with("llmgw-") && f.ends_with(".yaml")) {
        let doc = llmgw::kubernetes::yaml_to_json(&std::fs::read_to_string(dir.join(&f)).unwrap()).unwrap();
        let name = doc["metadata"]["name"].as_str().unwrap().to_string();
        let pods: Vec<(u64, &Value)> = match doc["kind"].as_str().unwrap() {
            "Deployment" => vec![(0, &doc["spec"]["template"])],
            "LeaderWorkerSet" => {
                let t = &doc["spec"]["leaderWorkerTemplate"];
                let size = t["size"].as_u64().unwrap();
                std::iter::once((0, &t["leaderTemplate"])).chain((1..size).map(|i| (i, &t["workerTemplate"]))).collect()
            }
            _ => continue,
        };
        let size = pods.len() as u64;
        for (index, template) in pods {
            let c = &template["spec"]["containers"][0];
            let words = |v: &Value| -> Vec<String> {
                v.as_array().into_iter().flatten().map(|w| w.as_str().unwrap().to_string()).collect()
            };
            let mut argv = words(&c["command"]);
            if argv.is_empty() {
                // The llama.cpp server image's entrypoint.
                argv.push("llama-server".into());
            }
            argv.extend(words(&c["args"]));
            let capture = work.join(format!("{f}-{index}.jsonl"));
            let mut cmd = Command::new(&argv[0]);
            cmd.args(&argv[1..])
                .env("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default()))
                .env("HOME", work)
                .env("LLMGW_CAPTURE", &capture)
                .env("LLMGW_START_TIMEOUT", "0")
                .env("POD", format!("{name}-{index}"))
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            for (k, v) in pod_env(c, index, &format!("{name}-0.{name}"), size) {
                cmd.env(k, v);
            }
            let status = cmd.status().unwrap();
            // A Ray worker gives up at once here (its head never answers):
            // it starts no engine, so nothing of it is held to a parser.
            let ray_worker = index > 0 && argv.iter().any(|a| a.contains("ray start --address"));
            assert!(status.success() || ray_worker, "{f} pod {index} did not run to its end: {argv:?}");
            out.extend(read_captures(&capture, ray, &format!("{f} pod {index}")));
        }
    }
    out
}

/// Hands each start to its engine's parser; what each one read, in order.
fn parse(python: &str, engine: &str, starts: &[&Start]) -> Vec<Value> {
    let mut child = Command::new(python)
        .arg(root().join("tests/engines/parse.py"))
        .arg(engine)
        .env("VLLM_TARGET_DEVICE", "cpu")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = String::new();
    for s in starts {
        input.push_str(&serde_json::json!({"argv": s.argv, "ray": s.ray}).to_string());
        input.push('\n');
    }
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let parsed: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    assert_eq!(parsed.len(), starts.len(), "{engine}'s parser stopped: {}", String::from_utf8_lossy(&out.stderr));
    parsed
}

/// A fleet with room for every kind of replica: five DGX H100 on one
/// InfiniBand fabric (which report vLLM 0.6.3: the nodes' own, older than
/// the default image's) and a MIG A100.
fn fleet(d: &Path) -> PathBuf {
    let dgx = d.join("dgx.toml");
    let out = run(&["inventory", "synth", "dgx-h100:5@ib-east", "--prefix", "h", "-o", dgx.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let rest = write(
        d,
        "rest.toml",
        "[[node]]\nid = \"a100-mig\"\nlabels = { \"nvidia.com/mig.strategy\" = \"mixed\" }\n\
         [[node.gpu]]\nindex = 0\nname = \"NVIDIA A100-SXM4-80GB\"\nmig = true\n\
         [[node.gpu.mig_device]]\nindex = 0\nprofile = \"1g.10gb\"\n",
    );
    let fleet = d.join("fleet.toml");
    let out =
        run(&["inventory", "merge", dgx.to_str().unwrap(), rest.to_str().unwrap(), "-o", fleet.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    fleet
}

/// Every vLLM and SGLang launcher render writes, with the default images.
fn catalog(d: &Path) -> PathBuf {
    let config = root().join("tests/data/models/llama-3.1-8b.json");
    write(
        d,
        "c.toml",
        &format!(
            "[[model]]\nname = \"v-nodes\"\nsource = \"meta-llama/Llama-3.1-405B-Instruct\"\n\
             [[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\nnodes = 2\n\
             [[model]]\nname = \"s-nodes\"\nsource = \"deepseek-ai/DeepSeek-V3\"\n\
             [[model.profile]]\nname = \"p\"\nengine = \"sglang\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\nnodes = 2\n\
             [[model]]\nname = \"v-one\"\nsource = \"meta-llama/Llama-3.1-8B-Instruct\"\nconfig = \"{config}\"\n\
             [[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 4\nmax_model_len = 8192\nmax_num_seqs = 4\nkv_cache_dtype = \"fp8\"\n\
             [[model]]\nname = \"s-one\"\nsource = \"meta-llama/Llama-3.1-8B-Instruct\"\nconfig = \"{config}\"\n\
             [[model.profile]]\nname = \"p\"\nengine = \"sglang\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 2\nmax_model_len = 16384\n\
             [[model]]\nname = \"v-mig\"\nsource = \"Qwen/Qwen2.5-1.5B-Instruct\"\n\
             [[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"a100-sxm4-80gb\"\nmig_profile = \"1g.10gb\"\nport = 9000\n",
            config = config.display()
        ),
    )
}

/// Renders the catalog for `kind` (with `extra` flags) into a folder and
/// records every start, as that platform runs them.
fn starts(d: &Path, catalog: &Path, fleet: &Path, kind: &str, extra: &[&str], ray: bool) -> Vec<Start> {
    let tag = format!("{kind}{}", extra.join("").replace('-', ""));
    let plan = placed_plan(&d.join(&tag), catalog, fleet);
    let out_dir = d.join(&tag).join("out");
    let mut args = vec!["-o", out_dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = render_plan(kind, &plan, catalog, fleet, &args);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let python = real_python3().unwrap();
    let bin = shims(d, &python);
    let work = d.join(&tag).join("work");
    std::fs::create_dir_all(&work).unwrap();
    let mut all = if kind == "slurm" {
        run_slurm(&out_dir, &bin, &work, ray)
    } else {
        run_kubernetes(&out_dir, &bin, &work, ray)
    };
    for s in &mut all {
        s.at = format!("{tag}/{}", s.at);
    }
    all
}

fn is_sglang(s: &Start) -> bool {
    s.argv.get(1).map(String::as_str) == Some("-m") && s.argv.get(2).map(String::as_str) == Some("sglang.launch_server")
}

/// Each engine's starts through its parser: every one accepted, each
/// replica's ranks 0 to N-1 once each; the starts, what was read.
fn hold_to_parsers(all: &[Start]) -> Vec<(String, Value)> {
    let mut read = Vec::new();
    for engine in ["vllm", "sglang"] {
        let mine: Vec<&Start> =
            all.iter().filter(|s| if engine == "vllm" { s.argv[0] == "vllm" } else { is_sglang(s) }).collect();
        assert!(!mine.is_empty(), "no {engine} start was recorded");
        let Some(python) = engine_python(engine) else { continue };
        let parsed = parse(&python, engine, &mine);
        let refused: Vec<String> = mine
            .iter()
            .zip(&parsed)
            .filter(|(_, p)| p["ok"] != true)
            .map(|(s, p)| format!("{}: {:?}\n  {} says: {}", s.at, s.argv, engine, p["error"]))
            .collect();
        assert!(
            refused.is_empty(),
            "{} of {} {engine} starts refused:\n{}",
            refused.len(),
            mine.len(),
            refused.join("\n")
        );
        // Across nodes, each replica's nodes hold the ranks 0..N-1 once each.
        let mut ranks: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for (s, p) in mine.iter().zip(&parsed) {
            let args = &p["args"];
            if args["nnodes"].as_u64().unwrap_or(1) > 1 {
                let file = s.at.split(' ').next().unwrap().to_string();
                ranks.entry(file).or_default().push(args["node_rank"].as_u64().unwrap());
            }
            read.push((s.at.clone(), args.clone()));
        }
        for (file, mut r) in ranks {
            r.sort_unstable();
            assert_eq!(r, (0..r.len() as u64).collect::<Vec<_>>(), "{file}: the ranks the engine read");
        }
    }
    read
}

/// Every vLLM and SGLang start render writes, on Kubernetes, bare Slurm and
/// Slurm under pyxis, is one the engine's own parser takes. Before the
/// launcher followed the image, the LeaderWorkerSet of a fleet whose nodes
/// report vLLM 0.6.3 (any `inventory synth`) started vLLM over Ray in the
/// default image, and vLLM's ParallelConfig refused it: "Failed to import
/// Ray".
#[test]
fn every_vllm_and_sglang_start_is_one_the_engines_own_parser_takes() {
    if real_python3().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (fleet, catalog) = (fleet(d), catalog(d));
    let mut all = starts(d, &catalog, &fleet, "kubernetes", &["--rdma-resource", "rdma/ib"], false);
    // A bare Slurm job runs the nodes' own vLLM (0.6.3: over Ray, which
    // such an install has); under pyxis the default image's.
    all.extend(starts(d, &catalog, &fleet, "slurm", &[], true));
    all.extend(starts(d, &catalog, &fleet, "slurm", &["--container", "pyxis"], false));
    let ray_starts = all.iter().filter(|s| s.argv.iter().any(|a| a == "ray")).count();
    assert!(ray_starts > 0, "the bare Slurm job of the nodes' vLLM 0.6.3 starts over Ray");
    let read = hold_to_parsers(&all);
    // NCCL reads the adapters as exact names only after a `=`.
    let hcas: Vec<&String> = all.iter().filter_map(|s| s.env.get("NCCL_IB_HCA")).collect();
    assert!(!hcas.is_empty() && hcas.iter().all(|h| h.starts_with("=mlx5_")), "{hcas:?}");
    if read.is_empty() {
        return;
    }
    // What the memory fit checked reached the engines as they read it.
    let one = |file: &str| read.iter().find(|(at, _)| at.contains(file)).map(|(_, a)| a.clone()).unwrap();
    assert_eq!(one("v-one")["max_model_len"], 8192);
    assert_eq!(one("s-one")["context_length"], 16384);
}

/// vLLM over Ray, in an image that has Ray (an older vLLM's): the leader's
/// start parses; the same start in the default image fails where vLLM
/// imports Ray, as it fails in the pod.
#[test]
fn vllm_over_ray_parses_where_ray_is_and_fails_where_it_is_not() {
    if real_python3().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = fleet(d);
    let catalog = write(
        d,
        "ray.toml",
        "[[model]]\nname = \"v-ray\"\nsource = \"meta-llama/Llama-3.1-405B-Instruct\"\n\
         [[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\nnodes = 2\n\
         image = \"vllm/vllm-openai:v0.8.5\"\n",
    );
    let all = starts(d, &catalog, &fleet, "kubernetes", &[], true);
    assert_eq!(all.len(), 1, "only the Ray leader starts vLLM");
    assert!(all[0].argv.windows(2).any(|w| w == ["--distributed-executor-backend", "ray"]), "{:?}", all[0].argv);
    let Some(python) = engine_python("vllm") else { return };
    let with_ray = parse(&python, "vllm", &[&all[0]]);
    assert_eq!(with_ray[0]["ok"], true, "{}", with_ray[0]);
    let without = Start { argv: all[0].argv.clone(), env: BTreeMap::new(), ray: false, at: String::new() };
    let refused = parse(&python, "vllm", &[&without]);
    assert!(refused[0]["error"].as_str().unwrap().contains("Ray"), "{}", refused[0]);
}

/// The parsers say no where the engines say no: the check can fail.
#[test]
fn the_engines_parsers_refuse_an_empty_rank_and_an_unknown_flag() {
    for (engine, head) in [
        ("vllm", vec!["vllm", "serve", "m"]),
        ("sglang", vec!["python3", "-m", "sglang.launch_server", "--model-path", "m"]),
    ] {
        let Some(python) = engine_python(engine) else { continue };
        let case = |extra: &[&str]| Start {
            argv: head.iter().chain(extra).map(|s| (*s).to_string()).collect(),
            env: BTreeMap::new(),
            ray: false,
            at: String::new(),
        };
        let (empty, abc, unknown, fine) = (
            case(&["--nnodes", "2", "--node-rank", ""]),
            case(&["--nnodes", "2", "--node-rank", "one"]),
            case(&["--tensor-parallel-degree", "2"]),
            case(&["--port", "8001"]),
        );
        let out = parse(&python, engine, &[&empty, &abc, &unknown, &fine]);
        assert!(out[0]["error"].as_str().unwrap().contains("invalid int value: ''"), "{engine}: {}", out[0]);
        assert!(out[1]["error"].as_str().unwrap().contains("invalid int value: 'one'"), "{engine}: {}", out[1]);
        assert!(out[2]["error"].as_str().unwrap().contains("unrecognized arguments"), "{engine}: {}", out[2]);
        assert_eq!(out[3]["ok"], true, "{engine}: {}", out[3]);
    }
}

/// The environments hold the versions the default images pin.
#[test]
fn the_parsers_are_the_default_images_versions() {
    for (engine, module) in [("vllm", "vllm"), ("sglang", "sglang")] {
        let Some(python) = engine_python(engine) else { continue };
        let out = Command::new(&python)
            .args(["-c", &format!("import importlib.metadata as m; print(m.version('{module}'))")])
            .output()
            .unwrap();
        let have = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let image = llmgw::launch::default_image(engine, true);
        let tag = llmgw::images::version(llmgw::images::tag(image).unwrap()).unwrap();
        assert_eq!(llmgw::images::version(&have), Some(tag), "{engine} {have} is not the version of {image}");
    }
}

/// The master port llmgw gives a multi-node vLLM is vLLM's own default
/// (`ParallelConfig.master_port`, which `vllm serve --master-port` and
/// `EngineArgs` take), as the pinned vLLM has it.
#[test]
fn vllms_default_master_port_is_the_engine_tables() {
    let Some(python) = engine_python("vllm") else { return };
    let code = "from vllm.config import ParallelConfig; from vllm.engine.arg_utils import EngineArgs; \
                print(ParallelConfig.__dataclass_fields__['master_port'].default, EngineArgs.__dataclass_fields__['master_port'].default)";
    let out = Command::new(&python).env("VLLM_TARGET_DEVICE", "cpu").args(["-c", code]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or_default().to_string();
    let table = llmgw::engines::find("vllm").unwrap().master_port;
    assert_eq!(
        last,
        format!("{table} {table}"),
        "vLLM's default master ports (ParallelConfig, EngineArgs) are not llmgw's {table}"
    );
}

/// llama-server's flags, every spelling, from its pinned release's list.
fn llama_flags() -> BTreeSet<String> {
    std::fs::read_to_string(root().join("tests/data/llama.cpp/server-flags.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .flat_map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .collect()
}

/// Every flag of every llama-server start render writes (GPU and CPU, the
/// hub's three forms and a local file, a context from the memory fit,
/// slots) is one llama-server's release lists.
#[test]
fn every_llama_server_flag_is_one_its_release_lists() {
    let Some(python) = real_python3() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = write(
        d,
        "fleet.toml",
        "[[node]]\nid = \"c1\"\ncpus = 64\nmemory_total_mb = 262144\nweights = [\"org/local.gguf\"]\n\
         disk = { path = \"/models\", free_bytes = 1000000000000, total_bytes = 2000000000000 }\n\
         [[node]]\nid = \"g1\"\ncpus = 64\nmemory_total_mb = 262144\n\
         [[node.gpu]]\nindex = 0\nname = \"NVIDIA L40S\"\n[[node.gpu]]\nindex = 1\nname = \"NVIDIA L40S\"\n",
    );
    let config = root().join("tests/data/models/llama-3.1-8b.json");
    let catalog = write(
        d,
        "c.toml",
        &format!(
            "[[model]]\nname = \"a\"\nsource = \"bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M\"\n[[model.profile]]\nname = \"gpu\"\nengine = \"llama.cpp\"\ngpu_class = \"l40s\"\n\
             [[model]]\nname = \"b\"\nsource = \"bartowski/Llama-3.2-3B-Instruct-GGUF/Llama-3.2-3B-Instruct-Q4_K_M.gguf\"\n[[model.profile]]\nname = \"gpu\"\nengine = \"llama.cpp\"\ngpu_class = \"l40s\"\n\
             [[model]]\nname = \"c\"\nsource = \"org/local.gguf\"\n[[model.profile]]\nname = \"cpu\"\nengine = \"llama.cpp\"\ncpus = 8\nmemory_gb = 16\n\
             [[model]]\nname = \"e\"\nsource = \"bartowski/Meta-Llama-3.1-8B-Instruct-GGUF\"\nconfig = \"{}\"\ndtype = \"int4\"\n\
             [[model.profile]]\nname = \"cpu\"\nengine = \"llama.cpp\"\ncpus = 8\nmax_model_len = 8192\nmax_num_seqs = 2\n",
            config.display()
        ),
    );
    let bin = shims(d, &python);
    let mut all = Vec::new();
    for (kind, extra) in [("kubernetes", vec![]), ("slurm", vec![]), ("slurm", vec!["--container", "pyxis"])] {
        let tag = format!("{kind}{}", extra.len());
        let plan = placed_plan(&d.join(&tag), &catalog, &fleet);
        let out_dir = d.join(&tag).join("out");
        let mut args = vec!["-o", out_dir.to_str().unwrap()];
        args.extend(extra.iter().copied());
        let out = render_plan(kind, &plan, &catalog, &fleet, &args);
        assert_eq!(code(&out), 0, "{}", transcript(&out));
        let work = d.join(&tag).join("work");
        std::fs::create_dir_all(&work).unwrap();
        all.extend(if kind == "slurm" {
            run_slurm(&out_dir, &bin, &work, false)
        } else {
            run_kubernetes(&out_dir, &bin, &work, false)
        });
    }
    let known = llama_flags();
    let starts: Vec<&Start> = all.iter().filter(|s| s.argv[0] == "llama-server").collect();
    assert_eq!(starts.len(), 12, "four replicas on three platforms");
    for s in &starts {
        let unknown: Vec<&String> = s.argv.iter().filter(|a| a.starts_with('-') && !known.contains(*a)).collect();
        assert!(unknown.is_empty(), "{}: {unknown:?} are no flags of llama-server: {:?}", s.at, s.argv);
    }
    // The context the fit assumed, times the sequences it holds at once.
    let e = starts.iter().find(|s| s.argv.iter().any(|a| a.contains("Meta-Llama-3.1-8B"))).unwrap();
    assert!(e.argv.windows(2).any(|w| w == ["--ctx-size", "16384"]), "{:?}", e.argv);
    assert!(e.argv.windows(2).any(|w| w == ["--parallel", "2"]), "{:?}", e.argv);
}

/// The stand-ins are held to the same parsers: every flag they take is
/// one the engine's parser has, so a flag the engine refuses is refused
/// by its stand-in too (tests/standins/README.md).
#[test]
fn the_stand_ins_take_no_flag_the_engines_parsers_lack() {
    let probes = [
        (
            "vllm",
            "from vllm.utils.argparse_utils import FlexibleArgumentParser\n\
             from vllm.entrypoints.launchers.cli_args import make_arg_parser\n\
             real = {o for a in make_arg_parser(FlexibleArgumentParser())._actions for o in a.option_strings}\n\
             import standin.vllm as s\n\
             mine = set(s.VALUE_FLAGS) | set(s.BOOL_FLAGS) | set(s.SHORT) - {'-O'}\n",
        ),
        (
            "sglang",
            "import argparse\nfrom sglang.srt.server_args import ServerArgs\n\
             p = argparse.ArgumentParser(); ServerArgs.add_cli_args(p)\n\
             real = {o for a in p._actions for o in a.option_strings}\n\
             import standin.sglang as s\n\
             mine = set(s.VALUE) | set(s.FLAGS) | {a for v in s.ALIASES.values() for a in v}\n",
        ),
    ];
    for (engine, code_) in probes {
        let Some(python) = engine_python(engine) else { continue };
        let out = Command::new(&python)
            .arg("-c")
            // The stand-ins' package after the engine's own: their `vllm`
            // and `sglang` packages would hide the real ones.
            .arg(format!(
                "import sys\nsys.path.append({:?})\n{code_}print('extra:', ' '.join(sorted(mine - real)))",
                root().join("tests/standins/python").display().to_string()
            ))
            .env("VLLM_TARGET_DEVICE", "cpu")
            .output()
            .unwrap();
        assert!(out.status.success(), "{engine}: {}", String::from_utf8_lossy(&out.stderr));
        // vLLM logs to standard output too: the answer is its own line.
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let extra = text.lines().find_map(|l| l.strip_prefix("extra:")).unwrap_or("(no answer)").trim().to_string();
        assert!(extra.is_empty(), "the {engine} stand-in takes flags {engine} refuses: {extra}");
    }
}
