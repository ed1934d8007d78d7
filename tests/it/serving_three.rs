//! Serving, third round (SPEC 20): one test per case of issue 35's "Why",
//! each on the rendered files, each failing on the renderer before it.
//! The engines' own parsers are in engines.rs; the stand-ins' in
//! tests/standins/selftest.sh.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::*;

const H100: &str = "name = \"NVIDIA H100 80GB HBM3\"\nmemory_mb = 81559\n";

fn gpus(n: u32, body: &str) -> String {
    (0..n).map(|i| format!("[[node.gpu]]\nindex = {i}\n{body}")).collect()
}

/// place, then render KIND with EXTRA: the plan and render's output.
fn place_render(d: &Path, fleet: &str, catalog: &str, kind: &str, extra: &[&str]) -> (PathBuf, std::process::Output) {
    let fleet = write(d, "fleet.toml", fleet);
    let catalog = write(d, "c.toml", catalog);
    let plan = placed_plan(d, &catalog, &fleet);
    let out = render_plan(kind, &plan, &catalog, &fleet, extra);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    (plan, out)
}

fn docs(text: &str) -> Vec<Value> {
    crate::render::documents(text)
}

fn container(template: &Value) -> &Value {
    &template["spec"]["containers"][0]
}

/// A two-node fleet on one InfiniBand fabric whose nodes report vLLM 0.6.3
/// (as `inventory synth` writes them).
fn two_dgx(d: &Path) -> String {
    let out =
        run(&["inventory", "synth", "dgx-h100:2@ib-east", "--prefix", "k", "-o", d.join("dgx.toml").to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    std::fs::read_to_string(d.join("dgx.toml")).unwrap()
}

const TWO_NODE_VLLM: &str = "[[model]]\nname = \"big\"\nsource = \"meta-llama/Llama-3.1-405B-Instruct\"\n\
    [[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\nnodes = 2\n";

/// Why 1: a LeaderWorkerSet ran `ray start` in the default image, which
/// ships no Ray, whenever the nodes reported a vLLM below 0.11.1; and
/// `launcher = "ray"` failed the same way, with no word from lint.
#[test]
fn the_image_decides_the_launcher_and_ray_needs_an_image_with_ray() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = two_dgx(d);
    assert!(fleet.contains("vllm = \"0.6.3\""), "{fleet}");
    let (_, out) = place_render(d, &fleet, TWO_NODE_VLLM, "kubernetes", &[]);
    let text = stdout(&out);
    assert!(!text.contains("ray start") && text.contains("--nnodes 2"), "{text}");
    // pyxis runs the image too; a bare job the nodes' own vLLM (0.6.3).
    let out =
        render_plan("slurm", &d.join("plan.json"), &d.join("c.toml"), &d.join("fleet.toml"), &["--container", "pyxis"]);
    assert!(!stdout(&out).contains("ray start"), "{}", stdout(&out));
    let out = render_plan("slurm", &d.join("plan.json"), &d.join("c.toml"), &d.join("fleet.toml"), &[]);
    let bare = stdout(&out);
    assert!(bare.contains("ray start --head"), "{bare}");
    // Pipeline parallelism over Ray needs Ray's compiled graphs.
    assert!(bare.contains("ray[cgraph]") && !bare.contains("ray[default]"), "{bare}");

    // launcher = "ray" in an image without Ray: a lint error naming it.
    let named =
        write(d, "named.toml", &format!("{TWO_NODE_VLLM}launcher = \"ray\"\nimage = \"vllm/vllm-openai:v0.29.0\"\n"));
    let lint = run(&["lint", named.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&lint), 1, "{}", transcript(&lint));
    let diag = &json(&lint)["diagnostics"][0];
    assert_eq!(
        (diag["code"].as_str(), diag["severity"].as_str()),
        (Some("llmgw::catalog::ray-not-in-image"), Some("error")),
        "{diag}"
    );
    assert!(diag["message"].as_str().unwrap().contains("vllm/vllm-openai:v0.29.0"), "{diag}");
    assert!(diag["help"].as_str().unwrap().contains("ray[cgraph]"), "{diag}");
    // Naming no image: the default one in pods and under pyxis, the nodes'
    // own vLLM in a bare Slurm job. Lint warns; render refuses it for pods.
    let asked = write(d, "ray.toml", &format!("{TWO_NODE_VLLM}launcher = \"ray\"\n"));
    let lint = run(&["lint", asked.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&lint), 0, "{}", transcript(&lint));
    assert_eq!(json(&lint)["diagnostics"][0]["code"], "llmgw::catalog::ray-not-in-image");
    let plan = placed_plan(&d.join("asked"), &asked, &d.join("fleet.toml"));
    let out = render_plan("kubernetes", &plan, &asked, &d.join("fleet.toml"), &[]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(flat(&out.stderr).contains("which ships no Ray"), "{}", transcript(&out));
    let out = render_plan("slurm", &plan, &asked, &d.join("fleet.toml"), &["--container", "pyxis"]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert_eq!(code(&render_plan("slurm", &plan, &asked, &d.join("fleet.toml"), &[])), 0);
    // An image of the operator's own is theirs to know.
    let own =
        write(d, "own.toml", &format!("{TWO_NODE_VLLM}launcher = \"ray\"\nimage = \"registry.local/vllm-ray:1\"\n"));
    assert_eq!(code(&run(&["lint", own.to_str().unwrap()])), 0);
}

/// Why 2: no probe set `timeoutSeconds` (the kubelet's default is 1 s, and
/// SGLang's /health takes a second or more), and one failed liveness probe
/// of a LeaderWorkerSet leader recreated the whole group.
#[test]
fn probes_wait_as_long_as_the_engine_answers_and_a_leader_is_given_three_minutes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = two_dgx(d);
    let sglang = "[[model]]\nname = \"ds\"\nsource = \"deepseek-ai/DeepSeek-V3\"\n\
        [[model.profile]]\nname = \"p\"\nengine = \"sglang\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\nnodes = 2\n";
    for (model, catalog, want) in [("big", TWO_NODE_VLLM, 5), ("ds", sglang, 30)] {
        let sub = d.join(model);
        std::fs::create_dir_all(&sub).unwrap();
        let (_, out) = place_render(&sub, &fleet, catalog, "kubernetes", &[]);
        let lws = docs(&stdout(&out)).into_iter().find(|o| o["kind"] == "LeaderWorkerSet").unwrap();
        let leader = container(&lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]).clone();
        for probe in ["startupProbe", "readinessProbe", "livenessProbe"] {
            assert_eq!(leader[probe]["timeoutSeconds"], want, "{model} {probe}: {leader}");
        }
        let live = &leader["livenessProbe"];
        let tolerated = live["periodSeconds"].as_i64().unwrap() * live["failureThreshold"].as_i64().unwrap();
        assert!(tolerated >= 180, "{model}: a leader restarted after {tolerated} s recreates the group");
    }
}

/// Why 3: a node whose memory was all held still took a replica (`15
/// CPUs, 0 MiB`); render then wrote no memory request, and a Slurm job
/// without `--mem` gets the site's default, often the whole node.
#[test]
fn a_node_with_no_free_memory_takes_nothing_more() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = format!(
        "[[node]]\nid = \"full\"\ncpus = 16\nmemory_total_mb = 65536\n\
         [[node.allocation]]\nmodel = \"slurm:busy\"\nreplica = 0\ncpus = 1\nmemory_mb = 65536\n{}\
         [[node]]\nid = \"room\"\ncpus = 16\nmemory_total_mb = 65536\n{}",
        gpus(1, H100),
        gpus(1, H100)
    );
    let catalog = "[[model]]\nname = \"m\"\nreplicas = 2\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n";
    let f = write(d, "fleet.toml", &fleet);
    let c = write(d, "c.toml", catalog);
    let out = run(&["place", c.to_str().unwrap(), "-i", f.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    let plan = json(&out);
    assert_eq!(plan["placements"][0]["nodes"][0]["node"], "room", "{plan}");
    assert_eq!(plan["placements"][0]["nodes"][0]["memory_mb"], 65536, "{plan}");
    let reasons: Vec<&str> = plan["unplaced"][0]["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["nodes"][0] == "full")
        .map(|r| r["reason"].as_str().unwrap())
        .collect();
    assert_eq!(reasons, ["has no free memory"], "{plan}");
    // The one placed asks Slurm for its memory.
    let p = write(d, "plan.json", &plan.to_string());
    let out = render_plan("slurm", &p, &c, &f, &[]);
    assert!(stdout(&out).contains("#SBATCH --mem=65536M\n"), "{}", stdout(&out));
}

/// Why 4: llama.cpp ran without `--ctx-size` (llama-server then takes the
/// model's training context, whose KV cache the memory request did not
/// hold: OOMKilled), ollama got no context length and no keep-alive.
#[test]
fn llama_cpp_and_ollama_are_told_the_context_the_fit_assumed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let config = root().join("tests/data/models/llama-3.1-8b.json");
    let fleet = "[[node]]\nid = \"c1\"\ncpus = 64\nmemory_total_mb = 262144\n";
    let catalog = |len: u32| {
        format!(
            "[[model]]\nname = \"l\"\nsource = \"bartowski/Meta-Llama-3.1-8B-Instruct-GGUF\"\nconfig = \"{c}\"\nparams_b = 8.03\ndtype = \"int4\"\n\
             [[model.profile]]\nname = \"cpu\"\nengine = \"llama.cpp\"\ncpus = 8\nmax_model_len = {len}\n\
             [[model]]\nname = \"o\"\nsource = \"llama3.1:8b\"\nconfig = \"{c}\"\nparams_b = 8.03\ndtype = \"int4\"\n\
             [[model.profile]]\nname = \"cpu\"\nengine = \"ollama\"\ncpus = 8\nmax_model_len = {len}\n",
            c = config.display()
        )
    };
    let mut memory = Vec::new();
    for len in [8192u32, 131072] {
        let sub = d.join(len.to_string());
        std::fs::create_dir_all(&sub).unwrap();
        let (plan, out) = place_render(&sub, fleet, &catalog(len), "kubernetes", &[]);
        let objects = docs(&stdout(&out));
        let c = |name: &str| {
            let o = objects.iter().find(|o| o["kind"] == "Deployment" && o["metadata"]["name"] == name).unwrap();
            container(&o["spec"]["template"]).clone()
        };
        let llama = c("llmgw-l-r0");
        let args: Vec<&str> = llama["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
        assert!(args.windows(2).any(|w| w == ["--ctx-size", &len.to_string()]), "{args:?}");
        let script = c("llmgw-o-r0")["command"][2].as_str().unwrap().to_string();
        assert!(script.contains(&format!("export OLLAMA_CONTEXT_LENGTH={len}\n")), "{script}");
        assert!(script.contains("export OLLAMA_KEEP_ALIVE=-1\n"), "{script}");
        let p: Value = serde_json::from_str(&std::fs::read_to_string(plan).unwrap()).unwrap();
        memory.push(p["placements"][0]["nodes"][0]["memory_mb"].as_u64().unwrap());
        assert_eq!(llama["resources"]["requests"]["memory"], format!("{}Mi", memory.last().unwrap()));
    }
    // The request holds the KV cache at that context: Llama 3.1 8B keeps
    // 32 layers x 8 KV heads x 128 x 2 (K and V) x 2 bytes = 128 KiB a
    // token, so 131072 tokens need 15 GiB more than 8192 (16 GiB - 1 GiB).
    assert_eq!(memory[1] - memory[0], 15 * 1024, "{memory:?}");
}

/// Why 5: on an inventory not imported from Slurm the script asked for
/// `--gres=gpu:h100-80gb-hbm3:8`, a type no Slurm site has: sbatch refuses.
#[test]
fn slurm_gres_types_are_slurms_own_or_none() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = format!("[[node]]\nid = \"g1\"\ncpus = 64\nmemory_total_mb = 65536\n{}", gpus(8, H100));
    let catalog = "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\n";
    let (_, out) = place_render(d, &fleet, catalog, "slurm", &[]);
    let text = stdout(&out);
    assert!(text.contains("#SBATCH --gres=gpu:8\n") && !text.contains("h100-80gb-hbm3:8"), "{text}");
    let warn = flat(&out.stderr);
    assert_eq!(warn.matches("llmgw::render::untyped-gres").count(), 1, "{warn}");
    // Imported from Slurm: the node's own gres type.
    let sub = d.join("slurm");
    std::fs::create_dir_all(&sub).unwrap();
    let imported = sub.join("fleet.toml");
    let out = run(&[
        "inventory",
        "import",
        "slurm",
        &root().join("tests/data/slurm/scontrol-22.05.txt").to_string_lossy(),
        "-o",
        imported.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let c = write(
        &sub,
        "c.toml",
        "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100\"\ngpus_per_node = 8\n",
    );
    let plan = placed_plan(&sub, &c, &imported);
    let out = render_plan("slurm", &plan, &c, &imported, &[]);
    assert!(stdout(&out).contains("#SBATCH --gres=gpu:h100:8\n"), "{}", stdout(&out));
    assert!(!flat(&out.stderr).contains("untyped-gres"), "{}", transcript(&out));
}

/// Why 6: `NCCL_IB_HCA=mlx5_0,mlx5_1` is a prefix list (mlx5_1 also
/// selects mlx5_10 and up); the exact form starts with `=`.
#[test]
fn nccl_is_told_exact_adapters() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = two_dgx(d);
    let (_, out) = place_render(d, &fleet, TWO_NODE_VLLM, "slurm", &[]);
    assert!(stdout(&out).contains("export NCCL_IB_HCA==mlx5_0,mlx5_1,"), "{}", stdout(&out));
    let out = render_plan(
        "kubernetes",
        &d.join("plan.json"),
        &d.join("c.toml"),
        &d.join("fleet.toml"),
        &["--rdma-resource", "rdma/ib"],
    );
    let lws = docs(&stdout(&out)).into_iter().find(|o| o["kind"] == "LeaderWorkerSet").unwrap();
    let env = &container(&lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"])["env"];
    let hca = env.as_array().unwrap().iter().find(|e| e["name"] == "NCCL_IB_HCA").unwrap();
    assert!(hca["value"].as_str().unwrap().starts_with("=mlx5_0,"), "{hca}");
}

/// Why 7: under pyxis the container's root is read-only unless asked, and
/// vLLM, SGLang and Ollama write caches at start-up.
#[test]
fn pyxis_containers_are_writable_and_their_caches_mounted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = format!("[[node]]\nid = \"g1\"\ncpus = 64\nmemory_total_mb = 65536\n{}", gpus(2, H100));
    let catalog = "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n\
        [[model]]\nname = \"o\"\nsource = \"llama3.1:8b\"\n[[model.profile]]\nname = \"p\"\nengine = \"ollama\"\ngpu_class = \"h100-80gb-hbm3\"\n";
    let (_, out) =
        place_render(d, &fleet, catalog, "slurm", &["--container", "pyxis", "--cache-dir", "/scratch/llmgw"]);
    let text = stdout(&out);
    for script in text.split("#!/bin/bash").filter(|s| !s.trim().is_empty()) {
        assert!(script.contains("--container-writable"), "{script}");
        assert!(script.contains("--container-mounts=\"$HF_HOME:$HF_HOME\""), "{script}");
        assert!(script.contains("export HF_HOME=/scratch/llmgw\n"), "{script}");
        assert!(
            script.contains("export VLLM_CACHE_ROOT=\"$HF_HOME/vllm\" XDG_CACHE_HOME=\"$HF_HOME/xdg\"\n"),
            "{script}"
        );
    }
    assert!(text.contains("export OLLAMA_MODELS=\"$HF_HOME/ollama\"\n"), "{text}");
}

/// Why 8: GB200 and GH200 nodes are arm64, and the default vLLM image was
/// given them whatever their architecture.
#[test]
fn arm64_nodes_get_arm64_images_and_lint_says_where_there_is_none() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = format!(
        "[[node]]\nid = \"gh200-01\"\ncpus = 72\nmemory_total_mb = 491520\nlabels = {{ \"kubernetes.io/arch\" = \"arm64\" }}\n{}",
        gpus(1, "name = \"NVIDIA GH200 480GB\"\nmemory_mb = 97871\n")
    );
    let catalog =
        "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"gh200-480gb\"\n";
    let (_, out) = place_render(d, &fleet, catalog, "kubernetes", &[]);
    let dep = docs(&stdout(&out)).into_iter().find(|o| o["kind"] == "Deployment").unwrap();
    assert_eq!(container(&dep["spec"]["template"])["image"], "vllm/vllm-openai:v0.29.0-aarch64");
    let out =
        render_plan("slurm", &d.join("plan.json"), &d.join("c.toml"), &d.join("fleet.toml"), &["--container", "pyxis"]);
    assert!(stdout(&out).contains("--container-image=vllm/vllm-openai:v0.29.0-aarch64"), "{}", stdout(&out));
    // TGI publishes no arm64 image: lint warns, naming the nodes.
    let tgi = write(d, "tgi.toml", &catalog.replace("vllm", "tgi"));
    let lint = run(&["lint", tgi.to_str().unwrap(), "--inventory", d.join("fleet.toml").to_str().unwrap()]);
    assert!(flat(&lint.stderr).contains("llmgw::catalog::no-arm64-image"), "{}", transcript(&lint));
    assert!(flat(&lint.stderr).contains("gh200-01"), "{}", transcript(&lint));
    // Slurm's `Arch=aarch64` comes in as the node's architecture.
    let text = std::fs::read_to_string(root().join("tests/data/slurm/scontrol-22.05.txt")).unwrap();
    let nodes = write(d, "arm.txt", &text.replacen("Arch=x86_64", "Arch=aarch64", 1));
    let out = run(&["inventory", "import", "slurm", nodes.to_str().unwrap(), "--format", "json"]);
    assert_eq!(json(&out)["node"][0]["labels"]["slurm/arch"], "aarch64", "{}", transcript(&out));
    assert!(json(&out)["node"][1]["labels"].get("slurm/arch").is_none(), "x86-64 is assumed, not written");
}

/// Why 9: AMD pods on several GPUs lacked what vLLM's ROCm Kubernetes
/// example sets; HTTPRoutes set no request timeout; a ComputeDomain set
/// `numNodes: 2`, and `--stop` named none of the Services, domains or
/// pools render wrote; TensorRT-LLM on several GPUs started as one task
/// without MPI; the hub's weights were cached on the root file system.
#[test]
fn amd_pods_routes_domains_stop_trtllm_and_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // AMD, two GPUs: SYS_PTRACE and seccomp Unconfined; one GPU: neither.
    let amd = "name = \"AMD Instinct MI300X OAM\"\nvendor = \"amd\"\nmemory_mb = 196592\n";
    let fleet = format!("[[node]]\nid = \"mi\"\ncpus = 64\nmemory_total_mb = 524288\n{}", gpus(4, amd));
    let catalog = "[[model]]\nname = \"two\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"amd-instinct-mi300x-oam\"\ngpus_per_node = 2\n\
        [[model]]\nname = \"one\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"amd-instinct-mi300x-oam\"\n";
    let (_, out) = place_render(d, &fleet, catalog, "kubernetes", &[]);
    for o in docs(&stdout(&out)).into_iter().filter(|o| o["kind"] == "Deployment") {
        let sc = &container(&o["spec"]["template"])["securityContext"];
        if o["metadata"]["name"] == "llmgw-two-r0" {
            assert_eq!(sc["capabilities"]["add"], serde_json::json!(["SYS_PTRACE"]), "{sc}");
            assert_eq!(sc["seccompProfile"]["type"], "Unconfined", "{sc}");
        } else {
            assert!(sc.is_null(), "{sc}");
        }
    }
    // HTTPRoutes: a request timeout, 300 s unless told.
    let gw = ["--gateway", "inference-pool", "--epp", "epp", "--gateway-parent", "gw/main"];
    let out = render_plan("kubernetes", &d.join("plan.json"), &d.join("c.toml"), &d.join("fleet.toml"), &gw);
    let routes: Vec<Value> = docs(&stdout(&out)).into_iter().filter(|o| o["kind"] == "HTTPRoute").collect();
    assert!(!routes.is_empty() && routes.iter().all(|r| r["spec"]["rules"][0]["timeouts"]["request"] == "300s"));
    let mut longer = gw.to_vec();
    longer.extend(["--route-timeout", "1h30m"]);
    let out = render_plan("kubernetes", &d.join("plan.json"), &d.join("c.toml"), &d.join("fleet.toml"), &longer);
    assert!(stdout(&out).contains("request: 1h30m"), "{}", stdout(&out));
    let mut bad = gw.to_vec();
    bad.extend(["--route-timeout", "5 minutes"]);
    let out = render_plan("kubernetes", &d.join("plan.json"), &d.join("c.toml"), &d.join("fleet.toml"), &bad);
    assert_eq!(code(&out), 2, "{}", transcript(&out));

    // --stop: the Services and pools of a model no longer run.
    let empty = write(d, "empty.json", r#"{"placements": [], "existing": [], "unplaced": []}"#);
    let old = d.join("plan.json");
    let mut stop = vec!["render", "kubernetes", "--stop", old.to_str().unwrap(), empty.to_str().unwrap()];
    stop.extend(gw);
    let out = run(&stop);
    let lines = stdout(&out);
    for kind in [
        "deployment/llmgw-two-r0",
        "service/llmgw-two",
        "inferencepool.inference.networking.k8s.io/llmgw-two",
        "httproute.gateway.networking.k8s.io/llmgw-two",
    ] {
        assert!(lines.contains(&format!("kubectl delete {kind}\n")), "{kind}: {lines}");
    }

    // TensorRT-LLM on two GPUs: one MPI task a GPU, as its docs launch it.
    let sub = d.join("trt");
    std::fs::create_dir_all(&sub).unwrap();
    let fleet = format!("[[node]]\nid = \"g1\"\ncpus = 64\nmemory_total_mb = 65536\n{}", gpus(2, H100));
    let trt = "[[model]]\nname = \"t\"\n[[model.profile]]\nname = \"p\"\nengine = \"trtllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 2\n";
    let (_, out) = place_render(&sub, &fleet, trt, "slurm", &[]);
    let text = stdout(&out);
    assert!(text.contains("#SBATCH --ntasks-per-node=2\n#SBATCH --cpus-per-task=32\n"), "{text}");
    assert!(text.contains("srun --kill-on-bad-exit=1 --mpi=pmix --ntasks-per-node=2 --cpus-per-task=32 trtllm-llmapi-launch trtllm-serve "), "{text}");

    // The hub's weights cached on the disk the inventory reports.
    let fleet = format!(
        "[[node]]\nid = \"g1\"\ncpus = 64\nmemory_total_mb = 65536\ndisk = {{ path = \"/mnt/nvme\", free_bytes = 1000000000000, total_bytes = 2000000000000 }}\n{}",
        gpus(2, H100)
    );
    let sub = d.join("cache");
    std::fs::create_dir_all(&sub).unwrap();
    let one =
        "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n";
    let (_, out) = place_render(&sub, &fleet, one, "kubernetes", &[]);
    let text = stdout(&out);
    assert!(
        text.contains("path: /mnt/nvme/.cache/huggingface\n") && text.contains("value: /mnt/nvme/.cache/huggingface\n"),
        "{text}"
    );
    assert!(!text.contains("/var/cache/llmgw"), "{text}");
}

/// `--stop` with the inventory names the ComputeDomain of a replica that
/// ran in an NVLink domain; without it, none (a cluster without NVIDIA's
/// DRA driver has no such kind, and deleting one fails there).
#[test]
fn stop_with_the_inventory_deletes_a_replicas_compute_domain() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = d.join("dra.toml");
    let out = run(&[
        "inventory",
        "import",
        "kubernetes",
        &root().join("examples/dra/nodes.json").to_string_lossy(),
        "--resource-slices",
        &root().join("examples/dra/resourceslices.json").to_string_lossy(),
        "-o",
        fleet.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let plan = placed_plan(d, &root().join("examples/dra/catalog.toml"), &fleet);
    let text = stdout(&render_plan("kubernetes", &plan, &root().join("examples/dra/catalog.toml"), &fleet, &[]));
    let domain = docs(&text).into_iter().find(|o| o["kind"] == "ComputeDomain").expect("an NVLink replica");
    assert_eq!(domain["spec"]["numNodes"], 0, "{domain}");
    let name = domain["metadata"]["name"].as_str().unwrap().to_string();
    let empty = write(d, "empty.json", r#"{"placements": [], "existing": [], "unplaced": []}"#);
    let stop = |extra: &[&str]| {
        let mut args = vec!["render", "kubernetes", "--stop", plan.to_str().unwrap(), empty.to_str().unwrap()];
        args.extend_from_slice(extra);
        stdout(&run(&args))
    };
    let line = format!("kubectl delete computedomain.resource.nvidia.com/{name} --ignore-not-found\n");
    assert!(stop(&["-i", fleet.to_str().unwrap()]).contains(&line), "{}", stop(&["-i", fleet.to_str().unwrap()]));
    assert!(!stop(&[]).contains("computedomain"), "{}", stop(&[]));
}
