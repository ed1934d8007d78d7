//! Kubernetes as the runtime of a plan: a Deployment pinned to its node for
//! each single-node replica, a LeaderWorkerSet confined to its planned
//! nodes for each multi-node one, and a Service per model in front of the
//! pods that serve. See docs/kubernetes.md and docs/serving.md.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStrategy};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, ContainerPort, EmptyDirVolumeSource, EnvVar, EnvVarSource, ExecAction, HTTPGetAction,
    HostPathVolumeSource, LocalObjectReference, ObjectFieldSelector, PodSpec, PodTemplateSpec, Probe,
    SecretKeySelector, SecurityContext, Service, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::lws::{LeaderWorkerSet, LeaderWorkerSetSpec, LeaderWorkerTemplate, WORKER_INDEX_LABEL};
use super::service::service;
use crate::diag::{Code, Diag};
use crate::launch::{self, Platform, Ports, Role, Spec, Weights, default_image};
use crate::plan::{Entry, Plan};
use crate::render::names::{self, Want, label_value};
use crate::render::out::{File, HEADER};
use crate::render::{Endpoint, Job, Resolved};

/// What `render kubernetes` is told besides the plan.
#[derive(Default)]
pub struct Settings {
    pub namespace: Option<String>,
    /// `--rdma-resource NAME[=COUNT]`: the RDMA device a multi-node pod
    /// asks for, so NCCL can use InfiniBand.
    pub rdma: Option<(String, u32)>,
    /// `--priority-class`, `--service-account`, `--image-pull-secret`: for
    /// every pod, unless its profile's `kubernetes` table says otherwise.
    pub priority_class: Option<String>,
    pub service_account: Option<String>,
    pub image_pull_secrets: Vec<String>,
}

/// A rendered object, in plan order.
pub enum Object {
    Deployment(Box<Deployment>),
    LeaderWorkerSet(Box<LeaderWorkerSet>),
    Service(Box<Service>),
}

impl Object {
    pub fn name(&self) -> &str {
        let meta = match self {
            Object::Deployment(d) => &d.metadata,
            Object::LeaderWorkerSet(l) => &l.metadata,
            Object::Service(s) => &s.metadata,
        };
        meta.name.as_deref().unwrap_or_default()
    }

    /// The model (exact, from the annotation) and replica it serves.
    pub fn replica(&self) -> (Option<String>, Option<u32>) {
        let meta = match self {
            Object::Deployment(d) => &d.metadata,
            Object::LeaderWorkerSet(l) => &l.metadata,
            Object::Service(s) => &s.metadata,
        };
        let model = meta.annotations.as_ref().and_then(|a| a.get("llmgw.io/model")).cloned();
        let replica = match self {
            Object::Service(_) => None,
            _ => meta.labels.as_ref().and_then(|l| l.get("llmgw.io/replica")).and_then(|r| r.parse().ok()),
        };
        (model, replica)
    }

    /// Its file under `-o DIR`.
    pub fn file_name(&self) -> String {
        match self {
            Object::Service(_) => format!("service-{}.yaml", self.name()),
            _ => format!("{}.yaml", self.name()),
        }
    }

    pub fn yaml(&self) -> Result<String, String> {
        let mut out = String::new();
        self.yaml_into(&mut out)?;
        Ok(out)
    }

    /// Appends the object's YAML to `out`.
    pub fn yaml_into(&self, out: &mut String) -> Result<(), String> {
        match self {
            Object::Deployment(d) => serde_saphyr::to_fmt_writer(out, d),
            Object::LeaderWorkerSet(l) => serde_saphyr::to_fmt_writer(out, l),
            Object::Service(s) => serde_saphyr::to_fmt_writer(out, s),
        }
        .map_err(|e| e.to_string())
    }
}

/// What render writes: the objects, their endpoints, and what to warn of.
pub struct Rendered<'a> {
    /// Each object as written: made into YAML as soon as it is built, so
    /// 20,000 pod specs are never all held at once.
    pub objects: Vec<Written>,
    pub endpoints: Vec<Endpoint<'a>>,
    pub warnings: Vec<Diag>,
}

/// One object, serialised: its file's text (the header line, then the
/// YAML), written once into a buffer sized for a pod spec.
pub struct Written {
    pub file_name: String,
    pub name: String,
    text: Result<String, String>,
    pub model: Option<String>,
    pub replica: Option<u32>,
}

const FILE_HEADER: &str = "kubernetes; the next render into this folder replaces or removes it.\n";

