//! Fabrics from Slurm's topology: `topology.conf` (the tree plugin's
//! `SwitchName=... Switches=... Nodes=...` lines, the block plugin's
//! `BlockName=... Nodes=...` and `BlockSizes=` lines), what `scontrol show
//! topology` prints of either, or `topology.yaml` (Slurm 25.05: tree and
//! block topologies). Nodes under one top-level switch share a fabric named
//! after it; nodes in one block share an NVLink domain (a fabric of kind
//! nvlink) named after the block: sites describe each GB200/GB300 NVL72
//! rack as one block, and a replica across nodes is placed inside one.
//!
//! Every hostlist is counted before it is expanded, against one budget for
//! the whole file; a switch that is its own ancestor is an error.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

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

/// One block: its name and nodes (a hostlist), and where it is.
struct Block {
    name: String,
    nodes: String,
    span: Span,
}

/// What a topology says about nodes.
#[derive(Debug, Default)]
pub struct Topology {
    /// Node name -> its fabrics (one, or more for a node under several
    /// leaf switches with different tops), in the file's order.
    pub fabrics: BTreeMap<String, Vec<String>>,
    /// The fabrics that are NVLink domains: the blocks.
    pub nvlink: BTreeSet<String>,
    /// Nodes under more than one leaf switch, with those switches.
    pub leaves: BTreeMap<String, Vec<String>>,
    /// Child switch names no `SwitchName=` line defines.
    pub unknown_switches: BTreeSet<String>,
}

impl Topology {
    /// The fabric named `name`: an NVLink domain for a block, else a
    /// switch's fabric (InfiniBand); adapters are not in Slurm's output.
    pub fn fabric(&self, name: &str) -> crate::inventory::Fabric {
        use crate::inventory::FabricKind;
        let kind = if self.nvlink.contains(name) { FabricKind::Nvlink } else { FabricKind::Infiniband };
        crate::inventory::Fabric { name: name.to_string(), kind, hcas: None }
    }
}

pub fn read(src: &Source) -> Result<Topology, Vec<Diag>> {
    let text = src.text();
    let looks_yaml = crate::import::lines(text)
        .iter()
        .map(|s| text[s.start..s.end].trim())
        .any(|l| l.starts_with("- topology:") || l.starts_with("topology:"));
    let mut budget = crate::import::MAX_NAMES;
    if looks_yaml {
        yaml(src, &mut budget)
    } else {
        let (switches, blocks) = conf(src, &mut budget)?;
        let mut out = tree(src, &switches)?;
        add_blocks(src, &blocks, &mut out)?;
        Ok(out)
    }
}

/// Each block's nodes in its NVLink domain, named after the block.
fn add_blocks(src: &Source, blocks: &[Block], out: &mut Topology) -> Result<(), Vec<Diag>> {
    for b in blocks {
        // Counted in `conf`: each expansion here is within budget.
        for n in hostlist::expand(&b.nodes).map_err(|w| bad(src, b.span, w))? {
            let f = out.fabrics.entry(n).or_default();
            if !f.contains(&b.name) {
                f.push(b.name.clone());
            }
        }
        out.nvlink.insert(b.name.clone());
    }
    Ok(())
}

fn bad(src: &Source, span: Span, why: String) -> Vec<Diag> {
    vec![
        Diag::error(Code::Hostlist, format!("{}: {why}", src.name()))
            .at(src, span, "here")
            .help("give Slurm's topology.conf (`SwitchName=s1 Nodes=gpu[01-16]`, `BlockName=b1 Nodes=gpu[01-18]`), what `scontrol show topology` prints, or topology.yaml"),
    ]
}

/// Checks a hostlist and takes its names from the file's budget, before
/// any name is written out.
fn charge(expr: &str, budget: &mut u64) -> Result<(), String> {
    let n = hostlist::parse(expr)?.count();
    if n > *budget {
        return Err(hostlist::too_many(expr, n, *budget));
    }
    *budget -= n;
    Ok(())
}

