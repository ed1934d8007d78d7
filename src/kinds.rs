//! What a file is, when it is not what the command reads. `kubectl get
//! nodes -o json` given as an inventory used to get "unknown field
//! `apiVersion` in inventory", `scontrol show node` text a TOML syntax
//! error, and a catalog and an inventory swapped a list of unknown fields:
//! true, and no help. Asked only once a file has failed to load, so a good
//! file costs nothing.

use crate::diag::{Code, Diag, Source};
use crate::doc::{self, Span, Value};

/// The kinds of file llmgw reads, and those it imports first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    Inventory,
    Catalog,
    Plan,
    /// `kubectl get ... -o json|yaml`: the object's kind (a List's items' kind).
    Kubernetes(String),
    /// `scontrol show node` text, `sinfo --json`, `scontrol show nodes --json`.
    SlurmNodes,
    /// `scontrol show job` text, `squeue --json`.
    SlurmJobs,
}

/// What `src` looks like, with the place that says so; `None` when it
/// looks like nothing llmgw knows (then the loader's own errors stand).
pub fn sniff(src: &Source) -> Option<(Kind, Span)> {
    let text = src.text();
    let first = text.lines().map(str::trim_start).find(|l| !l.is_empty() && !l.starts_with('#'))?;
    let at = text.find(first).unwrap_or(0);
    let key_span = |len: usize| Span::new(at, at + len);
    if first.starts_with("NodeName=") {
        return Some((Kind::SlurmNodes, key_span("NodeName".len())));
    }
    if first.starts_with("JobId=") {
        return Some((Kind::SlurmJobs, key_span("JobId".len())));
    }
    let root = doc::parse(text, src.format()).ok()?;
    let Value::Table(entries) = &root.value else { return None };
    let get = |k: &str| entries.iter().find(|e| e.key == k);
    let string = |n: &doc::Node<'_>| match &n.value {
        Value::Str(s) => Some(s.to_string()),
        _ => None,
    };
    if let (Some(_), Some(kind)) = (get("apiVersion"), get("kind")) {
        let mut name = string(&kind.value).unwrap_or_default();
        // A List says what it holds only in its items.
        if name == "List"
            && let Some(items) = get("items")
            && let Value::Array(items) = &items.value.value
            && let Some(Value::Table(first)) = items.first().map(|n| &n.value)
            && let Some(k) = first.iter().find(|e| e.key == "kind").and_then(|e| string(&e.value))
        {
            name = format!("{k}List");
        }
        return Some((Kind::Kubernetes(name), kind.key_span));
    }
    for (key, kind) in [
        ("sinfo", Kind::SlurmNodes),
        ("jobs", Kind::SlurmJobs),
        ("placements", Kind::Plan),
        ("model", Kind::Catalog),
        ("node", Kind::Inventory),
    ] {
        if let Some(e) = get(key) {
            return Some((kind, e.key_span));
        }
    }
    // `scontrol show nodes --json` / slurmrestd: nodes with hostnames.
    if let Some(e) = get("nodes")
        && let Value::Array(list) = &e.value.value
        && list.iter().any(|n| matches!(&n.value, Value::Table(t) if t.iter().any(|x| x.key == "hostname")))
    {
        return Some((Kind::SlurmNodes, e.key_span));
    }
    None
}

