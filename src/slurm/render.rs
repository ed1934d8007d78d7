//! Slurm as the runtime of a plan: one sbatch script per replica, held to
//! exactly its planned nodes, one task a node, the GPUs asked for by the
//! planned GPUs' own gres type, the CPUs and memory its share of the node,
//! and ports of its own on every node it shares with another replica. See
//! docs/slurm.md and docs/serving.md.

use std::fmt::Write as _;
use std::path::Path;

use super::ports::PortBook;
use crate::diag::{Code, Diag};
use crate::inventory::Node;
use crate::launch::{self, Platform, Ports, Role, Spec, quote, words};
use crate::plan::{Entry, Kind};
use crate::render::out::{File, HEADER};
use crate::render::{Endpoint, Job, Rendered, Resolved};

/// What `render slurm` is told besides the plan: sbatch options passed
/// through, where logs go, and whether profiles' images run under pyxis.
#[derive(Default)]
pub struct Settings {
    pub log_dir: Option<String>,
    pub partition: Option<String>,
    pub account: Option<String>,
    pub qos: Option<String>,
    pub time: Option<String>,
    pub pyxis: bool,
    /// Where hub downloads go under pyxis (default `$HOME/.cache/huggingface`).
    pub cache_dir: Option<String>,
}

/// Every task of a job learns the leader from `LLMGW_LEADER` (the job's
/// first node, set by the script) and its rank from Slurm.
const SLURM: Platform = Platform { leader: "LLMGW_LEADER", rank: "SLURM_NODEID" };

/// The comment that says which replica a job is: authoritative where the
/// job name was cut. Names are written as they are where they hold only
/// plain characters; any other byte is %XX-escaped, so a name with a
/// comma, a space or a quote cannot break the `#SBATCH` line or the
/// key=value list.
pub fn comment(model: &str, replica: u32, profile: &str) -> String {
    format!("llmgw.io/model={},llmgw.io/replica={replica},llmgw.io/profile={}", escape(model), escape(profile))
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'/' | b':' | b'@' | b'+') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The order Slurm gives a job's nodes (and so `SLURM_NODEID` 0, the
/// leader): by name, numbers compared as numbers (gpu9 before gpu10).
fn slurm_order(a: &str, b: &str) -> std::cmp::Ordering {
    let split = |s: &str| {
        let digits = s.len() - s.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (head, num) = s.split_at(s.len() - digits);
        (head.to_string(), num.parse::<u128>().unwrap_or(0), num.len())
    };
    split(a).cmp(&split(b)).then_with(|| a.cmp(b))
}

/// The scripts that run a resolved plan where it was placed, in plan order;
/// rendered into a folder (`dir`), `submit.sh` after them. Replicas that run
/// keep the ports the folder's scripts record (see ports.rs).
pub fn render<'a>(r: &Resolved<'a>, s: &Settings, dir: Option<&Path>) -> Result<Rendered<'a>, Vec<Diag>> {
    let mut errors = settings_values(s);
    let previous = dir.map(super::ports::previous).unwrap_or_default();
    let names = crate::render::names_of(r, super::submit::job_names);
    let mut book = PortBook::default();
    // What runs keeps its ports: replicas that run (rendered again, or left
    // as they are) book theirs before any new one is given one.
    let kept = |e: &Entry| (e.kind == Kind::Existing).then(|| previous.get(&(e.model.clone(), e.replica))).flatten();
    for e in r.jobs.iter().map(|j| j.entry).chain(r.skipped.iter().copied()) {
        if let Some(p) = kept(e) {
            book.book_all(&e.nodes.iter().map(|a| a.node.as_str()).collect::<Vec<_>>(), p);
        }
    }
    let mut out = Rendered::new("slurm", stream);
    // A replica not rendered (pending, say) keeps its script as it is.
    out.kept.extend(names.skipped.iter().map(|n| format!("{n}.sbatch")));
    out.warnings.extend(untyped_gres(r));
    for (j, name) in r.jobs.iter().zip(names.jobs) {
        if let Some(d) = unwritable(j, s) {
            errors.push(d);
            continue;
        }
        let node_ids: Vec<&str> = j.nodes.iter().map(|n| n.id.as_str()).collect();
        let ports = match kept(j.entry) {
            Some(p) => *p,
            None => match take_ports(&mut book, &node_ids, j) {
                Ok(p) => p,
                Err(d) => {
                    errors.push(d);
                    continue;
                }
            },
        };
        let mut by_slurm = node_ids.clone();
        by_slurm.sort_by(|a, b| slurm_order(a, b));
        let url = match leader_url(j, by_slurm[0], ports.http) {
            Ok(url) => url,
            Err(d) => {
                errors.push(d);
                continue;
            }
        };
        out.endpoints.push(Endpoint {
            model: &j.entry.model,
            replica: j.entry.replica,
            url: url.clone(),
            engine: j.profile.engine.name,
        });
        out.push(Ok(File {
            name: format!("{name}.sbatch"),
            text: script(j, &name, ports, &url, s),
            model: Some(j.entry.model.clone()),
            replica: Some(j.entry.replica),
        }));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    if let Some(dir) = dir {
        let submit = super::submit::file(r, dir, out.files().unwrap_or_default());
        out.push(Ok(submit));
    }
    Ok(out)
}

