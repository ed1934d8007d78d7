//! Placement invariants over random fleets and catalogs, and the fast path
//! held to the reference path's exact answers.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use proptest::prelude::*;

use super::{Decision, Mode, Options, plan};
use crate::catalog::Catalog;
use crate::diag::source;
use crate::inventory::Inventory;
use crate::wording::Names;

mod brute;
mod generate;
mod memory;
mod nvlink;
mod pack;
use generate::*;

fn load(catalog: &str, inventory: &str) -> (Catalog, Inventory) {
    let (cat, diags) = crate::catalog::check(&source("c.toml", catalog.to_string()));
    let cat = cat.unwrap_or_else(|| panic!("generated catalog invalid: {diags:?}\n{catalog}"));
    let nodes = crate::load::inventory_file(&source("i.toml", inventory.to_string()))
        .unwrap_or_else(|d| panic!("generated inventory invalid: {d:?}\n{inventory}"));
    (cat, crate::inventory::merge(vec![nodes]).unwrap())
}

fn place_json(cat: &Catalog, inv: &Inventory, mode: Mode) -> String {
    let p = plan(cat, inv, Options { mode, ..Options::default() });
    let fleet = super::Fleet::new(inv);
    let names = Names::new(cat, &fleet);
    let mut out = Vec::new();
    crate::plan::write::json(&mut out, &names, &p, crate::plan::write::Rejections::Full, None).unwrap();
    String::from_utf8(out).unwrap()
}

/// Replicas of each catalog model per (model, node) that the inventory
/// runs: surplus ones too, a multi-node one once on each of its nodes.
fn running_per_node(cat: &Catalog, inv: &Inventory) -> BTreeMap<(u32, u32), u32> {
    let mut hosts = BTreeMap::new();
    for (mi, m) in cat.models.iter().enumerate() {
        for (ni, n) in inv.nodes.iter().enumerate() {
            let held: BTreeSet<u32> = n.allocations.iter().filter(|a| a.model == m.name).map(|a| a.replica).collect();
            hosts.insert((mi as u32, ni as u32), held.len() as u32);
        }
    }
    hosts
}

fn check_invariants(cat: &Catalog, inv: &Inventory) -> Result<(), TestCaseError> {
    check_plan(cat, inv, &plan(cat, inv, Options::default()))
}

