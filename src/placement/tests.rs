//! Placement invariants over random fleets and catalogs, and the fast path
//! held to the reference path's exact answers.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt::Write as _;

use proptest::prelude::*;

use super::{Decision, Mode, Options, plan};
use crate::catalog::Catalog;
use crate::diag::source;
use crate::inventory::Inventory;
use crate::report::Names;

const CLASSES: &[&str] = &["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA L40S"];
const ENGINES: &[&str] = &["vllm", "sglang", "llama.cpp"];
const FABRICS: &[&str] = &["ib-a", "ib-b", "ib-c"];

#[derive(Debug, Clone)]
struct GenNode {
    state: u8,
    zone: u8,
    class: usize,
    gpus: u8,
    unhealthy: u8,
    used: u8,
    peers: u8,
    /// Fabric, and its adapters: 0 some, 1 none (`[]`), 2 not reported.
    fabrics: Vec<(usize, u8)>,
    engines: Option<Vec<usize>>,
    /// Discovered by llmgw: its (possibly empty) engine list is complete.
    discovered: bool,
    memory_gb: Option<u32>,
    weights: Option<Vec<u8>>,
    disk_gb: Option<u32>,
    /// Existing replicas of catalog models: (model, replica).
    runs: Vec<(u8, u8)>,
    cpu_allocs: u8,
    /// GPU 0 in MIG mode: 0 no, 1 three 1g.10gb devices, 2 one 3g.40gb.
    mig: u8,
    /// How many of those devices an existing allocation holds.
    mig_held: u8,
}

#[derive(Debug, Clone)]
struct GenProfile {
    engine: usize,
    class: Option<usize>,
    gpus: u8,
    nodes: u8,
    priority: i8,
    zone: Option<u8>,
    memory_gb: u32,
    disk_gb: u32,
    /// A MIG profile: 0 1g.10gb, 1 3g.40gb.
    mig: Option<u8>,
}

const MIG_PROFILES: &[(&str, u64)] = &[("1g.10gb", 9856), ("3g.40gb", 40192)];

#[derive(Debug, Clone)]
struct GenModel {
    /// weights_gb, when the model gives its size.
    size_gb: Option<u16>,
    replicas: u8,
    /// `replicas_per_node`; 1 (the default, left out of the file) unless a
    /// test asks for more.
    per_node: u8,
    source: Option<u8>,
    profiles: Vec<GenProfile>,
}

fn node_strategy() -> impl Strategy<Value = GenNode> {
    (
        (
            0u8..10,
            0u8..3,
            prop::sample::select(vec![0usize, 0, 0, 1, 2]),
            0u8..9,
            prop::sample::select(vec![0u8, 0, 0, 1, 2]),
            prop::sample::select(vec![0u8, 0, 1, 2, 3, 5, 8]),
            0u8..5,
        ),
        prop::collection::vec((0..FABRICS.len(), prop::sample::select(vec![0u8, 0, 0, 0, 0, 0, 0, 1, 2, 2])), 0..3),
        (prop::option::weighted(0.7, prop::collection::vec(0..ENGINES.len(), 0..4)), prop::bool::weighted(0.3)),
        prop::option::of(0u32..2048),
        prop::option::weighted(0.7, prop::collection::vec(0u8..3, 0..3)),
        prop::option::of(0u32..1000),
        prop::collection::vec((0u8..4, 0u8..4), 0..2),
        (0u8..3, prop::sample::select(vec![0u8, 0, 1, 2]), prop::sample::select(vec![0u8, 0, 0, 1, 2])),
    )
        .prop_map(
            |(
                (state, zone, class, gpus, unhealthy, used, peers),
                fabrics,
                (engines, discovered),
                memory_gb,
                weights,
                disk_gb,
                runs,
                (cpu_allocs, mig, mig_held),
            )| GenNode {
                mig,
                mig_held,
                discovered: discovered && engines.is_some(),
                state,
                zone,
                class,
                gpus,
                unhealthy,
                used,
                peers,
                fabrics,
                engines,
                memory_gb,
                weights,
                disk_gb,
                runs,
                cpu_allocs,
            },
        )
}

