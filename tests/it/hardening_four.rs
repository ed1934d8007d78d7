//! Hardening, fourth round: the classes a probe of the newest surfaces
//! found in render, lint and load, and discover. Each test is named after
//! what it pins; each failed on the code before its fix.

use std::fmt::Write as _;
use std::process::Command;

use serde_json::Value;

use crate::common::*;

/// A GPU node of `gpus` H100s (each with a UUID) on fabric `ib`.
fn h100_node(id: &str, gpus: u32) -> String {
    let mut s = format!("[[node]]\nid = \"{id}\"\nstate = \"ready\"\nengines = {{ vllm = \"0.11.1\" }}\n");
    for g in 0..gpus {
        let _ = write!(
            s,
            "[[node.gpu]]\nindex = {g}\nname = \"NVIDIA H100 80GB HBM3\"\nmemory_mb = 81559\nuuid = \"GPU-{:08x}-1111-2222-3333-{g:012x}\"\n",
            id.bytes().map(u32::from).sum::<u32>()
        );
    }
    s.push_str("[[node.fabric]]\nname = \"ib\"\n");
    s
}

/// Coreutils' `timeout`, found on this process's PATH (a test may give
/// llmgw another one).
fn timeout() -> std::path::PathBuf {
    std::env::var_os("PATH")
        .and_then(|p| std::env::split_paths(&p).map(|d| d.join("timeout")).find(|t| t.is_file()))
        .expect("coreutils' timeout on PATH")
}

