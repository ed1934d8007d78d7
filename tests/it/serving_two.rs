//! Serving, second round: what current engines, images and clusters need
//! of what render writes (docs/serving.md).

use crate::common::*;

/// Weights found in a Hugging Face cache are given to the engine where
/// their files are (the snapshot), on both platforms; before, the engine
/// was given `disk.path/ORG/NAME`, which does not exist.
#[test]
fn weights_in_a_hugging_face_cache_are_given_at_their_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let snapshot = "/models/hub/models--meta-llama--Llama-3.1-8B-Instruct/snapshots/0e9e39f";
    let fleet = write(
        d,
        "fleet.toml",
        &format!(
            "[[node]]\nid = \"n1\"\nweights = [{{ source = \"meta-llama/Llama-3.1-8B-Instruct\", path = \"{snapshot}\" }}]\n\
             disk = {{ path = \"/models\", free_bytes = 1000000000000, total_bytes = 2000000000000 }}\n\
             [[node.gpu]]\nindex = 0\nname = \"NVIDIA H100 80GB HBM3\"\n"
        ),
    );
    let catalog = write(
        d,
        "c.toml",
        "[[model]]\nname = \"llama\"\nsource = \"meta-llama/Llama-3.1-8B-Instruct\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n",
    );
    let plan = placed_plan(d, &catalog, &fleet);
    let args = |kind: &str| {
        let out = render_plan(kind, &plan, &catalog, &fleet, &[]);
        assert_eq!(code(&out), 0, "{}", transcript(&out));
        stdout(&out)
    };
    let slurm = args("slurm");
    assert!(slurm.contains(&format!("vllm serve {snapshot} ")), "{slurm}");
    let kube = args("kubernetes");
    assert!(kube.contains(&format!("path: {snapshot}")) && kube.contains(&format!("- {snapshot}")), "{kube}");
    assert!(!kube.contains("/models/meta-llama"), "{kube}");
}

/// Cluster knobs, probes and shutdown on Kubernetes: the profile's
/// `kubernetes` table over the render flags; a startup probe as long as
/// the profile's start-up time (an hour for weights over 200 GB); a
/// liveness probe once started; 120 s for requests in flight; ollama
/// ready only once its model answers under the catalog's name; no
/// defaults spelled out.
#[test]
fn kubernetes_pods_carry_the_cluster_knobs_probes_and_grace_period() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = write(
        d,
        "fleet.toml",
        "[[node]]\nid = \"n1\"\nweights = [\"org/small\"]\ndisk = { path = \"/models\", free_bytes = 1, total_bytes = 2 }\n\
         [[node.gpu]]\nindex = 0\nname = \"NVIDIA H100 80GB HBM3\"\n[[node.gpu]]\nindex = 1\nname = \"NVIDIA H100 80GB HBM3\"\n\
         [[node]]\nid = \"c1\"\n",
    );
    let catalog = write(
        d,
        "c.toml",
        "[[model]]\nname = \"big\"\nweights_gb = 810\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n\
         kubernetes = { priority_class = \"inference-high\", image_pull_secrets = [\"ngc\"], labels = { team = \"ml\", \"llmgw.io/model\" = \"hijack\" }, annotations = { \"sidecar.istio.io/inject\" = \"false\" } }\n\
         [[model]]\nname = \"small\"\nsource = \"org/small\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\nstartup_timeout_s = 600\n\
         [[model]]\nname = \"chat\"\nsource = \"qwen2.5:7b\"\n[[model.profile]]\nname = \"cpu\"\nengine = \"ollama\"\n",
    );
    let plan = d.join("plan.json");
    let out = run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
    assert!(code(&out) <= 1, "{}", transcript(&out));
    let out = render_plan(
        "kubernetes",
        &plan,
        &catalog,
        &fleet,
        &[
            "--priority-class",
            "inference",
            "--service-account",
            "llm-runner",
            "--image-pull-secret",
            "registry-a",
            "--image-pull-secret",
            "registry-b",
        ],
    );
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let text = stdout(&out);
    assert!(!text.contains("readOnly: false"), "a default spelled out: {text}");
    let docs = crate::render::documents(&text);
    let pod = |model: &str| {
        let d = docs
            .iter()
            .find(|d| d["kind"] == "Deployment" && d["metadata"]["annotations"]["llmgw.io/model"] == model)
            .unwrap_or_else(|| panic!("no Deployment of {model}: {text}"));
        d["spec"]["template"].clone()
    };
    let big = pod("big");
    let spec = &big["spec"];
    assert_eq!(spec["priorityClassName"], "inference-high", "the profile wins");
    assert_eq!(spec["serviceAccountName"], "llm-runner", "the flag, where the profile says nothing");
    assert_eq!(spec["imagePullSecrets"], serde_json::json!([{"name": "ngc"}]));
    assert_eq!(spec["terminationGracePeriodSeconds"], 120);
    assert_eq!(big["metadata"]["labels"]["team"], "ml");
    assert_eq!(big["metadata"]["labels"]["llmgw.io/model"], "big", "llmgw's own labels win");
    assert_eq!(big["metadata"]["annotations"]["sidecar.istio.io/inject"], "false");
    let c = &spec["containers"][0];
    // 810 GB of weights: an hour to start, in 10 s periods.
    assert_eq!(c["startupProbe"]["failureThreshold"], 360, "{c}");
    assert_eq!(c["livenessProbe"]["periodSeconds"], 30);
    assert_eq!(c["livenessProbe"]["failureThreshold"], 3);
    let small = pod("small");
    assert_eq!(small["spec"]["imagePullSecrets"], serde_json::json!([{"name": "registry-a"}, {"name": "registry-b"}]));
    assert_eq!(small["spec"]["priorityClassName"], "inference");
    assert_eq!(small["spec"]["containers"][0]["startupProbe"]["failureThreshold"], 60);
    assert!(small["metadata"]["labels"].get("team").is_none());
    let chat = pod("chat");
    assert_eq!(
        chat["spec"]["containers"][0]["readinessProbe"]["exec"]["command"],
        serde_json::json!(["ollama", "show", "chat"]),
        "{chat}"
    );
}

