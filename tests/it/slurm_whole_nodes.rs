//! Whole nodes on a real Slurm controller: a job that holds CPUs and
//! memory but no GPU, a foreign GPU job and a held (pending) llmgw job;
//! imported with and without `-d` and `--jobs`, `place` never gives away
//! what any of them holds, and the scripts render writes are accepted and
//! started by `sbatch` on nodes that have less left than the plan would
//! otherwise ask for. The nodes claim 16 CPUs and 64000 MB each; gpu05
//! keeps 2 cores and 4000 MB for the system (`.ci/slurm`).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::*;
use crate::serve::{Jobs, cluster, python3, submit_with};

const CATALOG: &str = r#"
[[model]]
name = "m"
source = "Qwen/Qwen2.5-7B-Instruct"
[[model.profile]]
name = "p"
engine = "vllm"
gpu_class = "h100"
gpus_per_node = 4

[[model]]
name = "whole"
source = "meta-llama/Llama-3.1-70B-Instruct"
[[model.profile]]
name = "tp8"
engine = "vllm"
gpu_class = "h100"
gpus_per_node = 8

[[model]]
name = "small"
source = "meta-llama/Llama-3.1-8B-Instruct"
replicas = 2
[[model.profile]]
name = "tp1"
engine = "vllm"
gpu_class = "h100"
cpus = 6
memory_gb = 20
"#;

fn sh(conf: &str, cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd).args(args).env("SLURM_CONF", conf).output().unwrap();
    assert!(out.status.success(), "{cmd} {args:?}: {}", transcript(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn sbatch(conf: &str, args: &[&str]) -> String {
    let mut all = vec!["--parsable", "--output=/dev/null", "--error=/dev/null"];
    all.extend_from_slice(args);
    sh(conf, "sbatch", &all).trim().split(';').next().unwrap().to_string()
}

/// Imports a node listing (and a job listing) written to `d`: the
/// inventory as JSON, and what the import printed on stderr.
fn import(d: &Path, name: &str, nodes: &str, jobs: Option<&Path>) -> (Value, String) {
    let file = write(d, &format!("{name}.txt"), nodes);
    let out_file = d.join(format!("{name}.json"));
    let mut args = vec!["inventory", "import", "slurm", file.to_str().unwrap(), "--format", "json"];
    let jobs = jobs.map(|j| j.to_str().unwrap().to_string());
    if let Some(j) = &jobs {
        args.extend(["--jobs", j.as_str()]);
    }
    args.extend(["-o", out_file.to_str().unwrap()]);
    let out = run(&args);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    (v, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn node<'v>(inv: &'v Value, id: &str) -> &'v Value {
    inv["node"].as_array().unwrap().iter().find(|n| n["id"] == id).unwrap_or_else(|| panic!("no node {id}"))
}

/// What a node's allocations of `model` hold: GPUs, CPUs, MiB.
fn held(n: &Value, model: &str) -> (Vec<u64>, f64, u64) {
    let mut out = (Vec::new(), 0.0, 0);
    for a in n["allocation"].as_array().into_iter().flatten().filter(|a| a["model"] == model) {
        out.0.extend(a["gpus"].as_array().unwrap().iter().map(|g| g.as_u64().unwrap()));
        out.1 += a["cpus"].as_f64().unwrap_or(0.0);
        out.2 += a["memory_mb"].as_u64().unwrap_or(0);
    }
    out
}

/// Every node: what its allocations hold plus what the plan asks there
/// fits its CPUs and memory, and no GPU is given twice.
fn never_given_away(inv: &Value, plan: &Value, what: &str) {
    let mut asked: BTreeMap<&str, (f64, u64, Vec<u64>)> = BTreeMap::new();
    for p in plan["placements"].as_array().unwrap() {
        for n in p["nodes"].as_array().unwrap() {
            let e = asked.entry(n["node"].as_str().unwrap()).or_default();
            e.0 += n["cpus"].as_f64().expect("the plan asks for CPUs where nodes report them");
            e.1 += n["memory_mb"].as_u64().expect("the plan asks for memory where nodes report it");
            e.2.extend(n["gpus"].as_array().unwrap().iter().map(|g| g.as_u64().unwrap()));
        }
    }
    for (id, (cpus, memory, gpus)) in asked {
        let n = node(inv, id);
        let allocs = n["allocation"].as_array().cloned().unwrap_or_default();
        let h_cpus: f64 = allocs.iter().map(|a| a["cpus"].as_f64().unwrap_or(0.0)).sum();
        let h_mem: u64 = allocs.iter().map(|a| a["memory_mb"].as_u64().unwrap_or(0)).sum();
        let h_gpus: Vec<u64> =
            allocs.iter().flat_map(|a| a["gpus"].as_array().unwrap().iter().map(|g| g.as_u64().unwrap())).collect();
        let total_mem = n["memory_allocatable_mb"].as_u64().or(n["memory_total_mb"].as_u64()).unwrap();
        assert!(h_cpus + cpus <= n["cpus"].as_f64().unwrap(), "{what}: {id} CPUs {h_cpus} held + {cpus} planned");
        assert!(h_mem + memory <= total_mem, "{what}: {id} memory {h_mem} held + {memory} planned > {total_mem}");
        assert!(gpus.iter().all(|g| !h_gpus.contains(g)), "{what}: {id} GPUs {gpus:?} planned, {h_gpus:?} held");
    }
}

/// `place` on an inventory: the plan file, the plan, the fleet file and
/// what the human form says when something was left unplaced.
fn place(d: &Path, inv: &Value, name: &str) -> (std::path::PathBuf, Value, std::path::PathBuf, Option<String>) {
    let fleet = write(d, &format!("{name}-fleet.json"), &inv.to_string());
    let catalog = write(d, "catalog.toml", CATALOG);
    let plan = d.join(format!("{name}-plan.json"));
    let out = run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
    assert!([0, 1].contains(&code(&out)), "{}", transcript(&out));
    let unplaced =
        (code(&out) == 1).then(|| stdout(&run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap()])));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    (plan, v, fleet, unplaced)
}

