//! The map: a plan drawn on its fleet, as one HTML page (docs/map.md).
//!
//! A fleet of 10,000 nodes has 80,000 GPUs. Written out as elements, with
//! a tooltip each, the page would be tens of megabytes and slow to parse;
//! so the page carries the fleet as compact JSON and a small script draws
//! it when the page opens, into elements with the data attributes the
//! docs name (tests and other tools read those). What is small and read
//! first (the summary, the legend, the replicas left unplaced) is written
//! as plain HTML, readable with scripts off.
//!
//! The page is self-contained: no script, style, font or image comes from
//! elsewhere, so it opens from a file on a machine with no network.

mod colors;
pub mod extras;
mod html;

use std::collections::{HashMap, HashSet};

use crate::diag::Diag;
use crate::inventory::{FabricKind, Inventory};
use crate::plan::{Kind, Plan};
use crate::usage::{self, Use};

pub use extras::Extras;

/// What the page is drawn from: a plan read back (`plan::read`), its
/// extras, and the inventory it was made on.
pub struct Input<'a> {
    pub plan: &'a Plan,
    pub extras: &'a Extras,
    pub inv: &'a Inventory,
    /// Shown as the page's title: the plan's file name.
    pub title: &'a str,
}

/// The page, or why the plan cannot be drawn on this inventory (one that
/// changed since the plan was made: the map would show GPUs wrongly).
pub fn page(input: &Input<'_>) -> Result<String, Vec<Diag>> {
    let errors = crate::render::check::stale(input.plan, input.inv);
    if !errors.is_empty() {
        return Err(errors);
    }
    let fleet = Fleet::build(input);
    Ok(html::page(input, &fleet))
}

/// The fleet as the page draws it.
pub(crate) struct Fleet<'a> {
    pub usage: usage::Usage<'a>,
    pub classes: Vec<usage::ClassUse<'a>>,
    /// Every model named, the plan's first (catalog order), then those
    /// only other workloads' allocations name.
    pub models: Vec<&'a str>,
    /// Per model: its colour, for the models of the plan only.
    pub colors: Vec<Option<String>>,
    /// Sections in order: (kind, name, node indices by id).
    pub pools: Vec<(&'static str, &'a str, Vec<u32>)>,
    /// Per node: CPUs (millicores) and memory (MiB) requested, with this
    /// plan's replicas.
    pub requested: Vec<(u64, u64)>,
}

impl<'a> Fleet<'a> {
    fn build(input: &Input<'a>) -> Fleet<'a> {
        let (plan, inv) = (input.plan, input.inv);
        let node_index = |id: &str| inv.nodes.binary_search_by(|n| n.id.as_str().cmp(id)).ok().map(|i| i as u32);
        let existing: HashSet<(&str, u32)> =
            plan.entries.iter().filter(|e| e.kind == Kind::Existing).map(|e| (e.model.as_str(), e.replica)).collect();
        let mut requested: Vec<(u64, u64)> = inv
            .nodes
            .iter()
            .map(|n| {
                let cpus = n.allocations.iter().filter_map(|a| a.cpus).map(crate::units::millis).sum();
                (cpus, n.allocations.iter().filter_map(|a| a.memory_mb).sum())
            })
            .collect();
        let mut new = Vec::new();
        for e in plan.entries.iter().filter(|e| e.kind == Kind::Placed) {
            let mut at = Vec::new();
            for a in &e.nodes {
                // `stale` has checked every node is in the inventory.
                let Some(ni) = node_index(&a.node) else { continue };
                let r = &mut requested[ni as usize];
                r.0 += a.cpus_millis.unwrap_or(0);
                r.1 += a.memory_mb.unwrap_or(0);
                at.push((ni, a.gpus.clone(), a.mig_devices.clone()));
            }
            new.push(usage::New {
                model: &e.model,
                replica: e.replica,
                profile: e.profile.as_deref(),
                engine: e.engine.as_deref(),
                at,
            });
        }
        let mut usage = usage::of(inv, new, &|m, r| existing.contains(&(m, r)));
        // What the plan says of a running replica that its allocation does
        // not: the profile, and the engine other replicas of that profile use.
        let profiles: HashMap<(&str, u32), &str> =
            plan.entries.iter().filter_map(|e| Some(((e.model.as_str(), e.replica), e.profile.as_deref()?))).collect();
        let engines: HashMap<(&str, &str), &str> = plan
            .entries
            .iter()
            .filter_map(|e| Some(((e.model.as_str(), e.profile.as_deref()?), e.engine.as_deref()?)))
            .collect();
        for h in &mut usage.holders {
            if h.profile.is_none() && h.state != Use::Held {
                h.profile = profiles.get(&(h.model, h.replica)).copied();
            }
            if h.engine.is_none() {
                h.engine = h.profile.and_then(|p| engines.get(&(h.model, p)).copied());
            }
        }
        let classes = usage::by_class(inv, &usage, &|_| true);
        let mut models: Vec<&'a str> = Vec::new();
        let mut seen: HashSet<&str> = HashSet::new();
        let ours =
            plan.entries.iter().map(|e| e.model.as_str()).chain(input.extras.unplaced.iter().map(|u| u.model.as_str()));
        for m in ours {
            if seen.insert(m) {
                models.push(m);
            }
        }
        let own = models.len();
        for h in &usage.holders {
            if seen.insert(h.model) {
                models.push(h.model);
            }
        }
        let palette = colors::assign(&models[..own]);
        let colors = (0..models.len()).map(|i| palette.get(i).cloned()).collect();
        Fleet { usage, classes, models, colors, pools: pools(inv), requested }
    }
}

/// Each node in one section: its NVLink domain, else its first fabric by
/// name, else the nodes with no fabric. Sections: NVLink domains, then
/// fabrics, each by name, then the rest.
fn pools(inv: &Inventory) -> Vec<(&'static str, &str, Vec<u32>)> {
    let mut by: std::collections::BTreeMap<(u8, &str), Vec<u32>> = std::collections::BTreeMap::new();
    for (i, n) in inv.nodes.iter().enumerate() {
        let nvlink = n.fabrics.iter().filter(|f| f.kind == FabricKind::Nvlink).map(|f| f.name.as_str()).min();
        let other = n.fabrics.iter().map(|f| f.name.as_str()).min();
        let key = match (nvlink, other) {
            (Some(f), _) => (0, f),
            (None, Some(f)) => (1, f),
            (None, None) => (2, ""),
        };
        by.entry(key).or_default().push(i as u32);
    }
    by.into_iter().map(|((k, name), nodes)| (["nvlink", "fabric", "none"][k as usize], name, nodes)).collect()
}

/// Ascending indices as runs: "0-3,6".
pub(crate) fn runs(v: &[u32]) -> String {
    let mut sorted = v.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        while i + 1 < sorted.len() && sorted[i + 1] == sorted[i] + 1 {
            i += 1;
        }
        parts.push(if sorted[i] == start { start.to_string() } else { format!("{start}-{}", sorted[i]) });
        i += 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests;
