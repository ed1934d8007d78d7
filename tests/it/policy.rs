//! Placement policy beyond the seed's rules (issue 19): replicas sharing a
//! node, closest misses an operator can act on, warnings for classes and
//! MIG profiles the fleet lacks, and runs of unplaced replicas said once.

use std::fmt::Write as _;

use crate::common::*;
use serde_json::{Value, json};

/// Places `catalog` on `inventory` (both TOML), `--format json` with the
/// extra arguments given; returns the plan, checking the exit code.
fn place(catalog: &str, inventory: &str, extra: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let c = write(dir.path(), "catalog.toml", catalog);
    let i = write(dir.path(), "fleet.toml", inventory);
    let mut args = vec!["place", c.to_str().unwrap(), "--inventory", i.to_str().unwrap(), "--format", "json"];
    args.extend_from_slice(extra);
    let out = run(&args);
    let v = json(&out);
    let unplaced = v["summary"]["unplaced"].as_u64().unwrap();
    assert_eq!(code(&out), if unplaced > 0 { 1 } else { 0 }, "{}", transcript(&out));
    v
}

/// `n` H100s, `used` of them held by another model.
fn node(id: &str, n: u32, used: u32) -> String {
    let mut s = format!("[[node]]\nid = \"{id}\"\n");
    for i in 0..n {
        let _ = write!(s, "[[node.gpu]]\nindex = {i}\nname = \"NVIDIA H100 80GB HBM3\"\n");
    }
    if used > 0 {
        let _ = write!(
            s,
            "[[node.allocation]]\nmodel = \"other\"\nreplica = 0\ngpus = {:?}\n",
            (0..used).collect::<Vec<_>>()
        );
    }
    s
}

fn tp1(replicas: u32, per_node: Option<u32>) -> String {
    let k = per_node.map(|k| format!("replicas_per_node = {k}\n")).unwrap_or_default();
    format!(
        "[[model]]\nname = \"m\"\nreplicas = {replicas}\n{k}[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n"
    )
}

/// (replica, node, GPUs) of each placement, in order.
fn placed(v: &Value) -> Vec<(u64, String, Value)> {
    v["placements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let n = &p["nodes"][0];
            (p["replica"].as_u64().unwrap(), n["node"].as_str().unwrap().to_string(), n["gpus"].clone())
        })
        .collect()
}

#[test]
fn small_replicas_pack_onto_a_node_up_to_replicas_per_node() {
    // Four TP1 replicas, nodes with 3 and 5 free GPUs. One per node (the
    // default) leaves two unplaced; two per node places all four, best fit
    // first: the fuller node takes two, then the emptier one.
    let inv = node("a", 8, 5) + &node("b", 8, 3);
    let v = place(&tp1(4, None), &inv, &["--rejections", "full"]);
    assert_eq!(v["summary"]["placed"], 2);
    let v = place(&tp1(4, Some(2)), &inv, &[]);
    let want = vec![
        (0, "a".to_string(), json!([5])),
        (1, "a".to_string(), json!([6])),
        (2, "b".to_string(), json!([3])),
        (3, "b".to_string(), json!([4])),
    ];
    assert_eq!(placed(&v), want);
    let v = place(&tp1(4, Some(3)), &inv, &[]);
    let nodes: Vec<String> = placed(&v).into_iter().map(|p| p.1).collect();
    assert_eq!(nodes, ["a", "a", "a", "b"]);
}

