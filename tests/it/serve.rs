//! What render writes, run for real under stand-in engines that enforce
//! the engines' documented start-up contracts (tests/standins/README.md):
//! on the test Slurm cluster with real sbatch on several slurmd, and the
//! LeaderWorkerSet leader and worker commands with the environment LWS
//! gives them. A replica is done when a client reaches it from outside.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use crate::common::*;

/// python3 runs the stand-ins; without it these tests say so and pass.
pub fn python3() -> bool {
    let ok = Command::new("python3")
        .arg("-c")
        .arg("import sys; sys.exit(sys.version_info < (3, 8))")
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        let _ = writeln!(std::io::stderr(), "SKIPPED: no python3 for the stand-in engines (tests/standins)");
    }
    ok
}

pub fn standins() -> (PathBuf, PathBuf) {
    (root().join("tests/standins/bin"), root().join("tests/standins/python"))
}

/// PATH with the stand-ins first.
pub fn path_with_standins() -> String {
    format!("{}:{}", standins().0.display(), std::env::var("PATH").unwrap_or_default())
}

/// `GET path` on `addr` (host:port): the status and body, if it answered.
pub fn get(addr: &str, path: &str) -> Option<(u16, String)> {
    let mut s = std::net::TcpStream::connect_timeout(&addr.parse().ok()?, Duration::from_secs(2)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    let status = text.split_whitespace().nth(1)?.parse().ok()?;
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    Some((status, body))
}

/// Polls until `addr` answers `path` with 200, or the deadline passes.
pub fn wait_ok(addr: &str, path: &str, deadline: Instant) -> Result<String, String> {
    let mut last = None;
    while Instant::now() < deadline {
        match get(addr, path) {
            Some((200, body)) => return Ok(body),
            other => last = other,
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    Err(format!("{addr}{path} did not answer 200 (last: {last:?})"))
}

/// A hosts file: name -> address.
pub fn hosts(path: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let (addr, name) = (w.next()?, w.next()?);
            (!addr.starts_with('#')).then(|| (name.to_string(), addr.to_string()))
        })
        .collect()
}

/// `http://name:port` through a hosts map: `addr:port`.
pub fn resolve(url: &str, hosts: &BTreeMap<String, String>) -> String {
    let hostport = url.trim_start_matches("http://");
    let (host, port) = hostport.split_once(':').unwrap();
    format!("{}:{port}", hosts.get(host).map_or(host, String::as_str))
}

/// Processes started for one test, killed with their groups at the end.
#[derive(Default)]
pub struct Group(Vec<Child>);

impl Group {
    pub fn spawn(&mut self, mut c: Command) {
        use std::os::unix::process::CommandExt;
        c.process_group(0);
        self.0.push(c.spawn().expect("spawn"));
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = Command::new("kill").args(["-TERM", "--", &format!("-{}", c.id())]).status();
            let _ = c.wait();
        }
    }
}

fn engine_log(dir: &Path, engine: &str) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join(format!("{engine}.jsonl")))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Every file of a folder, for a failure's message.
fn folder_text(dir: &Path) -> String {
    let mut out = String::new();
    for f in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let _ = writeln!(out, "== {}\n{}", f.path().display(), std::fs::read_to_string(f.path()).unwrap_or_default());
    }
    out
}

/// One replica of every engine, two of them across two nodes, two sharing
/// a node, an A100 and an H100 replica on the node that has both.
pub const SLURM_CATALOG: &str = r#"
[[model]]
name = "llama-405b"
source = "meta-llama/Llama-3.1-405B-Instruct"
[[model.profile]]
name = "mp-2x4"
engine = "vllm"
gpu_class = "h100"
gpus_per_node = 4
nodes = 2

[[model]]
name = "llama-70b"
source = "meta-llama/Llama-3.1-70B-Instruct"
[[model.profile]]
name = "ray-2x2"
engine = "vllm"
gpu_class = "h100"
gpus_per_node = 2
nodes = 2
launcher = "ray"

[[model]]
name = "qwen-72b"
source = "Qwen/Qwen2.5-72B-Instruct"
[[model.profile]]
name = "sgl-2x2"
engine = "sglang"
gpu_class = "h100"
gpus_per_node = 2
nodes = 2

