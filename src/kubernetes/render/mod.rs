//! Kubernetes as the runtime of a plan: a Deployment pinned to its node for
//! each single-node replica, a LeaderWorkerSet confined to its planned
//! nodes for each multi-node one, and a Service per model in front of the
//! pods that serve. Each kind of object has its own room: the workloads in
//! `workload` (where they may run and what they ask for in `scheduling`),
//! the Services in `service`, DRA claim templates in `claims`, NVLink
//! domains' ComputeDomains in `domain`, the InferencePools and HTTPRoutes
//! a gateway routes by in `gateway`; what they and their files are called
//! in `naming`, and `--stop`'s delete lines in `stop`. See
//! docs/kubernetes.md and docs/serving.md.

pub mod claims;
pub mod domain;
pub mod gateway;
mod naming;
mod scheduling;
mod service;
mod stop;
mod workload;

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::resource::v1::ResourceClaimTemplate;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::lws::LeaderWorkerSet;
use crate::diag::{Code, Diag};
use crate::identity as keys;
use crate::launch::{Platform, Ports};
use crate::names::label_value;
use crate::plan::Entry;
use crate::render::out::{File, HEADER};
use crate::render::{Endpoint, Job, Rendered, Resolved};
use naming::{
    CLAIM_TEMPLATE, COMPUTE_DOMAIN, POOL, ROUTE, SERVICE, WORKLOAD, file_name, model_files, model_labels,
    replica_files, running_models, services, workload_names,
};
use service::service;
pub use stop::{Stop, stop_lines};

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
    /// How pods get their GPUs.
    pub devices: Devices,
    /// `--gateway inference-pool`: a pool (and a route) per model.
    pub gateway: Option<gateway::Gateway>,
}

/// How a pod asks for its GPUs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Devices {
    /// `nvidia.com/gpu` limits: the device plugin picks which GPUs.
    #[default]
    DevicePlugin,
    /// A DRA claim per pod that admits exactly the planned GPUs.
    Dra,
}

/// A rendered object, in plan order.
pub enum Object {
    Deployment(Box<Deployment>),
    LeaderWorkerSet(Box<LeaderWorkerSet>),
    Service(Box<Service>),
    ClaimTemplate(Box<ResourceClaimTemplate>),
    ComputeDomain(Box<domain::ComputeDomain>),
    InferencePool(Box<gateway::InferencePool>),
    HttpRoute(Box<gateway::HttpRoute>),
}

impl Object {
    pub fn name(&self) -> &str {
        self.meta().name.as_deref().unwrap_or_default()
    }

    fn meta(&self) -> &ObjectMeta {
        match self {
            Object::Deployment(d) => &d.metadata,
            Object::LeaderWorkerSet(l) => &l.metadata,
            Object::Service(s) => &s.metadata,
            Object::ClaimTemplate(c) => &c.metadata,
            Object::ComputeDomain(c) => &c.metadata,
            Object::InferencePool(p) => &p.metadata,
            Object::HttpRoute(r) => &r.metadata,
        }
    }

    /// The model (exact, from the annotation) and replica it serves.
    pub fn replica(&self) -> (Option<String>, Option<u32>) {
        let meta = self.meta();
        let model = meta.annotations.as_ref().and_then(|a| a.get(keys::MODEL)).cloned();
        let replica = match self {
            Object::Service(_) | Object::InferencePool(_) | Object::HttpRoute(_) => None,
            Object::Deployment(_)
            | Object::LeaderWorkerSet(_)
            | Object::ClaimTemplate(_)
            | Object::ComputeDomain(_) => {
                meta.labels.as_ref().and_then(|l| l.get(keys::REPLICA)).and_then(|r| r.parse().ok())
            }
        };
        (model, replica)
    }