/// Why a job's script cannot be written: a node, a gres or (under pyxis)
/// a weights path its `#SBATCH` or `srun` lines cannot hold.
fn unwritable(j: &Job<'_>, s: &Settings) -> Option<Diag> {
    if let Some(bad) = j.nodes.iter().find(|n| !plain(&n.id)) {
        return Some(
            Diag::error(
                Code::CannotRender,
                format!("{} r{}: node `{}` cannot be named in a #SBATCH line", j.entry.model, j.entry.replica, bad.id),
            )
            .help("Slurm node names hold no spaces, quotes, commas or brackets"),
        );
    }
    if let Some(g) = gres(j).filter(|g| !plain(g)) {
        return Some(
            Diag::error(
                Code::CannotRender,
                format!(
                    "{} r{}: the gres `{}` cannot be written in a #SBATCH line",
                    j.entry.model,
                    j.entry.replica,
                    crate::term::escape(&g)
                ),
            )
            .help("a gres type holds no spaces, quotes or commas; check the GPU names or the slurm/gres-type label"),
        );
    }
    // pyxis splits --container-mounts at `,` and a mount at `:`: such a
    // path would become other mounts (the host's /root, read-write).
    if let (true, launch::Weights::Local(path)) = (s.pyxis, &j.weights)
        && path.contains([',', ':'])
    {
        return Some(
            Diag::error(
                Code::CannotRender,
                format!(
                    "{} r{}: the weights path `{}` holds `,` or `:`, which pyxis reads as mount separators",
                    j.entry.model,
                    j.entry.replica,
                    crate::term::escape(path)
                ),
            )
            .help("move or link the weights to a path without `,` and `:`, or render without --container"),
        );
    }
    None
}

/// The scripts as one stream: one after another.
fn stream(files: &[File]) -> String {
    files.iter().map(|f| f.text.as_str()).collect::<Vec<_>>().join("\n")
}

/// Whether the replica starts as an MPI job of one task a GPU:
/// TensorRT-LLM on more than one GPU (`srun --mpi=pmix` with
/// `trtllm-llmapi-launch`, as its Slurm examples run it).
fn mpi_launch(j: &Job<'_>) -> bool {
    j.profile.engine.name == "trtllm" && j.profile.gpus_per_node > 1
}

/// The replica's URL at its leader node. The node id is the URL's host:
/// one that is no host name (`user@evil.example:443/x?`) would send the
/// model's requests, through LiteLLM's api_base, somewhere else.
fn leader_url(j: &Job<'_>, leader: &str, port: u16) -> Result<String, Diag> {
    match crate::render::url_host(leader) {
        Some(host) => Ok(format!("http://{host}:{port}")),
        None => Err(Diag::error(
            Code::NotAHost,
            format!(
                "{} r{}: node `{}` is no host name, so it cannot be the host of the replica's URL",
                j.entry.model,
                j.entry.replica,
                crate::term::escape(leader)
            ),
        )
        .help("a node id that serves a replica is a host name or an IP address: letters, digits, `.`, `-`, `_`")),
    }
}

/// A new replica's ports: its wanted ones, or the next free on its nodes;
/// an error naming the nodes when none is left below 65536.
fn take_ports<'a>(book: &mut PortBook<'a>, nodes: &[&'a str], j: &Job<'_>) -> Result<Ports, Diag> {
    let wanted = Ports::defaults(j.profile);
    let none_left = || {
        Diag::error(
            Code::CannotRender,
            format!(
                "{} r{}: no free port is left below 65536 on {}",
                j.entry.model,
                j.entry.replica,
                crate::report::join(nodes)
            ),
        )
        .help("the replicas on those nodes use every port from the profile's up; give the profile a lower `port`")
    };
    let mut ports = wanted;
    ports.http = book.take(nodes, wanted.http).ok_or_else(none_left)?;
    if launch::needs_ray(j.profile, j.nodes.len(), j.ray) {
        ports.ray = book.take(nodes, wanted.ray).ok_or_else(none_left)?;
    }
    if launch::needs_dist(j.profile, j.nodes.len()) {
        ports.dist = book.take_block(nodes, wanted.dist, launch::DIST_BLOCK).ok_or_else(none_left)?;
    }
    if launch::needs_master(j.profile, j.nodes.len(), j.ray) {
        ports.master = book.take(nodes, wanted.master).ok_or_else(none_left)?;
    }
    Ok(ports)
}