[[model]]
name = "deepseek"
source = "deepseek-ai/DeepSeek-V3"
[[model.profile]]
name = "sgl-2x4"
engine = "sglang"
gpu_class = "h100"
gpus_per_node = 4
nodes = 2

[[model]]
name = "llama-8b"
source = "meta-llama/Llama-3.1-8B-Instruct"
[[model.profile]]
name = "tp1"
engine = "vllm"
gpu_class = "h100"

[[model]]
name = "qwen-7b"
source = "Qwen/Qwen2.5-7B-Instruct"
[[model.profile]]
name = "trt"
engine = "trtllm"
gpu_class = "h100"

[[model]]
name = "mistral"
source = "mistralai/Mistral-7B-Instruct-v0.3"
[[model.profile]]
name = "tgi"
engine = "tgi"
gpu_class = "a100"
gpus_per_node = 2

[[model]]
name = "gguf"
source = "bartowski/Llama-3.2-1B-Instruct-GGUF"
[[model.profile]]
name = "a100"
engine = "llama.cpp"
gpu_class = "a100"

[[model]]
name = "tiny"
source = "llama3.2:1b"
[[model.profile]]
name = "cpu"
engine = "ollama"
"#;

/// The Slurm test cluster's folder (`.ci/slurm up DIR`), when there is one.
pub fn cluster() -> Option<(String, PathBuf)> {
    let conf = crate::slurm::controller()?;
    let dir = std::env::var("LLMGW_SLURM_DIR")
        .ok()
        .filter(|d| !d.is_empty())
        .map_or_else(|| Path::new(&conf).parent().unwrap().to_path_buf(), PathBuf::from);
    assert!(dir.join("hosts").exists(), "{} has no hosts file: start the cluster with .ci/slurm up", dir.display());
    Some((conf, dir))
}

/// The test cluster as llmgw imports it (`scontrol -d show node -o`,
/// fabrics from the `ib-` features), with `extra` import flags.
pub fn import_cluster(conf: &str, d: &Path, extra: &[&str]) -> PathBuf {
    let nodes = Command::new("scontrol").args(["-d", "show", "node", "-o"]).env("SLURM_CONF", conf).output().unwrap();
    let nodes_file = write(d, "nodes.txt", &String::from_utf8_lossy(&nodes.stdout));
    let fleet = d.join("fleet.toml");
    let mut args = vec![
        "inventory",
        "import",
        "slurm",
        nodes_file.to_str().unwrap(),
        "--fabric-feature",
        "ib-",
        "-o",
        fleet.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = run(&args);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    fleet
}

/// Jobs submitted by a test, cancelled at its end whatever happened.
pub struct Jobs<'a> {
    pub conf: &'a str,
    pub ids: Vec<String>,
}

impl Drop for Jobs<'_> {
    fn drop(&mut self) {
        if !self.ids.is_empty() {
            let _ = Command::new("scancel").args(&self.ids).env("SLURM_CONF", self.conf).status();
            // Wait until they are gone, so the next test finds the GPUs free.
            for _ in 0..60 {
                let out = Command::new("squeue").args(["-h", "-o", "%i"]).env("SLURM_CONF", self.conf).output();
                let left = out.is_ok_and(|o| {
                    String::from_utf8_lossy(&o.stdout).lines().any(|l| self.ids.iter().any(|i| i == l.trim()))
                });
                if !left {
                    break;
                }
                std::thread::sleep(Duration::from_millis(500));
            }
        }
    }
}

/// `sbatch` of a script with the stand-ins on the job's PATH and PYTHONPATH.
pub fn submit(conf: &str, dir: &Path, script: &Path, log: &Path, work: &Path) -> String {
    submit_with(conf, dir, script, log, work, &[])
}

