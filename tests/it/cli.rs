//! The commands on the shipped examples, as a new user would run them.

use crate::common::*;

const CATALOG: &str = "catalog/fleet.toml";
const FLEET: &str = "examples/fleet.toml";

#[test]
fn place_human_on_the_examples() {
    let out = run(&["place", CATALOG, "--inventory", FLEET]);
    assert_eq!(code(&out), 1, "the example fleet leaves two replicas unplaced on purpose");
    insta::assert_snapshot!(transcript(&out));
}

#[test]
fn place_json_on_the_examples() {
    // --rejections full is the seed's form: with `closest` taken out, the
    // same bytes as before grouped reasons and closest misses existed.
    let out = run(&["place", CATALOG, "--inventory", FLEET, "--format", "json", "--rejections", "full"]);
    assert_eq!(code(&out), 1);
    let mut v = json(&out);
    for u in v["unplaced"].as_array_mut().unwrap() {
        assert!(u.as_object_mut().unwrap().remove("closest").is_some());
    }
    insta::assert_snapshot!(serde_json::to_string_pretty(&v).unwrap() + "\n");
}

#[test]
fn place_json_groups_reasons_by_default() {
    let out = run(&["place", CATALOG, "--inventory", FLEET, "--format", "json"]);
    assert_eq!(code(&out), 1);
    insta::assert_snapshot!(stdout(&out));
    let v = json(&out);
    let full = json(&run(&["place", CATALOG, "--inventory", FLEET, "--format", "json", "--rejections", "full"]));
    for (g, f) in v["unplaced"].as_array().unwrap().iter().zip(full["unplaced"].as_array().unwrap()) {
        assert!(g.get("rejections").is_none() && f.get("reasons").is_none());
        assert_eq!(g["closest"], f["closest"]);
        // Per pool, the grouped counts add up to the full list's rejections.
        let mut per_pool: std::collections::BTreeMap<(String, String), u64> = Default::default();
        for r in f["rejections"].as_array().unwrap() {
            *per_pool.entry((r["profile"].to_string(), r["pool"].to_string())).or_default() += 1;
        }
        for r in g["reasons"].as_array().unwrap() {
            let e = per_pool.get_mut(&(r["profile"].to_string(), r["pool"].to_string())).unwrap();
            *e -= r["count"].as_u64().unwrap();
            assert_eq!(r["count"].as_u64().unwrap() as usize, r["nodes"].as_array().unwrap().len().max(1));
        }
        assert!(per_pool.values().all(|&n| n == 0), "{per_pool:?}");
    }
    let none = json(&run(&["place", CATALOG, "--inventory", FLEET, "--format", "json", "--rejections", "none"]));
    let u = &none["unplaced"][0];
    assert!(u.get("reasons").is_none() && u.get("rejections").is_none() && u.get("closest").is_some());
}

#[test]
fn explain_an_unplaced_replica() {
    let out = run(&["explain-placement", CATALOG, "--model", "deepseek-v3", "--inventory", FLEET]);
    assert_eq!(code(&out), 1);
    insta::assert_snapshot!(transcript(&out));
}

#[test]
fn explain_a_placed_model_verbose() {
    let out = run(&["explain-placement", CATALOG, "--model", "llama-3.1-70b", "--inventory", FLEET, "--verbose"]);
    assert_eq!(code(&out), 0);
    insta::assert_snapshot!(transcript(&out));
}

#[test]
fn explain_one_replica_json() {
    let out = run(&[
        "explain-placement",
        CATALOG,
        "--model",
        "llama-3.1-405b",
        "--replica",
        "1",
        "--inventory",
        FLEET,
        "--format",
        "json",
    ]);
    assert_eq!(code(&out), 1);
    let v = json(&out);
    assert_eq!(v["model"], "llama-3.1-405b");
    assert_eq!(v["replicas"].as_array().unwrap().len(), 1);
    assert_eq!(v["replicas"][0]["replica"], 1);
    assert!(v["replicas"][0]["placement"].is_null());
    // The explanation agrees with what `place` says of the same replica.
    let plan = json(&run(&["place", CATALOG, "--inventory", FLEET, "--format", "json", "--rejections", "full"]));
    let unplaced = plan["unplaced"].as_array().unwrap().iter().find(|u| u["model"] == "llama-3.1-405b").unwrap();
    assert_eq!(unplaced["rejections"], v["replicas"][0]["rejections"]);
}

