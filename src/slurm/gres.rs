//! A node's GPUs from its `Gres=` string, and the GPUs in use from
//! `GresUsed=` or a job's `GRES=...(IDX:...)`.
//!
//! Slurm numbers a node's GPU gres 0.. across types in the order of the
//! gres string (`IDX`); a gres type that is a MIG profile counts MIG
//! devices, whose parent GPUs Slurm never lists. So each Slurm index is a
//! `Slot`: a whole GPU of the inventory, or one MIG device of a parent GPU
//! that the import adds.

use std::collections::BTreeMap;

use crate::import::{MAX_GPUS_PER_NODE, MAX_MIG_PER_GPU, mig};
use crate::inventory::{Allocation, Gpu, MigDevice};

/// What a Slurm GPU index stands for in the inventory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Slot {
    Whole(u32),
    /// A parent GPU and the MIG device's index on it.
    Mig(u32, u32),
}

/// One `gpu:TYPE:N(...)` entry: its type (empty when untyped), count, and
/// what is in its parentheses.
pub struct Entry<'a> {
    pub ty: &'a str,
    pub count: u64,
    pub tail: &'a str,
}

/// Splits a Gres list at the commas outside parentheses.
fn split(s: &str) -> Vec<&str> {
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

/// The GPU entries of a Gres string; other resources (`shard`, `mps`) are
/// left out. Counts add up to at most `limit`, checked as they are read.
pub fn entries(gres: &str, limit: u64) -> Result<Vec<Entry<'_>>, String> {
    let mut out = Vec::new();
    let mut total = 0u64;
    for e in split(gres) {
        let (head, tail) = match e.find('(') {
            Some(p) if e.ends_with(')') => (&e[..p], &e[p + 1..e.len() - 1]),
            Some(_) => return Err(format!("`{e}` has an unclosed `(`")),
            None => (e, ""),
        };
        let parts: Vec<&str> = head.split(':').collect();
        if parts[0] != "gpu" {
            continue;
        }
        let (ty, n) = match parts[..] {
            // `GRES_IDX=gpu(IDX:0-1)` of older `scontrol -d show job`.
            [_] if !tail.is_empty() => ("", "0"),
            [_, n] => ("", n),
            [_, ty, n] => (ty, n),
            _ => return Err(format!("`{e}` is not `gpu:TYPE:COUNT`")),
        };
        let count: u64 = n.parse().map_err(|_| format!("`{e}`: `{n}` is not a GPU count"))?;
        total = total.saturating_add(count);
        if total > limit {
            return Err(format!("`{e}` brings the node's GPU gres to more than {limit}, more than any node holds"));
        }
        out.push(Entry { ty, count, tail });
    }
    Ok(out)
}

/// A node's GPUs as its Gres string gives them.
pub struct NodeGres {
    pub gpus: Vec<Gpu>,
    /// What each Slurm index is, in Slurm's order.
    pub slots: Vec<Slot>,
    /// The gres type of each Slurm index (empty when untyped).
    pub types: Vec<String>,
    /// The first whole-GPU type, for `render` to ask for.
    pub first_type: Option<String>,
    /// MIG profile -> the gres type that names it (`nvidia_a100_3g.39gb`).
    pub mig_types: BTreeMap<String, String>,
    /// MIG devices were put on parent GPUs Slurm does not list: what was done.
    pub mig_note: Option<String>,
}