/// Every rule a plan must keep, whichever way it was made.
fn check_plan(cat: &Catalog, inv: &Inventory, p: &super::Plan) -> Result<(), TestCaseError> {
    let mut taken: HashSet<(usize, u32)> = HashSet::new();
    let mut migs_taken: HashSet<(usize, u32, u32)> = HashSet::new();
    for (ni, n) in inv.nodes.iter().enumerate() {
        for a in &n.allocations {
            if a.mig_devices.is_empty() {
                taken.extend(a.gpus.iter().map(|&g| (ni, g)));
            } else {
                migs_taken.extend(a.mig_devices.iter().map(|&m| (ni, a.gpus[0], m)));
            }
        }
    }
    let mut hosts = running_per_node(cat, inv);
    let mut host = |model: u32, node: u32| -> Result<(), TestCaseError> {
        let held = hosts.entry((model, node)).or_default();
        let k = cat.models[model as usize].replicas_per_node;
        prop_assert!(*held < k, "a node already holding {} replicas of a model took another (k = {})", held, k);
        *held += 1;
        Ok(())
    };
    for d in &p.decisions {
        let Decision::Placed(pl) = d else { continue };
        let model = &cat.models[pl.model as usize];
        let prof = &model.profiles[pl.profile as usize];
        prop_assert_eq!(pl.nodes.len() as u32, prof.nodes);
        let mut fabrics_seen = BTreeSet::new();
        for a in &pl.nodes {
            let n = &inv.nodes[a.node as usize];
            prop_assert!(n.state.schedulable(), "placed on {} which is {:?}", n.id, n.state);
            if n.reports_engines() {
                prop_assert!(n.engine_names().any(|e| e == prof.engine.name), "engine not on {}", n.id);
            }
            for (k, v) in &prof.node_selector {
                prop_assert_eq!(n.labels.get(k), Some(v));
            }
            prop_assert_eq!(a.gpus.len() as u32, prof.gpus_per_node);
            match &prof.mig_profile {
                // One free MIG device of the profile, on a MIG GPU of the class.
                Some(mig) => {
                    let gpu = &n.gpus[n.gpu_position(a.gpus[0]).expect("a GPU of the node")];
                    prop_assert!(gpu.in_mig_mode() && gpu.healthy);
                    prop_assert_eq!(Some(&gpu.class), prof.gpu_class.as_ref(), "class mixing");
                    let [m] = a.mig_devices[..] else { return Err(TestCaseError::fail("not one MIG device")) };
                    prop_assert!(gpu.mig_devices.iter().any(|d| d.index == m && &d.profile == mig));
                    prop_assert!(migs_taken.insert((a.node as usize, gpu.index, m)), "MIG device held twice");
                    host(pl.model, a.node)?;
                    continue;
                }
                None => prop_assert!(a.mig_devices.is_empty()),
            }
            // Memory fit: the share per GPU (or of the host) within 0.9 of it.
            if let Some(w) = model.weight_bytes {
                let mib = 1024.0 * 1024.0;
                let have_mb = match &prof.gpu_class {
                    None => n.memory_total_mb,
                    Some(c) => n.gpus.iter().filter(|g| &g.class == c).map(|g| g.memory_mb).min().unwrap_or(0),
                };
                let share = if prof.gpu_class.is_none() { 1 } else { prof.gpus_per_node * prof.nodes };
                let need = w * 1.2 / f64::from(share);
                prop_assert!(
                    have_mb == 0 || need <= 0.9 * have_mb as f64 * mib,
                    "{} does not fit on {}",
                    model.name,
                    n.id
                );
            }
            for &g in &a.gpus {
                let gpu = &n.gpus[n.gpu_position(g).expect("a GPU of the node")];
                prop_assert!(gpu.healthy, "unhealthy GPU chosen");
                prop_assert!(prof.engine.runs_on(gpu.vendor), "{} placed on {:?} GPUs", prof.engine.name, gpu.vendor);
                prop_assert!(!gpu.in_mig_mode(), "a GPU in MIG mode placed whole");
                prop_assert_eq!(Some(&gpu.class), prof.gpu_class.as_ref(), "class mixing");
                prop_assert!(taken.insert((a.node as usize, g)), "GPU {} of {} allocated twice", g, n.id);
            }
            host(pl.model, a.node)?;
            if let Some(f) = pl.fabric {
                let fabric = super::Fleet::new(inv).fabrics[f as usize].to_string();
                let fab = n.fabric(&fabric);
                let adapters = |f: &crate::inventory::Fabric| f.hcas.as_ref().is_none_or(|h| !h.is_empty());
                prop_assert!(fab.is_some_and(adapters), "node not on the replica's fabric, or no adapters on it");
                fabrics_seen.insert(fabric);
            }
        }
        prop_assert!(fabrics_seen.len() <= 1, "replica across fabrics");
        prop_assert_eq!(pl.fabric.is_some(), prof.nodes > 1);
    }
    let s = &p.summary;
    prop_assert_eq!(s.placed + s.unplaced, s.wanted - s.existing);
    whole_nodes_hold(cat, inv, p)?;
    grouped_counts_add_up(cat, inv, p)
}

