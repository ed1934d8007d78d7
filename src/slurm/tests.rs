//! The Slurm import as a whole: nodes and jobs read together.

use super::*;

/// Settings that take alice's jobs as llmgw's.
fn alice() -> Settings {
    Settings { jobs_user: "alice".into(), ..Settings::default() }
}

fn one(text: &str, jobs: Option<&str>) -> (Node, Vec<Diag>) {
    let src = crate::diag::source("n.txt", text.to_string());
    let jobs = jobs.map(|j| crate::diag::source("j.txt", j.to_string()));
    let (inv, w) = import(&src, None, jobs.as_ref(), &alice()).unwrap();
    (inv.nodes.into_iter().next().unwrap(), w)
}

fn held(n: &Node, model: &str) -> (Vec<u32>, f64, u64) {
    let a = n.allocations.iter().filter(|a| a.model == model);
    a.fold((Vec::new(), 0.0, 0), |(mut g, c, m), a| {
        g.extend(&a.gpus);
        (g, c + a.cpus.unwrap_or(0.0), m + a.memory_mb.unwrap_or(0))
    })
}

#[test]
fn alloc_tres_without_gres_used_holds_gpus_of_its_type_cpus_and_memory() {
    let (n, w) = one(
        "NodeName=n1 State=MIXED Gres=gpu:a100:2,gpu:h100:2 CPUTot=64 CPUEfctv=60 CPUAlloc=4 RealMemory=100000 MemSpecLimit=4000 AllocMem=8192 AllocTRES=cpu=4,mem=8G,gres/gpu=1,gres/gpu:h100=1\n",
        None,
    );
    assert_eq!((n.cpus, n.memory_allocatable_mb), (Some(60.0), Some(96000)));
    assert_eq!(held(&n, "slurm:busy"), (vec![2], 4.0, 8192));
    assert!(w.iter().any(|d| d.code == Code::SlurmGpusAssumed), "{w:?}");
    // Untyped: the lowest free whole GPUs.
    let (n, _) = one("NodeName=n1 State=MIXED Gres=gpu:h100:4 AllocTRES=cpu=2,gres/gpu=3\n", None);
    assert_eq!(held(&n, "slurm:busy"), (vec![0, 1, 2], 2.0, 0));
    // A job of --jobs accounts for what it names.
    let jobs = "JobId=7 UserId=alice(1000) JobState=RUNNING NodeList=n1\n  Nodes=n1 CPU_IDs=0-1 Mem=1024 GRES=gpu:h100:1(IDX:3)\n  Comment=llmgw.io/model=m,llmgw.io/replica=0\n";
    let (n, w) = one(
        "NodeName=n1 State=MIXED Gres=gpu:h100:4 CPUTot=8 CPUAlloc=3 AllocMem=1536 AllocTRES=gres/gpu=2\n",
        Some(jobs),
    );
    assert_eq!(held(&n, "m"), (vec![3], 2.0, 1024));
    assert_eq!(held(&n, "slurm:busy"), (vec![0], 1.0, 512));
    assert_eq!(n.allocations.iter().find(|a| a.model == "m").and_then(|a| a.job), Some(7));
    assert!(w.iter().any(|d| d.code == Code::SlurmGpusAssumed));
}

#[test]
fn a_pending_llmgw_job_holds_what_it_asks_on_its_node() {
    let jobs = "JobId=9 UserId=alice(1000) JobState=PENDING ReqNodeList=n1 NumNodes=1 CPUs/Task=4 MinMemoryNode=16G Command=/x Comment=llmgw.io/model=m,llmgw.io/replica=1,llmgw.io/profile=p TresPerNode=gres:gpu:h100:2\n";
    let (n, _) = one(
        "NodeName=n1 State=MIXED Gres=gpu:a100:2,gpu:h100:4 GresUsed=gpu:a100:0(IDX:N/A),gpu:h100:1(IDX:2) CPUTot=64 CPUAlloc=1\n",
        Some(jobs),
    );
    let p = n.allocations.iter().find(|a| a.model == "m").unwrap();
    assert_eq!(
        (p.pending, p.job, p.gpus.clone(), p.cpus, p.memory_mb),
        (true, Some(9), vec![3, 4], Some(4.0), Some(16384))
    );
    assert_eq!(held(&n, "slurm:busy"), (vec![2], 1.0, 0));
}