    /// Its file under `-o DIR`.
    pub fn file_name(&self) -> String {
        let kind = match self {
            Object::Service(_) => SERVICE,
            Object::ClaimTemplate(_) => CLAIM_TEMPLATE,
            Object::ComputeDomain(_) => COMPUTE_DOMAIN,
            Object::InferencePool(_) => POOL,
            Object::HttpRoute(_) => ROUTE,
            Object::Deployment(_) | Object::LeaderWorkerSet(_) => WORKLOAD,
        };
        file_name(kind, self.name())
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
            Object::ClaimTemplate(c) => serde_saphyr::to_fmt_writer(out, c),
            Object::ComputeDomain(c) => serde_saphyr::to_fmt_writer(out, c),
            Object::InferencePool(p) => serde_saphyr::to_fmt_writer(out, p),
            Object::HttpRoute(r) => serde_saphyr::to_fmt_writer(out, r),
        }
        .map_err(|e| e.to_string())
    }
}

/// What a file begins with: the header line, before the object's YAML.
const FILE_HEADER: &str = "kubernetes; the next render into this folder replaces or removes it.\n";

/// One object, serialised as soon as it is built (so 20,000 pod specs are
/// never all held at once): its file's text (the header line, then the
/// YAML), written once into a buffer sized for a pod spec.
fn file(o: &Object) -> Result<File, Diag> {
    let (model, replica) = o.replica();
    let mut text = String::with_capacity(4096);
    text.push_str(HEADER);
    text.push(' ');
    text.push_str(FILE_HEADER);
    o.yaml_into(&mut text).map_err(|e| Diag::error(Code::Io, format!("cannot write {}: {e}", o.name())))?;
    Ok(File { name: o.file_name(), text, model, replica })
}

/// The files as one YAML stream: one header line, then each object.
fn stream(files: &[File]) -> String {
    let mut s = format!("{HEADER} kubernetes.\n");
    for f in files {
        s.push_str("---\n");
        s.push_str(&f.text[HEADER.len() + 1 + FILE_HEADER.len()..]);
    }
    s
}

/// The platform's view of a multi-node group: LWS gives every pod the
/// leader's address; its index comes from its pod label (below).
const LWS: Platform = Platform { leader: "LWS_LEADER_ADDRESS", rank: "LLMGW_NODE_RANK" };

/// Where weights fetched from the hub are kept on the node, across restarts.
const HF_CACHE: &str = "/var/cache/llmgw/huggingface";

/// Seconds a deleted pod's engine has to finish the requests in flight.
const GRACE_S: i64 = 120;

