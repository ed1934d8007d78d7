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
    /// 0: the daemons start as pods arrive (the driver's default, and
    /// the field is on its way out).
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