/// As `submit`, with more sbatch options (`--hold`).
pub fn submit_with(conf: &str, dir: &Path, script: &Path, log: &Path, work: &Path, options: &[&str]) -> String {
    let (_, python) = standins();
    let out = Command::new("sbatch")
        .arg("--parsable")
        .args(options)
        .arg(script)
        .current_dir(work)
        .env("SLURM_CONF", conf)
        .env("PATH", path_with_standins())
        .env("PYTHONPATH", &python)
        .env("STANDIN_HOSTS", dir.join("hosts"))
        .env("STANDIN_STATE", dir.join("standin-state"))
        .env("STANDIN_LOG", log)
        .env("STANDIN_TIMEOUT", "120")
        // Every leader starts late: workers must not assume it is up.
        .env("STANDIN_LEADER_DELAY", "3")
        .env("LLMGW_START_TIMEOUT", "120")
        .output()
        .expect("sbatch runs");
    assert!(out.status.success(), "sbatch {}: {}", script.display(), transcript(&out));
    String::from_utf8_lossy(&out.stdout).trim().split(';').next().unwrap().to_string()
}

/// What each engine was started with, as the stand-ins recorded it.
fn engines_got_what_render_wrote(argv: &dyn Fn(&str) -> String) {
    // vLLM across nodes on its own backend; the Ray one only where asked.
    assert!(
        argv("llama-405b").contains("--tensor-parallel-size 4 --pipeline-parallel-size 2 --nnodes 2 --node-rank 0"),
        "{}",
        argv("llama-405b")
    );
    assert!(!argv("llama-405b").contains("ray"), "{}", argv("llama-405b"));
    assert!(
        argv("llama-70b")
            .contains("--tensor-parallel-size 2 --pipeline-parallel-size 2 --distributed-executor-backend ray"),
        "{}",
        argv("llama-70b")
    );
    // Two SGLang leaders: each its own block of ports, both serve.
    let dist = |m: &str| {
        let a = argv(m);
        a.split(" --dist-init-addr ").nth(1).unwrap_or_default().split(' ').next().unwrap_or_default().to_string()
    };
    let (a, b) = (dist("deepseek"), dist("qwen-72b"));
    // This plan puts both replicas on gpu03 (deepseek's leader, a rank of
    // qwen-72b's): their blocks are booked on every node of each, so apart.
    let (pa, pb): (u16, u16) =
        (a.rsplit(':').next().unwrap().parse().unwrap(), b.rsplit(':').next().unwrap().parse().unwrap());
    assert!(pa.abs_diff(pb) >= 8, "two SGLang replicas on one node overlap: {a} and {b}");
    assert!(argv("deepseek").contains("--tp 8 --nnodes 2 --node-rank 0 --dist-init-addr"), "{}", argv("deepseek"));
    assert!(
        argv("gguf").starts_with("llama-server -hf bartowski/Llama-3.2-1B-Instruct-GGUF --host 0.0.0.0"),
        "{}",
        argv("gguf")
    );
    assert!(
        argv("mistral").contains("--hostname 0.0.0.0") && argv("mistral").contains("--num-shard 2"),
        "{}",
        argv("mistral")
    );
}

