//! The sbatch script of one replica: #SBATCH lines, the environment, the
//! srun that starts its engine on every node, under pyxis where asked.

use super::*;

/// Whether the replica starts as an MPI job of one task a GPU:
/// TensorRT-LLM on more than one GPU (`srun --mpi=pmix` with
/// `trtllm-llmapi-launch`, as its Slurm examples run it).
pub(super) fn mpi_launch(j: &Job<'_>) -> bool {
    j.profile.engine.mpi_ranks && j.profile.gpus_per_node > 1
}

/// An image as pyxis (enroot) names it: `REGISTRY#IMAGE`, where a
/// container runtime writes `REGISTRY/IMAGE` (`nvcr.io/nvidia/x:1` ->
/// `nvcr.io#nvidia/x:1`); an image with no registry host is left as is.
pub(super) fn pyxis_image(image: &str) -> String {
    match image.split_once('/') {
        Some((host, rest))
            if !image.contains('#') && (host.contains('.') || host.contains(':') || host == "localhost") =>
        {
            format!("{host}#{rest}")
        }
        _ => image.to_string(),
    }
}

pub(super) fn script(j: &Job<'_>, name: &str, ports: Ports, url: &str, s: &Settings) -> String {
    let e = j.entry;
    let p = j.profile;
    let nodes = j.nodes.len();
    let mut t = String::from("#!/bin/bash\n");
    let _ = writeln!(t, "{HEADER} slurm; the next render into this folder replaces or removes it.");
    let _ = writeln!(t, "#SBATCH --job-name={name}");
    let _ = writeln!(t, "#SBATCH --comment={}", crate::identity::slurm_comment(&e.model, e.replica, &p.name));
    let _ = writeln!(t, "#SBATCH --nodes={nodes}");
    let mut nodelist: Vec<&str> = j.nodes.iter().map(|n| n.id.as_str()).collect();
    nodelist.sort_by(|a, b| slurm_order(a, b));
    let _ = writeln!(t, "#SBATCH --nodelist={}", nodelist.join(","));
    // TensorRT-LLM on several GPUs is an MPI job: one task a GPU, each
    // with its share of the CPUs (its docs' Slurm launch).
    let tasks = if mpi_launch(j) { p.gpus_per_node.max(1) } else { 1 };
    let _ = writeln!(t, "#SBATCH --ntasks-per-node={tasks}");
    let cpus = j.resources.millicpus.map(|m| (m / 1000 / u64::from(tasks)).max(1));
    if let Some(c) = cpus {
        let _ = writeln!(t, "#SBATCH --cpus-per-task={c}");
    }
    if let Some(mib) = j.resources.memory_mib {
        let _ = writeln!(t, "#SBATCH --mem={mib}M");
    }
    if let Some(g) = gres(j) {
        let _ = writeln!(t, "#SBATCH --gres={g}");
    }
    let logs = s.log_dir.as_deref().map(|d| format!("{}/", d.trim_end_matches('/'))).unwrap_or_default();
    let _ = writeln!(t, "#SBATCH --output={logs}%x-%j.out");
    let _ = writeln!(t, "#SBATCH --error={logs}%x-%j.err");
    // The profile's own `slurm` table wins over the flags (a CPU-only
    // profile may name the CPU partition).
    let k = &p.serving.slurm;
    for (flag, v) in [
        ("partition", k.partition.as_ref().or(s.partition.as_ref())),
        ("account", k.account.as_ref().or(s.account.as_ref())),
        ("qos", k.qos.as_ref().or(s.qos.as_ref())),
        ("time", k.time.as_ref().or(s.time.as_ref())),
        ("constraint", k.constraint.as_ref()),
    ] {
        if let Some(v) = v {
            let _ = writeln!(t, "#SBATCH --{flag}={v}");
        }
    }
    let _ = writeln!(t, "# {} replica {} (profile {}), serving at {url}", e.model, e.replica, p.name);
    let _ = writeln!(t, "{}", super::super::ports::line(&ports));
    for a in e.nodes.iter().filter(|a| !a.gpus.is_empty()) {
        let _ = writeln!(t, "# Planned GPUs on {}: {} (Slurm picks the indices)", a.node, crate::report::join(&a.gpus));
    }
    t.push_str("set -euo pipefail\n");
    for (k, v) in &p.serving.env {
        let _ = writeln!(t, "export {k}={}", quote(v));
    }
    let hcas = &j.hcas;
    if nodes > 1 && !hcas.is_empty() {
        let _ = writeln!(t, "export NCCL_IB_HCA={}", quote(&crate::launch::nccl_ib_hca(hcas)));
    }
    // Any node's engine dying ends the job (and so the replica), rather
    // than leaving the others waiting for it.
    let mut srun = String::from("srun --kill-on-bad-exit=1");
    if tasks > 1 {
        srun.push_str(" --mpi=pmix");
    }
    let _ = write!(srun, " --ntasks-per-node={tasks}");
    if let Some(c) = cpus {
        let _ = write!(srun, " --cpus-per-task={c}");
    }
    let image = j.image();
    let in_llama_image = s.pyxis && image.contains("ggml-org/llama.cpp");
    if s.pyxis {
        pyxis(&mut t, &mut srun, j, s, image);
    }
    let spec = Spec { profile: p, served_name: &e.model, weights: &j.weights, nodes: nodes as u32, ports, ray: j.ray };
    if nodes <= 1 {
        match spec.argv() {
            Some(mut argv) => {
                // The llama.cpp image's server is its entrypoint, at
                // /app/llama-server, not on PATH.
                if let Some(server) = p.engine.image_entrypoint.filter(|_| in_llama_image) {
                    argv[0] = server.to_string();
                }
                // Rank 0 serves; the other ranks become its MPI workers.
                if tasks > 1 {
                    argv.insert(0, "trtllm-llmapi-launch".to_string());
                }
                let _ = writeln!(t, "{srun} {}", words(&argv));
            }
            None => {
                let _ = writeln!(t, "{srun} bash -c {}", quote(&spec.script(Role::Single, &SLURM)));
            }
        }
        return t;
    }
    t.push_str("LLMGW_LEADER=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\nexport LLMGW_LEADER\n");
    let leader = spec.script(Role::Leader, &SLURM);
    let worker = spec.script(Role::Worker, &SLURM);
    let each = if leader == worker {
        leader
    } else {
        format!("if [ \"$SLURM_NODEID\" = 0 ]; then\n{leader}\nelse\n{worker}\nfi")
    };
    let _ = writeln!(t, "{srun} bash -c {}", quote(&each));
    t
}

