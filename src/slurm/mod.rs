//! Slurm as the source of the fleet: an inventory from what the
//! controller's own commands print (`sinfo --json`, `scontrol show nodes
//! --json`, `scontrol -d show node -o`), with fabrics from its topology.
//! llmgw talks to no controller itself. See docs/slurm.md.

pub mod hostlist;
mod records;
pub mod render;
mod topology;

use std::collections::BTreeMap;

use crate::diag::{Code, Diag, Source};
use crate::inventory::{Fabric, Gpu, Inventory, Node, State};
use records::{Input, Record};

/// What `inventory import slurm` is told besides the node file.
#[derive(Default)]
pub struct Settings {
    /// A feature prefix that marks a node's fabric (`ib-` for `ib-east`).
    pub fabric_feature: Option<String>,
}

/// How bad a state word is: the most restrictive one wins.
fn state_of(word: &str) -> Option<State> {
    Some(match word {
        "IDLE" | "MIXED" | "ALLOCATED" | "ALLOC" | "COMPLETING" | "COMP" | "CLOUD" | "PLANNED" | "DYNAMIC_NORM"
        | "DYNAMIC_FUTURE" | "REBOOT_REQUESTED" | "POWERING_UP" | "POWER_UP" | "UNDRAIN" | "RESUME" | "BLOCKED"
        | "PERFCTRS" | "NPC" => State::Ready,
        "DRAIN" | "DRAINED" | "DRAINING" | "DRAIN_PENDING" | "POWER_DRAIN" => State::Draining,
        "DOWN" | "NOT_RESPONDING" | "NO_RESPOND" | "FAIL" | "FAILING" | "UNKNOWN" | "POWERED_DOWN" | "POWER_DOWN"
        | "POWERING_DOWN" | "FUTURE" | "INVALID" | "INVALID_REG" | "REBOOT_ISSUED" | "INVAL" => State::Down,
        "RESERVED" | "RESV" | "MAINT" | "MAINTENANCE" => State::Cordoned,
        _ => return None,
    })
}

fn rank(s: State) -> u8 {
    match s {
        State::Ready => 0,
        State::Cordoned => 1,
        State::Draining => 2,
        State::Down => 3,
    }
}

/// The node's state from all its words, or the word llmgw does not know.
fn state(r: &Record) -> Result<State, String> {
    let mut out = State::Ready;
    for w in &r.states {
        let s = state_of(w).ok_or_else(|| w.clone())?;
        if rank(s) > rank(out) {
            out = s;
        }
    }
    Ok(out)
}

/// One `gpu:TYPE:N(...)` entry of a Gres string: its type (empty when
/// untyped) and count; `None` for a resource other than GPUs.
fn gres_entry(e: &str) -> Result<Option<(String, u32, &str)>, String> {
    let (head, tail) = match e.find('(') {
        Some(p) if e.ends_with(')') => (&e[..p], &e[p + 1..e.len() - 1]),
        Some(_) => return Err(format!("`{e}` has an unclosed `(`")),
        None => (e, ""),
    };
    let parts: Vec<&str> = head.split(':').collect();
    if parts[0] != "gpu" {
        return Ok(None);
    }
    let (ty, n) = match parts[..] {
        [_, n] => ("", n),
        [_, ty, n] => (ty, n),
        _ => return Err(format!("`{e}` is not `gpu:TYPE:COUNT`")),
    };
    let n: u32 = n.parse().map_err(|_| format!("`{e}`: `{n}` is not a GPU count"))?;
    if n > 1024 {
        return Err(format!("`{e}`: {n} GPUs on one node is more than llmgw believes"));
    }
    Ok(Some((ty.to_string(), n, tail)))
}

/// Splits a Gres list at the commas outside parentheses.
fn gres_list(s: &str) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0u32, 0, Vec::new());
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out.into_iter().map(str::trim).filter(|e| !e.is_empty() && *e != "(null)" && *e != "N/A").collect()
}

