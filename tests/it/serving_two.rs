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
    let plan = d.join("plan.json");
    let out = run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let args = |kind: &str| {
        let out = run(&[
            "render",
            kind,
            plan.to_str().unwrap(),
            "--catalog",
            catalog.to_str().unwrap(),
            "-i",
            fleet.to_str().unwrap(),
        ]);
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
    let out = run(&[
        "render",
        "kubernetes",
        plan.to_str().unwrap(),
        "--catalog",
        catalog.to_str().unwrap(),
        "-i",
        fleet.to_str().unwrap(),
        "--priority-class",
        "inference",
        "--service-account",
        "llm-runner",
        "--image-pull-secret",
        "registry-a",
        "--image-pull-secret",
        "registry-b",
    ]);
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
    let plan = d.join("plan.json");
    assert_eq!(
        code(&run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "-o", plan.to_str().unwrap()])),
        0
    );
    let out = run(&[
        "render",
        "kubernetes",
        plan.to_str().unwrap(),
        "--catalog",
        catalog.to_str().unwrap(),
        "-i",
        fleet.to_str().unwrap(),
    ]);
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
