//! What DRA claims were given (`kubectl get resourceclaims -A -o json`):
//! every allocated device of the GPU driver held, on the node of its pool,
//! by the replica llmgw's labels on the claim name (else by the claim
//! itself). The cluster's own word on which GPUs a pod got, where a pod's
//! annotation only says what the plan asked for.
//!
//! Labels are anyone's to write, so a claim is a replica's only on the
//! terms a pod is (`trust`): in the namespaces `--namespace` names, and,
//! with `--pods`, only when the pod it is reserved for (or owned by) is
//! that replica's pod; without `--pods`, only when some pod uses it (a
//! claim reserved for no pod is a moved replica's leftover) and from one
//! namespace a replica. Any other holds its devices as `claim:<ns>/<name>`.
//! An admin-access claim watches devices others hold and holds none.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::Deserialize;

use super::pods::Replicas;
use super::podspec::{Strings, plain};
use super::slices::{DRIVER, Published};
use crate::diag::{Code, Diag, Source};
use crate::identity as keys;
use crate::import::Problems;
use crate::import::file::File;
use crate::import::file::Kinded;
use crate::inventory::{Allocation, Node};

#[derive(Deserialize)]
struct Claim {
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    metadata: Meta,
    status: Option<Status>,
}

impl Kinded for Claim {
    fn kind(&self) -> Option<&str> {
        self.kind.as_deref()
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Meta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    labels: Option<Strings>,
    #[serde(default)]
    annotations: Option<Strings>,
    #[serde(default)]
    owner_references: Vec<Reference>,
}

/// An owner (`metadata.ownerReferences[]`) or a consumer
/// (`status.reservedFor[]`): a pod, by name, in the claim's namespace.
#[derive(Deserialize, Default)]
struct Reference {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    resource: String,
    #[serde(default)]
    name: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Status {
    allocation: Option<Allocated>,
    #[serde(default)]
    reserved_for: Vec<Reference>,
}

#[derive(Deserialize)]
struct Allocated {
    devices: Option<Results>,
}

#[derive(Deserialize)]
struct Results {
    #[serde(default)]
    results: Vec<Given>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Given {
    #[serde(default)]
    driver: String,
    #[serde(default)]
    pool: String,
    #[serde(default)]
    device: String,
    #[serde(default)]
    admin_access: Option<bool>,
}

/// A device on a node: (node, GPU, MIG device).
type Device = (usize, u32, Option<u32>);

/// An allocated claim as read.
struct Read {
    who: String,
    ns: String,
    /// The replica its labels name.
    said: Option<(String, u32)>,
    /// The pods that own it or that it is reserved for.
    owners: Vec<String>,
    reserved: bool,
    devices: Vec<(Device, String)>,
}

/// One claim's devices on one node: whole GPUs, or MIG devices as
/// (GPU, device) pairs.
#[derive(Default)]
struct Held {
    gpus: Vec<u32>,
    migs: Vec<(u32, u32)>,
}

/// What claims may be: where llmgw's may be (`--namespace`), and the pods
/// the trust rules took as replicas (`--pods`).
pub struct Trust<'a> {
    pub namespaces: Option<&'a [String]>,
    pub replicas: Option<&'a Replicas>,
}

/// What the claims noticed, said once each.
#[derive(Default)]
struct Notes {
    unknown: Vec<String>,
    twice: Vec<String>,
    outside: Vec<String>,
    not_its_pods: Vec<String>,
    found: BTreeSet<String>,
}

/// Holds every allocated claim's devices on their nodes.
pub fn hold(
    src: &Source,
    published: &Published,
    nodes: &mut [Node],
    trust: &Trust<'_>,
    warnings: &mut Vec<Diag>,
) -> Result<(), Vec<Diag>> {
    let file = File::read(src, "kubectl get resourceclaims -A -o json").map_err(|d| vec![d])?;
    let mut problems = Problems::default();
    let mut notes = Notes::default();
    let by_id: HashMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id.as_str(), i)).collect();
    let devices = devices(nodes);
    let mut read: Vec<Read> = Vec::new();
    file.each_direct("ResourceClaim", &mut problems, |_, c: Claim, _| {
        let Some(status) = c.status else { return };
        let Some(results) = status.allocation.and_then(|a| a.devices) else { return };
        let meta = c.metadata;
        let (ns, name) = (meta.namespace.clone().unwrap_or_default(), meta.name.clone().unwrap_or_default());
        let mut owners: Vec<String> =
            meta.owner_references.iter().filter(|o| o.kind == "Pod").map(|o| o.name.clone()).collect();
        let reserved = status.reserved_for.iter().any(|r| r.resource == "pods");
        owners.extend(status.reserved_for.iter().filter(|r| r.resource == "pods").map(|r| r.name.clone()));
        let who = format!("{ns}/{name}");
        let mut held = Vec::new();
        // An admin-access result watches a device (monitoring) that another
        // claim holds: it holds nothing.
        for r in results.results.iter().filter(|r| r.driver == DRIVER && r.admin_access != Some(true)) {
            let node_id = published.pools.get(&r.pool).map_or(r.pool.as_str(), String::as_str);
            let at = by_id.get(node_id).and_then(|&n| Some((n, *devices.get(&(n, r.device.as_str()))?)));
            match at {
                Some((n, (g, m))) => held.push(((n, g, m), format!("{} of {node_id}", r.device))),
                None => notes.unknown.push(format!("{} of claim {who} on {node_id}", r.device)),
            }
        }
        if held.is_empty() {
            return;
        }
        let said = said(meta.labels.as_ref(), meta.annotations.as_ref());
        read.push(Read { who, ns, said, owners, reserved, devices: held });
    })?;
    problems.into_result()?;
    let whose = identities(&read, trust, nodes, &mut notes);
    let holders = holders(&read, &whose, nodes, &mut notes);
    for ((model, replica, n), h) in holders {
        give(&mut nodes[n], &model, replica, h);
    }
    notes.warn(trust, warnings);
    Ok(())
}

