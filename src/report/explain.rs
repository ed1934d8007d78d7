//! `explain-placement` output: per replica of one model, the decision and
//! every candidate passed over, in the order tried.

use std::fmt::Write as _;

use crate::wording::Names;
use std::collections::HashMap;

use crate::placement::{Attempt, Decision, Plan, PoolTally, Reason};

/// For each replica placed with a profile after others failed: the
/// nearest nodes of the profiles that failed, with what this plan put on
/// them before it ("taken in this plan"), as `place` says of an unplaced
/// replica.
fn fallbacks<'a>(names: &Names<'a>, plan: &Plan, model: u32) -> HashMap<u32, Vec<crate::plan::reasons::Closest<'a>>> {
    let mut out = HashMap::new();
    crate::plan::reasons::walk(names, &plan.decisions, |d, so_far| {
        let Decision::Placed(p) = d else { return };
        if p.model != model {
            return;
        }
        let Some(a) = plan.attempts.iter().find(|a| a.replica == p.replica) else { return };
        let failed: Vec<PoolTally> = a.tallies.iter().filter(|t| t.profile != p.profile).cloned().collect();
        if failed.is_empty() {
            return;
        }
        let closest = crate::plan::reasons::closest_of(names, model, &a.rejections.to_vec(), &failed, so_far);
        if closest.iter().any(|c| !c.nearest.is_empty()) {
            out.insert(p.replica, closest);
        }
    });
    out
}

/// `{"model", "replicas": [{"replica", "through"?, "placement",
/// "rejections", "reasons"}]}` (docs/placement.md), replica by replica.
pub fn json<W: std::io::Write>(out: W, names: &Names<'_>, model: u32, attempts: &[&Attempt]) -> std::io::Result<()> {
    super::explain_json::write(out, names, model, attempts)
}

/// Which rule picked the winner among the nodes that qualified.
fn why(names: &Names<'_>, plan: &Plan, p: &crate::placement::Placement, a: &Attempt) -> String {
    let prof = names.profile(p.model, p.profile);
    if plan.pack == crate::placement::Pack::Most {
        return "chosen together with every other new replica, to place the most (--pack most)".into();
    }
    let pool = p.fabric.map_or(crate::placement::Pool::Single, crate::placement::Pool::Fabric);
    let qualified = a.tallies.iter().find(|t| t.profile == p.profile && t.pool == pool).map_or(0, |t| t.qualified);
    let of = format!("{qualified} that qualify");
    if qualified == p.nodes.len() as u32 {
        return match p.fabric {
            None => "the only node that qualifies".into(),
            Some(f) => format!("the only {qualified} nodes that qualify on {}", names.fabric(f)),
        };
    }
    if let Some(f) = p.fabric {
        return format!(
            "the {} emptiest of {of} on {}, and no other fabric is combined with it",
            p.nodes.len(),
            names.fabric(f)
        );
    }
    let node = names.fleet.node(p.nodes[0].node);
    if let Some(src) = prof.source.as_deref().filter(|s| node.holds(s)) {
        return format!("it already holds {src}, and weights on disk come before packing ({of})");
    }
    if prof.cpu_only() {
        format!("the fewest allocations of {of}, so CPU replicas spread out")
    } else {
        format!("best fit: the fewest free {} GPUs of {of}, keeping emptier nodes whole", prof.class_label())
    }
}

