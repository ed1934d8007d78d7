//! "How many more nodes of this shape would place everything?": the
//! question every capacity review asks. The answer is searched for by
//! planning with more and more nodes added, doubling then bisecting, and
//! checked both ways: N nodes place every replica, N - 1 do not.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::catalog::Catalog;
use crate::diag::{Code, Diag, suggest};
use crate::inventory::{Inventory, Node, State};
use crate::placement::{self, Options};
use crate::synth::{SHAPES, Shape};

/// What to add: a shape of `inventory synth`, or a copy of a node.
pub enum Kind {
    Shape(&'static Shape),
    Like(String),
}

/// `SHAPE[@FABRIC][,key=value...]` or `like:NODE[@FABRIC][,key=value...]`.
pub struct Add {
    pub kind: Kind,
    pub fabric: Option<String>,
    pub labels: BTreeMap<String, String>,
}

impl Add {
    /// The name the added nodes take after: the shape, or the node copied.
    pub fn name(&self) -> &str {
        match &self.kind {
            Kind::Shape(s) => s.name,
            Kind::Like(n) => n,
        }
    }

    /// The shape as it was given: `dgx-h100`, `like:gpu-a01`.
    pub fn shape(&self) -> String {
        match &self.kind {
            Kind::Shape(s) => s.name.to_string(),
            Kind::Like(n) => format!("like:{n}"),
        }
    }
}

pub fn parse_add(s: &str) -> Result<Add, Diag> {
    let bad = |why: String| {
        Diag::error(Code::BadArgument, format!("cannot read --add `{s}`: {why}"))
            .help("write SHAPE[@FABRIC][,key=value...] (a shape of inventory synth) or like:NODE[@FABRIC]")
    };
    let mut parts = s.split(',');
    let head = parts.next().unwrap_or("");
    let (what, fabric) = match head.split_once('@') {
        Some((_, "")) => return Err(bad("empty fabric after `@`".into())),
        Some((w, f)) => (w, Some(f.to_string())),
        None => (head, None),
    };
    let kind = match what.strip_prefix("like:") {
        Some("") => return Err(bad("no node after `like:`".into())),
        Some(node) => Kind::Like(node.to_string()),
        None => Kind::Shape(SHAPES.iter().find(|sh| sh.name == what).ok_or_else(|| {
            bad(format!("unknown shape `{what}` ({})", suggest(what, SHAPES.iter().map(|s| s.name), "shapes are")))
        })?),
    };
    let labels = crate::synth::labels(parts).map_err(bad)?;
    Ok(Add { kind, fabric, labels })
}

/// The template every added node copies, named later.
fn template(add: &Add, inv: &Inventory) -> Result<Node, Diag> {
    match &add.kind {
        Kind::Shape(sh) => Ok(crate::synth::node_of(sh, String::new(), add.fabric.as_deref(), add.labels.clone())),
        Kind::Like(id) => {
            let Some(n) = inv.nodes.iter().find(|n| &n.id == id) else {
                let help = suggest(id, inv.nodes.iter().map(|n| n.id.as_str()), "the fleet's nodes include");
                return Err(
                    Diag::error(Code::BadArgument, format!("like:{id}: the fleet has no node `{id}`")).help(help)
                );
            };
            // Its hardware, engines and labels; none of what runs there.
            let mut copy = n.clone();
            copy.state = State::Ready;
            copy.allocations.clear();
            copy.weights = None;
            copy.origin = None;
            copy.labels.extend(add.labels.clone());
            if let Some(f) = &add.fabric {
                let hcas = n.fabrics.first().and_then(|x| x.hcas.clone());
                copy.fabrics = vec![crate::inventory::Fabric { name: f.clone(), hcas }];
            }
            Ok(copy)
        }
    }
}

#[derive(Serialize)]
pub struct Answer {
    pub shape: String,
    pub fabric: Option<String>,
    /// The fewest nodes that place everything; `None` when even `--max` fall short.
    pub added: Option<u32>,
    pub wanted: u64,
    /// Replicas running or placed without added nodes.
    pub placed_without: u64,
    /// With `added` nodes (or `--max`, when that falls short).
    pub placed_with: u64,
    #[serde(skip)]
    pub plans: u32,
}

/// Finds the fewest nodes to add, up to `max`.
pub fn search(cat: &Catalog, inv: &Inventory, add: &Add, max: u32) -> Result<Answer, Diag> {
    let base = template(add, inv)?;
    let width = max.max(1).to_string().len();
    let id = |i: u32| format!("add-{}-{i:0width$}", add.name());
    if let Some(n) = inv.nodes.iter().find(|n| n.id == id(1)) {
        return Err(Diag::error(Code::BadArgument, format!("the fleet already has a node `{}`", n.id))
            .help("the added nodes are named add-<shape>-<i>; rename that node"));
    }
    // Replicas running or placed, with n nodes added; each count planned once.
    let mut memo: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    let mut placed = |n: u32| {
        *memo.entry(n).or_insert_with(|| {
            let mut nodes = inv.nodes.clone();
            nodes.extend((1..=n).map(|i| Node { id: id(i), ..base.clone() }));
            nodes.sort_by(|a, b| a.id.cmp(&b.id));
            let s = placement::plan(cat, &Inventory { nodes }, Options::default()).summary;
            (s.existing + s.placed, s.wanted)
        })
    };
    let (without, wanted) = placed(0);
    let mut answer = Answer {
        shape: add.shape(),
        fabric: add.fabric.clone(),
        added: Some(0),
        wanted,
        placed_without: without,
        placed_with: without,
        plans: 0,
    };
    if without < wanted {
        // Double until everything places, then bisect between the last
        // count that fell short and the first that did not.
        let (mut lo, mut hi) = (0u32, 1u32);
        let mut with = placed(hi.min(max));
        while with.0 < wanted && hi < max {
            lo = hi;
            hi = (hi * 2).min(max);
            with = placed(hi);
        }
        if with.0 < wanted {
            answer.added = None;
            answer.placed_with = with.0;
        } else {
            let mut best = with.0;
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                let got = placed(mid).0;
                if got >= wanted {
                    hi = mid;
                    best = got;
                } else {
                    lo = mid;
                }
            }
            // Placement is greedy, not monotone in the nodes added: walk down
            // while one fewer still places everything, so N - 1 falls short.
            while hi > 1 && placed(hi - 1).0 >= wanted {
                hi -= 1;
            }
            answer.added = Some(hi);
            answer.placed_with = best.max(wanted);
        }
    }
    answer.plans = memo.len() as u32;
    Ok(answer)
}

#[cfg(test)]
mod tests {
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
        nodes.extend((1..=n).map(|i| Node { id: format!("add-{}-{i:0width$}", add.name()), ..base.clone() }));
        nodes.sort_by(|a, b| a.id.cmp(&b.id));
        placement::plan(cat, &Inventory { nodes }, Options::default()).summary.unplaced
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

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
    }

    #[test]
    fn a_class_nobody_adds_is_never_enough() {
        let text =
            "[[model]]\nname = \"b\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"b200\"\n";
        let cat = crate::catalog::check(&source("c.toml", text.into())).0.unwrap();
        let a = search(&cat, &fleet(1), &parse_add("dgx-h100@ib-east").unwrap(), 8).unwrap();
        assert_eq!((a.added, a.placed_with, a.wanted), (None, 0, 1));
        assert!(a.plans <= 5, "{} plans", a.plans);
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
}
