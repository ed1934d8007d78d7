//! `--pack most` against the order it replaces and against every plan:
//! never fewer replicas than the order, every rule of a plan kept, never
//! more than the bound says any plan can place, and on fleets small enough
//! to try every plan, exactly the most there is.

use proptest::prelude::*;

use super::generate::*;
use super::{check_plan, load};
use crate::catalog::Catalog;
use crate::inventory::Inventory;
use crate::placement::pack::assemble::enter;
use crate::placement::{Decision, Options, Pack, Plan, plan, plan_with_fleet, profile_order, reference};

fn most(cat: &Catalog, inv: &Inventory) -> Plan {
    plan(cat, inv, Options { pack: Pack::Most, ..Options::default() })
}

/// No replica left unplaced could be placed on the fleet the plan leaves:
/// what `stranded` counts on.
fn maximal(cat: &Catalog, inv: &Inventory, pack: Pack) -> Result<(), TestCaseError> {
    let (p, mut fleet) = plan_with_fleet(cat, inv, Options { pack, ..Options::default() });
    let placed: Vec<_> = p
        .decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Placed(p) => Some(p.clone()),
            Decision::Unplaced { .. } => None,
        })
        .collect();
    for d in &p.decisions {
        let Decision::Unplaced { model, replica, .. } = d else { continue };
        let m = &cat.models[*model as usize];
        enter(&mut fleet, cat, *model, placed.iter());
        let compiled: Vec<_> = m.profiles.iter().map(|q| fleet.compile(q)).collect();
        let a = reference::attempt(&fleet, &compiled, &profile_order(&m.profiles), *model, *replica);
        prop_assert!(a.placement.is_none(), "{} replica {} fits after the plan ({:?})", m.name, replica, pack);
    }
    // Stranded GPUs are free GPUs.
    for (class, n) in &p.summary.stranded {
        let free: u64 = (0..fleet.node_count())
            .map(|node| {
                let c = fleet.classes.iter().position(|c| c == class).map(|c| c as u32);
                u64::from(fleet.free_of(node, c))
            })
            .sum();
        prop_assert!(*n > 0 && *n <= free, "{} {} stranded of {} free", n, class, free);
    }
    if p.summary.unplaced == 0 {
        prop_assert!(p.summary.stranded.is_empty(), "stranded GPUs with nothing left to place");
    }
    Ok(())
}

fn json(cat: &Catalog, inv: &Inventory, p: &Plan) -> String {
    let fleet = crate::placement::Fleet::new(inv);
    let names = crate::wording::Names::new(cat, &fleet);
    let mut out = Vec::new();
    crate::plan::write::json(&mut out, &names, p, crate::plan::write::Rejections::Full, None).unwrap();
    String::from_utf8(out).unwrap()
}