/// The switches and blocks of a `topology.conf`, or of what `scontrol show
/// topology` prints (the same keys, with `Level=`, `LinkSpeed=`,
/// `BlockIndex=`, `BlockSize=` beside them). `BlockSizes=` must be sizes;
/// an `AggregatedBlock=` line (Slurm 24.11's higher block levels) is the
/// union of base blocks, which are the NVLink domains, so it adds none.
fn conf(src: &Source, budget: &mut u64) -> Result<(Vec<Switch>, Vec<Block>), Vec<Diag>> {
    let mut switches = Vec::new();
    let mut blocks = Vec::new();
    for (line_no, span) in crate::import::lines(src.text()).into_iter().enumerate() {
        let full = &src.text()[span.start..span.end];
        let line = full.split('#').next().unwrap_or_default();
        if line.trim().is_empty() {
            continue;
        }
        let mut sw = Switch { name: String::new(), switches: String::new(), nodes: String::new(), span };
        let mut block: Option<String> = None;
        let mut aggregated = false;
        let mut sizes = false;
        for word in line.split_whitespace() {
            // Point at the word itself when it is the one in error.
            let at = word.as_ptr() as usize - full.as_ptr() as usize + span.start;
            let word_span = Span::new(at, at + word.len());
            let Some((k, v)) = word.split_once('=') else {
                return Err(bad(src, word_span, format!("`{word}` is not `Key=value`")));
            };
            match k.to_ascii_lowercase().as_str() {
                "switchname" => sw.name = v.to_string(),
                "blockname" => block = Some(v.to_string()),
                "aggregatedblock" => aggregated = true,
                "blocksizes" => {
                    sizes = true;
                    if v.split(',').any(|n| n.trim().parse::<u32>().map_or(true, |n| n == 0)) {
                        return Err(bad(
                            src,
                            word_span,
                            format!("`{word}`: block sizes are node counts, `BlockSizes=18,36`"),
                        ));
                    }
                }
                "switches" | "nodes" if !aggregated => {
                    charge(v, budget).map_err(|w| bad(src, word_span, w))?;
                    if k.eq_ignore_ascii_case("nodes") { sw.nodes = v.to_string() } else { sw.switches = v.to_string() }
                }
                _ => {}
            }
        }
        if aggregated || (sizes && sw.name.is_empty() && block.is_none()) {
            continue;
        }
        match (block, sw.name.is_empty()) {
            (Some(name), true) if !name.is_empty() => blocks.push(Block { name, nodes: sw.nodes, span }),
            (None, false) => switches.push(sw),
            (Some(_), false) => {
                return Err(bad(src, span, format!("line {} names a switch and a block", line_no + 1)));
            }
            _ => return Err(bad(src, span, format!("line {} has no SwitchName or BlockName", line_no + 1))),
        }
    }
    Ok((switches, blocks))
}

/// Every node's fabrics: the top-level switch above each of its leaf switches.
fn tree(src: &Source, switches: &[Switch]) -> Result<Topology, Vec<Diag>> {
    let defined: BTreeMap<&str, &Switch> = switches.iter().map(|s| (s.name.as_str(), s)).collect();
    // Child switch -> its parents: a fat tree gives a leaf several spines.
    let mut parents: BTreeMap<String, Vec<&Switch>> = BTreeMap::new();
    let mut leaf: BTreeMap<String, Vec<&Switch>> = BTreeMap::new();
    let mut out = Topology::default();
    // Counted in `conf`/`yaml` already: each expansion here is within budget.
    let expand = |e: &str, s: &Switch| hostlist::expand(e).map_err(|w| bad(src, s.span, w));
    for s in switches {
        if !s.switches.is_empty() {
            for c in expand(&s.switches, s)? {
                if !defined.contains_key(c.as_str()) {
                    out.unknown_switches.insert(c.clone());
                }
                let p = parents.entry(c).or_default();
                if !p.iter().any(|x| x.name == s.name) {
                    p.push(s);
                }
            }
        }
        if !s.nodes.is_empty() {
            for n in expand(&s.nodes, s)? {
                let under = leaf.entry(n).or_default();
                if !under.iter().any(|x| x.name == s.name) {
                    under.push(s);
                }
            }
        }
    }
    let tops = tops(src, switches, &parents)?;
    // Each node's fabrics: the tops of its leaf switches, at most
    // `MAX_NAMES` memberships in all, counted before any is written.
    let memberships: usize =
        leaf.values().map(|under| under.iter().map(|s| tops[s.name.as_str()].len()).sum::<usize>()).sum();
    if memberships as u64 > crate::import::MAX_NAMES {
        return Err(bad(
            src,
            Span::new(0, 0),
            format!("the topology puts its nodes in {memberships} fabrics in all, more than llmgw takes"),
        ));
    }
    for (n, under) in leaf {
        let mut fabrics: Vec<String> = Vec::new();
        for s in &under {
            for t in tops[s.name.as_str()].iter() {
                if !fabrics.contains(t) {
                    fabrics.push(t.clone());
                }
            }
        }
        if under.len() > 1 {
            out.leaves.insert(n.clone(), under.iter().map(|s| s.name.clone()).collect());
        }
        out.fabrics.insert(n, fabrics);
    }
    Ok(out)
}

