//! Placing the catalog's models in order: each replica tried profile by
//! profile, pool by pool, on the fast path, and the reference path run for
//! the replicas someone will read about.

use super::*;

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

/// The plan in order (docs/placement.md, "Order"): models in catalog order, each replica the first
/// profile that finds a home; with the index it was made with (fast mode).
pub(super) fn in_order<'i>(
    catalog: &Catalog,
    inventory: &'i Inventory,
    opts: Options,
) -> (Plan, Fleet<'i>, Option<fast::Index>) {
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
pub(super) fn run_on(attempts: &mut Vec<Attempt>, replica: u32) {
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
