//! Catalog warnings that need a fleet: a class nobody has, a shape nobody
//! can hold, an engine nobody has installed.

use super::Catalog;
use crate::diag::{Code, Diag, suggest};

/// Warnings that need a fleet: a class nobody has, a shape nobody can hold,
/// an engine nobody has installed.
pub fn fleet_checks(cat: &Catalog, inv: &crate::inventory::Inventory) -> Vec<Diag> {
    use std::collections::{BTreeMap, BTreeSet};
    let mut most_per_class: BTreeMap<&str, u32> = BTreeMap::new();
    let mut engines_seen: BTreeSet<&str> = BTreeSet::new();
    let mut any_reports_engines = false;
    for n in &inv.nodes {
        let mut per_class: BTreeMap<&str, u32> = BTreeMap::new();
        for g in &n.gpus {
            *per_class.entry(g.class.as_str()).or_default() += 1;
        }
        for (c, k) in per_class {
            let e = most_per_class.entry(c).or_default();
            *e = (*e).max(k);
        }
        if n.reports_engines() {
            any_reports_engines = true;
            engines_seen.extend(n.engine_names());
        }
    }
    let mut out = Vec::new();
    for m in &cat.models {
        for p in &m.profiles {
            if let Some(class) = &p.gpu_class {
                match most_per_class.get(class.as_str()) {
                    None => {
                        let help = if most_per_class.is_empty() {
                            "the inventory has no GPUs at all".to_string()
                        } else {
                            suggest(class, most_per_class.keys().copied(), "the inventory's classes are")
                        };
                        out.push(
                            Diag::warning(
                                Code::UnknownGpuClass,
                                format!("no node has a `{class}` GPU (profile `{}` of `{}`)", p.name, m.name),
                            )
                            .at(&cat.src, p.class_span, "no such class in the fleet")
                            .help(help),
                        );
                    }
                    Some(&most) if most < p.gpus_per_node => {
                        out.push(
                            Diag::warning(
                                Code::NeverFits,
                                format!(
                                    "profile `{}` of `{}` needs {} `{class}` GPUs per node, but no node has more than {most}",
                                    p.name, m.name, p.gpus_per_node
                                ),
                            )
                            .at(&cat.src, p.class_span, "no node is this big")
                            .help("lower gpus_per_node and raise nodes, or add bigger nodes"),
                        );
                    }
                    Some(_) => {}
                }
            }
            if any_reports_engines && !engines_seen.contains(p.engine.name) {
                out.push(
                    Diag::warning(
                        Code::EngineNowhere,
                        format!(
                            "no node that reports its engines has {} installed (profile `{}` of `{}`)",
                            p.engine.name, p.name, m.name
                        ),
                    )
                    .at(&cat.src, p.engine_span, "installed nowhere")
                    .help("only nodes that report no engines at all (older agents) could take this profile"),
                );
            }
        }
    }
    out
}