/// Ollama, run as render writes its pod: the model answers under the
/// catalog's name (not the pulled one), the readiness probe fails until
/// the pull has ended and passes after, and SIGTERM to the container's
/// main process (the shell) stops the server at once instead of waiting
/// out the grace period.
#[test]
fn ollama_answers_under_the_catalog_name_is_ready_after_its_pull_and_stops_on_sigterm() {
    use std::process::Command;
    use std::time::{Duration, Instant};
    if !crate::serve::python3() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = write(d, "fleet.toml", "[[node]]\nid = \"c1\"\n");
    // A port of its own, so that tests running at once do not collide.
    let port = quiet_port();
    let catalog = write(
        d,
        "c.toml",
        &format!(
            "[[model]]\nname = \"chat\"\nsource = \"qwen2.5:7b\"\n[[model.profile]]\nname = \"cpu\"\nengine = \"ollama\"\nport = {port}\n"
        ),
    );
    let plan = placed_plan(d, &catalog, &fleet);
    let out = render_plan("kubernetes", &plan, &catalog, &fleet, &[]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let docs = crate::render::documents(&stdout(&out));
    let c =
        docs.iter().find(|d| d["kind"] == "Deployment").unwrap()["spec"]["template"]["spec"]["containers"][0].clone();
    let argv: Vec<String> = c["command"].as_array().unwrap().iter().map(|w| w.as_str().unwrap().to_string()).collect();
    let probe: Vec<String> = c["readinessProbe"]["exec"]["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    let env = |cmd: &mut Command| {
        // Only what this test sets: a shell that sourced a cluster's env
        // file has STANDIN_HOSTS and the like, which are not for here.
        for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("STANDIN_")) {
            cmd.env_remove(k);
        }
        cmd.env("PATH", crate::serve::path_with_standins())
            .env("PYTHONPATH", crate::serve::standins().1)
            .env("STANDIN_STATE", d.join("state"))
            .env("STANDIN_PULL_SECONDS", "3")
            .env("OLLAMA_HOST", format!("127.0.0.1:{port}"));
    };
    let mut shell = Command::new(&argv[0]);
    shell.args(&argv[1..]).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    env(&mut shell);
    let mut child = shell.spawn().unwrap();
    let ready = || {
        let mut p = Command::new(&probe[0]);
        p.args(&probe[1..]).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
        env(&mut p);
        p.status().is_ok_and(|s| s.success())
    };
    let addr = format!("127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(60);
    // Up, but not ready: the pull takes its time.
    crate::serve::wait_ok(&addr, "/", deadline).unwrap();
    assert!(!ready(), "ready before the pull ended");
    while !ready() {
        assert!(Instant::now() < deadline, "never ready");
        std::thread::sleep(Duration::from_millis(300));
    }
    let body = r#"{"model": "chat", "messages": [{"role": "user", "content": "hi"}]}"#;
    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    use std::io::{Read, Write};
    write!(
        s,
        "POST /v1/chat/completions HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.0 200") || answer.starts_with("HTTP/1.1 200"), "{answer}");
    // SIGTERM to the main process: the server goes, and so does the shell.
    let stopped = Instant::now();
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        assert!(stopped.elapsed() < Duration::from_secs(20), "the shell ignored SIGTERM");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(crate::serve::get(&addr, "/").is_none(), "the server outlived its shell");
    let _ = status;
}