/// An image as pyxis (enroot) names it: `REGISTRY#IMAGE`, where a
/// container runtime writes `REGISTRY/IMAGE` (`nvcr.io/nvidia/x:1` ->
/// `nvcr.io#nvidia/x:1`); an image with no registry host is left as is.
fn pyxis_image(image: &str) -> String {
    match image.split_once('/') {
        Some((host, rest))
            if !image.contains('#') && (host.contains('.') || host.contains(':') || host == "localhost") =>
        {
            format!("{host}#{rest}")
        }
        _ => image.to_string(),
    }
}

/// A value that can stand in a `#SBATCH` line as it is.
fn plain(v: &str) -> bool {
    !v.is_empty()
        && !v.chars().any(|c| c.is_whitespace() || c.is_control() || matches!(c, '\'' | '"' | ',' | '[' | ']' | '#'))
}

fn settings_values(s: &Settings) -> Vec<Diag> {
    [
        ("--log-dir", &s.log_dir),
        ("--partition", &s.partition),
        ("--account", &s.account),
        ("--qos", &s.qos),
        ("--time", &s.time),
        ("--cache-dir", &s.cache_dir),
    ]
    .into_iter()
    .filter_map(|(flag, v)| {
        let v = v.as_deref()?;
        let ok = !v.is_empty()
            && !v.chars().any(|c| c.is_whitespace() || c.is_control() || matches!(c, '\'' | '"' | '#'))
            // A mount: pyxis splits its list at `,` and a mount at `:`.
            && (flag != "--cache-dir" || !v.contains([',', ':']));
        (!ok).then(|| {
            Diag::error(
                Code::BadArgument,
                format!("{flag} {}: cannot be written in a #SBATCH line", crate::term::escape(v)),
            )
            .help("give a value without spaces, quotes or control characters")
        })
    })
    .collect()
}

/// `gpu:<type>:<count>` for one node's share: on a node imported from
/// Slurm the planned GPUs' own gres type (the GPU name the import gives),
/// a MIG device's gres type for a MIG replica; on any other node no type
/// (`gpu:<count>`, and render warns): llmgw's class is not a name Slurm
/// knows, and sbatch refuses a gres type no node has.
fn gres(j: &Job<'_>) -> Option<String> {
    let at = &j.entry.nodes[0];
    let node: &Node = j.nodes[0];
    let gpu = node.gpus.get(node.gpu_position(*at.gpus.first()?)?)?;
    if let [m] = at.mig_devices.as_slice() {
        // The gres type Slurm itself gives the device (an autodetected
        // `nvidia_a100_3g.39gb`), which the import keeps; else the profile.
        let device = gpu.mig_devices.iter().find(|d| d.index == *m)?;
        let ty = node.labels.get(&format!("slurm/mig-gres-type.{}", device.profile)).unwrap_or(&device.profile);
        return Some(format!("gpu:{ty}:1"));
    }
    let count = at.gpus.len();
    match (from_slurm(node), gpu.name.as_str(), node.labels.get("slurm/gres-type")) {
        // Untyped gres (`Gres=gpu:8`): no type to ask for.
        (true, "gpu", _) => Some(format!("gpu:{count}")),
        (true, name, _) if plain(name) => Some(format!("gpu:{name}:{count}")),
        // A node that says its gres type by label.
        (true, _, Some(ty)) => Some(format!("gpu:{ty}:{count}")),
        _ => Some(format!("gpu:{count}")),
    }
}

/// Imported from Slurm (its labels say so): GPU names are gres types.
fn from_slurm(node: &Node) -> bool {
    node.labels.keys().any(|k| k.starts_with("slurm/"))
}

