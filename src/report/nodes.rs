//! `nodes`: one row per node, with what is free now.

use serde::Serialize;

use crate::placement::Fleet;

static NONE: std::collections::BTreeMap<String, String> = std::collections::BTreeMap::new();

#[derive(Serialize)]
struct NodesDoc<'a> {
    nodes: Vec<NodeRow<'a>>,
}

#[derive(Serialize)]
struct NodeRow<'a> {
    id: &'a str,
    state: &'static str,
    labels: &'a std::collections::BTreeMap<String, String>,
    gpus: Vec<ClassRow<'a>>,
    /// MIG devices free/total per (class, MIG profile); absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    mig: Vec<MigRow<'a>>,
    fabrics: Vec<&'a str>,
    /// null when the node does not report engines.
    engines: Option<&'a std::collections::BTreeMap<String, String>>,
    /// null when not reported.
    memory_total_mb: Option<u64>,
    disk_free_bytes: Option<u64>,
    allocations: usize,
}

#[derive(Serialize)]
struct MigRow<'a> {
    class: &'a str,
    profile: &'a str,
    free: u32,
    total: u32,
}

#[derive(Serialize)]
struct ClassRow<'a> {
    class: &'a str,
    free: u32,
    total: u32,
}

/// The nodes carrying every `key=value` of the selector, in id order.
fn rows<'a>(fleet: &'a Fleet<'a>, selector: &[(String, String)]) -> Vec<NodeRow<'a>> {
    (0..fleet.node_count())
        .filter(|&i| selector.iter().all(|(k, v)| fleet.node(i).labels.get(k) == Some(v)))
        .map(|i| {
            let n = fleet.node(i);
            let mut classes: Vec<ClassRow<'_>> = Vec::new();
            for g in &n.gpus {
                match classes.iter_mut().find(|c| c.class == g.class) {
                    Some(c) => c.total += 1,
                    None => classes.push(ClassRow { class: &g.class, free: 0, total: 1 }),
                }
            }
            for c in &mut classes {
                c.free = fleet.free_of(i, fleet.classes.binary_search(&c.class).ok().map(|x| x as u32));
            }
            let mut mig: Vec<MigRow<'_>> = Vec::new();
            for g in n.gpus.iter().filter(|g| g.in_mig_mode()) {
                for m in &g.mig_devices {
                    let free = u32::from(g.healthy && !fleet.mig_taken(i, g.index, m.index));
                    match mig.iter_mut().find(|r| r.class == g.class && r.profile == m.profile) {
                        Some(r) => {
                            r.total += 1;
                            r.free += free;
                        }
                        None => mig.push(MigRow { class: &g.class, profile: &m.profile, free, total: 1 }),
                    }
                }
            }
            NodeRow {
                id: &n.id,
                state: n.state.as_str(),
                labels: &n.labels,
                gpus: classes,
                mig,
                fabrics: n.fabrics.iter().map(|f| f.name.as_str()).collect(),
                engines: if n.reports_engines() { Some(n.engines.as_ref().unwrap_or(&NONE)) } else { None },
                memory_total_mb: (n.memory_total_mb > 0).then_some(n.memory_total_mb),
                disk_free_bytes: n.disk.as_ref().filter(|d| d.total_bytes > 0).map(|d| d.free_bytes),
                allocations: n.allocations.len(),
            }
        })
        .collect()
}

pub fn json<W: std::io::Write>(out: W, fleet: &Fleet<'_>, selector: &[(String, String)]) -> std::io::Result<()> {
    super::write_json(out, &NodesDoc { nodes: rows(fleet, selector) })
}

pub fn human(fleet: &Fleet<'_>, selector: &[(String, String)]) -> String {
    let mut t =
        super::table(&["NODE", "STATE", "LABELS", "GPUS FREE/TOTAL", "FABRICS", "ENGINES", "MEMORY", "DISK FREE"]);
    let rows = rows(fleet, selector);
    let shown = rows.len();
    for r in rows {
        let gpus = if r.gpus.is_empty() {
            "cpu only".to_string()
        } else {
            r.gpus
                .iter()
                .map(|c| format!("{} {}/{}", c.class, c.free, c.total))
                .chain(r.mig.iter().map(|m| format!("{} MIG {} {}/{}", m.class, m.profile, m.free, m.total)))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let engines = match r.engines {
            None => "not reported".to_string(),
            Some(e) => e
                .iter()
                .map(|(k, v)| if v.is_empty() { k.clone() } else { format!("{k} {v}") })
                .collect::<Vec<_>>()
                .join("\n"),
        };
        let labels: Vec<String> = r.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        t.add_row(vec![
            r.id.to_string(),
            r.state.to_string(),
            if labels.is_empty() { "-".to_string() } else { labels.join("\n") },
            gpus,
            if r.fabrics.is_empty() { "-".to_string() } else { r.fabrics.join("\n") },
            engines,
            r.memory_total_mb.map_or("-".to_string(), |m| super::binary_size(m.saturating_mul(1 << 20))),
            r.disk_free_bytes.map_or("-".to_string(), super::binary_size),
        ]);
    }
    let all = fleet.node_count() as usize;
    let of = if selector.is_empty() { String::new() } else { format!(" of {all}") };
    format!("{t}\n{shown}{of} node{}\n", if all == 1 { "" } else { "s" })
}
