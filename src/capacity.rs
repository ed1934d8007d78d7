//! "How many more nodes of this shape would place everything?": the
//! question every capacity review asks. The answer is searched for by
//! planning with more and more nodes added, doubling then bisecting, and
//! checked both ways: N nodes place every replica, N - 1 do not.

pub mod alone;

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
                let kind = n.fabrics.first().map(|x| x.kind).unwrap_or_default();
                copy.fabrics = vec![crate::inventory::Fabric { name: f.clone(), kind, hcas }];
            }
            Ok(copy)
        }
    }
}

/// Replicas `replica..=through` of a model that even the added nodes
/// leave unplaced, and what the added nodes said.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct Left {
    pub model: String,
    pub replica: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub through: Option<u32>,
    /// The reason most added nodes gave (the seed's text), else why the
    /// replica was left.
    pub reason: String,
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
    /// Set when no added node could hold any profile of any replica left
    /// unplaced: the answer was given without adding any.
    #[serde(skip)]
    pub useless: bool,
    /// When not everything places: the replicas left, and why an added
    /// node does not hold them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left: Vec<Left>,
    #[serde(skip)]
    pub plans: u32,
}

/// Finds the fewest nodes to add, up to `max`.
///
/// The added nodes come after every node of the inventory in every order
/// placement uses (they are appended, not sorted in by name): existing
/// hardware is used first, and renaming the inventory's nodes never
/// changes the answer. The work is bounded whatever `max`: nothing is
/// searched when no added node could hold any unplaced replica, and no
/// more nodes are tried than every replica to place could ever occupy.
pub fn search(cat: &Catalog, inv: &Inventory, add: &Add, max: u32) -> Result<Answer, Diag> {
    search_packed(cat, inv, add, max, placement::Pack::Order)
}

