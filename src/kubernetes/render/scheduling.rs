//! Where a rendered pod may run and what it asks of its node: pinned to
//! its planned nodes by name, one pod of a group a node, tolerating what
//! placement assumed it tolerates, and requesting exactly the CPUs and
//! memory the plan gives it there.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PodAffinityTerm, PodAntiAffinity,
    ResourceRequirements, Toleration,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::Ctx;
use crate::identity as keys;

impl Ctx<'_, '_> {
    /// The profile's tolerations, and on a GPU pod its GPUs' resource
    /// (`nvidia.com/gpu` or `amd.com/gpu`; Exists, any effect): the
    /// toleration placement assumed, written out for clusters that do not
    /// add it themselves.
    pub(super) fn tolerations(&self) -> Vec<Toleration> {
        let p = self.job.profile;
        let mut out: Vec<Toleration> = p
            .tolerations
            .iter()
            .map(|t| Toleration {
                key: Some(t.key.clone()),
                operator: Some(if t.value.is_some() { "Equal" } else { "Exists" }.into()),
                value: t.value.clone(),
                effect: t.effect.map(|e| e.as_str().to_string()),
                ..Toleration::default()
            })
            .collect();
        // The taint of the GPUs' own resource (`nvidia.com/gpu`,
        // `amd.com/gpu`), the one placement lets a GPU replica past: never
        // another vendor's, which would put it where it was not placed.
        let gpu_key = self.job.vendor().resource();
        if !p.cpu_only() && !p.tolerations.iter().any(|t| t.key == gpu_key && t.value.is_none() && t.effect.is_none()) {
            out.push(Toleration {
                key: Some(gpu_key.into()),
                operator: Some("Exists".into()),
                ..Toleration::default()
            });
        }
        out
    }

    /// Limits (GPUs, RDMA) and requests (CPUs, memory, also as the memory
    /// limit), for the pods pinned to `nodes`: what the plan asks of them.
    pub(super) fn resources(&self, rdma: Option<&(String, u32)>, nodes: &[&str]) -> ResourceRequirements {
        let j = self.job;
        let p = j.profile;
        let first = &j.entry.nodes[0];
        let mut limits: BTreeMap<String, Quantity> = BTreeMap::new();
        let mut requests: BTreeMap<String, Quantity> = BTreeMap::new();
        match (&p.mig_profile, first.gpus.len()) {
            // The pod's claim gives it its GPUs.
            _ if self.claims_gpus() => {}
            (Some(m), _) => {
                let single = j.nodes[0].labels.get("nvidia.com/mig.strategy").is_some_and(|s| s == "single");
                let key = if single { crate::vendor::NVIDIA_GPU.to_string() } else { format!("nvidia.com/mig-{m}") };
                limits.insert(key, Quantity("1".into()));
            }
            (None, 0) => {}
            (None, n) => {
                // Each vendor's device plugin offers its GPUs under its own name.
                let resource = j.vendor().resource();
                limits.insert(resource.into(), Quantity(n.to_string()));
            }
        }
        if let Some((name, count)) = rdma {
            limits.insert(name.clone(), Quantity(count.to_string()));
        }
        let mine: Vec<crate::render::Resources> = j
            .entry
            .nodes
            .iter()
            .zip(&j.per_node)
            .filter(|(a, _)| nodes.contains(&a.node.as_str()))
            .map(|(_, r)| *r)
            .collect();
        let asked = crate::render::least(&mine);
        if let Some(m) = asked.millicpus {
            let q = if m % 1000 == 0 { (m / 1000).to_string() } else { format!("{m}m") };
            requests.insert("cpu".into(), Quantity(q));
        }
        if let Some(mib) = asked.memory_mib {
            requests.insert("memory".into(), Quantity(format!("{mib}Mi")));
            limits.insert("memory".into(), Quantity(format!("{mib}Mi")));
        }
        ResourceRequirements {
            limits: (!limits.is_empty()).then_some(limits),
            requests: (!requests.is_empty()).then_some(requests),
            ..ResourceRequirements::default()
        }
    }

    /// Only on the planned nodes, by name (`metadata.name`: on several
    /// clouds the hostname label differs from it), one pod of the group a
    /// node.
    pub(super) fn affinity(&self, nodes: &[&str]) -> Affinity {
        let e = self.entry();
        let group: BTreeMap<String, String> = [
            (keys::MODEL.to_string(), self.model_label.to_string()),
            (keys::REPLICA.to_string(), e.replica.to_string()),
        ]
        .into();
        Affinity {
            node_affinity: Some(NodeAffinity {
                // One term per node: the API allows a node field selector
                // exactly one value ("must be only one value when `operator`
                // is 'In' or 'NotIn' for node field selector"), and terms
                // are ORed, so a worker template pinned to two nodes needs two.
                required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                    node_selector_terms: nodes
                        .iter()
                        .map(|n| NodeSelectorTerm {
                            match_fields: Some(vec![NodeSelectorRequirement {
                                key: "metadata.name".into(),
                                operator: "In".into(),
                                values: Some(vec![(*n).to_string()]),
                            }]),
                            ..NodeSelectorTerm::default()
                        })
                        .collect(),
                }),
                ..NodeAffinity::default()
            }),
            pod_anti_affinity: (e.nodes.len() > 1).then(|| PodAntiAffinity {
                required_during_scheduling_ignored_during_execution: Some(vec![PodAffinityTerm {
                    label_selector: Some(LabelSelector { match_labels: Some(group), ..LabelSelector::default() }),
                    topology_key: "kubernetes.io/hostname".into(),
                    ..PodAffinityTerm::default()
                }]),
                ..PodAntiAffinity::default()
            }),
            ..Affinity::default()
        }
    }
}
