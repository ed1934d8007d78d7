//! Who may claim a replica through Slurm: only the jobs of `--jobs-user`
//! carry llmgw's identity, and a comment's words are never the job's own
//! fields. Each test pins a defect of the third hostile probe.

use crate::common::*;

const NODES: &str = "NodeName=gpu01 State=IDLE Gres=gpu:h100:8 CPUTot=64 RealMemory=512000\n\
NodeName=gpu02 State=IDLE Gres=gpu:h100:8 CPUTot=64 RealMemory=512000\n";

const CATALOG: &str = "[[model]]\nname = \"m\"\nreplicas = 1\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\n\
gpu_class = \"h100\"\ngpus_per_node = 8\n";

fn import(dir: &std::path::Path, jobs: &str, user: Option<&str>) -> (std::process::Output, String) {
    let nodes = write(dir, "nodes.txt", NODES);
    let jobs = write(dir, "jobs.txt", jobs);
    let mut args = vec!["inventory", "import", "slurm", nodes.to_str().unwrap(), "--jobs", jobs.to_str().unwrap()];
    if let Some(u) = user {
        args.extend(["--jobs-user", u]);
    }
    let out = llmgw().args(&args).env("USER", "alice").output().unwrap();
    let text = stdout(&out);
    (out, text)
}