/// Whole GPUs numbered in order across types; MIG devices packed onto
/// parent GPUs after them (docs/slurm.md, "MIG gres"): GPUs of the node's other gres type
/// when it has one, else of class `mig-parent`, named after the product
/// when the type names one.
pub fn node_gpus(gres: &str) -> Result<NodeGres, String> {
    let limit = MAX_GPUS_PER_NODE * (1 + MAX_MIG_PER_GPU);
    let list = entries(gres, limit)?;
    let whole: u64 = list.iter().filter(|e| mig::slurm_type(e.ty).is_none()).map(|e| e.count).sum();
    if whole > MAX_GPUS_PER_NODE {
        return Err(format!("{whole} GPUs on one node is more than the {MAX_GPUS_PER_NODE} llmgw takes"));
    }
    let mut gpus = Vec::new();
    let mut slots = Vec::new();
    let types: Vec<String> = list.iter().flat_map(|e| (0..e.count).map(|_| e.ty.to_string())).collect();
    let mut first_type = None;
    let mut mig_types = BTreeMap::new();
    // (slot position, profile, product) of each MIG device, in Slurm's order.
    let mut devices: Vec<(usize, &str, Option<&str>)> = Vec::new();
    for e in &list {
        match mig::slurm_type(e.ty) {
            Some((product, profile)) => {
                mig_types.insert(profile.to_string(), e.ty.to_string());
                for _ in 0..e.count {
                    devices.push((slots.len(), profile, product));
                    slots.push(Slot::Mig(0, 0));
                }
            }
            None => {
                let name = if e.ty.is_empty() { "gpu" } else { e.ty };
                if !e.ty.is_empty() && first_type.is_none() {
                    first_type = Some(e.ty.to_string());
                }
                for _ in 0..e.count {
                    let index = gpus.len() as u32;
                    slots.push(Slot::Whole(index));
                    gpus.push(Gpu::named(index, name, 0));
                }
            }
        }
    }
    let mut mig_note = None;
    if !devices.is_empty() {
        let profiles: Vec<&str> = devices.iter().map(|d| d.1).collect();
        let packed = mig::pack(&profiles);
        if whole + packed.len() as u64 > MAX_GPUS_PER_NODE {
            return Err(format!(
                "{} MIG devices need {} GPUs beside the node's {whole}, more than the {MAX_GPUS_PER_NODE} llmgw takes",
                devices.len(),
                packed.len()
            ));
        }
        let product = devices.iter().find_map(|d| d.2);
        let other: Vec<&str> = {
            let mut t: Vec<&str> =
                list.iter().filter(|e| mig::slurm_type(e.ty).is_none() && !e.ty.is_empty()).map(|e| e.ty).collect();
            t.dedup();
            t
        };
        // The parents' name and class: the node's other gres type when it
        // has one (a node's GPUs are one product), else `mig-parent`.
        let (name, class) = match (other.first(), product) {
            (Some(o), _) => ((*o).to_string(), None),
            (None, Some(p)) => (p.to_string(), Some("mig-parent".to_string())),
            (None, None) => ("mig-parent".to_string(), Some("mig-parent".to_string())),
        };
        for held in &packed {
            let index = gpus.len() as u32;
            let mut g = Gpu::named(index, &name, 0);
            if let Some(c) = &class {
                g.class = c.clone();
                g.class_override = Some(c.clone());
            }
            g.mig = Some(true);
            for (m, &d) in held.iter().enumerate() {
                slots[devices[d].0] = Slot::Mig(index, m as u32);
                g.mig_devices.push(MigDevice {
                    index: m as u32,
                    profile: devices[d].1.to_string(),
                    memory_mb: 0,
                    uuid: None,
                    dra_device: None,
                });
            }
            gpus.push(g);
        }
        let kinds: Vec<String> = mig_types.values().cloned().collect();
        mig_note = Some(format!(
            "{} MIG devices ({}) put on {} GPU(s) `{name}` in MIG mode, which Slurm does not list",
            devices.len(),
            kinds.join(", "),
            packed.len()
        ));
    }
    Ok(NodeGres { gpus, slots, types, first_type, mig_types, mig_note })
}

/// The Slurm indices one entry's `IDX:0-1,4` names, each below `slots`;
/// `None` when the entry gives no indices.
fn idx_list(e: &Entry<'_>, slots: usize, out: &mut [bool]) -> Result<bool, String> {
    let Some(at) = e.tail.find("IDX:") else { return Ok(false) };
    let list = e.tail[at + 4..].split([' ', ')', '(']).next().unwrap_or_default();
    if list == "N/A" || list.is_empty() {
        return Ok(true);
    }
    for part in list.split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let bad = || format!("`{part}` is not a GPU index or range");
        let (a, b): (usize, usize) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
        if a > b {
            return Err(bad());
        }
        if b >= slots {
            return Err(format!("GPU index {b} is in use, but the node has {slots} GPU gres"));
        }
        out[a..=b].iter_mut().for_each(|x| *x = true);
    }
    Ok(true)
}

/// The Slurm indices a `GresUsed` or job `GRES` string names, and how many
/// are in use without indices (plain `scontrol show node` without `-d`).
pub fn used(gres_used: &str, slots: usize) -> Result<(Vec<usize>, u64), String> {
    let mut marked = vec![false; slots];
    let mut unnamed = 0u64;
    for e in entries(gres_used, MAX_GPUS_PER_NODE * (1 + MAX_MIG_PER_GPU))? {
        if !idx_list(&e, slots, &mut marked)? {
            unnamed += e.count;
        }
    }
    Ok((marked.iter().enumerate().filter(|(_, m)| **m).map(|(i, _)| i).collect(), unnamed))
}

