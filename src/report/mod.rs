//! Turning decisions into what people and programs read: one renderer per
//! output, all deterministic, none of them deciding anything.

mod json;
pub use json::*;

pub mod capacity;
pub mod diagnostics;
pub mod diff;
pub mod engine_check;
pub mod explain;
mod explain_json;
pub mod lint;
pub mod nodes;
pub mod place;
pub mod reasons;

use std::io::Write as _;

use comfy_table::{ContentArrangement, Table};
use serde::ser::{Serialize, SerializeSeq, Serializer};

use crate::placement::{Placement, Pool, Rejection};
use crate::share::ShareJson;
use crate::units::cpus_text;
use crate::wording::Names;

/// A JSON array written straight from an iterator, so a plan with ten
/// thousand placements is never built up as one big value first.
pub struct SeqOf<I>(pub std::cell::RefCell<Option<I>>);

impl<I> SeqOf<I> {
    pub fn new(iter: I) -> Self {
        SeqOf(std::cell::RefCell::new(Some(iter)))
    }
}

impl<I, T> Serialize for SeqOf<I>
where
    I: Iterator<Item = T>,
    T: Serialize,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let iter = self.0.borrow_mut().take();
        let mut seq = s.serialize_seq(None)?;
        for item in iter.into_iter().flatten() {
            seq.serialize_element(&item)?;
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn binary_sizes_say_gib_or_mib_and_never_round_up() {
        let mib = |m: u64| super::binary_size(m << 20);
        assert_eq!(mib(246_385), "240 GiB");
        assert_eq!(mib(2000), "1.9 GiB");
        assert_eq!(mib(1024), "1.0 GiB");
        assert_eq!(mib(10_239), "9.9 GiB");
        assert_eq!(mib(10_240), "10 GiB");
        assert_eq!(mib(512), "512 MiB");
        assert_eq!(mib(0), "0 MiB");
        assert_eq!(super::binary_size(u64::MAX / 2), format!("{} GiB", (u64::MAX / 2) >> 30));
    }
}

#[derive(serde::Serialize)]
pub struct PlacementJson<'a> {
    pub model: &'a str,
    pub replica: u32,
    pub profile: &'a str,
    pub engine: &'a str,
    pub pool: String,
    pub fabric: Option<&'a str>,
    pub nodes: Vec<ShareJson<'a>>,
}

#[derive(serde::Serialize)]
pub struct RejectionJson<'a> {
    pub profile: &'a str,
    pub pool: String,
    pub node: &'a str,
    pub reason: String,
}

impl<'a> Names<'a> {
    pub fn placement_json(&self, p: &'a Placement) -> PlacementJson<'a> {
        let prof = self.profile(p.model, p.profile);
        PlacementJson {
            model: &self.model(p.model).name,
            replica: p.replica,
            profile: &prof.name,
            engine: prof.engine.name,
            pool: self.pool(p.fabric.map_or(Pool::Single, Pool::Fabric), prof),
            fabric: p.fabric.map(|f| self.fabric(f)),
            nodes: p
                .nodes
                .iter()
                .enumerate()
                .map(|(rank, a)| ShareJson {
                    rank: Some(rank as u32),
                    hcas: Some(self.hcas(p, a.node)),
                    ..ShareJson::of(self.node(a.node), &a.gpus, &a.mig_devices, a.cpus_millis, a.memory_mb)
                })
                .collect(),
        }
    }

    pub fn rejection_json(&self, model: u32, r: &Rejection) -> RejectionJson<'a> {
        let prof = self.profile(model, r.profile);
        RejectionJson {
            profile: &prof.name,
            pool: self.pool(r.pool, prof),
            node: r.node.map_or("", |n| self.node(n)),
            reason: self.reason(r.reason, prof),
        }
    }

    /// "gpu-a01 [0,1,2,3]", one line per rank.
    pub fn nodes_cell(&self, p: &Placement) -> String {
        p.nodes
            .iter()
            .enumerate()
            .map(|(rank, a)| {
                let gpus = match (a.gpus.is_empty(), a.mig_devices.is_empty()) {
                    (true, _) => "cpu".to_string(),
                    (false, true) => format!("gpus {}", join(&a.gpus)),
                    (false, false) => format!("gpu {} MIG {}", join(&a.gpus), join(&a.mig_devices)),
                };
                // What it asks of the node, where the node reports it.
                let mut asks = Vec::new();
                if let Some(c) = a.cpus_millis {
                    asks.push(format!("{} CPU{}", cpus_text(c), if c == 1000 { "" } else { "s" }));
                }
                if let Some(m) = a.memory_mb {
                    asks.push(binary_size(m << 20));
                }
                let asks = if asks.is_empty() { String::new() } else { format!("; {}", asks.join(", ")) };
                if p.nodes.len() > 1 {
                    format!("{rank}: {} {gpus}{asks}", self.node(a.node))
                } else {
                    format!("{} {gpus}{asks}", self.node(a.node))
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// A binary size for people: whole GiB from 10 GiB up, tenths of a GiB
/// below, MiB under one GiB; always rounded down, so a node never looks
/// bigger than it is (Slurm's RealMemory 2000 is "1.9 GiB", not "1 GB").
pub fn binary_size(bytes: u64) -> String {
    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;
    match bytes {
        b if b >= 10 * GIB => format!("{} GiB", b / GIB),
        b if b >= GIB => {
            let tenths = b * 10 / GIB;
            format!("{}.{} GiB", tenths / 10, tenths % 10)
        }
        b => format!("{} MiB", b / MIB),
    }
}

pub fn join<T: std::fmt::Display>(v: &[T]) -> String {
    v.iter().map(T::to_string).collect::<Vec<_>>().join(",")
}

pub fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED).set_header(header.to_vec());
    match crate::term::output_width() {
        Some(w) => t.set_content_arrangement(ContentArrangement::Dynamic).set_width(w.min(u16::MAX.into()) as u16),
        None => t.set_content_arrangement(ContentArrangement::Disabled),
    };
    t
}
