//! What `lint` says about an inventory file: its loading errors, and
//! warnings about what loads but is likely a mistake.

use std::collections::BTreeSet;

use super::normalize_class;
use crate::diag::{Code, Diag, Source};
use crate::doc::{self, Node, Value};

/// Whether a parsed file is an inventory: it has a top-level `node`.
pub fn is_inventory(root: &Node<'_>) -> bool {
    matches!(&root.value, Value::Table(t) if t.iter().any(|e| e.key == "node"))
}

fn field<'n, 'a>(n: &'n Node<'a>, key: &str) -> Option<&'n Node<'a>> {
    match &n.value {
        Value::Table(t) => t.iter().find(|e| e.key == key).map(|e| &e.value),
        _ => None,
    }
}

fn text<'n>(n: &'n Node<'_>) -> Option<&'n str> {
    match &n.value {
        Value::Str(s) => Some(s),
        _ => None,
    }
}

fn items<'n, 'a>(n: Option<&'n Node<'a>>) -> &'n [Node<'a>] {
    match n.map(|n| &n.value) {
        Some(Value::Array(a)) => a,
        _ => &[],
    }
}

/// The inventory's errors, else its warnings: a node with no state, a
/// fabric named after its subnet manager, and (given the GPU classes the
/// catalogs ask for) a GPU class no profile asks for.
pub fn lint(src: &Source, wanted: Option<&BTreeSet<String>>) -> Vec<Diag> {
    if let Err(errors) = super::load_spanned(src) {
        return errors;
    }
    let Ok(root) = doc::parse(src.text(), src.format()) else { return Vec::new() };
    let mut out = Vec::new();
    // GPU class -> (vendor, the node that said so first).
    let mut vendors: std::collections::BTreeMap<String, (String, String)> = std::collections::BTreeMap::new();
    // Classes warned of, once each.
    let mut mixed: BTreeSet<String> = BTreeSet::new();
    // Fabric name -> (kind, the node that said so first).
    let mut kinds: std::collections::BTreeMap<&str, (&str, &str)> = std::collections::BTreeMap::new();
    for node in items(field(&root, "node")) {
        let id_node = field(node, "id");
        let id = id_node.and_then(text).unwrap_or("");
        let at = id_node.map_or(node.span, |n| n.span);
        if field(node, "state").is_none() {
            out.push(
                Diag::warning(Code::NoState, format!("node `{id}` has no state; it is taken as ready"))
                    .at(src, at, "no `state`")
                    .help("write `state = \"ready\"` (or cordoned, draining, down), so a reader need not know the default"),
            );
        }
        for fabric in items(field(node, "fabric")) {
            let Some(name_node) = field(fabric, "name") else { continue };
            let Some(name) = text(name_node) else { continue };
            let kind_node = field(fabric, "kind");
            let kind = kind_node.and_then(text).unwrap_or("infiniband");
            match kinds.get(name) {
                Some((first, by)) if *first != kind => out.push(
                    Diag::warning(
                        Code::FabricKinds,
                        format!("fabric `{name}` is {kind} on node `{id}` but {first} on node `{by}`"),
                    )
                    .at(src, kind_node.unwrap_or(name_node).span, format!("{kind} here"))
                    .help("one fabric is one kind on every node; placement takes a fabric any node calls nvlink as an NVLink domain"),
                ),
                Some(_) => {}
                None => {
                    kinds.insert(name, (kind, id));
                }
            }
            let lid = name.strip_prefix("ib-sm").filter(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()));
            if let Some(lid) = lid {
                out.push(
                    Diag::warning(
                        Code::DefaultPrefixFabric,
                        format!("fabric `{name}` of node `{id}` is named after its subnet manager (LID {lid})"),
                    )
                    .at(src, name_node.span, "named by the default-prefix fallback")
                    .help(
                        "separate InfiniBand fabrics often share the default subnet prefix; name the fabric in \
                         the node config (`[fabrics]`) and run discover again",
                    ),
                );
            }
        }
        for gpu in items(field(node, "gpu")) {
            let Some(named) = field(gpu, "class").or_else(|| field(gpu, "name")).and_then(text) else { continue };
            let vendor_node = field(gpu, "vendor");
            let vendor = vendor_node.and_then(text).unwrap_or("nvidia");
            let class = normalize_class(named);
            match vendors.get(&class) {
                Some((first, by)) if first != vendor && !mixed.contains(&class) => {
                    out.push(
                        Diag::warning(
                            Code::MixedVendorClass,
                            format!("class `{class}` holds {vendor} GPUs on node `{id}` and {first} GPUs on node `{by}`"),
                        )
                        .at(src, vendor_node.unwrap_or(gpu).span, format!("{vendor} here"))
                        .help("a replica of that class could be given GPUs of both vendors, which no pod or job can ask for: give each vendor's GPUs a class of their own"),
                    );
                    mixed.insert(class);
                }
                Some(_) => {}
                None => {
                    vendors.insert(class, (vendor.to_string(), id.to_string()));
                }
            }
        }
        units(src, node, id, &mut out);
        let Some(wanted) = wanted else { continue };
        for gpu in items(field(node, "gpu")) {
            let Some(named) = field(gpu, "class").or_else(|| field(gpu, "name")) else { continue };
            let Some(raw) = text(named) else { continue };
            let class = normalize_class(raw);
            if !wanted.contains(&class) {
                out.push(
                    Diag::warning(
                        Code::UnusedGpuClass,
                        format!("no profile asks for the `{class}` GPUs of node `{id}`"),
                    )
                    .at(src, named.span, "a class no catalog given uses")
                    .help("add a profile with this gpu_class, or check the spelling of the catalogs' classes"),
                );
            }
        }
    }
    out
}

