//! The loop around render: a stale plan is refused before anything is
//! written, the output folder is render's own, `--stop` says what to stop,
//! `--endpoints` says where each replica answers.

use std::path::Path;

use crate::common::*;
use crate::render::{CATALOG, documents, fleet};

/// A plan made on the fleet of `render::fleet`.
fn plan(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let fleet = fleet(dir);
    let catalog = write(dir, "c.toml", CATALOG);
    let plan = dir.join("plan.json");
    let out = run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    (plan, catalog, fleet)
}

#[test]
fn a_stale_plan_is_refused_with_one_diagnostic_per_conflict_and_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let (plan, catalog, fleet) = plan(dir.path());
    // Since the plan was made: a pod took two of k-0002's GPUs, a100-mig
    // went down, and someone edited the plan by hand.
    let text = std::fs::read_to_string(&fleet).unwrap();
    assert!(text.contains("id = \"a100-mig\"\nstate = \"ready\""), "{text}");
    let mut text = text.replacen("id = \"a100-mig\"\nstate = \"ready\"", "id = \"a100-mig\"\nstate = \"down\"", 1);
    let at = text.find("id = \"k-0002\"").unwrap();
    let end = text[at..].find("\n[[node]]").map_or(text.len(), |i| at + i);
    text.insert_str(end, "\n[[node.allocation]]\nmodel = \"pod:research/x\"\nreplica = 0\ngpus = [4, 5]\n");
    let now = write(dir.path(), "now.toml", &text);
    let mut p: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    p["placements"][2]["nodes"][0]["node"] = "cpu-99".into();
    let edited = write(dir.path(), "edited.json", &p.to_string());
    for kind in ["kubernetes", "slurm"] {
        let out_dir = dir.path().join(format!("out-{kind}"));
        let ends = dir.path().join(format!("ends-{kind}.json"));
        let out = render_plan(
            kind,
            &edited,
            &catalog,
            &now,
            &["-o", out_dir.to_str().unwrap(), "--endpoints", ends.to_str().unwrap()],
        );
        assert_eq!(code(&out), 2, "{}", transcript(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("deepseek-v3 r0: k-0002 GPUs 4,5 are held by pod:research/x; place again"), "{err}");
        assert!(err.contains("llama-3.1-8b r0: a100-mig is down; place again"), "{err}");
        assert!(err.contains("qwen2.5-7b-gguf r0: node cpu-99 is not in the inventory; place again"), "{err}");
        assert_eq!(err.matches("llmgw::render::stale-plan").count(), 3, "{err}");
        assert!(err.contains("edited.json:1:"), "the plan's place: {err}");
        assert!(out.stdout.is_empty() && !out_dir.exists() && !ends.exists(), "nothing written");
    }
    // GPU 999, a node twice, a replica twice.
    let mut p: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    p["placements"][0]["nodes"][1]["node"] = "k-0001".into();
    p["placements"][1]["nodes"][0]["gpus"] = serde_json::json!([999]);
    let bad = write(dir.path(), "bad.json", &p.to_string());
    let out = render_plan("slurm", &bad, &catalog, &fleet, &[]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("deepseek-v3 r0: k-0001 is named twice"), "{err}");
    assert!(err.contains("llama-3.1-8b r0: a100-mig has no GPU 999"), "{err}");
    p["placements"][2] = p["placements"][0].clone();
    let twice = write(dir.path(), "twice.json", &p.to_string());
    let out = render_plan("kubernetes", &twice, &catalog, &fleet, &[]);
    assert_eq!(code(&out), 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("llmgw::plan::duplicate-replica"), "{}", transcript(&out));
}

#[test]
fn another_catalog_than_the_plans_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let (plan, catalog, fleet) = plan(dir.path());
    let out = render_plan("slurm", &plan, &catalog, &fleet, &[]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("other-catalog"), "{}", transcript(&out));
    let other = write(dir.path(), "other.toml", &format!("{CATALOG}\n# edited\n"));
    let out = render_plan("slurm", &plan, &other, &fleet, &[]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("llmgw::render::other-catalog"), "{}", transcript(&out));
}

