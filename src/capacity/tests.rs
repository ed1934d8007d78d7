use std::fmt::Write as _;

use proptest::prelude::*;

use super::*;
use crate::diag::source;

fn catalog(replicas: &[(u32, u32)]) -> Catalog {
    let mut text = String::new();
    for (i, (n, gpus)) in replicas.iter().enumerate() {
        let _ = write!(
            text,
            "[[model]]\nname = \"m{i}\"\nreplicas = {n}\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = {gpus}\n"
        );
    }
    crate::catalog::check(&source("c.toml", text)).0.unwrap()
}

fn fleet(nodes: u32) -> Inventory {
    let groups = [crate::synth::Group { shape: &SHAPES[0], count: nodes, fabric: None, labels: BTreeMap::new() }];
    crate::synth::synthesize(&groups, 0.0, 0.0, 1, "gpu")
}

/// Plans with `n` nodes added, as a user would: by hand, not by search.
fn unplaced_with(cat: &Catalog, inv: &Inventory, add: &Add, n: u32, max: u32) -> u64 {
    let base = template(add, inv).unwrap();
    let width = max.max(1).to_string().len();
    let mut nodes = inv.nodes.clone();
    nodes.sort_by(|a, b| a.id.cmp(&b.id));
    // After every node of the inventory, whatever their names.
    nodes.extend((1..=n).map(|i| Node { id: format!("add-{}-{i:0width$}", add.name()), ..base.clone() }));
    placement::plan(cat, &Inventory { nodes }, Options::default()).summary.unplaced
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn the_answer_places_everything_and_one_fewer_does_not(
        have in 0u32..4,
        models in prop::collection::vec((0u32..6, prop::sample::select(vec![1u32, 2, 4, 8])), 1..4),
    ) {
        let (cat, inv) = (catalog(&models), fleet(have));
        let add = parse_add("dgx-h100").unwrap();
        let a = search(&cat, &inv, &add, 64).unwrap();
        let n = a.added.expect("64 DGX nodes hold these catalogs");
        prop_assert_eq!(unplaced_with(&cat, &inv, &add, n, 64), 0);
        if n > 0 {
            prop_assert!(unplaced_with(&cat, &inv, &add, n - 1, 64) > 0);
        }
        prop_assert_eq!(a.placed_with, a.wanted);
    }

    /// The inventory's names never decide: prefixed so that they sort
    /// before, between or after `add-...`, the fleet gets the same answer.
    #[test]
    fn renaming_the_inventory_never_changes_the_answer(
        have in (0u32..3, 0u32..3),
        load in prop::sample::select(vec![0.0f64, 0.3, 0.6]),
        models in prop::collection::vec(
            (
                0u32..5,
                prop::sample::select(vec![1u32, 2, 4, 8]),
                prop::sample::select(vec![1u32, 1, 2]),
                prop::bool::weighted(0.3),
            ),
            1..4,
        ),
        shape in prop::sample::select(vec!["dgx-h100@ib", "dgx-h100@ib,zone=a", "like:gpu-0001"]),
    ) {
        let mut text = String::new();
        for (i, (n, gpus, nodes, zone)) in models.iter().enumerate() {
            let _ = write!(
                text,
                "[[model]]\nname = \"m{i}\"\nreplicas = {n}\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = {gpus}\nnodes = {nodes}\n"
            );
            if *zone {
                text.push_str("node_selector = { zone = \"a\" }\n");
            }
        }
        let cat = crate::catalog::check(&source("c.toml", text)).0.unwrap();
        let group = |count: u32, zone: &str| crate::synth::Group {
            shape: &SHAPES[0],
            count,
            fabric: Some("ib".into()),
            labels: [("zone".to_string(), zone.to_string())].into(),
        };
        let inv = crate::synth::synthesize(&[group(have.0 + 1, "a"), group(have.1, "b")], 0.0, load, 7, "gpu");
        let first = search(&cat, &inv, &parse_add(shape).unwrap(), 64).unwrap();
        for prefix in ["0", "aa", "add-", "add-dgx-h100-9", "zz"] {
            let mut renamed = inv.clone();
            for n in &mut renamed.nodes {
                n.id = format!("{prefix}{}", n.id);
            }
            let add = parse_add(&shape.replace("like:", &format!("like:{prefix}"))).unwrap();
            let again = search(&cat, &renamed, &add, 64).unwrap();
            prop_assert_eq!(
                (again.added, again.placed_with),
                (first.added, first.placed_with),
                "prefix {}",
                prefix
            );
        }
    }
}

