//! `explain-placement --pack most`: each replica of one model, where the
//! plan put it, and what the default's checks say of every candidate on
//! the fleet as the plan leaves it, that replica taken back out.

use std::sync::Arc;

use super::assemble::enter;
use crate::catalog::Catalog;
use crate::placement::state::Fleet;
use crate::placement::{Attempt, Decision, Plan, profile_order, reference};

pub(super) fn attach(catalog: &Catalog, fleet: &mut Fleet<'_>, plan: &mut Plan, mi: usize) {
    let model = &catalog.models[mi];
    let m = mi as u32;
    if let Some(existing) = fleet.existing_of(&model.name) {
        plan.existing_of_explained = existing.keys().copied().filter(|&r| r < model.replicas).collect();
    }
    let placed = plan.decisions.iter().filter_map(|d| match d {
        Decision::Placed(p) => Some(p),
        Decision::Unplaced { .. } => None,
    });
    enter(fleet, catalog, m, placed);
    let order = profile_order(&model.profiles);
    let compiled: Vec<_> = model.profiles.iter().map(|p| fleet.compile(p)).collect();
    let mut mine: Vec<&Decision> = plan
        .decisions
        .iter()
        .filter(|d| match d {
            Decision::Placed(p) => p.model == m,
            Decision::Unplaced { model, .. } => *model == m,
        })
        .collect();
    mine.sort_by_key(|d| match d {
        Decision::Placed(p) => p.replica,
        Decision::Unplaced { replica, .. } => *replica,
    });
    let mut attempts: Vec<(Attempt, Option<*const crate::placement::Why>)> = Vec::new();
    for d in mine {
        match d {
            Decision::Placed(p) => {
                let c = &compiled[p.profile as usize];
                // Asked without it: the checks of every profile tried before
                // its own, and of the nodes its own passed over.
                fleet.release(p, c);
                let upto = order.iter().position(|&pi| pi == p.profile).map_or(order.len(), |i| i + 1);
                let a = reference::attempt(fleet, &compiled, &order[..upto], m, p.replica);
                fleet.commit(p, c);
                attempts.push((Attempt { placement: Some(p.clone()), ..a }, None));
            }
            Decision::Unplaced { replica, why, .. } => {
                let key = Arc::as_ptr(why);
                if let Some((last, Some(k))) = attempts.last_mut()
                    && *k == key
                    && last.through.checked_add(1) == Some(*replica)
                {
                    last.through = *replica;
                    continue;
                }
                let a = Attempt {
                    replica: *replica,
                    through: *replica,
                    placement: None,
                    rejections: why.rejections.iter().cloned().collect(),
                    tallies: why.tallies.clone(),
                };
                attempts.push((a, Some(key)));
            }
        }
    }
    plan.attempts = attempts.into_iter().map(|(a, _)| a).collect();
}
