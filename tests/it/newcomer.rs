//! What a newcomer tripped over, one test each (issue 28): checks that
//! were missing and messages that misled.

use crate::common::*;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn lint_of_an_inventory_names_unknown_engines_and_sizes_in_the_wrong_unit() {
    let dir = tempfile::tempdir().unwrap();
    let inv = write(
        dir.path(),
        "fleet.toml",
        "[[node]]\nid = \"n1\"\nstate = \"ready\"\nmemory_total_mb = 2048\nengines = { vLLM = \"0.8.5\", vlm = \"\" }\n\
         disk = { path = \"/m\", free_bytes = 2000, total_bytes = 5000 }\n\
         [[node.gpu]]\nindex = 0\nname = \"NVIDIA H100 80GB HBM3\"\nmemory_mb = 80\n",
    );
    let out = run(&["lint", inv.to_str().unwrap()]);
    let err = stderr(&out);
    assert!(
        err.contains("llmgw::inventory::unknown-engine")
            && err.contains("did you mean `vllm`? engine names are lower case"),
        "{err}"
    );
    assert_eq!(err.matches("which is no engine llmgw knows").count(), 2, "{err}");
    for what in [
        "the memory of node `n1` is 2048: is this in MiB?",
        "the free disk of node `n1` is 2000: is this in bytes?",
        "the memory of GPU 0 of node `n1` is 80: is this in MiB?",
    ] {
        assert!(err.contains(what), "{what}: {err}");
    }
    assert!(err.contains("0 errors, 5 warnings"), "{err}");
}

