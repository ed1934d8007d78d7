//! `diff` output: a table per kind of change, or the JSON of docs/placement.md.

use std::fmt::Write as _;

use crate::diff::{Diff, Moved, Where};

pub fn json<W: std::io::Write>(out: W, d: &Diff) -> std::io::Result<()> {
    crate::json::write_json(out, d)
}

/// "gpu-a01 gpus 0,1,2,3", one line per rank; with `requests`, what the
/// replica asks of each node too ("..., 16 CPUs, 200 GiB").
fn at(nodes: &[Where], requests: bool) -> String {
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
            if let (true, Some(c)) = (requests, w.cpus_millis) {
                let _ = write!(s, ", {} CPUs", crate::units::cpus_text(c));
            }
            if let (true, Some(m)) = (requests, w.memory_mb) {
                let _ = write!(s, ", {}", super::binary_size(m << 20));
            }
            s
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// What else changed with a moved replica: "profile tp4 -> tp8".
fn what(m: &Moved) -> String {
    let mut parts = Vec::new();
    for (name, c) in [("profile", &m.profile), ("engine", &m.engine), ("fabric", &m.fabric), ("adapters", &m.adapters)]
    {
        if let Some(c) = c {
            parts.push(format!("{name} {} -> {}", c.old.as_deref().unwrap_or("?"), c.new.as_deref().unwrap_or("?")));
        }
    }
    parts.join("\n")
}

pub fn human(d: &Diff) -> String {
    let mut out = String::new();
    if !d.moved.is_empty() {
        let mut t = super::table(&["MOVED", "REPLICA", "FROM", "TO", "ALSO"]);
        for m in &d.moved {
            // On the same nodes and GPUs, a request that changed is why it
            // moved: then say the requests.
            let requests = m.old.len() == m.new.len()
                && m.old
                    .iter()
                    .zip(&m.new)
                    .all(|(a, b)| (&a.node, &a.gpus, &a.mig_devices) == (&b.node, &b.gpus, &b.mig_devices));
            t.add_row(vec![
                m.model.clone(),
                m.replica.to_string(),
                at(&m.old, requests),
                at(&m.new, requests),
                what(m),
            ]);
        }
        let _ = writeln!(out, "{t}");
    }
    if !d.placed.is_empty() {
        let mut t = super::table(&["PLACED", "REPLICA", "ON"]);
        for p in &d.placed {
            t.add_row(vec![p.model.clone(), p.replica.to_string(), at(&p.new, false)]);
        }
        let _ = writeln!(out, "{t}");
    }
    for (title, list) in [("UNPLACED", &d.unplaced), ("REMOVED", &d.removed)] {
        if list.is_empty() {
            continue;
        }
        let mut t = super::table(&[title, "REPLICA", "WAS ON"]);
        for o in list {
            let replica = match o.through {
                Some(t) => format!("{}-{t} ({})", o.replica, u64::from(t - o.replica) + 1),
                None => o.replica.to_string(),
            };
            t.add_row(vec![o.model.clone(), replica, o.old.as_deref().map_or("-".into(), |w| at(w, false))]);
        }
        let _ = writeln!(out, "{t}");
    }
    // Replicas, not lines: a run of unplaced ones counts each.
    let count = |list: &[crate::diff::Gone]| -> u64 {
        list.iter().map(|g| g.through.map_or(1, |t| u64::from(t - g.replica) + 1)).sum()
    };
    let (unplaced, removed) = (count(&d.unplaced), count(&d.removed));
    let changed = d.moved.len() + d.placed.len() + d.unplaced.len() + d.removed.len();
    if changed == 0 {
        let _ = writeln!(out, "No placement differs ({} unchanged).", d.unchanged);
    } else {
        let _ = writeln!(
            out,
            "{} moved, {} placed, {} unplaced, {} removed, {} unchanged",
            d.moved.len(),
            d.placed.len(),
            unplaced,
            removed,
            d.unchanged
        );
    }
    out
}
