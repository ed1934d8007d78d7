//! Kubernetes as the source of the fleet: an inventory from what `kubectl
//! get nodes -o json|yaml` (and `kubectl get pods -A -o json`) print. llmgw
//! needs no cluster access of its own. See docs/kubernetes.md.

mod gpus;
pub mod labels;
pub mod lws;
pub mod quantity;
pub mod render;

use std::cell::OnceCell;
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node as KubeNode, Pod};
use serde::Deserialize;
use serde_json::Value;

use crate::diag::{Code, Diag, Source};
use crate::doc::{self, Format, Span};
use crate::inventory::{Allocation, Fabric, Inventory, Node, State};

/// What `inventory import kubernetes` is told besides the files.
#[derive(Default)]
pub struct Settings {
    /// A node label whose value names the node's fabric (e.g.
    /// `network.topology.nvidia.com/spine`), for nodes without llmgw's own.
    pub fabric_label: Option<String>,
}

/// A step on the way to a value in the file, for pointing at it.
#[derive(Clone)]
pub enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// One input file: its JSON value, and its spanned tree, built only when a
/// diagnostic needs to point somewhere.
pub struct File<'s> {
    pub src: &'s Source,
    value: Value,
    tree: OnceCell<Option<doc::Node<'s>>>,
}

impl<'s> File<'s> {
    /// A JSON file, with the help to give when it is not JSON.
    pub fn read_json(src: &'s Source, help: &str) -> Result<File<'s>, Diag> {
        let value = serde_json::from_str(src.text()).map_err(|e| {
            let at = crate::source::offset_of(src.text(), e.line(), e.column());
            Diag::error(Code::Syntax, format!("{} is not valid JSON: {e}", src.name()))
                .at(src, Span::new(at, at), "here")
                .help(help.to_string())
        })?;
        Ok(File { src, value, tree: OnceCell::new() })
    }

    pub fn value(&self) -> &Value {
        &self.value
    }

    fn read(src: &'s Source) -> Result<File<'s>, Diag> {
        if src.format() == Format::Json {
            return Self::read_json(src, "give what `kubectl get ... -o json` prints");
        }
        let tree = doc::parse(src.text(), src.format()).map_err(|e| {
            Diag::error(Code::Syntax, format!("{} is not valid YAML: {}", src.name(), e.message))
                .at(src, e.span, "here")
                .help("give what `kubectl get ... -o yaml` prints")
        })?;
        let value = to_json(&tree);
        Ok(File { src, value, tree: OnceCell::new() })
    }

    /// Where a value is, by its path: the nearest span the tree has.
    pub fn span(&self, path: &[Step<'_>]) -> Span {
        let tree = self.tree.get_or_init(|| doc::parse(self.src.text(), self.src.format()).ok());
        let Some(mut at) = tree.as_ref() else { return Span::new(0, 0) };
        for step in path {
            let next = match (step, &at.value) {
                (Step::Key(k), doc::Value::Table(t)) => t.iter().find(|e| e.key == *k).map(|e| &e.value),
                (Step::Index(i), doc::Value::Array(a)) => a.get(*i),
                _ => None,
            };
            match next {
                Some(n) => at = n,
                None => break,
            }
        }
        at.span
    }

    pub fn error(&self, code: Code, path: &[Step<'_>], message: String, label: &str, help: &str) -> Diag {
        Diag::error(code, message).at(self.src, self.span(path), label).help(help)
    }

    /// The objects of kind `kind`: the file's `items` (a `List`), or the
    /// file itself (one object).
    fn objects<T: for<'de> Deserialize<'de>>(&self, kind: &str) -> Result<Vec<T>, Vec<Diag>> {
        let bad = |path: &[Step<'_>], why: String| {
            vec![self.error(
                Code::WrongType,
                path,
                why,
                "not what kubectl prints",
                &format!("give the output of `kubectl get {}s -o json` (a List of {kind})", kind.to_lowercase()),
            )]
        };
        let top = self.value.get("kind").and_then(Value::as_str).unwrap_or("");
        let items: Vec<&Value> = match (top, self.value.get("items").and_then(Value::as_array)) {
            (k, _) if k == kind => vec![&self.value],
            (k, Some(items)) if k == "List" || k == format!("{kind}List") => items.iter().collect(),
            _ => {
                let what = if top.is_empty() { "no kind".to_string() } else { format!("kind `{top}`") };
                return Err(bad(
                    &[Step::Key("kind")],
                    format!("{} is not a {kind} list: it has {what}", self.src.name()),
                ));
            }
        };
        let mut out = Vec::with_capacity(items.len());
        let mut errors = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let path = |k| {
                if top == kind { vec![Step::Key(k)] } else { vec![Step::Key("items"), Step::Index(i), Step::Key(k)] }
            };
            match item.get("kind").and_then(Value::as_str) {
                Some(k) if k != kind => errors.extend(bad(&path("kind"), format!("item {i} is a {k}, not a {kind}"))),
                _ => match T::deserialize(*item) {
                    Ok(o) => out.push(o),
                    Err(e) => errors.extend(bad(&path("metadata"), format!("item {i} is not a {kind}: {e}"))),
                },
            }
        }
        if errors.is_empty() { Ok(out) } else { Err(errors) }
    }

    fn item_path(&self, i: usize) -> Vec<Step<'static>> {
        if self.value.get("items").is_some() { vec![Step::Key("items"), Step::Index(i)] } else { Vec::new() }
    }
}

/// One YAML document as JSON, through llmgw's own bounded YAML reader.
pub fn yaml_to_json(text: &str) -> Result<Value, String> {
    doc::parse(text, Format::Yaml).map(|t| to_json(&t)).map_err(|e| e.message)
}

/// The spanned tree as JSON, for YAML input.
fn to_json(n: &doc::Node<'_>) -> Value {
    match &n.value {
        doc::Value::Str(s) => Value::String(s.to_string()),
        doc::Value::Int(i) => (*i).into(),
        doc::Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        doc::Value::Bool(b) => (*b).into(),
        doc::Value::Null | doc::Value::Other(_) => Value::Null,
        doc::Value::Array(a) => a.iter().map(to_json).collect(),
        doc::Value::Table(t) => {
            t.iter().map(|e| (e.key.to_string(), to_json(&e.value))).collect::<serde_json::Map<_, _>>().into()
        }
    }
}

/// The node's state: NotReady is down, then the llmgw.io/draining taint,
/// then cordoned (`spec.unschedulable`).
fn state(n: &KubeNode) -> State {
    let ready = n
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Ready"))
        .is_some_and(|c| c.status == "True");
    let spec = n.spec.as_ref();
    if !ready {
        State::Down
    } else if spec.and_then(|s| s.taints.as_ref()).is_some_and(|t| t.iter().any(|t| t.key == "llmgw.io/draining")) {
        State::Draining
    } else if spec.and_then(|s| s.unschedulable).unwrap_or(false) {
        State::Cordoned
    } else {
        State::Ready
    }
}

/// Label-safe text back to what it stood for: `llmgw-0.1.0` -> `llmgw 0.1.0`.
fn discovered_by(v: &str) -> String {
    v.replacen('-', " ", 1)
}

/// One node: id, labels, state, memory, GPUs, llmgw's own labels.
fn node(
    file: &File<'_>,
    i: usize,
    k: &KubeNode,
    settings: &Settings,
    warnings: &mut Vec<Diag>,
) -> Result<Node, Vec<Diag>> {
    let mut at = file.item_path(i);
    at.push(Step::Key("metadata"));
    let id = k.metadata.name.clone().unwrap_or_default();
    if id.is_empty() {
        return Err(vec![file.error(
            Code::MissingField,
            &at,
            format!("node {i} has no metadata.name"),
            "no name",
            "every Node has a name",
        )]);
    }
    let labels: BTreeMap<String, String> = k.metadata.labels.clone().unwrap_or_default();
    let status = k.status.as_ref();
    let capacity = status.and_then(|s| s.capacity.as_ref());
    let memory_total_mb = match capacity.and_then(|c| c.get("memory")) {
        None => 0,
        Some(q) => match quantity::parse(&q.0) {
            Some(bytes) => (bytes / (1024.0 * 1024.0)) as u64,
            None => {
                let mut p = file.item_path(i);
                p.extend([Step::Key("status"), Step::Key("capacity"), Step::Key("memory")]);
                return Err(vec![file.error(
                    Code::WrongType,
                    &p,
                    format!("node `{id}`: memory `{}` is not a Kubernetes quantity", q.0),
                    "not a quantity",
                    "a quantity is a number with an optional suffix: 2113470464Ki, 2Ti, 64G",
                )]);
            }
        },
    };
    let gpus = gpus::of(file, i, &id, &labels, status, warnings)?;
    let mut engines: Option<BTreeMap<String, String>> = None;
    let mut fabrics = Vec::new();
    let mut node = Node {
        id: id.clone(),
        discovered_by: labels.get("llmgw.io/discovered-by").map(|v| discovered_by(v)),
        state: state(k),
        labels: labels.clone(),
        memory_total_mb,
        cpus: None,
        engines: None,
        weights: None,
        disk: None,
        gpus,
        fabrics: Vec::new(),
        allocations: Vec::new(),
        origin: None,
    };
    for (key, value) in &labels {
        if let Some(engine) = key.strip_prefix("llmgw.io/engine.") {
            let version = if value == "present" { String::new() } else { value.clone() };
            engines.get_or_insert_default().insert(engine.to_string(), version);
        } else if let Some(name) = key.strip_prefix("llmgw.io/fabric.") {
            // An adapter list too long for a label is written as its count.
            let hcas =
                (!value.bytes().all(|b| b.is_ascii_digit())).then(|| value.split('.').map(str::to_string).collect());
            fabrics.push(Fabric { name: name.to_string(), hcas });
        } else if let Some(gpu) = key.strip_prefix("llmgw.io/nvlink.").and_then(|g| g.parse::<u32>().ok()) {
            let peers: Vec<u32> = value.split('.').filter_map(|p| p.parse().ok()).collect();
            if let Some(g) = node.gpus.iter_mut().find(|g| g.index == gpu) {
                g.nvlink_peers = peers;
            }
        }
    }
    let known: Vec<u32> = node.gpus.iter().map(|g| g.index).collect();
    for g in &mut node.gpus {
        g.nvlink_peers.retain(|p| known.contains(p) && *p != g.index);
    }
    if node.discovered_by.is_some() && engines.is_none() {
        engines = Some(BTreeMap::new());
    }
    if fabrics.is_empty()
        && let Some(name) = settings.fabric_label.as_ref().and_then(|k| labels.get(k))
    {
        fabrics.push(Fabric { name: name.clone(), hcas: None });
    }
    node.engines = engines;
    node.fabrics = fabrics;
    Ok(node)
}

/// An inventory from `kubectl get nodes` output, and the GPUs the pods
/// hold from `kubectl get pods -A` output; with the warnings to show.
pub fn import(nodes: &Source, pods: Option<&Source>, settings: &Settings) -> Result<(Inventory, Vec<Diag>), Vec<Diag>> {
    let file = File::read(nodes).map_err(|d| vec![d])?;
    let kube: Vec<KubeNode> = file.objects("Node")?;
    let mut warnings = Vec::new();
    let mut errors = Vec::new();
    let mut out = Vec::with_capacity(kube.len());
    for (i, k) in kube.iter().enumerate() {
        match node(&file, i, k, settings, &mut warnings) {
            Ok(n) => out.push(n),
            Err(d) => errors.extend(d),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    if let Some(w) = out.windows(2).find(|w| w[0].id == w[1].id) {
        return Err(vec![
            Diag::error(Code::DuplicateNode, format!("node `{}` is listed twice", w[0].id))
                .at(nodes, Span::new(0, 0), "in this file")
                .help("give the output of one `kubectl get nodes`"),
        ]);
    }
    if let Some(pods) = pods {
        let pf = File::read(pods).map_err(|d| vec![d])?;
        let list: Vec<Pod> = pf.objects("Pod")?;
        gpus::allocations(&pf, &list, &mut out, &mut warnings)?;
    }
    Ok((Inventory { nodes: out }, warnings))
}

pub(crate) fn allocation(model: String, replica: u32, gpus: Vec<u32>, mig_devices: Vec<u32>) -> Allocation {
    Allocation::new(model, replica, gpus, mig_devices)
}