/// The replica a claim's labels name (copied there from the claim
/// template render writes), exact model from the annotation.
fn said(labels: Option<&Strings>, annotations: Option<&Strings>) -> Option<(String, u32)> {
    let (labels, annotations) = (plain(labels), plain(annotations));
    let model = annotations.get(keys::MODEL).or_else(|| labels.get(keys::MODEL))?.clone();
    let replica = labels.get(keys::REPLICA)?.parse().ok()?;
    Some((model, replica))
}

/// Per claim, who holds its devices: the replica it says it is, where the
/// trust rules let it be, else the claim itself.
fn identities(read: &[Read], trust: &Trust<'_>, nodes: &[Node], notes: &mut Notes) -> Vec<(String, u32)> {
    // A replica's nodes by its pods, when the pods were given.
    let mut pod_nodes: HashMap<(&str, u32), HashSet<&str>> = HashMap::new();
    for (model, replica, on) in trust.replicas.into_iter().flat_map(HashMap::values) {
        pod_nodes.entry((model.as_str(), *replica)).or_default().extend(on.iter().map(String::as_str));
    }
    // Without the pods: the first namespace (by namespace and name) that
    // claims a replica is its; another's claims of it are foreign.
    let mut order: Vec<usize> = (0..read.len()).collect();
    order.sort_by(|&a, &b| read[a].who.cmp(&read[b].who));
    let mut first_ns: HashMap<(String, u32), &str> = HashMap::new();
    let mut out: Vec<(String, u32)> = read.iter().map(|c| (format!("claim:{}", c.who), 0)).collect();
    for k in order {
        let c = &read[k];
        let Some((model, replica)) = &c.said else { continue };
        let what = format!("{} ({model} r{replica})", c.who);
        if trust.namespaces.is_some_and(|list| !list.contains(&c.ns)) {
            notes.outside.push(what);
            continue;
        }
        let mine = match trust.replicas {
            Some(pods) => {
                let its_pod = |p: &String| {
                    pods.get(&(c.ns.clone(), p.clone())).is_some_and(|(m, r, _)| m == model && r == replica)
                };
                if c.owners.is_empty() {
                    // A claim that names no pod (written by hand): its
                    // replica's pod must be on its node.
                    let on = pod_nodes.get(&(model.as_str(), *replica));
                    c.devices.iter().all(|((n, _, _), _)| on.is_some_and(|on| on.contains(nodes[*n].id.as_str())))
                } else {
                    c.owners.iter().any(its_pod)
                }
            }
            None => c.reserved && *first_ns.entry((model.clone(), *replica)).or_insert(c.ns.as_str()) == c.ns,
        };
        if mine {
            notes.found.insert(c.ns.clone());
            out[k] = (model.clone(), *replica);
        } else {
            notes.not_its_pods.push(what);
        }
    }
    out
}

