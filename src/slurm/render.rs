//! Slurm as the runtime of a plan: one sbatch script per placed replica,
//! held to exactly the planned nodes, one task a node, the GPUs asked for
//! by the gres type the node reports. See docs/slurm.md.

use std::fmt::Write as _;

use crate::catalog::{Catalog, Profile};
use crate::diag::Diag;
use crate::inventory::Inventory;
use crate::launch::{Launch, hcas, serve};
use crate::plan::Entry as Placed;
use crate::render::resolve;

/// One script: its file name and text.
pub struct Script {
    pub name: String,
    pub text: String,
}

/// Under Slurm the leader is the first node of the job, whose address each
/// task reads from `LLMGW_LEADER`; a task's rank is its node's index.
const SLURM: Launch = Launch { leader_address: "$LLMGW_LEADER", rank: "$SLURM_NODEID" };

/// A word for the shell, single-quoted.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// `llmgw-<model>-r<replica>`, with anything odd in the model name made `-`.
fn job_name(model: &str, replica: u32) -> String {
    let m: String = model
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' })
        .collect();
    format!("llmgw-{m}-r{replica}")
}

/// `gpu:<type>:<count>` for one node's share: the type the node's gres
/// reports (label `slurm/gres-type`), else the GPU class.
fn gres(p: &Placed, prof: &Profile, inv: &Inventory) -> Option<String> {
    let first = &p.nodes[0];
    let count = first.gpus.len();
    if count == 0 {
        return None;
    }
    let node = inv.nodes.iter().find(|n| n.id == first.node)?;
    let ty = node.labels.get("slurm/gres-type").cloned().or_else(|| {
        prof.gpu_class.clone().or_else(|| node.gpus.iter().find(|g| g.index == first.gpus[0]).map(|g| g.class.clone()))
    });
    Some(match ty {
        Some(t) => format!("gpu:{t}:{count}"),
        None => format!("gpu:{count}"),
    })
}

fn script(p: &Placed, prof: &Profile, model_source: Option<&str>, inv: &Inventory) -> Script {
    let name = job_name(&p.model, p.replica);
    let source = prof.source.as_deref().or(model_source).unwrap_or(&p.model);
    let nodes = u32::try_from(p.nodes.len()).unwrap_or(u32::MAX);
    let nodelist: Vec<&str> = p.nodes.iter().map(|a| a.node.as_str()).collect();
    let mut t = String::from("#!/bin/bash\n");
    let _ = writeln!(t, "#SBATCH --job-name={name}");
    let _ = writeln!(t, "#SBATCH --nodes={nodes}");
    let _ = writeln!(t, "#SBATCH --nodelist={}", nodelist.join(","));
    t.push_str("#SBATCH --ntasks-per-node=1\n");
    if let Some(g) = gres(p, prof, inv) {
        let _ = writeln!(t, "#SBATCH --gres={g}");
    }
    let _ = writeln!(t, "# Written by llmgw for {} replica {} (profile {}).", p.model, p.replica, prof.name);
    for a in p.nodes.iter().filter(|a| !a.gpus.is_empty()) {
        let _ = writeln!(t, "# Planned GPUs on {}: {}", a.node, crate::report::join(&a.gpus));
    }
    t.push_str("set -euo pipefail\n");
    for (k, v) in &prof.serving.env {
        let _ = writeln!(t, "export {k}={}", quote(v));
    }
    let hcas = hcas(p);
    if !hcas.is_empty() {
        let _ = writeln!(t, "export NCCL_IB_HCA={}", quote(&hcas.join(",")));
    }
    if nodes <= 1 {
        let _ = writeln!(t, "srun --ntasks=1 bash -c {}", quote(&serve(prof, source, 1, true, &SLURM)));
    } else {
        t.push_str(
            "LLMGW_LEADER=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\nexport LLMGW_LEADER\n",
        );
        let leader = serve(prof, source, nodes, true, &SLURM);
        let worker = serve(prof, source, nodes, false, &SLURM);
        let each = if leader == worker {
            leader
        } else {
            format!("if [ \"$SLURM_NODEID\" = 0 ]; then {leader}; else {worker}; fi")
        };
        let _ = writeln!(t, "srun --ntasks-per-node=1 bash -c {}", quote(&each));
    }
    Script { name: format!("{name}.sbatch"), text: t }
}

/// The scripts that run a plan where it was placed, in plan order.
pub fn render(plan: &[Placed], cat: &Catalog, inv: &Inventory) -> Result<Vec<Script>, Vec<Diag>> {
    Ok(resolve(plan, cat, inv)?.into_iter().map(|(p, m, prof)| script(p, prof, m.source.as_deref(), inv)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_names_are_plain() {
        assert_eq!(job_name("llama-3.1-70b", 2), "llmgw-llama-3.1-70b-r2");
        assert_eq!(job_name("a b/'c'", 0), "llmgw-a-b--c--r0");
        assert_eq!(quote("it's"), "'it'\\''s'");
    }
}
