//! `inventory import slurm --jobs` against the real test controller
//! (`.ci/slurm up`, LLMGW_SLURM_CONF): jobs submitted for real, with the
//! comment render writes, read back from the controller's live `squeue
//! --json` and `scontrol -d show job -o`.

use std::process::Command;

use serde_json::{Value, json};

use crate::common::*;
use crate::slurm::controller;

fn sh(conf: &str, cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd).args(args).env("SLURM_CONF", conf).output().unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(out.status.success(), "{cmd} {args:?}: {}", transcript(&out));
    stdout(&out).trim().to_string()
}

fn allocations(v: &Value, node: &str) -> Vec<Value> {
    let n = v["node"].as_array().unwrap().iter().find(|n| n["id"] == node).unwrap();
    n["allocation"].as_array().cloned().unwrap_or_default()
}

#[test]
fn llmgws_jobs_on_a_real_controller_come_back_as_its_replicas() {
    let Some(conf) = controller() else { return };
    let _cluster = slurm_cluster_lock();
    let dir = tempfile::tempdir().unwrap();
    // What render writes for the model `a b,c` (escaped) on two nodes, one
    // more replica pending on the drained gpu04, and a job of someone else.
    let comment = |r: u32| format!("--comment=llmgw.io/model=a%20b%2Cc,llmgw.io/replica={r},llmgw.io/profile=tp2");
    let common = ["--parsable", "--output=/dev/null", "--mem=100", "--ntasks-per-node=1"];
    let running = sh(
        &conf,
        "sbatch",
        &[
            &common[..],
            &[
                &comment(0),
                "--job-name=llmgw-a-b-c-r0",
                "--nodes=2",
                "-w",
                "gpu02,gpu03",
                "--gres=gpu:h100:2",
                "--wrap",
                "sleep 120",
            ],
        ]
        .concat(),
    );
    let pending = sh(
        &conf,
        "sbatch",
        &[&common[..], &[&comment(1), "-w", "gpu04", "--gres=gpu:h100:1", "--wrap", "sleep 120"]].concat(),
    );
    let foreign =
        sh(&conf, "sbatch", &[&common[..], &["-w", "gpu01", "--gres=gpu:h100:1", "--wrap", "sleep 120"]].concat());
    let mut jobs_text = String::new();
    for _ in 0..100 {
        jobs_text = sh(&conf, "scontrol", &["-d", "show", "job", "-o"]);
        let running_now = jobs_text.lines().filter(|l| l.contains("JobState=RUNNING")).count();
        if running_now >= 2 && jobs_text.contains("GRES=gpu:h100:2(") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let squeue = sh(&conf, "squeue", &["--json"]);
    let nodes = sh(&conf, "scontrol", &["-d", "show", "node", "-o"]);
    for j in [&running, &pending, &foreign] {
        sh(&conf, "scancel", &[j]);
    }
    let nodes = write(dir.path(), "nodes.txt", &nodes);
    let import = |jobs: &str, name: &str| {
        let f = write(dir.path(), name, jobs);
        let out = run(&[
            "inventory",
            "import",
            "slurm",
            nodes.to_str().unwrap(),
            "--jobs",
            f.to_str().unwrap(),
            "--format",
            "json",
        ]);
        assert_eq!(code(&out), 0, "{}", transcript(&out));
        json(&out)
    };
    let a = import(&squeue, "squeue.json");
    let b = import(&jobs_text, "jobs.txt");
    assert_eq!(a, b, "squeue --json and scontrol -d show job -o give one inventory\n{jobs_text}");
    for node in ["gpu02", "gpu03"] {
        let mine: Vec<Value> = allocations(&a, node).into_iter().filter(|x| x["model"] == "a b,c").collect();
        assert_eq!(mine.len(), 1, "{node}: {mine:?}\n{jobs_text}");
        assert_eq!((mine[0]["replica"].clone(), mine[0]["profile"].clone()), (json!(0), json!("tp2")));
        assert_eq!(mine[0]["gpus"].as_array().unwrap().len(), 2, "{node}: {mine:?}");
        assert!(allocations(&a, node).iter().all(|x| x["model"] != "slurm:busy"), "{node}: its GPUs are the replica's");
    }
    let waiting = allocations(&a, "gpu04");
    // The pending job holds what its script asks there (one GPU, one CPU, 100 MB).
    let id: u64 = pending.parse().unwrap();
    assert_eq!(
        waiting,
        [
            json!({"model": "a b,c", "replica": 1, "gpus": [0], "cpus": 1, "memory_mb": 100, "profile": "tp2", "pending": true, "job": id})
        ]
    );
    assert!(allocations(&a, "gpu01").iter().any(|x| x["model"] == "slurm:busy"), "{:?}", allocations(&a, "gpu01"));
}
