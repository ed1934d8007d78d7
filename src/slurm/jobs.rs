//! Slurm jobs as `squeue --json` (OpenAPI v0.0.37/38 and the data_parser
//! versions after) or `scontrol -d show job [-o]` print them: which run
//! where with which GPU indices and CPUs, and which are llmgw's replicas,
//! told by the comment render writes (docs/slurm.md, "Import again"):
//! `llmgw.io/model=<model>,llmgw.io/replica=<r>,llmgw.io/profile=<p>`,
//! read by `identity::parse_slurm_comment`.

mod from_text;
use from_text::*;

use serde_json::Value;

use super::records::{number, string, words};
use super::text;
use super::tres;
use crate::diag::{Code, Diag, Source};
use crate::doc::Span;
pub use crate::identity::Identity;
use crate::identity::parse_slurm_comment as identity;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn id(model: &str, replica: u32, profile: Option<&str>) -> Option<Result<Identity, String>> {
        Some(Ok(Identity { model: model.into(), replica, profile: profile.map(Into::into) }))
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
