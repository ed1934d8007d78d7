//! What render writes, on a real Kubernetes control plane (SPEC 19):
//! `.ci/kube up DIR` starts etcd, kube-apiserver, kube-controller-manager,
//! kube-scheduler and the LeaderWorkerSet controller built from their Go
//! modules, and `.ci/run` exports its kubeconfig and kubectl
//! (LLMGW_KUBECONFIG, LLMGW_KUBECTL). Without them these tests say loudly
//! that they skipped; CI never skips them.
//!
//! No kubelet runs: a pod is done when kube-scheduler has bound it, and the
//! tests run its containers themselves under the stand-in engines. Every
//! test works in a scope of its own (a namespace, and nodes named and
//! labelled after it), so the tests share one control plane.

mod agree;
mod apply;
mod dra;
mod fleet;
mod looped;
mod real;
mod serve;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::*;

/// The label every node of a scope carries, so a scope lists its own.
pub const SCOPE_LABEL: &str = "llmgw.test/scope";

pub struct Kube {
    kubectl: PathBuf,
    kubeconfig: PathBuf,
}

/// The control plane of `.ci/kube up`, or None after saying so loudly.
pub fn kube() -> Option<&'static Kube> {
    static KUBE: OnceLock<Option<Kube>> = OnceLock::new();
    let k = KUBE.get_or_init(|| {
        let var = |n: &str| std::env::var(n).ok().filter(|v| !v.is_empty()).map(PathBuf::from);
        match (var("LLMGW_KUBECONFIG"), var("LLMGW_KUBECTL")) {
            (Some(kubeconfig), Some(kubectl)) => {
                assert!(kubeconfig.exists(), "LLMGW_KUBECONFIG={} does not exist", kubeconfig.display());
                assert!(kubectl.exists(), "LLMGW_KUBECTL={} does not exist", kubectl.display());
                Some(Kube { kubectl, kubeconfig })
            }
            _ => None,
        }
    });
    if k.is_none() {
        eprintln!(
            "SKIPPED: no Kubernetes control plane (LLMGW_KUBECONFIG or LLMGW_KUBECTL is unset); \
             `.ci/kube up DIR` starts one and DIR/env exports both, .ci/run always does"
        );
    }
    k.as_ref()
}

impl Kube {
    pub fn cmd(&self) -> Command {
        let mut c = Command::new(&self.kubectl);
        c.env("KUBECONFIG", &self.kubeconfig).env_remove("KUBECTL_EXTERNAL_DIFF");
        c
    }

    /// kubectl with `args`, `stdin` written to it.
    pub fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut c = self.cmd();
        c.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
        c.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
        let mut child = c.spawn().unwrap_or_else(|e| panic!("kubectl: {e}"));
        if let Some(text) = stdin {
            use std::io::Write;
            let mut w = child.stdin.take().unwrap();
            let text = text.to_string();
            // Written from a thread: kubectl may answer before it has read all.
            std::thread::spawn(move || {
                let _ = w.write_all(text.as_bytes());
            });
        }
        child.wait_with_output().unwrap()
    }

    /// kubectl that must succeed: its stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args, None);
        assert!(out.status.success(), "kubectl {}: {}", args.join(" "), transcript(&out));
        stdout(&out)
    }

    pub fn get(&self, args: &[&str]) -> Value {
        let mut a = vec!["get"];
        a.extend_from_slice(args);
        a.extend_from_slice(&["-o", "json"]);
        serde_json::from_str(&self.ok(&a)).unwrap()
    }

    /// Creates objects (nodes keep the status they are created with).
    pub fn create(&self, items: Vec<Value>) {
        if items.is_empty() {
            return;
        }
        let list = json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string();
        let out = self.run(&["create", "-f", "-"], Some(&list));
        assert!(out.status.success(), "kubectl create: {}", transcript(&out));
    }
}

/// One test's corner of the control plane: a namespace of its own, and its
/// nodes named `<id>-<name>` and labelled with the scope.
pub struct Scope {
    pub kube: &'static Kube,
    pub id: String,
    pub ns: String,
    pub dir: tempfile::TempDir,
}