#[test]
fn a_node_with_jobs_that_says_nothing_of_its_gpus_is_warned_about() {
    let (_, w) = one("NodeName=n1 State=MIXED Gres=gpu:h100:4 CPUTot=8 CPUAlloc=3 AllocTRES=cpu=3\n", None);
    assert!(w.iter().any(|d| d.code == Code::SlurmGpusUnknown), "{w:?}");
    let (_, w) = one("NodeName=n1 State=IDLE Gres=gpu:h100:4 CPUTot=8 CPUAlloc=0 AllocTRES=\n", None);
    assert!(w.is_empty(), "{w:?}");
}

#[test]
fn the_most_restrictive_state_wins() {
    let r = |s: &[&str]| Record {
        name: "n".into(),
        states: s.iter().map(ToString::to_string).collect(),
        gres: String::new(),
        gres_used: None,
        features: vec![],
        partitions: vec![],
        real_memory: 0,
        cpus: None,
        alloc_cpus: None,
        cpus_effective: None,
        mem_spec: None,
        alloc_memory: None,
        alloc_tres: None,
        arch: None,
        at: records::At::Json(vec![]),
    };
    assert_eq!(state(&r(&["IDLE"])), Ok(State::Ready));
    assert_eq!(state(&r(&["MIXED", "DRAIN"])), Ok(State::Draining));
    assert_eq!(state(&r(&["IDLE", "MAINT"])), Ok(State::Cordoned));
    assert_eq!(state(&r(&["DOWN", "DRAIN", "RESERVED"])), Ok(State::Down));
    assert_eq!(state(&r(&["IDLE", "BOGUS"])), Err("BOGUS".to_string()));
}

#[test]
fn two_jobs_claiming_one_replica_are_not_merged() {
    let nodes = "NodeName=n1 State=MIXED Gres=gpu:h100:4 CPUTot=8 CPUAlloc=2\nNodeName=n2 State=MIXED Gres=gpu:h100:4 CPUTot=8 CPUAlloc=2\n";
    let jobs = "JobId=7 UserId=alice(1000) JobState=RUNNING Comment=llmgw.io/model=m,llmgw.io/replica=0,llmgw.io/profile=p NodeList=n1\n  Nodes=n1 CPU_IDs=0-1 Mem=10 GRES=gpu:h100:1(IDX:0)\n\n\
                JobId=9 UserId=alice(1000) JobState=RUNNING Comment=llmgw.io/model=m,llmgw.io/replica=0,llmgw.io/profile=p NodeList=n2\n  Nodes=n2 CPU_IDs=0-1 Mem=10 GRES=gpu:h100:1(IDX:1)\n";
    let src = crate::diag::source("n.txt", nodes.to_string());
    let jobs = crate::diag::source("j.txt", jobs.to_string());
    let (inv, w) = import(&src, None, Some(&jobs), &alice()).unwrap();
    let held = |id: &str, model: &str| -> Vec<u32> {
        let n = inv.nodes.iter().find(|n| n.id == id).unwrap();
        n.allocations.iter().filter(|a| a.model == model).flat_map(|a| a.gpus.clone()).collect()
    };
    assert_eq!(held("n1", "m"), [0]);
    assert!(held("n2", "m").is_empty());
    assert_eq!(held("n2", "slurm:busy"), [1], "the second claim's GPU stays busy");
    assert!(w.iter().any(|d| d.message.contains("jobs 7 and 9 both say they are m r0")), "{w:?}");
}

#[test]
fn a_running_llmgw_job_without_nodes_is_warned_about() {
    let nodes = "NodeName=n1 State=IDLE Gres=gpu:h100:4 CPUTot=8 CPUAlloc=0\n";
    let jobs =
        "JobId=7 UserId=alice(1000) JobState=RUNNING Comment=llmgw.io/model=m,llmgw.io/replica=0,llmgw.io/profile=p\n";
    let src = crate::diag::source("n.txt", nodes.to_string());
    let jobs = crate::diag::source("j.txt", jobs.to_string());
    let (_, w) = import(&src, None, Some(&jobs), &alice()).unwrap();
    assert!(w.iter().any(|d| d.message.contains("7 (m r0)") && d.message.contains("names no node")), "{w:?}");
}