#[test]
fn added_nodes_lose_every_tie_to_the_inventory() {
    // Two empty DGX nodes, zones a and b. The TP8 replicas take them (the
    // zone-a node first, by node order), then the zone-a TP1 replica
    // needs one added zone-a node. Had an added node won the first tie
    // (`add-...` sorts before `gpu-...`), it would need two.
    let text = "[[model]]\nname = \"big\"\nreplicas = 2\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\n\
        [[model]]\nname = \"small\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\nnode_selector = { zone = \"a\" }\n";
    let cat = crate::catalog::check(&source("c.toml", text.into())).0.unwrap();
    let group = |zone: &str| crate::synth::Group {
        shape: &SHAPES[0],
        count: 1,
        fabric: Some("ib".into()),
        labels: [("zone".to_string(), zone.to_string())].into(),
    };
    let inv = crate::synth::synthesize(&[group("a"), group("b")], 0.0, 0.0, 7, "gpu");
    let a = search(&cat, &inv, &parse_add("dgx-h100@ib,zone=a").unwrap(), 64).unwrap();
    assert_eq!(a.added, Some(1));
}

#[test]
fn a_class_nobody_adds_is_never_enough() {
    let text = "[[model]]\nname = \"b\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"b200\"\n";
    let cat = crate::catalog::check(&source("c.toml", text.into())).0.unwrap();
    let a = search(&cat, &fleet(1), &parse_add("dgx-h100@ib-east").unwrap(), 8).unwrap();
    assert_eq!((a.added, a.placed_with, a.wanted), (None, 0, 1));
    assert!(a.useless && a.plans == 1, "{} plans", a.plans);
}

#[test]
fn work_is_bounded_whatever_max() {
    // The shape holds the H100 model but nobody holds the B200 one:
    // more nodes than the replicas could occupy are never tried.
    let text = "[[model]]\nname = \"h\"\nreplicas = 3\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\n\
        [[model]]\nname = \"b\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"b200\"\n";
    let cat = crate::catalog::check(&source("c.toml", text.into())).0.unwrap();
    let a = search(&cat, &fleet(1), &parse_add("dgx-h100").unwrap(), 10_000_000).unwrap();
    assert_eq!((a.added, a.placed_with, a.wanted, a.useless), (None, 3, 4, false));
    assert!(a.plans <= 6, "{} plans", a.plans);
    // Without the B200 model: two more DGX nodes, found the same way.
    let text = text.split("[[model]]\nname = \"b\"").next().unwrap();
    let cat = crate::catalog::check(&source("c.toml", text.into())).0.unwrap();
    let a = search(&cat, &fleet(1), &parse_add("dgx-h100").unwrap(), 10_000_000).unwrap();
    assert_eq!(a.added, Some(2));
}

#[test]
fn like_copies_a_node_without_what_runs_there() {
    let mut inv = fleet(1);
    inv.nodes[0].allocations.push(crate::inventory::Allocation::new("x".into(), 0, (0..8).collect(), Vec::new()));
    let cat = catalog(&[(2, 8)]);
    let a = search(&cat, &inv, &parse_add("like:gpu-0001,zone=b").unwrap(), 16).unwrap();
    assert_eq!(a.added, Some(2));
    assert!(parse_add("like:").is_err() && parse_add("dgx-h1000").is_err() && parse_add("dgx-h100,zone").is_err());
    assert!(search(&cat, &inv, &parse_add("like:nope").unwrap(), 4).is_err());
}
