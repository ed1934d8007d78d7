//! What a node holds once the jobs llmgw read are laid over it: what the
//! node itself says is in use (`GresUsed`, `CPUAlloc`, `AllocMem`,
//! `AllocTRES`) beyond what those jobs account for becomes `slurm:busy`;
//! llmgw's pending jobs hold what they asked for; a node with every CPU
//! allocated holds its free GPUs as `slurm:cpus-full`.

use std::collections::BTreeSet;

use super::Built;
use super::gres::{self, Slot};
use super::jobs::Ask;
use super::records::{Input, Record};
use crate::diag::{Code, Diag};
use crate::inventory::{Allocation, Node};

/// A pending llmgw job's request on one node it asked for.
pub struct Pending {
    pub model: String,
    pub replica: u32,
    pub profile: Option<String>,
    pub job: Option<u64>,
    pub ask: Ask,
}

/// The slots the node's allocations hold.
fn taken(node: &Node, b: &Built) -> BTreeSet<Slot> {
    let mut out = BTreeSet::new();
    for a in &node.allocations {
        if a.mig_devices.is_empty() {
            out.extend(a.gpus.iter().map(|&g| Slot::Whole(g)));
        } else if let [g] = a.gpus.as_slice() {
            out.extend(a.mig_devices.iter().map(|&m| Slot::Mig(*g, m)));
        }
    }
    out.retain(|s| b.slots.contains(s));
    out
}

/// Up to `n` free slots of gres type `ty` (any whole GPU when empty), the
/// lowest Slurm indices first.
fn lowest_free(b: &Built, ty: &str, n: u64, taken: &BTreeSet<Slot>) -> Vec<Slot> {
    b.slots
        .iter()
        .zip(&b.types)
        .filter(|(s, t)| {
            !taken.contains(s) && if ty.is_empty() { matches!(s, Slot::Whole(_)) } else { t.eq_ignore_ascii_case(ty) }
        })
        .map(|(s, _)| *s)
        .take(usize::try_from(n).unwrap_or(usize::MAX))
        .collect()
}

/// GPUs in use that no llmgw job holds, CPUs and memory allocated beyond
/// what llmgw's running jobs there hold: `slurm:busy`. Returns how many
/// GPUs were taken as the lowest free for want of indices.
pub fn busy(b: &mut Built, held: &BTreeSet<Slot>) -> u64 {
    let mut busy: Vec<Slot> = b.busy.iter().map(|&i| b.slots[i]).filter(|s| !held.contains(s)).collect();
    // Counts without indices: from GresUsed, else from AllocTRES, less
    // what the named ones (llmgw's and other jobs') already account for.
    let mut named: Vec<Slot> = busy.iter().chain(held).copied().collect();
    let mut assumed = 0;
    for (ty, n) in &b.unnamed {
        let mut left = *n;
        if b.unnamed_from_tres {
            named.retain(|s| {
                let matches = ty.is_empty() || slot_type(b, *s).is_some_and(|t| t.eq_ignore_ascii_case(ty));
                if matches && left > 0 {
                    left -= 1;
                    false
                } else {
                    true
                }
            });
        }
        let taken: BTreeSet<Slot> = busy.iter().chain(held).copied().collect();
        let picked = lowest_free(b, ty, left, &taken);
        assumed += picked.len() as u64;
        busy.extend(picked);
    }
    let mut allocs = gres::allocations("slurm:busy", 0, &busy);
    let (cpus, memory) = llmgw_holds(&b.node);
    let cpus = b.alloc_cpus.map(|a| a as f64 - cpus).filter(|&c| c > 0.0);
    let memory = b.alloc_memory.map(|a| a.saturating_sub(memory)).filter(|&m| m > 0);
    if cpus.is_some() || memory.is_some() {
        if allocs.is_empty() {
            allocs.push(Allocation::new("slurm:busy".to_string(), 0, Vec::new(), Vec::new()));
        }
        allocs[0].cpus = cpus;
        allocs[0].memory_mb = memory;
    }
    b.node.allocations.extend(allocs);
    assumed
}

fn slot_type(b: &Built, s: Slot) -> Option<&str> {
    b.slots.iter().position(|x| *x == s).map(|i| b.types[i].as_str())
}

/// CPUs and memory llmgw's running jobs hold on the node.
fn llmgw_holds(node: &Node) -> (f64, u64) {
    node.allocations
        .iter()
        .filter(|a| !a.pending)
        .fold((0.0, 0), |(c, m), a| (c + a.cpus.unwrap_or(0.0), m + a.memory_mb.unwrap_or(0)))
}

/// A pending llmgw job holds, on a node it asked for, the lowest free GPUs
/// of its gres type, its CPUs and its memory.
pub fn pending(b: &mut Built, p: &Pending) {
    let mut slots = Vec::new();
    let mut taken = taken(&b.node, b);
    for (ty, n) in &p.ask.gpus {
        let picked = lowest_free(b, ty, *n, &taken);
        taken.extend(picked.iter().copied());
        slots.extend(picked);
    }
    let mut allocs = gres::allocations(&p.model, p.replica, &slots);
    if allocs.is_empty() {
        allocs.push(Allocation::new(p.model.clone(), p.replica, Vec::new(), Vec::new()));
    }
    for (n, mut a) in allocs.into_iter().enumerate() {
        a.profile.clone_from(&p.profile);
        a.pending = true;
        a.job = p.job;
        if n == 0 {
            a.cpus = p.ask.cpus;
            a.memory_mb = p.ask.memory_mb;
        }
        b.node.allocations.push(a);
    }
}

/// On a node whose CPUs are all allocated, every GPU still free is held as
/// `slurm:cpus-full`; true when there was one.
pub fn cpus_full(b: &mut Built) -> bool {
    let full = matches!((b.node.cpus, b.alloc_cpus), (Some(c), Some(a)) if c > 0.0 && a as f64 >= c);
    if !full {
        return false;
    }
    let taken = taken(&b.node, b);
    let healthy = |s: &Slot| match s {
        Slot::Whole(g) | Slot::Mig(g, _) => b.node.gpus.get(*g as usize).is_some_and(|x| x.healthy),
    };
    let free: Vec<Slot> = b.slots.iter().filter(|s| !taken.contains(s) && healthy(s)).copied().collect();
    if free.is_empty() {
        return false;
    }
    b.node.allocations.extend(gres::allocations("slurm:cpus-full", 0, &free));
    true
}

/// The warning for GPUs in use that the node's record gave no indices of.
pub fn assumed_warning(input: &Input<'_>, r: &Record, b: &Built, n: u64) -> Diag {
    let (field, what) =
        if b.unnamed_from_tres { ("alloc_tres", "no GPU indices") } else { ("gres_used", "no IDX here") };
    Diag::warning(
        Code::SlurmGpusAssumed,
        format!("node `{}`: {n} GPUs in use without their indices; taken as the lowest free", r.name),
    )
    .at(input.source(), input.span(r, field), what)
    .help("`scontrol -d show node` (with -d) prints which GPUs are in use")
}