/// Renders a two-node vLLM replica on both platforms: (slurm script,
/// kubernetes YAML). `profile_extra` goes into the profile; `engines`
/// is what each node reports.
fn two_node_vllm(profile_extra: &str, engines: &str) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let node = |id: &str| {
        format!(
            "[[node]]\nid = \"{id}\"\n{engines}\n[[node.fabric]]\nname = \"ib\"\n{}",
            (0..8)
                .map(|i| format!("[[node.gpu]]\nindex = {i}\nname = \"NVIDIA H100 80GB HBM3\"\n"))
                .collect::<String>()
        )
    };
    let fleet = write(d, "fleet.toml", &format!("{}{}", node("g1"), node("g2")));
    let catalog = write(
        d,
        "c.toml",
        &format!(
            "[[model]]\nname = \"big\"\nsource = \"meta-llama/Llama-3.1-405B-Instruct\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\nnodes = 2\n{profile_extra}\n"
        ),
    );
    let plan = placed_plan(d, &catalog, &fleet);
    let render = |kind: &str| {
        let out = render_plan(kind, &plan, &catalog, &fleet, &[]);
        assert_eq!(code(&out), 0, "{}", transcript(&out));
        stdout(&out)
    };
    (render("slurm"), render("kubernetes"))
}

/// vLLM across nodes runs on its own multiprocessing backend, every node
/// but rank 0 headless, with a booked master port; Ray only for a vLLM
/// older than v0.11.1 (the nodes' versions, else the image tag) or
/// `launcher = "ray"`, and then without the Ray client port (it needs
/// grpcio) and stopping at once when ray is missing or fails.
#[test]
fn vllm_across_nodes_runs_without_ray_unless_it_is_older_or_asked() {
    let (slurm, kube) = two_node_vllm("", "");
    for text in [&slurm, &kube] {
        assert!(text.contains("--pipeline-parallel-size 2 --nnodes 2 --node-rank"), "{text}");
        assert!(text.contains("--master-port 29501"), "{text}");
        assert!(text.contains("--headless") && !text.contains("ray start"), "{text}");
    }
    // On Slurm one script: rank 0 serves, the others are headless.
    let leader = slurm.split("else").next().unwrap();
    assert!(leader.contains("SLURM_NODEID\" = 0") && !leader.contains("--headless"), "{slurm}");
    // Older vLLM, by the image's tag, or asked (in an image that has Ray):
    // Ray. The nodes' own versions decide only for a bare Slurm job: a pod
    // runs its image's vLLM, whatever the node has installed.
    for (extra, engines, in_pods) in [
        ("", "engines = { vllm = \"0.10.2\" }", false),
        ("image = \"vllm/vllm-openai:v0.8.5\"", "", true),
        ("launcher = \"ray\"\nimage = \"registry.local/vllm-ray:0.29.0\"", "engines = { vllm = \"0.29.0\" }", true),
    ] {
        let (slurm, kube) = two_node_vllm(extra, engines);
        if !in_pods {
            assert!(kube.contains("--nnodes 2") && !kube.contains("ray start"), "{kube}");
        }
        for text in if in_pods { vec![&slurm, &kube] } else { vec![&slurm] } {
            assert!(
                text.contains("ray start --head --port=6379 --include-dashboard=false"),
                "{extra} {engines}: {text}"
            );
            assert!(!text.contains("--ray-client-server-port") && !text.contains("--nnodes"), "{text}");
            assert!(text.contains("command -v ray"), "{text}");
        }
    }
    // A node that reports a current version and an image tag that is no
    // version: the mp backend.
    let (slurm, _) = two_node_vllm("image = \"registry.local/vllm:latest\"", "engines = { vllm = \"0.12.0\" }");
    assert!(slurm.contains("--nnodes 2"), "{slurm}");
}