#[test]
fn a_node_holding_k_replicas_is_avoided_with_its_own_reason() {
    // a runs replica 0 and a surplus replica 9: two of m, as many as it may
    // hold; b runs replica 1: it may take one more, and does.
    let inv = node("a", 8, 0)
        + "[[node.allocation]]\nmodel = \"m\"\nreplica = 0\ngpus = [0]\n\
           [[node.allocation]]\nmodel = \"m\"\nreplica = 9\ngpus = [1]\n"
        + &node("b", 2, 0)
        + "[[node.allocation]]\nmodel = \"m\"\nreplica = 1\ngpus = [0]\n";
    let v = place(&tp1(4, Some(2)), &inv, &["--rejections", "full"]);
    assert_eq!(placed(&v), vec![(2, "b".to_string(), json!([1]))]);
    let u = &v["unplaced"][0];
    assert_eq!(u["replica"], 3);
    assert_eq!(
        u["rejections"],
        json!([
            {"profile": "p", "pool": "none/h100-80gb-hbm3", "node": "a",
             "reason": "already hosts 2 replicas of this model (replicas_per_node = 2)"},
            {"profile": "p", "pool": "none/h100-80gb-hbm3", "node": "b",
             "reason": "already hosts 2 replicas of this model (replicas_per_node = 2)"}
        ])
    );
    // k = 1 keeps the seed's words.
    let v = place(&tp1(3, None), &node("a", 8, 0), &["--rejections", "full"]);
    assert_eq!(
        v["unplaced"][0]["rejections"][0]["reason"],
        "already hosts this model; spreading across failure domains"
    );
}

#[test]
fn a_multi_node_replica_counts_once_on_each_of_its_nodes() {
    let catalog = "[[model]]\nname = \"m\"\nreplicas = 3\nreplicas_per_node = 2\n\
        [[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 2\nnodes = 2\n";
    let fabric = "[[node.fabric]]\nname = \"ib\"\n";
    let inv = node("a", 8, 0) + fabric + &node("b", 8, 0) + fabric;
    let v = place(catalog, &inv, &["--rejections", "full"]);
    // Two replicas across a and b, each counted on both; the third finds
    // both nodes at two.
    assert_eq!(v["summary"]["placed"], 2);
    let reasons: Vec<&str> =
        v["unplaced"][0]["rejections"].as_array().unwrap().iter().map(|r| r["reason"].as_str().unwrap()).collect();
    assert_eq!(
        reasons,
        [
            "already hosts 2 replicas of this model (replicas_per_node = 2)",
            "already hosts 2 replicas of this model (replicas_per_node = 2)",
            "needs 2 nodes, only 0 qualify"
        ]
    );
}

#[test]
fn closest_never_names_a_node_without_the_class_or_the_mig_profile() {
    let a100 = |id: &str| {
        let mut s = format!("[[node]]\nid = \"{id}\"\n");
        for i in 0..8 {
            let _ = write!(s, "[[node.gpu]]\nindex = {i}\nname = \"NVIDIA A100-SXM4-80GB\"\n");
        }
        s
    };
    // h100-mig has the class, every GPU in MIG mode: 0 free, but adding or
    // freeing H100s there is a step an operator can take.
    let h100_mig =
        "[[node]]\nid = \"h100-mig\"\n[[node.gpu]]\nindex = 0\nname = \"NVIDIA H100 80GB HBM3\"\nmig = true\n";
    let inv = a100("a100-b") + &node("h100-a", 8, 6) + h100_mig;
    let catalog = "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"tp4\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 4\n";
    let v = place(catalog, &inv, &[]);
    let nearest: Vec<(&str, u64)> = v["unplaced"][0]["closest"][0]["nearest"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["node"].as_str().unwrap(), n["free"].as_u64().unwrap()))
        .collect();
    assert_eq!(nearest, [("h100-a", 2), ("h100-mig", 0)]);
    // The reasons still name every node.
    assert_eq!(v["unplaced"][0]["reasons"][0]["nodes"], json!(["a100-b", "h100-mig"]));

    // A MIG profile: a GPU of the class in MIG mode with no 1g.10gb device
    // is not near; one whose 1g.10gb devices are all held is.
    let gpu = |id: &str, profile: &str| {
        format!(
            "[[node]]\nid = \"{id}\"\n[[node.gpu]]\nindex = 0\nname = \"NVIDIA A100-SXM4-80GB\"\nmig = true\n\
             [[node.gpu.mig_device]]\nindex = 0\nprofile = \"{profile}\"\nmemory_mb = 9856\n"
        )
    };
    let inv = gpu("big-slices", "3g.40gb")
        + &gpu("held", "1g.10gb")
        + "[[node.allocation]]\nmodel = \"x\"\nreplica = 0\ngpus = [0]\nmig_devices = [0]\n"
        + &a100("whole");
    let catalog = "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"slice\"\nengine = \"vllm\"\ngpu_class = \"a100-sxm4-80gb\"\nmig_profile = \"1g.10gb\"\n";
    let v = place(catalog, &inv, &[]);
    let nearest: Vec<&str> = v["unplaced"][0]["closest"][0]["nearest"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["node"].as_str().unwrap())
        .collect();
    assert_eq!(nearest, ["held"]);
}

