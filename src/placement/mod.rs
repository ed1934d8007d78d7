//! Placement: which nodes and GPUs each replica runs on (docs/placement.md).
//!
//! Two constraints are not negotiable, and the rest of this module exists to
//! keep them true: a multi-node replica never spans two fabrics, and a
//! tensor-parallel group never mixes GPU classes. Breaking either gives a
//! replica that starts, passes health checks, and then hangs or crawls once
//! traffic arrives.
//!
//! The module is pure: a validated catalog and inventory in, a plan out.
//! Decisions are made twice over, on purpose:
//! - `reference` follows the rules literally, node by node, and records why
//!   each candidate was passed over. It is what `explain-placement` shows.
//! - `fast` answers the same question from indexes kept up to date as
//!   replicas are placed, and records nothing. A 10,000-node fleet with
//!   10,000 replicas is placed with it; the reference path is run only for
//!   replicas somebody will read about (left unplaced, or explained).
//!
//! Tests hold the two to identical answers.

mod fast;
mod memory;
mod pack;
mod reference;
mod rejections;
mod state;

use std::sync::Arc;

use crate::catalog::{Catalog, Model, Profile};
use crate::inventory::{Inventory, State};

pub use memory::{NEED_FACTOR, Need, USABLE, need, parallel as memory_parallel, split as memory_split};
pub use pack::{Pack, stranded};
pub use rejections::Rejections;
pub use state::Fleet;

/// Where a rejection happened: which pool of which profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pool {
    /// A rejection that belongs to no pool ("no node reports a fabric").
    Nothing,
    /// The single-node pool, `none/<class>`.
    Single,
    /// A fabric's pool, `<fabric>/<class>`; the index is into `Fleet::fabrics`.
    Fabric(u32),
}

/// Why a candidate was passed over, kept as a compact code; its text
/// (docs/placement.md, "Reasons") is only produced when somebody reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reason {
    State(StateCode),
    /// The node holds `per_node` replicas of the model already (the model's
    /// `replicas_per_node`; 1 is the seed's spreading rule).
    Avoid {
        per_node: u32,
    },
    /// Attached to this fabric (index into `Fleet::fabrics`) without adapters.
    NoAdapters(u32),
    /// The selector entry (index into the profile's sorted selector) missing.
    Selector(u32),
    /// A taint the profile does not tolerate (index into `Fleet::taints`).
    Taint(u32),
    Engine,
    Memory {
        have_gb: u64,
    },
    Disk {
        have_gb: u64,
    },
    Gpus {
        free: u32,
    },
    /// No free MIG device of the profile on a healthy GPU of the class.
    Mig {
        free: u32,
    },
    /// The smallest GPU of the class, less the margin, cannot hold this
    /// profile's share of the weights and their room (whole GiB).
    GpuFit {
        have_gib: u64,
        need_gib: u64,
    },
    /// The profile's engine does not run on the node's GPUs of the class,
    /// made by this vendor.
    Vendor(crate::vendor::Vendor),
    /// Host memory, less the margin, cannot hold a CPU replica (whole GiB).
    HostFit {
        have_gib: u64,
        need_gib: u64,
    },
    NoFabric,
    PoolTooSmall {
        qualify: u32,
    },
    /// Fewer free CPUs (millicores) than the profile's `cpus`.
    Cpus {
        free_millis: u64,
    },
    /// The node reports CPUs and has not one free.
    NoCpus,
    /// The node reports memory and has none free (SPEC 20, amending 12).
    NoMemory,
    /// Less free memory (whole GiB, rounded down) than the profile's `memory_gb`.
    FreeMemory {
        free_gib: u64,
    },
}

/// `State` with a total order, for grouping reasons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StateCode {
    Cordoned,
    Draining,
    Down,
}