/// The objects that run a resolved plan where it was placed, and the
/// files of what it does not render; with DRA, refused (nothing rendered)
/// where a claim could not admit exactly the planned GPUs.
pub fn render<'a>(r: &Resolved<'a>, s: &Settings) -> Result<Rendered<'a>, Vec<Diag>> {
    if s.devices == Devices::Dra {
        let mut unpinnable = claims::unpinnable(r);
        // A selector the API would refuse: refused here, nothing written.
        unpinnable.extend(claims::too_long(r, s));
        if !unpinnable.is_empty() {
            return Err(unpinnable);
        }
    }
    let names = crate::render::names_of(r, workload_names);
    let all: Vec<&Entry> = r.plan.entries.iter().collect();
    let services = services(&all);
    let models: Vec<&str> = services.iter().map(|(m, _)| *m).collect();
    let labels = model_labels(&running_models(&all));
    let mut out = Rendered::new("kubernetes", stream);
    // A replica not rendered (pending, say) keeps its files as they are.
    out.kept.extend(names.skipped.iter().flat_map(|n| replica_files(n)));
    let mut no_rdma = Vec::new();
    let (mut apart, mut pools) = (Vec::new(), Vec::new());
    for (j, name) in r.jobs.iter().zip(names.jobs) {
        let ctx = Ctx { job: j, name, model_label: &labels[j.entry.model.as_str()], settings: s };
        if j.nodes.len() > 1 && !j.hcas.is_empty() && s.rdma.is_none() {
            no_rdma.push(format!("{} r{}", j.entry.model, j.entry.replica));
        }
        for o in ctx.devices() {
            out.push(file(&o));
        }
        out.push(file(&ctx.object()));
    }
    // Each model's rendered replicas, grouped once (a catalog may hold
    // thousands of models).
    let mut by_model: std::collections::HashMap<&str, Vec<&Job<'a>>> = std::collections::HashMap::new();
    for j in &r.jobs {
        by_model.entry(j.entry.model.as_str()).or_default().push(j);
    }
    for (m, svc) in services {
        // A model none of whose replicas is rendered here (all pending, say)
        // keeps its Service's file (and its pool's and route's) as it is.
        let Some(jobs) = by_model.get(m) else {
            out.kept.extend(model_files(&svc, s.gateway.as_ref()));
            continue;
        };
        let first = Ports::defaults(jobs[0].profile).http;
        let url = match &s.namespace {
            Some(ns) => format!("http://{svc}.{ns}.svc:{first}"),
            None => format!("http://{svc}:{first}"),
        };
        for j in jobs {
            out.endpoints.push(Endpoint {
                model: &j.entry.model,
                replica: j.entry.replica,
                url: url.clone(),
                engine: j.profile.engine.name,
            });
        }
        out.push(file(&Object::Service(Box::new(service(m, &labels[&m], svc.clone(), first, s.namespace.clone())))));
        if let Some(g) = &s.gateway {
            let ports: std::collections::BTreeSet<u16> = jobs.iter().map(|j| Ports::defaults(j.profile).http).collect();
            if ports.len() > 1 {
                let ports: Vec<String> = ports.iter().map(u16::to_string).collect();
                apart.push(format!("{m} ({})", ports.join(", ")));
            }
            let pool =
                gateway::Pool { model: m, label: &labels[&m], name: &svc, port: first, namespace: s.namespace.clone() };
            out.push(file(&Object::InferencePool(Box::new(pool.pool(g)))));
            if let Some(parent) = &g.parent {
                out.push(file(&Object::HttpRoute(Box::new(pool.route(parent, &g.route_timeout)))));
            }
            pools.push(svc);
        }
    }
    let pools: Vec<&str> = pools.iter().map(String::as_str).collect();
    let gateway_warnings = gateway::warnings(&pools, s.gateway.as_ref(), &apart, &models);
    out.warnings.extend(gateway_warnings);
    out.warnings.extend(domain::shared_nodes(&r.jobs));
    if !no_rdma.is_empty() {
        out.warnings.push(
            Diag::warning(
                Code::NoRdma,
                format!(
                    "{}: multi-node pods get no RDMA device and no NCCL_IB_HCA, so NCCL falls back to TCP between them",
                    crate::diag::shorten(&no_rdma.iter().map(String::as_str).collect::<Vec<_>>(), 5)
                ),
            )
            .help("give --rdma-resource with the name your cluster's RDMA device plugin advertises (e.g. rdma/ib)"),
        );
    }
    out.endpoints.sort_by(|a, b| (a.model, a.replica).cmp(&(b.model, b.replica)));
    Ok(out)
}

/// One job and what its objects share.
pub(super) struct Ctx<'j, 'a> {
    pub(super) job: &'j Job<'a>,
    pub(super) name: String,
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
            (keys::MODEL, self.model_label.to_string()),
            (keys::REPLICA, e.replica.to_string()),
            (keys::PROFILE, label_value(&self.job.profile.name)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    fn annotations(&self) -> BTreeMap<String, String> {
        let e = self.entry();
        let mut a = BTreeMap::new();
        // The exact names, which a label value may not be able to hold.
        a.insert(keys::MODEL.to_string(), e.model.clone());
        a.insert(keys::PROFILE.to_string(), self.job.profile.name.clone());
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
            a.insert(keys::GPUS.to_string(), gpus.join(";"));
        }
        if let Some(at) = e.nodes.first().filter(|a| !a.mig_devices.is_empty() && !a.gpus.is_empty()) {
            a.insert(keys::MIG_DEVICES.to_string(), format!("{}={}:{}", at.node, at.gpus[0], at.mig_devices[0]));
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
}
