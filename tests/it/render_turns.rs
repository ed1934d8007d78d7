//! Render from one turn of the loop to the next: what runs is rendered as
//! it was (its leader, adapters and ports), nothing in the folder that
//! still matters is lost, and a few platform details an operator would
//! trip over (gres types, pyxis, CPU shares, two TGI on one node).

use std::path::{Path, PathBuf};

use crate::common::*;

fn place(dir: &Path, catalog: &Path, fleet: &Path, out: &str) -> PathBuf {
    let plan = dir.join(out);
    let o = run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
    assert!(code(&o) <= 1, "{}", transcript(&o));
    plan
}

fn render(kind: &str, plan: &Path, catalog: &Path, fleet: &Path, extra: &[&str]) -> std::process::Output {
    let out = crate::common::render_plan(kind, plan, catalog, fleet, extra);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    out
}

/// The fleet with the plan's placements recorded as running allocations
/// (with their profiles), as an import after applying would give it.
fn running(dir: &Path, fleet: &Path, plan: &Path, name: &str) -> PathBuf {
    let p: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(plan).unwrap()).unwrap();
    let mut text = std::fs::read_to_string(fleet).unwrap();
    for pl in p["placements"].as_array().unwrap() {
        for n in pl["nodes"].as_array().unwrap() {
            let id = n["node"].as_str().unwrap();
            let at = text.find(&format!("id = \"{id}\"\n")).unwrap();
            let end = text[at..].find("\n[[node]]").map_or(text.len(), |i| at + i);
            // What the pods' requests (or the job) hold: what the plan asked.
            let held: String = ["cpus", "memory_mb"]
                .iter()
                .filter(|k| !n[**k].is_null())
                .map(|k| format!("{k} = {}\n", n[*k]))
                .collect();
            let alloc = format!(
                "\n[[node.allocation]]\nmodel = {}\nreplica = {}\ngpus = {}\nprofile = {}\n{held}",
                pl["model"], pl["replica"], n["gpus"], pl["profile"]
            );
            text.insert_str(end, &alloc);
        }
    }
    write(dir, name, &text)
}

#[test]
fn a_running_multi_node_replica_renders_as_it_did_when_placed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = d.join("fleet.toml");
    assert_eq!(
        code(&run(&["inventory", "synth", "dgx-h100:3@ib-east", "--prefix", "n", "-o", fleet.to_str().unwrap()])),
        0
    );
    // The 1-GPU replica goes first, so the 2-node one is placed (rank 0)
    // on a node other than the lowest id.
    let catalog = write(
        d,
        "c.toml",
        "[[model]]\nname = \"small\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n\
         [[model]]\nname = \"big\"\n[[model.profile]]\nname = \"p\"\nengine = \"sglang\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 4\nnodes = 2\n",
    );
    let first = place(d, &catalog, &fleet, "first.json");
    let now = running(d, &fleet, &first, "now.toml");
    let second = place(d, &catalog, &now, "second.json");
    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&second).unwrap()).unwrap();
    assert_eq!(s["summary"]["placed"], 0, "{s}");
    // diff: the same nodes and GPUs, listed by id now: unchanged.
    let out = run(&["diff", first.to_str().unwrap(), second.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    // The LeaderWorkerSet is the same object: leader, annotation, adapters.
    let a = render("kubernetes", &first, &catalog, &fleet, &["--rdma-resource", "rdma/ib"]);
    let b = render("kubernetes", &second, &catalog, &now, &["--rdma-resource", "rdma/ib"]);
    let lws = |o: &std::process::Output| {
        crate::render::documents(&stdout(o)).into_iter().find(|d| d["kind"] == "LeaderWorkerSet").unwrap()
    };
    assert_eq!(lws(&a), lws(&b));
    let c = &lws(&b)["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0];
    assert!(c["env"].as_array().unwrap().iter().any(|e| e["name"] == "NCCL_IB_HCA"), "{c}");
    assert_eq!(c["resources"]["limits"]["rdma/ib"], "1");
}

#[test]
fn replicas_that_run_keep_their_slurm_ports_whatever_the_plan_order() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = d.join("fleet.toml");
    assert_eq!(code(&run(&["inventory", "synth", "dgx-h100:1", "--prefix", "n", "-o", fleet.to_str().unwrap()])), 0);
    // "b" is listed first but placed second turn... both on the one node.
    let catalog = write(
        d,
        "c.toml",
        "[[model]]\nname = \"b\"\nreplicas = 0\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n\
         [[model]]\nname = \"a\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n",
    );
    let jobs = d.join("jobs");
    let ends = d.join("ends.json");
    let url = |model: &str| {
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&ends).unwrap()).unwrap();
        v["endpoints"].as_array().unwrap().iter().find(|e| e["model"] == model).unwrap()["url"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let first = place(d, &catalog, &fleet, "first.json");
    render("slurm", &first, &catalog, &fleet, &["-o", jobs.to_str().unwrap(), "--endpoints", ends.to_str().unwrap()]);
    assert_eq!(url("a"), "http://n-0001:8000");
    // Next turn: "a" runs; "b" is wanted and comes first in plan order.
    let now = running(d, &fleet, &first, "now.toml");
    let catalog2 =
        write(d, "c2.toml", &std::fs::read_to_string(&catalog).unwrap().replace("replicas = 0", "replicas = 1"));
    let second = place(d, &catalog2, &now, "second.json");
    render("slurm", &second, &catalog2, &now, &["-o", jobs.to_str().unwrap(), "--endpoints", ends.to_str().unwrap()]);
    assert_eq!(url("a"), "http://n-0001:8000", "what runs keeps its port");
    assert_eq!(url("b"), "http://n-0001:8001");
    // Without the folder, plan order decides (and says the same for b).
    let out = render("slurm", &second, &catalog2, &now, &[]);
    assert!(stdout(&out).contains("# llmgw ports: http=8000"), "{}", stdout(&out));
}

#[test]
fn a_pending_models_service_and_the_other_renderers_files_stay() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = write(
        d,
        "fleet.toml",
        "[[node]]\nid = \"n1\"\n[[node.gpu]]\nindex = 0\nname = \"NVIDIA H100 80GB HBM3\"\n\
         [[node.allocation]]\nmodel = \"m\"\nreplica = 0\nprofile = \"p\"\npending = true\n",
    );
    let catalog = write(
        d,
        "c.toml",
        "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n",
    );
    let plan = place(d, &catalog, &fleet, "plan.json");
    let out_dir = d.join("out");
    std::fs::create_dir(&out_dir).unwrap();
    write(&out_dir, "service-llmgw-m.yaml", "# Written by llmgw render kubernetes; old\nkind: Service\n");
    write(&out_dir, "llmgw-m-r0.yaml", "# Written by llmgw render kubernetes; old\nkind: Deployment\n");
    write(&out_dir, "llmgw-x-r0.sbatch", "#!/bin/bash\n# Written by llmgw render slurm; old\n");
    let out = render("kubernetes", &plan, &catalog, &fleet, &["-o", out_dir.to_str().unwrap()]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("removed"), "{}", transcript(&out));
    for f in ["service-llmgw-m.yaml", "llmgw-m-r0.yaml", "llmgw-x-r0.sbatch"] {
        assert!(out_dir.join(f).exists(), "{f} was removed");
    }
    let human = run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap()]);
    assert!(stdout(&human).contains("m replica 0 is pending"), "{}", transcript(&human));
}