/// GGUF sources: a repository with a quantisation, a repository's file, a
/// local copy (the file, also of a cached repository), and a bare file
/// name with no copy: refused by render, and by lint with the inventory.
#[test]
fn gguf_sources_render_as_llama_cpp_reads_them_and_a_bare_file_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = "/models/hub/models--Qwen--Qwen2.5-7B-Instruct-GGUF/snapshots/a1/qwen2.5-7b-instruct-q4_k_m.gguf";
    let fleet = write(
        d,
        "fleet.toml",
        &format!(
            "[[node]]\nid = \"c1\"\ncpus = 64\nweights = [{{ source = \"Qwen/Qwen2.5-7B-Instruct-GGUF/qwen2.5-7b-instruct-q4_k_m.gguf\", path = \"{file}\" }}]\n"
        ),
    );
    let render = |source: &str| {
        let catalog = write(
            d,
            "c.toml",
            &format!(
                "[[model]]\nname = \"q\"\nsource = \"{source}\"\n[[model.profile]]\nname = \"cpu\"\nengine = \"llama.cpp\"\n"
            ),
        );
        let plan = placed_plan(d, &catalog, &fleet);
        let lint = run(&["lint", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap()]);
        let out = render_plan("slurm", &plan, &catalog, &fleet, &[]);
        (out, lint)
    };
    for (source, want) in [
        (
            "bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M",
            "llama-server -hf bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M ",
        ),
        (
            "bartowski/Llama-3.2-3B-Instruct-GGUF/Llama-3.2-3B-Instruct-Q4_K_M.gguf",
            "llama-server --hf-repo bartowski/Llama-3.2-3B-Instruct-GGUF --hf-file Llama-3.2-3B-Instruct-Q4_K_M.gguf ",
        ),
        // The cached repository: the file in it.
        ("Qwen/Qwen2.5-7B-Instruct-GGUF", &format!("llama-server -m {file} ")),
        ("Qwen/Qwen2.5-7B-Instruct-GGUF/qwen2.5-7b-instruct-q4_k_m.gguf", &format!("llama-server -m {file} ")),
    ] {
        let (out, lint) = render(source);
        assert_eq!(code(&out), 0, "{source}: {}", transcript(&out));
        assert!(stdout(&out).contains(want), "{source}: {}", stdout(&out));
        assert_eq!(code(&lint), 0, "{source}: {}", transcript(&lint));
    }
    let (out, lint) = render("qwen2.5-7b-instruct-q4_k_m.gguf");
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("llmgw::catalog::gguf-file-name"), "{}", transcript(&out));
    assert!(stdout(&out).is_empty());
    assert_eq!(code(&lint), 1, "{}", transcript(&lint));
    assert!(String::from_utf8_lossy(&lint.stderr).contains("llmgw::catalog::gguf-file-name"), "{}", transcript(&lint));
}

/// pyxis: the llama.cpp image's server at /app/llama-server, hub downloads
/// into a node folder mounted as HF_HOME; a profile's `slurm` table over
/// the render flags.
#[test]
fn pyxis_runs_the_image_entrypoint_keeps_downloads_and_profiles_pick_their_partition() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = write(d, "fleet.toml", "[[node]]\nid = \"c1\"\ncpus = 64\n");
    let catalog = write(
        d,
        "c.toml",
        "[[model]]\nname = \"q\"\nsource = \"Qwen/Qwen2.5-7B-Instruct-GGUF:Q4_K_M\"\n[[model.profile]]\nname = \"cpu\"\nengine = \"llama.cpp\"\nslurm = { partition = \"cpu\", constraint = \"epyc&avx512\" }\n",
    );
    let plan = placed_plan(d, &catalog, &fleet);
    let render = |extra: &[&str]| {
        let mut args = vec![
            "render",
            "slurm",
            plan.to_str().unwrap(),
            "--catalog",
            catalog.to_str().unwrap(),
            "-i",
            fleet.to_str().unwrap(),
            "--partition",
            "gpu",
            "--qos",
            "high",
        ];
        args.extend_from_slice(extra);
        let out = run(&args);
        assert_eq!(code(&out), 0, "{}", transcript(&out));
        stdout(&out)
    };
    let plain = render(&[]);
    assert!(plain.contains("#SBATCH --partition=cpu\n") && !plain.contains("--partition=gpu"), "{plain}");
    assert!(plain.contains("#SBATCH --qos=high\n") && plain.contains("#SBATCH --constraint=epyc&avx512\n"), "{plain}");
    assert!(plain.contains(" llama-server -hf Qwen/Qwen2.5-7B-Instruct-GGUF:Q4_K_M "), "{plain}");
    let pyxis = render(&["--container", "pyxis"]);
    assert!(pyxis.contains("--container-image='ghcr.io#ggml-org/llama.cpp:server-b10472'"), "{pyxis}");
    assert!(pyxis.contains(" /app/llama-server -hf "), "{pyxis}");
    assert!(pyxis.contains("export HF_HOME=~/.cache/huggingface\n"), "{pyxis}");
    assert!(pyxis.contains("--container-mounts=\"$HF_HOME:$HF_HOME\""), "{pyxis}");
    let cached = render(&["--container", "pyxis", "--cache-dir", "/scratch/hf"]);
    assert!(cached.contains("export HF_HOME=/scratch/hf\n"), "{cached}");
    // The folder, as bash sees it, with HOME unset too.
    let script = write(d, "s.sh", &pyxis.replace("srun ", "echo "));
    let out = std::process::Command::new("bash").arg(&script).env("HOME", d).output().unwrap();
    assert!(out.status.success() && d.join(".cache/huggingface").is_dir(), "{}", transcript(&out));
    // A value sbatch would split is refused where it is written.
    let bad = write(
        d,
        "bad.toml",
        "[[model]]\nname = \"q\"\n[[model.profile]]\nname = \"cpu\"\nengine = \"llama.cpp\"\nslurm = { partition = \"a b\" }\n",
    );
    let out = run(&["lint", bad.to_str().unwrap()]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot be written in a #SBATCH line"),
        "{}",
        transcript(&out)
    );
}