#[test]
fn place_and_explain_warn_of_a_class_or_mig_profile_the_fleet_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = r#"
[[model]]
name = "m"
  [[model.profile]]
  name = "typo"
  engine = "vllm"
  gpu_class = "H100"
  priority = 3
  [[model.profile]]
  name = "slice"
  engine = "vllm"
  gpu_class = "h100-80gb-hbm3"
  mig_profile = "1g.10gb"
  priority = 2
  [[model.profile]]
  name = "whole"
  engine = "vllm"
  gpu_class = "h100-80gb-hbm3"
  priority = 1
"#;
    let c = write(dir.path(), "c.toml", catalog);
    let i = write(dir.path(), "fleet.toml", &node("a", 8, 0));
    let (c, i) = (c.to_str().unwrap(), i.to_str().unwrap());
    for args in [
        vec!["place", c, "-i", i, "--format", "json"],
        vec!["place", c, "-i", i],
        vec!["explain-placement", c, "--model", "m", "-i", i, "--format", "json"],
    ] {
        let out = run(&args);
        // The replica places with the third profile: exit 0, a plan on stdout.
        assert_eq!(code(&out), 0, "{}", transcript(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("llmgw::catalog::unknown-gpu-class"), "{err}");
        assert!(err.contains("no node has a `h100` GPU (profile `typo` of `m`)"), "{err}");
        assert!(err.contains("did you mean `h100-80gb-hbm3`?"), "{err}");
        assert!(err.contains("llmgw::catalog::unknown-mig-profile"), "{err}");
        assert!(err.contains("c.toml:7:15") && err.contains("c.toml:13:17"), "spans: {err}");
        assert!(!stdout(&out).contains("llmgw::"), "warnings stay off stdout");
    }
    let v = json(&run(&["place", c, "-i", i, "--format", "json"]));
    assert_eq!(v["placements"][0]["profile"], "whole");
    // lint says the same with --inventory, and exits 0 for warnings.
    let out = run(&["lint", c, "-i", i]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown-gpu-class") && err.contains("unknown-mig-profile"), "{err}");
    // A fleet that has them: not a word.
    let fleet = "[[node]]\nid = \"b\"\n[[node.gpu]]\nindex = 0\nname = \"NVIDIA H100 80GB HBM3\"\nmig = true\n\
                 [[node.gpu.mig_device]]\nindex = 0\nprofile = \"1g.10gb\"\nmemory_mb = 9856\n";
    let i2 = write(dir.path(), "fleet2.toml", fleet);
    let good = write(dir.path(), "good.toml", &catalog.replace("\"H100\"", "\"h100-80gb-hbm3\""));
    let out = run(&["place", good.to_str().unwrap(), "-i", i2.to_str().unwrap(), "--format", "json"]);
    assert!(out.stderr.is_empty(), "{}", transcript(&out));
}

#[test]
fn runs_of_unplaced_replicas_are_one_entry_in_the_grouped_and_none_forms() {
    // Replica 2 runs on a; the others find no room (a holds the model, b
    // is full): 0-1 and 3-5 are two runs, split by the running replica.
    let inv = node("a", 2, 1) + "[[node.allocation]]\nmodel = \"m\"\nreplica = 2\ngpus = [1]\n" + &node("b", 1, 1);
    let catalog = tp1(6, None);
    let grouped = place(&catalog, &inv, &[]);
    let entries: Vec<(Value, Option<&Value>)> =
        grouped["unplaced"].as_array().unwrap().iter().map(|u| (u["replica"].clone(), u.get("through"))).collect();
    assert_eq!(entries, [(json!(0), Some(&json!(1))), (json!(3), Some(&json!(5)))]);
    let u = &grouped["unplaced"][0];
    let keys: Vec<&str> = u.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["model", "replica", "through", "reasons", "closest"]);
    assert_eq!(grouped["summary"]["unplaced"], 5);
    let none = place(&catalog, &inv, &["--rejections", "none"]);
    let keys: Vec<&str> = none["unplaced"][1].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["model", "replica", "through", "closest"]);
    assert_eq!(none["unplaced"].as_array().unwrap().len(), 2);
    // The full form keeps one entry per replica, and no `through`.
    let full = place(&catalog, &inv, &["--rejections", "full"]);
    let replicas: Vec<&Value> = full["unplaced"].as_array().unwrap().iter().map(|u| &u["replica"]).collect();
    assert_eq!(replicas, [&json!(0), &json!(1), &json!(3), &json!(4), &json!(5)]);
    assert!(full["unplaced"].as_array().unwrap().iter().all(|u| u.get("through").is_none()));
    // A run of one is a plain entry.
    let one = place(&tp1(2, None), &node("a", 1, 0), &[]);
    assert_eq!(
        one["unplaced"],
        json!([{
            "model": "m", "replica": 1,
            "reasons": [{"profile": "p", "pool": "none/h100-80gb-hbm3",
                         "reason": "already hosts this model; spreading across failure domains", "count": 1, "nodes": ["a"]}],
            "closest": [{"profile": "p", "pool": "none/h100-80gb-hbm3", "qualify": 0, "needs": 1, "nearest": []}]
        }])
    );
}

