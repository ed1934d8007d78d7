//! `nodes`: one row per node, with what is free now: GPUs, CPUs, memory,
//! and what holds them; a line per GPU class at the end. Labels only when
//! asked (`--wide`): a real GPU node carries 160 of them, and a row per
//! label buried everything else.

use std::fmt::Write as _;

use serde::Serialize;

use crate::placement::Fleet;

static NONE: std::collections::BTreeMap<String, String> = std::collections::BTreeMap::new();

/// What to show, and of which nodes.
pub struct Settings<'a> {
    /// `key=value` pairs a node must all carry.
    pub selector: &'a [(String, String)],
    /// Labels too.
    pub wide: bool,
}

#[derive(Serialize)]
struct NodesDoc<'a> {
    nodes: Vec<NodeRow<'a>>,
    /// Per GPU class, over the nodes listed: free whole GPUs and all.
    classes: Vec<ClassRow<'a>>,
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
    /// CPUs workloads may use and those no allocation holds; null when
    /// the node does not report CPUs.
    cpus: Option<Share>,
    /// Memory workloads may request (allocatable), MiB, and what no
    /// allocation holds; null when not reported.
    memory: Option<MemoryShare>,
    taints: &'a [String],
    /// What holds the node's GPUs, CPUs or memory.
    workloads: Vec<Workload<'a>>,
}

#[derive(Serialize)]
struct Share {
    free: crate::units::Cpus,
    total: crate::units::Cpus,
}

#[derive(Serialize)]
struct MemoryShare {
    free_mb: u64,
    total_mb: u64,
}

#[derive(Serialize)]
struct Workload<'a> {
    model: &'a str,
    replica: u32,
    gpus: &'a [u32],
    #[serde(skip_serializing_if = "<[u32]>::is_empty")]
    mig_devices: &'a [u32],
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pending: bool,
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

fn selected(node: &crate::inventory::Node, selector: &[(String, String)]) -> bool {
    selector.iter().all(|(k, v)| node.labels.get(k) == Some(v))
}

/// The nodes carrying every `key=value` of the selector, in id order.
fn rows<'a>(fleet: &'a Fleet<'a>, selector: &[(String, String)]) -> Vec<NodeRow<'a>> {
    (0..fleet.node_count())
        .filter(|&i| selected(fleet.node(i), selector))
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
            let held_cpus: u64 =
                n.allocations.iter().filter_map(|a| a.cpus).map(crate::units::millis).fold(0, u64::saturating_add);
            let held_mem: u64 = n.allocations.iter().filter_map(|a| a.memory_mb).fold(0, u64::saturating_add);
            let cpus = n.cpus.map(crate::units::millis).map(|total| Share {
                free: crate::units::Cpus(total.saturating_sub(held_cpus)),
                total: crate::units::Cpus(total),
            });
            let mem_total = n.memory_schedulable_mb();
            let memory = (mem_total > 0)
                .then(|| MemoryShare { free_mb: mem_total.saturating_sub(held_mem), total_mb: mem_total });
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
                cpus,
                memory,
                taints: &n.taints,
                workloads: n
                    .allocations
                    .iter()
                    .map(|a| Workload {
                        model: &a.model,
                        replica: a.replica,
                        gpus: &a.gpus,
                        mig_devices: &a.mig_devices,
                        pending: a.pending,
                    })
                    .collect(),
            }
        })
        .collect()
}

/// Free and all GPUs per class over the nodes listed, as the GPU column
/// counts them (a GPU in MIG mode is never free whole).
fn classes<'a>(fleet: &'a Fleet<'a>, selector: &[(String, String)]) -> Vec<ClassRow<'a>> {
    let usage = crate::usage::of(fleet.inv, Vec::new(), &|_, _| false);
    crate::usage::by_class(fleet.inv, &usage, &|n| selected(n, selector))
        .into_iter()
        .map(|c| ClassRow { class: c.class, free: c.free as u32, total: c.total as u32 })
        .collect()
}