impl Written {
    fn of(o: &Object) -> Written {
        let (model, replica) = o.replica();
        let mut text = String::with_capacity(4096);
        text.push_str(HEADER);
        text.push(' ');
        text.push_str(FILE_HEADER);
        let text = o.yaml_into(&mut text).map(|()| text);
        Written { file_name: o.file_name(), name: o.name().to_string(), text, model, replica }
    }

    fn text(&self) -> Result<&str, Diag> {
        self.text.as_deref().map_err(|e| Diag::error(Code::Io, format!("cannot write {}: {e}", self.name)))
    }

    fn yaml(&self) -> Result<&str, Diag> {
        self.text().map(|t| &t[HEADER.len() + 1 + FILE_HEADER.len()..])
    }
}

impl Rendered<'_> {
    /// One YAML stream, or one file per object.
    pub fn stream(&self) -> Result<String, Diag> {
        let mut s = format!("{HEADER} kubernetes.\n");
        for o in &self.objects {
            s.push_str("---\n");
            s.push_str(o.yaml()?);
        }
        Ok(s)
    }

    pub fn files(&self) -> Result<Vec<File>, Diag> {
        self.objects
            .iter()
            .map(|o| {
                Ok(File {
                    name: o.file_name.clone(),
                    text: o.text()?.to_string(),
                    model: o.model.clone(),
                    replica: o.replica,
                })
            })
            .collect()
    }
}

/// The platform's view of a multi-node group: LWS gives every pod the
/// leader's address; its index comes from its pod label (below).
const LWS: Platform = Platform { leader: "LWS_LEADER_ADDRESS", rank: "LLMGW_NODE_RANK" };

/// Where weights fetched from the hub are kept on the node, across restarts.
const HF_CACHE: &str = "/var/cache/llmgw/huggingface";

/// Seconds a deleted pod's engine has to finish the requests in flight.
const GRACE_S: i64 = 120;

/// The workload names of a plan's replicas (Deployments up to 63
/// characters, LeaderWorkerSets up to 45: their StatefulSets' pod names
/// and revision labels append to it), the same for render and `--stop`.
pub fn workload_names(entries: &[&Entry]) -> Vec<String> {
    let wants: Vec<Want> = entries
        .iter()
        .map(|e| Want {
            identity: format!("{}/{}", e.model, e.replica),
            head: names::dns(&format!("llmgw-{}", e.model)),
            suffix: format!("-r{}", e.replica),
            max: if e.nodes.len() > 1 { 45 } else { 63 },
        })
        .collect();
    names::unique(&wants)
}

/// Label values of the models, kept apart where sanitising makes two alike.
fn model_labels<'m>(models: &[&'m str]) -> BTreeMap<&'m str, String> {
    let wants: Vec<Want> = models
        .iter()
        .map(|m| {
            let v = label_value(m);
            Want {
                identity: (*m).to_string(),
                head: if v.is_empty() { "model".into() } else { v },
                suffix: String::new(),
                max: 63,
            }
        })
        .collect();
    models.iter().copied().zip(names::unique(&wants)).collect()
}

/// The models of a plan in the order they first appear, each with its
/// Service's name: given out over every model the plan runs (rendered or
/// not), so names and labels never change with which replicas render.
pub fn services<'e>(entries: &[&'e Entry]) -> Vec<(&'e str, String)> {
    let mut models: Vec<&str> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for e in entries {
        if seen.insert(e.model.as_str()) {
            models.push(&e.model);
        }
    }
    let wants: Vec<Want> = models
        .iter()
        .map(|m| Want {
            identity: (*m).to_string(),
            head: names::dns(&format!("llmgw-{m}")),
            suffix: String::new(),
            max: 63,
        })
        .collect();
    models.into_iter().zip(names::unique(&wants)).collect()
}

