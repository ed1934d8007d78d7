//! Slurm as the source of the fleet: an inventory from what the
//! controller's own commands print (`sinfo --json`, `scontrol show nodes
//! --json`, `scontrol -d show node [-o]`), with fabrics from its topology
//! and, with `--jobs`, llmgw's own replicas from `squeue --json` or
//! `scontrol -d show job`. llmgw talks to no controller itself. See
//! docs/slurm.md.

mod nodes;
pub use nodes::*;

mod gres;
pub mod hostlist;
mod jobs;
pub mod ports;
mod records;
pub mod render;
pub mod submit;
mod text;
mod topology;
mod tres;
mod usage;

use std::collections::{BTreeMap, BTreeSet};

use crate::diag::{Code, Diag, Source};
use crate::import::Problems;
use crate::inventory::{Allocation, Fabric, Inventory, Node, State};
use gres::Slot;
use records::{Input, Record};

/// An inventory from a Slurm node listing, fabrics from a topology file
/// when given, llmgw's replicas from a job listing when given; with the
/// warnings to show.
pub fn import(
    nodes: &Source,
    topology: Option<&Source>,
    jobs: Option<&Source>,
    settings: &Settings,
) -> Result<(Inventory, Vec<Diag>), Vec<Diag>> {
    let (input, records) = records::read(nodes)?;
    let mut warnings = Vec::new();
    let mut errors = Problems::default();
    let mut out: Vec<Built> = Vec::with_capacity(records.len());
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, r) in records.iter().enumerate() {
        if let Some(&first) = seen.get(r.name.as_str()) {
            // `sinfo` lists a node once per partition: join the partitions.
            for p in &r.partitions {
                out[first].node.labels.insert(format!("slurm/partition.{p}"), "true".to_string());
            }
            continue;
        }
        match node(&input, i, r, settings, &mut warnings) {
            Ok(n) => {
                seen.insert(&r.name, out.len());
                out.push(n);
            }
            Err(d) => errors.push(d),
        }
        if errors.full() {
            break;
        }
    }
    errors.into_result()?;
    if out.is_empty() {
        return Err(vec![crate::import::empty_input(nodes, "scontrol -d show node -o")]);
    }
    if let Some(t) = topology {
        apply_topology(t, &mut out, &mut warnings)?;
    }
    let mut held: Vec<BTreeSet<Slot>> = vec![BTreeSet::new(); out.len()];
    if let Some(j) = jobs {
        apply_jobs(j, &settings.jobs_user, &mut out, &mut held, &mut warnings)?;
    }
    let unknown: Vec<&str> = out.iter().filter(|b| b.gpus_unknown).map(|b| b.node.id.as_str()).collect();
    if !unknown.is_empty() {
        warnings.push(
            Diag::warning(
                Code::SlurmGpusUnknown,
                format!(
                    "{} node(s) run jobs, but the node list does not say how many of their GPUs are in use (no `GresUsed`, no `gres/gpu` in `AllocTRES`); GPUs no job of --jobs names are taken as free: {}",
                    unknown.len(),
                    crate::diag::shorten(&unknown, 5)
                ),
            )
            .help("give `scontrol -d show node` (with -d, which prints GresUsed), or `sinfo --json`"),
        );
    }
    let mut full = Vec::new();
    for (b, held) in out.iter_mut().zip(&held) {
        let assumed = usage::busy(b, held);
        if assumed > 0 {
            warnings.push(usage::assumed_warning(&input, &records[b.record], b, assumed));
        }
        for p in std::mem::take(&mut b.pending) {
            usage::pending(b, &p);
        }
        if usage::cpus_full(b) {
            full.push(b.node.id.clone());
        }
    }
    if !full.is_empty() {
        warnings.push(
            Diag::warning(
                Code::CpusFull,
                format!(
                    "{} node(s) have every CPU allocated, so their free GPUs can start nothing; held as `slurm:cpus-full`: {}",
                    full.len(),
                    crate::diag::shorten(&full.iter().map(String::as_str).collect::<Vec<_>>(), 5)
                ),
            )
            .help("a replica placed there would wait for CPUs; import again when jobs end"),
        );
    }
    let mut nodes: Vec<Node> = out.into_iter().map(|b| b.node).collect();
    nodes.sort_by(|a, b| a.id.cmp(&b.id));
    Ok((Inventory { nodes }, warnings))
}

