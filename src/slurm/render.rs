//! Slurm as the runtime of a plan: one sbatch script per replica, held to
//! exactly its planned nodes, one task a node, the GPUs asked for by the
//! planned GPUs' own gres type, the CPUs and memory its share of the node,
//! and ports of its own on every node it shares with another replica. See
//! docs/slurm.md and docs/serving.md.

mod script;
use script::*;

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
        ports.dist = book.take_block(nodes, wanted.dist, crate::engines::DIST_BLOCK).ok_or_else(none_left)?;
    }
    if launch::needs_master(j.profile, j.nodes.len(), j.ray) {
        ports.master = book.take(nodes, wanted.master).ok_or_else(none_left)?;
    }
    Ok(ports)
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

#[cfg(test)]
mod tests {
    use super::*;

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
