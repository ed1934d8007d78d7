//! Slurm jobs as `squeue --json` (OpenAPI v0.0.37/38 and the data_parser
//! versions after) or `scontrol -d show job [-o]` print them: which run
//! where with which GPU indices and CPUs, and which are llmgw's replicas,
//! told by the comment render writes (docs/slurm.md, "Import again"):
//! `llmgw.io/model=<model>,llmgw.io/replica=<r>,llmgw.io/profile=<p>`.

use serde_json::Value;

use super::records::{number, string, words};
use super::text;
use super::tres;
use crate::diag::{Code, Diag, Source};
use crate::doc::Span;
use crate::import::file::{File, Step};

/// What a job does to the nodes it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Running (or completing, configuring, suspended): holds its GPUs.
    Holding,
    /// Waiting for resources: holds nothing yet.
    Pending,
    /// Finished, cancelled, failed: gone.
    Done,
}

/// An llmgw replica, as its job's comment names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub model: String,
    pub replica: u32,
    pub profile: Option<String>,
}

/// One node of a running job: its name, the GPU gres it holds there
/// (`gpu:h100:4(IDX:0-3)`), and its CPUs there.
pub struct Share {
    pub node: String,
    pub gres: String,
    pub cpus: Option<f64>,
    /// MiB.
    pub memory_mb: Option<u64>,
}

/// What a pending job asks of each node it wants: GPUs by gres type
/// (empty: any), CPUs, memory (MiB).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ask {
    pub gpus: Vec<(String, u64)>,
    pub cpus: Option<f64>,
    pub memory_mb: Option<u64>,
}

pub struct Job {
    pub id: String,
    /// The id as a number (`None` for an array task's `123_4`).
    pub number: Option<u64>,
    pub phase: Phase,
    /// `None`: not llmgw's; `Some(Err)`: an llmgw comment that does not parse.
    pub identity: Option<Result<Identity, String>>,
    /// Who submitted it: the user's name and uid, where the listing says.
    pub user: Option<String>,
    pub uid: Option<u64>,
    /// Per node, for a holding job.
    pub shares: Vec<Share>,
    /// The nodes a pending job asked for (`--nodelist`).
    pub wanted: Vec<String>,
    /// What a pending job asks of each of them.
    pub ask: Ask,
    pub span: Span,
}

impl Job {
    fn new(id: String, phase: Phase, identity: Option<Result<Identity, String>>) -> Job {
        Job {
            number: id.parse().ok(),
            id,
            phase,
            identity,
            user: None,
            uid: None,
            shares: Vec::new(),
            wanted: Vec::new(),
            ask: Ask::default(),
            span: Span::default(),
        }
    }
}

impl Job {
    /// Whether the import has anything to do with the job: a running job
    /// on some node, or llmgw's (running or pending). Finished jobs and
    /// others' pending jobs hold nothing.
    fn matters(&self) -> bool {
        match self.phase {
            Phase::Done => false,
            Phase::Pending => self.identity.is_some(),
            Phase::Holding => self.identity.is_some() || !self.shares.is_empty(),
        }
    }
}

/// A per-node share of a job-wide count.
fn each(total: Option<u64>, nodes: usize) -> Option<u64> {
    total.filter(|_| nodes > 0).map(|t| t / nodes as u64)
}

const MODEL: &str = "llmgw.io/model=";
const REPLICA: &str = ",llmgw.io/replica=";
const PROFILE: &str = ",llmgw.io/profile=";