/// Fabrics from the topology; a node under two leaf switches gets both,
/// and names that match nothing are counted, each with a warning.
fn apply_topology(t: &Source, out: &mut [Built], warnings: &mut Vec<Diag>) -> Result<(), Vec<Diag>> {
    let topo = topology::read(t)?;
    let ids: BTreeSet<&str> = out.iter().map(|b| b.node.id.as_str()).collect();
    let unmatched: Vec<&str> = topo.fabrics.keys().map(String::as_str).filter(|n| !ids.contains(n)).collect();
    let two: Vec<String> = topo
        .leaves
        .iter()
        .filter(|(n, _)| ids.contains(n.as_str()))
        .map(|(n, l)| format!("{n} ({})", l.join(", ")))
        .collect();
    for b in out.iter_mut() {
        if let Some(f) = topo.fabrics.get(&b.node.id) {
            b.node.fabrics = f.iter().map(|n| topo.fabric(n)).collect();
        }
    }
    if !two.is_empty() {
        warnings.push(
            Diag::warning(
                Code::TwoSwitches,
                format!(
                    "{} node(s) are under two leaf switches and belong to both fabrics: {}",
                    two.len(),
                    crate::diag::shorten(&two.iter().map(String::as_str).collect::<Vec<_>>(), 5)
                ),
            )
            .help("Slurm keeps such a node under both switches; check topology.conf if that is not meant"),
        );
    }
    if !unmatched.is_empty() || !topo.unknown_switches.is_empty() {
        let mut what = Vec::new();
        if !unmatched.is_empty() {
            what.push(format!(
                "{} node name(s) match no imported node ({})",
                unmatched.len(),
                crate::diag::shorten(&unmatched, 3)
            ));
        }
        if !topo.unknown_switches.is_empty() {
            let s: Vec<&str> = topo.unknown_switches.iter().map(String::as_str).collect();
            what.push(format!("{} switch name(s) match no `SwitchName=` ({})", s.len(), crate::diag::shorten(&s, 3)));
        }
        warnings.push(
            Diag::warning(Code::UnmatchedTopology, format!("{}: {}", t.name(), what.join("; ")))
                .help("a topology of another cluster, or a node list cut to some partitions, says this"),
        );
    }
    Ok(())
}

/// The replica a job is, if it is one of llmgw's: its comment parses, and
/// no earlier job claimed the same replica (a copy, or a look-alike, keeps
/// what it holds as a foreign job). Each refusal is a warning.
fn job_identity<'j>(
    src: &Source,
    job: &'j jobs::Job,
    claimed: &mut BTreeMap<(String, u32), String>,
    warnings: &mut Vec<Diag>,
) -> Option<&'j jobs::Identity> {
    let id = match &job.identity {
        Some(Ok(id)) => id,
        Some(Err(why)) => {
            warnings.push(
                Diag::warning(Code::SlurmJob, format!("job {}: {why}; taken as a foreign job", job.id))
                    .at(src, job.span, "this job")
                    .help("render writes the comment; a job edited by hand keeps its GPUs busy but is not a replica"),
            );
            return None;
        }
        None => return None,
    };
    if job.phase == jobs::Phase::Done {
        return Some(id);
    }
    let first = claimed.entry((id.model.clone(), id.replica)).or_insert_with(|| job.id.clone());
    if *first == job.id {
        return Some(id);
    }
    warnings.push(
        Diag::warning(
            Code::SlurmJob,
            format!(
                "jobs {first} and {} both say they are {} r{}; job {first} is taken as the replica, job {} as a foreign job",
                job.id, id.model, id.replica, job.id
            ),
        )
        .at(src, job.span, "the second claim")
        .help("cancel the copy (scancel), or check who submitted a job with llmgw's comment"),
    );
    None
}

/// llmgw's replicas from the job listing: running ones as allocations of
/// their model and replica with the GPUs Slurm gave them, pending ones as
/// pending allocations on the nodes they asked for. Other running jobs'
/// GPUs are in use (`slurm:busy`), as `GresUsed` says.
fn apply_jobs(
    src: &Source,
    user: &str,
    out: &mut [Built],
    held: &mut [BTreeSet<Slot>],
    warnings: &mut Vec<Diag>,
) -> Result<(), Vec<Diag>> {
    let mut list = jobs::read(src)?;
    // Earlier jobs first: over-subscribed GPUs stay with the one that started first.
    list.sort_by(|a, b| (a.id.len(), &a.id).cmp(&(b.id.len(), &b.id)));
    let at: BTreeMap<String, usize> = out.iter().enumerate().map(|(k, b)| (b.node.id.clone(), k)).collect();
    let mut errors = Problems::default();
    let mut found = Found::default();
    let mut claimed: BTreeMap<(String, u32), String> = BTreeMap::new();
    for job in &list {
        let identity = job_identity(src, job, &mut claimed, warnings);
        // Another user's job that says it is llmgw's is theirs, not a replica.
        let identity = match identity {
            Some(id) if !submitted_by(job, user) => {
                let who =
                    job.user.clone().or_else(|| job.uid.map(|u| u.to_string())).unwrap_or_else(|| "unknown".into());
                found.foreign.push(format!("{} of {who} ({} r{})", job.id, id.model, id.replica));
                None
            }
            other => other,
        };
        match job.phase {
            jobs::Phase::Done => {}
            jobs::Phase::Pending => {
                let Some(id) = identity else { continue };
                let known: Vec<usize> = job.wanted.iter().filter_map(|n| at.get(n).copied()).collect();
                if known.is_empty() {
                    found.pending_nowhere.push(format!("{} ({} r{})", job.id, id.model, id.replica));
                }
                for k in known {
                    out[k].pending.push(usage::Pending {
                        model: id.model.clone(),
                        replica: id.replica,
                        profile: id.profile.clone(),
                        job: job.number,
                        ask: job.ask.clone(),
                    });
                }
            }
            jobs::Phase::Holding => {
                if job.shares.is_empty()
                    && let Some(id) = identity
                {
                    found.running_nowhere.push(format!("{} ({} r{})", job.id, id.model, id.replica));
                }
                for share in &job.shares {
                    let Some(&k) = at.get(&share.node) else {
                        found.unknown.push(format!("{} on {}", job.id, share.node));
                        continue;
                    };
                    if let Err(d) = hold_share(src, job, identity, share, &mut out[k], &mut held[k], &mut found) {
                        errors.push(d);
                    }
                }
            }
        }
        if errors.full() {
            break;
        }
    }
    errors.into_result()?;
    warn_found(found, user, warnings);
    Ok(())
}

