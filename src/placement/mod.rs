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

mod run;
pub use run::*;

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
    /// The node reports memory and has none free (docs/placement.md, "CPUs and memory").
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
    pub share: crate::share::Share,
}

/// An assignment reads as its share: `a.gpus`, `a.cpus_millis`.
impl std::ops::Deref for Assign {
    type Target = crate::share::Share;
    fn deref(&self) -> &crate::share::Share {
        &self.share
    }
}

impl std::ops::DerefMut for Assign {
    fn deref_mut(&mut self) -> &mut crate::share::Share {
        &mut self.share
    }
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
    /// The order (docs/placement.md, "Order"), or the most replicas.
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

#[cfg(test)]
mod tests;