/// A job of CPUs and memory only on gpu02, a foreign GPU job on gpu03, and
/// llmgw's held (pending) job for gpu01; once the first two run, the held
/// job's id.
fn hold_the_nodes(conf: &str, jobs: &mut Jobs<'_>) -> String {
    jobs.ids.push(sbatch(conf, &["-w", "gpu02", "--cpus-per-task=12", "--mem=40000", "--wrap", "sleep 600"]));
    jobs.ids.push(sbatch(
        conf,
        &["-w", "gpu03", "--gres=gpu:h100:6", "--cpus-per-task=2", "--mem=1000", "--wrap", "sleep 600"],
    ));
    let pending = sbatch(
        conf,
        &[
            "--hold",
            "-w",
            "gpu01",
            "--job-name=llmgw-m-r0",
            "--comment=llmgw.io/model=m,llmgw.io/replica=0,llmgw.io/profile=p",
            "--gres=gpu:h100:4",
            "--cpus-per-task=8",
            "--mem=30000",
            "--wrap",
            "sleep 600",
        ],
    );
    jobs.ids.push(pending.clone());
    let deadline = Instant::now() + Duration::from_secs(60);
    while sh(conf, "squeue", &["-h", "-t", "RUNNING", "-o", "%i"]).lines().count() < 2 {
        assert!(Instant::now() < deadline, "{}", sh(conf, "squeue", &[]));
        std::thread::sleep(Duration::from_millis(300));
    }
    pending
}

