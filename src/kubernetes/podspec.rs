//! A pod as the import reads it: only the fields it uses, read straight
//! from the pod's text. k8s-openapi's `Pod` keeps every field of every
//! container (a Pod of 150,000 containers, 2 MB of JSON, took 684 MB as
//! values and typed containers); this keeps what a container asks for.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::import::file::{Kinded, Text};

/// Labels, annotations, quantities: strings by key.
pub type Strings = BTreeMap<String, Text>;

#[derive(Deserialize, Default)]
pub struct Pod {
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub metadata: Meta,
    #[serde(default)]
    pub spec: Option<Spec>,
    #[serde(default)]
    pub status: Option<Status>,
}

impl Kinded for Pod {
    fn kind(&self) -> Option<&str> {
        self.kind.as_deref()
    }
}

#[derive(Deserialize, Default)]
pub struct Meta {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub namespace: Option<String>,
    #[serde(default)]
    pub labels: Option<Strings>,
    #[serde(default)]
    pub annotations: Option<Strings>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Spec {
    #[serde(default)]
    pub node_name: Option<String>,
    #[serde(default)]
    pub containers: Vec<Container>,
    #[serde(default)]
    pub init_containers: Option<Vec<Container>>,
    #[serde(default)]
    pub overhead: Option<Strings>,
    #[serde(default)]
    pub node_selector: Option<Strings>,
    #[serde(default)]
    pub affinity: Option<Affinity>,
    #[serde(default)]
    pub resource_claims: Option<Vec<PodClaim>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Container {
    #[serde(default)]
    pub resources: Option<Resources>,
    #[serde(default)]
    pub restart_policy: Option<String>,
}

#[derive(Deserialize, Default)]
pub struct Resources {
    #[serde(default)]
    pub limits: Option<Strings>,
    #[serde(default)]
    pub requests: Option<Strings>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Affinity {
    #[serde(default)]
    pub node_affinity: Option<NodeAffinity>,
}

#[derive(Deserialize, Default)]
pub struct NodeAffinity {
    #[serde(default, rename = "requiredDuringSchedulingIgnoredDuringExecution")]
    pub required: Option<NodeSelector>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct NodeSelector {
    #[serde(default)]
    pub node_selector_terms: Vec<Term>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Term {
    #[serde(default)]
    pub match_fields: Option<Vec<Requirement>>,
    #[serde(default)]
    pub match_expressions: Option<Vec<Requirement>>,
}

#[derive(Deserialize, Default)]
pub struct Requirement {
    #[serde(default)]
    pub key: String,
    #[serde(default)]
    pub operator: String,
    #[serde(default)]
    pub values: Option<Vec<String>>,
}

/// A claim a pod names (`spec.resourceClaims[]`): DRA devices.
#[derive(Deserialize, Default)]
pub struct PodClaim {
    #[serde(default)]
    pub name: String,
}

#[derive(Deserialize, Default)]
pub struct Status {
    #[serde(default)]
    pub phase: Option<String>,
}

/// The strings of a map, as plain `String`s.
pub fn plain(m: Option<&Strings>) -> BTreeMap<String, String> {
    m.into_iter().flatten().map(|(k, v)| (k.clone(), v.0.clone())).collect()
}