/// The objects that run a resolved plan where it was placed.
pub fn render<'a>(r: &Resolved<'a>, s: &Settings) -> Rendered<'a> {
    let names = crate::render::names_of(r, workload_names);
    let all: Vec<&Entry> = r.plan.entries.iter().collect();
    let services = services(&all);
    let models: Vec<&str> = services.iter().map(|(m, _)| *m).collect();
    let labels = model_labels(&models);
    let mut out = Rendered { objects: Vec::new(), endpoints: Vec::new(), warnings: Vec::new() };
    let mut no_rdma = Vec::new();
    for (j, name) in r.jobs.iter().zip(names) {
        let ctx = Ctx { job: j, name, model_label: &labels[j.entry.model.as_str()], settings: s };
        if j.nodes.len() > 1 && !j.hcas.is_empty() && s.rdma.is_none() {
            no_rdma.push(format!("{} r{}", j.entry.model, j.entry.replica));
        }
        out.objects.push(Written::of(&ctx.object()));
    }
    // Each model's rendered replicas, grouped once (a catalog may hold
    // thousands of models).
    let mut by_model: std::collections::HashMap<&str, Vec<&Job<'a>>> = std::collections::HashMap::new();
    for j in &r.jobs {
        by_model.entry(j.entry.model.as_str()).or_default().push(j);
    }
    for (m, svc) in services {
        // A model none of whose replicas is rendered here (all pending, say)
        // keeps its Service file as it is.
        let Some(jobs) = by_model.get(m) else { continue };
        let first = Ports::defaults(jobs[0].profile).http;
        let url = match &s.namespace {
            Some(ns) => format!("http://{svc}.{ns}.svc:{first}"),
            None => format!("http://{svc}:{first}"),
        };
        for j in jobs {
            out.endpoints.push(Endpoint { model: &j.entry.model, replica: j.entry.replica, url: url.clone() });
        }
        out.objects.push(Written::of(&Object::Service(Box::new(service(
            m,
            &labels[&m],
            svc,
            first,
            s.namespace.clone(),
        )))));
    }
    if !no_rdma.is_empty() {
        out.warnings.push(
            Diag::warning(
                Code::NoRdma,
                format!(
                    "{}: multi-node pods get no RDMA device and no NCCL_IB_HCA, so NCCL falls back to TCP between them",
                    crate::report::shorten(&no_rdma.iter().map(String::as_str).collect::<Vec<_>>(), 5)
                ),
            )
            .help("give --rdma-resource with the name your cluster's RDMA device plugin advertises (e.g. rdma/ib)"),
        );
    }
    out.endpoints.sort_by(|a, b| (a.model, a.replica).cmp(&(b.model, b.replica)));
    out
}

/// `kubectl delete` lines for what NEW stops running of OLD.
pub fn stop_lines(old: &Plan, stopped: &std::collections::HashSet<*const Entry>, namespace: Option<&str>) -> String {
    let all: Vec<&Entry> = old.entries.iter().collect();
    let names = workload_names(&all);
    let ns = namespace.map(|n| format!(" -n {}", launch::quote(n))).unwrap_or_default();
    let mut out = String::new();
    for (e, name) in all.iter().zip(names) {
        if stopped.contains(&std::ptr::from_ref(*e)) {
            let kind = if e.nodes.len() > 1 { "leaderworkerset" } else { "deployment" };
            let _ = writeln!(out, "kubectl delete {kind}/{name}{ns}");
        }
    }
    out
}

/// One job and what its objects share.
pub(super) struct Ctx<'j, 'a> {
    pub(super) job: &'j Job<'a>,
    name: String,
    pub(super) model_label: &'j str,
    pub(super) settings: &'j Settings,
}

impl Ctx<'_, '_> {
    pub(super) fn entry(&self) -> &Entry {
        self.job.entry
    }