pub fn human(names: &Names<'_>, plan: &Plan, model: u32, attempts: &[&Attempt], verbose: bool) -> String {
    let fell_back = fallbacks(names, plan, model);
    let m = names.model(model);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} replica{} wanted, {} already running",
        m.name,
        m.replicas,
        if m.replicas == 1 { "" } else { "s" },
        plan.existing_of_explained.len()
    );
    if !plan.existing_of_explained.is_empty() {
        let _ = writeln!(out, "  existing: replica {}", super::join(&plan.existing_of_explained));
    }
    for s in plan.surplus.iter().filter(|s| s.model == model) {
        let nodes: Vec<&str> = s.nodes.iter().map(|&n| names.node(n)).collect();
        let effect = match m.replicas_per_node {
            1 => "its nodes are avoided".to_string(),
            k => format!("it counts towards replicas_per_node = {k} on its nodes"),
        };
        let _ = writeln!(
            out,
            "  surplus: replica {} runs on {} beyond the {} asked for; it is left alone, and {effect}",
            s.replica,
            nodes.join(", "),
            m.replicas
        );
    }
    for a in attempts {
        match &a.placement {
            Some(p) => {
                let prof = names.profile(model, p.profile);
                let pool =
                    names.pool(p.fabric.map_or(crate::placement::Pool::Single, crate::placement::Pool::Fabric), prof);
                let _ = writeln!(
                    out,
                    "\nreplica {}: placed with profile {} ({}) in pool {pool}",
                    a.replica, prof.name, prof.engine.name
                );
                for line in names.nodes_cell(p).lines() {
                    let _ = writeln!(out, "  on {line}");
                }
                let _ = writeln!(out, "  why: {}", why(names, plan, p, a));
            }
            None if a.through > a.replica => {
                let count = u64::from(a.through - a.replica) + 1;
                let _ = writeln!(out, "\nreplicas {}-{} ({count}): not placed", a.replica, a.through);
            }
            None => {
                let _ = writeln!(out, "\nreplica {}: not placed", a.replica);
            }
        }
        if a.rejections.is_empty() && a.tallies.is_empty() {
            let _ = writeln!(out, "  no profile to try");
        }
        let rejections = a.rejections.to_vec();
        for line in super::place::summary_lines(names, model, &rejections, Some(&a.tallies)) {
            let _ = writeln!(out, "  {line}");
        }
        for line in memory_lines(names, model, a) {
            let _ = writeln!(out, "  {line}");
        }
        if a.placement.is_some()
            && let Some(closest) = fell_back.get(&a.replica)
        {
            for line in super::place::closest_lines(closest) {
                let _ = writeln!(out, "  {line}");
            }
        }
        if verbose && !a.rejections.is_empty() {
            let _ = writeln!(out, "  every rejection, in the order tried:");
            for r in &rejections {
                let j = names.rejection_json(model, r);
                let at = match (j.pool.is_empty(), j.node.is_empty()) {
                    (true, true) => "-".to_string(),
                    (false, true) => j.pool.clone(),
                    (true, false) => j.node.to_string(),
                    (false, false) => format!("{} {}", j.pool, j.node),
                };
                let _ = writeln!(out, "    {} @ {at}: {}", j.profile, j.reason);
            }
        }
    }
    out
}

/// For each profile tried whose model has a shape: what one GPU (or the
/// host) of a replica holds, and, where nodes were passed over for memory,
/// what would fit their devices (docs/placement.md, "Memory fit").
fn memory_lines(names: &Names<'_>, model: u32, a: &Attempt) -> Vec<String> {
    let mut tried: Vec<u32> = a.tallies.iter().map(|t| t.profile).collect();
    tried.extend(a.rejections.iter().map(|r| r.profile));
    tried.extend(a.placement.as_ref().map(|p| p.profile));
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for pi in tried {
        if seen.contains(&pi) {
            continue;
        }
        seen.push(pi);
        let p = names.profile(model, pi);
        let (Some(weights), Some(s)) = (p.memory.weight_bytes, &p.memory.sizing) else { continue };
        let (tp, pp) = crate::placement::memory_parallel(p);
        let parts = s.parts(weights, tp, pp);
        let per = if p.cpu_only() {
            "of host memory"
        } else if p.mig_profile.is_some() {
            "per MIG device"
        } else {
            "per GPU"
        };
        out.push(format!("memory, profile {}: {parts} = {:.1} GiB {per}", p.name, parts.total() / crate::shape::GIB));
        let short = a
            .rejections
            .iter()
            .filter(|r| r.profile == pi && matches!(r.reason, Reason::GpuFit { .. } | Reason::HostFit { .. }))
            .filter_map(|r| r.node)
            .map(|n| names.fleet.device_memory_mb(n, p))
            .filter(|&mb| mb > 0)
            .min();
        if let Some(mb) = short {
            let memory = mb as f64 * 1024.0 * 1024.0;
            let usable = s.utilization * memory / crate::shape::GIB;
            let device = match &p.mig_profile {
                _ if p.cpu_only() => "of the node's memory".to_string(),
                Some(mig) => format!("per {} MIG {mig} device", p.class_label()),
                None => format!("per {} GPU", p.class_label()),
            };
            let hint = crate::fit::hint(p, memory, most_per_node(names, p));
            out.push(format!("  {usable:.1} GiB usable {device}: {hint}"));
        }
    }
    out
}

/// The most GPUs of the profile's class on one node of the fleet.
fn most_per_node(names: &Names<'_>, p: &crate::catalog::Profile) -> u32 {
    let Some(class) = p.gpu_class.as_deref() else { return 1 };
    names.fleet.inv.nodes.iter().map(|n| n.gpus.iter().filter(|g| g.class == class).count() as u32).max().unwrap_or(1)
}
