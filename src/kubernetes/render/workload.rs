//! The workloads of a plan: a Deployment pinned to its node for each
//! single-node replica, a LeaderWorkerSet confined to its planned nodes for
//! each multi-node one, and their pods' containers.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStrategy};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, ContainerPort, EmptyDirVolumeSource, EnvVar, EnvVarSource, ExecAction, HTTPGetAction,
    HostPathVolumeSource, LocalObjectReference, ObjectFieldSelector, PodSpec, PodTemplateSpec, Probe,
    ResourceRequirements, SeccompProfile, SecretKeySelector, SecurityContext, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::{Ctx, GRACE_S, HF_CACHE, LWS, Object};
use crate::identity as keys;
use crate::kubernetes::lws::{LeaderWorkerSet, LeaderWorkerSetSpec, LeaderWorkerTemplate, WORKER_INDEX_LABEL};
use crate::launch::{self, Ports, Role, Spec, Weights};
use crate::names;

/// Failures in a row, 30 s apart, before a LeaderWorkerSet leader is
/// restarted (and with it every pod of the group): 6, three minutes.
const LEADER_LIVENESS_FAILURES: i32 = 6;

impl Ctx<'_, '_> {
    /// The pod templates' roles and the nodes each is pinned to. The
    /// leader on the node of the lowest id, the same whether the replica
    /// is newly placed (listed by rank) or runs (listed by id): a template
    /// that changes from turn to turn restarts the group.
    pub(super) fn roles(&self) -> Vec<(Role, Vec<&str>)> {
        let e = self.entry();
        if e.nodes.len() <= 1 {
            return vec![(Role::Single, vec![e.nodes[0].node.as_str()])];
        }
        let mut ids: Vec<&str> = e.nodes.iter().map(|a| a.node.as_str()).collect();
        ids.sort_unstable();
        let workers = ids.split_off(1);
        vec![(Role::Leader, ids), (Role::Worker, workers)]
    }

    /// What the workload's pods need to exist first: the replica's
    /// ComputeDomain on an NVLink domain, its pods' DRA claim templates.
    pub(super) fn devices(&self) -> Vec<Object> {
        let mut out = Vec::new();
        if self.job.nvlink.is_some() {
            out.push(Object::ComputeDomain(Box::new(self.compute_domain())));
        }
        if self.claims_gpus() {
            for (role, nodes) in self.roles() {
                out.push(Object::ClaimTemplate(Box::new(self.claim_template(role, &nodes))));
            }
        }
        out
    }

    pub(super) fn object(&self) -> Object {
        let e = self.entry();
        let serves = [(keys::SERVES, "true")];
        if e.nodes.len() <= 1 {
            let template = PodTemplateSpec {
                metadata: Some(ObjectMeta { namespace: None, ..self.meta(None, &serves) }),
                spec: Some(self.pod(Role::Single, &[&e.nodes[0].node])),
            };
            let selector: BTreeMap<String, String> =
                self.labels().into_iter().filter(|(k, _)| k == keys::MODEL || k == keys::REPLICA).collect();
            return Object::Deployment(Box::new(Deployment {
                metadata: self.meta(Some(self.name.clone()), &[]),
                spec: Some(DeploymentSpec {
                    replicas: Some(1),
                    selector: LabelSelector { match_labels: Some(selector), ..LabelSelector::default() },
                    // A surge pod pinned to the same node would wait for
                    // the GPUs its predecessor holds.
                    strategy: Some(DeploymentStrategy { type_: Some("Recreate".into()), ..Default::default() }),
                    template,
                    ..DeploymentSpec::default()
                }),
                ..Deployment::default()
            }));
        }
        let roles = self.roles();
        let (leader_node, worker_nodes) = (&roles[0].1, &roles[1].1);
        let template = |role: Role, nodes: &[&str], extra: &[(&str, &str)]| PodTemplateSpec {
            metadata: Some(ObjectMeta { namespace: None, ..self.meta(None, extra) }),
            spec: Some(self.pod(role, nodes)),
        };
        Object::LeaderWorkerSet(Box::new(LeaderWorkerSet {
            api_version: "leaderworkerset.x-k8s.io/v1".into(),
            kind: "LeaderWorkerSet".into(),
            metadata: self.meta(Some(self.name.clone()), &[]),
            spec: LeaderWorkerSetSpec {
                replicas: 1,
                leader_worker_template: LeaderWorkerTemplate {
                    size: i32::try_from(e.nodes.len()).unwrap_or(i32::MAX),
                    restart_policy: Some("RecreateGroupOnPodRestart".into()),
                    leader_template: template(Role::Leader, leader_node, &serves),
                    worker_template: template(Role::Worker, worker_nodes, &[]),
                },
            },
        }))
    }

