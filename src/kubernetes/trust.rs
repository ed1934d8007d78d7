//! Which pods may say they are llmgw's replicas. Labels are anyone's to
//! write: on a shared cluster a pod in any namespace can carry
//! `llmgw.io/model`. Only pods in the namespaces `--namespace` names count
//! (without it every namespace, said in a warning), and one replica is
//! claimed by one pod, or one LeaderWorkerSet group: a second claimant
//! stays a foreign pod holding what it holds.

use std::collections::{BTreeMap, BTreeSet};

use crate::diag::{Code, Diag};
use crate::identity as keys;

/// A pod as this check needs it; its llmgw labels and annotations are
/// removed when its claim does not count.
pub struct Claimant<'a> {
    pub ns: &'a str,
    pub name: &'a str,
    pub labels: &'a mut BTreeMap<String, String>,
    pub annotations: &'a mut BTreeMap<String, String>,
}

impl Claimant<'_> {
    fn claims(&self) -> bool {
        self.labels.contains_key(keys::MODEL) || self.annotations.contains_key(keys::MODEL)
    }
    /// Model and replica as the pod says them; `None` when they do not
    /// parse (the import reports that where it reads them).
    fn replica(&self) -> Option<(String, u32)> {
        let model = self.annotations.get(keys::MODEL).or_else(|| self.labels.get(keys::MODEL))?;
        let replica = self.labels.get(keys::REPLICA).map_or(Some(0), |r| r.parse().ok())?;
        Some((model.clone(), replica))
    }
    /// What one claim is: a LeaderWorkerSet group (leader and workers on
    /// their nodes are one replica), else the pod itself.
    fn group(&self) -> (String, String) {
        let lws = self.labels.get("leaderworkerset.sigs.k8s.io/name");
        let index = self.labels.get("leaderworkerset.sigs.k8s.io/group-index");
        match lws {
            Some(l) => (self.ns.to_string(), format!("lws {l} group {}", index.map_or("0", String::as_str))),
            None => (self.ns.to_string(), format!("pod {}", self.name)),
        }
    }
    fn disown(&mut self) {
        self.labels.retain(|k, _| !k.starts_with(keys::PREFIX));
        self.annotations.retain(|k, _| !k.starts_with(keys::PREFIX));
    }
}

/// Keeps the claims that count and disowns the rest, with one warning for
/// each kind: pods outside `namespaces`, replicas claimed twice, and
/// (without `namespaces`) where llmgw's pods were found.
pub fn sift(mut pods: Vec<Claimant<'_>>, namespaces: Option<&[String]>, warnings: &mut Vec<Diag>) {
    pods.retain(Claimant::claims);
    pods.sort_by(|a, b| (a.ns, a.name).cmp(&(b.ns, b.name)));
    let mut outside = Vec::new();
    let mut found: BTreeSet<String> = BTreeSet::new();
    let mut first: BTreeMap<(String, u32), ((String, String), String)> = BTreeMap::new();
    let mut twice = Vec::new();
    for p in &mut pods {
        if namespaces.is_some_and(|list| !list.iter().any(|n| n == p.ns)) {
            let what = p.replica().map_or_else(String::new, |(m, r)| format!(" ({m} r{r})"));
            outside.push(format!("{}/{}{what}", p.ns, p.name));
            p.disown();
            continue;
        }
        found.insert(p.ns.to_string());
        let Some(key) = p.replica() else { continue };
        let group = p.group();
        let who = format!("{}/{}", p.ns, p.name);
        match first.get(&key) {
            Some((g, _)) if *g == group => {}
            Some((_, by)) => {
                twice.push(format!("{} r{}: {by} and {who}", key.0, key.1));
                p.disown();
            }
            None => {
                first.insert(key, (group, who));
            }
        }
    }
    let list = |v: &[String]| crate::diag::shorten(&v.iter().map(String::as_str).collect::<Vec<_>>(), 5);
    if !outside.is_empty() {
        let only = namespaces.unwrap_or_default().join(", ");
        warnings.push(
            Diag::warning(
                Code::ForeignPod,
                format!(
                    "{} pod(s) outside {only} carry llmgw's labels; they are counted as foreign pods: {}",
                    outside.len(),
                    list(&outside)
                ),
            )
            .help("only pods in the namespaces --namespace names are llmgw's replicas"),
        );
    }
    if !twice.is_empty() {
        warnings.push(
            Diag::warning(
                Code::ClaimedTwice,
                format!(
                    "{} replica(s) are claimed by two pods; the first (by namespace and name) is the replica, the other a foreign pod: {}",
                    twice.len(),
                    list(&twice)
                ),
            )
            .help("delete the copy, or check who created a pod with llmgw's labels"),
        );
    }
    if namespaces.is_none() && !found.is_empty() {
        let found: Vec<String> = found.into_iter().collect();
        warnings.push(
            Diag::warning(Code::LlmgwNamespaces, format!("llmgw's pods were taken from every namespace they are in: {}", found.join(", ")))
                .help(format!(
                    "anyone who may create pods can label one as llmgw's; give --namespace {} (repeatable) to count only the namespaces llmgw renders into",
                    found[0]
                )),
        );
    }
}
