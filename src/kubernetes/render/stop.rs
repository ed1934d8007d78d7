//! `render kubernetes --stop`: the `kubectl delete` lines for what a new
//! plan stops running of the old one.

use std::fmt::Write as _;

use super::naming::{services, workload_names};
use super::{Devices, Settings, claims};
use crate::launch::{self, Role};
use crate::plan::{Entry, Plan};

/// What `render kubernetes --stop` is told besides the plans.
pub struct Stop<'a> {
    pub namespace: Option<&'a str>,
    pub settings: &'a Settings,
    /// Which replicas ran in an NVLink domain: without it, no
    /// ComputeDomain is named (a cluster without NVIDIA's DRA driver has
    /// no such kind, and `kubectl delete` of one fails).
    pub inventory: Option<&'a crate::inventory::Inventory>,
}

/// `kubectl delete` lines for everything render wrote for what NEW stops
/// running of OLD: each stopped replica's workload, its ComputeDomain and
/// its DRA claim templates; and for a model NEW runs no replica of at
/// all, its Service, pool and route.
pub fn stop_lines(old: &Plan, new: &Plan, stopped: &std::collections::HashSet<*const Entry>, s: &Stop<'_>) -> String {
    let all: Vec<&Entry> = old.entries.iter().collect();
    let names = workload_names(&all);
    let ns = s.namespace.map(|n| format!(" -n {}", launch::quote(n))).unwrap_or_default();
    let mut out = String::new();
    for (e, name) in all.iter().zip(names) {
        if !stopped.contains(&std::ptr::from_ref(*e)) {
            continue;
        }
        let kind = if e.nodes.len() > 1 { "leaderworkerset" } else { "deployment" };
        let _ = writeln!(out, "kubectl delete {kind}/{name}{ns}");
        let nvlink = s.inventory.is_some_and(|inv| {
            let nodes: Vec<&crate::inventory::Node> =
                e.nodes.iter().filter_map(|a| crate::render::check::find(inv, &a.node)).collect();
            nodes.len() == e.nodes.len() && crate::render::nvlink(e, &nodes).is_some()
        });
        if nvlink {
            let _ = writeln!(out, "kubectl delete computedomain.resource.nvidia.com/{name}{ns} --ignore-not-found");
        }
        let gpus = e.nodes.iter().any(|a| !a.gpus.is_empty());
        if s.settings.devices == Devices::Dra && gpus {
            let roles: &[Role] = if e.nodes.len() > 1 { &[Role::Leader, Role::Worker] } else { &[Role::Single] };
            for role in roles {
                // Not every replica has one (AMD GPUs are not claimed).
                let t = claims::template_name(&name, *role);
                let _ = writeln!(out, "kubectl delete resourceclaimtemplate/{t}{ns} --ignore-not-found");
            }
        }
    }
    // What a model has once, for a model NEW no longer runs at all.
    let kept: std::collections::HashSet<&str> = new.entries.iter().map(|e| e.model.as_str()).collect();
    for (m, name) in services(&all) {
        if kept.contains(m) {
            continue;
        }
        let _ = writeln!(out, "kubectl delete service/{name}{ns}");
        if let Some(g) = &s.settings.gateway {
            let _ = writeln!(out, "kubectl delete inferencepool.inference.networking.k8s.io/{name}{ns}");
            if g.parent.is_some() {
                let _ = writeln!(out, "kubectl delete httproute.gateway.networking.k8s.io/{name}{ns}");
            }
        }
    }
    out
}
