//! Kubernetes as the runtime of a plan: a Deployment pinned to its node
//! for each single-node replica, a LeaderWorkerSet confined to its planned
//! nodes for each multi-node one. See docs/kubernetes.md for the engines'
//! commands and images, and where they come from.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Affinity, Container, EnvVar, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm,
    PodAffinityTerm, PodAntiAffinity, PodSpec, PodTemplateSpec, ResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use serde::{Deserialize, Serialize};

use super::labels::safe;
use crate::catalog::{Catalog, Profile};
use crate::diag::Diag;
use crate::inventory::Inventory;
use crate::launch::{LWS, default_image, hcas, serve};

use crate::plan::Entry as Placed;
use crate::render::resolve;

/// `leaderworkerset.x-k8s.io/v1` LeaderWorkerSet, the fields llmgw writes.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LeaderWorkerSet {
    pub api_version: String,
    pub kind: String,
    pub metadata: ObjectMeta,
    pub spec: LeaderWorkerSetSpec,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LeaderWorkerSetSpec {
    pub replicas: i32,
    pub leader_worker_template: LeaderWorkerTemplate,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LeaderWorkerTemplate {
    pub size: i32,
    pub leader_template: PodTemplateSpec,
    pub worker_template: PodTemplateSpec,
}

/// A rendered object, in plan order.
pub enum Object {
    Deployment(Box<Deployment>),
    LeaderWorkerSet(Box<LeaderWorkerSet>),
}

impl Object {
    pub fn name(&self) -> &str {
        match self {
            Object::Deployment(d) => d.metadata.name.as_deref().unwrap_or_default(),
            Object::LeaderWorkerSet(l) => l.metadata.name.as_deref().unwrap_or_default(),
        }
    }

    pub fn yaml(&self) -> Result<String, String> {
        match self {
            Object::Deployment(d) => serde_saphyr::to_string(d),
            Object::LeaderWorkerSet(l) => serde_saphyr::to_string(l),
        }
        .map_err(|e| e.to_string())
    }
}

/// A DNS-1123 label from model and replica: `llmgw-llama-3-1-70b-r0`.
fn dns_name(model: &str, replica: u32) -> String {
    let mut s: String = format!("llmgw-{model}")
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    while s.contains("--") {
        s = s.replace("--", "-");
    }
    let suffix = format!("-r{replica}");
    s.truncate(63 - suffix.len());
    format!("{}{suffix}", s.trim_end_matches('-'))
}

/// FNV-1a, for the short hash that keeps two sanitised names apart.
fn short_hash(s: &str) -> String {
    let h = s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    format!("{:06x}", h & 0xff_ffff)
}

/// The objects that run a plan where it was placed.
pub fn render(plan: &[Placed], cat: &Catalog, inv: &Inventory) -> Result<Vec<Object>, Vec<Diag>> {
    let mut names: BTreeMap<String, usize> = BTreeMap::new();
    for p in plan {
        *names.entry(dns_name(&p.model, p.replica)).or_default() += 1;
    }
    let resolved = resolve(plan, cat, inv)?;
    let mut out = Vec::with_capacity(resolved.len());
    for (p, model, prof) in resolved {
        let mut name = dns_name(&p.model, p.replica);
        if names[&name] > 1 {
            // Sanitising made two names equal: keep them apart.
            let hash = short_hash(&format!("{}/{}", p.model, p.replica));
            name = format!("{}-{hash}", &name[..name.len().min(63 - 7)]);
        }
        out.push(object(p, prof, model.source.as_deref(), inv, name));
    }
    Ok(out)
}

fn object(p: &Placed, prof: &Profile, model_source: Option<&str>, inv: &Inventory, name: String) -> Object {
    let source = prof.source.as_deref().or(model_source).unwrap_or(&p.model);
    let labels: BTreeMap<String, String> =
        [("llmgw.io/model".to_string(), safe(&p.model)), ("llmgw.io/replica".to_string(), p.replica.to_string())]
            .into();
    let mut annotations: BTreeMap<String, String> = BTreeMap::new();
    // The exact model name, which a label may not be able to hold.
    annotations.insert("llmgw.io/model".into(), p.model.clone());
    let gpus: Vec<String> = p
        .nodes
        .iter()
        .filter(|a| !a.gpus.is_empty())
        .map(|a| format!("{}={}", a.node, crate::report::join(&a.gpus)))
        .collect();
    if !gpus.is_empty() {
        annotations.insert("llmgw.io/gpus".into(), gpus.join(";"));
    }
    let mig = p.nodes.first().filter(|a| !a.mig_devices.is_empty());
    if let Some(a) = mig {
        annotations.insert("llmgw.io/mig-devices".into(), format!("{}={}:{}", a.node, a.gpus[0], a.mig_devices[0]));
    }
    let meta = |labels: &BTreeMap<String, String>| ObjectMeta {
        labels: Some(labels.clone()),
        annotations: Some(annotations.clone()),
        ..ObjectMeta::default()
    };
    let limits = limits(p, prof, inv);
    let env = env(p, prof);
    let nodes = p.nodes.len() as u32;
    let container = |leader: bool| Container {
        name: safe(prof.engine.name).replace('.', "-"),
        image: Some(
            prof.serving.image.clone().unwrap_or_else(|| default_image(prof.engine.name, !prof.cpu_only()).to_string()),
        ),
        command: Some(vec!["sh".into(), "-c".into(), serve(prof, source, nodes, leader, &LWS)]),
        env: (!env.is_empty()).then(|| env.clone()),
        resources: (!limits.is_empty())
            .then(|| ResourceRequirements { limits: Some(limits.clone()), ..ResourceRequirements::default() }),
        ..Container::default()
    };
    if nodes <= 1 {
        let spec = PodSpec {
            node_selector: Some([("kubernetes.io/hostname".to_string(), p.nodes[0].node.clone())].into()),
            containers: vec![container(true)],
            ..PodSpec::default()
        };
        return Object::Deployment(Box::new(Deployment {
            metadata: ObjectMeta { name: Some(name), ..meta(&labels) },
            spec: Some(DeploymentSpec {
                replicas: Some(1),
                selector: LabelSelector { match_labels: Some(labels.clone()), ..LabelSelector::default() },
                template: PodTemplateSpec { metadata: Some(meta(&labels)), spec: Some(spec) },
                ..DeploymentSpec::default()
            }),
            ..Deployment::default()
        }));
    }
    let affinity = affinity(p, &labels);
    let template = |leader: bool| PodTemplateSpec {
        metadata: Some(meta(&labels)),
        spec: Some(PodSpec {
            affinity: Some(affinity.clone()),
            containers: vec![container(leader)],
            ..PodSpec::default()
        }),
    };
    Object::LeaderWorkerSet(Box::new(LeaderWorkerSet {
        api_version: "leaderworkerset.x-k8s.io/v1".into(),
        kind: "LeaderWorkerSet".into(),
        metadata: ObjectMeta { name: Some(name), ..meta(&labels) },
        spec: LeaderWorkerSetSpec {
            replicas: 1,
            leader_worker_template: LeaderWorkerTemplate {
                size: nodes as i32,
                leader_template: template(true),
                worker_template: template(false),
            },
        },
    }))
}

/// GPU limits: the GPU count, or one MIG device of the profile (as
/// `nvidia.com/mig-<profile>` under the mixed strategy, a GPU under single);
/// none for a CPU replica.
fn limits(p: &Placed, prof: &Profile, inv: &Inventory) -> BTreeMap<String, Quantity> {
    let mut limits: BTreeMap<String, Quantity> = BTreeMap::new();
    let first = &p.nodes[0];
    match (&prof.mig_profile, first.gpus.len()) {
        (Some(m), _) => {
            let node = inv.nodes.iter().find(|n| n.id == first.node);
            let single = node.and_then(|n| n.labels.get("nvidia.com/mig.strategy")).is_some_and(|s| s == "single");
            let key = if single { "nvidia.com/gpu".to_string() } else { format!("nvidia.com/mig-{m}") };
            limits.insert(key, Quantity("1".into()));
        }
        (None, 0) => {}
        (None, n) => {
            limits.insert("nvidia.com/gpu".into(), Quantity(n.to_string()));
        }
    }
    limits
}

/// The profile's environment, and NCCL_IB_HCA with the placement's adapters.
fn env(p: &Placed, prof: &Profile) -> Vec<EnvVar> {
    let hcas = hcas(p);
    let mut env: Vec<EnvVar> = prof
        .serving
        .env
        .iter()
        .map(|(k, v)| EnvVar { name: k.clone(), value: Some(v.clone()), ..EnvVar::default() })
        .collect();
    if !hcas.is_empty() {
        env.push(EnvVar { name: "NCCL_IB_HCA".into(), value: Some(hcas.join(",")), ..EnvVar::default() });
    }
    env
}

/// Only on the planned nodes, one pod a node.
fn affinity(p: &Placed, labels: &BTreeMap<String, String>) -> Affinity {
    let hosts: Vec<String> = p.nodes.iter().map(|a| a.node.clone()).collect();
    Affinity {
        node_affinity: Some(NodeAffinity {
            required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                node_selector_terms: vec![NodeSelectorTerm {
                    match_expressions: Some(vec![NodeSelectorRequirement {
                        key: "kubernetes.io/hostname".into(),
                        operator: "In".into(),
                        values: Some(hosts),
                    }]),
                    ..NodeSelectorTerm::default()
                }],
            }),
            ..NodeAffinity::default()
        }),
        pod_anti_affinity: Some(PodAntiAffinity {
            required_during_scheduling_ignored_during_execution: Some(vec![PodAffinityTerm {
                label_selector: Some(LabelSelector { match_labels: Some(labels.clone()), ..LabelSelector::default() }),
                topology_key: "kubernetes.io/hostname".into(),
                ..PodAffinityTerm::default()
            }]),
            ..PodAntiAffinity::default()
        }),
        ..Affinity::default()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_are_dns_labels() {
        assert_eq!(super::dns_name("llama-3.1-70b", 0), "llmgw-llama-3-1-70b-r0");
        assert_eq!(super::dns_name("Qwen/Qwen2.5_72B", 12), "llmgw-qwen-qwen2-5-72b-r12");
        let long = super::dns_name(&"x".repeat(200), 3);
        assert!(long.len() <= 63 && long.ends_with("-r3"), "{long}");
        assert_ne!(super::short_hash("a/0"), super::short_hash("A/0"));
    }
}
