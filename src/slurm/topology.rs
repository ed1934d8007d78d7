//! Fabrics from Slurm's topology: `topology.conf` (the tree plugin's
//! `SwitchName=... Switches=... Nodes=...` lines) or `topology.yaml`
//! (Slurm 25.05: tree and block topologies). Nodes under one top-level
//! switch, or in one block, share a fabric named after it.

use std::collections::BTreeMap;

use serde_json::Value;

use super::hostlist;
use crate::diag::{Code, Diag, Source};
use crate::doc::Span;

/// One switch: its name, children switches and nodes (hostlists), and where it is.
struct Switch {
    name: String,
    switches: String,
    nodes: String,
    span: Span,
}

/// Node name -> fabric name.
pub fn read(src: &Source) -> Result<BTreeMap<String, String>, Vec<Diag>> {
    let text = src.text();
    let looks_yaml = text.lines().map(str::trim).any(|l| l.starts_with("- topology:") || l.starts_with("topology:"));
    if looks_yaml {
        yaml(src)
    } else {
        let switches = conf(src)?;
        tree(src, &switches)
    }
}

fn bad(src: &Source, span: Span, why: String) -> Vec<Diag> {
    vec![
        Diag::error(Code::Hostlist, format!("{}: {why}", src.name()))
            .at(src, span, "here")
            .help("give Slurm's topology.conf (`SwitchName=s1 Nodes=gpu[01-16]`) or topology.yaml"),
    ]
}

fn conf(src: &Source) -> Result<Vec<Switch>, Vec<Diag>> {
    let mut out = Vec::new();
    for line_no in 0..src.line_count() {
        let span = src.line_span(line_no);
        let line = &src.text()[span.start..span.end];
        let line = line.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        let mut sw = Switch { name: String::new(), switches: String::new(), nodes: String::new(), span };
        let full = &src.text()[span.start..span.end];
        for word in line.split_whitespace() {
            // Point at the word itself when it is the one in error.
            let at = word.as_ptr() as usize - full.as_ptr() as usize + span.start;
            let word_span = Span::new(at, at + word.len());
            let Some((k, v)) = word.split_once('=') else {
                return Err(bad(src, word_span, format!("`{word}` is not `Key=value`")));
            };
            match k.to_ascii_lowercase().as_str() {
                "switchname" => sw.name = v.to_string(),
                "switches" | "nodes" => {
                    if let Err(w) = hostlist::expand(v) {
                        return Err(bad(src, word_span, w));
                    }
                    if k.eq_ignore_ascii_case("nodes") { sw.nodes = v.to_string() } else { sw.switches = v.to_string() }
                }
                _ => {}
            }
        }
        if sw.name.is_empty() {
            return Err(bad(src, span, format!("line {} has no SwitchName", line_no + 1)));
        }
        out.push(sw);
    }
    Ok(out)
}

/// Every node's fabric: the top-level switch above its leaf switch.
fn tree(src: &Source, switches: &[Switch]) -> Result<BTreeMap<String, String>, Vec<Diag>> {
    let mut parent: BTreeMap<String, String> = BTreeMap::new();
    let mut leaf: BTreeMap<String, String> = BTreeMap::new();
    for s in switches {
        let expand = |e: &str| hostlist::expand(e).map_err(|w| bad(src, s.span, w));
        if !s.switches.is_empty() {
            for c in expand(&s.switches)? {
                parent.entry(c).or_insert_with(|| s.name.clone());
            }
        }
        if !s.nodes.is_empty() {
            for n in expand(&s.nodes)? {
                leaf.entry(n).or_insert_with(|| s.name.clone());
            }
        }
    }
    let top = |leaf: &String| -> String {
        let mut s = leaf;
        // Bounded, so a cycle in a malformed file ends.
        for _ in 0..=parent.len() {
            match parent.get(s) {
                Some(p) => s = p,
                None => break,
            }
        }
        s.clone()
    };
    Ok(leaf.iter().map(|(n, s)| (n.clone(), top(s))).collect())
}

fn yaml(src: &Source) -> Result<BTreeMap<String, String>, Vec<Diag>> {
    let v = crate::kubernetes::yaml_to_json(src.text())
        .map_err(|e| bad(src, Span::new(0, 0), format!("not valid YAML: {e}")))?;
    let list: Vec<&Value> = match &v {
        Value::Array(a) => a.iter().collect(),
        other => vec![other],
    };
    // The cluster's default topology, else the first.
    let Some(topo) =
        list.iter().find(|t| t.get("cluster_default").and_then(Value::as_bool) == Some(true)).or_else(|| list.first())
    else {
        return Ok(BTreeMap::new());
    };
    let whole = Span::new(0, src.text().len());
    let s = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_string();
    if let Some(switches) = topo.pointer("/tree/switches").and_then(Value::as_array) {
        let switches: Vec<Switch> = switches
            .iter()
            .map(|x| Switch {
                name: s(x.get("switch")),
                switches: s(x.get("children")),
                nodes: s(x.get("nodes")),
                span: whole,
            })
            .collect();
        return tree(src, &switches);
    }
    let mut out = BTreeMap::new();
    if let Some(blocks) = topo.pointer("/block/blocks").and_then(Value::as_array) {
        for b in blocks {
            for n in hostlist::expand(&s(b.get("nodes"))).map_err(|w| bad(src, whole, w))? {
                out.entry(n).or_insert_with(|| s(b.get("block")));
            }
        }
        return Ok(out);
    }
    Err(bad(src, whole, "the topology has neither `tree.switches` nor `block.blocks`".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_share_the_top_level_switch() {
        let src = crate::source::source(
            "topology.conf",
            "# two spines\nSwitchName=leaf1 Nodes=gpu[01-02]\nSwitchName=leaf2 Nodes=gpu[03-04]\nSwitchName=east Switches=leaf[1-2]\nSwitchName=west Nodes=gpu05\n".into(),
        );
        let f = read(&src).unwrap();
        assert_eq!(f["gpu01"], "east");
        assert_eq!(f["gpu04"], "east");
        assert_eq!(f["gpu05"], "west");
    }

    #[test]
    fn yaml_trees_and_blocks() {
        let tree = "- topology: t\n  cluster_default: true\n  tree:\n    switches:\n      - switch: root\n        children: s[1-2]\n      - switch: s1\n        nodes: n[1-2]\n      - switch: s2\n        nodes: n3\n";
        let f = read(&crate::source::source("topology.yaml", tree.into())).unwrap();
        assert_eq!(f["n3"], "root");
        let block = "- topology: b\n  block:\n    block_sizes: [2]\n    blocks:\n      - block: b1\n        nodes: n[1-2]\n      - block: b2\n        nodes: n[3-4]\n";
        let f = read(&crate::source::source("topology.yaml", block.into())).unwrap();
        assert_eq!((f["n2"].as_str(), f["n3"].as_str()), ("b1", "b2"));
    }
}
