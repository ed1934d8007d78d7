//! Hardening, fourth round: the classes a probe of the newest surfaces
//! found in render, lint and load, and discover. Each test is named after
//! what it pins; each failed on the code before its fix.

use std::fmt::Write as _;
use std::path::Path;
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

/// `llmgw ARGS` that may not run longer than `secs` (a hang is a failure,
/// never a stuck test run).
fn bounded(secs: u32, args: &[&str]) -> std::process::Output {
    Command::new("timeout")
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