/// Each defined switch's top-level switches, from the tops down: a switch
/// with no parent is its own top; any other has its parents' tops, found
/// once all its parents' are (so a long chain is linear, and a switch with
/// one parent shares that parent's list). A switch never reached is on a
/// cycle, which Slurm refuses and so does llmgw.
fn tops<'s>(
    src: &Source,
    switches: &'s [Switch],
    parents: &BTreeMap<String, Vec<&'s Switch>>,
) -> Result<BTreeMap<&'s str, Rc<Vec<String>>>, Vec<Diag>> {
    let mut waiting: BTreeMap<&str, usize> = BTreeMap::new();
    let mut children: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for s in switches {
        let ps = parents.get(&s.name).map_or(&[][..], Vec::as_slice);
        waiting.insert(&s.name, ps.len());
        for p in ps {
            children.entry(p.name.as_str()).or_default().push(&s.name);
        }
    }
    let mut tops: BTreeMap<&str, Rc<Vec<String>>> = BTreeMap::new();
    let mut ready: Vec<&str> = waiting.iter().filter(|(_, n)| **n == 0).map(|(s, _)| *s).collect();
    for r in &ready {
        tops.insert(r, Rc::new(vec![(*r).to_string()]));
    }
    // Bounded merging: a knot of many spines over many switches is refused.
    let mut work = 0usize;
    while let Some(s) = ready.pop() {
        for &c in children.get(s).into_iter().flatten() {
            // Already reached: a switch defined twice is counted once but
            // listed as a child once per definition.
            let Some(left) = waiting.get_mut(c).filter(|l| **l > 0) else { continue };
            *left -= 1;
            if *left > 0 {
                continue;
            }
            let ps = &parents[c];
            let merged = if let [one] = ps.as_slice() {
                Rc::clone(&tops[one.name.as_str()])
            } else {
                let mut all: Vec<String> = Vec::new();
                for p in ps {
                    work += tops[p.name.as_str()].len();
                    all.extend(tops[p.name.as_str()].iter().cloned());
                }
                all.sort();
                all.dedup();
                Rc::new(all)
            };
            if work as u64 > 16 * crate::import::MAX_NAMES {
                return Err(bad(
                    src,
                    Span::new(0, 0),
                    "the topology's switches reach too many top-level switches".into(),
                ));
            }
            tops.insert(c, merged);
            ready.push(c);
        }
    }
    if let Some(s) = switches.iter().find(|s| !tops.contains_key(s.name.as_str())) {
        let mut d = Diag::error(
            Code::TopologyCycle,
            format!("{}: switch `{}` is its own ancestor, or below one that is", src.name(), s.name),
        )
        .at(src, s.span, "this switch")
        .help("a topology is a tree: remove the switch from its descendant's `Switches=`");
        if let Some(p) = parents.get(&s.name).and_then(|p| p.first()) {
            d = d.label(p.span, "names it below itself");
        }
        return Err(vec![d]);
    }
    Ok(tops)
}

