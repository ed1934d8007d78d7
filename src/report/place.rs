//! `place` for people: the table of placements, each replica left unplaced
//! with its closest nodes, and the summary lines.

use std::fmt::Write as _;

use crate::placement::{Decision, Plan, Pool, PoolTally, Reason, Rejection, Why};
use crate::plan::reasons::{Closest, closest};
use crate::wording::Names;

pub fn human(names: &Names<'_>, plan: &Plan) -> String {
    let mut out = String::new();
    let mut t = super::table(&["MODEL", "REPLICA", "PROFILE", "ENGINE", "POOL", "NODES", "HCAS"]);
    let mut rows = 0;
    for d in &plan.decisions {
        if let Decision::Placed(p) = d {
            let j = names.placement_json(p);
            let hcas: Vec<String> =
                j.nodes.iter().filter_map(|n| n.hcas.filter(|h| !h.is_empty())).map(|h| h.join(",")).collect();
            t.add_row(vec![
                j.model.to_string(),
                p.replica.to_string(),
                j.profile.to_string(),
                j.engine.to_string(),
                j.pool,
                names.nodes_cell(p),
                if hcas.is_empty() { "-".to_string() } else { hcas.join("\n") },
            ]);
            rows += 1;
        }
    }
    if rows > 0 {
        let _ = writeln!(out, "{t}");
    } else {
        let _ = writeln!(out, "No replica was placed by this plan.");
    }
    existing_lines(names, &mut out);
    // Unplaced replicas of one model left out for the same reasons, with
    // nothing placed in between, are said once: "replicas 3-78 (76): not
    // placed". Each says what this plan put on the nodes that came closest.
    let mut groups: Vec<(u32, Vec<u32>, &Why, Vec<Closest<'_>>)> = Vec::new();
    crate::plan::reasons::walk(names, &plan.decisions, |d, so_far| {
        if let Decision::Unplaced { model, replica, why } = d {
            match groups.last_mut() {
                Some((m, replicas, w, _)) if m == model && (std::ptr::eq(*w, &**why) || **w == **why) => {
                    replicas.push(*replica);
                }
                _ => groups.push((*model, vec![*replica], why, closest(names, *model, why, so_far))),
            }
        }
    });
    for (model, replicas, why, closest) in groups {
        let name = &names.model(model).name;
        match replicas.as_slice() {
            [one] => {
                let _ = writeln!(out, "\n{name} replica {one}: not placed");
            }
            many => {
                let _ = writeln!(out, "\n{name} replicas {} ({}): not placed", runs(many), many.len());
            }
        }
        for line in summary_lines(names, model, &why.rejections, Some(&why.tallies)) {
            let _ = writeln!(out, "  {line}");
        }
        for line in closest_lines(&closest) {
            let _ = writeln!(out, "  {line}");
        }
    }
    for s in &plan.surplus {
        let nodes: Vec<&str> = s.nodes.iter().map(|&n| names.node(n)).collect();
        let m = names.model(s.model);
        let effect = match m.replicas_per_node {
            1 => format!("keeps other replicas off {}", if nodes.len() == 1 { "it" } else { "them" }),
            k => format!("counts towards replicas_per_node = {k} there"),
        };
        let _ = writeln!(
            out,
            "\n{} replica {} is surplus (the catalog asks for {}); it stays on {} and {effect}",
            m.name,
            s.replica,
            m.replicas,
            nodes.join(", "),
        );
    }
    let _ = writeln!(out, "\n{}", summary_line(plan));
    let _ = writeln!(out, "{}", outcome_line(&plan.summary));
    out
}

/// "14 wanted, 3 existing, 9 placed, 2 unplaced": the table's last count,
/// and what `place -o FILE` says on stderr.
pub fn summary_line(plan: &Plan) -> String {
    let sum = &plan.summary;
    format!("{} wanted, {} existing, {} placed, {} unplaced", sum.wanted, sum.existing, sum.placed, sum.unplaced)
}

/// "placed 27 of 55; no plan places more than 31; 6 h100 GPUs stranded":
/// what was placed of what was missing, the bound when something is left,
/// and the stranded GPUs per class when there are any.
pub fn outcome_line(sum: &crate::placement::Summary) -> String {
    let mut line = format!("placed {} of {}", sum.placed, sum.placed + sum.unplaced);
    if sum.unplaced > 0 {
        let _ = write!(line, "; no plan places more than {}", sum.bound);
    }
    if !sum.stranded.is_empty() {
        let total: u64 = sum.stranded.values().sum();
        let parts: Vec<String> = sum.stranded.iter().map(|(class, n)| format!("{n} {class}")).collect();
        let _ = write!(line, "; {} GPU{} stranded", parts.join(", "), if total == 1 { "" } else { "s" });
    }
    line
}

/// Where the replicas that already run are: one line per model.
pub(super) fn existing_lines(names: &Names<'_>, out: &mut String) {
    let mut first = true;
    // Replicas whose every allocation is pending: submitted, not running yet.
    let mut pending: std::collections::HashMap<(&str, u32), bool> = std::collections::HashMap::new();
    for a in names.fleet.inv.nodes.iter().flat_map(|n| &n.allocations) {
        *pending.entry((a.model.as_str(), a.replica)).or_insert(true) &= a.pending;
    }
    let is_pending = |m: &str, r: u32| pending.get(&(m, r)).copied().unwrap_or(false);
    for m in &names.catalog.models {
        let Some(existing) = names.fleet.existing_of(&m.name) else { continue };
        let waiting: Vec<(u32, &Vec<u32>)> = existing
            .iter()
            .filter(|(r, _)| **r < m.replicas && is_pending(&m.name, **r))
            .map(|(r, n)| (*r, n))
            .collect();
        for (r, nodes) in &waiting {
            if std::mem::take(&mut first) {
                out.push('\n');
            }
            let on: Vec<&str> = nodes.iter().map(|&n| names.node(n)).collect();
            let _ = writeln!(
                out,
                "{} replica {r} is pending (submitted for {}, not running yet)",
                m.name,
                crate::diag::shorten(&on, 5)
            );
        }
        let running: Vec<(u32, &Vec<u32>)> = existing
            .iter()
            .filter(|(r, _)| **r < m.replicas && !is_pending(&m.name, **r))
            .map(|(r, n)| (*r, n))
            .collect();
        if running.is_empty() {
            continue;
        }
        let replicas: Vec<u32> = running.iter().map(|(r, _)| *r).collect();
        let mut nodes: Vec<&str> = running.iter().flat_map(|(_, n)| n.iter().map(|&n| names.node(n))).collect();
        nodes.dedup();
        let (word, verb) = if replicas.len() == 1 { ("replica", "runs") } else { ("replicas", "run") };
        if std::mem::take(&mut first) {
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "{} {word} {} already {verb} on {}",
            m.name,
            runs(&replicas),
            crate::diag::shorten(&nodes, 5)
        );
    }
}

/// For each pool's nearest nodes: "closest in none/h100-80gb-hbm3 (tp8):"
/// then "  gpu-h100-02 has 4 free, needs 8; 4 taken in this plan by
/// llama-3.1-70b r1 (GPUs 0-3)".
pub(crate) fn closest_lines(closest: &[Closest<'_>]) -> Vec<String> {
    let mut lines = Vec::new();
    for c in closest.iter().filter(|c| !c.nearest.is_empty()) {
        lines.push(format!("closest in {} ({}):", c.pool, c.profile));
        for n in &c.nearest {
            let mut line = format!("  {} has {} free, needs {}", n.node, n.free, n.needs);
            if !n.taken_in_plan.is_empty() {
                let by: Vec<String> = n
                    .taken_in_plan
                    .iter()
                    .map(|t| format!("{} r{} (GPUs {})", t.model, t.replica, runs(&t.gpus)))
                    .collect();
                let held: usize = n.taken_in_plan.iter().map(|t| t.gpus.len()).sum();
                let _ = write!(line, "; {held} taken in this plan by {}", by.join(" and "));
            }
            lines.push(line);
        }
    }
    lines
}

/// Ascending indices as runs: "0, 3-78".
pub(crate) fn runs(indices: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < indices.len() {
        let start = indices[i];
        while i + 1 < indices.len() && indices[i + 1] == indices[i] + 1 {
            i += 1;
        }
        parts.push(if indices[i] == start { start.to_string() } else { format!("{start}-{}", indices[i]) });
        i += 1;
    }
    parts.join(", ")
}

/// Per profile and pool, in the order tried: "0/40 nodes qualify: 31 have 2
/// free h100-80gb-hbm3 GPUs, needs 4; 6 are cordoned (…); …", reasons ordered
/// by how many nodes they cost.
pub fn summary_lines(
    names: &Names<'_>,
    model: u32,
    rejections: &[Rejection],
    tallies: Option<&[PoolTally]>,
) -> Vec<String> {
    struct Group {
        profile: u32,
        pool: crate::placement::Pool,
        /// Each reason, with whether the node has no GPU of the class at
        /// all (kept apart from one whose GPUs of the class are taken).
        reasons: Vec<((crate::placement::Reason, bool), Vec<u32>)>,
        verdicts: Vec<String>,
    }
    let mut groups: Vec<Group> = Vec::new();
    // Indexed: a node on thousands of fabrics makes thousands of pools.
    let mut index: std::collections::HashMap<(u32, crate::placement::Pool), usize> = std::collections::HashMap::new();
    let mut add_group = |groups: &mut Vec<Group>, profile, pool| -> usize {
        *index.entry((profile, pool)).or_insert_with(|| {
            groups.push(Group { profile, pool, reasons: Vec::new(), verdicts: Vec::new() });
            groups.len() - 1
        })
    };
    if let Some(t) = tallies {
        for tally in t {
            add_group(&mut groups, tally.profile, tally.pool);
        }
    }
    // Whether a node has GPUs of the profile's class, by the fleet's class
    // ids: asked of nearly every rejection, and an explained model has
    // millions.
    let has_hardware = |n: u32, prof: &crate::catalog::Profile| match (&prof.mig_profile, &prof.gpu_class) {
        (None, Some(class)) => match names.fleet.classes.binary_search(&class.as_str()) {
            Ok(c) => names.fleet.free[n as usize].iter().any(|e| e.0 == c as u32),
            Err(_) => false,
        },
        _ => crate::plan::reasons::has_hardware(names.fleet.node(n), prof),
    };
    for r in rejections {
        // A fabric's pool is about the nodes on that fabric: a cordoned node
        // elsewhere is rejected there too (state comes first), but not counted.
        if let (Pool::Fabric(f), Some(n)) = (r.pool, r.node)
            && names.fleet.attached(n, f).is_none()
        {
            continue;
        }
        let gi = add_group(&mut groups, r.profile, r.pool);
        let g = &mut groups[gi];
        match r.node {
            Some(n) => {
                let prof = names.profile(model, r.profile);
                let absent =
                    matches!(r.reason, Reason::Gpus { free: 0 } | Reason::Mig { free: 0 }) && !has_hardware(n, prof);
                match g.reasons.iter_mut().find(|(key, _)| *key == (r.reason, absent)) {
                    Some((_, nodes)) => nodes.push(n),
                    None => g.reasons.push(((r.reason, absent), vec![n])),
                }
            }
            None => {
                let prof = names.profile(model, r.profile);
                g.verdicts.push(names.reason(r.reason, prof));
            }
        }
    }
    let qualify: std::collections::HashMap<(u32, crate::placement::Pool), u32> =
        tallies.unwrap_or_default().iter().rev().map(|t| ((t.profile, t.pool), t.qualified)).collect();
    let mut lines = Vec::new();
    for g in &mut groups {
        let prof = names.profile(model, g.profile);
        let rejected: usize = g.reasons.iter().map(|(_, n)| n.len()).sum();
        let qualified = qualify.get(&(g.profile, g.pool)).map(|&q| q as usize);
        g.reasons.sort_by_key(|(_, nodes)| std::cmp::Reverse(nodes.len()));
        let parts: Vec<String> = g
            .reasons
            .iter()
            .map(|((reason, absent), nodes)| {
                let ids: Vec<&str> = nodes.iter().map(|&n| names.node(n)).collect();
                let text = if *absent {
                    let (n, has) = (nodes.len(), if nodes.len() == 1 { "has" } else { "have" });
                    match &prof.mig_profile {
                        Some(mig) => format!("{n} {has} no {} GPU with {mig} MIG devices", prof.class_label()),
                        None => format!("{n} {has} no {} GPUs", prof.class_label()),
                    }
                } else {
                    names.reason_plural(*reason, prof, nodes.len())
                };
                format!("{text} ({})", crate::diag::shorten(&ids, 5))
            })
            .collect();
        let pool = names.pool(g.pool, prof);
        let mut line = format!("profile {} (priority {})", prof.name, prof.priority);
        if !pool.is_empty() {
            let _ = write!(line, ", pool {pool}");
        }
        if rejected > 0 || qualified.is_some() {
            let q = qualified.unwrap_or(0);
            let _ = write!(line, ": {q}/{} nodes qualify", q + rejected);
            if !parts.is_empty() {
                let _ = write!(line, ": {}", parts.join("; "));
            }
        }
        for v in &g.verdicts {
            let _ = write!(line, "{}{v}", if rejected > 0 || qualified.is_some() { "; " } else { ": " });
        }
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    #[test]
    fn replica_indices_as_runs() {
        assert_eq!(super::runs(&[3]), "3");
        assert_eq!(super::runs(&[0, 3, 4, 5, 9]), "0, 3-5, 9");
        assert_eq!(super::runs(&[3, 4]), "3-4");
    }
}