/// CPUs, memory and taints: no node is given more CPUs or memory than it
/// had free, a profile's explicit request is what it gets, and no replica
/// lands on a taint it does not tolerate.
fn whole_nodes_hold(cat: &Catalog, inv: &Inventory, p: &super::Plan) -> Result<(), TestCaseError> {
    let mut given: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    for d in &p.decisions {
        let Decision::Placed(pl) = d else { continue };
        let prof = &cat.models[pl.model as usize].profiles[pl.profile as usize];
        for a in &pl.nodes {
            let n = &inv.nodes[a.node as usize];
            prop_assert_eq!(a.cpus_millis.is_some(), n.cpus.is_some());
            prop_assert_eq!(a.memory_mb.is_some(), n.memory_schedulable_mb() > 0 || n.memory_allocatable_mb.is_some());
            if let (Some(c), Some(want)) = (a.cpus_millis, prof.serving.cpus) {
                prop_assert_eq!(c, u64::from(want) * 1000, "explicit cpus not asked as written");
            }
            if let (Some(m), Some(want)) = (a.memory_mb, prof.serving.memory_gb) {
                prop_assert_eq!(m, want * 1024, "explicit memory not asked as written");
            }
            if let Some(c) = a.cpus_millis {
                prop_assert!(c >= 1000 && c % 1000 == 0, "{} CPUs is not a whole number of at least one", c);
            }
            let e = given.entry(a.node).or_default();
            e.0 += a.cpus_millis.unwrap_or(0);
            e.1 += a.memory_mb.unwrap_or(0);
            // The implicit toleration is for the resource its GPUs are asked as.
            let vendor = a.gpus.first().and_then(|&g| n.gpu_position(g)).map(|i| n.gpus[i].vendor.resource());
            for (text, t) in n.repelling_taints() {
                prop_assert!(
                    crate::taints::tolerated(&t, &prof.tolerations, vendor),
                    "{} placed on {} despite its taint {}",
                    prof.name,
                    n.id,
                    text
                );
            }
        }
    }
    for (node, (cpus, mem)) in given {
        let n = &inv.nodes[node as usize];
        let held_cpus: u64 = n.allocations.iter().filter_map(|a| a.cpus).map(crate::units::millis).sum();
        let held_mem: u64 = n.allocations.iter().filter_map(|a| a.memory_mb).sum();
        if let Some(total) = n.cpus {
            let free = crate::units::millis(total).saturating_sub(held_cpus);
            prop_assert!(cpus <= free, "{} given {} mCPUs with {} free", n.id, cpus, free);
        }
        let total = n.memory_allocatable_mb.unwrap_or(n.memory_total_mb);
        if total > 0 || n.memory_allocatable_mb.is_some() {
            let free = total.saturating_sub(held_mem);
            prop_assert!(mem <= free, "{} given {} MiB with {} free", n.id, mem, free);
        }
    }
    Ok(())
}