#[test]
fn explain_replica_out_of_range_is_bad_input() {
    let out = run(&["explain-placement", CATALOG, "--model", "deepseek-v3", "--replica", "5", "--inventory", FLEET]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
}

#[test]
fn nodes_table_and_json() {
    let out = run(&["nodes", "--inventory", FLEET]);
    assert_eq!(code(&out), 0);
    insta::assert_snapshot!(stdout(&out));
    let v = json(&run(&["nodes", "--inventory", FLEET, "--format", "json"]));
    let h1 = &v["nodes"].as_array().unwrap().iter().find(|n| n["id"] == "gpu-h100-01").unwrap()["gpus"][0];
    assert_eq!(h1["free"], 4);
    assert_eq!(h1["total"], 8);
}

#[test]
fn merge_round_trips_through_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let base = json(&run(&["nodes", "--inventory", FLEET, "--format", "json"]));
    for ext in ["toml", "json", "yaml"] {
        let path = dir.path().join(format!("fleet.{ext}"));
        let out = run(&["inventory", "merge", FLEET, "-o", path.to_str().unwrap()]);
        assert_eq!(code(&out), 0, "{}", transcript(&out));
        let again = json(&run(&["nodes", "--inventory", path.to_str().unwrap(), "--format", "json"]));
        assert_eq!(again, base, "{ext}");
        // The same plan, but for the digest of the inventory's bytes.
        let plan = |inv: &str| {
            let mut v = json(&run(&["place", CATALOG, "--inventory", inv, "--format", "json"]));
            v.as_object_mut().unwrap().remove("inputs");
            v
        };
        assert_eq!(plan(path.to_str().unwrap()), plan(FLEET), "{ext}");
    }
}

#[test]
fn several_inventories_merge_for_place() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.toml", "[[node]]\nid = \"a\"\nengines = { \"llama.cpp\" = \"\" }\n");
    let b = write(dir.path(), "b.json", "{\"node\": [{\"id\": \"b\"}]}");
    let cat = write(
        dir.path(),
        "c.yaml",
        "model:\n  - name: m\n    replicas: 2\n    profile:\n      - name: cpu\n        engine: llama.cpp\n",
    );
    let out = run(&[
        "place",
        cat.to_str().unwrap(),
        "-i",
        a.to_str().unwrap(),
        "-i",
        b.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert_eq!(json(&out)["summary"]["placed"], 2);
}

/// Reads a little of the command's output and closes the pipe.
fn close_early(args: &[&str]) {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = llmgw().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // stdout is dropped here: the rest meets a closed pipe.
    let status = child.wait().unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(status.success(), "{args:?}: {status:?} {err}");
    assert!(err.is_empty(), "{args:?}: {err}");
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.json");
    assert_eq!(code(&run(&["inventory", "synth", "dgx-h100:2000", "-o", big.to_str().unwrap()])), 0);
    close_early(&["inventory", "synth", "dgx-h100:2000", "--format", "json"]);
    close_early(&["nodes", "--inventory", big.to_str().unwrap(), "--format", "json"]);
    close_early(&["nodes", "--inventory", big.to_str().unwrap()]);
}

#[test]
fn empty_files_are_empty_catalogs_and_fleets() {
    let dir = tempfile::tempdir().unwrap();
    // Empty JSON agrees with empty TOML and YAML (it used to be an error).
    for name in ["c.toml", "c.yaml", "c.json"] {
        let c = write(dir.path(), name, "");
        let out = run(&["place", c.to_str().unwrap(), "--inventory", c.to_str().unwrap(), "--format", "json"]);
        assert_eq!(code(&out), 0, "{name}: {}", transcript(&out));
        assert_eq!(json(&out)["summary"]["wanted"], 0);
    }
}

#[test]
fn deeply_nested_input_is_refused_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    for (name, text) in [("d.json", deep.clone()), ("d.toml", format!("a = {deep}")), ("d.yaml", format!("a: {deep}"))]
    {
        let f = write(dir.path(), name, &text);
        let out = run(&["nodes", "--inventory", f.to_str().unwrap()]);
        assert_eq!(code(&out), 2, "{name}");
        let out = run(&["lint", f.to_str().unwrap()]);
        assert_eq!(code(&out), 1, "{name}");
    }
}