fn profile_strategy() -> impl Strategy<Value = GenProfile> {
    (
        0..ENGINES.len(),
        prop::option::weighted(0.85, prop::sample::select(vec![0usize, 0, 0, 1, 2])),
        prop::sample::select(vec![1u8, 1, 2, 2, 3, 4, 8]),
        prop::sample::select(vec![1u8, 1, 1, 2, 3]),
        -2i8..3,
        prop::option::weighted(0.3, 0u8..3),
        prop::sample::select(vec![0u32, 0, 512, 1024]),
        (prop::sample::select(vec![0u32, 0, 100, 500]), prop::option::weighted(0.2, 0u8..2)),
    )
        .prop_map(|(engine, class, gpus, nodes, priority, zone, memory_gb, (disk_gb, mig))| GenProfile {
            // A GPU-only engine needs a class; keep the catalog valid. A MIG
            // profile is one device: one GPU, one node, a class.
            // llama.cpp serves from one node: a multi-node profile uses vLLM.
            engine: match (class.is_none() && mig.is_none(), engine == 2 && nodes > 1) {
                (true, _) => 2,
                (false, true) => 0,
                (false, false) => engine,
            },
            class: if mig.is_some() { Some(class.unwrap_or(1)) } else { class },
            gpus: if mig.is_some() { 1 } else { gpus },
            nodes: if mig.is_some() || (class.is_none() && mig.is_none()) { 1 } else { nodes },
            mig,
            priority,
            zone,
            memory_gb,
            disk_gb,
        })
}

fn model_strategy() -> impl Strategy<Value = GenModel> {
    (
        0u8..6,
        prop::option::weighted(0.7, 0u8..3),
        prop::collection::vec(profile_strategy(), 0..4),
        prop::option::weighted(0.4, prop::sample::select(vec![8u16, 60, 140, 300, 800])),
    )
        .prop_map(|(replicas, source, profiles, size_gb)| GenModel {
            size_gb,
            replicas,
            per_node: 1,
            source,
            profiles,
        })
}

/// Models that may pack several replicas onto one node, with more replicas
/// than nodes would take one at a time.
fn packing_model_strategy() -> impl Strategy<Value = GenModel> {
    (model_strategy(), prop::sample::select(vec![1u8, 2, 2, 3, 4]), 0u8..12)
        .prop_map(|(m, per_node, replicas)| GenModel { per_node, replicas, ..m })
}

fn inventory_text(nodes: &[GenNode], order: &[usize]) -> String {
    let mut s = String::new();
    for &i in order {
        let n = &nodes[i];
        let state = ["ready", "ready", "ready", "ready", "ready", "ready", "ready", "cordoned", "draining", "down"]
            [n.state as usize];
        let _ = writeln!(s, "[[node]]\nid = \"n{i:03}\"\nstate = \"{state}\"\nlabels = {{ zone = \"z{}\" }}", n.zone);
        if n.discovered {
            let _ = writeln!(s, "discovered_by = \"llmgw test\"");
        }
        if let Some(e) = &n.engines {
            let list: Vec<String> =
                e.iter().collect::<BTreeSet<_>>().iter().map(|&&e| format!("\"{}\" = \"\"", ENGINES[e])).collect();
            let _ = writeln!(s, "engines = {{ {} }}", list.join(", "));
        }
        if let Some(m) = n.memory_gb {
            let _ = writeln!(s, "memory_total_mb = {}", u64::from(m) * 1024 + 17);
        }
        if let Some(w) = &n.weights {
            let list: Vec<String> = w.iter().collect::<BTreeSet<_>>().iter().map(|w| format!("\"org/w{w}\"")).collect();
            let _ = writeln!(s, "weights = [{}]", list.join(", "));
        }
        if let Some(d) = n.disk_gb {
            let _ = writeln!(
                s,
                "disk = {{ path = \"/m\", free_bytes = {}, total_bytes = {} }}",
                u64::from(d) << 30,
                2u64 << 40
            );
        }
        // GPUs in reverse index order: the loader must sort them.
        for g in (0..n.gpus).rev() {
            let peers: Vec<u8> = match n.peers {
                0 => vec![],
                1 => (0..n.gpus).filter(|&p| p != g).collect(),
                2 => vec![g ^ 1].into_iter().filter(|&p| p < n.gpus).collect(),
                3 => vec![g ^ 1, g ^ 1].into_iter().filter(|&p| p < n.gpus).collect(),
                _ => (0..n.gpus)
                    .rev()
                    .filter(|&p| p != g && p % 3 != 0)
                    .chain([g ^ 1].into_iter().filter(|&p| p < n.gpus))
                    .collect(),
            };
            // Every third node mixes in a GPU of the next class.
            let class = if i % 3 == 0 && g == 1 { (n.class + 1) % CLASSES.len() } else { n.class };
            let mig = g == 0 && n.mig > 0;
            let _ = writeln!(
                s,
                "[[node.gpu]]\nindex = {g}\nname = \"{}\"\nnvlink_peers = {:?}\nhealthy = {}\nmemory_mb = {}\nmig = {mig}",
                CLASSES[class],
                if mig { Vec::new() } else { peers },
                g >= n.unhealthy,
                // Every fifth node does not report its GPU memory.
                if i % 5 == 4 { 0 } else { [81559, 81920, 46068][class] }
            );
            if mig {
                let (profile, memory) = MIG_PROFILES[usize::from(n.mig - 1)];
                for m in 0..(5 - 2 * n.mig) {
                    let memory = if i % 5 == 4 { 0 } else { memory };
                    let _ = writeln!(
                        s,
                        "[[node.gpu.mig_device]]\nindex = {m}\nprofile = \"{profile}\"\nmemory_mb = {memory}"
                    );
                }
            }
        }
        for (f, adapters) in n.fabrics.iter().copied().collect::<BTreeMap<usize, u8>>() {
            let _ = writeln!(s, "[[node.fabric]]\nname = \"{}\"", FABRICS[f]);
            match adapters {
                0 => s.push_str("hcas = [\"mlx5_0\"]\n"),
                1 => s.push_str("hcas = []\n"),
                _ => {}
            }
        }
        let used = n.used.min(n.gpus);
        if used > 0 {
            let _ = writeln!(
                s,
                "[[node.allocation]]\nmodel = \"other\"\nreplica = {i}\ngpus = {:?}",
                (0..used).collect::<Vec<_>>()
            );
        }
        for (m, r) in n.runs.iter().collect::<BTreeSet<_>>() {
            let _ = writeln!(s, "[[node.allocation]]\nmodel = \"m{m}\"\nreplica = {r}\ngpus = []");
        }
        if n.mig > 0 && n.gpus > 0 && n.mig_held > 0 {
            let held: Vec<u8> = (0..n.mig_held.min(5 - 2 * n.mig)).collect();
            let _ = writeln!(
                s,
                "[[node.allocation]]\nmodel = \"mig-other\"\nreplica = {i}\ngpus = [0]\nmig_devices = {held:?}"
            );
        }
        for c in 0..n.cpu_allocs {
            let _ = writeln!(s, "[[node.allocation]]\nmodel = \"cpu-other\"\nreplica = {c}\ngpus = []");
        }
    }
    s
}