/// The diagnostic for `src`, read as `wanted`, when it is plainly another
/// kind of file; `None` otherwise.
pub fn wrong(src: &Source, wanted: &Kind) -> Option<Diag> {
    let (found, span) = sniff(src)?;
    if &found == wanted {
        return None;
    }
    let name = src.name();
    let want = match wanted {
        Kind::Inventory => "an inventory",
        Kind::Catalog => "a catalog",
        Kind::Plan => "a plan",
        _ => return None,
    };
    let (is, help) = match &found {
        Kind::Kubernetes(k) if k.starts_with("Pod") => (
            format!("Kubernetes `{k}` output"),
            format!("import it with the nodes first: llmgw inventory import kubernetes NODES --pods {name}"),
        ),
        Kind::Kubernetes(k) if k.starts_with("Node") => {
            (format!("Kubernetes `{k}` output"), format!("import it first: llmgw inventory import kubernetes {name}"))
        }
        Kind::Kubernetes(k) => (
            format!("Kubernetes `{k}` output"),
            "llmgw imports nodes (`kubectl get nodes -o json`) and, with them, pods: llmgw inventory import kubernetes NODES --pods PODS".to_string(),
        ),
        Kind::SlurmNodes => {
            ("Slurm's view of its nodes".to_string(), format!("import it first: llmgw inventory import slurm {name}"))
        }
        Kind::SlurmJobs => (
            "Slurm's view of its jobs".to_string(),
            format!("import it with the nodes first: llmgw inventory import slurm NODES --jobs {name}"),
        ),
        Kind::Catalog => (
            "a catalog (it lists `model`s)".to_string(),
            match wanted {
                Kind::Plan => "make a plan from it: llmgw place CATALOG --inventory FLEET --format json".to_string(),
                _ => "give the catalog as CATALOG and the fleet with --inventory".to_string(),
            },
        ),
        Kind::Inventory => (
            "an inventory (it lists `node`s)".to_string(),
            match wanted {
                Kind::Plan => "make a plan on it: llmgw place CATALOG --inventory FLEET --format json".to_string(),
                _ => "give the fleet with --inventory, and the catalog as CATALOG".to_string(),
            },
        ),
        Kind::Plan => (
            "a plan (what `place --format json` writes)".to_string(),
            "a plan is read by render, diff and map".to_string(),
        ),
    };
    Some(
        Diag::error(Code::WrongKind, format!("{name} is not {want}: it is {is}"))
            .at(src, span, "this says what the file is")
            .help(help),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::source;

    #[test]
    fn each_kind_is_told_by_what_it_opens_with() {
        let kind = |name: &str, text: &str| sniff(&source(name, text.to_string())).map(|k| k.0);
        assert_eq!(
            kind("n.json", r#"{"apiVersion": "v1", "kind": "List", "items": [{"kind": "Node"}]}"#),
            Some(Kind::Kubernetes("NodeList".into()))
        );
        assert_eq!(kind("n.yaml", "apiVersion: v1\nkind: Node\n"), Some(Kind::Kubernetes("Node".into())));
        assert_eq!(kind("s.txt", "\nNodeName=gpu01 Arch=x86_64\n"), Some(Kind::SlurmNodes));
        assert_eq!(kind("j.txt", "JobId=12 JobName=x\n"), Some(Kind::SlurmJobs));
        assert_eq!(kind("s.json", r#"{"sinfo": []}"#), Some(Kind::SlurmNodes));
        assert_eq!(kind("s.json", r#"{"nodes": [{"hostname": "a"}]}"#), Some(Kind::SlurmNodes));
        assert_eq!(kind("c.toml", "[[model]]\nname = \"m\"\n"), Some(Kind::Catalog));
        assert_eq!(kind("i.toml", "# fleet\n[[node]]\nid = \"a\"\n"), Some(Kind::Inventory));
        assert_eq!(kind("p.json", r#"{"placements": []}"#), Some(Kind::Plan));
        assert_eq!(kind("x.toml", "a = 1\n"), None);
        assert_eq!(kind("e.toml", ""), None);
    }

    #[test]
    fn the_right_kind_gets_no_hint() {
        let src = source("i.toml", "[[node]]\nid = \"a\"\nbogus = 1\n".to_string());
        assert!(wrong(&src, &Kind::Inventory).is_none());
        let d = wrong(&src, &Kind::Catalog).unwrap();
        assert_eq!(d.message, "i.toml is not a catalog: it is an inventory (it lists `node`s)");
    }
}