pub fn json<W: std::io::Write>(out: W, fleet: &Fleet<'_>, settings: &Settings<'_>) -> std::io::Result<()> {
    crate::json::write_json(
        out,
        &NodesDoc { nodes: rows(fleet, settings.selector), classes: classes(fleet, settings.selector) },
    )
}

/// "1759/2015 GiB": free over total, in the unit of the total.
fn memory_pair(free_mb: u64, total_mb: u64) -> String {
    if total_mb >= 10 * 1024 {
        format!("{}/{} GiB", free_mb / 1024, total_mb / 1024)
    } else {
        format!("{}/{}", super::binary_size(free_mb << 20), super::binary_size(total_mb << 20))
    }
}

/// What holds a node's resources, a line each, the first few.
fn workloads(w: &[Workload<'_>]) -> String {
    const SHOWN: usize = 4;
    if w.is_empty() {
        return "-".to_string();
    }
    let mut lines: Vec<String> = w
        .iter()
        .take(if w.len() > SHOWN + 1 { SHOWN } else { w.len() })
        .map(|a| {
            let on = match (a.gpus.len(), a.mig_devices.is_empty()) {
                (0, _) => String::new(),
                (1, false) => format!(" GPU {} MIG {}", a.gpus[0], super::join(a.mig_devices)),
                (1, true) => format!(" GPU {}", a.gpus[0]),
                _ => format!(" GPUs {}", super::place::runs(a.gpus)),
            };
            format!("{} r{}{on}{}", a.model, a.replica, if a.pending { " (pending)" } else { "" })
        })
        .collect();
    if w.len() > lines.len() {
        lines.push(format!("and {} more", w.len() - lines.len()));
    }
    lines.join("\n")
}

pub fn human(fleet: &Fleet<'_>, settings: &Settings<'_>) -> String {
    let mut header = vec!["NODE", "STATE"];
    if settings.wide {
        header.push("LABELS");
    }
    // Free over total in each; headers short enough for a row of ten.
    header.extend(["GPUS FREE", "CPU/MEM FREE", "TAINTS", "ALLOCATIONS", "FABRICS", "ENGINES", "DISK FREE"]);
    let mut t = super::table(&header);
    let rows = rows(fleet, settings.selector);
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
        let mut row = vec![r.id.to_string(), r.state.to_string()];
        if settings.wide {
            let labels: Vec<String> = r.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            row.push(if labels.is_empty() { "-".to_string() } else { labels.join("\n") });
        }
        row.extend([
            gpus,
            {
                let cpus = r.cpus.as_ref().map(|c| {
                    format!("{}/{} CPUs", crate::units::cpus_text(c.free.0), crate::units::cpus_text(c.total.0))
                });
                let memory = r.memory.as_ref().map(|m| memory_pair(m.free_mb, m.total_mb));
                let both: Vec<String> = cpus.into_iter().chain(memory).collect();
                if both.is_empty() { "-".to_string() } else { both.join("\n") }
            },
            if r.taints.is_empty() { "-".to_string() } else { r.taints.join("\n") },
            workloads(&r.workloads),
            if r.fabrics.is_empty() { "-".to_string() } else { r.fabrics.join("\n") },
            engines,
            r.disk_free_bytes.map_or("-".to_string(), super::binary_size),
        ]);
        t.add_row(row);
    }
    let all = fleet.node_count() as usize;
    let of = if settings.selector.is_empty() { String::new() } else { format!(" of {all}") };
    let mut text = format!("{t}\n{shown}{of} node{}\n", if all == 1 { "" } else { "s" });
    for c in classes(fleet, settings.selector) {
        let _ = writeln!(text, "{}: {}/{} free", c.class, c.free, c.total);
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn memory_reads_in_the_unit_of_its_total() {
        assert_eq!(super::memory_pair(1_801_216, 2_063_937), "1759/2015 GiB");
        assert_eq!(super::memory_pair(1000, 4000), "1000 MiB/3.9 GiB");
    }
}