#[test]
fn a_dotted_toml_key_is_told_to_be_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let inv = write(dir.path(), "fleet.toml", "[[node]]\nid = \"n1\"\nengines = { llama.cpp = \"b4500\" }\n");
    let out = run(&["nodes", "-i", inv.to_str().unwrap()]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(
        stderr(&out).contains("quote the key, as TOML needs for a name with a dot: `\"llama.cpp\" = ...`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_port_help_says_what_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    for port in ["0", "70000"] {
        let cat = write(
            dir.path(),
            "c.toml",
            &format!(
                "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"llama.cpp\"\nport = {port}\n"
            ),
        );
        let out = run(&["lint", cat.to_str().unwrap()]);
        let err = stderr(&out);
        assert!(err.contains(&format!("`port` must be between 1 and 65535, found {port}")), "{err}");
        assert!(!err.contains("from 0 to"), "{err}");
    }
}

#[test]
fn capacity_help_writes_like_node_as_it_is_given() {
    let out = run(&["capacity", "--help"]);
    let text = stdout(&out);
    assert!(text.contains("- like:NODE:") && !text.contains("like::"), "{text}");
    assert!(text.contains("- dgx-h100:"), "{text}");
}

#[test]
fn place_makes_the_folders_of_its_output_and_none_when_it_fails() {
    let dir = tempfile::tempdir().unwrap();
    let cat = write(
        dir.path(),
        "c.toml",
        "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"llama.cpp\"\n",
    );
    let inv = write(dir.path(), "fleet.toml", "[[node]]\nid = \"n1\"\nstate = \"ready\"\n");
    let plan = dir.path().join("plans/today/plan.json");
    let out = run(&["place", cat.to_str().unwrap(), "-i", inv.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert!(plan.exists());
    let bad = write(dir.path(), "bad.toml", "[[model]]\nname = 3\n");
    let nowhere = dir.path().join("other/plan.json");
    let out = run(&["place", bad.to_str().unwrap(), "-i", inv.to_str().unwrap(), "-o", nowhere.to_str().unwrap()]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(!dir.path().join("other").exists(), "no folder made for a failed place");
}

#[test]
fn a_node_without_the_class_is_kept_apart_from_one_whose_gpus_are_taken() {
    let root = root();
    let (cat, inv) = (root.join("catalog/fleet.toml"), root.join("examples/fleet.toml"));
    let out = run(&["place", cat.to_str().unwrap(), "-i", inv.to_str().unwrap()]);
    let text = stdout(&out).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(text.contains("4 have no h100-80gb-hbm3 GPUs (cpu-02, gpu-a100-01, gpu-a100-03 and gpu-l40s-01); 2 have 3 free h100-80gb-hbm3 GPUs, needs 8"), "{text}");
    // The JSON reason texts stay the seed's.
    let out = run(&["place", cat.to_str().unwrap(), "-i", inv.to_str().unwrap(), "--format", "json"]);
    let j = json(&out);
    let reasons = j["unplaced"][0]["reasons"].as_array().unwrap();
    assert!(
        reasons.iter().any(|r| r["reason"] == "has 0 free h100-80gb-hbm3 GPUs, needs 8" && r["count"] == 4),
        "{reasons:?}"
    );
}

#[test]
fn lint_names_a_node_selector_no_node_satisfies_with_the_closest_label() {
    let dir = tempfile::tempdir().unwrap();
    let cat = write(
        dir.path(),
        "c.toml",
        "[[model]]\nname = \"m\"\nsource = \"Qwen/Qwen2.5-7B-Instruct-GGUF:Q4_K_M\"\n[[model.profile]]\nname = \"p\"\nengine = \"llama.cpp\"\npriority = 1\n\
         node_selector = { role = \"cpus\" }\n[[model.profile]]\nname = \"q\"\nengine = \"llama.cpp\"\nnode_selector = { rol = \"cpu\" }\n",
    );
    let inv = write(
        dir.path(),
        "fleet.toml",
        "[[node]]\nid = \"n1\"\nstate = \"ready\"\nlabels = { role = \"cpu\" }\n[[node]]\nid = \"n2\"\nstate = \"ready\"\nlabels = { role = \"gpu\" }\n",
    );
    let out = run(&["lint", cat.to_str().unwrap(), "--inventory", inv.to_str().unwrap()]);
    let err = stderr(&out);
    assert!(err.contains("llmgw::catalog::selector-matches-nothing"), "{err}");
    assert!(err.contains("no node carries role=cpus; did you mean role=cpu?"), "{err}");
    assert!(err.contains("no node has a label `rol`; did you mean `role`?"), "{err}");
}

#[test]
fn capacity_that_falls_short_names_the_replicas_left_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let inv = dir.path().join("fleet.toml");
    assert_eq!(code(&run(&["inventory", "synth", "dgx-h100:1", "-o", inv.to_str().unwrap()])), 0);
    let cat = write(
        dir.path(),
        "c.toml",
        "[[model]]\nname = \"big\"\nreplicas = 2\n[[model.profile]]\nname = \"tp8\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n\
         gpus_per_node = 8\nmin_memory_gb = 99999\n",
    );
    let args = ["capacity", cat.to_str().unwrap(), "-i", inv.to_str().unwrap(), "--add", "dgx-h100", "--max", "4"];
    let out = run(&args);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    assert!(stdout(&out).contains("  big replicas 0-1: has 2015 GB of memory, needs 99999"), "{}", stdout(&out));
    let out = llmgw().args(args).args(["--format", "json"]).output().unwrap();
    let j = json(&out);
    assert_eq!(
        j["left"],
        serde_json::json!([{"model": "big", "replica": 0, "through": 1, "reason": "has 2015 GB of memory, needs 99999"}])
    );
}

#[test]
fn explain_of_a_replica_that_fell_back_says_who_took_the_gpus_it_wanted() {
    let root = root();
    let (cat, inv) = (root.join("catalog/fleet.toml"), root.join("examples/fleet.toml"));
    let args = ["explain-placement", cat.to_str().unwrap(), "--model", "qwen2.5-72b", "-i", inv.to_str().unwrap()];
    let out = run(&args);
    let text = stdout(&out);
    assert!(text.contains("replica 1: placed with profile a100-tp4"), "{text}");
    assert!(text.contains("closest in none/h100-80gb-hbm3 (h100-tp4-zone-a):"), "{text}");
    assert!(text.contains("gpu-h100-02 has 3 free, needs 4; 5 taken in this plan by llama-3.1-8b r3 (GPUs 0) and llama-3.1-70b r2 (GPUs 1-4)"), "{text}");
}

#[test]
fn a_gpu_class_list_serves_one_catalog_for_slurm_and_kubernetes_names() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A Slurm node (gres `h100`) and a GPU Feature Discovery node (`h100-80gb-hbm3`).
    let slurm = write(d, "nodes.txt", "NodeName=s1 State=IDLE Gres=gpu:h100:1 CPUTot=64 RealMemory=512000\n");
    let (s, k, fleet) = (d.join("s.toml"), d.join("k.toml"), d.join("fleet.toml"));
    assert_eq!(code(&run(&["inventory", "import", "slurm", slurm.to_str().unwrap(), "-o", s.to_str().unwrap()])), 0);
    assert_eq!(code(&run(&["inventory", "synth", "dgx-h100:1", "--prefix", "k", "-o", k.to_str().unwrap()])), 0);
    let merge = run(&["inventory", "merge", s.to_str().unwrap(), k.to_str().unwrap(), "-o", fleet.to_str().unwrap()]);
    assert_eq!(code(&merge), 0, "{}", transcript(&merge));
    let profile = |class: &str| {
        format!(
            "[[model]]\nname = \"m\"\nsource = \"org/m\"\nreplicas = 2\n[[model.profile]]\nname = \"tp1\"\nengine = \"vllm\"\n\
             gpu_class = {class}\ngpus_per_node = 1\n"
        )
    };
    // One name: lint says the fleet has the GPU under the other name too.
    let one = write(d, "one.toml", &profile("\"h100-80gb-hbm3\""));
    let out = run(&["lint", one.to_str().unwrap(), "-i", fleet.to_str().unwrap()]);
    assert!(stderr(&out).contains("list them: gpu_class = [\"h100-80gb-hbm3\", \"h100\"]"), "{}", stderr(&out));
    // The list: tried once per class in order, each replica on one class.
    let list = write(d, "list.toml", &profile("[\"h100-80gb-hbm3\", \"h100\"]"));
    let out = run(&["lint", list.to_str().unwrap(), "-i", fleet.to_str().unwrap()]);
    assert!(stderr(&out).contains("0 errors, 0 warnings"), "{}", stderr(&out));
    let out = run(&["place", list.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let j = json(&out);
    let pools: Vec<&str> = j["placements"].as_array().unwrap().iter().map(|p| p["pool"].as_str().unwrap()).collect();
    assert_eq!(pools, ["none/h100-80gb-hbm3", "none/h100"]);
    assert!(j["placements"].as_array().unwrap().iter().all(|p| p["profile"] == "tp1"));
    // Render asks each node for its own gres type.
    let plan = placed_plan(d, &list, &fleet);
    let out = render_plan("slurm", &plan, &list, &fleet, &[]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let text = stdout(&out);
    assert!(text.contains("--gres=gpu:h100:1") && text.contains("--nodelist=s1"), "{text}");
}
