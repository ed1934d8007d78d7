//! A Slurm node record (scontrol or sinfo JSON) turned into an inventory
//! node: its state, CPUs, memory and GPUs.

use super::*;

/// What `inventory import slurm` is told besides the node file.
#[derive(Default)]
pub struct Settings {
    /// A feature prefix that marks a node's fabric (`ib-` for `ib-east`).
    pub fabric_feature: Option<String>,
    /// Whose jobs may be llmgw's replicas (a user name or uid): on a shared
    /// cluster anyone can write llmgw's comment on a job of their own.
    pub jobs_user: String,
}

/// The user running llmgw, as `$USER` or `$LOGNAME` name them, else the numeric uid.
pub fn running_user() -> String {
    ["USER", "LOGNAME"]
        .iter()
        .find_map(|var| std::env::var(var).ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| rustix::process::getuid().as_raw().to_string())
}

/// How bad a state word is: the most restrictive one wins.
pub(super) fn state_of(word: &str) -> Option<State> {
    Some(match word {
        "IDLE" | "MIXED" | "ALLOCATED" | "ALLOC" | "COMPLETING" | "COMP" | "CLOUD" | "PLANNED" | "DYNAMIC_NORM"
        | "DYNAMIC_FUTURE" | "REBOOT_REQUESTED" | "POWERING_UP" | "POWER_UP" | "UNDRAIN" | "RESUME" | "BLOCKED"
        | "PERFCTRS" | "NPC" => State::Ready,
        // POWER_DOWN: asked to power down once its jobs end; nothing new starts.
        "DRAIN" | "DRAINED" | "DRAINING" | "DRAIN_PENDING" | "POWER_DRAIN" | "POWER_DOWN" => State::Draining,
        "DOWN" | "NOT_RESPONDING" | "NO_RESPOND" | "FAIL" | "FAILING" | "UNKNOWN" | "POWERED_DOWN"
        | "POWERING_DOWN" | "FUTURE" | "INVALID" | "INVALID_REG" | "REBOOT_ISSUED" | "INVAL" => State::Down,
        "RESERVED" | "RESV" | "MAINT" | "MAINTENANCE" => State::Cordoned,
        _ => return None,
    })
}

pub(super) fn rank(s: State) -> u8 {
    match s {
        State::Ready => 0,
        State::Cordoned => 1,
        State::Draining => 2,
        State::Down => 3,
    }
}

/// The node's state from all its words, or the word llmgw does not know.
pub(super) fn state(r: &Record) -> Result<State, String> {
    let mut out = State::Ready;
    for w in &r.states {
        let s = state_of(w).ok_or_else(|| w.clone())?;
        if rank(s) > rank(out) {
            out = s;
        }
    }
    Ok(out)
}

/// A node as read, with what is known of its GPUs' use before jobs are
/// laid over it.
pub(super) struct Built {
    pub(super) node: Node,
    pub(super) slots: Vec<Slot>,
    /// The gres type of each slot (empty when untyped).
    pub(super) types: Vec<String>,
    /// Slurm indices in use (`GresUsed`, or foreign jobs' `GRES`).
    pub(super) busy: BTreeSet<usize>,
    /// GPUs in use without indices, by gres type (empty: any).
    pub(super) unnamed: Vec<(String, u64)>,
    /// Those counts come from `AllocTRES` (no `GresUsed`): they include
    /// what the jobs read name.
    pub(super) unnamed_from_tres: bool,
    pub(super) alloc_cpus: Option<u64>,
    /// MiB allocated to jobs.
    pub(super) alloc_memory: Option<u64>,
    /// llmgw's pending jobs that asked for this node.
    pub(super) pending: Vec<usage::Pending>,
    /// Jobs hold CPUs here, but nothing says how many GPUs are in use
    /// (no `GresUsed`, no `gres/gpu` in `AllocTRES`).
    pub(super) gpus_unknown: bool,
    pub(super) record: usize,
}