/// Nodes without CPUs, memory or taints: the packing program is exact
/// there, and the brute force needs no commit order.
fn bare(nodes: Vec<GenNode>) -> Vec<GenNode> {
    nodes
        .into_iter()
        .map(|n| GenNode { cpus: None, allocatable_gb: None, taints: Vec::new(), held: (0, 0), memory_gb: None, ..n })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn most_places_no_fewer_keeps_every_rule_and_stays_within_the_bound(
        nodes in prop::collection::vec(node_strategy(), 0..16),
        models in prop::collection::vec(packing_model_strategy(), 1..5),
    ) {
        let order: Vec<usize> = (0..nodes.len()).collect();
        let (cat, inv) = load(&catalog_text(&models), &inventory_text(&nodes, &order));
        let by_order = plan(&cat, &inv, Options::default());
        let packed = most(&cat, &inv);
        if std::env::var_os("LLMGW_PACK_STATS").is_some() {
            eprintln!("random: order {} most {} bound {}", by_order.summary.placed, packed.summary.placed, packed.summary.bound);
        }
        check_plan(&cat, &inv, &packed)?;
        prop_assert!(packed.summary.placed >= by_order.summary.placed, "most placed fewer than order");
        let best = packed.summary.placed.max(by_order.summary.placed);
        for p in [&by_order, &packed] {
            let s = &p.summary;
            prop_assert!(s.bound >= best, "bound {} below a plan of {}", s.bound, best);
            prop_assert!(s.bound <= s.placed + s.unplaced);
            if s.unplaced == 0 {
                prop_assert!(s.bound == s.placed && s.stranded.is_empty());
            }
        }
        maximal(&cat, &inv, Pack::Order)?;
        maximal(&cat, &inv, Pack::Most)?;
        prop_assert_eq!(json(&cat, &inv, &packed), json(&cat, &inv, &most(&cat, &inv)), "two runs differ");
    }

    #[test]
    fn most_places_exactly_the_most_on_tiny_fleets(
        nodes in prop::collection::vec(node_strategy(), 1..4),
        models in prop::collection::vec(packing_model_strategy(), 1..4),
    ) {
        let models: Vec<GenModel> = models
            .into_iter()
            .map(|m| GenModel { replicas: m.replicas % 4, profiles: m.profiles.into_iter().take(2).collect(), ..m })
            .collect();
        let order: Vec<usize> = (0..nodes.len()).collect();
        let (cat, inv) = load(&catalog_text(&models), &inventory_text(&bare(nodes), &order));
        let exact = super::brute::most(&cat, &inv);
        let by_order = plan(&cat, &inv, Options::default());
        prop_assert!(exact >= by_order.summary.placed, "the search missed the default plan");
        let packed = most(&cat, &inv);
        if std::env::var_os("LLMGW_PACK_STATS").is_some() {
            eprintln!("tiny: order {} most {} exact {}", by_order.summary.placed, packed.summary.placed, exact);
        }
        prop_assert_eq!(packed.summary.placed, exact, "most is not the most");
        prop_assert!(packed.summary.bound >= exact);
        prop_assert!(plan(&cat, &inv, Options::default()).summary.bound >= exact);
    }
}

fn files(catalog: &str, inventory: &str) -> (Catalog, Inventory) {
    load(catalog, inventory)
}

const TWO_NODES: &str = r#"
[[node]]
id = "a100-1"
[[node.gpu]]
index = 0
name = "NVIDIA A100-SXM4-80GB"
[[node]]
id = "h100-1"
[[node.gpu]]
index = 0
name = "NVIDIA H100 80GB HBM3"
"#;

#[test]
fn a_model_that_can_fall_back_leaves_the_gpus_another_needs() {
    let catalog = r#"
[[model]]
name = "flexible"
[[model.profile]]
name = "h100"
engine = "vllm"
gpu_class = "h100-80gb-hbm3"
priority = 10
[[model.profile]]
name = "a100"
engine = "vllm"
gpu_class = "a100-sxm4-80gb"
[[model]]
name = "h100-only"
[[model.profile]]
name = "h100"
engine = "vllm"
gpu_class = "h100-80gb-hbm3"
"#;
    let (cat, inv) = files(catalog, TWO_NODES);
    let by_order = plan(&cat, &inv, Options::default());
    assert_eq!((by_order.summary.placed, by_order.summary.bound), (1, 2));
    let packed = most(&cat, &inv);
    assert_eq!((packed.summary.placed, packed.summary.unplaced, packed.summary.bound), (2, 0, 2));
    let profiles: Vec<(u32, u32)> = packed
        .decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Placed(p) => Some((p.model, p.profile)),
            Decision::Unplaced { .. } => None,
        })
        .collect();
    assert_eq!(profiles, [(0, 1), (1, 0)], "the flexible model falls back to the A100");
}