/// Renders the plan into `d/scripts`, submits every script but the held
/// replica's, and waits until each of them runs.
fn render_and_start(conf: &str, cdir: &Path, d: &Path, plan_file: &Path, fleet: &Path, jobs: &mut Jobs<'_>) {
    let catalog = d.join("catalog.toml");
    let out_dir = d.join("scripts");
    let out = run(&[
        "render",
        "slurm",
        plan_file.to_str().unwrap(),
        "--catalog",
        catalog.to_str().unwrap(),
        "-i",
        fleet.to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
        "--log-dir",
        d.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let log = d.join("standin-log");
    std::fs::create_dir_all(&log).unwrap();
    let mut started = Vec::new();
    let mut scripts: Vec<_> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sbatch"))
        .collect();
    scripts.sort();
    for s in scripts.iter().filter(|s| !s.ends_with("llmgw-m-r0.sbatch")) {
        let id = submit_with(conf, cdir, s, &log, d, &[]);
        jobs.ids.push(id.clone());
        started.push(id);
    }
    assert_eq!(started.len(), 3);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let running = sh(conf, "squeue", &["-h", "-t", "RUNNING", "-o", "%i"]);
        if started.iter().all(|id| running.lines().any(|l| l.trim() == id)) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "rendered jobs did not all start:\n{}",
            sh(conf, "squeue", &["-o", "%i %j %T %R %N"])
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn what_slurm_holds_is_never_given_away_and_the_scripts_start() {
    let Some((conf, cdir)) = cluster() else { return };
    if !python3() {
        return;
    }
    let _cluster = slurm_cluster_lock();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut jobs = Jobs { conf: &conf, ids: Vec::new() };
    let pending = hold_the_nodes(&conf, &mut jobs);
    let detailed = sh(&conf, "scontrol", &["-d", "show", "node", "-o"]);
    let plain = sh(&conf, "scontrol", &["show", "node"]);
    let squeue = write(d, "jobs.json", &sh(&conf, "squeue", &["--json"]));
    let scontrol_jobs = write(d, "jobs.txt", &sh(&conf, "scontrol", &["-d", "show", "job", "-o"]));

    // Without --jobs: what Slurm itself holds.
    let (inv, _) = import(d, "detailed", &detailed, None);
    assert_eq!(held(node(&inv, "gpu02"), "slurm:busy"), (vec![], 12.0, 40000));
    assert_eq!(held(node(&inv, "gpu03"), "slurm:busy"), (vec![0, 1, 2, 3, 4, 5], 2.0, 1000));
    let g5 = node(&inv, "gpu05");
    assert_eq!((g5["cpus"].as_f64(), g5["memory_allocatable_mb"].as_u64()), (Some(14.0), Some(60000)));
    let (_, plan, _, unplaced) = place(d, &inv, "detailed");
    never_given_away(&inv, &plan, "-d, no --jobs");
    // gpu02's 8 free GPUs are no room for a replica that asks 6 CPUs.
    if let Some(why) = unplaced {
        assert!(why.contains("has 4 free CPUs, needs 6 (gpu02)"), "{why}");
    }
    // Without -d, only the CPUs and memory are said; the job listing names the GPUs.
    let (bare, warned) = import(d, "plain", &plain, None);
    assert!(warned.contains("llmgw::slurm::gpus-unknown"), "{warned}");
    assert_eq!(held(node(&bare, "gpu02"), "slurm:busy"), (vec![], 12.0, 40000));
    let (with_jobs, _) = import(d, "plain-jobs", &plain, Some(&scontrol_jobs));
    assert_eq!(held(node(&with_jobs, "gpu03"), "slurm:busy"), (vec![0, 1, 2, 3, 4, 5], 2.0, 1000));

    // With --jobs, both listings: the held llmgw job holds what it asked for.
    let mut plans = Vec::new();
    for (name, jobs_file) in [("squeue", &squeue), ("scontrol", &scontrol_jobs)] {
        let (inv, _) = import(d, name, &detailed, Some(jobs_file));
        let m: Vec<&Value> =
            node(&inv, "gpu01")["allocation"].as_array().unwrap().iter().filter(|a| a["model"] == "m").collect();
        assert_eq!(m.len(), 1, "{name}: {m:?}");
        assert_eq!(
            (&m[0]["pending"], &m[0]["job"], &m[0]["gpus"], &m[0]["cpus"], &m[0]["memory_mb"]),
            (
                &Value::Bool(true),
                &serde_json::json!(pending.parse::<u64>().unwrap()),
                &serde_json::json!([0, 1, 2, 3]),
                &serde_json::json!(8),
                &serde_json::json!(30000)
            ),
            "{name}"
        );
        let (plan_file, plan, fleet, unplaced) = place(d, &inv, name);
        assert_eq!(unplaced, None);
        never_given_away(&inv, &plan, name);
        assert_eq!(plan["summary"]["existing"], 1, "{plan:#}");
        assert_eq!(plan["summary"]["placed"], 3, "{plan:#}");
        // The TP8 replica fits only on gpu02, on what is left there.
        let whole = plan["placements"].as_array().unwrap().iter().find(|p| p["model"] == "whole").unwrap();
        assert_eq!(whole["nodes"][0]["node"], "gpu02");
        assert_eq!(
            (whole["nodes"][0]["cpus"].as_f64(), whole["nodes"][0]["memory_mb"].as_u64()),
            (Some(4.0), Some(24000))
        );
        plans.push((plan_file, fleet));
    }

    // Render the squeue turn and submit what is new: each script is accepted and starts.
    let (plan_file, fleet) = &plans[0];
    render_and_start(&conf, &cdir, d, plan_file, fleet, &mut jobs);

    // The next catalog drops `m`: --stop with the inventory cancels its job by id.
    let without_m = &CATALOG[CATALOG.find("[[model]]\nname = \"whole\"").unwrap()..];
    let next = write(d, "next.toml", without_m);
    let next_plan = d.join("next.json");
    let out = run(&["place", next.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "-o", next_plan.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let stop = run(&[
        "render",
        "slurm",
        "--stop",
        plan_file.to_str().unwrap(),
        next_plan.to_str().unwrap(),
        "-i",
        fleet.to_str().unwrap(),
    ]);
    assert_eq!((code(&stop), stdout(&stop)), (0, format!("scancel {pending}\n")), "{}", transcript(&stop));
}
