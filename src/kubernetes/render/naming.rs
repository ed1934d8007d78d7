//! What a plan's objects and their files are called: workload and Service
//! names and model label values, given out over every replica and model
//! the plan runs (rendered or not), so a name never changes with which
//! replicas render, and `--stop` finds the same names from the plan
//! alone; and the file each object is written to under `-o DIR`.

use std::collections::BTreeMap;

use super::{claims, gateway};
use crate::launch::Role;
use crate::names::{self, Want, label_value};
use crate::plan::Entry;

/// What each kind of object's file name begins with under `-o DIR`.
pub(super) const WORKLOAD: &str = "";
pub(super) const SERVICE: &str = "service-";
pub(super) const CLAIM_TEMPLATE: &str = "resourceclaimtemplate-";
pub(super) const COMPUTE_DOMAIN: &str = "computedomain-";
pub(super) const POOL: &str = "inferencepool-";
pub(super) const ROUTE: &str = "httproute-";

/// The file of an object of a kind (its prefix) and name.
pub(super) fn file_name(kind: &str, name: &str) -> String {
    format!("{kind}{name}.yaml")
}

/// The files a replica's objects are written to under `-o DIR`, by its
/// workload's name: its workload, and the claim templates and
/// ComputeDomain it may have.
pub(super) fn replica_files(workload: &str) -> Vec<String> {
    let mut out = vec![file_name(WORKLOAD, workload), file_name(COMPUTE_DOMAIN, workload)];
    for role in [Role::Single, Role::Leader, Role::Worker] {
        out.push(file_name(CLAIM_TEMPLATE, &claims::template_name(workload, role)));
    }
    out
}

/// The files a model's objects are written to under `-o DIR`, by its
/// Service's name: its Service, and its pool and route when they are
/// asked for.
pub(super) fn model_files(service: &str, gateway: Option<&gateway::Gateway>) -> Vec<String> {
    let mut out = vec![file_name(SERVICE, service)];
    if let Some(g) = gateway {
        out.push(file_name(POOL, service));
        if g.parent.is_some() {
            out.push(file_name(ROUTE, service));
        }
    }
    out
}

/// The workload names of a plan's replicas (Deployments up to 63
/// characters, LeaderWorkerSets up to 45: their StatefulSets' pod names
/// and revision labels append to it), the same for render and `--stop`.
pub(super) fn workload_names(entries: &[&Entry]) -> Vec<String> {
    let wants: Vec<Want> = entries
        .iter()
        .map(|e| Want {
            identity: format!("{}/{}", e.model, e.replica),
            head: names::dns(&format!("llmgw-{}", e.model)),
            suffix: format!("-r{}", e.replica),
            max: if e.nodes.len() > 1 { 45 } else { 63 },
            running: e.kind == crate::plan::Kind::Existing,
        })
        .collect();
    names::unique(&wants)
}

/// Label values of the models, kept apart where sanitising makes two alike
/// (a model that runs keeps its value, as its Deployment keeps its name).
pub(super) fn model_labels<'m>(models: &[(&'m str, bool)]) -> BTreeMap<&'m str, String> {
    let wants: Vec<Want> = models
        .iter()
        .map(|(m, running)| {
            let v = label_value(m);
            Want {
                identity: (*m).to_string(),
                head: if v.is_empty() { "model".into() } else { v },
                suffix: String::new(),
                max: 63,
                running: *running,
            }
        })
        .collect();
    let models: Vec<&str> = models.iter().map(|(m, _)| *m).collect();
    models.iter().copied().zip(names::unique(&wants)).collect()
}

/// The models of a plan in the order they first appear, each with its
/// Service's name: given out over every model the plan runs (rendered or
/// not), so names and labels never change with which replicas render.
pub(super) fn services<'e>(entries: &[&'e Entry]) -> Vec<(&'e str, String)> {
    let models = running_models(entries);
    let wants: Vec<Want> = models
        .iter()
        .map(|(m, running)| Want {
            identity: (*m).to_string(),
            head: names::dns(&format!("llmgw-{m}")),
            suffix: String::new(),
            max: 63,
            running: *running,
        })
        .collect();
    let models: Vec<&str> = models.into_iter().map(|(m, _)| m).collect();
    models.into_iter().zip(names::unique(&wants)).collect()
}

/// The models of a plan in the order they first appear, each with whether
/// a replica of it runs already.
pub(super) fn running_models<'e>(entries: &[&'e Entry]) -> Vec<(&'e str, bool)> {
    let mut models: Vec<(&str, bool)> = Vec::new();
    let mut at: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for e in entries {
        let running = e.kind == crate::plan::Kind::Existing;
        match at.get(e.model.as_str()) {
            Some(&i) => models[i].1 |= running,
            None => {
                at.insert(&e.model, models.len());
                models.push((&e.model, running));
            }
        }
    }
    models
}