    fn pod(&self, role: Role, nodes: &[&str]) -> PodSpec {
        let j = self.job;
        let shm = j.profile.serving.shm_gb.unwrap_or(16);
        let mut volumes = vec![Volume {
            name: "dshm".into(),
            empty_dir: Some(EmptyDirVolumeSource {
                medium: Some("Memory".into()),
                size_limit: Some(Quantity(format!("{shm}Gi"))),
            }),
            ..Volume::default()
        }];
        let mut mounts = vec![VolumeMount { name: "dshm".into(), mount_path: "/dev/shm".into(), ..Default::default() }];
        let (path, read_only, kind) = match &j.weights {
            Weights::Local(p) => (p.clone(), true, None),
            Weights::Hub(_) => (self.cache_dir(), false, Some("DirectoryOrCreate".to_string())),
        };
        volumes.push(Volume {
            name: "weights".into(),
            host_path: Some(HostPathVolumeSource { path: path.clone(), type_: kind }),
            ..Volume::default()
        });
        mounts.push(VolumeMount {
            name: "weights".into(),
            mount_path: path,
            // No default spelled out: `readOnly: false` is what a mount is.
            read_only: read_only.then_some(true),
            ..Default::default()
        });
        let tolerations = self.tolerations();
        let knobs = &j.profile.serving.kubernetes;
        let settings = self.settings;
        let secrets =
            if knobs.image_pull_secrets.is_empty() { &settings.image_pull_secrets } else { &knobs.image_pull_secrets };
        let claims = self.pod_claims(role);
        PodSpec {
            affinity: Some(self.affinity(nodes)),
            resource_claims: (!claims.is_empty()).then_some(claims),
            containers: vec![self.container(role, mounts, nodes)],
            tolerations: (!tolerations.is_empty()).then_some(tolerations),
            volumes: Some(volumes),
            priority_class_name: knobs.priority_class.clone().or_else(|| settings.priority_class.clone()),
            service_account_name: knobs.service_account.clone().or_else(|| settings.service_account.clone()),
            image_pull_secrets: (!secrets.is_empty())
                .then(|| secrets.iter().map(|s| LocalObjectReference { name: s.clone() }).collect()),
            // Time for requests in flight to finish once the engine is told
            // to stop (it is the container's main process, so it is told).
            termination_grace_period_seconds: Some(GRACE_S),
            ..PodSpec::default()
        }
    }

    fn container(&self, role: Role, mounts: Vec<VolumeMount>, nodes: &[&str]) -> Container {
        let j = self.job;
        let p = j.profile;
        let ports = Ports::defaults(p);
        let spec = Spec {
            profile: p,
            served_name: &j.entry.model,
            weights: &j.weights,
            nodes: j.nodes.len() as u32,
            ports,
            ray: j.ray,
        };
        let (command, args) = match (role, spec.argv()) {
            // The llama.cpp server image's entrypoint is the server itself,
            // and it is not on PATH there: give it arguments only.
            (Role::Single, Some(v)) if p.engine.image_entrypoint.is_some() => (None, Some(v[1..].to_vec())),
            (Role::Single, Some(v)) => (Some(v), None),
            // Ollama (no argv: its model is pulled after its server starts)
            // and every rank across nodes: the start-up script.
            _ => (Some(vec!["/bin/sh".into(), "-c".into(), spec.script(role, &LWS)]), None),
        };
        let serves = role != Role::Worker;
        // Every answer within what the engine needs: the kubelet's default
        // is 1 s, and SGLang's /health runs a generation first.
        let timeout = p.engine.probe_timeout_s;
        let probe = |period: i32, failures: i32| Probe {
            http_get: Some(HTTPGetAction {
                path: Some(p.engine.health_path.into()),
                port: IntOrString::String("http".into()),
                ..HTTPGetAction::default()
            }),
            period_seconds: Some(period),
            timeout_seconds: Some(timeout),
            failure_threshold: Some(failures),
            ..Probe::default()
        };
        // Ollama's server answers before its model is pulled: ready only
        // once the model is there under the catalog's name.
        let ready = if let Some(command) = p.engine.ready_command {
            let command = command.iter().map(ToString::to_string).chain([j.entry.model.clone()]).collect();
            Probe {
                exec: Some(ExecAction { command: Some(command) }),
                period_seconds: Some(10),
                timeout_seconds: Some(timeout),
                failure_threshold: Some(3),
                ..Probe::default()
            }
        } else {
            probe(10, 3)
        };
        // Loading weights (and waiting for the other nodes) takes long: the
        // profile's start-up time before the server must answer.
        let startup = launch::startup_timeout_s(p, j.model.weight_bytes);
        let startup_failures = i32::try_from(startup.div_ceil(10)).unwrap_or(i32::MAX);
        let rdma = self.settings.rdma.as_ref().filter(|_| j.nodes.len() > 1 && !j.hcas.is_empty());
        Container {
            name: names::dns(p.engine.name),
            image: Some(self.job.image().to_string()),
            command,
            args,
            env: Some(self.env(rdma.is_some())),
            ports: serves.then(|| {
                vec![ContainerPort {
                    container_port: i32::from(ports.http),
                    name: Some("http".into()),
                    ..Default::default()
                }]
            }),
            resources: Some(ResourceRequirements {
                claims: self.container_claims(role),
                ..self.resources(rdma, nodes)
            }),
            startup_probe: serves.then(|| probe(10, startup_failures)),
            readiness_probe: serves.then_some(ready),
            // Once started, a server that stops answering is restarted. A
            // LeaderWorkerSet leader's restart recreates the whole group, so
            // it is given at least 3 minutes of failures (a long prefill, a
            // pause), not 90 s.
            liveness_probe: serves
                .then(|| if role == Role::Leader { probe(30, LEADER_LIVENESS_FAILURES) } else { probe(30, 3) }),
            security_context: self.security_context(rdma.is_some()),
            volume_mounts: Some(mounts),
            ..Container::default()
        }
    }