/// Under pyxis: the image, a writable root, and the caches mounted.
pub(super) fn pyxis(t: &mut String, srun: &mut String, j: &Job<'_>, s: &Settings, image: &str) {
    let p = j.profile;
    // enroot's root file system is read-only unless asked otherwise, and
    // the engines write caches (torch compile, Triton, Hugging Face) at
    // start-up: writable, and the caches in the node's cache folder,
    // mounted, so a restart finds them and fetches no weights again.
    let _ = write!(srun, " --container-image={} --container-writable", quote(&pyxis_image(image)));
    let dir = s.cache_dir.as_deref().map_or_else(|| "~/.cache/huggingface".to_string(), quote);
    let _ = writeln!(t, "export HF_HOME={dir}");
    t.push_str("export VLLM_CACHE_ROOT=\"$HF_HOME/vllm\" XDG_CACHE_HOME=\"$HF_HOME/xdg\"\n");
    if let Some(c) = &p.engine.cache_env {
        let _ = writeln!(t, "export {}=\"{}\"", c.var, c.slurm);
    }
    t.push_str("mkdir -p \"$HF_HOME\" \"$VLLM_CACHE_ROOT\" \"$XDG_CACHE_HOME\"\n");
    srun.push_str(" --container-mounts=\"$HF_HOME:$HF_HOME\"");
    // The node's copy of the weights, seen at the same path inside.
    if let crate::launch::Weights::Local(path) = &j.weights {
        let _ = write!(srun, ",{}", quote(&format!("{path}:{path}:ro")));
    }
}