/// What each holder holds, per node, in file order: a device given to two
/// claims stays with the first, and one a pod holds (a pod of the device
/// plugin, or a foreign pod given the lowest free GPUs) stays with it.
fn holders(
    read: &[Read],
    whose: &[(String, u32)],
    nodes: &[Node],
    notes: &mut Notes,
) -> BTreeMap<(String, u32, usize), Held> {
    // Replicas whose pods' allocations a claim replaces, per node.
    let replaced: HashSet<(&str, u32, usize)> = read
        .iter()
        .zip(whose)
        .flat_map(|(c, (m, r))| c.devices.iter().map(move |((n, _, _), _)| (m.as_str(), *r, *n)))
        .collect();
    let mut taken: HashSet<Device> = HashSet::new();
    // GPUs some of whose MIG devices are held: not free whole.
    let mut split: HashSet<(usize, u32)> = HashSet::new();
    let take = |taken: &mut HashSet<Device>, split: &mut HashSet<(usize, u32)>, d: Device| {
        if d.2.is_some() {
            split.insert((d.0, d.1));
        }
        taken.insert(d);
    };
    for (n, node) in nodes.iter().enumerate() {
        for a in node.allocations.iter().filter(|a| !replaced.contains(&(a.model.as_str(), a.replica, n))) {
            if a.mig_devices.is_empty() {
                a.gpus.iter().for_each(|&g| take(&mut taken, &mut split, (n, g, None)));
            } else if let [g] = a.gpus[..] {
                a.mig_devices.iter().for_each(|&m| take(&mut taken, &mut split, (n, g, Some(m))));
            }
        }
    }
    let mut out: BTreeMap<(String, u32, usize), Held> = BTreeMap::new();
    for (c, (model, replica)) in read.iter().zip(whose) {
        for (d, what) in &c.devices {
            let (n, g, m) = *d;
            // A whole GPU and a MIG device of it are never both free to hold.
            let clash = taken.contains(d) || taken.contains(&(n, g, None)) || (m.is_none() && split.contains(&(n, g)));
            if clash {
                notes.twice.push(format!("{what} (claim {})", c.who));
                continue;
            }
            take(&mut taken, &mut split, *d);
            let h = out.entry((model.clone(), *replica, d.0)).or_default();
            match d.2 {
                None => h.gpus.push(d.1),
                Some(m) => h.migs.push((d.1, m)),
            }
        }
    }
    out
}