/// Allocations of `model` holding these slots: one of the whole GPUs, one
/// per parent GPU of the MIG devices (the format's rule: MIG devices are
/// held with exactly one GPU named).
pub fn allocations(model: &str, replica: u32, slots: &[Slot]) -> Vec<Allocation> {
    let mut whole = Vec::new();
    let mut migs: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for s in slots {
        match *s {
            Slot::Whole(g) => whole.push(g),
            Slot::Mig(g, m) => migs.entry(g).or_default().push(m),
        }
    }
    whole.sort_unstable();
    whole.dedup();
    let mut out = Vec::new();
    if !whole.is_empty() {
        out.push(Allocation::new(model.to_string(), replica, whole, Vec::new()));
    }
    for (g, mut m) in migs {
        m.sort_unstable();
        m.dedup();
        out.push(Allocation::new(model.to_string(), replica, vec![g], m));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gres_types_become_classes() {
        let g = node_gpus("gpu:nvidia_h100_80gb_hbm3:2(S:0-1),shard:4").unwrap();
        assert_eq!(g.gpus.len(), 2);
        assert_eq!(g.gpus[1].class, "h100-80gb-hbm3");
        assert_eq!(g.first_type.as_deref(), Some("nvidia_h100_80gb_hbm3"));
        let g = node_gpus("gpu:a:1,gpu:b:2").unwrap();
        assert_eq!(g.gpus.iter().map(|g| g.index).collect::<Vec<_>>(), [0, 1, 2]);
        assert!(node_gpus("gpu:h100:x").is_err());
        assert!(node_gpus("gpu:h100:8(S:0").is_err());
    }

    #[test]
    fn counts_are_capped_as_they_are_read() {
        assert!(node_gpus("gpu:h100:1024").is_ok());
        assert!(node_gpus("gpu:h100:1025").is_err());
        assert!(node_gpus(&vec!["gpu:h100:1000"; 2000].join(",")).is_err());
        assert!(node_gpus("gpu:h100:99999999999999999999").is_err());
        assert!(node_gpus("gpu:1g.10gb:7168").is_ok());
        assert!(node_gpus("gpu:1g.10gb:7169").is_err());
        assert!(node_gpus("gpu:h100:1,gpu:1g.10gb:7168").is_err());
    }

    #[test]
    fn mig_types_are_devices_on_parent_gpus() {
        let g = node_gpus("gpu:1g.10gb:21").unwrap();
        assert_eq!(g.gpus.len(), 3);
        assert!(g.gpus.iter().all(|x| x.in_mig_mode() && x.mig_devices.len() == 7 && x.class == "mig-parent"));
        assert!(g.mig_note.is_some());
        let g = node_gpus(
            "gpu:nvidia_h100_80gb_hbm3:2,gpu:nvidia_h100_80gb_hbm3_4g.40gb:2,gpu:nvidia_h100_80gb_hbm3_1g.10gb:6",
        )
        .unwrap();
        assert_eq!(g.gpus.len(), 4);
        assert!(!g.gpus[0].in_mig_mode() && !g.gpus[1].in_mig_mode());
        assert_eq!(g.gpus[2].class, "h100-80gb-hbm3");
        assert_eq!(g.gpus[2].mig_devices.len(), 4);
        assert_eq!(g.slots[2], Slot::Mig(2, 0));
        let g = node_gpus("gpu:nvidia_a100_3g.39gb:2").unwrap();
        assert_eq!((g.gpus[0].name.as_str(), g.gpus[0].class.as_str()), ("nvidia_a100", "mig-parent"));
    }

    #[test]
    fn used_indices_are_read() {
        assert_eq!(used("gpu:h100:3(IDX:0-1,5)", 8).unwrap(), (vec![0, 1, 5], 0));
        assert_eq!(used("gpu:h100:0(IDX:N/A)", 8).unwrap(), (vec![], 0));
        assert_eq!(used("gpu:2", 8).unwrap(), (vec![], 2));
        assert!(used("gpu:h100:1(IDX:x)", 8).is_err());
        assert!(used("gpu:h100:1(IDX:8)", 8).is_err());
        assert_eq!(used("gpu:h100:2(IDX:0-1),gpu:h100:2(IDX:0-1)", 8).unwrap().0, [0, 1]);
    }
}