/// One warning for each kind of job `apply_jobs` could not take as it is.
fn warn_found(found: Found, user: &str, warnings: &mut Vec<Diag>) {
    let note = |code: Code, what: &str, list: &[String], help: &str| {
        Diag::warning(
            code,
            format!(
                "{} job(s) {what}: {}",
                list.len(),
                crate::diag::shorten(&list.iter().map(String::as_str).collect::<Vec<_>>(), 5)
            ),
        )
        .help(help.to_string())
    };
    let Found { unknown, mut twice, pending_nowhere, running_nowhere, foreign } = found;
    if !foreign.is_empty() {
        warnings.push(note(
            Code::ForeignJob,
            &format!("of other users than {user} carry llmgw's comment; they are counted as foreign jobs"),
            &foreign,
            "only jobs of --jobs-user (default: the user running llmgw) are llmgw's replicas; give --jobs-user NAME for the user that submits them",
        ));
    }
    if !running_nowhere.is_empty() {
        warnings.push(note(
            Code::SlurmJob,
            "of llmgw run but their record names no node, so llmgw cannot tell where (a second copy may be placed)",
            &running_nowhere,
            "give `scontrol -d show job` or `squeue --json` as printed; a record cut short loses NodeList",
        ));
    }
    if !unknown.is_empty() {
        warnings.push(note(
            Code::JobOnUnknownNode,
            "run on nodes the node list does not have",
            &unknown,
            "give the node list and the job list of one controller, taken together",
        ));
    }
    if !twice.is_empty() {
        twice.dedup();
        warnings.push(note(
            Code::OverSubscribed,
            "name GPUs an earlier llmgw job holds; those stay with the earlier job",
            &twice,
            "two jobs on one GPU: check the jobs with `scontrol -d show job`",
        ));
    }
    if !pending_nowhere.is_empty() {
        warnings.push(note(
            Code::PendingWithoutNode,
            "of llmgw are pending without a node llmgw knows (no --nodelist), so they are not counted",
            &pending_nowhere,
            "render writes --nodelist; a replica submitted without it may be started twice",
        ));
    }
}

/// What `apply_jobs` noticed, to warn about once each.
#[derive(Default)]
struct Found {
    unknown: Vec<String>,
    twice: Vec<String>,
    pending_nowhere: Vec<String>,
    running_nowhere: Vec<String>,
    foreign: Vec<String>,
}

/// Whether `user` (a name or a uid) submitted the job. A listing that
/// names no user at all (a record cut short) trusts no one.
fn submitted_by(job: &jobs::Job, user: &str) -> bool {
    job.user.as_deref() == Some(user) || job.uid.is_some_and(|u| u.to_string() == user)
}

/// One node of a running job: an llmgw job's GPUs (and CPUs) become its
/// replica's allocation there; another job's GPUs are busy.
fn hold_share(
    src: &Source,
    job: &jobs::Job,
    identity: Option<&jobs::Identity>,
    share: &jobs::Share,
    b: &mut Built,
    held: &mut BTreeSet<Slot>,
    found: &mut Found,
) -> Result<(), Diag> {
    let (idx, _) = gres::used(&share.gres, b.slots.len()).map_err(|why| {
        Diag::error(Code::SlurmJob, format!("job {} on `{}`: {why}", job.id, share.node))
            .at(src, job.span, "this job")
            .help("the job's GPU indices must be GPUs of the node list given with it")
    })?;
    let Some(id) = identity else {
        b.busy.extend(idx);
        return Ok(());
    };
    let mut slots = Vec::new();
    for i in idx {
        let s = b.slots[i];
        if held.insert(s) {
            slots.push(s);
        } else {
            found.twice.push(format!("{} on {}", job.id, share.node));
        }
    }
    let mut allocs = gres::allocations(&id.model, id.replica, &slots);
    if allocs.is_empty() {
        allocs.push(Allocation::new(id.model.clone(), id.replica, Vec::new(), Vec::new()));
    }
    for (n, mut a) in allocs.into_iter().enumerate() {
        a.profile = id.profile.clone();
        a.job = job.number;
        // The job's CPUs and memory on the node, once.
        if n == 0 {
            a.cpus = share.cpus;
            a.memory_mb = share.memory_mb;
        }
        b.node.allocations.push(a);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
