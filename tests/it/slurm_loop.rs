//! The loop on a real Slurm controller: place, render, sbatch (one job
//! held, so it pends), let the jobs run under the stand-in engines, read
//! the controller's `squeue --json` and `scontrol -d show job -o`, import
//! with `--jobs`, place again: nothing new is placed, every replica exists
//! (the held one pending), and the next turn's render and `--stop` keep
//! everything that runs.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::*;
use crate::serve::{Jobs, cluster, import_cluster, python3, submit_with};

const CATALOG: &str = r#"
[[model]]
name = "llama-405b"
source = "meta-llama/Llama-3.1-405B-Instruct"
[[model.profile]]
name = "ray-2x4"
engine = "vllm"
gpu_class = "h100"
gpus_per_node = 4
nodes = 2

[[model]]
name = "llama-8b"
source = "meta-llama/Llama-3.1-8B-Instruct"
replicas = 2
[[model.profile]]
name = "tp1"
engine = "vllm"
gpu_class = "h100"

[[model]]
name = "qwen-7b"
source = "Qwen/Qwen2.5-7B-Instruct"
[[model.profile]]
name = "tp2"
engine = "sglang"
gpu_class = "h100"
gpus_per_node = 2
"#;

fn sh(conf: &str, cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd).args(args).env("SLURM_CONF", conf).output().unwrap();
    assert!(out.status.success(), "{cmd} {args:?}: {}", transcript(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn after_sbatch_and_a_reimport_with_jobs_place_places_nothing() {
    let Some((conf, cdir)) = cluster() else { return };
    if !python3() {
        return;
    }
    let _cluster = slurm_cluster_lock();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = import_cluster(&conf, d, &[]);
    let catalog = write(d, "catalog.toml", CATALOG);
    let plan = d.join("plan.json");
    let out = run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let jobs_dir = d.join("jobs");
    let render = |plan: &Path, fleet: &Path| {
        run(&[
            "render",
            "slurm",
            plan.to_str().unwrap(),
            "--catalog",
            catalog.to_str().unwrap(),
            "-i",
            fleet.to_str().unwrap(),
            "-o",
            jobs_dir.to_str().unwrap(),
            "--log-dir",
            d.to_str().unwrap(),
        ])
    };
    let out = render(&plan, &fleet);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let mut scripts: Vec<_> = std::fs::read_dir(&jobs_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sbatch"))
        .collect();
    scripts.sort();
    assert_eq!(scripts.len(), 4);
    let log = d.join("standin-log");
    std::fs::create_dir_all(&log).unwrap();
    let mut jobs = Jobs { conf: &conf, ids: Vec::new() };
    // llama-8b r1 is held: submitted, pending.
    let held = scripts.iter().position(|s| s.ends_with("llmgw-llama-8b-r1.sbatch")).unwrap();
    for (i, s) in scripts.iter().enumerate() {
        let options: &[&str] = if i == held { &["--hold"] } else { &[] };
        jobs.ids.push(submit_with(&conf, &cdir, s, &log, d, options));
    }
    // Wait until every other job runs.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let states = sh(&conf, "squeue", &["-h", "-o", "%i %T"]);
        let running = states.lines().filter(|l| l.ends_with(" RUNNING")).count();
        if running == 3 {
            break;
        }
        assert!(Instant::now() < deadline, "jobs did not start:\n{states}");
        std::thread::sleep(Duration::from_millis(300));
    }
    // What the controller says now, in both forms.
    let json = write(d, "jobs.json", &sh(&conf, "squeue", &["--json"]));
    let text = write(d, "jobs.txt", &sh(&conf, "scontrol", &["-d", "show", "job", "-o"]));
    let mut inventories = Vec::new();
    for (name, jobs_file) in [("json", &json), ("text", &text)] {
        let sub = d.join(name);
        std::fs::create_dir_all(&sub).unwrap();
        let again = import_cluster(&conf, &sub, &["--jobs", jobs_file.to_str().unwrap()]);
        let v = json_of(&run(&["nodes", "-i", again.to_str().unwrap(), "--format", "json"]));
        inventories.push(v);
        let out = run(&["place", catalog.to_str().unwrap(), "-i", again.to_str().unwrap(), "--format", "json"]);
        assert_eq!(code(&out), 0, "{}", transcript(&out));
        let p = json_of(&out);
        assert_eq!(
            p["summary"],
            serde_json::json!({"wanted": 4, "existing": 4, "placed": 0, "unplaced": 0, "bound": 0, "stranded": {}}),
            "{name}: {p:#}"
        );
        let existing = p["existing"].as_array().unwrap();
        let pending: Vec<_> = existing.iter().filter(|e| e["pending"] == true).collect();
        assert_eq!(pending.len(), 1, "{p:#}");
        assert_eq!((pending[0]["model"].as_str(), pending[0]["replica"].as_u64()), (Some("llama-8b"), Some(1)));
        // The 2-node replica runs on two nodes, with the GPUs Slurm gave it.
        let big = existing.iter().find(|e| e["model"] == "llama-405b").unwrap();
        assert_eq!(big["profile"], "ray-2x4");
        assert_eq!(big["nodes"].as_array().unwrap().len(), 2);
        assert!(big["nodes"].as_array().unwrap().iter().all(|n| n["gpus"].as_array().unwrap().len() == 4), "{big}");
        let human = run(&["place", catalog.to_str().unwrap(), "-i", again.to_str().unwrap()]);
        assert!(stdout(&human).contains("llama-8b replica 1 is pending"), "{}", transcript(&human));
        // The next turn: the same folder keeps every replica, none stops.
        let next = sub.join("next.json");
        std::fs::write(&next, &out.stdout).unwrap();
        let out = render(&next, &again);
        assert_eq!(code(&out), 0, "{}", transcript(&out));
        assert!(!String::from_utf8_lossy(&out.stderr).contains("removed"), "{}", transcript(&out));
        assert_eq!(std::fs::read_dir(&jobs_dir).unwrap().count(), 5, "four scripts and submit.sh");
        let stop = run(&["render", "slurm", "--stop", plan.to_str().unwrap(), next.to_str().unwrap()]);
        assert_eq!((code(&stop), stdout(&stop)), (0, String::new()), "{}", transcript(&stop));
    }
    assert_eq!(inventories[0], inventories[1], "squeue --json and scontrol -d show job -o agree");
}

fn json_of(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", transcript(out)))
}