#[test]
fn a_hundred_thousand_unplaced_replicas_write_one_entry() {
    let dir = tempfile::tempdir().unwrap();
    let c = write(dir.path(), "c.toml", &tp1(100_000, None));
    let i = write(dir.path(), "fleet.toml", &node("a", 8, 0));
    let out = run(&["place", c.to_str().unwrap(), "-i", i.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 1);
    assert!(out.stdout.len() < 4096, "{} bytes", out.stdout.len());
    let v = json(&out);
    assert_eq!(v["unplaced"][0]["replica"], 1);
    assert_eq!(v["unplaced"][0]["through"], 99_999);
    assert_eq!(v["summary"]["unplaced"], 99_999);
}

#[test]
fn place_to_a_yaml_name_says_place_writes_human_text_or_json() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.yaml");
    let out = run(&["place", "catalog/fleet.toml", "-i", "examples/fleet.toml", "-o", plan.to_str().unwrap()]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("place writes human text or JSON, not YAML"), "{err}");
    assert!(!err.contains("--format"), "no --format was given: {err}");
    assert!(!plan.exists());
}

#[test]
fn fit_hints_name_only_sizes_tensor_parallelism_can_use() {
    let dir = tempfile::tempdir().unwrap();
    // 270 GB of weights need 4.5 GPUs' worth of 0.9 x 80 GB: not 5, but 8.
    let c = write(
        dir.path(),
        "c.toml",
        "[[model]]\nname = \"big\"\nweights_gb = 270\n\
         [[model.profile]]\nname = \"tp1\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n",
    );
    let hint = |inventory: Option<&str>| {
        let mut args = vec!["lint".to_string(), c.to_str().unwrap().to_string(), "--format".into(), "json".into()];
        if let Some(text) = inventory {
            let i = write(dir.path(), "fleet.toml", text);
            args.extend(["-i".to_string(), i.to_str().unwrap().to_string()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let v = json(&run(&args));
        let d = v["diagnostics"].as_array().unwrap().iter().find(|d| d["code"] == "llmgw::fit::too-small").cloned();
        d.unwrap_or_else(|| panic!("no fit error: {v}"))["help"].as_str().unwrap().to_string()
    };
    let h = hint(None);
    assert!(h.ends_with("gpus_per_node = 8 would fit"), "{h}");
    assert!(h.contains("GiB") && !h.contains(" GB;"), "per-GPU sizes in GiB: {h}");
    // Nodes of 6 H100s: 1, 2 or 4 per node, then 4 on more nodes.
    let six: String = node("a", 6, 0).replace("[[node.gpu]]", "[[node.gpu]]\nmemory_mb = 81920");
    let h = hint(Some(&six));
    assert!(h.ends_with("nodes = 2 with gpus_per_node = 4 would fit"), "{h}");
    // Nodes of 4: four per node on two nodes.
    let four = node("a", 4, 0).replace("[[node.gpu]]", "[[node.gpu]]\nmemory_mb = 81920");
    let h = hint(Some(&four));
    assert!(h.ends_with("nodes = 2 with gpus_per_node = 4 would fit"), "{h}");
}

#[test]
fn nodes_labels_memory_and_disk_in_binary_units() {
    let dir = tempfile::tempdir().unwrap();
    let i = write(
        dir.path(),
        "fleet.toml",
        "[[node]]\nid = \"big\"\nmemory_total_mb = 246385\n\
         disk = { path = \"/m\", free_bytes = 1288490188800, total_bytes = 32985348833280 }\n\
         [[node]]\nid = \"slurm-small\"\nmemory_total_mb = 2000\n\
         [[node]]\nid = \"tiny\"\nmemory_total_mb = 512\n",
    );
    let out = stdout(&run(&["nodes", "-i", i.to_str().unwrap()]));
    assert!(out.contains("240 GiB") && out.contains("1200 GiB"), "{out}");
    assert!(out.contains("1.9 GiB") && out.contains("512 MiB"), "{out}");
    assert!(!out.contains(" GB "), "{out}");
}

#[test]
fn capacity_on_the_example_fleet_does_not_depend_on_node_names() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("examples/fleet.toml")).unwrap();
    for prefix in ["", "aa-", "zz-"] {
        let renamed = text.replace("id = \"", &format!("id = \"{prefix}"));
        let i = write(dir.path(), &format!("fleet{prefix}.toml"), &renamed);
        let out = run(&["capacity", "catalog/fleet.toml", "-i", i.to_str().unwrap(), "--add", "dgx-h100@ib-east"]);
        assert_eq!(code(&out), 0, "{}", transcript(&out));
        assert_eq!(
            stdout(&out),
            "add 3 x dgx-h100 on ib-east: 14/14 replicas placed (12 without)\n",
            "prefix {prefix:?}"
        );
    }
}

#[test]
fn capacity_answers_at_once_when_no_added_node_could_help() {
    let dir = tempfile::tempdir().unwrap();
    let c = write(
        dir.path(),
        "c.toml",
        "[[model]]\nname = \"b\"\nreplicas = 1000000\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"b200\"\n",
    );
    let args = ["capacity", c.to_str().unwrap(), "-i", "examples/fleet.toml", "--add", "dgx-h100", "--max", "10000000"];
    let out = run(&args);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    assert_eq!(
        stdout(&out),
        "no dgx-h100 node could hold any profile of the 1000000 unplaced replicas, so adding them cannot help: 0/1000000 replicas placed\n  b replicas 0-999999: has 0 free b200 GPUs, needs 1\n"
    );
    let mut json_args = args.to_vec();
    json_args.extend(["--format", "json"]);
    let v = json(&run(&json_args));
    assert_eq!(
        v,
        json!({"shape": "dgx-h100", "fabric": null, "added": null, "wanted": 1000000, "placed_without": 0, "placed_with": 0,
               "left": [{"model": "b", "replica": 0, "through": 999_999, "reason": "has 0 free b200 GPUs, needs 1"}],
               "models": [{"model": "b", "added": null, "wanted": 1000000, "placed_without": 0}]})
    );
}

/// Starts a long `-o` write through `sh` (which may ignore SIGHUP first),
/// waits for its temporary file, sends `sig`; returns the exit status and
/// whether the temporary file and the target are there afterwards.
fn interrupt_a_write(sig: &str, ignore_hup: bool) -> (std::process::ExitStatus, bool, bool) {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("big.toml");
    let trap = if ignore_hup { "trap '' HUP; " } else { "" };
    let script = format!("{trap}exec \"$0\" inventory synth dgx-h100:60000 -o \"$1\"");
    let mut child = crate::common::default_signals(&mut std::process::Command::new("sh"))
        .args(["-c", &script, env!("CARGO_BIN_EXE_llmgw"), target.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let tmp = loop {
        let found = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .find(|e| e.file_name().to_string_lossy().starts_with(".llmgw-"));
        if let Some(e) = found {
            break e.path();
        }
        assert!(start.elapsed() < Duration::from_secs(30) && child.try_wait().unwrap().is_none(), "no temporary file");
        std::thread::sleep(Duration::from_millis(2));
    };
    crate::common::signal(&child, sig);
    let status = child.wait().unwrap();
    (status, tmp.exists(), target.exists())
}

#[test]
fn sighup_removes_the_temporary_file_unless_it_was_ignored_from_the_start() {
    let (status, tmp_left, target_left) = interrupt_a_write("HUP", false);
    assert!(status.code().is_none(), "ended by the signal: {status:?}");
    assert!(!tmp_left && !target_left);
    // Under nohup (SIGHUP ignored when llmgw starts) the write carries on.
    let (status, tmp_left, target_left) = interrupt_a_write("HUP", true);
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(!tmp_left && target_left);
}

#[test]
fn man_pages_say_what_each_exit_code_means_for_their_command() {
    let pages = llmgw::commands::generate::man_pages().unwrap();
    let exit_status = |name: &str| {
        let text = String::from_utf8_lossy(&pages.iter().find(|(n, _)| n == name).unwrap().1).into_owned();
        let start = text.find(".SH \"EXIT STATUS\"").unwrap();
        let end = start + text[start..].find(".SH ENVIRONMENT").unwrap();
        text[start..end].to_string()
    };
    assert!(exit_status("llmgw-place.1").contains("replica was left unplaced"));
    assert!(exit_status("llmgw-diff.1").contains("moved"));
    assert!(exit_status("llmgw-capacity.1").contains(r"\-\-max"));
    assert!(exit_status("llmgw-lint.1").contains(r"\-\-deny\-warnings"));
    // nodes never answers no: no exit code 1 on its page.
    assert!(!exit_status("llmgw-nodes.1").contains("\\fB1\\fR"), "{}", exit_status("llmgw-nodes.1"));
    let distinct: std::collections::BTreeSet<String> = pages.iter().map(|(n, _)| exit_status(n)).collect();
    assert!(distinct.len() >= 8, "{} distinct EXIT STATUS sections", distinct.len());
}

#[test]
fn completions_offer_the_shapes_for_capacity_add_and_inventory_synth() {
    // clap_complete writes values for these three; elvish and PowerShell
    // complete flags only.
    use clap_complete::Shell;
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        let text = String::from_utf8(llmgw::commands::generate::completions(shell)).unwrap();
        for shape in ["dgx-h100", "hgx-a100", "l40s-pcie", "pcie-a100-pairs"] {
            assert!(text.contains(shape), "{shell:?} completions lack {shape}");
        }
    }
    let bash = String::from_utf8(llmgw::commands::generate::completions(Shell::Bash)).unwrap();
    let add = bash.find("--add)").expect("bash completes --add");
    assert!(bash[add..add + 300].contains("dgx-h100"), "{}", &bash[add..add + 300]);
}
