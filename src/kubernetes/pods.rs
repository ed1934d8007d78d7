//! What pods hold, as allocations on their nodes: GPUs (whole, or MIG
//! devices) and CPUs; llmgw's own pods as the replicas they are.
//!
//! The annotations render writes say exactly which GPUs a pod holds
//! (`llmgw.io/gpus: n1=0,1`, `llmgw.io/mig-devices: n1=0:3`). One that
//! cannot be true (does not parse, names a GPU the node lacks, names one
//! twice, or fewer than the pod asks for) is an error: a pod must never
//! silently hold no GPU. Pods that hold more than the node has are warned
//! about; the later ones hold what is left.

mod hold;
use hold::*;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::podspec::{Pod, plain};
use super::requests::{self, Demands};
use crate::diag::{Code, Diag};
use crate::identity as keys;
use crate::import::Problems;
use crate::import::file::{File, Step};
use crate::inventory::{Allocation, Node};
use crate::vendor::Vendor;

/// What llmgw needs of one pod that holds something on a node (or, for a
/// pending llmgw pod, will hold once it is scheduled there).
struct Held {
    i: usize,
    ns: String,
    name: String,
    node: String,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
    d: Demands,
    /// The whole GPUs and MIG devices it claims through DRA, by llmgw's
    /// annotations: held only if the pod is still llmgw's once its claim
    /// is sifted. Its claim is pinned to them, so they are held even while
    /// the pod waits.
    dra: (u64, u64),
}

impl Held {
    fn key(&self) -> (&str, &str) {
        (&self.ns, &self.name)
    }
    fn llmgw(&self) -> bool {
        self.labels.contains_key(keys::MODEL) || self.annotations.contains_key(keys::MODEL)
    }
    fn says(&self) -> bool {
        self.annotations.contains_key(keys::GPUS) || self.annotations.contains_key(keys::MIG_DEVICES)
    }
    fn who(&self) -> String {
        format!("{}/{}", self.ns, self.name)
    }
}

/// A pod not bound to a node yet, that llmgw's labels name: a replica that
/// exists and waits to be scheduled, on one of `nodes`.
struct Waiting {
    held: Held,
    nodes: Vec<String>,
}

fn path(file: &File<'_>, i: usize, keys: &[&'static str]) -> Vec<Step<'static>> {
    let mut p = file.item_path(i);
    p.extend(keys.iter().map(|k| Step::Key(k)));
    p
}