    /// Where the hub's weights are kept on the node, across restarts: under
    /// the disk the inventory reports (`disk.path`, the one placement
    /// checked for room) when every node of the replica reports the same,
    /// else /var/cache/llmgw/huggingface on the root file system.
    fn cache_dir(&self) -> String {
        let paths: Vec<Option<&str>> = self
            .job
            .nodes
            .iter()
            .map(|n| n.disk.as_ref().map(|d| d.path.trim_end_matches('/')).filter(|p| p.starts_with('/')))
            .collect();
        match paths.first() {
            Some(Some(first)) if paths.iter().all(|p| p == &Some(*first)) => format!("{first}/.cache/huggingface"),
            _ => HF_CACHE.to_string(),
        }
    }

    /// What the container may do beyond the default: lock memory for RDMA
    /// (IPC_LOCK); on several AMD GPUs what vLLM's ROCm Kubernetes example
    /// sets (SYS_PTRACE, seccomp Unconfined: ROCm's peer-to-peer IPC
    /// between the GPU processes needs them). Both need the Pod Security
    /// level `privileged` (docs/kubernetes.md).
    fn security_context(&self, rdma: bool) -> Option<SecurityContext> {
        let j = self.job;
        let amd = j.vendor() == crate::vendor::Vendor::Amd && j.profile.gpus_per_node > 1;
        let mut add: Vec<String> = Vec::new();
        if rdma {
            add.push("IPC_LOCK".into());
        }
        if amd {
            add.push("SYS_PTRACE".into());
        }
        (!add.is_empty()).then(|| SecurityContext {
            capabilities: Some(Capabilities { add: Some(add), ..Default::default() }),
            seccomp_profile: amd.then(|| SeccompProfile { type_: "Unconfined".into(), ..Default::default() }),
            ..SecurityContext::default()
        })
    }

    fn env(&self, rdma: bool) -> Vec<EnvVar> {
        let j = self.job;
        let var = |name: &str, value: String| EnvVar { name: name.into(), value: Some(value), ..EnvVar::default() };
        let mut env: Vec<EnvVar> = j.profile.serving.env.iter().map(|(k, v)| var(k, v.clone())).collect();
        if let Weights::Hub(_) = j.weights {
            env.push(EnvVar {
                name: "HF_TOKEN".into(),
                value_from: Some(EnvVarSource {
                    secret_key_ref: Some(SecretKeySelector {
                        name: "llmgw-hf-token".into(),
                        key: "token".into(),
                        optional: Some(true),
                    }),
                    ..EnvVarSource::default()
                }),
                ..EnvVar::default()
            });
            let cache = self.cache_dir();
            env.push(var("HF_HOME", cache.clone()));
            if let Some(c) = &j.profile.engine.cache_env {
                env.push(var(c.var, format!("{cache}/{}", c.dir)));
            }
        }
        // Every rank-taking launcher (SGLang, vLLM's multiprocessing) reads
        // its rank from here; Ray's workers take none, and ignore it.
        if j.nodes.len() > 1 && !j.ray {
            env.push(EnvVar {
                name: LWS.rank.into(),
                value_from: Some(EnvVarSource {
                    field_ref: Some(ObjectFieldSelector {
                        field_path: format!("metadata.labels['{WORKER_INDEX_LABEL}']"),
                        ..ObjectFieldSelector::default()
                    }),
                    ..EnvVarSource::default()
                }),
                ..EnvVar::default()
            });
        }
        if rdma {
            env.push(var("NCCL_IB_HCA", launch::nccl_ib_hca(&j.hcas)));
        }
        env
    }
}