#[test]
fn slurm_details_gres_labels_pyxis_cpu_shares_and_two_tgi_on_a_node() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = write(
        d,
        "fleet.toml",
        "[[node]]\nid = \"n1\"\ncpus = 96\nlabels = { \"slurm/gres-type\" = \"h100\" }\nweights = [\"org/m\"]\n\
         disk = { path = \"/models\", free_bytes = 1, total_bytes = 2 }\n\
         [[node.allocation]]\nmodel = \"pod:kube-system/ds\"\nreplica = 0\ncpus = 32\n\
         [[node.gpu]]\nindex = 0\nname = \"NVIDIA H100 80GB HBM3\"\n[[node.gpu]]\nindex = 1\nname = \"NVIDIA H100 80GB HBM3\"\n\
         [[node.gpu]]\nindex = 2\nname = \"NVIDIA H100 80GB HBM3\"\n[[node.gpu]]\nindex = 3\nname = \"NVIDIA H100 80GB HBM3\"\n",
    );
    let catalog = write(
        d,
        "c.toml",
        "[[model]]\nname = \"t1\"\nsource = \"org/m\"\n[[model.profile]]\nname = \"p\"\nengine = \"tgi\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 2\nimage = \"ghcr.io/huggingface/text-generation-inference:2.4.0\"\n\
         [[model]]\nname = \"t2\"\nsource = \"org/m\"\n[[model.profile]]\nname = \"p\"\nengine = \"tgi\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 2\n",
    );
    let plan = place(d, &catalog, &fleet, "plan.json");
    let out = render("slurm", &plan, &catalog, &fleet, &["--container", "pyxis"]);
    let text = stdout(&out);
    // The label names the gres type of a node that did not come from Slurm.
    assert_eq!(text.matches("#SBATCH --gres=gpu:h100:2\n").count(), 2, "{text}");
    // Half the GPUs: half of the node's CPUs, capped at what is free: the
    // CPU-only pod holds 32, the first replica 48, the second gets the 16 left.
    assert_eq!(text.matches("#SBATCH --cpus-per-task=48\n").count(), 1, "{text}");
    assert_eq!(text.matches("#SBATCH --cpus-per-task=16\n").count(), 1, "{text}");
    // pyxis: the registry with a hash, a writable root, the caches and the
    // node's weights mounted.
    assert!(
        text.contains("--container-image='ghcr.io#huggingface/text-generation-inference:2.4.0' --container-writable --container-mounts=\"$HF_HOME:$HF_HOME\",/models/org/m:/models/org/m:ro"),
        "{text}"
    );
    // The second sharded launcher on the node gets its own rendezvous.
    assert_eq!(text.matches("--master-port").count(), 1, "{text}");
    assert!(text.contains("--master-port 29501 --shard-uds-path /tmp/llmgw-tgi-29501"), "{text}");
}