#[test]
fn the_output_folder_is_renders_own() {
    let dir = tempfile::tempdir().unwrap();
    let (plan, catalog, fleet) = plan(dir.path());
    let out_dir = dir.path().join("jobs");
    // An older render left a replica the plan no longer has; someone keeps
    // notes there; a link points outside.
    std::fs::create_dir(&out_dir).unwrap();
    write(&out_dir, "llmgw-gone-r3.sbatch", "#!/bin/bash\n# Written by llmgw render slurm; old\n");
    write(&out_dir, "notes.sbatch", "#!/bin/bash\n# mine\n");
    let outside = write(dir.path(), "outside.txt", "keep me\n");
    std::os::unix::fs::symlink(&outside, out_dir.join("llmgw-llama-3.1-8b-r0.sbatch")).unwrap();
    let out = render_plan("slurm", &plan, &catalog, &fleet, &["-o", out_dir.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let at = |n: &str| out_dir.join(n).display().to_string();
    assert_eq!(
        stdout(&out),
        format!(
            "new {}\nchanged {}\nnew {}\nnew {}\nremoved {} (no longer in the plan)\n",
            at("llmgw-deepseek-v3-r0.sbatch"),
            at("llmgw-llama-3.1-8b-r0.sbatch"),
            at("llmgw-qwen2.5-7b-gguf-r0.sbatch"),
            at("submit.sh"),
            at("llmgw-gone-r3.sbatch")
        ),
        "{}",
        transcript(&out)
    );
    assert_eq!(
        files(&out_dir),
        [
            "llmgw-deepseek-v3-r0.sbatch",
            "llmgw-llama-3.1-8b-r0.sbatch",
            "llmgw-qwen2.5-7b-gguf-r0.sbatch",
            "notes.sbatch",
            "submit.sh"
        ]
    );
    // The same render again touches nothing and says so.
    let before = std::fs::metadata(out_dir.join("llmgw-deepseek-v3-r0.sbatch")).unwrap().modified().unwrap();
    let again = render_plan("slurm", &plan, &catalog, &fleet, &["-o", out_dir.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&again), 0, "{}", transcript(&again));
    let v: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    let statuses: Vec<&str> = v["files"].as_array().unwrap().iter().map(|f| f["status"].as_str().unwrap()).collect();
    // submit.sh no longer cancels llama's old job first: its script is as submitted.
    assert_eq!(statuses, ["unchanged", "unchanged", "unchanged", "changed"], "{v:#}");
    let submit = std::fs::read_to_string(out_dir.join("submit.sh")).unwrap();
    assert!(submit.contains("sbatch llmgw-deepseek-v3-r0.sbatch\n") && !submit.contains("scancel"), "{submit}");
    assert_eq!(v["files"][0]["model"], "deepseek-v3");
    assert_eq!(v["files"][0]["replica"], 0);
    assert_eq!(v["files"][3]["model"], serde_json::Value::Null);
    let after = std::fs::metadata(out_dir.join("llmgw-deepseek-v3-r0.sbatch")).unwrap().modified().unwrap();
    assert_eq!(before, after, "an unchanged file is left as it was");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep me\n", "the link was not followed");
    let replaced = out_dir.join("llmgw-llama-3.1-8b-r0.sbatch");
    assert!(std::fs::symlink_metadata(&replaced).unwrap().is_file());
    assert!(std::fs::read_to_string(&replaced).unwrap().contains("vllm serve"));
    // -o naming a file is refused; -o - is standard output.
    let out = render_plan("kubernetes", &plan, &catalog, &fleet, &["-o", outside.to_str().unwrap()]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("names a file"), "{}", transcript(&out));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep me\n");
    let out = render_plan("kubernetes", &plan, &catalog, &fleet, &["-o", "-"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert_eq!(documents(&stdout(&out)).len(), 6);
    assert!(!Path::new("-").exists());
    // A later plan without the MIG replica: its file goes, the rest stays.
    let mut p: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    p["placements"].as_array_mut().unwrap().remove(1);
    let next = write(dir.path(), "next.json", &p.to_string());
    let out = render_plan("slurm", &next, &catalog, &fleet, &["-o", out_dir.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert_eq!(
        files(&out_dir),
        ["llmgw-deepseek-v3-r0.sbatch", "llmgw-qwen2.5-7b-gguf-r0.sbatch", "notes.sbatch", "submit.sh"]
    );
    assert!(!files(&out_dir).iter().any(|f| f.starts_with('.')), "no staging left behind");
}

#[test]
fn a_failed_write_leaves_the_previous_render() {
    let dir = tempfile::tempdir().unwrap();
    let (plan, catalog, fleet) = plan(dir.path());
    let out_dir = dir.path().join("manifests");
    assert_eq!(code(&render_plan("kubernetes", &plan, &catalog, &fleet, &["-o", out_dir.to_str().unwrap()])), 0);
    let before: Vec<(String, String)> =
        files(&out_dir).into_iter().map(|f| (f.clone(), std::fs::read_to_string(out_dir.join(&f)).unwrap())).collect();
    // A folder where one of the new files must go: nothing is replaced,
    // and the folder in the way is left as it is.
    let mut p: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    p["placements"].as_array_mut().unwrap().remove(0);
    p["placements"][1]["replica"] = 1.into();
    let next = write(dir.path(), "next.json", &p.to_string());
    std::fs::create_dir(out_dir.join("llmgw-qwen2-5-7b-gguf-r1.yaml")).unwrap();
    std::fs::write(out_dir.join("llmgw-qwen2-5-7b-gguf-r1.yaml/x"), "x").unwrap();
    let ends = dir.path().join("ends.json");
    let out = render_plan(
        "kubernetes",
        &next,
        &catalog,
        &fleet,
        &["-o", out_dir.to_str().unwrap(), "--endpoints", ends.to_str().unwrap()],
    );
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(!ends.exists(), "the endpoints of a render that failed");
    for (f, text) in &before {
        let p = out_dir.join(f);
        if p.is_file() {
            assert_eq!(&std::fs::read_to_string(p).unwrap(), text, "{f} changed");
        }
    }
    assert!(out_dir.join("llmgw-deepseek-v3-r0.yaml").exists(), "the replica the new plan drops is still there");
    assert!(out_dir.join("llmgw-qwen2-5-7b-gguf-r1.yaml/x").exists());
    assert!(!files(&out_dir).iter().any(|f| f.starts_with('.')), "no staging left behind");
}

#[test]
fn stop_prints_what_the_new_plan_drops_or_moves_never_what_runs() {
    let dir = tempfile::tempdir().unwrap();
    let (plan, _, _) = plan(dir.path());
    let old: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    // NEW: deepseek moved to other GPUs, the MIG replica runs (existing,
    // wherever Slurm put it), the GGUF replica is left unplaced.
    let mut new = old.clone();
    new["placements"][0]["nodes"][0]["gpus"] = serde_json::json!([7]);
    let mig = new["placements"][1].clone();
    new["existing"] = serde_json::json!([{"model": mig["model"], "replica": 0, "profile": "mig",
        "nodes": [{"node": "a100-mig", "gpus": [0], "mig_devices": [1]}]}]);
    let gguf = new["placements"][2].clone();
    new["placements"] = serde_json::json!([new["placements"][0].clone()]);
    new["unplaced"] = serde_json::json!([{"model": gguf["model"], "replica": 0}]);
    let (o, n) = (plan.to_str().unwrap(), write(dir.path(), "new.json", &new.to_string()));
    let out = llmgw().args(["render", "slurm", "--stop", o, n.to_str().unwrap()]).env("USER", "ops").output().unwrap();
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert_eq!(
        stdout(&out),
        "scancel --name=llmgw-deepseek-v3-r0 --user=ops\nscancel --name=llmgw-qwen2.5-7b-gguf-r0 --user=ops\n"
    );
    let out = run(&["render", "kubernetes", "--stop", o, n.to_str().unwrap(), "-n", "serving"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert_eq!(
        stdout(&out),
        "kubectl delete leaderworkerset/llmgw-deepseek-v3-r0 -n serving\nkubectl delete deployment/llmgw-qwen2-5-7b-gguf-r0 -n serving\n\
         kubectl delete service/llmgw-qwen2-5-7b-gguf -n serving\n"
    );
    // The same plan: nothing to stop.
    let out = run(&["render", "slurm", "--stop", o, o]);
    assert_eq!((code(&out), stdout(&out)), (0, String::new()));
    // --stop takes two plans and nothing else.
    let out = run(&["render", "slurm", "--stop", o]);
    assert_eq!(code(&out), 2);
}

#[test]
fn endpoints_say_where_each_replica_answers() {
    let dir = tempfile::tempdir().unwrap();
    let (plan, catalog, fleet) = plan(dir.path());
    let ends = dir.path().join("ends.json");
    let out = render_plan("slurm", &plan, &catalog, &fleet, &["--endpoints", ends.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&ends).unwrap()).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"endpoints": [
            {"model": "deepseek-v3", "replica": 0, "url": "http://k-0001:30000"},
            {"model": "llama-3.1-8b", "replica": 0, "url": "http://a100-mig:9000"},
            {"model": "qwen2.5-7b-gguf", "replica": 0, "url": "http://cpu-01:8080"}
        ]})
    );
    let out = render_plan("kubernetes", &plan, &catalog, &fleet, &["--endpoints", ends.to_str().unwrap(), "-n", "ai"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&ends).unwrap()).unwrap();
    assert_eq!(
        v["endpoints"][1],
        serde_json::json!({"model": "llama-3.1-8b", "replica": 0, "url": "http://llmgw-llama-3-1-8b.ai.svc:9000"})
    );
}

#[test]
fn an_interrupted_render_leaves_no_staging_folder_and_no_half_set() {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = d.join("fleet.toml");
    assert_eq!(code(&run(&["inventory", "synth", "cpu:3000", "-o", fleet.to_str().unwrap()])), 0);
    let catalog = write(
        d,
        "c.toml",
        "[[model]]\nname = \"m\"\nsource = \"Qwen/Qwen2.5-7B-Instruct-GGUF:Q4_K_M\"\nreplicas = 3000\n[[model.profile]]\nname = \"cpu\"\nengine = \"llama.cpp\"\n",
    );
    let plan = d.join("plan.json");
    let out = run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    for sig in ["TERM", "INT"] {
        let out_dir = d.join(format!("jobs-{sig}"));
        std::fs::create_dir(&out_dir).unwrap();
        let mut child = crate::common::default_signals(&mut llmgw())
            .args(["render", "slurm", plan.to_str().unwrap(), "--catalog", catalog.to_str().unwrap()])
            .args(["-i", fleet.to_str().unwrap(), "-o", out_dir.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        // Staged beside the folder (exchanged whole), or inside it where
        // the exchange cannot be had.
        let sibling = format!(".jobs-{sig}.llmgw-render-");
        let staging_in = |folder: &Path, prefix: &str| {
            std::fs::read_dir(folder).unwrap().flatten().any(|e| e.file_name().to_string_lossy().starts_with(prefix))
        };
        let seen = loop {
            let staging = staging_in(&out_dir, ".llmgw-render-") || staging_in(d, &sibling);
            if staging || start.elapsed() > Duration::from_secs(30) || child.try_wait().unwrap().is_some() {
                break staging;
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        assert!(seen, "the staging folder was never seen");
        crate::common::signal(&child, sig);
        let status = child.wait().unwrap();
        assert!(!staging_in(d, &sibling), "{sig}: a staging folder is left beside the folder");
        let left = files(&out_dir);
        // Either the signal came before the swap (nothing there) or the
        // swap completed first; never a staging folder, never a half set.
        assert!(
            left.is_empty() || left.len() == 3000,
            "{sig} ({status:?}): {} files, {:?}",
            left.len(),
            left.iter().find(|f| f.starts_with('.'))
        );
    }
}

/// A catalog that no longer wants a replica of the plan (its model gone,
/// fewer replicas) is an error naming each, before anything is written;
/// `--allow-stale` renders the rest and warns. Other edits only warn.
#[test]
fn a_catalog_that_no_longer_wants_a_planned_replica_is_refused_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let (plan, catalog, fleet) = plan(dir.path());
    let text = std::fs::read_to_string(&catalog).unwrap();
    // deepseek-v3 gone from the catalog.
    let start = text.find("[[model]]\nname = \"deepseek-v3\"").expect("the test catalog has deepseek-v3");
    let end = text[start + 9..].find("[[model]]").map_or(text.len(), |e| start + 9 + e);
    let smaller = write(dir.path(), "smaller.toml", &format!("{}{}", &text[..start], &text[end..]));
    let out_dir = dir.path().join("jobs");
    let out = render_plan("slurm", &plan, &smaller, &fleet, &["-o", out_dir.to_str().unwrap()]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the plan runs `deepseek-v3`"), "{}", transcript(&out));
    assert!(!out_dir.exists(), "nothing written");
    let out = render_plan("slurm", &plan, &smaller, &fleet, &["-o", out_dir.to_str().unwrap(), "--allow-stale"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the plan runs `deepseek-v3`"), "{}", transcript(&out));
    assert!(!files(&out_dir).iter().any(|f| f.contains("deepseek")), "{:?}", files(&out_dir));
    // The model scaled to zero: its replica is no longer wanted.
    let zero = text.replace("name = \"llama-3.1-8b\"\n", "name = \"llama-3.1-8b\"\nreplicas = 0\n");
    assert_ne!(zero, text);
    let zero = write(dir.path(), "zero.toml", &zero);
    let out = render_plan("slurm", &plan, &zero, &fleet, &[]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("llmgw::render::stale-catalog") && err.contains("llama-3.1-8b r0"), "{}", transcript(&out));
    // Any other edit only warns.
    let edited = write(dir.path(), "edited.toml", &format!("{text}\n# a comment\n"));
    let out = render_plan("slurm", &plan, &edited, &fleet, &[]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
}

#[test]
fn an_existing_replica_is_checked_against_the_inventory_render_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = write(
        dir.path(),
        "c.toml",
        "[[model]]\nname = \"m\"\nsource = \"org/m\"\n[[model.profile]]\nname = \"tp2\"\nengine = \"vllm\"\n\
         gpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 2\n",
    );
    let node = |state: &str, alloc: &str| {
        let gpus: String = (0..4)
            .map(|i| format!("[[node.gpu]]\nindex = {i}\nname = \"NVIDIA H100 80GB HBM3\"\nmemory_mb = 81559\n"))
            .collect();
        format!("[[node]]\nid = \"n1\"\nstate = \"{state}\"\nengines = {{ vllm = \"0.11.1\" }}\n{gpus}{alloc}")
    };
    let runs = "[[node.allocation]]\nmodel = \"m\"\nreplica = 0\nprofile = \"tp2\"\ngpus = [0, 1]\n";
    let fleet = write(dir.path(), "fleet.toml", &node("ready", runs));
    let plan = placed_plan(dir.path(), &catalog, &fleet);
    assert!(std::fs::read_to_string(&plan).unwrap().contains("\"existing\": [\n    {"), "m r0 runs");
    // The same inventory: rendered where it runs.
    let out = render_plan("slurm", &plan, &catalog, &fleet, &[]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    // Since then the node went down and another job took its GPUs.
    let taken = "[[node.allocation]]\nmodel = \"slurm:busy\"\nreplica = 0\ngpus = [0, 1]\n";
    let now = write(dir.path(), "now.toml", &node("down", taken));
    for kind in ["slurm", "kubernetes"] {
        let out = render_plan(kind, &plan, &catalog, &now, &[]);
        assert_eq!(code(&out), 2, "{}", transcript(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("m r0: n1 no longer runs it; place again"), "{err}");
        assert!(err.contains("m r0: n1 GPUs 0,1 are held by slurm:busy; place again"), "{err}");
        assert!(out.stdout.is_empty(), "nothing written");
    }
    // It runs there, on other GPUs than the plan says.
    let moved = write(dir.path(), "moved.toml", &node("ready", &runs.replace("[0, 1]", "[2, 3]")));
    let out = render_plan("slurm", &plan, &catalog, &moved, &[]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("m r0: n1 runs it on GPUs 2,3, not 0,1; place again"),
        "{}",
        transcript(&out)
    );
}
