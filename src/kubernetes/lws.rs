//! `leaderworkerset.x-k8s.io/v1` LeaderWorkerSet: the fields llmgw writes,
//! typed, so that what render writes is read back and checked. Field names
//! and values as in the CRD of kubernetes-sigs/lws (tests validate every
//! rendered object against a vendored copy of its OpenAPI schema).

use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

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
    /// `RecreateGroupOnPodRestart`: a multi-node engine cannot go on with
    /// one of its pods gone, so the whole group starts again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<String>,
    pub leader_template: PodTemplateSpec,
    pub worker_template: PodTemplateSpec,
}

/// The label LWS puts on every pod: its index in the group (0 = leader).
/// Read through the downward API, it works on every LWS release (the
/// LWS_WORKER_INDEX variable only came with v0.6.0).
pub const WORKER_INDEX_LABEL: &str = "leaderworkerset.sigs.k8s.io/worker-index";
