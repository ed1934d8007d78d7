//! Turning decisions into what people and programs read: one renderer per
//! output, all deterministic, none of them deciding anything.

pub mod capacity;
pub mod diagnostics;
pub mod diff;
pub mod engine_check;
pub mod explain;
mod explain_json;
pub mod lint;
pub mod nodes;
pub mod place;

use comfy_table::{ContentArrangement, Table};

use crate::placement::Placement;
use crate::units::cpus_text;
use crate::wording::Names;

impl Names<'_> {
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