/// `search` with the plans made by `pack` (`capacity --pack most`: the
/// fewest nodes with which the most-packing plan places everything).
pub fn search_packed(
    cat: &Catalog,
    inv: &Inventory,
    add: &Add,
    max: u32,
    pack: placement::Pack,
) -> Result<Answer, Diag> {
    // Plans made only to be counted: no bound, no stranded GPUs.
    let opts = Options { pack, measure: false, ..Options::default() };
    let base = template(add, inv)?;
    let width = max.max(1).to_string().len();
    let id = |i: u32| format!("add-{}-{i:0width$}", add.name());
    if let Some(n) = inv.nodes.iter().find(|n| n.id == id(1)) {
        return Err(Diag::error(Code::BadArgument, format!("the fleet already has a node `{}`", n.id))
            .help("the added nodes are named add-<shape>-<i>; rename that node"));
    }
    let mut existing = inv.nodes.clone();
    existing.sort_by(|a, b| a.id.cmp(&b.id));
    let fleet_with = |n: u32| {
        let mut nodes = Vec::with_capacity(existing.len() + n as usize);
        nodes.extend(existing.iter().cloned());
        nodes.extend((1..=n).map(|i| Node { id: id(i), ..base.clone() }));
        Inventory { nodes }
    };
    let plan0 = placement::plan(cat, &fleet_with(0), opts);
    let s = &plan0.summary;
    let (without, wanted) = (s.existing + s.placed, s.wanted);
    let mut answer = Answer {
        shape: add.shape(),
        fabric: add.fabric.clone(),
        added: Some(0),
        wanted,
        placed_without: without,
        placed_with: without,
        useless: false,
        left: Vec::new(),
        plans: 1,
    };
    if without >= wanted {
        return Ok(answer);
    }
    if !any_held(cat, &plan0, &base, &id) {
        answer.added = None;
        answer.useless = true;
        answer.left = left(cat, &fleet_with(1), opts);
        return Ok(answer);
    }
    // Past this many added nodes, some are empty in every plan: an empty
    // added node ties with every other and loses by coming later, so the
    // plan (and whether everything places) no longer changes.
    let limit = max.min(occupiable(cat, &plan0));
    // Replicas running or placed, with n nodes added; each count planned once.
    let mut memo: BTreeMap<u32, u64> = BTreeMap::from([(0, without)]);
    let mut placed = |n: u32| {
        *memo.entry(n).or_insert_with(|| {
            let s = placement::plan(cat, &fleet_with(n), opts).summary;
            s.existing + s.placed
        })
    };
    // Double until everything places, then bisect between the last count
    // that fell short and the first that did not.
    let (mut lo, mut hi) = (0u32, 1u32.min(limit));
    let mut with = placed(hi);
    while with < wanted && hi < limit {
        lo = hi;
        hi = hi.saturating_mul(2).min(limit);
        with = placed(hi);
    }
    if with < wanted {
        answer.added = None;
        answer.placed_with = with;
        answer.left = left(cat, &fleet_with(hi), opts);
    } else {
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if placed(mid) >= wanted {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        // Placement is greedy, not monotone in the nodes added: walk down
        // while one fewer still places everything, so N - 1 falls short.
        while hi > 1 && placed(hi - 1) >= wanted {
            hi -= 1;
        }
        answer.added = Some(hi);
        answer.placed_with = placed(hi);
    }
    answer.plans = memo.len() as u32;
    Ok(answer)
}

/// The replicas a plan on `fleet` leaves unplaced, in runs, each with the
/// reason most added nodes (`add-...`) gave for its first profile tried.
fn left(cat: &Catalog, fleet: &Inventory, opts: Options) -> Vec<Left> {
    let (plan, f) = placement::plan_with_fleet(cat, fleet, opts);
    let names = crate::wording::Names::new(cat, &f);
    let mut out: Vec<Left> = Vec::new();
    for d in &plan.decisions {
        let placement::Decision::Unplaced { model, replica, why } = d else { continue };
        let mut counts: Vec<(placement::Reason, u32, u32)> = Vec::new();
        for r in why.rejections.iter().filter(|r| r.node.is_some_and(|n| names.node(n).starts_with("add-"))) {
            match counts.iter_mut().find(|c| c.0 == r.reason) {
                Some(c) => c.2 += 1,
                None => counts.push((r.reason, r.profile, 1)),
            }
        }
        let reason = match counts.iter().max_by_key(|c| c.2) {
            Some(&(reason, profile, _)) => names.reason(reason, names.profile(*model, profile)),
            // No added node was even a candidate: every profile spans nodes,
            // and added nodes on no fabric join no fabric's pool.
            None if cat.models[*model as usize].profiles.iter().all(|p| p.nodes > 1) => {
                "its profiles span nodes of one fabric; the added nodes are on none (give --add SHAPE@FABRIC)"
                    .to_string()
            }
            None => why.rejections.first().map_or_else(
                || "no profile to try".to_string(),
                |r| names.reason(r.reason, names.profile(*model, r.profile)),
            ),
        };
        let name = &cat.models[*model as usize].name;
        match out.last_mut() {
            Some(l) if l.model == *name && l.reason == reason && l.through.unwrap_or(l.replica) + 1 == *replica => {
                l.through = Some(*replica);
            }
            _ => out.push(Left { model: name.clone(), replica: *replica, through: None, reason }),
        }
    }
    out
}

/// Whether added nodes could hold any profile of any replica left
/// unplaced: checked on a fleet of nothing but added nodes, as many as the
/// widest profile of those models spans.
fn any_held(cat: &Catalog, plan0: &placement::Plan, base: &Node, id: &dyn Fn(u32) -> String) -> bool {
    let mut models: Vec<u32> = plan0
        .decisions
        .iter()
        .filter_map(|d| match d {
            placement::Decision::Unplaced { model, .. } => Some(*model),
            placement::Decision::Placed(_) => None,
        })
        .collect();
    models.dedup();
    let widest =
        models.iter().flat_map(|&m| cat.models[m as usize].profiles.iter().map(|p| p.nodes)).max().unwrap_or(1);
    let only_added = Inventory { nodes: (1..=widest).map(|i| Node { id: id(i), ..base.clone() }).collect() };
    let mut fleet = placement::Fleet::new(&only_added);
    models.iter().any(|&m| placement::could_hold(&mut fleet, m, &cat.models[m as usize]))
}

/// How many nodes every replica still to place could occupy at most: each
/// with its widest profile. No plan uses more added nodes than that.
fn occupiable(cat: &Catalog, plan0: &placement::Plan) -> u32 {
    let mut total: u64 = 0;
    for d in &plan0.decisions {
        let m = match d {
            placement::Decision::Placed(p) => p.model,
            placement::Decision::Unplaced { model, .. } => *model,
        };
        total += u64::from(cat.models[m as usize].profiles.iter().map(|p| p.nodes).max().unwrap_or(0));
    }
    total.min(u64::from(u32::MAX)) as u32
}

#[cfg(test)]
mod tests;