/// llmgw's identity in a job comment; `None` when the comment is not
/// llmgw's. Render %XX-escapes every byte of a name but plain ones, so a
/// comma or an equals sign in a name arrives escaped; a comment written by
/// hand may still hold them raw: the model comes first and may hold any
/// character, the replica is the first `,llmgw.io/replica=<digits>`
/// followed by `,llmgw.io/profile=` or the end, the profile is the rest.
/// Names are unescaped after the split.
pub fn identity(comment: &str) -> Option<Result<Identity, String>> {
    let rest = comment.trim().strip_prefix(MODEL)?;
    let bad = || format!("the comment `{}` is not llmgw's `{MODEL}<model>{REPLICA}<r>{PROFILE}<p>`", comment.trim());
    if comment.chars().any(char::is_control) {
        return Some(Err(bad()));
    }
    for (at, _) in rest.match_indices(REPLICA) {
        let after = &rest[at + REPLICA.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let tail = &after[digits..];
        let profile = if tail.is_empty() {
            None
        } else if let Some(p) = tail.strip_prefix(PROFILE) {
            Some(p.to_string())
        } else {
            continue;
        };
        let Ok(replica) = after[..digits].parse::<u32>() else { continue };
        let profile = match profile.map(|p| unescape(&p)) {
            None => None,
            Some(Some(p)) => Some(p),
            Some(None) => return Some(Err(bad())),
        };
        let Some(model) = unescape(&rest[..at]) else { return Some(Err(bad())) };
        if model.is_empty()
            || profile.as_deref() == Some("")
            || model.chars().chain(profile.iter().flat_map(|p| p.chars())).any(char::is_control)
        {
            return Some(Err(bad()));
        }
        return Some(Ok(Identity { model, replica, profile }));
    }
    Some(Err(bad()))
}

/// `%XX` escapes back to their bytes (`%2C` -> `,`); a `%` not followed by
/// two hex digits stays as it is. `None` when the bytes are not UTF-8.
fn unescape(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (b[i], b.get(i + 1).copied().and_then(hex), b.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

fn phase(words: &[String]) -> Phase {
    let has = |w: &[&str]| words.iter().any(|x| w.contains(&x.to_ascii_uppercase().as_str()));
    if has(&["RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED", "STAGE_OUT", "SIGNALING", "RESIZING"]) {
        Phase::Holding
    } else if has(&["PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD"]) {
        Phase::Pending
    } else {
        Phase::Done
    }
}

const HELP: &str = "give what `squeue --json` or `scontrol -d show job -o` prints";

/// The jobs of a file: JSON when it starts with `{`, else text.
pub fn read(src: &Source) -> Result<Vec<Job>, Vec<Diag>> {
    if crate::import::is_blank(src.text()) {
        return Err(vec![
            Diag::error(Code::EmptyInput, format!("{} is empty: there is no job list", src.name()))
                .at(src, Span::new(0, src.text().len()), "nothing here")
                .help(format!("{HELP}; with no job at all, `squeue --json` still prints `{{\"jobs\": []}}`")),
        ]);
    }
    if src.text().trim_start().starts_with('{') { json(src) } else { text_jobs(src) }
}

/// The nodes a hostlist names, within what is left of the file's budget
/// of names: one budget for the whole job list, as for a node list, so
/// twenty lines of hostlists cannot stand for billions of names.
fn nodes_of(expr: &str, left: &mut u64) -> Result<Vec<String>, String> {
    if expr.trim().is_empty() || expr == "(null)" || expr == "None assigned" {
        return Ok(Vec::new());
    }
    let names = super::hostlist::expand_within(expr.trim(), *left)?;
    *left = left.saturating_sub(names.len() as u64);
    Ok(names)
}

fn json(src: &Source) -> Result<Vec<Job>, Vec<Diag>> {
    let file = File::read_json_items(src, &["jobs"], HELP).map_err(|d| vec![d])?;
    let mut left = crate::import::MAX_NAMES;
    let mut out = Vec::new();
    let mut errors = crate::import::Problems::default();
    let mut one = |i: usize, j: &Value, errors: &mut crate::import::Problems| {
        let path = [Step::Key("jobs"), Step::Index(i)];
        if !j.is_object() {
            return errors.push(file.error(
                Code::SlurmJob,
                &path,
                format!("job {i} is not an object"),
                "this job",
                HELP,
            ));
        }
        match json_job(j, &mut left) {
            // Only what holds or will hold something is kept: a listing
            // of millions of finished jobs costs nothing past reading it.
            Ok(job) if job.matters() => out.push(Job { span: file.span(&path), ..job }),
            Ok(_) => {}
            Err(why) => errors.push(file.error(Code::SlurmJob, &path, format!("job {i}: {why}"), "this job", HELP)),
        }
    };
    // Item by item: each job is a value only while it is read.
    if let Some((_, items)) = file.items() {
        for (i, raw) in items.iter().enumerate() {
            one(i, &serde_json::from_str(raw.get()).unwrap_or(Value::Null), &mut errors);
            if errors.full() {
                break;
            }
        }
    } else if let Some(jobs) = file.value().get("jobs").and_then(Value::as_array) {
        for (i, j) in jobs.iter().enumerate() {
            one(i, j, &mut errors);
            if errors.full() {
                break;
            }
        }
    } else {
        return Err(vec![file.error(
            Code::WrongType,
            &[],
            format!("{} has no `jobs` list", src.name()),
            "not what squeue prints",
            HELP,
        )]);
    }
    errors.into_result()?;
    Ok(out)
}

fn json_job(j: &Value, left: &mut u64) -> Result<Job, String> {
    let id = match j.get("job_id") {
        Some(Value::Number(n)) => n.to_string(),
        other => number(other, u64::MAX)?.map(|n| n.to_string()).unwrap_or_default(),
    };
    let phase = phase(&words(j.get("job_state")));
    let identity = identity(&string(j.get("comment")));
    let mut job = Job::new(id, phase, identity);
    job.user = Some(string(j.get("user_name"))).filter(|u| !u.is_empty());
    job.uid = number(j.get("user_id"), u64::from(u32::MAX)).ok().flatten();
    match phase {
        Phase::Done => {}
        Phase::Pending => {
            job.wanted = nodes_of(&string(j.get("required_nodes")), left)?;
            job.ask = json_ask(j, job.wanted.len())?;
        }
        Phase::Holding => {
            let nodes = nodes_of(&string(j.get("nodes")), left)?;
            let gres: Vec<String> = j
                .get("gres_detail")
                .and_then(Value::as_array)
                .map(|a| a.iter().map(|g| g.as_str().unwrap_or_default().to_string()).collect())
                .unwrap_or_default();
            let (cpus, memory) = json_cpus(j, &nodes)?;
            for (k, node) in nodes.into_iter().enumerate() {
                job.shares.push(Share {
                    gres: gres.get(k).cloned().unwrap_or_default(),
                    cpus: cpus.get(k).copied().flatten(),
                    memory_mb: memory.get(k).copied().flatten(),
                    node,
                });
            }
        }
    }
    Ok(job)
}

/// What a pending job of `squeue --json` asks of each node: GPUs from
/// `tres_per_node` (else its requested TRES over its nodes), CPUs from
/// `cpus_per_task` (render starts one task a node), memory from
/// `memory_per_node`, else `memory_per_cpu` times those CPUs, else the
/// requested TRES over its nodes.
fn json_ask(j: &Value, wanted: usize) -> Result<Ask, String> {
    let req = tres::parse(&string(j.get("tres_req_str")));
    let nodes =
        number(j.get("node_count"), u64::from(u32::MAX))?.or(req.nodes).map_or(wanted.max(1), |n| n.max(1) as usize);
    let per_task = number(j.get("cpus_per_task"), u64::from(u32::MAX))?;
    let cpus = per_task.or_else(|| each(req.cpus, nodes));
    let memory = match number(j.get("memory_per_node"), crate::units::MAX_MIB)? {
        Some(m) => Some(m),
        None => match (number(j.get("memory_per_cpu"), crate::units::MAX_MIB)?, cpus) {
            (Some(m), Some(c)) => Some(m.saturating_mul(c)),
            _ => each(req.memory_mb, nodes),
        },
    };
    Ok(Ask {
        gpus: gpu_ask(&string(j.get("tres_per_node")), &req, nodes),
        cpus: cpus.map(|c| c as f64),
        memory_mb: memory,
    })
}

/// GPUs a node: the per-node gres request, else the job's GPUs over its nodes.
fn gpu_ask(per_node: &str, req: &tres::Tres, nodes: usize) -> Vec<(String, u64)> {
    let asked = tres::gpus_per_node(per_node);
    if !asked.is_empty() {
        return asked;
    }
    if !req.typed.is_empty() {
        return req.typed.iter().filter_map(|(t, n)| each(Some(*n), nodes).map(|n| (t.clone(), n))).collect();
    }
    each(req.gpus, nodes).filter(|&n| n > 0).map(|n| vec![(String::new(), n)]).unwrap_or_default()
}

/// Per node: `job_resources.nodes.allocation[]`'s `cpus.count` and
/// `memory.allocated` (data_parser), `job_resources.allocated_nodes`'
/// `cpus` and `memory` (v0.0.37 map / v0.0.38 list), else the job's
/// allocated TRES (`tres_alloc_str`, else `cpus`) spread evenly.
fn json_cpus(j: &Value, nodes: &[String]) -> Result<PerNode, String> {
    let mut cpus = vec![None; nodes.len()];
    let mut memory = vec![None; nodes.len()];
    let res = j.get("job_resources");
    let mib = crate::units::MAX_MIB;
    // The first of each name, as a search from the front finds it: a job
    // of a million nodes is not searched a million times.
    let mut at: std::collections::HashMap<&str, usize> = std::collections::HashMap::with_capacity(nodes.len());
    for (k, n) in nodes.iter().enumerate().rev() {
        at.insert(n.as_str(), k);
    }
    if let Some(alloc) = res.and_then(|r| r.pointer("/nodes/allocation")).and_then(Value::as_array) {
        for a in alloc {
            let name = string(a.get("name"));
            if let Some(&k) = at.get(name.as_str()) {
                cpus[k] = number(a.pointer("/cpus/count"), u64::from(u32::MAX))?.map(|c| c as f64);
                memory[k] = number(a.pointer("/memory/allocated"), mib)?;
            }
        }
    } else if let Some(alloc) = res.and_then(|r| r.get("allocated_nodes")) {
        let items: Vec<(Option<usize>, &Value)> = match alloc {
            Value::Array(a) => a.iter().enumerate().map(|(k, v)| (Some(k), v)).collect(),
            Value::Object(o) => o.iter().map(|(k, v)| (k.parse().ok(), v)).collect(),
            _ => Vec::new(),
        };
        for (k, v) in items {
            let name = string(v.get("nodename"));
            let here = at.get(name.as_str()).copied().or(k.filter(|_| name.is_empty()));
            if let Some(k) = here.filter(|&k| k < nodes.len()) {
                cpus[k] = number(v.get("cpus"), u64::from(u32::MAX))?.map(|c| c as f64);
                memory[k] = number(v.get("memory"), mib)?.filter(|&m| m > 0);
            }
        }
    }
    let alloc = tres::parse(&string(j.get("tres_alloc_str")));
    if cpus.iter().all(Option::is_none) && !nodes.is_empty() {
        let total = match alloc.cpus {
            Some(c) => Some(c),
            None => match j.get("cpus") {
                Some(Value::Number(n)) => n.as_u64(),
                other => number(other, u64::MAX)?,
            },
        };
        if let Some(t) = total {
            let share = t as f64 / nodes.len() as f64;
            cpus.iter_mut().for_each(|c| *c = Some(share));
        }
    }
    if memory.iter().all(Option::is_none) {
        let share = each(alloc.memory_mb, nodes.len());
        memory.iter_mut().for_each(|m| *m = share);
    }
    Ok((cpus, memory))
}

/// Each node's CPUs and memory (MiB), in the order of the job's nodes.
type PerNode = (Vec<Option<f64>>, Vec<Option<u64>>);

/// CPUs in a `CPU_IDs=0-3,8` list, counted without expanding it.
fn cpu_ids(list: &str) -> Option<f64> {
    let mut n = 0u64;
    for part in list.split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (u64, u64) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
        n = n.saturating_add(b.checked_sub(a)?.saturating_add(1));
    }
    (n > 0).then_some(n as f64)
}

fn text_jobs(src: &Source) -> Result<Vec<Job>, Vec<Diag>> {
    let t = src.text();
    let help = "give what `scontrol -d show job -o` prints: `JobId=... JobState=...`";
    let records = text::records_in(src, "JobId", help, &text::job_layout())?;
    let mut left = crate::import::MAX_NAMES;
    let mut out = Vec::with_capacity(records.len());
    let mut errors = crate::import::Problems::default();
    for r in &records {
        let bad = |why: String, key: &str| {
            Diag::error(Code::SlurmJob, format!("job {}: {why}", r.get(t, "JobId").unwrap_or("?")))
                .at(src, r.span_of(key).unwrap_or(r.span), "here")
                .help(HELP)
        };
        let phase = phase(&[r.get(t, "JobState").unwrap_or_default().to_string()]);
        let mut job =
            Job::new(r.get(t, "JobId").unwrap_or_default().to_string(), phase, r.get(t, "Comment").and_then(identity));
        job.span = r.span;
        // `UserId=alice(1000)`.
        if let Some(u) = r.get(t, "UserId") {
            let (name, uid) = u.split_once('(').unwrap_or((u, ""));
            job.user = Some(name.to_string()).filter(|n| !n.is_empty());
            job.uid = uid.strip_suffix(')').and_then(|n| n.parse().ok());
        }
        let result = match phase {
            Phase::Done => Ok(()),
            Phase::Pending => nodes_of(r.get(t, "ReqNodeList").unwrap_or_default(), &mut left)
                .map(|w| {
                    job.ask = text_ask(t, r, w.len());
                    job.wanted = w;
                })
                .map_err(|w| bad(w, "ReqNodeList")),
            Phase::Holding => text_shares(t, r, &mut job.shares, &mut left).map_err(|(w, k)| bad(w, k)),
        };
        match result {
            Ok(()) if job.matters() => out.push(job),
            Ok(()) => {}
            Err(d) => errors.push(d),
        }
        if errors.full() {
            break;
        }
    }
    errors.into_result()?;
    Ok(out)
}

/// The per-node lines of `scontrol -d show job`: `Nodes=<hostlist>
/// CPU_IDs=<list> Mem=<MB> GRES=<gres>` (`GRES_IDX=gpu(IDX:0)` before
/// 20.11). Without `-d` there are none: the job's nodes from `NodeList`,
/// its CPUs spread evenly, no GPU indices.
fn text_shares(
    t: &str,
    r: &text::TextRecord,
    out: &mut Vec<Share>,
    left: &mut u64,
) -> Result<(), (String, &'static str)> {
    let mut current: Vec<usize> = Vec::new();
    for (key, _, value) in &r.fields {
        let v = &t[value.start..value.end];
        match key.as_str() {
            "Nodes" => {
                let names = nodes_of(v, left).map_err(|w| (w, "Nodes"))?;
                current = (out.len()..out.len() + names.len()).collect();
                out.extend(names.into_iter().map(|node| Share {
                    node,
                    gres: String::new(),
                    cpus: None,
                    memory_mb: None,
                }));
            }
            "CPU_IDs" => {
                let c = cpu_ids(v);
                current.iter().for_each(|&k| out[k].cpus = c);
            }
            "Mem" => {
                let m = tres::memory_mb(v);
                current.iter().for_each(|&k| out[k].memory_mb = m);
            }
            "GRES" | "GRES_IDX" => current.iter().for_each(|&k| out[k].gres = v.to_string()),
            _ => {}
        }
    }
    if out.is_empty() {
        let nodes = nodes_of(r.get(t, "NodeList").unwrap_or_default(), left).map_err(|w| (w, "NodeList"))?;
        let total: Option<f64> = r.get(t, "NumCPUs").and_then(|c| c.parse::<u32>().ok()).map(f64::from);
        let cpus = total.filter(|_| !nodes.is_empty()).map(|c| c / nodes.len() as f64);
        let memory = each(tres::parse(r.get(t, "TRES").unwrap_or_default()).memory_mb, nodes.len());
        out.extend(nodes.into_iter().map(|node| Share { node, gres: String::new(), cpus, memory_mb: memory }));
    }
    Ok(())
}

/// What a pending job of `scontrol show job` asks of each node:
/// `TresPerNode` GPUs (else its `TRES` over `NumNodes`), `CPUs/Task` (one
/// task a node), `MinMemoryNode`, else `MinMemoryCPU` times those CPUs,
/// else its `TRES` memory over its nodes.
fn text_ask(t: &str, r: &text::TextRecord, wanted: usize) -> Ask {
    let get = |k: &str| r.get(t, k).unwrap_or_default();
    let req = tres::parse(get("TRES"));
    // `NumNodes=2-2`, `NumNodes=1`: the least it runs on.
    let nodes = get("NumNodes")
        .split('-')
        .next()
        .and_then(|n| n.parse::<u64>().ok())
        .or(req.nodes)
        .map_or(wanted.max(1), |n| n.max(1) as usize);
    let cpus = get("CPUs/Task").parse::<u64>().ok().or_else(|| each(req.cpus, nodes));
    let memory = match (tres::memory_mb(get("MinMemoryNode")), tres::memory_mb(get("MinMemoryCPU")), cpus) {
        (Some(m), _, _) => Some(m),
        (None, Some(m), Some(c)) => Some(m.saturating_mul(c)),
        _ => each(req.memory_mb, nodes),
    };
    Ask { gpus: gpu_ask(get("TresPerNode"), &req, nodes), cpus: cpus.map(|c| c as f64), memory_mb: memory }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(model: &str, replica: u32, profile: Option<&str>) -> Option<Result<Identity, String>> {
        Some(Ok(Identity { model: model.into(), replica, profile: profile.map(Into::into) }))
    }

    #[test]
    fn llmgw_comments_name_the_replica() {
        assert_eq!(identity("llmgw.io/model=m,llmgw.io/replica=0,llmgw.io/profile=p"), id("m", 0, Some("p")));
        assert_eq!(identity("llmgw.io/model=m,llmgw.io/replica=3"), id("m", 3, None));
        assert_eq!(identity("nothing of ours"), None);
        assert_eq!(identity(""), None);
        assert!(matches!(identity("llmgw.io/model=m"), Some(Err(_))));
        assert!(matches!(identity("llmgw.io/model=m,llmgw.io/replica=x,llmgw.io/profile=p"), Some(Err(_))));
        assert!(matches!(identity("llmgw.io/model=,llmgw.io/replica=1"), Some(Err(_))));
    }

    #[test]
    fn a_model_may_hold_commas_and_equals_signs() {
        assert_eq!(
            identity("llmgw.io/model=a,b=c,llmgw.io/replica=2,llmgw.io/profile=tp=4,x"),
            id("a,b=c", 2, Some("tp=4,x"))
        );
        // `,llmgw.io/replica=` inside a model name, not followed by digits
        // and the profile: the model keeps it.
        assert_eq!(
            identity("llmgw.io/model=x,llmgw.io/replica=y,llmgw.io/replica=1,llmgw.io/profile=p"),
            id("x,llmgw.io/replica=y", 1, Some("p"))
        );
    }

    #[test]
    fn names_render_escaped_are_unescaped() {
        // What render writes for the model `a b,c=d` and the profile `p'1`.
        assert_eq!(
            identity("llmgw.io/model=a%20b%2Cc%3Dd,llmgw.io/replica=0,llmgw.io/profile=p%271"),
            id("a b,c=d", 0, Some("p'1"))
        );
        assert_eq!(identity("llmgw.io/model=100%,llmgw.io/replica=0"), id("100%", 0, None));
        assert!(matches!(identity("llmgw.io/model=%0A,llmgw.io/replica=0"), Some(Err(_))));
        assert!(matches!(identity("llmgw.io/model=%FF,llmgw.io/replica=0"), Some(Err(_))));
    }

    #[test]
    fn cpu_id_lists_are_counted() {
        assert_eq!(cpu_ids("0-3"), Some(4.0));
        assert_eq!(cpu_ids("0,4-7"), Some(5.0));
        assert_eq!(cpu_ids(""), None);
        assert_eq!(cpu_ids("3-1"), None);
    }

    #[test]
    fn text_jobs_give_their_nodes_gpus_and_cpus() {
        let text = "JobId=7 JobName=llmgw-m-r0\n   JobState=RUNNING Reason=None\n   Comment=llmgw.io/model=m,llmgw.io/replica=0,llmgw.io/profile=p\n   NodeList=gpu[01-02]\n     Nodes=gpu01 CPU_IDs=0-1 Mem=100 GRES=gpu:h100:2(IDX:0-1)\n     Nodes=gpu02 CPU_IDs=0-3 Mem=100 GRES=gpu:h100:2(IDX:4-5)\n\nJobId=8 JobState=PENDING ReqNodeList=gpu03 Comment=llmgw.io/model=m,llmgw.io/replica=1,llmgw.io/profile=p\n";
        let jobs = read(&crate::diag::source("jobs.txt", text.into())).unwrap();
        assert_eq!(jobs.len(), 2);
        assert_eq!(jobs[0].phase, Phase::Holding);
        assert_eq!(jobs[0].identity, id("m", 0, Some("p")));
        assert_eq!(jobs[0].shares[1].node, "gpu02");
        assert_eq!(jobs[0].shares[1].gres, "gpu:h100:2(IDX:4-5)");
        assert_eq!(jobs[0].shares[1].cpus, Some(4.0));
        assert_eq!((jobs[1].phase, jobs[1].wanted.as_slice()), (Phase::Pending, &["gpu03".to_string()][..]));
    }
}