/// One warning for the replicas whose GPUs are asked for without a type.
fn untyped_gres(r: &Resolved<'_>) -> Option<Diag> {
    let names: Vec<String> = r
        .jobs
        .iter()
        .filter(|j| j.entry.nodes.first().is_some_and(|a| !a.gpus.is_empty() && a.mig_devices.is_empty()))
        .filter(|j| !from_slurm(j.nodes[0]))
        .map(|j| format!("{} r{}", j.entry.model, j.entry.replica))
        .collect();
    (!names.is_empty()).then(|| {
        Diag::warning(
            Code::UntypedGres,
            format!(
                "{}: on nodes not imported from Slurm, so their GPUs are asked for without a gres type (`--gres=gpu:N`): Slurm may give GPUs of another type",
                crate::diag::shorten(&names.iter().map(String::as_str).collect::<Vec<_>>(), 5)
            ),
        )
        .help("import the nodes with `llmgw inventory import slurm` (their gres types come with them), or give the profile `slurm = { constraint = ... }` to pick the GPU type")
    })
}

fn script(j: &Job<'_>, name: &str, ports: Ports, url: &str, s: &Settings) -> String {
    let e = j.entry;
    let p = j.profile;
    let nodes = j.nodes.len();
    let mut t = String::from("#!/bin/bash\n");
    let _ = writeln!(t, "{HEADER} slurm; the next render into this folder replaces or removes it.");
    let _ = writeln!(t, "#SBATCH --job-name={name}");
    let _ = writeln!(t, "#SBATCH --comment={}", comment(&e.model, e.replica, &p.name));
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
    let _ = writeln!(t, "{}", super::ports::line(&ports));
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
                if in_llama_image && argv[0] == "llama-server" {
                    argv[0] = "/app/llama-server".to_string();
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
fn pyxis(t: &mut String, srun: &mut String, j: &Job<'_>, s: &Settings, image: &str) {
    let p = j.profile;
    // enroot's root file system is read-only unless asked otherwise, and
    // the engines write caches (torch compile, Triton, Hugging Face) at
    // start-up: writable, and the caches in the node's cache folder,
    // mounted, so a restart finds them and fetches no weights again.
    let _ = write!(srun, " --container-image={} --container-writable", quote(&pyxis_image(image)));
    let dir = s.cache_dir.as_deref().map_or_else(|| "~/.cache/huggingface".to_string(), quote);
    let _ = writeln!(t, "export HF_HOME={dir}");
    t.push_str("export VLLM_CACHE_ROOT=\"$HF_HOME/vllm\" XDG_CACHE_HOME=\"$HF_HOME/xdg\"\n");
    match p.engine.name {
        "llama.cpp" => t.push_str("export LLAMA_CACHE=\"$HF_HOME\"\n"),
        "ollama" => t.push_str("export OLLAMA_MODELS=\"$HF_HOME/ollama\"\n"),
        _ => {}
    }
    t.push_str("mkdir -p \"$HF_HOME\" \"$VLLM_CACHE_ROOT\" \"$XDG_CACHE_HOME\"\n");
    srun.push_str(" --container-mounts=\"$HF_HOME:$HF_HOME\"");
    // The node's copy of the weights, seen at the same path inside.
    if let crate::launch::Weights::Local(path) = &j.weights {
        let _ = write!(srun, ",{}", quote(&format!("{path}:{path}:ro")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_escape_what_would_break_them() {
        assert_eq!(
            comment("llama-3.1-70b", 2, "h100-tp4"),
            "llmgw.io/model=llama-3.1-70b,llmgw.io/replica=2,llmgw.io/profile=h100-tp4"
        );
        assert_eq!(
            comment("a b,c=d", 0, "p'1"),
            "llmgw.io/model=a%20b%2Cc%3Dd,llmgw.io/replica=0,llmgw.io/profile=p%271"
        );
    }

    #[test]
    fn pyxis_images_name_their_registry_with_a_hash() {
        assert_eq!(
            pyxis_image("nvcr.io/nvidia/tensorrt-llm/release:0.15.0"),
            "nvcr.io#nvidia/tensorrt-llm/release:0.15.0"
        );
        assert_eq!(pyxis_image("vllm/vllm-openai:v0.6.3"), "vllm/vllm-openai:v0.6.3");
        assert_eq!(pyxis_image("localhost:5000/x"), "localhost:5000#x");
        assert_eq!(pyxis_image("nvcr.io#nvidia/x"), "nvcr.io#nvidia/x");
    }

    #[test]
    fn slurm_orders_numbers_as_numbers() {
        let mut v = vec!["gpu10", "gpu9", "cpu1", "gpu09a"];
        v.sort_by(|a, b| slurm_order(a, b));
        assert_eq!(v, ["cpu1", "gpu9", "gpu10", "gpu09a"]);
    }
}
