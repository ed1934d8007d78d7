//! The checks both loaders make once a node's fields are read: GPU indices
//! unique, NVLink peers and allocations naming GPUs the node has, no GPU
//! held twice. The spanned loader reports what they find; the fast loader,
//! which has no spans, takes any finding as "not sure" and hands the file
//! to the spanned one.

use std::collections::BTreeMap;

use super::{Allocation, Gpu, MigDevice, Node, State};
use crate::decode::Decoder;
use crate::diag::{Code, Diag};
use crate::doc::Span;

pub const U32: u64 = u32::MAX as u64;

/// A GPU as read, with the spans of what the checks look at.
pub struct GpuPart {
    pub gpu: Gpu,
    pub index_span: Span,
    pub peers: Vec<(u64, Span)>,
    /// Its MIG devices, each with the span of its index.
    pub migs: Vec<(MigDevice, Span)>,
}

/// An allocation as read, its GPU and MIG indices not yet checked.
pub struct AllocPart {
    pub alloc: Allocation,
    pub gpus: Vec<(u64, Span)>,
    pub migs: Vec<(u64, Span)>,
}

/// The node's state, or a report that it is none of the four.
pub fn state(dec: &mut Decoder, s: &str, span: Span) -> Option<State> {
    let st = State::parse(s);
    if st.is_none() {
        let help = crate::diag::suggest(s, State::ALL.iter().map(|s| s.as_str()), "a node is one of");
        dec.error(Code::UnknownState, span, format!("unknown node state `{s}`"), "unknown state", Some(help));
    }
    st
}

pub fn fabric_kind(dec: &mut Decoder, s: &str, span: Span) -> Option<super::FabricKind> {
    let kind = super::FabricKind::parse(s);
    if kind.is_none() {
        let help = crate::diag::suggest(s, super::FabricKind::ALL.iter().map(|k| k.as_str()), "a fabric is one of");
        dec.error(Code::UnknownFabricKind, span, format!("unknown fabric kind `{s}`"), "unknown kind", Some(help));
    }
    kind
}

pub fn vendor(dec: &mut Decoder, s: &str, span: Span) -> Option<super::Vendor> {
    let v = super::Vendor::parse(s);
    if v.is_none() {
        let help = crate::diag::suggest(s, super::Vendor::ALL.iter().map(|v| v.as_str()), "a GPU's vendor is one of");
        dec.error(Code::UnknownVendor, span, format!("unknown GPU vendor `{s}`"), "unknown vendor", Some(help));
    }
    v
}

pub fn check_gpus(dec: &mut Decoder, n: &mut Node, mut raw: Vec<GpuPart>) {
    raw.sort_by_key(|g| g.gpu.index);
    for w in raw.windows(2) {
        if w[0].gpu.index == w[1].gpu.index {
            let (a, b) = if w[0].index_span.start < w[1].index_span.start { (&w[0], &w[1]) } else { (&w[1], &w[0]) };
            let d = Diag::error(Code::DuplicateGpu, format!("node `{}` has two GPUs with index {}", n.id, b.gpu.index))
                .at(&dec.src, b.index_span, "index used again here")
                .label(a.index_span, "first used here")
                .help("each GPU of a node needs its own index, as NVML numbers them");
            dec.push(d);
        }
    }
    let indices: Vec<u32> = raw.iter().map(|g| g.gpu.index).collect();
    for g in &mut raw {
        let mut peers = Vec::with_capacity(g.peers.len());
        for &(p, span) in &g.peers {
            if p > U32 || indices.binary_search(&(p as u32)).is_err() {
                let d = Diag::error(
                    Code::UnknownPeer,
                    format!(
                        "GPU {} of node `{}` lists NVLink peer {p}, which is not a GPU of the node",
                        g.gpu.index, n.id
                    ),
                )
                .at(&dec.src, span, "no such GPU on this node")
                .help(format!("the node's GPUs are {}", list(&indices)));
                dec.push(d);
            } else {
                peers.push(p as u32);
            }
        }
        g.gpu.nvlink_peers = peers;
        check_migs(dec, &n.id, g);
    }
    n.gpus = raw.into_iter().map(|g| g.gpu).collect();
}

/// MIG devices only on a GPU in MIG mode, each index once.
fn check_migs(dec: &mut Decoder, node: &str, g: &mut GpuPart) {
    let mut migs = std::mem::take(&mut g.migs);
    if let (Some((_, span)), false) = (migs.first(), g.gpu.in_mig_mode()) {
        let d = Diag::error(
            Code::MigWithoutMigMode,
            format!("GPU {} of node `{node}` lists MIG devices but is not in MIG mode", g.gpu.index),
        )
        .at(&dec.src, *span, "a MIG device")
        .help("set `mig = true` on the GPU, or remove its [[node.gpu.mig_device]] entries");
        dec.push(d);
    }
    migs.sort_by_key(|m| m.0.index);
    for w in migs.windows(2) {
        if w[0].0.index == w[1].0.index {
            let (a, b) = if w[0].1.start < w[1].1.start { (&w[0], &w[1]) } else { (&w[1], &w[0]) };
            let d = Diag::error(
                Code::DuplicateMig,
                format!("GPU {} of node `{node}` has two MIG devices with index {}", g.gpu.index, b.0.index),
            )
            .at(&dec.src, b.1, "index used again here")
            .label(a.1, "first used here")
            .help("each MIG device of a GPU needs its own index");
            dec.push(d);
        }
    }
    g.gpu.mig_devices = migs.into_iter().map(|(m, _)| m).collect();
}