    fn labels(&self) -> BTreeMap<String, String> {
        let e = self.entry();
        [
            ("app.kubernetes.io/managed-by", "llmgw".to_string()),
            ("app.kubernetes.io/name", self.model_label.to_string()),
            ("llmgw.io/model", self.model_label.to_string()),
            ("llmgw.io/replica", e.replica.to_string()),
            ("llmgw.io/profile", label_value(&self.job.profile.name)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    fn annotations(&self) -> BTreeMap<String, String> {
        let e = self.entry();
        let mut a = BTreeMap::new();
        // The exact names, which a label value may not be able to hold.
        a.insert("llmgw.io/model".to_string(), e.model.clone());
        a.insert("llmgw.io/profile".to_string(), self.job.profile.name.clone());
        // By node id, not rank: a running replica is listed by id, and its
        // objects must not change (and restart) from one turn to the next.
        let mut gpus: Vec<String> = e
            .nodes
            .iter()
            .filter(|a| !a.gpus.is_empty())
            .map(|a| format!("{}={}", a.node, crate::report::join(&a.gpus)))
            .collect();
        gpus.sort();
        if !gpus.is_empty() {
            a.insert("llmgw.io/gpus".to_string(), gpus.join(";"));
        }
        if let Some(at) = e.nodes.first().filter(|a| !a.mig_devices.is_empty() && !a.gpus.is_empty()) {
            a.insert("llmgw.io/mig-devices".to_string(), format!("{}={}:{}", at.node, at.gpus[0], at.mig_devices[0]));
        }
        a
    }

    /// An object's metadata (`name`), or a pod template's (no name): the
    /// templates also carry the profile's own labels and annotations,
    /// under llmgw's, which win where a key is both.
    fn meta(&self, name: Option<String>, extra: &[(&str, &str)]) -> ObjectMeta {
        let knobs = &self.job.profile.serving.kubernetes;
        let template = name.is_none();
        let mut labels: BTreeMap<String, String> =
            if template { knobs.labels.iter().cloned().collect() } else { BTreeMap::new() };
        labels.extend(self.labels());
        for (k, v) in extra {
            labels.insert((*k).to_string(), (*v).to_string());
        }
        let mut annotations: BTreeMap<String, String> =
            if template { knobs.annotations.iter().cloned().collect() } else { BTreeMap::new() };
        annotations.extend(self.annotations());
        ObjectMeta {
            name,
            namespace: self.settings.namespace.clone(),
            labels: Some(labels),
            annotations: Some(annotations),
            ..ObjectMeta::default()
        }
    }

    fn object(&self) -> Object {
        let e = self.entry();
        let serves = [("llmgw.io/serves", "true")];
        if e.nodes.len() <= 1 {
            let template = PodTemplateSpec {
                metadata: Some(ObjectMeta { namespace: None, ..self.meta(None, &serves) }),
                spec: Some(self.pod(Role::Single, &[&e.nodes[0].node])),
            };
            let selector: BTreeMap<String, String> =
                self.labels().into_iter().filter(|(k, _)| k == "llmgw.io/model" || k == "llmgw.io/replica").collect();
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
        // The leader on the node of the lowest id, the same whether the
        // replica is newly placed (listed by rank) or runs (listed by id):
        // a template that changes from turn to turn restarts the group.
        let mut ids: Vec<&str> = e.nodes.iter().map(|a| a.node.as_str()).collect();
        ids.sort_unstable();
        let leader_node = [ids[0]];
        let worker_nodes: Vec<&str> = ids[1..].to_vec();
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
                    leader_template: template(Role::Leader, &leader_node, &serves),
                    worker_template: template(Role::Worker, &worker_nodes, &[]),
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
            Weights::Hub(_) => (HF_CACHE.to_string(), false, Some("DirectoryOrCreate".to_string())),
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
        PodSpec {
            affinity: Some(self.affinity(nodes)),
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
        let (command, args) = match (p.engine.name, role) {
            // The llama.cpp server image's entrypoint is the server itself,
            // and it is not on PATH there: give it arguments only.
            ("llama.cpp", Role::Single) => (None, spec.argv().map(|v| v[1..].to_vec())),
            (_, Role::Single) if p.engine.name != "ollama" => (spec.argv(), None),
            _ => (Some(vec!["/bin/sh".into(), "-c".into(), spec.script(role, &LWS)]), None),
        };
        let serves = role != Role::Worker;
        let probe = |period: i32, failures: i32| Probe {
            http_get: Some(HTTPGetAction {
                path: Some(launch::health_path(p.engine).into()),
                port: IntOrString::String("http".into()),
                ..HTTPGetAction::default()
            }),
            period_seconds: Some(period),
            failure_threshold: Some(failures),
            ..Probe::default()
        };
        // Ollama's server answers before its model is pulled: ready only
        // once the model is there under the catalog's name.
        let ready = if p.engine.name == "ollama" {
            Probe {
                exec: Some(ExecAction { command: Some(vec!["ollama".into(), "show".into(), j.entry.model.clone()]) }),
                period_seconds: Some(10),
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
            image: Some(
                p.serving.image.clone().unwrap_or_else(|| default_image(p.engine.name, !p.cpu_only()).to_string()),
            ),
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
            resources: Some(self.resources(rdma, nodes)),
            startup_probe: serves.then(|| probe(10, startup_failures)),
            readiness_probe: serves.then_some(ready),
            // Once started, a server that stops answering is restarted.
            liveness_probe: serves.then(|| probe(30, 3)),
            security_context: rdma.map(|_| SecurityContext {
                capabilities: Some(Capabilities { add: Some(vec!["IPC_LOCK".into()]), ..Default::default() }),
                ..SecurityContext::default()
            }),
            volume_mounts: Some(mounts),
            ..Container::default()
        }
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
            env.push(var("HF_HOME", HF_CACHE.into()));
            match j.profile.engine.name {
                "llama.cpp" => env.push(var("LLAMA_CACHE", format!("{HF_CACHE}/llama.cpp"))),
                "ollama" => env.push(var("OLLAMA_MODELS", format!("{HF_CACHE}/ollama"))),
                _ => {}
            }
        }
        if j.nodes.len() > 1 && j.profile.engine.name == "sglang" {
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
            env.push(var("NCCL_IB_HCA", j.hcas.join(",")));
        }
        env
    }
}
