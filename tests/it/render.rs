//! `render`: what it writes serves (docs/serving.md), is refused when the
//! plan is stale, owns its folder, and tells what to stop. The rendered
//! objects are read back typed and checked against the LeaderWorkerSet
//! CRD's own schema; the scripts are run (tests/it/serve.rs runs them
//! under stand-in engines).

use std::path::{Path, PathBuf};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Container, PodSpec, Service};
use llmgw::kubernetes::lws::LeaderWorkerSet;

use crate::common::*;

/// The objects of a rendered YAML stream, as JSON.
pub fn documents(text: &str) -> Vec<serde_json::Value> {
    text.split("---\n")
        .filter(|d| d.lines().any(|l| l.starts_with("kind:")))
        .map(|d| llmgw::kubernetes::yaml_to_json(d).unwrap())
        .collect()
}

/// A fleet: two DGX H100 on ib-east (adapters mlx5_0..7), a MIG A100
/// (mixed strategy) and a CPU node that reports CPUs and memory and holds
/// a GGUF file on its disk.
pub fn fleet(dir: &Path) -> PathBuf {
    let dgx = dir.join("dgx.toml");
    let out = run(&["inventory", "synth", "dgx-h100:2@ib-east", "--prefix", "k", "-o", dgx.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let text = std::fs::read_to_string(&dgx).unwrap().replace("[[node]]\n", "[[node]]\ncpus = 224\n");
    std::fs::write(&dgx, text).unwrap();
    let rest = write(
        dir,
        "rest.toml",
        "[[node]]\nid = \"a100-mig\"\nlabels = { \"nvidia.com/mig.strategy\" = \"mixed\" }\nengines = { vllm = \"0.6.3\" }\n\
         cpus = 64\nmemory_total_mb = 524288\n\
         [[node.gpu]]\nindex = 0\nname = \"NVIDIA A100-SXM4-80GB\"\nmig = true\n\
         [[node.gpu.mig_device]]\nindex = 0\nprofile = \"1g.10gb\"\n[[node.gpu.mig_device]]\nindex = 1\nprofile = \"1g.10gb\"\n\
         [[node]]\nid = \"cpu-01\"\ncpus = 32\nmemory_total_mb = 65536\nweights = [\"models/qwen.gguf\"]\n\
         disk = { path = \"/srv/models/\", free_bytes = 1000000000, total_bytes = 2000000000 }\n",
    );
    let fleet = dir.join("fleet.toml");
    let out =
        run(&["inventory", "merge", dgx.to_str().unwrap(), rest.to_str().unwrap(), "-o", fleet.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    fleet
}

pub const CATALOG: &str = "[[model]]\nname = \"deepseek-v3\"\nsource = \"deepseek-ai/DeepSeek-V3\"\n\
[[model.profile]]\nname = \"2x8\"\nengine = \"sglang\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\nnodes = 2\nshm_gb = 64\n\
[[model]]\nname = \"llama-3.1-8b\"\nsource = \"meta-llama/Llama-3.1-8B-Instruct\"\n\
[[model.profile]]\nname = \"mig\"\nengine = \"vllm\"\ngpu_class = \"a100-sxm4-80gb\"\nmig_profile = \"1g.10gb\"\nport = 9000\n\
[[model]]\nname = \"qwen2.5-7b-gguf\"\n[[model.profile]]\nname = \"cpu\"\nengine = \"llama.cpp\"\nsource = \"models/qwen.gguf\"\n\
image = \"example.com/llama:1\"\nargs = [\"--ctx-size\", \"8192\"]\nenv = { LLAMA_ARG_THREADS = \"8\" }\n";

/// place, then render kubernetes with `extra` flags: the plan and stdout.
pub fn place_and_render(
    dir: &Path,
    catalog: &str,
    extra: &[&str],
) -> (PathBuf, PathBuf, PathBuf, std::process::Output) {
    let fleet = fleet(dir);
    let catalog = write(dir, "c.toml", catalog);
    let plan = dir.join("plan.json");
    let out = run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let mut args = vec![
        "render",
        "kubernetes",
        plan.to_str().unwrap(),
        "--catalog",
        catalog.to_str().unwrap(),
        "-i",
        fleet.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = run(&args);
    (plan, catalog, fleet, out)
}

fn pod(template: &k8s_openapi::api::core::v1::PodTemplateSpec) -> &PodSpec {
    template.spec.as_ref().unwrap()
}

fn env<'a>(c: &'a Container, name: &str) -> Option<&'a k8s_openapi::api::core::v1::EnvVar> {
    c.env.as_ref().and_then(|e| e.iter().find(|v| v.name == name))
}

fn pinned_to(p: &PodSpec) -> Vec<String> {
    let terms = &p
        .affinity
        .as_ref()
        .unwrap()
        .node_affinity
        .as_ref()
        .unwrap()
        .required_during_scheduling_ignored_during_execution
        .as_ref()
        .unwrap()
        .node_selector_terms;
    // One term per node: a node field selector takes exactly one value.
    terms
        .iter()
        .map(|term| {
            assert!(term.match_expressions.is_none(), "by name, not the hostname label");
            let f = term.match_fields.as_ref().unwrap();
            assert_eq!(f.len(), 1);
            assert_eq!((f[0].key.as_str(), f[0].operator.as_str()), ("metadata.name", "In"));
            let v = f[0].values.clone().unwrap();
            assert_eq!(v.len(), 1, "the API refuses a node field selector of several values: {v:?}");
            v[0].clone()
        })
        .collect()
}

#[test]
fn kubernetes_objects_serve_as_the_engines_document() {
    let dir = tempfile::tempdir().unwrap();
    let (_, _, _, out) =
        place_and_render(dir.path(), CATALOG, &["--namespace", "serving", "--rdma-resource", "rdma/ib=2"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let docs = documents(&stdout(&out));
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["LeaderWorkerSet", "Deployment", "Deployment", "Service", "Service", "Service"]);
    for d in &docs {
        assert_eq!(d["metadata"]["namespace"], "serving");
        assert_eq!(d["metadata"]["labels"]["app.kubernetes.io/managed-by"], "llmgw");
        assert!(d["metadata"]["labels"]["app.kubernetes.io/name"].is_string());
    }

    // 2-node SGLang: a LeaderWorkerSet, leader on rank 0's node, ranks from the pod label.
    let lws: LeaderWorkerSet = serde_json::from_value(docs[0].clone()).unwrap();
    assert!(lws.metadata.name.as_ref().unwrap().len() <= 45);
    let t = &lws.spec.leader_worker_template;
    assert_eq!((t.size, t.restart_policy.as_deref()), (2, Some("RecreateGroupOnPodRestart")));
    let (leader, worker) = (pod(&t.leader_template), pod(&t.worker_template));
    assert_eq!(pinned_to(leader), ["k-0001"]);
    assert_eq!(pinned_to(worker), ["k-0002"]);
    let (lc, wc) = (&leader.containers[0], &worker.containers[0]);
    let script = &lc.command.as_ref().unwrap()[2];
    assert!(script.contains("--host 0.0.0.0 --port 30000 --tp 16 --nnodes 2 --node-rank \"$LLMGW_NODE_RANK\" --dist-init-addr \"$LWS_LEADER_ADDRESS:20000\""), "{script}");
    let rank = env(wc, "LLMGW_NODE_RANK").unwrap().value_from.as_ref().unwrap().field_ref.as_ref().unwrap();
    assert_eq!(rank.field_path, "metadata.labels['leaderworkerset.sigs.k8s.io/worker-index']");
    // Only the leader serves HTTP: port, probes, and the Service's label.
    assert_eq!(lc.ports.as_ref().unwrap()[0].container_port, 30000);
    assert_eq!(lc.ports.as_ref().unwrap()[0].name.as_deref(), Some("http"));
    let startup = lc.startup_probe.as_ref().unwrap();
    assert_eq!(startup.http_get.as_ref().unwrap().path.as_deref(), Some("/health"));
    assert!(startup.period_seconds.unwrap() * startup.failure_threshold.unwrap() >= 1800, "30 minutes to load weights");
    assert!(lc.readiness_probe.is_some());
    assert!(wc.ports.is_none() && wc.startup_probe.is_none() && wc.readiness_probe.is_none());
    assert_eq!(t.leader_template.metadata.as_ref().unwrap().labels.as_ref().unwrap()["llmgw.io/serves"], "true");
    assert!(!t.worker_template.metadata.as_ref().unwrap().labels.as_ref().unwrap().contains_key("llmgw.io/serves"));
    // RDMA asked for: the device, IPC_LOCK, and NCCL told the adapters.
    for c in [lc, wc] {
        assert_eq!(c.resources.as_ref().unwrap().limits.as_ref().unwrap()["rdma/ib"].0, "2");
        assert_eq!(c.resources.as_ref().unwrap().limits.as_ref().unwrap()["nvidia.com/gpu"].0, "8");
        let caps = c.security_context.as_ref().unwrap().capabilities.as_ref().unwrap();
        assert_eq!(caps.add.as_deref(), Some(&["IPC_LOCK".to_string()][..]));
        let hca = env(c, "NCCL_IB_HCA").unwrap().value.as_deref().unwrap();
        // Exact names (`=`): a bare list is prefixes, mlx5_1 would also be mlx5_10.
        assert_eq!(hca, "=mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7");
        // All of the node's CPUs (8 of 8 GPUs), no memory reported by synth? It reports it.
        let req = c.resources.as_ref().unwrap().requests.as_ref().unwrap();
        assert_eq!(req["cpu"].0, "224");
    }
    // /dev/shm in memory, sized by the profile.
    let shm = leader.volumes.as_ref().unwrap().iter().find(|v| v.name == "dshm").unwrap();
    let ed = shm.empty_dir.as_ref().unwrap();
    assert_eq!((ed.medium.as_deref(), ed.size_limit.as_ref().unwrap().0.as_str()), (Some("Memory"), "64Gi"));
    assert!(lc.volume_mounts.as_ref().unwrap().iter().any(|m| m.name == "dshm" && m.mount_path == "/dev/shm"));
    // Weights from the hub: the optional token Secret and a cache on the node.
    let token = env(lc, "HF_TOKEN").unwrap().value_from.as_ref().unwrap().secret_key_ref.as_ref().unwrap();
    assert_eq!((token.name.as_str(), token.key.as_str(), token.optional), ("llmgw-hf-token", "token", Some(true)));
    // On the disk the nodes report (and placement checked), not on the root
    // file system.
    assert_eq!(env(lc, "HF_HOME").unwrap().value.as_deref(), Some("/models/.cache/huggingface"));

    // MIG vLLM: a Deployment, Recreate, pinned by name, on its own port.
    let mig: Deployment = serde_json::from_value(docs[1].clone()).unwrap();
    let spec = mig.spec.as_ref().unwrap();
    assert_eq!(spec.strategy.as_ref().unwrap().type_.as_deref(), Some("Recreate"));
    let p = pod(&spec.template);
    assert_eq!(pinned_to(p), ["a100-mig"]);
    let c = &p.containers[0];
    let argv = c.command.as_ref().unwrap();
    assert_eq!(
        argv.join(" "),
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --host 0.0.0.0 --port 9000 --tensor-parallel-size 1 --served-model-name llama-3.1-8b"
    );
    let res = c.resources.as_ref().unwrap();
    assert_eq!(res.limits.as_ref().unwrap()["nvidia.com/mig-1g.10gb"].0, "1");
    // Half of the one GPU's two MIG devices: 64 CPUs / 2, 512 GiB / 2.
    assert_eq!(res.requests.as_ref().unwrap()["cpu"].0, "32");
    assert_eq!(res.requests.as_ref().unwrap()["memory"].0, "262144Mi");
    assert_eq!(res.limits.as_ref().unwrap()["memory"].0, "262144Mi");
    assert_eq!(mig.metadata.annotations.as_ref().unwrap()["llmgw.io/mig-devices"], "a100-mig=0:0");
    assert!(env(c, "NCCL_IB_HCA").is_none() && c.security_context.is_none());

    // llama.cpp: the image's entrypoint is the server, so arguments only,
    // the node's own copy of the file, mounted read-only.
    let cpu: Deployment = serde_json::from_value(docs[2].clone()).unwrap();
    let p = pod(&cpu.spec.as_ref().unwrap().template);
    let c = &p.containers[0];
    assert!(c.command.is_none());
    assert_eq!(
        c.args.as_ref().unwrap().join(" "),
        "-m /srv/models/models/qwen.gguf --host 0.0.0.0 --port 8080 --ctx-size 8192"
    );
    assert_eq!(c.image.as_deref(), Some("example.com/llama:1"));
    assert_eq!(env(c, "LLAMA_ARG_THREADS").unwrap().value.as_deref(), Some("8"));
    assert!(env(c, "HF_TOKEN").is_none());
    let weights = p.volumes.as_ref().unwrap().iter().find(|v| v.name == "weights").unwrap();
    assert_eq!(weights.host_path.as_ref().unwrap().path, "/srv/models/models/qwen.gguf");
    let mount = c.volume_mounts.as_ref().unwrap().iter().find(|m| m.name == "weights").unwrap();
    assert_eq!((mount.mount_path.as_str(), mount.read_only), ("/srv/models/models/qwen.gguf", Some(true)));
    assert!(c.resources.as_ref().unwrap().limits.as_ref().is_none_or(|l| !l.contains_key("nvidia.com/gpu")));

    // One Service per model, selecting its serving pods, on its port.
    let svc: Service = serde_json::from_value(docs[4].clone()).unwrap();
    let s = svc.spec.as_ref().unwrap();
    assert_eq!(svc.metadata.name.as_deref(), Some("llmgw-llama-3-1-8b"));
    assert_eq!(s.selector.as_ref().unwrap()["llmgw.io/serves"], "true");
    assert_eq!(s.selector.as_ref().unwrap()["llmgw.io/model"], "llama-3.1-8b");
    assert_eq!(s.ports.as_ref().unwrap()[0].port, 9000);
    // No warning about RDMA when it was given.
    assert!(!String::from_utf8_lossy(&out.stderr).contains("no-rdma"), "{}", transcript(&out));
}

#[test]
fn without_an_rdma_resource_ncc_is_not_told_of_adapters_it_cannot_reach() {
    let dir = tempfile::tempdir().unwrap();
    let (_, _, _, out) = place_and_render(dir.path(), CATALOG, &[]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("llmgw::render::no-rdma") && err.contains("deepseek-v3 r0") && err.contains("TCP"), "{err}");
    let lws: LeaderWorkerSet = serde_json::from_value(documents(&stdout(&out))[0].clone()).unwrap();
    let c = &pod(&lws.spec.leader_worker_template.leader_template).containers[0];
    assert!(env(c, "NCCL_IB_HCA").is_none());
    assert!(c.security_context.is_none());
    assert!(lws.metadata.namespace.is_none());
}

#[test]
fn every_leaderworkerset_fits_the_crd_schema_of_lws_v0_7_0() {
    let crd = llmgw::kubernetes::yaml_to_json(
        &std::fs::read_to_string(root().join("tests/data/real/kubernetes/lws-crd-v0.7.0.yaml")).unwrap(),
    )
    .unwrap();
    let version = crd["spec"]["versions"].as_array().unwrap().iter().find(|v| v["name"] == "v1").unwrap();
    let schema = &version["schema"]["openAPIV3Schema"];
    // SGLang, and vLLM over Ray with a long model name.
    let ray = format!(
        "[[model]]\nname = \"{}\"\n[[model.profile]]\nname = \"ray\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\nnodes = 2\n",
        "a-very-long-model-name-that-goes-on-and-on-past-forty-five"
    );
    let mut last = None;
    for (catalog, flags) in [(CATALOG, vec!["--rdma-resource", "rdma/ib"]), (ray.as_str(), vec![])] {
        let dir = tempfile::tempdir().unwrap();
        let (_, _, _, out) = place_and_render(dir.path(), catalog, &flags);
        assert_eq!(code(&out), 0, "{}", transcript(&out));
        let lws: Vec<serde_json::Value> =
            documents(&stdout(&out)).into_iter().filter(|d| d["kind"] == "LeaderWorkerSet").collect();
        assert_eq!(lws.len(), 1, "the DGX pair holds one 2-node replica");
        for d in &lws {
            let problems = crate::openapi::check(schema, d);
            assert!(problems.is_empty(), "{problems:#?}\n{d:#}");
            let name = d["metadata"]["name"].as_str().unwrap();
            assert!(name.len() <= 45, "{name}");
        }
        last = lws.into_iter().next();
    }
    // The schema check can fail: a field LWS does not know, a wrong enum.
    let mut bad = last.unwrap();
    bad["spec"]["leaderWorkerTemplate"]["restartPolicy"] = "Sometimes".into();
    bad["spec"]["leaderWorkerTemplate"]["sizee"] = 2.into();
    assert_eq!(crate::openapi::check(schema, &bad).len(), 2);
}

#[test]
fn long_and_colliding_names_stay_apart_and_within_kubernetes_lengths() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(120);
    let catalog = format!(
        "[[model]]\nname = \"Llama.8B\"\nreplicas = 1\n[[model.profile]]\nname = \"a\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n\
         [[model]]\nname = \"llama-8b\"\n[[model.profile]]\nname = \"a\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n\
         [[model]]\nname = \"{long}\"\n[[model.profile]]\nname = \"{long}.\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n"
    );
    let out_dir = dir.path().join("out");
    let (_, _, _, out) = place_and_render(dir.path(), &catalog, &["-o", out_dir.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let mut names: Vec<String> =
        std::fs::read_dir(&out_dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names.len(), 6, "{names:?}");
    for n in &names {
        let text = std::fs::read_to_string(out_dir.join(n)).unwrap();
        let doc = llmgw::kubernetes::yaml_to_json(&text).unwrap();
        let name = doc["metadata"]["name"].as_str().unwrap();
        assert!(
            name.len() <= 63 && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "{name}"
        );
        for (k, v) in doc["metadata"]["labels"].as_object().unwrap() {
            let v = v.as_str().unwrap();
            assert!(v.len() <= 63 && !v.ends_with(['.', '-', '_']), "{k}={v}");
        }
        assert!(doc["metadata"]["annotations"]["llmgw.io/model"].as_str().is_some_and(|m| !m.is_empty()));
    }
    let models: std::collections::BTreeSet<String> = names
        .iter()
        .filter(|n| !n.starts_with("service-"))
        .map(|n| {
            let doc = llmgw::kubernetes::yaml_to_json(&std::fs::read_to_string(out_dir.join(n)).unwrap()).unwrap();
            doc["metadata"]["labels"]["llmgw.io/model"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(models.len(), 3, "two models that sanitise alike keep apart labels: {models:?}");
}

#[test]
fn slurm_gres_names_the_planned_gpus_type_whatever_the_node_mixes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let nodes = write(
        d,
        "nodes.txt",
        "NodeName=mix01 CPUTot=64 CPUAlloc=0 Gres=gpu:a100:4,gpu:h100:4 GresUsed=gpu:a100:0,gpu:h100:0 RealMemory=512000 State=IDLE Partitions=gpu\n\
         NodeName=mig01 CPUTot=64 CPUAlloc=0 Gres=gpu:nvidia_a100_3g.39gb:2 RealMemory=512000 State=IDLE Partitions=gpu\n\
         NodeName=plain01 CPUTot=64 CPUAlloc=0 Gres=gpu:4 RealMemory=512000 State=IDLE Partitions=gpu\n",
    );
    let fleet = d.join("fleet.toml");
    let out = run(&["inventory", "import", "slurm", nodes.to_str().unwrap(), "-o", fleet.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let catalog = write(
        d,
        "c.toml",
        "[[model]]\nname = \"h\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100\"\ngpus_per_node = 2\n\
         [[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"mig-parent\"\nmig_profile = \"3g.39gb\"\n\
         [[model]]\nname = \"g\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"gpu\"\ngpus_per_node = 4\n",
    );
    let plan = d.join("plan.json");
    let out = run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}\n{}", transcript(&out), std::fs::read_to_string(&fleet).unwrap());
    let out = run(&[
        "render",
        "slurm",
        plan.to_str().unwrap(),
        "--catalog",
        catalog.to_str().unwrap(),
        "-i",
        fleet.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let text = stdout(&out);
    let gres: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("#SBATCH --gres=")).collect();
    assert_eq!(gres, ["gpu:h100:2", "gpu:nvidia_a100_3g.39gb:1", "gpu:4"], "{text}");
    // Each job asks for its share of the node's CPUs (CPUTot) and memory.
    assert!(text.contains("#SBATCH --cpus-per-task=16\n"), "{text}");
}
