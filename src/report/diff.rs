//! `diff` output: a table per kind of change, or the JSON of docs/placement.md.

use std::fmt::Write as _;

use crate::diff::{Diff, Where};

pub fn json<W: std::io::Write>(out: W, d: &Diff) -> std::io::Result<()> {
    super::write_json(out, d)
}

/// "gpu-a01 gpus 0,1,2,3", one line per rank.
fn at(nodes: &[Where]) -> String {
    nodes
        .iter()
        .map(|w| {
            let mut s = if w.gpus.is_empty() {
                format!("{} cpu", w.node)
            } else {
                format!("{} gpus {}", w.node, super::join(&w.gpus))
            };
            if !w.mig_devices.is_empty() {
                let _ = write!(s, " MIG {}", super::join(&w.mig_devices));
            }
            s
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn human(d: &Diff) -> String {
    let mut out = String::new();
    if !d.moved.is_empty() {
        let mut t = super::table(&["MOVED", "REPLICA", "FROM", "TO"]);
        for m in &d.moved {
            t.add_row(vec![m.model.clone(), m.replica.to_string(), at(&m.old), at(&m.new)]);
        }
        let _ = writeln!(out, "{t}");
    }
    for (title, list) in [("PLACED", &d.placed), ("UNPLACED", &d.unplaced), ("REMOVED", &d.removed)] {
        if list.is_empty() {
            continue;
        }
        let mut t = super::table(&[title, "REPLICA", if title == "PLACED" { "ON" } else { "WAS ON" }]);
        for o in list {
            t.add_row(vec![o.model.clone(), o.replica.to_string(), o.nodes.as_deref().map_or("-".into(), at)]);
        }
        let _ = writeln!(out, "{t}");
    }
    let changed = d.moved.len() + d.placed.len() + d.unplaced.len() + d.removed.len();
    if changed == 0 {
        let _ = writeln!(out, "No placement differs ({} unchanged).", d.unchanged);
    } else {
        let _ = writeln!(
            out,
            "{} moved, {} placed, {} unplaced, {} removed, {} unchanged",
            d.moved.len(),
            d.placed.len(),
            d.unplaced.len(),
            d.removed.len(),
            d.unchanged
        );
    }
    out
}