pub(super) fn node(
    input: &Input<'_>,
    i: usize,
    r: &Record,
    settings: &Settings,
    warnings: &mut Vec<Diag>,
) -> Result<Built, Diag> {
    let src = input.source();
    if let Some(c) = crate::import::control_in_id(&r.name) {
        return Err(Diag::error(
            Code::ControlCharacter,
            format!(
                "node `{}` has the control character {} in its name",
                crate::term::escape(&r.name),
                c.escape_default()
            ),
        )
        .at(src, input.span(r, "name"), "this name")
        .help("node names end up in scripts and file names: Slurm's own names never hold one"));
    }
    if r.states.is_empty() {
        return Err(Diag::error(Code::SlurmNoState, format!("node `{}` has no state", r.name))
            .at(src, input.span(r, "state"), "no state here")
            .help("llmgw never takes a node without a state as ready: give the whole output of `scontrol -d show node` or `sinfo --json`"));
    }
    let st = state(r).map_err(|w| {
        Diag::error(Code::UnknownState, format!("node `{}`: `{w}` is not a Slurm node state llmgw knows", r.name))
            .at(src, input.span(r, "state"), "this state")
            .help("states llmgw reads: IDLE, MIXED, ALLOCATED, COMPLETING, DRAIN, DOWN, NOT_RESPONDING, FAIL, UNKNOWN, POWERED_DOWN, RESERVED, MAINT")
    })?;
    let gres_err = |field: &str, why: String| {
        let code = if why.contains("more than") { Code::TooManyGpus } else { Code::SlurmGres };
        Diag::error(code, format!("node `{}`: {why}", r.name))
            .at(src, input.span(r, field), "this gres")
            .help("a GPU gres reads `gpu:TYPE:COUNT` or `gpu:COUNT`, as in `Gres=gpu:h100:8(S:0-1)`")
    };
    let g = gres::node_gpus(&r.gres).map_err(|w| gres_err("gres", w))?;
    if let Some(note) = &g.mig_note {
        warnings.push(
            Diag::warning(Code::MigGres, format!("node `{}`: {note}", r.name))
                .at(src, input.span(r, "gres"), "MIG gres types")
                .help("Slurm lists MIG devices, not the GPUs they are cut from: llmgw adds those GPUs, in MIG mode"),
        );
    }
    let mut labels: BTreeMap<String, String> = r.features.iter().map(|f| (f.clone(), "true".to_string())).collect();
    for p in &r.partitions {
        labels.insert(format!("slurm/partition.{p}"), "true".to_string());
    }
    if let Some(t) = &g.first_type {
        labels.insert("slurm/gres-type".to_string(), t.clone());
    }
    labels.extend(r.arch_label());
    // What `render slurm` asks for to get a MIG device of a profile.
    for (profile, ty) in &g.mig_types {
        labels.insert(format!("slurm/mig-gres-type.{profile}"), ty.clone());
    }
    let alloc = r.alloc_tres.as_deref().map(tres::parse).unwrap_or_default();
    let (busy, unnamed, unnamed_from_tres) = match &r.gres_used {
        Some(u) => {
            let (busy, n) = gres::used(u, g.slots.len()).map_err(|w| gres_err("gres_used", w))?;
            (busy, if n > 0 { vec![(String::new(), n)] } else { Vec::new() }, false)
        }
        None => (Vec::new(), tres_gpus(&alloc), true),
    };
    let fabrics = settings
        .fabric_feature
        .as_ref()
        .and_then(|p| r.features.iter().find(|f| f.starts_with(p.as_str())))
        .map(|f| vec![Fabric::named(f.clone())])
        .unwrap_or_default();
    let node = Node {
        id: r.name.clone(),
        discovered_by: None,
        state: st,
        labels,
        memory_total_mb: r.real_memory,
        // What jobs may use: CoreSpecCount's cores and MemSpecLimit's
        // memory are the system's.
        cpus: r.cpus_effective.or(r.cpus).map(|c| c as f64),
        memory_allocatable_mb: r.mem_spec.filter(|&m| m > 0).map(|m| r.real_memory.saturating_sub(m)),
        taints: Vec::new(),
        engines: None,
        weights: None,
        disk: None,
        gpus: g.gpus,
        fabrics,
        allocations: Vec::new(),
        origin: None,
    };
    let alloc_cpus = r.alloc_cpus.or(alloc.cpus);
    let gpus_unknown = r.gres_used.is_none()
        && alloc.gpus.is_none()
        && alloc.typed.is_empty()
        && !g.slots.is_empty()
        && alloc_cpus.is_some_and(|c| c > 0);
    Ok(Built {
        node,
        slots: g.slots,
        types: g.types,
        busy: busy.into_iter().collect(),
        unnamed,
        unnamed_from_tres,
        alloc_cpus,
        alloc_memory: r.alloc_memory.or(alloc.memory_mb),
        pending: Vec::new(),
        gpus_unknown,
        record: i,
    })
}

/// GPUs `AllocTRES` says are in use, by type: the typed counts
/// (`gres/gpu:a100=1`), and what the plain count (`gres/gpu=2`) has beyond them.
pub(super) fn tres_gpus(t: &tres::Tres) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = t.typed.iter().filter(|(_, n)| *n > 0).cloned().collect();
    let typed: u64 = t.typed.iter().map(|(_, n)| n).sum();
    if let Some(rest) = t.gpus.map(|n| n.saturating_sub(typed)).filter(|&n| n > 0) {
        out.push((String::new(), rest));
    }
    out
}
