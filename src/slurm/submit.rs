//! How the jobs `render slurm` writes are named, started and stopped:
//! their job names (by which `scancel --name` finds them), the `submit.sh`
//! it writes beside their scripts, and the `scancel` lines of `--stop`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::launch::quote;
use crate::names::{self, Want};
use crate::plan::{Entry, Kind, Plan};
use crate::render::Resolved;
use crate::render::out::{self, File, HEADER, Status};

/// Job names (`llmgw-<model>-r<replica>`, cut and sanitised, kept apart by
/// a hash where two would be equal), the same for render and `--stop`.
pub fn job_names(entries: &[&Entry]) -> Vec<String> {
    let wants: Vec<Want> = entries
        .iter()
        .map(|e| Want {
            identity: format!("{}/{}", e.model, e.replica),
            head: format!("llmgw-{}", names::job(&e.model)),
            suffix: format!("-r{}", e.replica),
            // Within a file name's 255 bytes, with room for `.sbatch`.
            max: 128,
            running: e.kind == crate::plan::Kind::Existing,
        })
        .collect();
    names::unique(&wants)
}

/// Who submitted the jobs `scancel --name` is to cancel, as a shell word:
/// this user, as `$USER` or `$LOGNAME` name them, else the numeric uid
/// (scancel takes both).
pub fn submitting_user() -> String {
    quote(&super::running_user())
}

/// `submit.sh` for the jobs' scripts (`scripts`) as they are rendered
/// into `dir`, where some may be there already.
pub(super) fn file(r: &Resolved<'_>, dir: &Path, scripts: &[File]) -> File {
    let status = out::statuses(dir, scripts);
    let text = submit_script(r, scripts, &status, &submitting_user());
    File { name: SUBMIT.to_string(), text, model: None, replica: None }
}

/// The script `render slurm -o DIR` writes beside the jobs' scripts.
const SUBMIT: &str = "submit.sh";

/// `submit.sh`: `sbatch` of exactly the scripts of replicas this plan newly
/// places (those that run already are not submitted again); a placed
/// replica whose script changed is cancelled by name first.
fn submit_script(r: &Resolved<'_>, files: &[File], status: &[Status], user: &str) -> String {
    let mut t = format!("#!/bin/sh\n{HEADER} slurm; the next render into this folder replaces or removes it.\n");
    t.push_str("# Submits the replicas this plan newly places; replicas that run already are left running.\n");
    t.push_str("set -e\ncd \"$(dirname \"$0\")\"\n");
    let at: HashMap<(&str, u32), usize> =
        files.iter().enumerate().filter_map(|(k, f)| Some(((f.model.as_deref()?, f.replica?), k))).collect();
    for j in r.jobs.iter().filter(|j| j.entry.kind == Kind::Placed) {
        let Some(&k) = at.get(&(j.entry.model.as_str(), j.entry.replica)) else { continue };
        let name = files[k].name.trim_end_matches(".sbatch");
        if status[k] == Status::Changed {
            let _ = writeln!(t, "scancel --name={} --user={user}", quote(name));
        }
        let _ = writeln!(t, "sbatch {}", quote(&files[k].name));
    }
    t
}

/// How `--stop` names the jobs to cancel.
pub struct Cancel<'i> {
    /// An inventory imported with `--jobs`: the job ids of its replicas.
    pub inventory: Option<&'i crate::inventory::Inventory>,
    /// The submitting user as a shell word, for the replicas cancelled by name.
    pub user: String,
}

/// `scancel` lines for what NEW stops running of OLD: by job id where the
/// inventory knows the replica's job, else by name and user (a name alone
/// would cancel another user's job of that name).
pub fn stop_lines(old: &Plan, stopped: &std::collections::HashSet<*const Entry>, by: &Cancel<'_>) -> String {
    let mut ids: std::collections::HashMap<(&str, u32), std::collections::BTreeSet<u64>> =
        std::collections::HashMap::new();
    for n in by.inventory.iter().flat_map(|i| &i.nodes) {
        for a in &n.allocations {
            if let Some(j) = a.job {
                ids.entry((a.model.as_str(), a.replica)).or_default().insert(j);
            }
        }
    }
    let all: Vec<&Entry> = old.entries.iter().collect();
    let mut out = String::new();
    for (e, name) in all.iter().zip(job_names(&all)) {
        if !stopped.contains(&std::ptr::from_ref(*e)) {
            continue;
        }
        match ids.get(&(e.model.as_str(), e.replica)) {
            Some(jobs) => {
                for j in jobs {
                    let _ = writeln!(out, "scancel {j}");
                }
            }
            None => {
                let _ = writeln!(out, "scancel --name={} --user={}", quote(&name), by.user);
            }
        }
    }
    out
}