#[test]
fn ties_go_to_the_earlier_model_and_then_the_default_plan() {
    // One H100, two models that want it: the earlier model wins, as in
    // the default plan, and the plan is the default's byte for byte.
    let catalog = r#"
[[model]]
name = "first"
[[model.profile]]
name = "h100"
engine = "vllm"
gpu_class = "h100-80gb-hbm3"
[[model]]
name = "second"
[[model.profile]]
name = "h100"
engine = "vllm"
gpu_class = "h100-80gb-hbm3"
"#;
    let (cat, inv) = files(catalog, TWO_NODES);
    let packed = most(&cat, &inv);
    let by_order = plan(&cat, &inv, Options::default());
    assert_eq!(json(&cat, &inv, &packed), json(&cat, &inv, &by_order));
    assert!(matches!(&packed.decisions[0], Decision::Placed(p) if p.model == 0));
}

#[test]
fn free_gpus_a_waiting_replica_cannot_use_are_stranded() {
    // Three free H100s where a TP4 replica waits: stranded. The A100 no
    // waiting replica wants is spare, not stranded.
    let inventory = r#"
[[node]]
id = "h100-1"
gpu = [
  { index = 0, name = "NVIDIA H100 80GB HBM3" }, { index = 1, name = "NVIDIA H100 80GB HBM3" },
  { index = 2, name = "NVIDIA H100 80GB HBM3" }, { index = 3, name = "NVIDIA H100 80GB HBM3" },
]
[[node.allocation]]
model = "other"
replica = 0
gpus = [0]
[[node]]
id = "a100-1"
[[node.gpu]]
index = 0
name = "NVIDIA A100-SXM4-80GB"
"#;
    let catalog = r#"
[[model]]
name = "tp4"
[[model.profile]]
name = "h100"
engine = "vllm"
gpu_class = "h100-80gb-hbm3"
gpus_per_node = 4
"#;
    let (cat, inv) = files(catalog, inventory);
    for p in [plan(&cat, &inv, Options::default()), most(&cat, &inv)] {
        assert_eq!((p.summary.placed, p.summary.bound), (0, 0));
        assert_eq!(p.summary.stranded, [("h100-80gb-hbm3".to_string(), 3)].into());
    }
}

#[path = "../../../benches/common/oversubscribed.rs"]
mod oversubscribed;

fn drawn(f: &oversubscribed::Fleet) -> (Catalog, Inventory) {
    load(&f.catalog(), &f.inventory())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Oversubscribed fleets small enough to try every plan: `most` places
    /// exactly what the exhaustive search finds, and both bounds hold.
    #[test]
    fn most_is_the_most_on_tiny_oversubscribed_fleets(seed in any::<u64>()) {
        let mut f = oversubscribed::generate(seed, (2, 3), (2, 3));
        for m in &mut f.models {
            m.replicas = m.replicas.min(3);
        }
        let (cat, inv) = drawn(&f);
        let exact = super::brute::most(&cat, &inv);
        let by_order = plan(&cat, &inv, Options::default());
        let packed = most(&cat, &inv);
        if std::env::var_os("LLMGW_PACK_STATS").is_some() {
            eprintln!("oversubscribed tiny: order {} most {} exact {}", by_order.summary.placed, packed.summary.placed, exact);
        }
        prop_assert_eq!(packed.summary.placed, exact);
        prop_assert!(by_order.summary.bound >= exact && packed.summary.bound >= exact);
        check_plan(&cat, &inv, &packed)?;
    }
}

/// Small oversubscribed fleets of the quality check's kind: `most` places
/// what an exact solver of the generator's own finds.
#[test]
fn most_matches_an_exact_solver_on_small_oversubscribed_fleets() {
    for seed in 0..12 {
        let f = oversubscribed::generate(seed, (6, 12), (3, 5));
        let Some(exact) = f.exact() else { continue };
        let (cat, inv) = drawn(&f);
        let packed = most(&cat, &inv);
        let by_order = plan(&cat, &inv, Options::default());
        assert_eq!(packed.summary.placed, exact, "seed {seed}: order {}", by_order.summary.placed);
        assert!(packed.summary.bound >= exact && by_order.summary.bound >= exact, "seed {seed}");
    }
}
