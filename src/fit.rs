//! Whether a profile's GPUs can hold its model, checked by `lint` before
//! anything is placed: a 405B model on four 80 GB GPUs starts, loads, and
//! dies out of memory.
//!
//! A replica needs its weights plus room for activations and KV cache
//! (1.2 x the weights in all), spread evenly over its GPUs, each of which
//! gives 0.9 of its memory (see docs/catalog.md, "Memory fit").

use std::collections::BTreeMap;

use crate::catalog::{Catalog, MAX_GPUS_PER_NODE, MAX_NODES, Model, Profile};
use crate::diag::{Code, Diag};
use crate::inventory::Inventory;
use crate::placement::{NEED_FACTOR, USABLE};

const MIB: f64 = 1024.0 * 1024.0;
const GB: f64 = 1e9;

/// The memory of a GPU class in bytes, as lint knows it: the smallest GPU of
/// the class in the fleet, else the `NNgb` in the class name.
fn class_memory(class: &str, fleet: &BTreeMap<&str, u64>) -> Option<f64> {
    if let Some(&mb) = fleet.get(class) {
        return Some(mb as f64 * MIB);
    }
    class.split('-').find_map(|part| part.strip_suffix("gb")?.parse::<u32>().ok()).map(|gb| f64::from(gb) * GB)
}

/// The smallest GPUs of each class in the fleet that report their memory.
fn smallest_per_class(inv: Option<&Inventory>) -> BTreeMap<&str, u64> {
    let mut out: BTreeMap<&str, u64> = BTreeMap::new();
    for g in inv.iter().flat_map(|i| i.nodes.iter()).flat_map(|n| n.gpus.iter()).filter(|g| g.memory_mb > 0) {
        let e = out.entry(g.class.as_str()).or_insert(g.memory_mb);
        *e = (*e).min(g.memory_mb);
    }
    out
}

/// The most GPUs of each class on one node, where the fleet is known.
fn most_per_node(inv: Option<&Inventory>) -> BTreeMap<&str, u32> {
    let mut out: BTreeMap<&str, u32> = BTreeMap::new();
    for n in inv.iter().flat_map(|i| i.nodes.iter()) {
        let mut here: BTreeMap<&str, u32> = BTreeMap::new();
        for g in &n.gpus {
            *here.entry(g.class.as_str()).or_default() += 1;
        }
        for (c, k) in here {
            let e = out.entry(c).or_default();
            *e = (*e).max(k);
        }
    }
    out
}

/// What would fit: the smallest `gpus_per_node` (up to what a node of the
/// class has), else the fewest `nodes` at that many GPUs each.
fn suggestion(weights: f64, memory: f64, p: &Profile, per_node: u32) -> String {
    let fits = |gpus: u32, nodes: u32| weights * NEED_FACTOR / f64::from(gpus * nodes) <= USABLE * memory;
    if let Some(g) = (1..=per_node.min(MAX_GPUS_PER_NODE as u32)).find(|&g| fits(g, p.nodes)) {
        return format!("gpus_per_node = {g} would fit");
    }
    match (1..=MAX_NODES as u32).find(|&n| fits(per_node, n)) {
        Some(n) => format!("nodes = {n} with gpus_per_node = {per_node} would fit"),
        None => "no number of these GPUs would hold it".to_string(),
    }
}

/// Fit diagnostics for every GPU profile of a model that gives its size.
pub fn checks(cat: &Catalog, inv: Option<&Inventory>) -> Vec<Diag> {
    let memory = smallest_per_class(inv);
    let per_node = most_per_node(inv);
    let mut out = Vec::new();
    for m in &cat.models {
        let Some(weights) = m.weight_bytes else { continue };
        for p in &m.profiles {
            let Some(class) = p.gpu_class.as_deref() else { continue };
            let Some(mem) = class_memory(class, &memory) else { continue };
            out.extend(one(cat, m, p, weights, mem, per_node.get(class).copied().unwrap_or(8)));
        }
    }
    out
}

fn one(cat: &Catalog, m: &Model, p: &Profile, weights: f64, mem: f64, per_node: u32) -> Option<Diag> {
    let gpus = p.gpus_per_node * p.nodes;
    let share = weights / f64::from(gpus);
    let need = share * NEED_FACTOR;
    let gpu_word = if gpus == 1 { "GPU" } else { "GPUs" };
    let class = p.gpu_class.as_deref().unwrap_or_default();
    let hint = suggestion(weights, mem, p, per_node);
    let d = if share > mem {
        Diag::error(
            Code::FitTooSmall,
            format!(
                "`{}` ({:.0} GB of weights) does not fit on {gpus} {class} {gpu_word} (profile `{}`)",
                m.name,
                weights / GB,
                p.name
            ),
        )
        .at(&cat.src, p.name_span, "too small for the weights alone")
        .help(format!("{:.1} GB of weights per GPU against {:.1} GB; {hint}", share / GB, mem / GB))
    } else if need > USABLE * mem {
        Diag::warning(
            Code::FitMargins,
            format!("`{}` fits on {gpus} {class} {gpu_word} with no room to serve it (profile `{}`)", m.name, p.name),
        )
        .at(&cat.src, p.name_span, "weights fit, the rest does not")
        .help(format!(
            "a replica needs 1.2 x its weights, {:.1} GB per GPU, within 0.9 of each GPU's {:.1} GB; {hint}",
            need / GB,
            mem / GB
        ))
    } else {
        return None;
    };
    Some(d)
}

#[cfg(test)]
mod tests {
    #[test]
    fn class_memory_from_the_fleet_else_the_name() {
        let fleet = [("h100-80gb-hbm3", 81559u64)].into();
        assert_eq!(super::class_memory("h100-80gb-hbm3", &fleet), Some(81559.0 * super::MIB));
        assert_eq!(super::class_memory("a100-sxm4-40gb", &fleet), Some(40e9));
        assert_eq!(super::class_memory("l40s", &fleet), None);
    }
}