impl StateCode {
    fn of(s: State) -> Option<StateCode> {
        match s {
            State::Ready => None,
            State::Cordoned => Some(StateCode::Cordoned),
            State::Draining => Some(StateCode::Draining),
            State::Down => Some(StateCode::Down),
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            StateCode::Cordoned => "cordoned",
            StateCode::Draining => "draining",
            StateCode::Down => "down",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// Index into the model's profiles.
    pub profile: u32,
    pub pool: Pool,
    pub node: Option<u32>,
    pub reason: Reason,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assign {
    pub node: u32,
    /// Sorted GPU indices; empty for a CPU-only replica.
    pub gpus: Vec<u32>,
    /// For a MIG profile: the MIG device of the one GPU in `gpus`.
    pub mig_devices: Vec<u32>,
    /// What the replica asks of the node (docs/placement.md, "CPUs and
    /// memory"): millicores, whole CPUs; `None` where the node does not
    /// report CPUs.
    pub cpus_millis: Option<u64>,
    /// MiB; `None` where the node does not report memory.
    pub memory_mb: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    pub model: u32,
    pub replica: u32,
    pub profile: u32,
    /// For a multi-node replica, the one fabric it lives on.
    pub fabric: Option<u32>,
    /// In rank order.
    pub nodes: Vec<Assign>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Placed(Placement),
    /// Replicas of one model left unplaced for the same reasons share one list.
    Unplaced {
        model: u32,
        replica: u32,
        why: Arc<Why>,
    },
}

/// Why a replica was left unplaced: every rejection in the order tried, and
/// how many nodes qualified in each pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Why {
    pub rejections: Vec<Rejection>,
    pub tallies: Vec<PoolTally>,
}

/// How many nodes a (profile, pool) pair looked at and how many qualified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolTally {
    pub profile: u32,
    pub pool: Pool,
    pub qualified: u32,
}

/// One replica of the model being explained: the decision and every
/// rejection of the attempt, in the order tried.
#[derive(Clone, Debug)]
pub struct Attempt {
    pub replica: u32,
    /// The last replica this attempt stands for: later replicas of an
    /// unplaced run (consecutive indices, nothing placed meanwhile) fail
    /// for the same reasons, so one attempt answers for all of them.
    pub through: u32,
    pub placement: Option<Placement>,
    pub rejections: Rejections,
    pub tallies: Vec<PoolTally>,
}

/// A replica index at or above `replicas` that the inventory already runs.
#[derive(Clone, Debug)]
pub struct Surplus {
    pub model: u32,
    pub replica: u32,
    pub nodes: Vec<u32>,
}

#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub wanted: u64,
    pub existing: u64,
    pub placed: u64,
    pub unplaced: u64,
    /// No plan of these inputs places more new replicas than this
    /// (docs/placement.md, "The bound").
    pub bound: u64,
    /// Per GPU class, free GPUs that replicas left unplaced cannot use
    /// (docs/placement.md, "Stranded GPUs"): classes with none are left out.
    pub stranded: std::collections::BTreeMap<String, u64>,
}

#[derive(Clone, Debug)]
pub struct Plan {
    pub decisions: Vec<Decision>,
    pub summary: Summary,
    pub surplus: Vec<Surplus>,
    /// Filled for the explained model only.
    pub attempts: Vec<Attempt>,
    /// Existing replica indices of the explained model.
    pub existing_of_explained: Vec<u32>,
    /// How the new replicas were chosen.
    pub pack: Pack,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Indexed search; the reference path only for unplaced replicas.
    Fast,
    /// The literal algorithm for every replica (slow; for tests).
    Reference,
}

#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub mode: Mode,
    /// Explain this model (index into the catalog) and stop after it.
    pub explain: Option<usize>,
    /// Explain only this replica of it (and the unplaced run it is in):
    /// the replicas before it are placed as `place` places them, and
    /// nothing after it is decided.
    pub explain_only: Option<u32>,
    /// The order of section 5, or the most replicas (docs/placement.md).
    pub pack: Pack,
    /// Work out the summary's `bound` and `stranded` (a plan made only to
    /// be counted, as `capacity` makes many, goes without).
    pub measure: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { mode: Mode::Fast, explain: None, explain_only: None, pack: Pack::Order, measure: true }
    }
}

