//! A plan checked against the inventory render is given, before anything
//! is written. A plan made an hour ago may name GPUs someone has taken
//! since, a node that went down, or (edited by hand) GPU 999 or one node
//! twice: rendered anyway, its pods wait forever and its jobs pend.

use crate::diag::{Code, Diag};
use crate::inventory::{Inventory, Node};
use crate::plan::{Entry, Kind, Plan};
use crate::report::join;

/// One diagnostic per conflict, each naming replica, node and GPUs.
pub fn stale(plan: &Plan, inv: &Inventory) -> Vec<Diag> {
    let mut out = Vec::new();
    for e in &plan.entries {
        // A set: a hand-edited entry may name a node thousands of times.
        let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
        for at in &e.nodes {
            let mut conflict = |what: String| {
                out.push(
                    Diag::error(Code::StalePlan, format!("{} r{}: {what}; place again", e.model, e.replica))
                        .at(&plan.src, at.span, "planned here")
                        .help("the inventory has changed since the plan was made: run `llmgw place` on it again"),
                );
            };
            if !seen.insert(at.node.as_str()) {
                conflict(format!("{} is named twice", at.node));
                continue;
            }
            let Some(node) = find(inv, &at.node) else {
                conflict(format!("node {} is not in the inventory", at.node));
                continue;
            };
            // A replica that already runs is rendered where it runs, on a
            // node that may be draining meanwhile; only new ones must fit.
            if e.kind == Kind::Placed && !node.state.schedulable() {
                conflict(format!("{} is {}", node.id, node.state.as_str()));
            }
            for what in gpu_conflicts(e, node, &at.gpus, &at.mig_devices) {
                conflict(what);
            }
        }
    }
    out
}

/// The inventory's node of that id (nodes are sorted by id).
pub fn find<'a>(inv: &'a Inventory, id: &str) -> Option<&'a Node> {
    inv.nodes.binary_search_by(|n| n.id.as_str().cmp(id)).ok().map(|i| &inv.nodes[i])
}

/// Who holds a GPU, as an operator would look for it.
fn holder(model: &str, replica: u32) -> String {
    if model.contains(':') { model.to_string() } else { format!("{model} r{replica}") }
}

fn gpu_conflicts(e: &Entry, node: &Node, gpus: &[u32], migs: &[u32]) -> Vec<String> {
    let mut out = Vec::new();
    let mut present = Vec::new();
    for &g in gpus {
        match node.gpu_position(g) {
            None => out.push(format!("{} has no GPU {g}", node.id)),
            Some(i) => present.push((g, &node.gpus[i])),
        }
    }
    if !migs.is_empty() {
        if let [(g, gpu)] = present.as_slice() {
            for &m in migs {
                if !gpu.mig_devices.iter().any(|d| d.index == m) {
                    out.push(format!("{} GPU {g} has no MIG device {m}", node.id));
                }
            }
        } else if gpus.len() != 1 {
            out.push(format!("{} MIG devices {} name no single GPU", node.id, join(migs)));
        }
    }
    // A replica the plan found running must still run there, on those
    // GPUs: yesterday's plan must not render onto a node that went down
    // and whose GPUs another job holds now.
    if e.kind == Kind::Existing {
        let mine: Vec<u32> = node
            .allocations
            .iter()
            .filter(|a| a.model == e.model && a.replica == e.replica)
            .flat_map(|a| a.gpus.iter().copied())
            .collect();
        if node.allocations.iter().any(|a| a.model == e.model && a.replica == e.replica) {
            let (mut have, mut want) = (mine, gpus.to_vec());
            for list in [&mut have, &mut want] {
                list.sort_unstable();
                list.dedup();
            }
            if !have.is_empty() && !want.is_empty() && have != want {
                out.push(format!("{} runs it on GPUs {}, not {}", node.id, join(&have), join(&want)));
            }
            return out;
        }
        out.push(format!("{} no longer runs it", node.id));
    }
    for (g, gpu) in &present {
        if !gpu.healthy {
            out.push(format!("{} GPU {g} is unhealthy", node.id));
        } else if migs.is_empty() && gpu.in_mig_mode() {
            out.push(format!("{} GPU {g} is in MIG mode and cannot be used whole", node.id));
        }
    }
    // Held by another allocation: its own (a re-render of a running
    // replica) is no conflict.
    let mut held: Vec<(String, Vec<u32>)> = Vec::new();
    for a in &node.allocations {
        if a.model == e.model && a.replica == e.replica {
            continue;
        }
        let taken: Vec<u32> = if migs.is_empty() {
            a.gpus.iter().copied().filter(|g| gpus.contains(g)).collect()
        } else if a.gpus == gpus && (a.mig_devices.is_empty() || a.mig_devices.iter().any(|m| migs.contains(m))) {
            a.gpus.clone()
        } else {
            Vec::new()
        };
        if !taken.is_empty() {
            let who = holder(&a.model, a.replica);
            match held.iter_mut().find(|(h, _)| *h == who) {
                Some((_, v)) => v.extend(taken),
                None => held.push((who, taken)),
            }
        }
    }
    for (who, mut v) in held {
        v.sort_unstable();
        v.dedup();
        let (noun, verb) = if v.len() == 1 { ("GPU", "is") } else { ("GPUs", "are") };
        let what = if migs.is_empty() { String::new() } else { format!(" MIG {}", join(migs)) };
        out.push(format!("{} {noun} {}{what} {verb} held by {who}", node.id, join(&v)));
    }
    out
}