impl Notes {
    fn warn(self, trust: &Trust<'_>, warnings: &mut Vec<Diag>) {
        let list = |v: &[String]| crate::diag::shorten(&v.iter().map(String::as_str).collect::<Vec<_>>(), 5);
        if !self.outside.is_empty() {
            let only = trust.namespaces.unwrap_or_default().join(", ");
            warnings.push(
                Diag::warning(
                    Code::ForeignClaim,
                    format!(
                        "{} claim(s) outside {only} carry llmgw's labels; they hold their devices as foreign claims: {}",
                        self.outside.len(),
                        list(&self.outside)
                    ),
                )
                .help("only claims in the namespaces --namespace names are llmgw's replicas'"),
            );
        }
        if !self.not_its_pods.is_empty() {
            let why = if trust.replicas.is_some() {
                "are not the claims of that replica's pods"
            } else {
                "are reserved for no pod (a moved replica's leftover), or name a replica another namespace's claims hold"
            };
            warnings.push(
                Diag::warning(
                    Code::ForeignClaim,
                    format!(
                        "{} claim(s) carry llmgw's labels but {why}; they hold their devices as foreign claims: {}",
                        self.not_its_pods.len(),
                        list(&self.not_its_pods)
                    ),
                )
                .help(
                    "a replica is the claims of its own pods: give --pods with --claims, and delete claims no pod uses",
                ),
            );
        }
        if trust.namespaces.is_none() && trust.replicas.is_none() && !self.found.is_empty() {
            let found: Vec<String> = self.found.into_iter().collect();
            warnings.push(
                Diag::warning(
                    Code::LlmgwNamespaces,
                    format!("llmgw's claims were taken from every namespace they are in: {}", found.join(", ")),
                )
                .help(format!(
                    "anyone who may create claims can label one as llmgw's; give --namespace {} (repeatable) to count only the namespaces llmgw renders into",
                    found[0]
                )),
            );
        }
        if !self.twice.is_empty() {
            warnings.push(
                Diag::warning(
                    Code::OverSubscribed,
                    format!(
                        "{} device(s) are allocated to two claims, or to a claim and a pod; the first holds each: {}",
                        self.twice.len(),
                        list(&self.twice)
                    ),
                )
                .help("give the claims and pods of one cluster, taken at one time; a node served by the device plugin and the DRA driver at once gives one GPU twice"),
            );
        }
        if !self.unknown.is_empty() {
            warnings.push(
                Diag::warning(
                    Code::ClaimUnknownDevice,
                    format!(
                        "{} allocated device(s) are not among the GPUs the slices publish, so nothing holds them: {}",
                        self.unknown.len(),
                        list(&self.unknown)
                    ),
                )
                .help("give the slices, nodes and claims of one cluster, taken together"),
            );
        }
    }
}

/// Every device the slices named, by (node, DRA device name): the GPU and,
/// for a MIG device, its index.
fn devices(nodes: &[Node]) -> HashMap<(usize, &str), (u32, Option<u32>)> {
    let mut out = HashMap::new();
    for (n, node) in nodes.iter().enumerate() {
        for g in &node.gpus {
            if let Some(d) = &g.dra_device {
                out.insert((n, d.as_str()), (g.index, None));
            }
            for m in &g.mig_devices {
                if let Some(d) = &m.dra_device {
                    out.insert((n, d.as_str()), (g.index, Some(m.index)));
                }
            }
        }
    }
    out
}

/// The claim's devices on the node, in place of what the replica's pod
/// said it holds there (its annotation: what the plan chose); the pod's
/// CPUs, memory and profile stay with the first entry.
fn give(node: &mut Node, model: &str, replica: u32, mut h: Held) {
    // In index order, whatever order the driver listed them in: what a
    // replica holds reads (and renders) the same from turn to turn.
    h.gpus.sort_unstable();
    h.migs.sort_unstable();
    let mut entries: Vec<Allocation> = Vec::new();
    if !h.gpus.is_empty() {
        entries.push(Allocation::new(model.to_string(), replica, h.gpus, Vec::new()));
    }
    // One entry per GPU whose MIG devices it holds.
    let mut by_gpu: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (g, m) in h.migs {
        by_gpu.entry(g).or_default().push(m);
    }
    for (g, migs) in by_gpu {
        entries.push(Allocation::new(model.to_string(), replica, vec![g], migs));
    }
    let mine = |a: &Allocation| a.model == model && a.replica == replica;
    let pod = node.allocations.iter().find(|a| mine(a)).cloned();
    if let Some(pod) = pod {
        node.allocations.retain(|a| !mine(a));
        for (n, e) in entries.iter_mut().enumerate() {
            e.profile.clone_from(&pod.profile);
            e.pending = pod.pending;
            if n == 0 {
                (e.cpus, e.memory_mb) = (pod.cpus, pod.memory_mb);
            }
        }
    }
    node.allocations.extend(entries);
}