#[test]
fn nodes_selector_keeps_the_nodes_carrying_every_label() {
    let out = run(&["nodes", "-i", "examples/fleet.toml", "--selector", "zone=b", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let ids: Vec<String> =
        json(&out)["nodes"].as_array().unwrap().iter().map(|n| n["id"].as_str().unwrap().to_string()).collect();
    assert_eq!(ids, ["cpu-02", "cpu-03", "gpu-a100-02", "gpu-a100-03", "gpu-h100-04", "gpu-h100-05", "gpu-h100-06"]);
    let out = run(&["nodes", "-i", "examples/fleet.toml", "-l", "zone=b", "-l", "role=cpu", "--wide"]);
    assert!(stdout(&out).ends_with("\n2 of 13 nodes\n"), "{}", transcript(&out));
    assert!(stdout(&out).contains("role=cpu"), "{}", transcript(&out));
    let out = run(&["nodes", "-i", "examples/fleet.toml", "--selector", "zone"]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
}

#[test]
fn lint_checks_an_inventory_alone_and_against_catalogs() {
    let dir = tempfile::tempdir().unwrap();
    let inv = write(
        dir.path(),
        "fleet.toml",
        "[[node]]\nid = \"a\"\n[[node.gpu]]\nindex = 0\nname = \"NVIDIA B200\"\n[[node.fabric]]\nname = \"ib-sm1\"\nhcas = [\"mlx5_0\"]\n",
    );
    let out = run(&["lint", inv.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let codes: Vec<String> =
        json(&out)["diagnostics"].as_array().unwrap().iter().map(|d| d["code"].as_str().unwrap().to_string()).collect();
    assert_eq!(codes, ["llmgw::inventory::no-state", "llmgw::inventory::default-prefix-fabric"]);
    // With a catalog, a GPU class nobody asks for is pointed out too.
    let out = run(&["lint", inv.to_str().unwrap(), "catalog/fleet.toml", "--format", "json"]);
    assert!(stdout(&out).contains("llmgw::inventory::unused-gpu-class"), "{}", transcript(&out));
    let out = run(&["lint", inv.to_str().unwrap(), "catalog/fleet.toml", "--deny-warnings"]);
    assert_eq!(code(&out), 1);
    assert!(String::from_utf8_lossy(&out.stderr).ends_with("2 files: 0 errors, 3 warnings\n"), "{}", transcript(&out));
    // An inventory that does not load is a lint error, not unusable input.
    let out = run(&["lint", "tests/data/bad/duplicate-node.toml"]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    // The example fleet is clean.
    let out = run(&["lint", "examples/fleet.toml", "catalog/fleet.toml", "--deny-warnings"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
}

#[test]
fn lint_says_which_profiles_cannot_hold_their_model_and_what_would() {
    let dir = tempfile::tempdir().unwrap();
    let c = write(
        dir.path(),
        "c.toml",
        "[[model]]\nname = \"llama-3.1-405b\"\nparams_b = 405.9\n\
         [[model.profile]]\nname = \"tp4\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 4\npriority = 2\n\
         [[model.profile]]\nname = \"tp8\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\npriority = 1\n\
         [[model.profile]]\nname = \"2x8\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\nnodes = 2\n\
         [[model]]\nname = \"llama-3.1-70b\"\nparams_b = 70.6\n\
         [[model.profile]]\nname = \"tp2\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 2\n",
    );
    // Without a fleet, the 80gb in the class name is the GPU's memory.
    let out = run(&["lint", c.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    let v = json(&out);
    let d = v["diagnostics"].as_array().unwrap();
    let brief: Vec<(&str, &str)> =
        d.iter().map(|d| (d["code"].as_str().unwrap(), d["help"].as_str().unwrap())).collect();
    // 405B in bf16: 812 GB of weights, more than 4 or 8 GPUs hold; 2 x 8 do.
    assert_eq!(brief.len(), 3, "{brief:?}");
    assert_eq!(brief[0].0, "llmgw::fit::too-small");
    assert!(brief[0].1.ends_with("nodes = 2 with gpus_per_node = 8 would fit"), "{brief:?}");
    assert_eq!(brief[1].0, "llmgw::fit::too-small");
    // 70B on 2 GPUs: the weights fit, the room to serve them does not.
    assert_eq!(brief[2].0, "llmgw::fit::margins");
    assert!(brief[2].1.ends_with("gpus_per_node = 4 would fit"), "{brief:?}");
    // With the example fleet, its H100s' real memory is used; the verdicts stand.
    let out = run(&["lint", c.to_str().unwrap(), "--inventory", "examples/fleet.toml"]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(err.contains("does not fit on 4 h100-80gb-hbm3 GPUs (profile `tp4`)"), "{err}");
    assert!(err.contains("1 catalog: 2 errors, 1 warning"), "{err}");
}

#[test]
fn a_mig_profile_is_one_gpu_on_one_node() {
    let dir = tempfile::tempdir().unwrap();
    let c = write(
        dir.path(),
        "c.toml",
        "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"a100-sxm4-80gb\"\n\
         mig_profile = \"1g.10gb\"\ngpus_per_node = 2\n",
    );
    let out = run(&["lint", c.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    assert_eq!(json(&out)["diagnostics"][0]["code"], "llmgw::catalog::mig-profile-shape");
    let out = run(&["place", c.to_str().unwrap(), "--inventory", "examples/fleet.toml"]);
    assert_eq!(code(&out), 2, "a lint error makes the catalog unusable for place");
}

fn plan_json(placed: &[(&str, u32, &str, &[u32])], unplaced: &[(&str, u32)]) -> String {
    let p: Vec<serde_json::Value> = placed
        .iter()
        .map(|(m, r, node, gpus)| {
            serde_json::json!({"model": m, "replica": r, "profile": "p", "engine": "vllm", "pool": "none/x", "fabric": null,
                "nodes": [{"node": node, "rank": 0, "gpus": gpus, "hcas": []}]})
        })
        .collect();
    // The unplaced in either form: grouped reasons or the full list.
    let u: Vec<serde_json::Value> = unplaced
        .iter()
        .enumerate()
        .map(|(i, (m, r))| {
            if i % 2 == 0 {
                serde_json::json!({"model": m, "replica": r, "reasons": [], "closest": []})
            } else {
                serde_json::json!({"model": m, "replica": r, "rejections": [], "closest": []})
            }
        })
        .collect();
    serde_json::json!({"placements": p, "unplaced": u, "summary": {}}).to_string()
}

#[test]
fn diff_says_what_moved_was_placed_unplaced_or_removed() {
    let dir = tempfile::tempdir().unwrap();
    let old = write(
        dir.path(),
        "old.json",
        &plan_json(
            &[("a", 0, "n1", &[0, 1]), ("b", 0, "n2", &[0]), ("c", 0, "n3", &[4]), ("d", 0, "n1", &[2])],
            &[("e", 0), ("f", 0)],
        ),
    );
    let new = write(
        dir.path(),
        "new.json",
        &plan_json(
            &[("a", 0, "n1", &[0, 1]), ("b", 0, "n2", &[1]), ("e", 0, "n4", &[0]), ("g", 0, "n5", &[0])],
            &[("c", 0), ("f", 0), ("h", 0)],
        ),
    );
    let out = run(&["diff", old.to_str().unwrap(), new.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    assert_eq!(
        json(&out),
        serde_json::json!({
            "moved": [{"model": "b", "replica": 0, "old": [{"node": "n2", "gpus": [0]}], "new": [{"node": "n2", "gpus": [1]}]}],
            "placed": [{"model": "e", "replica": 0, "new": [{"node": "n4", "gpus": [0]}]},
                       {"model": "g", "replica": 0, "new": [{"node": "n5", "gpus": [0]}]}],
            "unplaced": [{"model": "c", "replica": 0, "old": [{"node": "n3", "gpus": [4]}]},
                         {"model": "h", "replica": 0, "old": null}],
            "removed": [{"model": "d", "replica": 0, "old": [{"node": "n1", "gpus": [2]}]}],
            "unchanged": 2
        })
    );
    let human = run(&["diff", old.to_str().unwrap(), new.to_str().unwrap()]);
    assert!(
        stdout(&human).ends_with("1 moved, 2 placed, 2 unplaced, 1 removed, 2 unchanged\n"),
        "{}",
        transcript(&human)
    );
    let same = run(&["diff", old.to_str().unwrap(), old.to_str().unwrap()]);
    assert_eq!(code(&same), 0);
    assert_eq!(stdout(&same), "No placement differs (6 unchanged).\n");
}

#[test]
fn diff_sees_an_engine_or_profile_change_on_the_same_gpus() {
    let dir = tempfile::tempdir().unwrap();
    let old = plan_json(&[("a", 0, "n1", &[0, 1]), ("b", 0, "n2", &[0])], &[]);
    let new = old.replace(r#""profile":"p","engine":"vllm","#, r#""profile":"p","engine":"sglang","#);
    let mut v: serde_json::Value = serde_json::from_str(&new).unwrap();
    v["placements"][1]["engine"] = "vllm".into();
    v["placements"][1]["profile"] = "q".into();
    let (old, new) = (write(dir.path(), "old.json", &old), write(dir.path(), "new.json", &v.to_string()));
    let out = run(&["diff", old.to_str().unwrap(), new.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    let d = json(&out);
    assert_eq!(d["moved"][0]["engine"], serde_json::json!({"old": "vllm", "new": "sglang"}), "{d}");
    assert_eq!(d["moved"][1]["profile"], serde_json::json!({"old": "p", "new": "q"}), "{d}");
    assert_eq!(d["unchanged"], 0);
}

#[test]
fn diff_refuses_a_plan_that_lists_a_replica_twice() {
    let dir = tempfile::tempdir().unwrap();
    let twice = write(dir.path(), "twice.json", &plan_json(&[("a", 0, "n1", &[0]), ("a", 0, "n2", &[1])], &[("a", 1)]));
    let runs = write(
        dir.path(),
        "runs.json",
        r#"{"placements": [], "unplaced": [{"model": "a", "replica": 0, "through": 9}, {"model": "a", "replica": 5}]}"#,
    );
    for f in [&twice, &runs] {
        let out = run(&["diff", f.to_str().unwrap(), f.to_str().unwrap()]);
        assert_eq!(code(&out), 2, "{}", transcript(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("llmgw::plan::duplicate-replica") && err.contains("listed again here"), "{err}");
        assert!(err.contains(&format!("{}:1:", f.file_name().unwrap().to_str().unwrap())), "{err}");
    }
    // A run stands for each of its replicas.
    let a =
        write(dir.path(), "a.json", r#"{"placements": [], "unplaced": [{"model": "a", "replica": 0, "through": 2}]}"#);
    let b = write(dir.path(), "b.json", &plan_json(&[("a", 1, "n1", &[0])], &[("a", 0), ("a", 2)]));
    let out = run(&["diff", a.to_str().unwrap(), b.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    assert_eq!(json(&out)["unchanged"], 2);
    assert_eq!(json(&out)["placed"][0]["replica"], 1);
}

#[test]
fn diff_of_two_real_plans_and_of_a_file_that_is_no_plan() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    run(&["place", CATALOG, "-i", FLEET, "-o", a.to_str().unwrap()]);
    run(&["place", CATALOG, "-i", FLEET, "-o", b.to_str().unwrap(), "--rejections", "full"]);
    let out = run(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "either rejection form: {}", transcript(&out));
    let out = run(&["diff", a.to_str().unwrap(), FLEET]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a plan"), "{}", transcript(&out));
}

#[test]
fn capacity_on_the_example_fleet() {
    let out = run(&["capacity", CATALOG, "-i", FLEET, "--add", "dgx-h100@ib-east"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert_eq!(stdout(&out), "add 3 x dgx-h100 on ib-east: 14/14 replicas placed (12 without)\n");
    let out = run(&["capacity", CATALOG, "-i", FLEET, "--add", "cpu", "--max", "8", "--format", "json"]);
    assert_eq!(code(&out), 1, "CPU nodes never hold the GPU replicas: {}", transcript(&out));
    assert_eq!(
        json(&out),
        serde_json::json!({"shape": "cpu", "fabric": null, "added": null, "wanted": 14, "placed_without": 12, "placed_with": 12,
            "left": [{"model": "llama-3.1-405b", "replica": 1, "reason": "does not have vllm installed"},
                     {"model": "deepseek-v3", "replica": 0, "reason": "its profiles span nodes of one fabric; the added nodes are on none (give --add SHAPE@FABRIC)"}],
            // Each model alone: only deepseek-v3 does not place, and CPU
            // nodes cannot hold it; the 405B places alone, with room.
            "models": [
                {"model": "llama-3.1-8b", "added": 0, "wanted": 4, "placed_without": 4},
                {"model": "llama-3.1-70b", "added": 0, "wanted": 3, "placed_without": 3},
                {"model": "qwen2.5-72b", "added": 0, "wanted": 2, "placed_without": 2},
                {"model": "llama-3.1-405b", "added": 0, "wanted": 2, "placed_without": 2},
                {"model": "deepseek-v3", "added": null, "wanted": 1, "placed_without": 0},
                {"model": "qwen2.5-7b-gguf", "added": 0, "wanted": 2, "placed_without": 2}]})
    );
    let out = run(&["capacity", CATALOG, "-i", FLEET, "--add", "dgx-h10"]);
    assert_eq!(code(&out), 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("did you mean `dgx-h100`?"), "{}", transcript(&out));
}

#[test]
fn cpus_and_allocation_profiles_survive_a_merge_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "n.toml",
        "[[node]]\nid = \"n1\"\ncpus = 96\n[[node.gpu]]\nindex = 0\nname = \"NVIDIA H100 80GB HBM3\"\n\
         [[node.allocation]]\nmodel = \"m\"\nreplica = 0\ngpus = [0]\ncpus = 12\nprofile = \"tp1\"\n\
         [[node.allocation]]\nmodel = \"pod:ns/x\"\nreplica = 0\ncpus = 0.5\n",
    );
    for ext in ["toml", "json", "yaml"] {
        let out_file = dir.path().join(format!("out.{ext}"));
        let out = run(&["inventory", "merge", f.to_str().unwrap(), "-o", out_file.to_str().unwrap()]);
        assert_eq!(code(&out), 0, "{}", transcript(&out));
        let back = run(&["nodes", "-i", out_file.to_str().unwrap(), "--format", "json"]);
        assert_eq!(code(&back), 0, "{}", transcript(&back));
        let text = std::fs::read_to_string(&out_file).unwrap();
        assert!(text.contains("96") && text.contains("tp1") && text.contains("0.5"), "{ext}: {text}");
        assert!(!text.contains("12.0"), "a whole CPU count is written whole: {text}");
    }
    let bad = write(
        dir.path(),
        "bad.toml",
        "[[node]]\nid = \"n1\"\n[[node.allocation]]\nmodel = \"m\"\nreplica = 0\ncpus = -1\n",
    );
    let out = run(&["nodes", "-i", bad.to_str().unwrap()]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.toml:6:8"), "{}", transcript(&out));
}