/// `llmgw ARGS` that may not run longer than `secs` (a hang is a failure,
/// never a stuck test run).
fn bounded(secs: u32, args: &[&str]) -> std::process::Output {
    Command::new(timeout())
        .arg(secs.to_string())
        .arg(env!("CARGO_BIN_EXE_llmgw"))
        .args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

#[test]
fn a_cel_selector_past_the_apis_limit_is_refused_not_rendered() {
    let dir = tempfile::tempdir().unwrap();
    let fleet: String = (0..33).map(|i| h100_node(&format!("n{i:02}"), 8)).collect();
    let fleet = write(dir.path(), "fleet.toml", &fleet);
    let catalog = write(
        dir.path(),
        "catalog.toml",
        "[[model]]\nname = \"big\"\n[[model.profile]]\nname = \"pp32\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\nnodes = 32\n",
    );
    let plan = placed_plan(dir.path(), &catalog, &fleet);
    let out_dir = dir.path().join("out");
    let out =
        render_plan("kubernetes", &plan, &catalog, &fleet, &["--devices", "dra", "-o", out_dir.to_str().unwrap()]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    let err = flat(&out.stderr);
    assert!(err.contains("llmgw::render::cel-too-long"), "{err}");
    assert!(err.contains("big r0: its workers' DRA claim template would select its 31 nodes' GPUs"), "{err}");
    assert!(err.contains("more than the 10240 the API takes"), "{err}");
    assert!(!out_dir.exists(), "nothing written");
    // Eight nodes' selector fits: rendered.
    let small =
        write(dir.path(), "small.toml", &std::fs::read_to_string(&catalog).unwrap().replace("nodes = 32", "nodes = 8"));
    let plan = placed_plan(dir.path(), &small, &fleet);
    let out = render_plan("kubernetes", &plan, &small, &fleet, &["--devices", "dra"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    for doc in crate::render::documents(&stdout(&out)).iter().filter(|d| d["kind"] == "ResourceClaimTemplate") {
        let cel = doc["spec"]["spec"]["devices"]["requests"][0]["exactly"]["selectors"][0]["cel"]["expression"]
            .as_str()
            .unwrap();
        assert!(cel.len() <= 10 * 1024, "{}", cel.len());
    }
}

/// The names of the objects rendered for `model` r0 (Deployment,
/// Service), from a render's stream.
fn names_of(stream: &str, model: &str) -> Vec<String> {
    crate::render::documents(stream)
        .iter()
        .filter(|d| d["metadata"]["annotations"]["llmgw.io/model"] == model && d["kind"] != "Service")
        .map(|d| format!("{}/{}", d["kind"].as_str().unwrap(), d["metadata"]["name"].as_str().unwrap()))
        .collect()
}

#[test]
fn a_model_named_like_a_running_one_does_not_rename_its_objects() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = write(dir.path(), "fleet.toml", &(h100_node("n1", 8) + &h100_node("n2", 8)));
    let one = "[[model]]\nname = \"Llama-3\"\n[[model.profile]]\nname = \"tp1\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n";
    let catalog = write(dir.path(), "one.toml", one);
    let plan = placed_plan(dir.path(), &catalog, &fleet);
    let out = render_plan("kubernetes", &plan, &catalog, &fleet, &[]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let before = names_of(&stdout(&out), "Llama-3");
    assert!(!before.is_empty());
    // It runs where it was placed; a model whose name sanitises alike is
    // added (before it in the catalog).
    let placed: Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    let at = &placed["placements"][0]["nodes"][0];
    let gpus = at["gpus"].to_string();
    let node = at["node"].as_str().unwrap();
    let fleet_text = std::fs::read_to_string(&fleet).unwrap().replace(
        &format!("id = \"{node}\"\n"),
        &format!(
            "id = \"{node}\"\nallocation = [{{ model = \"Llama-3\", replica = 0, profile = \"tp1\", gpus = {gpus} }}]\n"
        ),
    );
    let running = write(dir.path(), "running.toml", &fleet_text);
    let two = write(dir.path(), "two.toml", &format!("{}\n{one}", one.replace("Llama-3", "llama.3")));
    let plan = dir.path().join("plan2.json");
    let out = run(&["place", two.to_str().unwrap(), "-i", running.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let out = render_plan("kubernetes", &plan, &two, &running, &[]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let stream = stdout(&out);
    assert_eq!(names_of(&stream, "Llama-3"), before, "the running replica keeps its objects' names");
    assert_ne!(names_of(&stream, "llama.3"), before);
}

#[test]
fn a_node_id_that_is_no_host_name_is_never_a_urls_host() {
    let dir = tempfile::tempdir().unwrap();
    let evil = "user@evil.example:443/x?";
    let fleet = write(dir.path(), "fleet.toml", &h100_node(evil, 8));
    let catalog = write(
        dir.path(),
        "catalog.toml",
        "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n",
    );
    let plan = placed_plan(dir.path(), &catalog, &fleet);
    let endpoints = dir.path().join("litellm.yaml");
    let out = render_plan(
        "slurm",
        &plan,
        &catalog,
        &fleet,
        &["--endpoints", endpoints.to_str().unwrap(), "--endpoints-format", "litellm"],
    );
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(flat(&out.stderr).contains("llmgw::render::not-a-host"), "{}", transcript(&out));
    assert!(!endpoints.exists(), "no LiteLLM config sends the model's prompts elsewhere");
    // An IPv6 address is a host, in brackets.
    let v6 = write(dir.path(), "v6.toml", &h100_node("fd00::7", 8));
    let plan = placed_plan(dir.path(), &catalog, &v6);
    let out = render_plan("slurm", &plan, &catalog, &v6, &["--endpoints", endpoints.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert!(std::fs::read_to_string(&endpoints).unwrap().contains("http://[fd00::7]:8000"));
}

#[test]
fn endpoints_inside_the_render_folder_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = write(dir.path(), "fleet.toml", &h100_node("n1", 8));
    let catalog = write(
        dir.path(),
        "catalog.toml",
        "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n",
    );
    let plan = placed_plan(dir.path(), &catalog, &fleet);
    let out_dir = dir.path().join("out");
    for kind in ["kubernetes", "slurm"] {
        let out = render_plan(kind, &plan, &catalog, &fleet, &["-o", out_dir.to_str().unwrap()]);
        assert_eq!(code(&out), 0, "{}", transcript(&out));
        let before = files(&out_dir);
        let inside = out_dir.join(&before[0]);
        let out = render_plan(
            kind,
            &plan,
            &catalog,
            &fleet,
            &["-o", out_dir.to_str().unwrap(), "--endpoints", inside.to_str().unwrap()],
        );
        assert_eq!(code(&out), 2, "{kind}: {}", transcript(&out));
        assert!(flat(&out.stderr).contains("llmgw::render::endpoints-in-folder"), "{}", transcript(&out));
        assert_eq!(files(&out_dir), before, "nothing written");
        assert!(!std::fs::read_to_string(&inside).unwrap().starts_with('{'), "the rendered file is untouched");
        std::fs::remove_dir_all(&out_dir).unwrap();
    }
}

#[test]
fn the_render_folder_keeps_its_group_and_setgid_when_swapped() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let fleet = write(dir.path(), "fleet.toml", &h100_node("n1", 8));
    let catalog = write(
        dir.path(),
        "catalog.toml",
        "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n",
    );
    let plan = placed_plan(dir.path(), &catalog, &fleet);
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    // A team's folder: another group, setgid so its files get that group.
    let gid = 4242;
    if std::os::unix::fs::chown(&out_dir, None, Some(gid)).is_err() {
        eprintln!("SKIPPED: a folder of another group needs root here; `.ci/run` runs the tests as root");
        return;
    }
    std::fs::set_permissions(&out_dir, std::fs::Permissions::from_mode(0o2775)).unwrap();
    for _ in 0..2 {
        let out = render_plan("kubernetes", &plan, &catalog, &fleet, &["-o", out_dir.to_str().unwrap()]);
        assert_eq!(code(&out), 0, "{}", transcript(&out));
        let m = std::fs::metadata(&out_dir).unwrap();
        assert_eq!(m.gid(), gid, "the folder keeps its group");
        assert_eq!(m.mode() & 0o7777, 0o2775, "and its setgid mode");
        for f in files(&out_dir) {
            assert_eq!(std::fs::metadata(out_dir.join(&f)).unwrap().gid(), gid, "{f} has the folder's group");
        }
    }
}

/// A node whose GPU 0 is in MIG mode with seven 1g.10gb devices.
fn mig_node(allocations: &str) -> String {
    let mut s = String::from("[[node]]\nid = \"n1\"\nstate = \"ready\"\n");
    s.push_str(allocations);
    s.push_str("[[node.gpu]]\nindex = 0\nname = \"NVIDIA H100 80GB HBM3\"\nmemory_mb = 81559\nmig = true\n");
    for m in 0..7 {
        let _ = write!(s, "[[node.gpu.mig_device]]\nindex = {m}\nprofile = \"1g.10gb\"\nmemory_mb = 9984\n");
    }
    s
}

#[test]
fn a_mig_gpu_held_whole_frees_none_of_its_devices_and_held_both_ways_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = write(
        dir.path(),
        "catalog.toml",
        "[[model]]\nname = \"small\"\n[[model.profile]]\nname = \"mig\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\nmig_profile = \"1g.10gb\"\n",
    );
    // Held whole: no MIG replica is added on it.
    let whole =
        write(dir.path(), "whole.toml", &mig_node("allocation = [{ model = \"pod:x/y\", replica = 0, gpus = [0] }]\n"));
    let out = run(&["place", catalog.to_str().unwrap(), "-i", whole.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    assert!(json(&out)["placements"].as_array().unwrap().is_empty(), "{}", transcript(&out));
    // Held whole and one of its devices held too: refused, by lint and place alike.
    let both = write(
        dir.path(),
        "both.toml",
        &mig_node(
            "allocation = [{ model = \"pod:x/y\", replica = 0, gpus = [0] }, { model = \"pod:x/z\", replica = 0, gpus = [0], mig_devices = [2] }]\n",
        ),
    );
    let out = run(&["lint", both.to_str().unwrap()]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    assert!(
        flat(&out.stderr).contains("GPU 0 of node `n1` is held whole while its MIG device 2 is held too"),
        "{}",
        transcript(&out)
    );
    let out = run(&["place", catalog.to_str().unwrap(), "-i", both.to_str().unwrap()]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(flat(&out.stderr).contains("llmgw::inventory::mig-held-whole"), "{}", transcript(&out));
}

#[test]
fn a_max_model_len_past_the_models_own_is_a_lint_error() {
    let dir = tempfile::tempdir().unwrap();
    let models = root().join("tests/data/models");
    let catalog = |len: u32, config: &str| {
        format!(
            "[[model]]\nname = \"m\"\nparams_b = 8.0\nconfig = \"{}\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\nmax_model_len = {len}\n",
            models.join(config).display()
        )
    };
    // Qwen2.5-72B ships no rope scaling: 32768 tokens.
    let c = write(dir.path(), "qwen.toml", &catalog(65536, "qwen2.5-72b.json"));
    let out = run(&["lint", c.to_str().unwrap()]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    let err = flat(&out.stderr);
    assert!(err.contains("llmgw::fit::max-model-len"), "{err}");
    assert!(
        err.contains("asks max_model_len = 65536, more than the model's own 32768 (max_position_embeddings = 32768)"),
        "{err}"
    );
    // Llama 3.1's llama3 scaling is in its 131072 already: 131072 passes, twice that does not.
    let ok = write(dir.path(), "llama.toml", &catalog(131_072, "llama-3.1-8b.json"));
    assert_eq!(code(&run(&["lint", ok.to_str().unwrap()])), 0);
    let long = write(dir.path(), "long.toml", &catalog(262_144, "llama-3.1-8b.json"));
    assert_eq!(code(&run(&["lint", long.to_str().unwrap()])), 1);
    // YaRN, as Qwen2.5's model card enables it, makes 4 x 32768 the model's own.
    let mut qwen: Value =
        serde_json::from_str(&std::fs::read_to_string(models.join("qwen2.5-72b.json")).unwrap()).unwrap();
    qwen["rope_scaling"] =
        serde_json::json!({"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"});
    let yarn = write(dir.path(), "yarn.json", &qwen.to_string());
    let c = write(
        dir.path(),
        "yarn.toml",
        &catalog(131_072, "x").replace(&models.join("x").display().to_string(), yarn.to_str().unwrap()),
    );
    assert_eq!(code(&run(&["lint", c.to_str().unwrap()])), 0, "{}", transcript(&run(&["lint", c.to_str().unwrap()])));
}

#[test]
fn a_catalog_config_that_is_no_regular_file_is_refused_without_a_wait() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("config.json");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let catalog = write(
        dir.path(),
        "catalog.toml",
        "[[model]]\nname = \"m\"\nparams_b = 8.0\nconfig = \"config.json\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"l4\"\n",
    );
    let out = bounded(20, &["lint", catalog.to_str().unwrap()]);
    assert_eq!(code(&out), 1, "no wait for a writer: {}", transcript(&out));
    assert!(flat(&out.stderr).contains("cannot read"), "{}", transcript(&out));
    assert!(flat(&out.stderr).contains("it is not a regular file"), "{}", transcript(&out));
    // A FIFO named on the command line no one writes to is an empty file.
    let out = bounded(20, &["nodes", "--inventory", fifo.to_str().unwrap()]);
    assert_ne!(code(&out), 124, "no wait for a writer: {}", transcript(&out));
}

#[test]
fn a_config_naming_a_readable_file_echoes_none_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let secret = write(dir.path(), "secret.txt", "root:x:0:0:root:/root:/bin/bash\nTOKEN=hunter2\n");
    for path in [secret.to_str().unwrap(), "/proc/self/environ"] {
        let catalog = write(
            dir.path(),
            "catalog.toml",
            &format!(
                "[[model]]\nname = \"m\"\nparams_b = 8.0\nconfig = \"{path}\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"l4\"\n"
            ),
        );
        let out =
            llmgw().args(["lint", catalog.to_str().unwrap()]).env("LLMGW_PROBE_SECRET", "hunter2").output().unwrap();
        assert_eq!(code(&out), 1, "{}", transcript(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        for leaked in ["root:x", "/bin/bash", "hunter2", "LLMGW_PROBE_SECRET", "PATH="] {
            assert!(!err.contains(leaked), "{path}: `{leaked}` shown:\n{err}");
        }
    }
}

#[test]
fn discover_never_waits_on_a_fifo_nor_reads_dev_zero_and_walks_a_link_cycle_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    write(&root, "proc/meminfo", "MemTotal:       1056964608 kB\n");
    write(&root, "proc/sys/kernel/hostname", "gpu-01\n");
    write(&root, "etc/llmgw/node.toml", "model_dirs = [\"/models\"]\n");
    // A cache entry whose refs/main is a FIFO, one whose refs/main is
    // /dev/zero, one as it should be.
    let cache = root.join("models/hub");
    write(&cache, "models--a--fifo/snapshots/r1/config.json", "{}");
    std::fs::create_dir_all(cache.join("models--a--fifo/refs")).unwrap();
    assert!(Command::new("mkfifo").arg(cache.join("models--a--fifo/refs/main")).status().unwrap().success());
    write(&cache, "models--a--zero/snapshots/r1/config.json", "{}");
    std::fs::create_dir_all(cache.join("models--a--zero/refs")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", cache.join("models--a--zero/refs/main")).unwrap();
    write(&cache, "models--a--fine/refs/main", "r1");
    write(&cache, "models--a--fine/snapshots/r1/config.json", "{}");
    // Fourteen links back to the model folder itself.
    for i in 0..14 {
        std::os::unix::fs::symlink(root.join("models"), root.join(format!("models/loop{i}"))).unwrap();
    }
    let out = Command::new(timeout())
        .args(["20", env!("CARGO_BIN_EXE_llmgw"), "discover", "--root", root.to_str().unwrap(), "--format", "json"])
        .env("PATH", dir.path().join("nothing"))
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let weights = json(&out)["node"][0]["weights"].clone();
    let sources: Vec<&str> = weights.as_array().unwrap().iter().map(|w| w["source"].as_str().unwrap()).collect();
    assert_eq!(sources, ["a/fifo", "a/fine", "a/zero"], "{weights}");
    assert_eq!(weights[1]["path"], "/models/hub/models--a--fine/snapshots/r1");
}

#[test]
fn many_taints_and_tolerations_are_matched_by_key() {
    let dir = tempfile::tempdir().unwrap();
    let n = 20_000;
    let taints: Vec<String> = (0..n).map(|i| format!("\"k{i}=v:NoSchedule\"")).collect();
    let mut node = h100_node("n1", 1);
    node = node.replacen("state = \"ready\"\n", &format!("state = \"ready\"\ntaints = [{}]\n", taints.join(",")), 1);
    let fleet = write(dir.path(), "fleet.toml", &node);
    let tolerations = |skip: usize| -> String {
        (0..n).filter(|&i| i != skip).map(|i| format!("\"k{i}=v\"")).collect::<Vec<_>>().join(",")
    };
    let catalog = |t: String| {
        format!(
            "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ntolerations = [{t}]\n"
        )
    };
    let all = write(dir.path(), "all.toml", &catalog(tolerations(n)));
    let out = run(&["place", all.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let missing = write(dir.path(), "missing.toml", &catalog(tolerations(12_345)));
    let out = run(&["place", missing.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    assert!(stdout(&out).contains("has taint k12345=v:NoSchedule, not tolerated"), "{}", transcript(&out));
}

#[test]
fn an_amd_replica_keeps_off_a_node_tainted_for_nvidia_gpus_and_renders_its_own_toleration() {
    let dir = tempfile::tempdir().unwrap();
    let amd = |id: &str, taint: &str| {
        format!(
            "[[node]]\nid = \"{id}\"\nstate = \"ready\"\ntaints = [\"{taint}\"]\n[[node.gpu]]\nindex = 0\nname = \"AMD Instinct MI300X\"\nvendor = \"amd\"\nmemory_mb = 196608\n"
        )
    };
    let fleet = write(
        dir.path(),
        "fleet.toml",
        &(amd("a1", "nvidia.com/gpu=present:NoSchedule") + &amd("a2", "amd.com/gpu:NoSchedule")),
    );
    let catalog = write(
        dir.path(),
        "catalog.toml",
        "[[model]]\nname = \"m\"\nreplicas = 2\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"amd-instinct-mi300x\"\n",
    );
    let out = run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    let plan = json(&out);
    assert_eq!(plan["placements"][0]["nodes"][0]["node"], "a2", "{plan}");
    assert!(
        plan["unplaced"].to_string().contains("has taint nvidia.com/gpu=present:NoSchedule, not tolerated"),
        "{plan}"
    );
    let p = write(dir.path(), "plan.json", &stdout(&out));
    let out = render_plan("kubernetes", &p, &catalog, &fleet, &[]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let deployment = crate::render::documents(&stdout(&out)).into_iter().find(|d| d["kind"] == "Deployment").unwrap();
    let tolerations = deployment["spec"]["template"]["spec"]["tolerations"].to_string();
    assert!(tolerations.contains("amd.com/gpu") && !tolerations.contains("nvidia.com/gpu"), "{tolerations}");
}
