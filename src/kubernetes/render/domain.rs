//! A replica on an NVLink domain (a GB200/GB300 NVL72 rack) gets a
//! ComputeDomain of its own (`resource.nvidia.com/v1beta1`, NVIDIA's DRA
//! driver): the driver starts IMEX daemons on the replica's nodes and
//! writes the channel claim template its pods name, so NCCL can reach the
//! other nodes' GPU memory over NVLink. Typed here, checked in the tests
//! against the CRD of a tagged driver release.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use super::Ctx;
use super::claims::channel_name;
use crate::diag::{Code, Diag};

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ComputeDomain {
    pub api_version: String,
    pub kind: String,
    pub metadata: ObjectMeta,
    pub spec: ComputeDomainSpec,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ComputeDomainSpec {
    /// 0, as the CRD recommends with `IMEXDaemonsWithDNSNames` (the
    /// driver's default), under which a count only gates the domain's
    /// status; the field is deprecated. The engines wait for their peers.
    pub num_nodes: i64,
    pub channel: Channel,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Channel {
    pub resource_claim_template: TemplateRef,
    /// `Single`: one IMEX channel, all NCCL needs.
    pub allocation_mode: String,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct TemplateRef {
    pub name: String,
}

impl Ctx<'_, '_> {
    pub(super) fn compute_domain(&self) -> ComputeDomain {
        ComputeDomain {
            api_version: "resource.nvidia.com/v1beta1".into(),
            kind: "ComputeDomain".into(),
            metadata: self.meta(Some(self.name.clone()), &[]),
            spec: ComputeDomainSpec {
                num_nodes: 0,
                channel: Channel {
                    resource_claim_template: TemplateRef { name: channel_name(&self.name) },
                    allocation_mode: "Single".into(),
                },
            },
        }
    }
}

/// Nodes that would hold two replicas' ComputeDomains: NVIDIA's driver
/// puts a node in one domain at a time, so the second replica's pods there
/// cannot start.
pub(super) fn shared_nodes(jobs: &[crate::render::Job<'_>]) -> Option<Diag> {
    let mut by_node: std::collections::BTreeMap<&str, Vec<String>> = std::collections::BTreeMap::new();
    for j in jobs.iter().filter(|j| j.nvlink.is_some()) {
        for a in &j.entry.nodes {
            by_node.entry(a.node.as_str()).or_default().push(format!("{} r{}", j.entry.model, j.entry.replica));
        }
    }
    let shared: Vec<String> =
        by_node.iter().filter(|(_, r)| r.len() > 1).map(|(n, r)| format!("{n} ({})", r.join(", "))).collect();
    (!shared.is_empty()).then(|| {
        Diag::warning(
            Code::SharedComputeDomain,
            format!(
                "{} node(s) hold two replicas on an NVLink domain, each with its ComputeDomain; a node joins one at a time, so the second one's pods there wait: {}",
                shared.len(),
                crate::diag::shorten(&shared.iter().map(String::as_str).collect::<Vec<_>>(), 5)
            ),
        )
        .help("give multi-node profiles whole nodes (gpus_per_node = the node's GPUs), so no node holds two such replicas")
    })
}