/// The GPUs of `Gres=`, numbered in order across types, and the first type.
fn gpus(gres: &str) -> Result<(Vec<Gpu>, Option<String>), String> {
    let mut out = Vec::new();
    let mut first = None;
    for e in gres_list(gres) {
        let Some((ty, n, _)) = gres_entry(e)? else { continue };
        let name = if ty.is_empty() { "gpu".to_string() } else { ty.clone() };
        if !ty.is_empty() && first.is_none() {
            first = Some(ty);
        }
        for _ in 0..n {
            let index = u32::try_from(out.len()).unwrap_or(u32::MAX);
            out.push(Gpu::named(index, &name, 0));
        }
    }
    Ok((out, first))
}

/// The GPU indices `GresUsed=` names (`IDX:0-1,4`), and how many are used
/// without indices being given.
fn used(gres_used: &str) -> Result<(Vec<u32>, u32), String> {
    let (mut idx, mut unnamed) = (Vec::new(), 0);
    for e in gres_list(gres_used) {
        let Some((_, n, tail)) = gres_entry(e)? else { continue };
        let idx_list = tail.find("IDX:").map(|i| tail[i + 4..].split([' ', ')']).next().unwrap_or_default());
        match idx_list {
            Some("N/A") => {}
            Some(list) => {
                for part in list.split(',') {
                    let (a, b) = part.split_once('-').unwrap_or((part, part));
                    let bad = || format!("`{e}`: `{part}` is not a GPU index or range");
                    let (a, b): (u32, u32) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
                    if a > b || b > 1024 {
                        return Err(bad());
                    }
                    idx.extend(a..=b);
                }
            }
            None => unnamed += n,
        }
    }
    Ok((idx, unnamed))
}

fn node(input: &Input<'_>, r: &Record, settings: &Settings, warnings: &mut Vec<Diag>) -> Result<Node, Diag> {
    let src = input.source();
    let st = state(r).map_err(|w| {
        Diag::error(Code::UnknownState, format!("node `{}`: `{w}` is not a Slurm node state llmgw knows", r.name))
            .at(src, input.span(r, "state"), "this state")
            .help("states llmgw reads: IDLE, MIXED, ALLOCATED, COMPLETING, DRAIN, DOWN, NOT_RESPONDING, FAIL, UNKNOWN, POWERED_DOWN, RESERVED, MAINT")
    })?;
    let gres_err = |field: &str, why: String| {
        Diag::error(Code::SlurmGres, format!("node `{}`: {why}", r.name))
            .at(src, input.span(r, field), "this gres")
            .help("a GPU gres reads `gpu:TYPE:COUNT` or `gpu:COUNT`, as in `Gres=gpu:h100:8(S:0-1)`")
    };
    let (gpus, gres_type) = gpus(&r.gres).map_err(|w| gres_err("gres", w))?;
    let mut labels = BTreeMap::new();
    for f in &r.features {
        labels.insert(f.clone(), "true".to_string());
    }
    for p in &r.partitions {
        labels.insert(format!("slurm/partition.{p}"), "true".to_string());
    }
    if let Some(t) = &gres_type {
        labels.insert("slurm/gres-type".to_string(), t.clone());
    }
    let mut allocations = Vec::new();
    if let Some(u) = &r.gres_used {
        let (mut idx, unnamed) = used(u).map_err(|w| gres_err("gres_used", w))?;
        if let Some(bad) = idx.iter().find(|i| **i as usize >= gpus.len()) {
            return Err(gres_err("gres_used", format!("GPU {bad} is in use but the node has {} GPUs", gpus.len())));
        }
        if unnamed > 0 {
            let free: Vec<u32> = (0..u32::try_from(gpus.len()).unwrap_or(0)).filter(|i| !idx.contains(i)).collect();
            idx.extend(free.iter().take(unnamed as usize));
            warnings.push(
                Diag::warning(
                    Code::GpusAssumed,
                    format!("node `{}`: {unnamed} GPUs in use without their indices; taken as the lowest free", r.name),
                )
                .at(src, input.span(r, "gres_used"), "no IDX here")
                .help("`scontrol -d show node -o` (with -d) prints which GPUs are in use"),
            );
        }
        idx.sort_unstable();
        idx.dedup();
        if !idx.is_empty() {
            allocations.push(crate::kubernetes::allocation("slurm:busy".to_string(), 0, idx, Vec::new()));
        }
    }
    let fabrics = settings
        .fabric_feature
        .as_ref()
        .and_then(|p| r.features.iter().find(|f| f.starts_with(p.as_str())))
        .map(|f| vec![Fabric { name: f.clone(), hcas: None }])
        .unwrap_or_default();
    Ok(Node {
        id: r.name.clone(),
        discovered_by: None,
        state: st,
        labels,
        memory_total_mb: r.real_memory,
        cpus: None,
        engines: None,
        weights: None,
        disk: None,
        gpus,
        fabrics,
        allocations,
        origin: None,
    })
}