/// discover on a machine holding a real Hugging Face cache layout (a
/// safetensors model and a GGUF one), place and render: each engine is
/// given a path that exists on the node (the snapshot; the `.gguf` file).
#[test]
fn discovered_cache_paths_reach_the_engines_and_exist() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    write(&root, "proc/meminfo", "MemTotal:       1056964608 kB\n");
    write(&root, "proc/sys/kernel/hostname", "n1\n");
    let hub = "models/hub";
    write(&root, &format!("{hub}/models--meta-llama--Llama-3.1-8B-Instruct/refs/main"), "0e9e39f\n");
    for f in ["config.json", "model-00001-of-00004.safetensors", "tokenizer.json"] {
        write(&root, &format!("{hub}/models--meta-llama--Llama-3.1-8B-Instruct/snapshots/0e9e39f/{f}"), "x");
    }
    // An older snapshot refs/main does not name.
    write(&root, &format!("{hub}/models--meta-llama--Llama-3.1-8B-Instruct/snapshots/old1/config.json"), "x");
    let gguf = format!("{hub}/models--Qwen--Qwen2.5-7B-Instruct-GGUF/snapshots/a1/qwen2.5-7b-instruct-q4_k_m.gguf");
    write(&root, &gguf, "GGUF");
    write(&root, "etc/llmgw/node.toml", "model_dirs = [\"/models\"]\n");
    let facts = write(
        dir.path(),
        "gpus.json",
        "[{\"index\": 0, \"name\": \"NVIDIA H100 80GB HBM3\", \"memory_mb\": 81559, \"pci_bus_id\": \"00000000:10:00.0\"}]",
    );
    let bin = dir.path().join("bin");
    for e in ["vllm", "llama-server"] {
        executable(&bin.join(e), "#!/bin/sh\nexit 0\n");
    }
    let out = llmgw()
        .args(["discover", "--root", root.to_str().unwrap(), "--gpu-facts", facts.to_str().unwrap()])
        .args(["-o", dir.path().join("fleet.toml").to_str().unwrap()])
        .env("PATH", &bin)
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let fleet = dir.path().join("fleet.toml");
    let catalog = write(
        dir.path(),
        "c.toml",
        "[[model]]\nname = \"llama\"\nsource = \"meta-llama/Llama-3.1-8B-Instruct\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\nmemory_gb = 1\n\
         [[model]]\nname = \"qwen\"\nsource = \"Qwen/Qwen2.5-7B-Instruct-GGUF\"\n[[model.profile]]\nname = \"cpu\"\nengine = \"llama.cpp\"\n",
    );
    let plan = dir.path().join("plan.json");
    let out = run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let out = render_plan("slurm", &plan, &catalog, &fleet, &[]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let text = stdout(&out);
    let given = |after: &str| -> String {
        let at = text.find(after).unwrap_or_else(|| panic!("no `{after}` in\n{text}")) + after.len();
        text[at..].split_whitespace().next().unwrap().to_string()
    };
    let snapshot = given("vllm serve ");
    let file = given("llama-server -m ");
    assert_eq!(snapshot, "/models/hub/models--meta-llama--Llama-3.1-8B-Instruct/snapshots/0e9e39f");
    assert_eq!(file, format!("/{gguf}"));
    // Both exist on the node (the tree discover read stands for its root).
    assert!(root.join(snapshot.trim_start_matches('/')).join("config.json").is_file());
    assert!(root.join(file.trim_start_matches('/')).is_file());
}
