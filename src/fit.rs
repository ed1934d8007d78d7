//! Whether a profile's GPUs can hold its model, checked by `lint` before
//! anything is placed: a 405B model on four 80 GB GPUs starts, loads, and
//! dies out of memory.
//!
//! A replica of a model without a shape needs its weights plus room for
//! activations and KV cache (1.2 x the weights in all), spread evenly over
//! its GPUs, each of which gives 0.9 of its memory. One of a model with a
//! shape needs its share of the weights, the KV cache of its sequences at
//! full length, and the overhead, within the profile's
//! `gpu_memory_utilization` of each GPU (docs/catalog.md, "Memory fit").

use std::collections::BTreeMap;

use crate::catalog::{Catalog, MAX_GPUS_PER_NODE, MAX_NODES, Model, Profile};
use crate::diag::{Code, Diag};
use crate::inventory::Inventory;
use crate::placement::{NEED_FACTOR, USABLE};

const MIB: f64 = 1024.0 * 1024.0;
const GIB: f64 = 1024.0 * MIB;
const GB: f64 = 1e9;

/// The memory of a GPU class in bytes, as lint knows it: the smallest GPU of
/// the class in the fleet, else the `NNgb` in the class name (taken as
/// decimal GB: an "80GB" H100 reports 79.6 GiB, so 74.5 GiB errs on the
/// side of "does not fit"). The second value is that `NN`, when the name
/// was used, for the message to say where the number came from.
fn class_memory(class: &str, fleet: &BTreeMap<&str, u64>) -> Option<(f64, Option<u32>)> {
    if let Some(&mb) = fleet.get(class) {
        return Some((mb as f64 * MIB, None));
    }
    class
        .split('-')
        .find_map(|part| part.strip_suffix("gb")?.parse::<u32>().ok())
        .map(|gb| (f64::from(gb) * GB, Some(gb)))
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

/// Whether a replica of the profile would fit GPUs of `memory` bytes with
/// `gpus` of them on each of `nodes` nodes.
pub fn fits_on(p: &Profile, memory: f64, gpus: u32, nodes: u32) -> bool {
    let Some(weights) = p.memory.weight_bytes else { return true };
    match &p.memory.sizing {
        None => weights * NEED_FACTOR / f64::from(gpus * nodes) <= USABLE * memory,
        Some(s) => {
            let (tp, pp) = crate::placement::memory_split(p, gpus, nodes);
            s.parts(weights, tp, pp).total() <= s.utilization * memory
        }
    }
}

/// What would make a profile that does not fit devices of `memory` bytes
/// fit: for a model with a shape, the largest `max_model_len` (a multiple
/// of 1024) they hold; beside it, for whole GPUs, the smallest
/// tensor-parallel size that holds the whole context (see `suggestion`).
pub fn hint(p: &Profile, memory: f64, per_node: u32) -> String {
    let wider = (!p.cpu_only() && p.mig_profile.is_none()).then(|| suggestion(p, memory, per_node));
    let len = match (p.memory.weight_bytes, &p.memory.sizing) {
        (Some(weights), Some(s)) => {
            let (tp, pp) = crate::placement::memory_parallel(p);
            s.largest_len(weights, tp, pp, s.utilization * memory).map(|len| (len, s.max_model_len))
        }
        _ => None,
    };
    match (len, wider) {
        (Some((len, want)), Some(w)) if w == NO_SIZE => {
            format!("max_model_len = {len} would fit; no number of these GPUs would hold {want}")
        }
        (Some((len, _)), Some(w)) => format!("max_model_len = {len} would fit, or {w}"),
        (Some((len, _)), None) => format!("max_model_len = {len} would fit"),
        (None, Some(w)) => w,
        (None, None) => "not even 1024 tokens would fit".to_string(),
    }
}

const NO_SIZE: &str = "no number of these GPUs would hold it";

/// What would fit, among the sizes tensor parallelism can use: the smallest
/// power of two for `gpus_per_node`, up to the most GPUs of the class on one
/// node; else that many (rounded down to a power of two) on the fewest
/// `nodes`. Never "gpus_per_node = 3": no engine splits a model three ways
/// across the attention heads of a typical model.
fn suggestion(p: &Profile, memory: f64, per_node: u32) -> String {
    let fits = |gpus: u32, nodes: u32| fits_on(p, memory, gpus, nodes);
    let widest = tp_sizes(per_node).last().unwrap_or(1);
    if let Some(g) = tp_sizes(per_node).find(|&g| fits(g, p.nodes)) {
        return format!("gpus_per_node = {g} would fit");
    }
    match (2..=MAX_NODES as u32).find(|&n| fits(widest, n)) {
        Some(n) => format!("nodes = {n} with gpus_per_node = {widest} would fit"),
        None => NO_SIZE.to_string(),
    }
}

/// 1, 2, 4, ... up to `most` (and the catalog's ceiling).
fn tp_sizes(most: u32) -> impl Iterator<Item = u32> + Clone {
    let most = most.clamp(1, MAX_GPUS_PER_NODE as u32);
    std::iter::successors(Some(1u32), |g| g.checked_mul(2)).take_while(move |&g| g <= most)
}

/// Fit diagnostics for every GPU profile of a model that gives its size.
pub fn checks(cat: &Catalog, inv: Option<&Inventory>) -> Vec<Diag> {
    let memory = smallest_per_class(inv);
    let per_node = most_per_node(inv);
    let mut out = Vec::new();
    for m in &cat.models {
        for p in &m.profiles {
            let Some(weights) = p.memory.weight_bytes else { continue };
            let Some(class) = p.gpu_class.as_deref() else { continue };
            let Some(mem) = class_memory(class, &memory) else { continue };
            out.extend(one(cat, m, p, weights, mem, per_node.get(class).copied().unwrap_or(8)));
        }
    }
    out
}

/// Per-GPU sizes are binary (GiB, as placement's reasons say them); the
/// weights are decimal GB, as `weights_gb` and the model hubs give them.
fn one(
    cat: &Catalog,
    m: &Model,
    p: &Profile,
    weights: f64,
    (mem, from_name): (f64, Option<u32>),
    per_node: u32,
) -> Option<Diag> {
    let gpus = p.gpus_per_node * p.nodes;
    let share = weights / f64::from(gpus);
    let need = share * NEED_FACTOR;
    let gpu_word = if gpus == 1 { "GPU" } else { "GPUs" };
    let class = p.gpu_class.as_deref().unwrap_or_default();
    let hint = hint(p, mem, per_node);
    let gpu_mem = match from_name {
        Some(gb) => format!("{:.1} GiB ({gb} GB, from the class name)", mem / GIB),
        None => format!("{:.1} GiB", mem / GIB),
    };
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
        .help(format!("{:.1} GiB of weights per GPU against {gpu_mem}; {hint}", share / GIB))
    } else if let Some(s) = &p.memory.sizing {
        let (tp, pp) = crate::placement::memory_parallel(p);
        let parts = s.parts(weights, tp, pp);
        if parts.total() <= s.utilization * mem {
            return None;
        }
        Diag::warning(
            Code::FitMargins,
            format!(
                "`{}` does not fit on {gpus} {class} {gpu_word} at {} tokens x {} (profile `{}`)",
                m.name, s.max_model_len, s.max_num_seqs, p.name
            ),
        )
        .at(&cat.src, p.name_span, "weights fit, the KV cache does not")
        .help(format!(
            "{parts} = {:.1} GiB per GPU, within {} of each GPU's {gpu_mem} ({:.1} GiB); {hint}",
            parts.total() / GIB,
            s.utilization,
            s.utilization * mem / GIB
        ))
    } else if need > USABLE * mem {
        Diag::warning(
            Code::FitMargins,
            format!("`{}` fits on {gpus} {class} {gpu_word} with no room to serve it (profile `{}`)", m.name, p.name),
        )
        .at(&cat.src, p.name_span, "weights fit, the rest does not")
        .help(format!(
            "a replica needs 1.2 x its weights, {:.1} GiB per GPU, within 0.9 of each GPU's {gpu_mem}; {hint}",
            need / GIB
        ))
    } else {
        return None;
    };
    Some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_memory_from_the_fleet_else_the_name() {
        let fleet = [("h100-80gb-hbm3", 81559u64)].into();
        assert_eq!(class_memory("h100-80gb-hbm3", &fleet), Some((81559.0 * MIB, None)));
        assert_eq!(class_memory("a100-sxm4-40gb", &fleet), Some((40e9, Some(40))));
        assert_eq!(class_memory("l40s", &fleet), None);
    }

    #[test]
    fn tensor_parallel_sizes_are_powers_of_two_up_to_the_widest_node() {
        assert_eq!(tp_sizes(8).collect::<Vec<_>>(), [1, 2, 4, 8]);
        assert_eq!(tp_sizes(6).collect::<Vec<_>>(), [1, 2, 4]);
        assert_eq!(tp_sizes(1).collect::<Vec<_>>(), [1]);
        assert_eq!(tp_sizes(0).collect::<Vec<_>>(), [1]);
        assert_eq!(tp_sizes(1000).last(), Some(64));
    }
}
