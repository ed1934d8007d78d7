//! Kubernetes as the source of the fleet: an inventory from what `kubectl
//! get nodes -o json|yaml` (and `kubectl get pods -A -o json`) print. llmgw
//! needs no cluster access of its own. See docs/kubernetes.md.

mod amd;
mod gpus;
pub mod labels;
pub mod lws;
mod pods;
pub mod quantity;
pub mod render;
mod requests;
mod trust;

use std::cell::OnceCell;
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Node as KubeNode;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::diag::{Code, Diag, Source};
use crate::doc::{self, Format, Span};
use crate::import::Problems;
use crate::inventory::{Fabric, Inventory, Node, State};

/// What `inventory import kubernetes` is told besides the files.
#[derive(Default)]
pub struct Settings {
    /// A node label whose value names the node's fabric (e.g.
    /// `network.topology.nvidia.com/spine`), for nodes without llmgw's own.
    pub fabric_label: Option<String>,
    /// The namespaces whose pods may be llmgw's replicas; `None`: every one.
    pub namespaces: Option<Vec<String>>,
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
    /// The items of a JSON `List`, unparsed: each is read when its turn
    /// comes, so a list of millions never sits in memory as values.
    raw: Option<Vec<&'s RawValue>>,
    /// The key whose list `raw` holds: `items` (a Kubernetes `List`), or
    /// Slurm's `jobs`, `nodes`, `sinfo`.
    raw_key: &'static str,
    tree: OnceCell<Option<doc::Node<'s>>>,
}