/// An inventory from a Slurm node listing, fabrics from a topology file
/// when given; with the warnings to show.
pub fn import(
    nodes: &Source,
    topology: Option<&Source>,
    settings: &Settings,
) -> Result<(Inventory, Vec<Diag>), Vec<Diag>> {
    let (input, records) = records::read(nodes)?;
    let mut warnings = Vec::new();
    let mut errors = Vec::new();
    let mut out: Vec<Node> = Vec::with_capacity(records.len());
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &records {
        if let Some(&first) = seen.get(r.name.as_str()) {
            // `sinfo` lists a node once per partition: join the partitions.
            let parts: Vec<String> = r.partitions.iter().map(|p| format!("slurm/partition.{p}")).collect();
            for p in parts {
                out[first].labels.insert(p, "true".to_string());
            }
            continue;
        }
        match node(&input, r, settings, &mut warnings) {
            Ok(n) => {
                seen.insert(&r.name, out.len());
                out.push(n);
            }
            Err(d) => errors.push(d),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    if let Some(t) = topology {
        let fabric = topology::read(t)?;
        for n in &mut out {
            if let Some(f) = fabric.get(&n.id) {
                n.fabrics = vec![Fabric { name: f.clone(), hcas: None }];
            }
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    Ok((Inventory { nodes: out }, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gres_types_become_classes() {
        let (g, ty) = gpus("gpu:nvidia_h100_80gb_hbm3:2(S:0-1),shard:4").unwrap();
        assert_eq!(g.len(), 2);
        assert_eq!(g[1].class, "h100-80gb-hbm3");
        assert_eq!(ty.as_deref(), Some("nvidia_h100_80gb_hbm3"));
        let (g, _) = gpus("gpu:a:1,gpu:b:2").unwrap();
        assert_eq!(g.iter().map(|g| g.index).collect::<Vec<_>>(), [0, 1, 2]);
        assert!(gpus("gpu:h100:x").is_err());
        assert!(gpus("gpu:h100:8(S:0").is_err());
    }

    #[test]
    fn used_indices_are_read() {
        assert_eq!(used("gpu:h100:3(IDX:0-1,5)").unwrap(), (vec![0, 1, 5], 0));
        assert_eq!(used("gpu:h100:0(IDX:N/A)").unwrap(), (vec![], 0));
        assert_eq!(used("gpu:2").unwrap(), (vec![], 2));
        assert!(used("gpu:h100:1(IDX:x)").is_err());
    }

    #[test]
    fn the_most_restrictive_state_wins() {
        let r = |s: &[&str]| Record {
            name: "n".into(),
            states: s.iter().map(ToString::to_string).collect(),
            gres: String::new(),
            gres_used: None,
            features: vec![],
            partitions: vec![],
            real_memory: 0,
            at: records::At::Json(vec![]),
        };
        assert_eq!(state(&r(&["IDLE"])), Ok(State::Ready));
        assert_eq!(state(&r(&["MIXED", "DRAIN"])), Ok(State::Draining));
        assert_eq!(state(&r(&["IDLE", "MAINT"])), Ok(State::Cordoned));
        assert_eq!(state(&r(&["DOWN", "DRAIN", "RESERVED"])), Ok(State::Down));
        assert_eq!(state(&r(&["IDLE", "BOGUS"])), Err("BOGUS".to_string()));
    }
}