/// The nodes an unbound pod is pinned to: the node names of its required
/// node affinity (`matchFields` on `metadata.name`, as render writes it),
/// else its `kubernetes.io/hostname` selector, else the nodes its llmgw
/// annotations name.
fn pinned(pod: &Pod, annotations: &BTreeMap<String, String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let spec = pod.spec.as_ref();
    let terms = spec
        .and_then(|s| s.affinity.as_ref())
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|a| a.required.as_ref())
        .map(|r| r.node_selector_terms.as_slice())
        .unwrap_or_default();
    for t in terms {
        for r in t.match_fields.iter().flatten().chain(t.match_expressions.iter().flatten()) {
            if (r.key == "metadata.name" || r.key == "kubernetes.io/hostname") && r.operator == "In" {
                out.extend(r.values.iter().flatten().cloned());
            }
        }
    }
    if out.is_empty()
        && let Some(h) = spec.and_then(|s| s.node_selector.as_ref()).and_then(|s| s.get("kubernetes.io/hostname"))
    {
        out.push(h.0.clone());
    }
    if out.is_empty() {
        for key in [keys::GPUS, keys::MIG_DEVICES] {
            for part in annotations.get(key).map(String::as_str).unwrap_or_default().split(';') {
                if let Some((n, _)) = part.split_once('=') {
                    out.push(n.trim().to_string());
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The pods that are llmgw's replicas once the trust rules have sifted
/// them: (namespace, name) -> (model, replica, the nodes it is bound or
/// pinned to). A DRA claim is a replica's only when one of these is its pod.
pub type Replicas = HashMap<(String, String), (String, u32, Vec<String>)>;

/// GPUs, MIG devices, CPUs and memory the pods hold, as allocations on
/// their nodes; pending llmgw pods hold what they ask for on the node they
/// are pinned to. `claims`: whether the claims were given, which say what
/// pods that claim devices through DRA hold.
pub fn allocations(
    file: &File<'_>,
    nodes: &mut [Node],
    namespaces: Option<&[String]>,
    claims: bool,
    warnings: &mut Vec<Diag>,
) -> Result<Replicas, Vec<Diag>> {
    let mut problems = Problems::default();
    let mut held: Vec<Held> = Vec::new();
    let mut waiting: Vec<Waiting> = Vec::new();
    // Bound pods that claim devices through DRA and are not llmgw's.
    let mut claiming: Vec<(String, String)> = Vec::new();
    file.each_direct("Pod", &mut problems, |i, pod: Pod, problems| {
        if matches!(pod.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Succeeded" | "Failed")) {
            return;
        }
        let labels = plain(pod.metadata.labels.as_ref());
        let annotations = plain(pod.metadata.annotations.as_ref());
        let (ns, name) =
            (pod.metadata.namespace.clone().unwrap_or_default(), pod.metadata.name.clone().unwrap_or_default());
        let bound = pod.spec.as_ref().and_then(|s| s.node_name.clone());
        if bound.is_some() && claims_devices(&pod) {
            claiming.push((ns.clone(), name.clone()));
        }
        let ours = labels.contains_key(keys::MODEL) || annotations.contains_key(keys::MODEL);
        if bound.is_none() && !ours {
            return;
        }
        let d = match requests::of(file, i, &pod) {
            Ok(d) => d,
            Err(d) => return problems.push(d),
        };
        let dra = if ours && !d.holds_gpus() { claimed(&pod, &annotations, bound.as_deref()) } else { (0, 0) };
        let nodes = if bound.is_none() { pinned(&pod, &annotations) } else { Vec::new() };
        let h = Held { i, ns, name, node: bound.unwrap_or_default(), labels, annotations, d, dra };
        if !h.node.is_empty() {
            if h.d.any() || h.llmgw() {
                held.push(h);
            }
        } else {
            waiting.push(Waiting { held: h, nodes });
        }
    })?;
    let claimants = held.iter_mut().chain(waiting.iter_mut().map(|w| &mut w.held)).map(|h| super::trust::Claimant {
        ns: &h.ns,
        name: &h.name,
        labels: &mut h.labels,
        annotations: &mut h.annotations,
    });
    super::trust::sift(claimants.collect(), namespaces, warnings);
    let replicas = replicas_of(file, &held, &waiting);
    if !claims {
        warnings.extend(claims_not_given(claiming, &replicas));
    }
    let at: HashMap<String, usize> = nodes.iter().enumerate().map(|(k, n)| (n.id.clone(), k)).collect();
    for h in held.iter_mut().chain(waiting.iter_mut().map(|w| &mut w.held)).filter(|h| h.llmgw()) {
        h.d.whole = h.d.whole.max(h.dra.0);
        if h.dra.1 > 0 && h.d.migs.is_empty() {
            // Any profile: the annotation names the devices.
            h.d.migs.push((String::new(), h.dra.1));
        }
    }
    // A disowned pod is any other pod: bound, it holds what it asks for;
    // unbound, nothing yet.
    held.retain(|h| h.d.any() || h.llmgw());
    waiting.retain(|w| w.held.llmgw());
    // Pods that say which GPUs they hold go first; the others get the
    // lowest free ones; each in (namespace, name) order.
    held.sort_by(|a, b| (!a.says(), a.key()).cmp(&(!b.says(), b.key())));
    let mut report = Report::default();
    for h in &held {
        let Some(node) = at.get(&h.node).map(|&k| &mut nodes[k]) else {
            if h.d.holds_gpus() {
                report.unknown.push(format!("{} on {}", h.who(), h.node));
            }
            continue;
        };
        match hold(file, h, node, &mut report, false) {
            Ok(()) => {}
            Err(d) => problems.push(d),
        }
        if problems.full() {
            break;
        }
    }
    // Pending pods, in (namespace, name) order: each holds what it asks
    // for on the first node it is pinned to that does not hold its replica
    // yet (the workers of a LeaderWorkerSet share a template pinned to all
    // their nodes, one pod a node).
    waiting.sort_by(|a, b| a.held.key().cmp(&b.held.key()));
    for w in &waiting {
        let h = &w.held;
        let (model, replica) = match identity(file, h.i, &h.labels, &h.annotations, &h.ns, &h.name) {
            Ok((model, replica, _)) => (model, replica),
            Err(d) => {
                problems.push(d);
                continue;
            }
        };
        let pinned: Vec<usize> = w.nodes.iter().filter_map(|id| at.get(id).copied()).collect();
        let free = pinned
            .iter()
            .copied()
            .find(|&k| !nodes[k].allocations.iter().any(|a| a.model == model && a.replica == replica));
        match (free, pinned.is_empty()) {
            (Some(k), _) => {
                if let Err(d) = hold(file, h, &mut nodes[k], &mut report, true) {
                    problems.push(d);
                }
            }
            // Every node it may run on holds its replica already.
            (None, false) => {}
            (None, true) => report.unpinned.push(h.who()),
        }
    }
    problems.into_result()?;
    report.warn(warnings);
    Ok(replicas)
}

/// Whether a pod names DRA claims (`spec.resourceClaims`).
fn claims_devices(pod: &Pod) -> bool {
    pod.spec.as_ref().and_then(|s| s.resource_claims.as_ref()).is_some_and(|c| !c.is_empty())
}

/// The pods the trust rules left as llmgw's replicas, with their nodes.
fn replicas_of(file: &File<'_>, held: &[Held], waiting: &[Waiting]) -> Replicas {
    let mut replicas = Replicas::new();
    let bound = held.iter().filter(|h| h.llmgw()).map(|h| (h, vec![h.node.clone()]));
    let pinned = waiting.iter().filter(|w| w.held.llmgw()).map(|w| (&w.held, w.nodes.clone()));
    for (h, nodes) in bound.chain(pinned) {
        if let Ok((model, replica, _)) = identity(file, h.i, &h.labels, &h.annotations, &h.ns, &h.name) {
            replicas.insert((h.ns.clone(), h.name.clone()), (model, replica, nodes));
        }
    }
    replicas
}

/// Without the claims, a foreign pod's DRA devices are not known: the
/// GPUs it was given look free. Said, never silent.
fn claims_not_given(mut claiming: Vec<(String, String)>, replicas: &Replicas) -> Option<Diag> {
    claiming.retain(|key| !replicas.contains_key(key));
    if claiming.is_empty() {
        return None;
    }
    let list: Vec<String> = claiming.iter().map(|(ns, n)| format!("{ns}/{n}")).collect();
    Some(
        Diag::warning(
            Code::ClaimsNotGiven,
            format!(
                "{} pod(s) claim devices through DRA, and without --claims the GPUs they were given look free: {}",
                list.len(),
                crate::diag::shorten(&list.iter().map(String::as_str).collect::<Vec<_>>(), 5)
            ),
        )
        .help("give --claims (`kubectl get resourceclaims -A -o json`): the claims say which GPUs each pod holds"),
    )
}

/// What the import noticed along the way, said once each.
#[derive(Default)]
struct Report {
    unknown: Vec<String>,
    assumed: Vec<String>,
    over: Vec<String>,
    unpinned: Vec<String>,
}

impl Report {
    fn warn(self, warnings: &mut Vec<Diag>) {
        let list = |v: &[String]| crate::diag::shorten(&v.iter().map(String::as_str).collect::<Vec<_>>(), 5);
        if !self.unknown.is_empty() {
            warnings.push(
                Diag::warning(
                    Code::PodOnUnknownNode,
                    format!(
                        "{} pod(s) hold GPUs on nodes the node list does not have: {}",
                        self.unknown.len(),
                        list(&self.unknown)
                    ),
                )
                .help("give the node list and the pod list of one cluster, taken together"),
            );
        }
        if !self.assumed.is_empty() {
            warnings.push(
                Diag::warning(
                    Code::GpusAssumed,
                    format!(
                        "{} pod(s) name no GPUs (no llmgw.io/gpus annotation); the lowest free ones were assumed: {}",
                        self.assumed.len(),
                        list(&self.assumed)
                    ),
                )
                .help("pods rendered by llmgw carry the annotation; for others, which GPUs they hold is a guess"),
            );
        }
        if !self.over.is_empty() {
            warnings.push(
                Diag::warning(
                    Code::OverSubscribed,
                    format!("{} pod(s) ask for GPUs their node no longer has free; each holds what was left: {}", self.over.len(), list(&self.over)),
                )
                .help("pods are taken in (namespace, name) order, those with llmgw's annotations first; check the cluster for pods that share GPUs"),
            );
        }
        if !self.unpinned.is_empty() {
            warnings.push(
                Diag::warning(
                    Code::PodOnUnknownNode,
                    format!("{} llmgw pod(s) wait unscheduled and name no node of the node list, so they are not counted: {}", self.unpinned.len(), list(&self.unpinned)),
                )
                .help("render pins every pod to its planned nodes; a pod without that may be started twice"),
            );
        }
    }
}

/// A pod of llmgw's that claims its GPUs through DRA asks the device
/// plugin for none: it holds what llmgw's annotations name on its node
/// (on the first node, while it waits), the devices the plan chose and its
/// claim is pinned to, until `--claims` says which it was given. As (whole
/// GPUs, MIG devices).
fn claimed(pod: &Pod, annotations: &BTreeMap<String, String>, node: Option<&str>) -> (u64, u64) {
    let claims = pod.spec.as_ref().and_then(|s| s.resource_claims.as_ref());
    if !claims.is_some_and(|c| c.iter().any(|c| c.name == "gpus")) {
        return (0, 0);
    }
    let count = |a: &str| {
        let n = |list: &str| list.split(',').filter(|g| !g.trim().is_empty()).count() as u64;
        match node {
            Some(id) => part(a, id).ok().flatten().map_or(0, n),
            None => a.split(';').filter_map(|p| p.split_once('=')).map(|(_, l)| n(l)).max().unwrap_or(0),
        }
    };
    match (annotations.get(keys::MIG_DEVICES), annotations.get(keys::GPUS)) {
        (Some(m), _) => (0, count(m)),
        (None, Some(g)) => (count(g), 0),
        (None, None) => (0, 0),
    }
}

/// Model, replica and profile of a pod: llmgw's labels (the exact model
/// name in the annotation, as a label may not hold it), else the pod itself.
fn identity(
    file: &File<'_>,
    i: usize,
    labels: &BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
    ns: &str,
    name: &str,
) -> Result<(String, u32, Option<String>), Diag> {
    let model = annotations
        .get(keys::MODEL)
        .or_else(|| labels.get(keys::MODEL))
        .cloned()
        .unwrap_or_else(|| format!("pod:{ns}/{name}"));
    let replica = match labels.get(keys::REPLICA) {
        None => 0,
        Some(r) => r.parse::<u32>().map_err(|_| {
            let mut p = path(file, i, &["metadata", "labels"]);
            p.push(Step::Key(keys::REPLICA));
            file.error(
                Code::WrongType,
                &p,
                format!("pod {ns}/{name}: llmgw.io/replica is `{r}`, not a replica index"),
                "not a number",
                "render writes the replica index, a whole number",
            )
        })?,
    };
    let profile = annotations.get(keys::PROFILE).or_else(|| labels.get(keys::PROFILE)).cloned();
    Ok((model, replica, profile))
}

/// The part of an annotation for one node: `a=0,1;b=2,3` gives `0,1` for
/// `a`; `Ok(None)` when the node has no part; an error when a part is not
/// `node=list`.
fn part<'a>(annotation: &'a str, node: &str) -> Result<Option<&'a str>, String> {
    let mut found = None;
    for p in annotation.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((n, v)) = p.split_once('=') else { return Err(format!("`{p}` is not `<node>=<list>`")) };
        if n.trim() == node {
            if found.is_some() {
                return Err(format!("node `{node}` is named twice"));
            }
            found = Some(v);
        }
    }
    Ok(found)
}