/// The top of a JSON `List`, its items left as text.
#[derive(Deserialize)]
struct ListTop<'a> {
    #[serde(default)]
    kind: Option<String>,
    #[serde(borrow, default)]
    items: Option<Vec<&'a RawValue>>,
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
        Ok(File { src, value, raw: None, raw_key: "items", tree: OnceCell::new() })
    }

    pub fn value(&self) -> &Value {
        &self.value
    }

    /// A JSON object whose list under the first of `keys` it has is left
    /// as text, item by item (`items()`), the rest read as values: a
    /// controller's `squeue --json` of 12 MB never sits in memory as one
    /// tree of values. Without any of `keys`, the whole file as values.
    pub fn read_json_items(src: &'s Source, keys: &[&'static str], help: &str) -> Result<File<'s>, Diag> {
        let top: std::collections::BTreeMap<std::borrow::Cow<'s, str>, &'s RawValue> =
            match serde_json::from_str(src.text()) {
                Ok(top) => top,
                Err(_) => return Self::read_json(src, help),
            };
        let Some((key, list)) = keys.iter().find_map(|k| top.get(*k).map(|v| (*k, *v))) else {
            return Self::read_json(src, help);
        };
        let Ok(items) = serde_json::from_str::<Vec<&'s RawValue>>(list.get()) else {
            return Self::read_json(src, help);
        };
        let mut value = serde_json::Map::new();
        for (k, v) in &top {
            if k.as_ref() != key {
                value.insert(k.to_string(), serde_json::from_str(v.get()).unwrap_or(Value::Null));
            }
        }
        value.insert(key.to_string(), Value::Array(Vec::new()));
        Ok(File { src, value: Value::Object(value), raw: Some(items), raw_key: key, tree: OnceCell::new() })
    }

    /// The key and items `read_json_items` left as text.
    pub fn items(&self) -> Option<(&'static str, &[&'s RawValue])> {
        self.raw.as_deref().map(|r| (self.raw_key, r))
    }

    fn read(src: &'s Source, command: &str) -> Result<File<'s>, Diag> {
        if crate::import::is_blank(src.text()) {
            return Err(crate::import::empty_input(src, command));
        }
        if src.format() == Format::Json {
            if let Ok(ListTop { kind: Some(kind), items: Some(items) }) =
                serde_json::from_str::<ListTop<'s>>(src.text())
                && kind.ends_with("List")
            {
                let value = serde_json::json!({"kind": kind, "items": []});
                return Ok(File { src, value, raw: Some(items), raw_key: "items", tree: OnceCell::new() });
            }
            let mut f = Self::read_json(src, "give what `kubectl get ... -o json` prints")?;
            stringify(&mut f.value, false);
            return Ok(f);
        }
        let tree = doc::parse(src.text(), src.format()).map_err(|e| {
            Diag::error(Code::Syntax, format!("{} is not valid YAML: {}", src.name(), e.message))
                .at(src, e.span, "here")
                .help("give what `kubectl get ... -o yaml` prints")
        })?;
        let value = to_json(&tree, src.text(), false);
        Ok(File { src, value, raw: None, raw_key: "items", tree: OnceCell::new() })
    }

    /// Where a value is, by its path: the nearest span the tree has.
    pub fn span(&self, path: &[Step<'_>]) -> Span {
        // An item of a raw list: only that item is parsed, never the file.
        if let (Some(raw), [Step::Key(key), Step::Index(i), rest @ ..]) = (&self.raw, path)
            && *key == self.raw_key
            && let Some(item) = raw.get(*i)
        {
            let base = item.get().as_ptr() as usize - self.src.text().as_ptr() as usize;
            let Ok(tree) = doc::parse(item.get(), Format::Json) else { return Span::new(base, base) };
            let at = walk(&tree, rest).span;
            return Span::new(base + at.start, base + at.end);
        }
        let tree = self.tree.get_or_init(|| doc::parse(self.src.text(), self.src.format()).ok());
        match tree.as_ref() {
            Some(t) => walk(t, path).span,
            None => Span::new(0, 0),
        }
    }

    pub fn error(&self, code: Code, path: &[Step<'_>], message: String, label: &str, help: &str) -> Diag {
        Diag::error(code, message).at(self.src, self.span(path), label).help(help)
    }

    /// Each object of kind `kind`, read one at a time (a file of millions
    /// of items never becomes millions of typed objects at once): the
    /// file's `items` (a `List`), or the file itself (one object). A file
    /// of another kind is an error; an item that is not a `kind` is one of
    /// `problems`, and reading stops when they are full.
    fn each<T: for<'de> Deserialize<'de>>(
        &self,
        kind: &str,
        problems: &mut Problems,
        mut f: impl FnMut(usize, T, &mut Problems),
    ) -> Result<usize, Vec<Diag>> {
        let bad = |path: &[Step<'_>], why: String| {
            self.error(
                Code::WrongType,
                path,
                why,
                "not what kubectl prints",
                &format!("give the output of `kubectl get {}s -o json` (a List of {kind})", kind.to_lowercase()),
            )
        };
        let top = self.value.get("kind").and_then(Value::as_str).unwrap_or("");
        if let Some(raw) = &self.raw
            && (top == "List" || top == format!("{kind}List"))
        {
            for (i, item) in raw.iter().enumerate() {
                // Valid JSON already: the whole file parsed as a list.
                let mut v: Value = serde_json::from_str(item.get()).unwrap_or(Value::Null);
                stringify(&mut v, false);
                self.one(kind, top, i, &v, problems, &mut f);
                if problems.full() {
                    break;
                }
            }
            return Ok(raw.len());
        }
        let items: &[Value] = match (top, self.value.get("items").and_then(Value::as_array)) {
            (k, _) if k == kind => std::slice::from_ref(&self.value),
            // A list trimmed of its trailing `kind: List` is still one.
            (k, Some(items)) if k.is_empty() || k == "List" || k == format!("{kind}List") => items,
            _ => {
                let what = if top.is_empty() { "no kind".to_string() } else { format!("kind `{top}`") };
                return Err(vec![bad(
                    &[Step::Key("kind")],
                    format!("{} is not a {kind} list: it has {what}", self.src.name()),
                )]);
            }
        };
        for (i, item) in items.iter().enumerate() {
            self.one(kind, top, i, item, problems, &mut f);
            if problems.full() {
                break;
            }
        }
        Ok(items.len())
    }

    /// One item of `each`.
    fn one<T: for<'de> Deserialize<'de>>(
        &self,
        kind: &str,
        top: &str,
        i: usize,
        item: &Value,
        problems: &mut Problems,
        f: &mut impl FnMut(usize, T, &mut Problems),
    ) {
        let path =
            |k| if top == kind { vec![Step::Key(k)] } else { vec![Step::Key("items"), Step::Index(i), Step::Key(k)] };
        let bad = |path: &[Step<'_>], why: String| {
            self.error(
                Code::WrongType,
                path,
                why,
                "not what kubectl prints",
                &format!("give the output of `kubectl get {}s -o json` (a List of {kind})", kind.to_lowercase()),
            )
        };
        match item.get("kind").and_then(Value::as_str) {
            Some(k) if k != kind => problems.push(bad(&path("kind"), format!("item {i} is a {k}, not a {kind}"))),
            _ => match T::deserialize(item) {
                Ok(o) => f(i, o, problems),
                Err(e) => problems.push(bad(&path("metadata"), format!("item {i} is not a {kind}: {e}"))),
            },
        }
    }

    fn item_path(&self, i: usize) -> Vec<Step<'static>> {
        if self.value.get("items").is_some() { vec![Step::Key("items"), Step::Index(i)] } else { Vec::new() }
    }
}

/// The node at `path` in a spanned tree, or the nearest one above it.
fn walk<'t, 'a>(mut at: &'t doc::Node<'a>, path: &[Step<'_>]) -> &'t doc::Node<'a> {
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
    at
}

/// One YAML document as JSON, through llmgw's own bounded YAML reader.
pub fn yaml_to_json(text: &str) -> Result<Value, String> {
    doc::parse(text, Format::Yaml).map(|t| to_json(&t, text, false)).map_err(|e| e.message)
}

/// Maps whose values Kubernetes takes as strings, whatever a YAML writer
/// left unquoted: `nvidia.com/cuda.driver.rev: 08` is the label "08", as
/// kubectl reads it, not the integer 8.
const STRING_MAPS: &[&str] =
    &["labels", "annotations", "capacity", "allocatable", "limits", "requests", "nodeSelector"];

/// The spanned tree as JSON, for YAML input; in a string map (`strings`)
/// a plain scalar is the text it spells.
fn to_json(n: &doc::Node<'_>, text: &str, strings: bool) -> Value {
    let spelled = || Value::String(text.get(n.span.start..n.span.end).unwrap_or_default().to_string());
    match &n.value {
        doc::Value::Str(s) => Value::String(s.to_string()),
        doc::Value::Null if strings => Value::String(String::new()),
        doc::Value::Int(_) | doc::Value::Float(_) | doc::Value::Bool(_) | doc::Value::Other(_) if strings => spelled(),
        doc::Value::Int(i) => (*i).into(),
        doc::Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        doc::Value::Bool(b) => (*b).into(),
        doc::Value::Null | doc::Value::Other(_) => Value::Null,
        doc::Value::Array(a) => a.iter().map(|x| to_json(x, text, false)).collect(),
        doc::Value::Table(t) => t
            .iter()
            .map(|e| (e.key.to_string(), to_json(&e.value, text, strings || STRING_MAPS.contains(&e.key.as_ref()))))
            .collect::<serde_json::Map<_, _>>()
            .into(),
    }
}

/// As `to_json` for JSON input: numbers and booleans a script wrote into a
/// string map become the strings they print as.
fn stringify(v: &mut Value, strings: bool) {
    match v {
        Value::Number(n) if strings => *v = Value::String(n.to_string()),
        Value::Bool(b) if strings => *v = Value::String(b.to_string()),
        Value::Null if strings => *v = Value::String(String::new()),
        Value::Array(a) => a.iter_mut().for_each(|x| stringify(x, false)),
        Value::Object(o) => o.iter_mut().for_each(|(k, x)| stringify(x, strings || STRING_MAPS.contains(&k.as_str()))),
        _ => {}
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

/// Taints that keep workloads off (NoSchedule, NoExecute), as `kubectl
/// describe node` writes them (`key=value:Effect`, `key:Effect`); those
/// that are node states already (cordoned, draining, down) are left out.
fn taints(n: &KubeNode) -> Vec<String> {
    const STATES: &[&str] = &[
        "node.kubernetes.io/unschedulable",
        "llmgw.io/draining",
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ];
    let mut out = Vec::new();
    for t in n.spec.as_ref().and_then(|s| s.taints.as_ref()).into_iter().flatten() {
        if STATES.contains(&t.key.as_str()) || !matches!(t.effect.as_str(), "NoSchedule" | "NoExecute") {
            continue;
        }
        let text = match t.value.as_deref().filter(|v| !v.is_empty()) {
            Some(v) => format!("{}={v}:{}", t.key, t.effect),
            None => format!("{}:{}", t.key, t.effect),
        };
        // A key the inventory could not read back (a space, `=` or `:` in
        // it) is no taint Kubernetes accepts either.
        if crate::taints::parse_taint(&text).is_ok() && !out.contains(&text) {
            out.push(text);
        }
    }
    out
}

/// Label-safe text back to what it stood for: `llmgw-0.1.0` -> `llmgw 0.1.0`.
fn discovered_by(v: &str) -> String {
    v.replacen('-', " ", 1)
}

/// What a node offers workloads: its memory (`status.capacity.memory`,
/// MiB), the memory they may request (`status.allocatable.memory`), and
/// its CPUs (`status.allocatable.cpu`, fractions kept).
struct Sizes {
    memory_total_mb: u64,
    memory_allocatable_mb: Option<u64>,
    cpus: Option<f64>,
}

/// A node's sizes, each in the range the inventory takes, or the error at
/// the quantity.
fn sizes(
    file: &File<'_>,
    i: usize,
    id: &str,
    status: Option<&k8s_openapi::api::core::v1::NodeStatus>,
) -> Result<Sizes, Vec<Diag>> {
    let at_status = |which: &'static str, key: &'static str| {
        let mut p = file.item_path(i);
        p.extend([Step::Key("status"), Step::Key(which), Step::Key(key)]);
        p
    };
    let memory = |which: &'static str| -> Result<Option<u64>, Vec<Diag>> {
        let map = status.and_then(|s| if which == "capacity" { s.capacity.as_ref() } else { s.allocatable.as_ref() });
        let Some(q) = map.and_then(|c| c.get("memory")) else { return Ok(None) };
        quantity::parse(&q.0).and_then(crate::import::mib_of_bytes).map(Some).ok_or_else(|| {
            vec![file.error(
                Code::OutOfRange,
                &at_status(which, "memory"),
                format!("node `{id}`: {which} memory `{}` is not a Kubernetes quantity of bytes llmgw takes", q.0),
                "not a memory size",
                "a quantity is a number with an optional suffix (2113470464Ki, 2Ti, 64G), from 0 to 8 EiB",
            )]
        })
    };
    let memory_total_mb = memory("capacity")?.unwrap_or(0);
    let memory_allocatable_mb = memory("allocatable")?;
    let allocatable = status.and_then(|s| s.allocatable.as_ref());
    let cpus = match allocatable.and_then(|c| c.get("cpu")) {
        None => None,
        // `95500m` is 95.5 CPUs: kept, as the scheduler counts them.
        Some(q) => Some(
            quantity::parse(&q.0)
                .filter(|c| (0.0..=crate::inventory::MAX_CPUS).contains(c))
                // Millicores are the finest unit Kubernetes counts.
                .map(|c| (c * 1000.0).floor() / 1000.0)
                .ok_or_else(|| {
                    vec![file.error(
                        Code::OutOfRange,
                        &at_status("allocatable", "cpu"),
                        format!("node `{id}`: allocatable cpu `{}` is not a CPU count llmgw takes", q.0),
                        "not a CPU count",
                        "Kubernetes writes CPUs as a quantity: 96, 95500m",
                    )]
                })?,
        ),
    };
    Ok(Sizes { memory_total_mb, memory_allocatable_mb, cpus })
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
    if let Some(c) = crate::import::control_in_id(&id) {
        at.push(Step::Key("name"));
        return Err(vec![file.error(
            Code::ControlCharacter,
            &at,
            format!("node `{}` has the control character {} in its name", crate::term::escape(&id), c.escape_default()),
            "this name",
            "node names end up in scripts and file names: Kubernetes' own names never hold one",
        )]);
    }
    let labels: BTreeMap<String, String> = k.metadata.labels.clone().unwrap_or_default();
    let status = k.status.as_ref();
    let Sizes { memory_total_mb, memory_allocatable_mb, cpus } = sizes(file, i, &id, status)?;
    let mut gpus = gpus::of(file, i, &id, &labels, status, warnings)?;
    let first = gpus.last().map_or(0, |g| g.index + 1);
    gpus.extend(amd::of(&gpus::At { file, i, id: &id }, &labels, status, first, warnings)?);
    let mut engines: Option<BTreeMap<String, String>> = None;
    let mut fabrics = Vec::new();
    let mut node = Node {
        id: id.clone(),
        discovered_by: labels.get("llmgw.io/discovered-by").map(|v| discovered_by(v)),
        state: state(k),
        labels: labels.clone(),
        memory_total_mb,
        memory_allocatable_mb,
        taints: taints(k),
        cpus,
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

/// Device plugin resources of GPUs from other vendors, which llmgw does
/// not import yet: never dropped without a word.
const OTHER_VENDORS: &[&str] = &["gpu.intel.com/", "habana.ai/gaudi"];

/// Another vendor's GPUs a node advertises (`status.capacity`), as
/// "node (2 gpu.intel.com/i915)".
fn other_vendor(id: &str, status: Option<&k8s_openapi::api::core::v1::NodeStatus>) -> Vec<String> {
    let mut out = Vec::new();
    for (k, q) in status.and_then(|s| s.capacity.as_ref()).into_iter().flatten() {
        let count = quantity::parse(&q.0).unwrap_or(0.0);
        if count > 0.0 && OTHER_VENDORS.iter().any(|o| if o.ends_with('/') { k.starts_with(o) } else { k == o }) {
            out.push(format!("{} ({count} {k})", crate::term::escape(id)));
        }
    }
    out
}

/// One warning naming the nodes that advertise another vendor's GPUs.
fn other_vendors_warning(seen: &[String]) -> Option<Diag> {
    if seen.is_empty() {
        return None;
    }
    Some(
        Diag::warning(
            Code::OtherVendor,
            format!(
                "{} node(s) advertise GPUs of another vendor, which llmgw does not import yet, so they are left out: {}",
                seen.len(),
                crate::report::shorten(&seen.iter().map(String::as_str).collect::<Vec<_>>(), 5)
            ),
        )
        .help("those nodes are imported without those GPUs; no GPU profile is placed on them"),
    )
}

/// An inventory from `kubectl get nodes` output, and what the pods hold
/// from `kubectl get pods -A` output; with the warnings to show.
pub fn import(nodes: &Source, pods: Option<&Source>, settings: &Settings) -> Result<(Inventory, Vec<Diag>), Vec<Diag>> {
    let file = File::read(nodes, "kubectl get nodes -o json").map_err(|d| vec![d])?;
    let mut warnings = Vec::new();
    let mut problems = Problems::default();
    let mut out = Vec::new();
    let mut others = Vec::new();
    file.each("Node", &mut problems, |i, k: KubeNode, problems| match node(&file, i, &k, settings, &mut warnings) {
        Ok(n) => {
            others.extend(other_vendor(&n.id, k.status.as_ref()));
            out.push(n);
        }
        Err(d) => problems.extend(d),
    })?;
    problems.into_result()?;
    warnings.extend(other_vendors_warning(&others));
    if out.is_empty() {
        return Err(vec![file.error(
            Code::EmptyInput,
            &[Step::Key("items")],
            format!("{} lists no nodes", nodes.name()),
            "no Node here",
            "give what `kubectl get nodes -o json` prints for a cluster with nodes",
        )]);
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
        let pf = File::read(pods, "kubectl get pods -A -o json").map_err(|d| vec![d])?;
        pods::allocations(&pf, &mut out, settings.namespaces.as_deref(), &mut warnings)?;
    }
    Ok((Inventory { nodes: out }, warnings))
}