fn yaml(src: &Source, budget: &mut u64) -> Result<Topology, Vec<Diag>> {
    let v = crate::import::file::yaml_to_json(src.text())
        .map_err(|e| bad(src, Span::new(0, 0), format!("not valid YAML: {e}")))?;
    let list: Vec<&Value> = match &v {
        Value::Array(a) => a.iter().collect(),
        other => vec![other],
    };
    // The cluster's default topology, else the first.
    let Some(topo) =
        list.iter().find(|t| t.get("cluster_default").and_then(Value::as_bool) == Some(true)).or_else(|| list.first())
    else {
        return Ok(Topology::default());
    };
    let whole = Span::new(0, src.text().len());
    let s = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_string();
    if let Some(switches) = topo.pointer("/tree/switches").and_then(Value::as_array) {
        let mut out = Vec::with_capacity(switches.len());
        for x in switches {
            let sw = Switch {
                name: s(x.get("switch")),
                switches: s(x.get("children")),
                nodes: s(x.get("nodes")),
                span: whole,
            };
            for e in [&sw.switches, &sw.nodes] {
                if !e.is_empty() {
                    charge(e, budget).map_err(|w| bad(src, whole, w))?;
                }
            }
            out.push(sw);
        }
        return tree(src, &out);
    }
    let mut out = Topology::default();
    if let Some(blocks) = topo.pointer("/block/blocks").and_then(Value::as_array) {
        for b in blocks {
            let nodes = s(b.get("nodes"));
            charge(&nodes, budget).map_err(|w| bad(src, whole, w))?;
            let name = s(b.get("block"));
            for n in hostlist::expand(&nodes).map_err(|w| bad(src, whole, w))? {
                let f = out.fabrics.entry(n).or_default();
                if !f.contains(&name) {
                    f.push(name.clone());
                }
            }
            out.nvlink.insert(name);
        }
        return Ok(out);
    }
    Err(bad(src, whole, "the topology has neither `tree.switches` nor `block.blocks`".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_conf(text: &str) -> Result<Topology, Vec<Diag>> {
        read(&crate::source::source("topology.conf", text.into()))
    }

    #[test]
    fn nodes_share_the_top_level_switch() {
        let f = read_conf(
            "# two spines\nSwitchName=leaf1 Nodes=gpu[01-02]\nSwitchName=leaf2 Nodes=gpu[03-04]\nSwitchName=east Switches=leaf[1-2]\nSwitchName=west Nodes=gpu05\n",
        )
        .unwrap()
        .fabrics;
        assert_eq!(f["gpu01"], ["east"]);
        assert_eq!(f["gpu04"], ["east"]);
        assert_eq!(f["gpu05"], ["west"]);
    }

    #[test]
    fn a_node_under_two_leaves_is_in_both_fabrics() {
        let t = read_conf("SwitchName=l1 Nodes=n[1-2]\nSwitchName=l2 Nodes=n[2-3]\nSwitchName=a Switches=l1\nSwitchName=b Switches=l2\n")
            .unwrap();
        assert_eq!(t.fabrics["n2"], ["a", "b"]);
        assert_eq!(t.leaves["n2"], ["l1", "l2"]);
        assert_eq!(t.leaves.len(), 1);
    }

    #[test]
    fn a_leaf_under_several_spines_is_in_each_spines_fabric() {
        let t = read_conf("SwitchName=s0 Nodes=n[0-1]\nSwitchName=s1 Nodes=n[2-3]\nSwitchName=a Switches=s[0-1]\nSwitchName=b Switches=s[0-1]\n")
            .unwrap();
        assert_eq!(t.fabrics["n0"], ["a", "b"]);
        assert!(t.leaves.is_empty());
    }

    #[test]
    fn a_switch_defined_twice_does_not_panic() {
        // Found by the mutation property test: the second definition's
        // parent list counted twice what was waited for once.
        let t = read_conf("SwitchName=s0 Nodes=n0\nSwitchName=s0 Nodes=n1\nSwitchName=a Switches=s0\n").unwrap();
        assert_eq!(t.fabrics["n0"], ["a"]);
        assert_eq!(t.fabrics["n1"], ["a"]);
    }

    #[test]
    fn cycles_and_huge_lists_are_errors() {
        let e = read_conf("SwitchName=a Switches=b Nodes=n1\nSwitchName=b Switches=a Nodes=n2\n").unwrap_err();
        assert_eq!(e[0].code, Code::TopologyCycle);
        assert!(read_conf("SwitchName=a Switches=a\n").is_err());
        // Each line within the cap, the file not: refused before expanding.
        let many: String = (0..3).map(|i| format!("SwitchName=s{i} Nodes=x{i}-[0-499999]\n")).collect();
        let e = read_conf(&many).unwrap_err();
        assert!(e[0].message.contains("500000 names"), "{}", e[0].message);
    }

    #[test]
    fn undefined_child_switches_are_noted() {
        let t = read_conf("SwitchName=top Switches=l[1-2]\nSwitchName=l1 Nodes=n1\n").unwrap();
        assert_eq!(t.unknown_switches.iter().collect::<Vec<_>>(), ["l2"]);
    }

    #[test]
    fn yaml_trees_and_blocks() {
        let tree = "- topology: t\n  cluster_default: true\n  tree:\n    switches:\n      - switch: root\n        children: s[1-2]\n      - switch: s1\n        nodes: n[1-2]\n      - switch: s2\n        nodes: n3\n";
        let f = read(&crate::source::source("topology.yaml", tree.into())).unwrap().fabrics;
        assert_eq!(f["n3"], ["root"]);
        let block = "- topology: b\n  block:\n    block_sizes: [2]\n    blocks:\n      - block: b1\n        nodes: n[1-2]\n      - block: b2\n        nodes: n[3-4]\n";
        let f = read(&crate::source::source("topology.yaml", block.into())).unwrap().fabrics;
        assert_eq!((f["n2"][0].as_str(), f["n3"][0].as_str()), ("b1", "b2"));
    }
}