fn catalog_text(models: &[GenModel]) -> String {
    let mut s = String::new();
    for (mi, m) in models.iter().enumerate() {
        let _ = writeln!(s, "[[model]]\nname = \"m{mi}\"\nreplicas = {}", m.replicas);
        if m.per_node != 1 {
            let _ = writeln!(s, "replicas_per_node = {}", m.per_node);
        }
        if let Some(gb) = m.size_gb {
            let _ = writeln!(s, "weights_gb = {gb}");
        }
        if let Some(src) = m.source {
            let _ = writeln!(s, "source = \"org/w{src}\"");
        }
        for (pi, p) in m.profiles.iter().enumerate() {
            let _ = writeln!(
                s,
                "[[model.profile]]\nname = \"p{pi}\"\nengine = \"{}\"\ngpus_per_node = {}\nnodes = {}\npriority = {}\nmin_memory_gb = {}\nmin_disk_gb = {}",
                ENGINES[p.engine], p.gpus, p.nodes, p.priority, p.memory_gb, p.disk_gb
            );
            if let Some(c) = p.class {
                let _ = writeln!(s, "gpu_class = \"{}\"", CLASSES[c]);
            }
            if let Some(z) = p.zone {
                let _ = writeln!(s, "node_selector = {{ zone = \"z{z}\" }}");
            }
            if let Some(m) = p.mig {
                let _ = writeln!(s, "mig_profile = \"{}\"", MIG_PROFILES[usize::from(m)].0);
            }
        }
    }
    s
}

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
    crate::report::place::json(&mut out, &names, &p, crate::report::place::Rejections::Full, None).unwrap();
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
    let p = plan(cat, inv, Options::default());
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
    grouped_counts_add_up(cat, inv, &p)
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
        for g in crate::report::reasons::grouped(&names, *model, &why.rejections) {
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
        crate::report::place::json(&mut out, &names, &p, form, None).unwrap();
        serde_json::from_slice::<serde_json::Value>(&out).unwrap()
    };
    let full = doc(crate::report::place::Rejections::Full);
    let per_replica: Vec<_> = full["unplaced"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| (u["model"].clone(), u["replica"].clone(), u["closest"].clone()))
        .collect();
    for form in [crate::report::place::Rejections::Grouped, crate::report::place::Rejections::None] {
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
        let explained: Vec<_> = ex.attempts.iter().map(|a| (a.replica, a.placement.clone())).collect();
        prop_assert_eq!(decided, explained);
        for a in &ex.attempts {
            if a.placement.is_none() {
                let rej = full.decisions.iter().find_map(|d| match d {
                    Decision::Unplaced { model, replica, why } if *model == mi as u32 && *replica == a.replica => {
                        Some(&why.rejections)
                    }
                    _ => None,
                });
                prop_assert_eq!(rej, Some(&a.rejections));
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