impl Scope {
    /// A fresh scope named after the test (unique across runs, so a
    /// control plane kept up between runs sees no leftovers).
    pub fn new(kube: &'static Kube, name: &str) -> Scope {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
        let id = format!("{name}-{:x}{}", (nanos ^ std::process::id()) & 0xfffff, N.fetch_add(1, Ordering::Relaxed));
        kube.create(vec![json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": id}})]);
        Scope { kube, ns: id.clone(), id, dir: tempfile::tempdir().unwrap() }
    }

    pub fn node(&self, name: &str) -> String {
        format!("{}-{name}", self.id)
    }

    /// Creates the nodes (renamed into the scope, labelled with it, Ready
    /// as of now) and the pods bound to them, in the scope's namespace.
    pub fn create(&self, nodes: Vec<Value>, pods: Vec<Value>) {
        let nodes = nodes.into_iter().map(|n| fleet::scoped_node(self, n)).collect();
        self.kube.create(nodes);
        let pods = pods.into_iter().map(|p| fleet::scoped_pod(self, p)).collect();
        self.kube.create(pods);
    }

    /// `kubectl get` of the scope's nodes, pods (and DRA objects), as files.
    pub fn dump(&self, dra: bool) -> Dumped {
        let d = self.dir.path();
        let selector = format!("{SCOPE_LABEL}={}", self.id);
        let nodes = write(d, "nodes.json", &self.kube.ok(&["get", "nodes", "-l", &selector, "-o", "json"]));
        let pods = write(d, "pods.json", &self.kube.ok(&["get", "pods", "-n", &self.ns, "-o", "json"]));
        let (slices, claims) = if dra {
            let all = self.kube.get(&["resourceslices"]);
            let mine: Vec<Value> = all["items"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| s["spec"]["nodeName"].as_str().is_some_and(|n| n.starts_with(&format!("{}-", self.id))))
                .cloned()
                .collect();
            let slices =
                write(d, "slices.json", &json!({"apiVersion": "v1", "kind": "List", "items": mine}).to_string());
            let claims =
                write(d, "claims.json", &self.kube.ok(&["get", "resourceclaims", "-n", &self.ns, "-o", "json"]));
            (Some(slices), Some(claims))
        } else {
            (None, None)
        };
        Dumped { nodes, pods, slices, claims }
    }

    /// The scope's cluster as llmgw imports it, with more import flags.
    pub fn import(&self, dra: bool, extra: &[&str]) -> PathBuf {
        let dumped = self.dump(dra);
        let fleet = self.dir.path().join("fleet.json");
        let mut args = vec![
            "inventory".to_string(),
            "import".into(),
            "kubernetes".into(),
            dumped.nodes.display().to_string(),
            "--pods".into(),
            dumped.pods.display().to_string(),
        ];
        if let (Some(s), Some(c)) = (&dumped.slices, &dumped.claims) {
            args.extend([
                "--resource-slices".into(),
                s.display().to_string(),
                "--claims".into(),
                c.display().to_string(),
            ]);
        }
        args.extend(extra.iter().map(|s| (*s).to_string()));
        args.extend(["-o".into(), fleet.display().to_string()]);
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(&a);
        assert_eq!(code(&out), 0, "{}", transcript(&out));
        fleet
    }

    /// `kubectl apply --server-side` of what render wrote, into the scope's
    /// namespace.
    pub fn apply(&self, path: &Path) -> Output {
        let p = path.display().to_string();
        self.kube.run(&["apply", "--server-side", "--field-manager=llmgw-test", "-n", &self.ns, "-f", &p], None)
    }

    /// The scope's pods once each of `expected` pods is bound or known to be
    /// unschedulable, or when `secs` pass.
    pub fn settle(&self, expected: usize, secs: u64) -> Vec<Value> {
        self.settle_counting(expected, secs, |_| true)
    }

    /// `settle`, counting toward `expected` only the pods of llmgw's
    /// replicas: a Deployment's pod comes a moment after the apply, from
    /// the controller-manager, and pods already in the scope must not end
    /// the wait before it does.
    pub fn settle_replicas(&self, expected: usize, secs: u64) -> Vec<Value> {
        self.settle_counting(expected, secs, |p| replica_of(p).is_some())
    }

    /// The scope's pods once `expected` of them pass `counts` and every pod
    /// is bound or known to be unschedulable, or when `secs` pass.
    fn settle_counting(&self, expected: usize, secs: u64, counts: impl Fn(&Value) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let pods = self.pods();
            let counted = pods.iter().filter(|p| counts(p)).count();
            let decided = pods.iter().filter(|p| bound(p).is_some() || unschedulable(p).is_some()).count();
            if (counted >= expected && decided == pods.len()) || Instant::now() > deadline {
                return pods;
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    pub fn pods(&self) -> Vec<Value> {
        self.kube.get(&["pods", "-n", &self.ns])["items"].as_array().unwrap().clone()
    }

    /// The scheduler's FailedScheduling events in the scope: (pod, message).
    pub fn failed_scheduling(&self) -> Vec<(String, String)> {
        let ev = self.kube.get(&["events", "-n", &self.ns, "--field-selector", "reason=FailedScheduling"]);
        ev["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["involvedObject"]["name"].as_str().unwrap_or_default().to_string(),
                    e["message"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    }

    /// What the scope holds, for a failure's message.
    pub fn describe(&self) -> String {
        let pods = self.kube.run(&["get", "pods", "-n", &self.ns, "-o", "wide"], None);
        let events = self.kube.run(&["get", "events", "-n", &self.ns, "--sort-by=.lastTimestamp"], None);
        format!("--- pods\n{}--- events\n{}", stdout(&pods), stdout(&events))
    }
}

/// A scope's nodes go when its test passes, so a control plane kept up
/// between runs does not collect them (the scheduler weighs every node);
/// a failed test leaves them, and its namespace, to be looked at.
impl Drop for Scope {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kube: left scope {} (namespace and nodes) for a look", self.id);
            return;
        }
        let selector = format!("{SCOPE_LABEL}={}", self.id);
        let _ = self.kube.run(&["delete", "nodes", "-l", &selector, "--wait=false"], None);
    }
}

pub struct Dumped {
    pub nodes: PathBuf,
    pub pods: PathBuf,
    pub slices: Option<PathBuf>,
    pub claims: Option<PathBuf>,
}

/// The node a pod is bound to.
pub fn bound(pod: &Value) -> Option<&str> {
    pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty())
}

/// The scheduler's message for a pod it could not place.
pub fn unschedulable(pod: &Value) -> Option<&str> {
    pod["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "PodScheduled" && c["status"] == "False" && c["reason"] == "Unschedulable")
        .and_then(|c| c["message"].as_str())
}

/// The replica a rendered pod belongs to, by llmgw's labels.
pub fn replica_of(pod: &Value) -> Option<(String, u64)> {
    let l = &pod["metadata"]["labels"];
    let model = l["llmgw.io/model"].as_str()?;
    let replica = l["llmgw.io/replica"].as_str()?.parse().ok()?;
    Some((model.to_string(), replica))
}

/// Places `catalog` on `fleet` (JSON plan with full rejections).
pub fn place(dir: &Path, catalog: &Path, fleet: &Path, extra: &[&str]) -> (PathBuf, Value) {
    let mut args = vec![
        "place",
        catalog.to_str().unwrap(),
        "-i",
        fleet.to_str().unwrap(),
        "--format",
        "json",
        "--rejections",
        "full",
    ];
    args.extend_from_slice(extra);
    let out = run(&args);
    assert!(code(&out) <= 1, "{}", transcript(&out));
    // A file of its own for each plan: a test compares turns.
    let mut n = 0;
    while dir.join(format!("plan-{n}.json")).exists() {
        n += 1;
    }
    let plan = write(dir, &format!("plan-{n}.json"), &stdout(&out));
    (plan, json(&out))
}

/// Renders `plan` into `DIR/out` for the scope, with render flags.
pub fn render(scope: &Scope, plan: &Path, catalog: &Path, fleet: &Path, extra: &[&str]) -> PathBuf {
    let out_dir = scope.dir.path().join("out");
    let mut args = vec![
        "render",
        "kubernetes",
        plan.to_str().unwrap(),
        "--catalog",
        catalog.to_str().unwrap(),
        "-i",
        fleet.to_str().unwrap(),
        "-o",
        out_dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = run(&args);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    out_dir
}

/// Every planned and existing replica's nodes, by (model, replica).
pub fn planned(plan: &Value) -> std::collections::BTreeMap<(String, u64), Vec<String>> {
    let mut out = std::collections::BTreeMap::new();
    for key in ["placements", "existing"] {
        for p in plan[key].as_array().into_iter().flatten() {
            let nodes =
                p["nodes"].as_array().unwrap().iter().map(|n| n["node"].as_str().unwrap().to_string()).collect();
            out.insert((p["model"].as_str().unwrap().to_string(), p["replica"].as_u64().unwrap()), nodes);
        }
    }
    out
}

/// Applies the render, waits for the scheduler, and holds that every pod
/// of every planned replica is bound to a node the plan names, one pod a
/// node, every planned node used, and that the scheduler never reported
/// FailedScheduling. Returns the pods.
pub fn assert_bound_as_planned(scope: &Scope, out_dir: &Path, plan: &Value) -> Vec<Value> {
    let applied = scope.apply(out_dir);
    assert!(applied.status.success(), "the API refused what render wrote: {}", transcript(&applied));
    let want = planned(plan);
    let expected: usize = want.values().map(Vec::len).sum();
    let pods = scope.settle_replicas(expected, 120);
    let mut got: std::collections::BTreeMap<(String, u64), Vec<String>> = std::collections::BTreeMap::new();
    for p in &pods {
        let Some(key) = replica_of(p) else { continue };
        let name = p["metadata"]["name"].as_str().unwrap();
        let node = bound(p)
            .unwrap_or_else(|| panic!("{name} ({key:?}) was not bound: {:?}\n{}", unschedulable(p), scope.describe()));
        got.entry(key).or_default().push(node.to_string());
    }
    for (key, nodes) in &want {
        let mut a = got.get(key).cloned().unwrap_or_default();
        let mut b = nodes.clone();
        a.sort();
        b.sort();
        assert_eq!(a, b, "{key:?}: bound to {a:?}, planned on {b:?}\n{}", scope.describe());
    }
    assert_eq!(got.len(), want.len(), "pods of replicas the plan does not have: {got:?}");
    let failed = scope.failed_scheduling();
    assert!(failed.is_empty(), "the scheduler reported FailedScheduling: {failed:#?}");
    pods
}