#[test]
fn rendered_slurm_jobs_serve_every_engine_on_a_real_cluster() {
    let Some((conf, cdir)) = cluster() else { return };
    if !python3() {
        return;
    }
    let _cluster = crate::common::slurm_cluster_lock();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = import_cluster(&conf, d, &[]);
    let catalog = write(d, "catalog.toml", SLURM_CATALOG);
    let plan = d.join("plan.json");
    let out = run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "every replica places on the test cluster: {}", transcript(&out));
    let (jobs_dir, ends, logs) = (d.join("jobs"), d.join("endpoints.json"), d.join("logs"));
    std::fs::create_dir_all(&logs).unwrap();
    let out = run(&[
        "render",
        "slurm",
        plan.to_str().unwrap(),
        "--catalog",
        catalog.to_str().unwrap(),
        "-i",
        fleet.to_str().unwrap(),
        "-o",
        jobs_dir.to_str().unwrap(),
        "--endpoints",
        ends.to_str().unwrap(),
        "--log-dir",
        logs.to_str().unwrap(),
        "--partition",
        "gpu",
        "--time",
        "10:00",
    ]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let standin_log = d.join("standin-log");
    std::fs::create_dir_all(&standin_log).unwrap();
    let mut jobs = Jobs { conf: &conf, ids: Vec::new() };
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(&jobs_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sbatch"))
        .collect();
    scripts.sort();
    assert_eq!(scripts.len(), 9);
    for s in &scripts {
        jobs.ids.push(submit(&conf, &cdir, s, &standin_log, d));
    }
    // Every replica answers from outside its job, at the URL --endpoints gave.
    let hosts = hosts(&cdir.join("hosts"));
    let ends: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&ends).unwrap()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(150);
    let mut seen = BTreeMap::new();
    for e in ends["endpoints"].as_array().unwrap() {
        let model = e["model"].as_str().unwrap();
        let addr = resolve(e["url"].as_str().unwrap(), &hosts);
        let health = if model == "tiny" { "/" } else { "/health" };
        if let Err(why) = wait_ok(&addr, health, deadline) {
            panic!("{model}: {why}\n{}", folder_text(&logs));
        }
        let info: serde_json::Value = serde_json::from_str(&get(&addr, "/standin").unwrap().1).unwrap();
        seen.insert(model.to_string(), info);
    }
    // The argv the engines really got.
    let argv = |m: &str| {
        seen[m]["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    engines_got_what_render_wrote(&argv);
    // Two replicas on one node listen on ports of their own.
    let urls: Vec<&str> = ends["endpoints"].as_array().unwrap().iter().map(|e| e["url"].as_str().unwrap()).collect();
    let mut unique = urls.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), urls.len(), "{urls:?}");
    // The Ray workers started before their head, failed to join, retried.
    let ray = engine_log(&standin_log, "ray");
    let refused = ray.iter().any(|l| l["event"] == "refused" && l["role"] == "worker");
    assert!(refused, "a worker tried before its head was up: {ray:#?}");
    // The A100 replicas on gpu05 got A100s (indices 0-3 there), not H100s.
    for m in ["mistral", "gguf"] {
        let gpus = seen[m]["env"]["CUDA_VISIBLE_DEVICES"].as_str().unwrap_or_default().to_string();
        assert!(gpus.split(',').all(|g| g.parse::<u32>().is_ok_and(|g| g < 4)), "{m} got GPUs {gpus}");
    }
}

/// A simulated pod: its name, address, and the environment Kubernetes and
/// LWS give its container.
struct PodSim {
    name: String,
    labels: BTreeMap<String, String>,
    env: Vec<(String, String)>,
}

/// The container's environment as the kubelet would resolve it: values,
/// fieldRefs to the pod's labels; an optional Secret that is absent.
fn container_env(c: &serde_json::Value, pod: &PodSim) -> Vec<(String, String)> {
    let mut out = pod.env.clone();
    for e in c["env"].as_array().into_iter().flatten() {
        let name = e["name"].as_str().unwrap().to_string();
        if let Some(v) = e["value"].as_str() {
            out.push((name, v.to_string()));
        } else if let Some(path) = e["valueFrom"]["fieldRef"]["fieldPath"].as_str() {
            let key = path.trim_start_matches("metadata.labels['").trim_end_matches("']");
            out.push((name, pod.labels.get(key).cloned().unwrap_or_default()));
        }
    }
    out
}

/// Runs a container's command (or the image's entrypoint with its args).
fn start(group: &mut Group, c: &serde_json::Value, pod: &PodSim, hosts: &Path, state: &Path, log: &Path) {
    let words = |v: &serde_json::Value| -> Vec<String> {
        v.as_array().into_iter().flatten().map(|w| w.as_str().unwrap().to_string()).collect()
    };
    let mut argv = words(&c["command"]);
    if argv.is_empty() {
        // The llama.cpp server image's entrypoint.
        argv.push("llama-server".into());
    }
    argv.extend(words(&c["args"]));
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .env("PATH", path_with_standins())
        .env("PYTHONPATH", standins().1)
        .env("STANDIN_HOSTS", hosts)
        .env("STANDIN_STATE", state)
        .env("STANDIN_LOG", log)
        .env("STANDIN_NODE", &pod.name)
        .env("STANDIN_TIMEOUT", "90")
        .env("LLMGW_START_TIMEOUT", "90")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    for (k, v) in container_env(c, pod) {
        cmd.env(k, v);
    }
    group.spawn(cmd);
}

