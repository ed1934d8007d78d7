//! Exact devices through Dynamic Resource Allocation: per pod template a
//! ResourceClaimTemplate whose CEL selector admits only the planned GPUs
//! (by UUID: CEL sees no device names) or the planned MIG device, so the
//! scheduler gives the pod the GPUs the plan chose and no others.

use std::fmt::Write as _;

use k8s_openapi::api::core::v1::{PodResourceClaim, ResourceClaim};
use k8s_openapi::api::resource::v1::{
    CELDeviceSelector, DeviceClaim, DeviceRequest, DeviceSelector, ExactDeviceRequest, ResourceClaimSpec,
    ResourceClaimTemplate, ResourceClaimTemplateSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{Ctx, Devices};
use crate::diag::{Code, Diag};
use crate::identity as keys;
use crate::launch::Role;
use crate::render::{Job, Resolved};

/// The name of the GPU request in every claim, and of the claim in a pod.
const GPUS: &str = "gpus";
/// The name of the IMEX channel claim in a pod on an NVLink domain.
const IMEX: &str = "imex";
/// The attributes of NVIDIA's DRA driver, as CEL reaches them.
const ATTRS: &str = "device.attributes[\"gpu.nvidia.com\"]";

/// Why a replica's GPUs cannot be pinned: a planned GPU (or the GPU of a
/// planned MIG device without a UUID of its own) has no `uuid`.
pub fn unpinnable(r: &Resolved<'_>) -> Vec<Diag> {
    let mut out = Vec::new();
    for j in r.jobs.iter().filter(|j| j.vendor() == crate::vendor::Vendor::Nvidia && !j.profile.cpu_only()) {
        for (at, node) in j.entry.nodes.iter().zip(&j.nodes) {
            if at.gpus.is_empty() {
                out.push(
                    Diag::error(
                        Code::NoUuid,
                        format!(
                            "{} r{}: which GPUs it holds on {} is not known, so a DRA claim cannot pin them",
                            j.entry.model, j.entry.replica, node.id
                        ),
                    )
                    .help("import with --resource-slices and --claims: the claims say which devices each replica was given"),
                );
            }
            for g in &at.gpus {
                let Some(gpu) = node.gpu_position(*g).map(|i| &node.gpus[i]) else { continue };
                let mig_uuid = at
                    .mig_devices
                    .first()
                    .and_then(|m| gpu.mig_devices.iter().find(|d| d.index == *m))
                    .is_some_and(|d| d.uuid.is_some());
                if gpu.uuid.is_none() && !mig_uuid {
                    out.push(
                        Diag::error(
                            Code::NoUuid,
                            format!(
                                "{} r{}: GPU {g} of {} has no uuid, so a DRA claim cannot pin it",
                                j.entry.model, j.entry.replica, node.id
                            ),
                        )
                        .help("import the node with --resource-slices (or run discover on it): both give each GPU's uuid; or render with --devices device-plugin"),
                    );
                }
            }
        }
    }
    out
}

/// The longest CEL selector expression the API takes
/// (`CELSelectorExpressionMaxLength` = 10 * 1024 in Kubernetes'
/// `staging/src/k8s.io/api/resource/v1/types.go`; the validation compares
/// the expression's length in bytes and refuses the object past it).
pub const MAX_CEL: usize = 10 * 1024;

/// Replicas whose claim templates would carry a selector past the API's
/// limit: a worker template pinned to 32 nodes of eight GPUs lists 248
/// UUIDs, 11 KB. The API refuses such an object, so render refuses it
/// first (nothing written). LeaderWorkerSet workers share one pod template
/// and so one claim template: it cannot be split by node.
pub fn too_long(r: &Resolved<'_>, s: &super::Settings) -> Vec<Diag> {
    let mut out = Vec::new();
    for j in &r.jobs {
        let ctx = Ctx { job: j, name: String::new(), model_label: "", settings: s };
        if !ctx.claims_gpus() {
            continue;
        }
        for (role, nodes) in ctx.roles() {
            let (cel, _) = ctx.selector(&nodes);
            if cel.len() > MAX_CEL {
                let who = match role {
                    Role::Single => "its pod's",
                    Role::Leader => "its leader's",
                    Role::Worker => "its workers'",
                };
                out.push(
                    Diag::error(
                        Code::CelTooLong,
                        format!(
                            "{} r{}: {who} DRA claim template would select its {} nodes' GPUs with a CEL expression of {} bytes, more than the {MAX_CEL} the API takes",
                            j.entry.model,
                            j.entry.replica,
                            nodes.len(),
                            cel.len()
                        ),
                    )
                    .help("the workers of a LeaderWorkerSet share one claim template; render this replica with --devices device-plugin, or give it fewer, larger nodes"),
                );
            }
        }
    }
    out
}

/// A string as a CEL literal.
fn literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The claim template's name for the pods of `role`.
pub(super) fn template_name(workload: &str, role: Role) -> String {
    match role {
        Role::Single => format!("{workload}-{GPUS}"),
        Role::Leader => format!("{workload}-leader-{GPUS}"),
        Role::Worker => format!("{workload}-worker-{GPUS}"),
    }
}

/// The ComputeDomain's channel claim template (the driver writes it).
pub(super) fn channel_name(workload: &str) -> String {
    format!("{workload}-{IMEX}")
}

impl Ctx<'_, '_> {
    /// Whether this replica's pods claim their GPUs through DRA: NVIDIA's
    /// driver publishes NVIDIA GPUs only, so AMD GPUs keep their device
    /// plugin's limits.
    pub(super) fn claims_gpus(&self) -> bool {
        self.settings.devices == Devices::Dra
            && !self.job.profile.cpu_only()
            && self.job.vendor() == crate::vendor::Vendor::Nvidia
    }

    /// The CEL selector and device class for the GPUs the pods pinned to
    /// `nodes` are to get.
    fn selector(&self, nodes: &[&str]) -> (String, &'static str) {
        let j: &Job<'_> = self.job;
        let e = self.entry();
        if j.profile.mig_profile.is_some() {
            let at = &e.nodes[0];
            let node = j.nodes[0];
            let gpu = at.gpus.first().and_then(|g| node.gpu_position(*g)).map(|i| &node.gpus[i]);
            let device = gpu.and_then(|g| g.mig_devices.iter().find(|d| Some(&d.index) == at.mig_devices.first()));
            let cel = match (device.and_then(|d| d.uuid.as_deref()), gpu.and_then(|g| g.uuid.as_deref())) {
                (Some(uuid), _) => format!("{ATTRS}.uuid == {}", literal(uuid)),
                (None, parent) => format!(
                    "{ATTRS}.parentUUID == {} && {ATTRS}.profile == {}",
                    literal(parent.unwrap_or_default()),
                    literal(device.map_or("", |d| d.profile.as_str()))
                ),
            };
            return (cel, "mig.nvidia.com");
        }
        let mut uuids = Vec::new();
        for (at, node) in e.nodes.iter().zip(&j.nodes).filter(|(a, _)| nodes.contains(&a.node.as_str())) {
            for g in &at.gpus {
                if let Some(uuid) = node.gpu_position(*g).and_then(|i| node.gpus[i].uuid.as_deref()) {
                    uuids.push(literal(uuid));
                }
            }
        }
        // A set: the same whichever order the plan lists the GPUs in.
        uuids.sort_unstable();
        (format!("{ATTRS}.uuid in [{}]", uuids.join(", ")), "gpu.nvidia.com")
    }

    /// The claim template of the pods of `role`, pinned to `nodes`.
    pub(super) fn claim_template(&self, role: Role, nodes: &[&str]) -> ResourceClaimTemplate {
        let (cel, class) = self.selector(nodes);
        let count = if self.job.profile.mig_profile.is_some() { 1 } else { i64::from(self.job.profile.gpus_per_node) };
        // Who it serves, and nothing that changes while the replica runs: a
        // template's spec cannot be changed once it exists, and its
        // metadata is copied onto each claim made from it (the import
        // knows whose GPUs a claim holds by it).
        let labels = Some(self.labels());
        let annotations = Some(
            [(keys::MODEL, &self.entry().model), (keys::PROFILE, &self.job.profile.name)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        );
        ResourceClaimTemplate {
            metadata: ObjectMeta {
                name: Some(template_name(&self.name, role)),
                namespace: self.settings.namespace.clone(),
                labels: labels.clone(),
                annotations: annotations.clone(),
                ..ObjectMeta::default()
            },
            spec: ResourceClaimTemplateSpec {
                metadata: Some(ObjectMeta { labels, annotations, ..ObjectMeta::default() }),
                spec: ResourceClaimSpec {
                    devices: Some(DeviceClaim {
                        requests: Some(vec![DeviceRequest {
                            name: GPUS.into(),
                            exactly: Some(ExactDeviceRequest {
                                device_class_name: class.into(),
                                allocation_mode: Some("ExactCount".into()),
                                count: Some(count),
                                selectors: Some(vec![DeviceSelector {
                                    cel: Some(CELDeviceSelector { expression: cel }),
                                }]),
                                ..ExactDeviceRequest::default()
                            }),
                            ..DeviceRequest::default()
                        }]),
                        ..DeviceClaim::default()
                    }),
                },
            },
        }
    }

    /// The claims a pod of `role` names: its GPUs, and on an NVLink domain
    /// the IMEX channel of the replica's ComputeDomain.
    pub(super) fn pod_claims(&self, role: Role) -> Vec<PodResourceClaim> {
        let mut out = Vec::new();
        if self.claims_gpus() {
            out.push(PodResourceClaim {
                name: GPUS.into(),
                resource_claim_template_name: Some(template_name(&self.name, role)),
                ..PodResourceClaim::default()
            });
        }
        if self.job.nvlink.is_some() {
            out.push(PodResourceClaim {
                name: IMEX.into(),
                resource_claim_template_name: Some(channel_name(&self.name)),
                ..PodResourceClaim::default()
            });
        }
        out
    }

    /// The same claims, as the container names them.
    pub(super) fn container_claims(&self, role: Role) -> Option<Vec<ResourceClaim>> {
        let claims: Vec<ResourceClaim> =
            self.pod_claims(role).into_iter().map(|c| ResourceClaim { name: c.name, request: None }).collect();
        (!claims.is_empty()).then_some(claims)
    }
}

#[cfg(test)]
mod tests {
    use super::literal;

    #[test]
    fn a_cel_literal_escapes_what_would_end_it() {
        assert_eq!(literal("GPU-1"), "\"GPU-1\"");
        assert_eq!(literal("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
    }
}