/// The orders candidates are taken in, one definition for both paths
/// (docs/placement.md). Weight holders go first in single-node pools; ties
/// always fall to node order.
pub(crate) mod rank {
    /// CPU-only: spread, fewest allocations first.
    pub fn spread(allocs: u32, node: u32) -> (u32, u32) {
        (allocs, node)
    }
    /// One node with GPUs: best fit, the fewest free GPUs of the class.
    pub fn best_fit(free: u32, node: u32) -> (u32, u32) {
        (free, node)
    }
    /// The nodes of a multi-node replica: the emptiest first.
    pub fn emptiest(free: u32, node: u32) -> (std::cmp::Reverse<u32>, u32) {
        (std::cmp::Reverse(free), node)
    }
}

/// Profiles of a model in the order they are tried: priority, highest first;
/// ties keep file order.
pub fn profile_order(profiles: &[Profile]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..profiles.len() as u32).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(profiles[i as usize].priority));
    order
}

pub fn plan(catalog: &Catalog, inventory: &Inventory, opts: Options) -> Plan {
    plan_with_fleet(catalog, inventory, opts).0
}

/// `plan`, also handing back the fleet it was made on, so the caller can name
/// its nodes and fabrics without building it again. Its free-GPU and
/// allocation counts are those after the plan.
pub fn plan_with_fleet<'i>(catalog: &Catalog, inventory: &'i Inventory, opts: Options) -> (Plan, Fleet<'i>) {
    if opts.pack == Pack::Most {
        return pack::most(catalog, inventory, opts);
    }
    let (mut plan, fleet, mut index) = in_order(catalog, inventory, opts);
    if opts.measure && opts.explain.is_none() {
        pack::measure(catalog, inventory, &mut plan, &fleet, index.as_mut());
    }
    (plan, fleet)
}

