//! The checks both loaders make once a node's fields are read: GPU indices
//! unique, NVLink peers and allocations naming GPUs the node has, no GPU
//! held twice. The spanned loader reports what they find; the fast loader,
//! which has no spans, takes any finding as "not sure" and hands the file
//! to the spanned one.

use std::collections::BTreeMap;

use super::{Allocation, Gpu, Node, State};
use crate::decode::Decoder;
use crate::diag::{Code, Diag};
use crate::doc::Span;

pub const U32: u64 = u32::MAX as u64;

/// A GPU as read, with the spans of what the checks look at.
pub struct GpuPart {
    pub gpu: Gpu,
    pub index_span: Span,
    pub peers: Vec<(u64, Span)>,
}

/// An allocation as read, its GPU indices not yet checked.
pub struct AllocPart {
    pub alloc: Allocation,
    pub gpus: Vec<(u64, Span)>,
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
    }
    n.gpus = raw.into_iter().map(|g| g.gpu).collect();
}

pub fn check_allocations(dec: &mut Decoder, n: &mut Node, raw: Vec<AllocPart>) {
    let indices: Vec<u32> = n.gpus.iter().map(|g| g.index).collect();
    let mut taken: BTreeMap<u32, Span> = BTreeMap::new();
    for mut a in raw {
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
        n.allocations.push(a.alloc);
    }
}

fn list(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}
