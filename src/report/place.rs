//! `place` output: the plan as JSON (docs/placement.md) or as a table with the
//! unplaced replicas explained.

use std::fmt::Write as _;

use serde::Serialize;
use serde::ser::SerializeStruct;

use super::{Names, RejectionJson, SeqOf};
use crate::placement::{Decision, Plan, PoolTally, Rejection};

pub fn json<W: std::io::Write>(out: W, names: &Names<'_>, plan: &Plan) -> std::io::Result<()> {
    super::write_json(out, &PlaceDoc { names, plan })
}

struct PlaceDoc<'a> {
    names: &'a Names<'a>,
    plan: &'a Plan,
}

#[derive(Serialize)]
struct UnplacedJson<'a> {
    model: &'a str,
    replica: u32,
    rejections: Vec<RejectionJson<'a>>,
}

#[derive(Serialize)]
struct SummaryJson {
    wanted: u64,
    existing: u64,
    placed: u64,
    unplaced: u64,
}

impl Serialize for PlaceDoc<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let names = self.names;
        let placements = self.plan.decisions.iter().filter_map(|d| match d {
            Decision::Placed(p) => Some(names.placement_json(p)),
            Decision::Unplaced { .. } => None,
        });
        let unplaced = self.plan.decisions.iter().filter_map(|d| match d {
            Decision::Placed(_) => None,
            Decision::Unplaced { model, replica, rejections } => Some(UnplacedJson {
                model: &names.model(*model).name,
                replica: *replica,
                rejections: rejections.iter().map(|r| names.rejection_json(*model, r)).collect(),
            }),
        });
        let sum = &self.plan.summary;
        let mut st = s.serialize_struct("Plan", 3)?;
        st.serialize_field("placements", &SeqOf::new(placements))?;
        st.serialize_field("unplaced", &SeqOf::new(unplaced))?;
        st.serialize_field(
            "summary",
            &SummaryJson { wanted: sum.wanted, existing: sum.existing, placed: sum.placed, unplaced: sum.unplaced },
        )?;
        st.end()
    }
}

pub fn human(names: &Names<'_>, plan: &Plan) -> String {
    let mut out = String::new();
    let mut t = super::table(&["MODEL", "REPLICA", "PROFILE", "ENGINE", "POOL", "NODES", "HCAS"]);
    let mut rows = 0;
    for d in &plan.decisions {
        if let Decision::Placed(p) = d {
            let j = names.placement_json(p);
            let hcas: Vec<String> = j.nodes.iter().filter(|n| !n.hcas.is_empty()).map(|n| n.hcas.join(",")).collect();
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
    // Unplaced replicas of one model left out for the same reasons are said
    // once: "replicas 3-78 (76): not placed".
    let mut groups: Vec<(u32, Vec<u32>, &[Rejection])> = Vec::new();
    for d in &plan.decisions {
        if let Decision::Unplaced { model, replica, rejections } = d {
            match groups.last_mut() {
                Some((m, replicas, r))
                    if m == model && (std::ptr::eq(*r, &rejections[..]) || **r == rejections[..]) =>
                {
                    replicas.push(*replica);
                }
                _ => groups.push((*model, vec![*replica], rejections)),
            }
        }
    }
    for (model, replicas, rejections) in groups {
        let name = &names.model(model).name;
        match replicas.as_slice() {
            [one] => {
                let _ = writeln!(out, "\n{name} replica {one}: not placed");
            }
            many => {
                let _ = writeln!(out, "\n{name} replicas {} ({}): not placed", runs(many), many.len());
            }
        }
        for line in summary_lines(names, model, rejections, None) {
            let _ = writeln!(out, "  {line}");
        }
    }
    for s in &plan.surplus {
        let nodes: Vec<&str> = s.nodes.iter().map(|&n| names.node(n)).collect();
        let m = names.model(s.model);
        let _ = writeln!(
            out,
            "\n{} replica {} is surplus (the catalog asks for {}); it stays on {} and keeps other replicas off {}",
            m.name,
            s.replica,
            m.replicas,
            nodes.join(", "),
            if nodes.len() == 1 { "it" } else { "them" },
        );
    }
    let sum = &plan.summary;
    let _ = writeln!(
        out,
        "\n{} wanted, {} existing, {} placed, {} unplaced",
        sum.wanted, sum.existing, sum.placed, sum.unplaced
    );
    out
}

/// Ascending indices as runs: "0, 3-78".
fn runs(indices: &[u32]) -> String {
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
        reasons: Vec<(crate::placement::Reason, Vec<u32>)>,
        verdicts: Vec<String>,
    }
    let mut groups: Vec<Group> = Vec::new();
    let add_group = |groups: &mut Vec<Group>, profile, pool| -> usize {
        match groups.iter().position(|g| g.profile == profile && g.pool == pool) {
            Some(i) => i,
            None => {
                groups.push(Group { profile, pool, reasons: Vec::new(), verdicts: Vec::new() });
                groups.len() - 1
            }
        }
    };
    if let Some(t) = tallies {
        for tally in t {
            add_group(&mut groups, tally.profile, tally.pool);
        }
    }
    for r in rejections {
        let gi = add_group(&mut groups, r.profile, r.pool);
        let g = &mut groups[gi];
        match r.node {
            Some(n) => match g.reasons.iter_mut().find(|(reason, _)| *reason == r.reason) {
                Some((_, nodes)) => nodes.push(n),
                None => g.reasons.push((r.reason, vec![n])),
            },
            None => {
                let prof = names.profile(model, r.profile);
                g.verdicts.push(names.reason(r.reason, prof));
            }
        }
    }
    let mut lines = Vec::new();
    for g in &mut groups {
        let prof = names.profile(model, g.profile);
        let rejected: usize = g.reasons.iter().map(|(_, n)| n.len()).sum();
        let qualified = tallies
            .and_then(|t| t.iter().find(|t| t.profile == g.profile && t.pool == g.pool))
            .map(|t| t.qualified as usize);
        g.reasons.sort_by_key(|(_, nodes)| std::cmp::Reverse(nodes.len()));
        let parts: Vec<String> = g
            .reasons
            .iter()
            .map(|(reason, nodes)| {
                let ids: Vec<&str> = nodes.iter().map(|&n| names.node(n)).collect();
                format!("{} ({})", names.reason_plural(*reason, prof, nodes.len()), super::shorten(&ids, 5))
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