/// The plan of section 5: models in catalog order, each replica the first
/// profile that finds a home; with the index it was made with (fast mode).
fn in_order<'i>(catalog: &Catalog, inventory: &'i Inventory, opts: Options) -> (Plan, Fleet<'i>, Option<fast::Index>) {
    let mut fleet = Fleet::new(inventory);
    let mut fast = (opts.mode == Mode::Fast).then(|| fast::Index::new(&fleet));
    let mut decisions = Vec::new();
    let mut summary = Summary::default();
    let mut surplus = Vec::new();
    let mut attempts = Vec::new();
    let mut existing_of_explained = Vec::new();

    for (mi, model) in catalog.models.iter().enumerate() {
        let explaining = opts.explain == Some(mi);
        let existing = fleet.begin_model(mi as u32, &model.name, model.replicas_per_node);
        let mut have = vec![false; model.replicas as usize];
        for (&replica, nodes) in &existing {
            if replica < model.replicas {
                have[replica as usize] = true;
            } else {
                surplus.push(Surplus { model: mi as u32, replica, nodes: nodes.clone() });
            }
        }
        let existing_count = have.iter().filter(|h| **h).count() as u64;
        summary.wanted += u64::from(model.replicas);
        summary.existing += existing_count;
        if explaining {
            existing_of_explained = (0..model.replicas).filter(|&r| have[r as usize]).collect();
        }
        let order = profile_order(&model.profiles);
        let compiled: Vec<_> = model.profiles.iter().map(|p| fleet.compile(p)).collect();
        // A profile that failed once fails for every later replica of the
        // model: free GPUs only shrink and the avoid set only grows.
        let mut failed = vec![false; model.profiles.len()];
        // Once a replica is left unplaced, so is every later replica of the
        // model, for the same reasons: nothing was committed meanwhile, and
        // the avoid set only grows when a replica of this model is placed.
        // The fast path reuses the first answer instead of asking again, so
        // a million unplaced replicas cost one list of rejections, not a
        // million (the reference path keeps asking, to check the shortcut).
        let mut gave_up: Option<Arc<Why>> = None;

        for replica in (0..model.replicas).filter(|&r| !have[r as usize]) {
            if let (Some(why), Mode::Fast, false) = (&gave_up, opts.mode, explaining) {
                summary.unplaced += 1;
                decisions.push(Decision::Unplaced { model: mi as u32, replica, why: why.clone() });
                continue;
            }
            // Explained, a run of unplaced replicas is one attempt, in
            // either mode: a million replicas that cannot fit are explained
            // once, not a million times over.
            if let (Some(why), true) = (&gave_up, explaining) {
                summary.unplaced += 1;
                decisions.push(Decision::Unplaced { model: mi as u32, replica, why: why.clone() });
                run_on(&mut attempts, replica);
                continue;
            }
            // The literal path for each replica explained; with one asked
            // for, the others as `place` decides them (the tests hold the
            // two paths to one answer), so 1,500 replicas cost one record.
            let literal = explaining && opts.explain_only.is_none_or(|r| r == replica);
            let placement = if literal || opts.mode == Mode::Reference {
                let attempt = reference::attempt(&fleet, &compiled, &order, mi as u32, replica);
                if explaining {
                    attempts.push(attempt.clone());
                }
                match attempt.placement {
                    Some(p) => Ok(p),
                    None => Err(Why { rejections: attempt.rejections.to_vec(), tallies: attempt.tallies }),
                }
            } else {
                let index = fast.as_mut().expect("fast mode has an index");
                match index.place(&fleet, &compiled, &order, &mut failed, mi as u32, replica) {
                    Some(p) => Ok(p),
                    // Why it failed is asked only now, of the literal path.
                    None => {
                        let a = reference::attempt(&fleet, &compiled, &order, mi as u32, replica);
                        // An unplaced run explained starts here, whichever
                        // replica of it was asked about.
                        if explaining {
                            attempts.push(a.clone());
                        }
                        Err(Why { rejections: a.rejections.to_vec(), tallies: a.tallies })
                    }
                }
            };
            match placement {
                Ok(p) => {
                    let changes = fleet.commit(&p, &compiled[p.profile as usize]);
                    if let Some(ix) = fast.as_mut() {
                        ix.update(&fleet, &changes);
                    }
                    summary.placed += 1;
                    decisions.push(Decision::Placed(p));
                }
                Err(why) => {
                    let why = Arc::new(why);
                    gave_up = Some(why.clone());
                    summary.unplaced += 1;
                    decisions.push(Decision::Unplaced { model: mi as u32, replica, why });
                }
            }
            if explaining && opts.explain_only == Some(replica) {
                break;
            }
        }
        if explaining {
            break;
        }
    }
    (Plan { decisions, summary, surplus, attempts, existing_of_explained, pack: Pack::Order }, fleet, fast)
}

/// Extends the last explained attempt (unplaced) to `replica`, or, past a
/// replica that already runs, starts a run of its own with the same answer.
fn run_on(attempts: &mut Vec<Attempt>, replica: u32) {
    let Some(last) = attempts.last_mut() else { return };
    if last.through.checked_add(1) == Some(replica) {
        last.through = replica;
    } else {
        let mut next = last.clone();
        (next.replica, next.through) = (replica, replica);
        attempts.push(next);
    }
}

/// Whether one replica of the model (the catalog's model `mi`) could be
/// placed on `fleet` with any of its profiles, by the rules above: what
/// `capacity` asks of a fleet made of the nodes it would add.
pub fn could_hold(fleet: &mut Fleet<'_>, mi: u32, model: &Model) -> bool {
    fleet.begin_model(mi, &model.name, model.replicas_per_node);
    let order = profile_order(&model.profiles);
    let compiled: Vec<_> = model.profiles.iter().map(|p| fleet.compile(p)).collect();
    reference::attempt(fleet, &compiled, &order, mi, 0).placement.is_some()
}

#[cfg(test)]
mod tests;