#[test]
fn leaderworkerset_commands_serve_under_the_environment_lws_gives() {
    if !python3() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (state, log) = (d.join("state"), d.join("log"));
    std::fs::create_dir_all(&log).unwrap();
    // A pod runs its image's vLLM: an older one (with Ray) starts over Ray.
    let ray = "[[model]]\nname = \"llama-405b\"\n[[model.profile]]\nname = \"ray\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\nnodes = 2\nimage = \"vllm/vllm-openai:v0.8.5\"\n";
    let sgl = "[[model]]\nname = \"deepseek\"\n[[model.profile]]\nname = \"sgl\"\nengine = \"sglang\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\nnodes = 2\n";
    let mut group = Group::default();
    let hosts_file = d.join("hosts");
    // Every pod's address known up front, as cluster DNS knows them; the
    // pods themselves start workers first, the leader last.
    let mut hosts_text = String::new();
    for i in 0..2 {
        for rank in 0..2 {
            let _ = writeln!(hosts_text, "127.0.9{i}.{} lws{i}-{rank}", rank + 1);
        }
    }
    std::fs::write(&hosts_file, &hosts_text).unwrap();
    let mut leaders = Vec::new();
    for (i, catalog) in [ray, sgl].iter().enumerate() {
        let sub = d.join(format!("r{i}"));
        std::fs::create_dir_all(&sub).unwrap();
        let (_, _, _, out) = crate::render::place_and_render(&sub, catalog, &["--rdma-resource", "rdma/ib"]);
        assert_eq!(code(&out), 0, "{}", transcript(&out));
        let lws = crate::render::documents(&stdout(&out)).into_iter().find(|d| d["kind"] == "LeaderWorkerSet").unwrap();
        let t = &lws["spec"]["leaderWorkerTemplate"];
        let size = t["size"].as_u64().unwrap();
        assert_eq!(size, 2);
        let leader_name = format!("lws{i}-0");
        leaders.push((leader_name.clone(), t["leaderTemplate"]["spec"]["containers"][0].clone()));
        for rank in (0..size).rev() {
            let template = if rank == 0 { &t["leaderTemplate"] } else { &t["workerTemplate"] };
            let pod = PodSim {
                name: format!("lws{i}-{rank}"),
                labels: [("leaderworkerset.sigs.k8s.io/worker-index".to_string(), rank.to_string())].into(),
                env: vec![
                    ("LWS_LEADER_ADDRESS".into(), leader_name.clone()),
                    ("LWS_GROUP_SIZE".into(), size.to_string()),
                    ("NVIDIA_VISIBLE_DEVICES".into(), "0,1,2,3,4,5,6,7".into()),
                ],
            };
            start(&mut group, &template["spec"]["containers"][0], &pod, &hosts_file, &state, &log);
            if rank > 0 {
                std::thread::sleep(Duration::from_secs(2));
            }
        }
    }
    let hosts = hosts(&d.join("hosts"));
    let deadline = Instant::now() + Duration::from_secs(100);
    for (leader, c) in &leaders {
        let port = c["ports"][0]["containerPort"].as_u64().unwrap();
        let addr = format!("{}:{port}", hosts[leader]);
        let path = c["readinessProbe"]["httpGet"]["path"].as_str().unwrap();
        if let Err(why) = wait_ok(&addr, path, deadline) {
            let logs: Vec<String> =
                ["vllm", "ray", "sglang"].iter().flat_map(|e| engine_log(&log, e)).map(|l| l.to_string()).collect();
            panic!("{leader}: {why}\n{}", logs.join("\n"));
        }
    }
    let vllm = engine_log(&log, "vllm");
    assert!(vllm.iter().any(|l| l["event"] == "serving" && l["env"]["RAY_ADDRESS"] == "lws0-0:6379"), "{vllm:#?}");
    let ray = engine_log(&log, "ray");
    let first = ray.iter().position(|l| l["role"] == "worker" && l["event"] == "refused");
    let joined = ray.iter().position(|l| l["role"] == "worker" && l["event"] == "joined");
    assert!(first.is_some() && joined > first, "the worker, first up, retried until its head answered: {ray:#?}");
    let sglang = engine_log(&log, "sglang");
    let ranks: Vec<String> = sglang.iter().filter_map(|l| l["node_rank"].as_u64()).map(|r| r.to_string()).collect();
    assert!(ranks.contains(&"0".into()) && ranks.contains(&"1".into()), "{sglang:#?}");
}