/// Grouped reasons: per profile and pool, the counts add up to the full
/// list's rejections there, and each group's nodes are its count.
fn grouped_counts_add_up(cat: &Catalog, inv: &Inventory, p: &super::Plan) -> Result<(), TestCaseError> {
    let fleet = super::Fleet::new(inv);
    let names = Names::new(cat, &fleet);
    for d in &p.decisions {
        let Decision::Unplaced { model, why, .. } = d else { continue };
        let mut full: BTreeMap<(u32, String), usize> = BTreeMap::new();
        for r in &why.rejections {
            let prof = names.profile(*model, r.profile);
            *full.entry((r.profile, names.pool(r.pool, prof))).or_default() += 1;
        }
        let mut grouped: BTreeMap<(u32, String), usize> = BTreeMap::new();
        for g in crate::plan::reasons::grouped(&names, *model, &why.rejections) {
            let pi = cat.models[*model as usize].profiles.iter().position(|q| q.name == g.profile).unwrap() as u32;
            prop_assert!(g.nodes.len() == g.count || (g.nodes.is_empty() && g.count == 1));
            *grouped.entry((pi, g.pool)).or_default() += g.count;
        }
        prop_assert_eq!(full, grouped);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn fast_matches_reference_and_invariants_hold(
        nodes in prop::collection::vec(node_strategy(), 0..24),
        models in prop::collection::vec(model_strategy(), 0..5),
        seed in any::<u64>(),
    ) {
        let order: Vec<usize> = (0..nodes.len()).collect();
        let (cat, inv) = load(&catalog_text(&models), &inventory_text(&nodes, &order));
        check_invariants(&cat, &inv)?;
        let fast = place_json(&cat, &inv, Mode::Fast);
        prop_assert_eq!(&fast, &place_json(&cat, &inv, Mode::Reference));
        prop_assert_eq!(&fast, &place_json(&cat, &inv, Mode::Fast), "two runs differ");

        // The same fleet written in another node order decides the same.
        let mut shuffled = order.clone();
        let mut x = seed;
        for i in (1..shuffled.len()).rev() {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            shuffled.swap(i, (x >> 33) as usize % (i + 1));
        }
        let (cat2, inv2) = load(&catalog_text(&models), &inventory_text(&nodes, &shuffled));
        prop_assert_eq!(&fast, &place_json(&cat2, &inv2, Mode::Fast));
    }

    /// A fleet that reports no CPUs, no memory and no taints places as it
    /// always did: the seed's JSON form (no `cpus`, no `memory_mb`), and a
    /// catalog's `cpus`, `memory_gb` and `tolerations` change nothing.
    #[test]
    fn fleets_without_whole_node_fields_place_as_before(
        nodes in prop::collection::vec(node_strategy(), 0..16),
        models in prop::collection::vec(model_strategy(), 0..4),
    ) {
        let bare: Vec<GenNode> = nodes
            .into_iter()
            .map(|n| GenNode { cpus: None, allocatable_gb: None, taints: Vec::new(), held: (0, 0), memory_gb: None, ..n })
            .collect();
        let plain: Vec<GenModel> = models
            .iter()
            .map(|m| GenModel {
                profiles: m
                    .profiles
                    .iter()
                    .map(|p| GenProfile { cpus: None, request_gb: None, tolerations: Vec::new(), ..p.clone() })
                    .collect(),
                ..m.clone()
            })
            .collect();
        let order: Vec<usize> = (0..bare.len()).collect();
        let (cat, inv) = load(&catalog_text(&models), &inventory_text(&bare, &order));
        let with_requests = place_json(&cat, &inv, Mode::Fast);
        prop_assert!(!with_requests.contains("\"cpus\"") && !with_requests.contains("\"memory_mb\""));
        let (plain_cat, inv) = load(&catalog_text(&plain), &inventory_text(&bare, &order));
        prop_assert_eq!(with_requests, place_json(&plain_cat, &inv, Mode::Reference));
    }

    /// `replicas_per_node` above 1: a node is avoided only once it holds
    /// that many replicas of the model; the fast path still decides what
    /// the reference path decides, and explain what place decided.
    #[test]
    fn fast_matches_reference_when_replicas_share_nodes(
        nodes in prop::collection::vec(node_strategy(), 0..16),
        models in prop::collection::vec(packing_model_strategy(), 1..4),
    ) {
        let order: Vec<usize> = (0..nodes.len()).collect();
        let (cat, inv) = load(&catalog_text(&models), &inventory_text(&nodes, &order));
        check_invariants(&cat, &inv)?;
        let fast = place_json(&cat, &inv, Mode::Fast);
        prop_assert_eq!(&fast, &place_json(&cat, &inv, Mode::Reference));
        explain_agrees(&cat, &inv)?;
        runs_expand_to_the_full_form(&cat, &inv)?;
    }
}

/// The grouped and none forms say a run of replicas once (`replica` to
/// `through`); expanded, they list the full form's replicas, each with its
/// closest misses, and entries next to each other never say the same thing
/// about consecutive replicas of one model.
fn runs_expand_to_the_full_form(cat: &Catalog, inv: &Inventory) -> Result<(), TestCaseError> {
    let p = plan(cat, inv, Options::default());
    let fleet = super::Fleet::new(inv);
    let names = Names::new(cat, &fleet);
    let doc = |form| {
        let mut out = Vec::new();
        crate::plan::write::json(&mut out, &names, &p, form, None).unwrap();
        serde_json::from_slice::<serde_json::Value>(&out).unwrap()
    };
    let full = doc(crate::plan::write::Rejections::Full);
    let per_replica: Vec<_> = full["unplaced"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| (u["model"].clone(), u["replica"].clone(), u["closest"].clone()))
        .collect();
    for form in [crate::plan::write::Rejections::Grouped, crate::plan::write::Rejections::None] {
        let v = doc(form);
        let entries = v["unplaced"].as_array().unwrap();
        let mut expanded = Vec::new();
        for (i, u) in entries.iter().enumerate() {
            let first = u["replica"].as_u64().unwrap();
            let last = u.get("through").map_or(first, |t| t.as_u64().unwrap());
            prop_assert!(u.get("through").is_none_or(|_| last > first));
            expanded.extend((first..=last).map(|r| (u["model"].clone(), serde_json::json!(r), u["closest"].clone())));
            if let Some(next) = entries.get(i + 1) {
                let same = next["model"] == u["model"]
                    && next["replica"].as_u64() == Some(last + 1)
                    && next.get("reasons") == u.get("reasons")
                    && next["closest"] == u["closest"];
                prop_assert!(!same, "a run split in two");
            }
        }
        prop_assert_eq!(&expanded, &per_replica);
    }
    Ok(())
}

/// For every model, the explained attempts decide what `place` decided,
/// and an unplaced replica's rejections are the ones place recorded.
fn explain_agrees(cat: &Catalog, inv: &Inventory) -> Result<(), TestCaseError> {
    let full = plan(cat, inv, Options::default());
    for mi in 0..cat.models.len() {
        let ex = plan(cat, inv, Options { explain: Some(mi), ..Options::default() });
        let decided: Vec<_> = full
            .decisions
            .iter()
            .filter_map(|d| match d {
                Decision::Placed(p) if p.model == mi as u32 => Some((p.replica, Some(p.clone()))),
                Decision::Unplaced { model, replica, .. } if *model == mi as u32 => Some((*replica, None)),
                _ => None,
            })
            .collect();
        // A run of unplaced replicas is one attempt, `replica..=through`.
        let explained: Vec<_> =
            ex.attempts.iter().flat_map(|a| (a.replica..=a.through).map(move |r| (r, a.placement.clone()))).collect();
        prop_assert_eq!(decided, explained);
        for a in &ex.attempts {
            prop_assert!(a.through == a.replica || a.placement.is_none());
            for r in (a.replica..=a.through).filter(|_| a.placement.is_none()) {
                let rej = full.decisions.iter().find_map(|d| match d {
                    Decision::Unplaced { model, replica, why } if *model == mi as u32 && *replica == r => {
                        Some(&why.rejections)
                    }
                    _ => None,
                });
                prop_assert_eq!(rej, Some(&a.rejections.to_vec()));
            }
        }
        // One replica asked about: the same attempt as when all are.
        for a in &ex.attempts {
            for r in a.replica..=a.through {
                let one = plan(cat, inv, Options { explain: Some(mi), explain_only: Some(r), ..Options::default() });
                let at = one.attempts.iter().find(|x| (x.replica..=x.through).contains(&r));
                prop_assert!(at.is_some(), "replica {} explained alone has no attempt", r);
                let at = at.unwrap();
                prop_assert_eq!(
                    (&at.placement, &at.rejections, &at.tallies),
                    (&a.placement, &a.rejections, &a.tallies)
                );
            }
        }
    }
    Ok(())
}

#[test]
fn explain_matches_the_plan_it_explains() {
    // For every model, the explained attempts decide what `place` decided.
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig { cases: 64, ..ProptestConfig::default() });
    let strategy = (prop::collection::vec(node_strategy(), 1..10), prop::collection::vec(model_strategy(), 1..4));
    runner
        .run(&strategy, |(nodes, models)| {
            let order: Vec<usize> = (0..nodes.len()).collect();
            let (cat, inv) = load(&catalog_text(&models), &inventory_text(&nodes, &order));
            explain_agrees(&cat, &inv)
        })
        .unwrap();
}