pub fn check_allocations(dec: &mut Decoder, n: &mut Node, raw: Vec<AllocPart>) {
    let indices: Vec<u32> = n.gpus.iter().map(|g| g.index).collect();
    let mut taken: BTreeMap<u32, Span> = BTreeMap::new();
    let mut held: BTreeMap<(u32, u32), Span> = BTreeMap::new();
    for mut a in raw {
        // An allocation of MIG devices holds slices of its GPU, not the GPU.
        let mig = !a.migs.is_empty();
        for &(g, span) in &a.gpus {
            let g32 = g.min(U32) as u32;
            if g > U32 || indices.binary_search(&g32).is_err() {
                let have = if indices.is_empty() {
                    "it has no GPUs".to_string()
                } else {
                    format!("its GPUs are {}", list(&indices))
                };
                let d = Diag::error(
                    Code::UnknownGpu,
                    format!(
                        "an allocation of `{}` on node `{}` names GPU {g}, which the node does not have",
                        a.alloc.model, n.id
                    ),
                )
                .at(&dec.src, span, "no such GPU")
                .help(format!("the node reports its GPUs under [[node.gpu]]; {have}"));
                dec.push(d);
            } else if mig {
                a.alloc.gpus.push(g32);
            } else if let Some(first) = taken.get(&g32) {
                let d = Diag::error(Code::GpuAllocatedTwice, format!("GPU {g} of node `{}` is allocated twice", n.id))
                    .at(&dec.src, span, "allocated again here")
                    .label(*first, "first allocated here")
                    .help("a GPU runs one shard at a time: fix whichever allocation is stale");
                dec.push(d);
            } else {
                taken.insert(g32, span);
                a.alloc.gpus.push(g32);
            }
        }
        if mig {
            check_mig_allocation(dec, n, &mut a, &mut held);
        }
        n.allocations.push(a.alloc);
    }
    // A GPU held whole while one of its MIG devices is held too: one of
    // the two is stale, and placement could not say which is free.
    for (&(g, m), &span) in &held {
        if let Some(&whole) = taken.get(&g) {
            let d = Diag::error(
                Code::MigHeldWhole,
                format!("GPU {g} of node `{}` is held whole while its MIG device {m} is held too", n.id),
            )
            .at(&dec.src, span, "MIG device held here")
            .label(whole, "the whole GPU held here")
            .help("a GPU in MIG mode runs its MIG devices, never a whole-GPU workload beside them: fix whichever allocation is stale");
            dec.push(d);
        }
    }
}

/// MIG devices held: the allocation names exactly one GPU, the GPU has
/// the devices, and no other allocation holds them.
fn check_mig_allocation(dec: &mut Decoder, n: &Node, a: &mut AllocPart, held: &mut BTreeMap<(u32, u32), Span>) {
    let first = a.migs[0].1;
    let [gpu] = a.alloc.gpus[..] else {
        if a.gpus.len() == a.alloc.gpus.len() {
            let d = Diag::error(
                Code::MigNeedsOneGpu,
                format!(
                    "an allocation of `{}` on node `{}` holds MIG devices but names {} GPUs",
                    a.alloc.model,
                    n.id,
                    a.alloc.gpus.len()
                ),
            )
            .at(&dec.src, first, "MIG devices of which GPU?")
            .help("name the one GPU the MIG devices belong to: gpus = [index]");
            dec.push(d);
        }
        return;
    };
    let have: Vec<u32> = n
        .gpus
        .iter()
        .find(|g| g.index == gpu)
        .map(|g| g.mig_devices.iter().map(|m| m.index).collect())
        .unwrap_or_default();
    for &(m, span) in &a.migs {
        let m32 = m.min(U32) as u32;
        if m > U32 || !have.contains(&m32) {
            let d = Diag::error(
                Code::UnknownMig,
                format!(
                    "an allocation of `{}` names MIG device {m} of GPU {gpu} on node `{}`, which it does not have",
                    a.alloc.model, n.id
                ),
            )
            .at(&dec.src, span, "no such MIG device")
            .help(if have.is_empty() {
                "the GPU lists no MIG devices".to_string()
            } else {
                format!("its MIG devices are {}", list(&have))
            });
            dec.push(d);
        } else if let Some(prev) = held.get(&(gpu, m32)) {
            let d = Diag::error(
                Code::MigHeldTwice,
                format!("MIG device {m} of GPU {gpu} on node `{}` is held twice", n.id),
            )
            .at(&dec.src, span, "held again here")
            .label(*prev, "first held here")
            .help("a MIG device runs one replica at a time: fix whichever allocation is stale");
            dec.push(d);
        } else {
            held.insert((gpu, m32), span);
            a.alloc.mig_devices.push(m32);
        }
    }
}

fn list(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}