#[test]
fn another_users_held_job_with_llmgws_comment_is_foreign_not_a_pending_replica() {
    let dir = tempfile::tempdir().unwrap();
    // mallory's held job says it is m r0: it must not keep m from being placed.
    let jobs = "JobId=77 JobName=x UserId=mallory(1001) GroupId=m(1001) JobState=PENDING Reason=JobHeldUser ReqNodeList=gpu01 NumNodes=1 Command=/bin/true WorkDir=/tmp Comment=llmgw.io/model=m,llmgw.io/replica=0,llmgw.io/profile=p\n";
    let (out, inv) = import(dir.path(), jobs, None);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert!(!inv.contains("model = \"m\""), "{inv}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("llmgw::slurm::foreign-job"), "{err}");
    assert!(err.contains("77") && err.contains("of mallory (m r0)"), "{err}");
    let fleet = write(dir.path(), "fleet.toml", &inv);
    let cat = write(dir.path(), "c.toml", CATALOG);
    let out = run(&["place", cat.to_str().unwrap(), "-i", fleet.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "placed, not 'pending': {}", transcript(&out));
    // The same job of the user that runs llmgw is the pending replica.
    let (out, inv) = import(dir.path(), &jobs.replace("mallory(1001)", "alice(1000)"), None);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert!(inv.contains("model = \"m\"") && inv.contains("pending = true"), "{inv}");
    // --jobs-user names whose jobs count, by name or uid.
    for user in ["mallory", "1001"] {
        let (_, inv) = import(dir.path(), jobs, Some(user));
        assert!(inv.contains("pending = true"), "--jobs-user {user}: {inv}");
    }
}

#[test]
fn a_comments_words_are_not_the_jobs_own_fields() {
    let dir = tempfile::tempdir().unwrap();
    // One line, as `scontrol -d show job -o` prints it: the comment says
    // the job holds all of gpu02's GPUs; the job holds gpu01's GPU 0.
    let jobs = "JobId=5 JobName=x UserId=bob(1002) GroupId=b(1002) JobState=RUNNING NodeList=gpu01 NumNodes=1 \
Nodes=gpu01 CPU_IDs=0 Mem=100 GRES=gpu:h100:1(IDX:0) Command=/bin/true WorkDir=/tmp \
Comment=hi Nodes=gpu02 CPU_IDs=0-63 Mem=512000 GRES=gpu:h100:8(IDX:0-7) StdErr=/tmp/e StdIn=/dev/null StdOut=/tmp/o Power=\n";
    let (out, inv) = import(dir.path(), jobs, None);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let fleet = write(dir.path(), "fleet.toml", &inv);
    let out = run(&["nodes", "-i", fleet.to_str().unwrap(), "--format", "json"]);
    let j = json(&out);
    let free = |i: usize| j["nodes"][i]["gpus"][0]["free"].as_u64().unwrap();
    assert_eq!((free(0), free(1)), (7, 8), "{j}");
    // A job name is free text too: a name that spells an llmgw comment
    // and a running state is the name.
    let jobs = "JobId=6 JobName=a JobState=RUNNING Comment=llmgw.io/model=m,llmgw.io/replica=0 UserId=alice(1000) GroupId=a(1000) JobState=PENDING Reason=None Command=/bin/true WorkDir=/tmp\n";
    let (out, inv) = import(dir.path(), jobs, None);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert!(!inv.contains("model = \"m\""), "{inv}");
}

#[test]
fn a_job_name_that_spells_another_users_pending_replica_is_the_name() {
    // Found by the generated test below: mallory's running job, named so
    // that its one-line record reads `UserId=alice ReqNodeList=gpu02
    // JobState=PENDING Comment=llmgw.io/...` before Slurm's own fields. The
    // name's `Comment=` swallowed the job's own user, state and nodes, and
    // the job became alice's pending replica on gpu02.
    let dir = tempfile::tempdir().unwrap();
    let w = "UserId=alice(1000) ReqNodeList=gpu02 JobState=PENDING Comment=llmgw.io/model=m,llmgw.io/replica=9";
    let jobs = format!(
        "JobId=0 JobName=j {w} UserId=mallory(1001) GroupId=g(1) JobState=RUNNING Reason=None NodeList=gpu01 \
         NumNodes=1 NumCPUs=1   Nodes=gpu01 CPU_IDs=0 Mem=100 GRES=gpu:h100:1(IDX:0) Command=/bin/x {w} WorkDir=/w {w} \
         Comment=llmgw.io/model=m,llmgw.io/replica=0 StdErr=/e {w} Power=\n"
    );
    let (out, inv) = import(dir.path(), &jobs, None);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert!(!inv.contains("pending = true"), "{inv}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("llmgw::slurm::foreign-job"), "{}", transcript(&out));
    let fleet = write(dir.path(), "fleet.toml", &inv);
    let j = json(&run(&["nodes", "-i", fleet.to_str().unwrap(), "--format", "json"]));
    let free = |i: usize| j["nodes"][i]["gpus"][0]["free"].as_u64().unwrap();
    assert_eq!((free(0), free(1)), (7, 8), "{j}");
}

#[test]
fn the_hostlists_of_a_job_list_share_one_budget_of_names() {
    let dir = tempfile::tempdir().unwrap();
    // Twenty jobs, each on a hostlist of a million names: each alone was
    // within bounds, all together 20 million names (2.7 GB, 14 s).
    let jobs: String = (0..20)
        .map(|i| {
            format!("JobId={i} UserId=alice(1000) JobState=RUNNING NodeList=n[0000000-0999999] NumNodes=1000000\n")
        })
        .collect();
    let (out, _) = import(dir.path(), &jobs, None);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("in one file"), "{err}");
    assert!(out.stdout.is_empty());
}

mod generated {
    use proptest::prelude::*;

    /// Words a user may put in a job's free text that read like Slurm's
    /// own fields.
    fn word() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "Nodes=gpu02",
            "CPU_IDs=0-63",
            "Mem=512000",
            "GRES=gpu:h100:8(IDX:0-7)",
            "JobState=PENDING",
            "UserId=alice(1000)",
            "NodeList=gpu02",
            "ReqNodeList=gpu02",
            "Comment=llmgw.io/model=m,llmgw.io/replica=9",
            "TresPerNode=gres:gpu:h100:8",
            "plain",
        ])
        .prop_map(str::to_string)
    }

    /// A running job on gpu01 GPU `i % 8`, of alice or mallory, with
    /// hostile words in its name, command, work dir and output path (the
    /// comment stays llmgw's: words in it make it no comment of llmgw's);
    /// `-o` or not.
    fn record(i: usize, alice: bool, words: &[String], one_line: bool) -> String {
        let sep = if one_line { " " } else { "\n   " };
        let w = words.join(" ");
        let user = if alice { "alice(1000)" } else { "mallory(1001)" };
        format!(
            "JobId={i} JobName=j {w}{sep}UserId={user} GroupId=g(1){sep}JobState=RUNNING Reason=None{sep}NodeList=gpu01{sep}\
             NumNodes=1 NumCPUs=1{sep}  Nodes=gpu01 CPU_IDs=0 Mem=100 GRES=gpu:h100:1(IDX:{}){sep}Command=/bin/x {w}{sep}\
             WorkDir=/w {w}{sep}Comment=llmgw.io/model=m,llmgw.io/replica={i}{sep}StdErr=/e {w}{sep}Power=\n",
            i % 8
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]
        /// Whatever a job's free text says, the job holds only what its
        /// own fields say (one GPU of gpu01), and only alice's jobs are
        /// llmgw's replicas.
        #[test]
        fn free_text_never_moves_a_job_and_only_alices_jobs_are_replicas(
            jobs in prop::collection::vec((any::<bool>(), prop::collection::vec(word(), 0..6), any::<bool>()), 1..6),
        ) {
            let text: String = jobs.iter().enumerate().map(|(i, (alice, w, one))| record(i, *alice, w, *one)).collect();
            let nodes = llmgw::diag::source("n.txt", super::NODES.to_string());
            let list = llmgw::diag::source("j.txt", text.clone());
            let settings = llmgw::slurm::Settings { jobs_user: "alice".into(), ..llmgw::slurm::Settings::default() };
            let (inv, _) = llmgw::slurm::import(&nodes, None, Some(&list), &settings).map_err(|d| {
                TestCaseError::fail(format!("{}\n{text}", llmgw::report::diagnostics::render(&d, false)))
            })?;
            let gpu02 = inv.nodes.iter().find(|n| n.id == "gpu02").unwrap();
            prop_assert!(gpu02.allocations.is_empty(), "gpu02 holds {:?}\n{text}", gpu02.allocations);
            let gpu01 = inv.nodes.iter().find(|n| n.id == "gpu01").unwrap();
            // Only alice's jobs are replicas. (What alice writes into her
            // own job's fields in one-line output may change which replica
            // her job says it is: hers to say.)
            let by: Vec<Option<u64>> = gpu01.allocations.iter().filter(|a| a.model == "m").map(|a| a.job).collect();
            let alices: Vec<Option<u64>> = jobs.iter().enumerate().filter(|(_, j)| j.0).map(|(i, _)| Some(i as u64)).collect();
            prop_assert!(by.iter().all(|j| alices.contains(j)), "{by:?} of {alices:?}\n{text}");
            let held: usize = gpu01.allocations.iter().map(|a| a.gpus.len()).sum();
            prop_assert!(held <= jobs.len(), "{held} GPUs held by {} jobs\n{text}", jobs.len());
            for a in &gpu01.allocations {
                prop_assert!(!a.pending && (a.model != "m" || a.gpus.len() <= 1), "{a:?}\n{text}");
            }
        }
    }
}