/// Engines llmgw does not know and sizes too small for their unit: they
/// load, and then place says "does not have vllm installed" or nothing
/// fits, far from the line that is wrong.
fn units(src: &Source, node: &Node<'_>, id: &str, out: &mut Vec<Diag>) {
    if let Some(Value::Table(engines)) = field(node, "engines").map(|n| &n.value) {
        for e in engines.iter().filter(|e| crate::engines::find(&e.key).is_none()) {
            let lower = e.key.to_ascii_lowercase();
            let help = match crate::engines::find(&lower) {
                Some(known) => format!("did you mean `{}`? engine names are lower case", known.name),
                None => crate::diag::suggest(&e.key, crate::engines::names(), "llmgw's engines are"),
            };
            out.push(
                Diag::warning(
                    Code::InventoryEngine,
                    format!("node `{id}` lists `{}`, which is no engine llmgw knows", e.key),
                )
                .at(src, e.key_span, "not an engine name")
                .help(help),
            );
        }
    }
    let mut small = |n: Option<&Node<'_>>, below: i64, what: String, unit: &str, help: &str| {
        if let Some(n) = n
            && let Value::Int(v) = n.value
            && v < below
        {
            out.push(
                Diag::warning(Code::SmallUnit, format!("{what} is {v}: is this in {unit}?"))
                    .at(src, n.span, format!("less than {below}"))
                    .help(help.to_string()),
            );
        }
    };
    small(
        field(node, "memory_total_mb"),
        4096,
        format!("the memory of node `{id}`"),
        "MiB",
        "memory_total_mb counts MiB: a node of 512 GiB is 524288",
    );
    small(
        field(node, "disk").and_then(|d| field(d, "free_bytes")),
        1 << 20,
        format!("the free disk of node `{id}`"),
        "bytes",
        "free_bytes counts bytes: 1 TB free is 1000000000000",
    );
    for gpu in items(field(node, "gpu")) {
        let index = field(gpu, "index").map_or(String::from("?"), |i| match i.value {
            Value::Int(i) => i.to_string(),
            _ => "?".into(),
        });
        small(
            field(gpu, "memory_mb"),
            1024,
            format!("the memory of GPU {index} of node `{id}`"),
            "MiB",
            "memory_mb counts MiB: an H100 80GB is 81559",
        );
    }
}
