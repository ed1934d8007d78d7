//! The page itself: the summary, legend and unplaced replicas as HTML,
//! the fleet as JSON for the page's script to draw. Text from input files
//! (ids, names, reasons) is escaped here, once, as it is written; in the
//! JSON, `<` is written `\u003c`, so no name can end the script early.

use std::fmt::Write as _;

use serde::Serialize;
use serde::ser::SerializeSeq;

use super::extras::{Capped, Run};
use super::{Fleet, Input, runs};
use crate::usage::{Cell, GpuUse, Use};

const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

/// The `data-state` values, in the order the JSON numbers them.
const STATES: [Use; 6] = Use::ALL;

fn state_code(u: Use) -> u8 {
    STATES.iter().position(|s| *s == u).unwrap_or(0) as u8
}

/// Text for HTML: the five special characters as entities, and control
/// characters (which no id should hold) as U+FFFD.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

pub(super) fn page(input: &Input<'_>, fleet: &Fleet<'_>) -> String {
    let mut s = String::with_capacity(1 << 20);
    let title = esc(input.title);
    let _ = write!(
        s,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"llmgw map\">\n<title>llmgw map: {title}</title>\n\
         <link rel=\"icon\" href=\"data:,\">\n<style>\n{STYLE}"
    );
    for (i, c) in fleet.colors.iter().enumerate() {
        if let Some(c) = c {
            let _ = writeln!(s, ".m{i}{{--c:{c}}}");
        }
    }
    s.push_str("</style>\n</head>\n<body>\n<header>\n");
    let _ = write!(s, "<h1>llmgw map <span class=\"plan\">{title}</span></h1>\n<p class=\"counts\">");
    if let Some(sum) = &input.extras.summary {
        let _ = write!(
            s,
            "{} wanted, {} existing, {} placed, {} unplaced",
            sum.wanted, sum.existing, sum.placed, sum.unplaced
        );
    }
    let nodes = input.inv.nodes.len();
    let _ = writeln!(s, " &middot; {nodes} node{}</p>", if nodes == 1 { "" } else { "s" });
    s.push_str(
        "<label class=\"filter\">Filter <input id=\"filter\" type=\"search\" autocomplete=\"off\" \
         placeholder=\"models or nodes, e.g. llama gpu-h100-0\"></label>\n</header>\n",
    );
    s.push_str("<div class=\"top\">\n");
    summary(&mut s, input, fleet);
    legend(&mut s, input, fleet);
    s.push_str("</div>\n<div class=\"body\">\n<main id=\"grid\"></main>\n");
    // Why-not beside what did fit.
    unplaced(&mut s, input);
    s.push_str(
        "</div>\n<noscript><p>The fleet is drawn by this page's own script; \
         allow scripts to see it.</p></noscript>\n<script type=\"application/json\" id=\"map-data\">",
    );
    let data = serde_json::to_string(&Data::new(input, fleet)).unwrap_or_else(|_| "{}".into());
    s.push_str(&data.replace('<', "\\u003c"));
    s.push_str("</script>\n<script>\n");
    s.push_str(SCRIPT);
    s.push_str("</script>\n</body>\n</html>\n");
    s
}

/// GPUs per class: used (by what), free, unhealthy, stranded.
fn summary(s: &mut String, input: &Input<'_>, fleet: &Fleet<'_>) {
    s.push_str(
        "<section id=\"summary\">\n<h2>GPUs by class</h2>\n<table>\n<thead><tr><th>class</th><th>GPUs</th>\
         <th>new</th><th>existing</th><th>pending</th><th>held</th><th>used</th><th>free</th>\
         <th>unhealthy</th><th>MIG mode</th><th>stranded</th></tr></thead>\n<tbody>\n",
    );
    // The one source of stranded GPUs on the map: the plan's own summary.
    let stranded = input.extras.summary.as_ref().and_then(|x| x.stranded.as_ref());
    for c in &fleet.classes {
        let strand = match stranded {
            Some(m) => m.get(c.class).copied().unwrap_or(0).to_string(),
            None => "<span title=\"the plan does not say (made before llmgw counted stranded GPUs)\">&ndash;</span>"
                .to_string(),
        };
        let _ = writeln!(
            s,
            "<tr data-class=\"{}\"><th>{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td data-free>{}</td><td>{}</td><td>{}</td><td data-stranded>{strand}</td></tr>",
            esc(c.class),
            esc(c.class),
            c.total,
            c.new,
            c.existing,
            c.pending,
            c.held,
            c.used(),
            c.free,
            c.unhealthy,
            c.mig_idle,
        );
    }
    s.push_str(
        "</tbody>\n</table>\n<p class=\"note\">used = new (given by this plan) + existing (replicas of the \
         catalog already running) + pending + held (other workloads); a GPU in MIG mode counts by its \
         busiest device, and as MIG mode when none is held; stranded: free GPUs no unplaced replica can use.</p>\n\
         </section>\n",
    );
}

/// Each model of the plan with its colour and counts; then what the
/// states look like.
fn legend(s: &mut String, input: &Input<'_>, fleet: &Fleet<'_>) {
    // Per model: replicas new, existing, pending, unplaced; GPUs held.
    let mut counts = vec![[0u64; 5]; fleet.models.len()];
    let at = |m: &str| fleet.models.iter().position(|x| *x == m);
    for h in &fleet.usage.holders {
        let Some(i) = at(h.model) else { continue };
        let k = match h.state {
            Use::New => 0,
            Use::Existing => 1,
            Use::Pending => 2,
            _ => continue,
        };
        counts[i][k] += 1;
    }
    for r in &input.extras.unplaced {
        if let Some(i) = at(&r.model) {
            counts[i][3] += u64::from(r.through.unwrap_or(r.replica).saturating_sub(r.replica)) + 1;
        }
    }
    for gpu in fleet.usage.nodes.iter().flatten() {
        let cells = if gpu.mig.is_empty() { std::slice::from_ref(&gpu.whole) } else { gpu.mig.as_slice() };
        for c in cells {
            if let (Some(h), Use::New | Use::Existing | Use::Pending) = (c.holder, c.state) {
                let model = fleet.usage.holders[h as usize].model;
                if let Some(i) = at(model) {
                    counts[i][4] += 1;
                }
            }
        }
    }
    s.push_str("<section id=\"legend\">\n<h2>Models</h2>\n<ul class=\"models\">\n");
    for (i, m) in fleet.models.iter().enumerate() {
        if fleet.colors[i].is_none() {
            continue;
        }
        let [new, existing, pending, unplaced, gpus] = counts[i];
        let mut said = Vec::new();
        for (n, what) in [(new, "new"), (existing, "existing"), (pending, "pending"), (unplaced, "unplaced")] {
            if n > 0 {
                said.push(format!("{n} {what}"));
            }
        }
        let cells = match gpus {
            0 => String::new(),
            1 => " &middot; 1 GPU".to_string(),
            n => format!(" &middot; {n} GPUs"),
        };
        let _ = writeln!(
            s,
            "<li data-legend=\"{}\" title=\"show only {}\"><span class=\"sw s-existing m{i}\"></span><b>{}</b> {}{cells}</li>",
            esc(m),
            esc(m),
            esc(m),
            if said.is_empty() { "no replicas".to_string() } else { said.join(", ") },
        );
    }
    s.push_str("</ul>\n<ul class=\"states\">\n");
    let example = fleet.colors.iter().position(Option::is_some).map(|i| format!(" m{i}")).unwrap_or_default();
    for (state, cls, what) in [
        ("new", example.as_str(), "given by this plan"),
        ("existing", example.as_str(), "already running"),
        ("pending", example.as_str(), "submitted, waiting"),
        ("held", "", "another workload's"),
        ("free", "", "free"),
        ("unhealthy", "", "unhealthy"),
    ] {
        let _ = writeln!(s, "<li><span class=\"sw s-{state}{cls}\"></span>{state}: {what}</li>");
    }
    s.push_str("</ul>\n</section>\n");
}

/// Each unplaced run: its replicas, its reasons as `place` groups them,
/// its closest misses.
fn unplaced(s: &mut String, input: &Input<'_>) {
    if input.extras.unplaced.is_empty() {
        return;
    }
    let runs = input.extras.unplaced.len();
    let replicas = input.extras.summary.as_ref().map_or(0, |x| x.unplaced);
    let _ = writeln!(
        s,
        "<aside id=\"unplaced\">\n<h2>Not placed: {replicas} replica{} in {runs} run{}</h2>",
        if replicas == 1 { "" } else { "s" },
        if runs == 1 { "" } else { "s" }
    );
    for (i, r) in input.extras.unplaced.iter().enumerate() {
        // The first few open; the rest one line each until opened.
        run(s, r, i < 3);
    }
    s.push_str("</aside>\n");
}

fn run(s: &mut String, r: &Run, open: bool) {
    let model = esc(&r.model);
    let through = r.through.filter(|t| *t != r.replica);
    let _ = write!(
        s,
        "<details class=\"unplaced\"{} data-unplaced=\"{model}\" data-replica=\"{}\"",
        if open { " open" } else { "" },
        r.replica
    );
    let head = match through {
        Some(t) => {
            let _ = write!(s, " data-through=\"{t}\"");
            let n = u64::from(t.saturating_sub(r.replica)) + 1;
            format!("{model} replicas {}-{t} ({n}): not placed", r.replica)
        }
        None => format!("{model} replica {}: not placed", r.replica),
    };
    let _ = writeln!(s, ">\n<summary>{head}</summary>");
    let groups = r.groups();
    if !groups.is_empty() {
        s.push_str("<ul class=\"reasons\">\n");
        let mut i = 0;
        while i < groups.len() {
            let (profile, pool) = (&groups[i].profile, &groups[i].pool);
            let total: u64 =
                groups[i..].iter().take_while(|g| (&g.profile, &g.pool) == (profile, pool)).map(|g| g.count).sum();
            let _ = write!(s, "<li>profile <b>{}</b>", esc(profile));
            if !pool.is_empty() {
                let _ = write!(s, ", pool <b>{}</b>", esc(pool));
            }
            let _ = writeln!(s, ": {total} rejection{}<ul>", if total == 1 { "" } else { "s" });
            while i < groups.len() && (&groups[i].profile, &groups[i].pool) == (profile, pool) {
                let g = &groups[i];
                let _ =
                    writeln!(s, "<li><span class=\"n\">{}</span> {}{}</li>", g.count, esc(&g.reason), nodes(&g.nodes));
                i += 1;
            }
            s.push_str("</ul></li>\n");
        }
        s.push_str("</ul>\n");
    }
    for c in r.closest.iter().filter(|c| !c.nearest.is_empty()) {
        let _ = writeln!(
            s,
            "<div class=\"closest\">closest in <b>{}</b> ({}): {}/{} nodes qualify<ul>",
            esc(&c.pool),
            esc(&c.profile),
            c.qualify,
            c.needs
        );
        for n in &c.nearest {
            let _ = write!(
                s,
                "<li data-near=\"{}\"><b>{}</b> has {} free, needs {}",
                esc(&n.node),
                esc(&n.node),
                n.free,
                n.needs
            );
            if !n.taken_in_plan.is_empty() {
                let held: usize = n.taken_in_plan.iter().map(|t| t.gpus.len()).sum();
                let by: Vec<String> = n
                    .taken_in_plan
                    .iter()
                    .map(|t| format!("{} r{} (GPUs {})", esc(&t.model), t.replica, runs(&t.gpus)))
                    .collect();
                let _ = write!(s, "; {held} taken in this plan by {}", by.join(" and "));
            }
            s.push_str("</li>\n");
        }
        s.push_str("</ul></div>\n");
    }
    s.push_str("</details>\n");
}

/// " (a, b, c, d, e and 312 more)".
fn nodes(c: &Capped) -> String {
    if c.first.is_empty() {
        return String::new();
    }
    let ids: Vec<String> = c.first.iter().map(|n| esc(n)).collect();
    let more = c.total.saturating_sub(c.first.len() as u64);
    if more > 0 { format!(" ({} and {more} more)", ids.join(", ")) } else { format!(" ({})", ids.join(", ")) }
}

/// The fleet for the page's script (page.js reads it; docs/map.md).
#[derive(Serialize)]
struct Data<'a> {
    states: Vec<&'static str>,
    models: &'a [&'a str],
    /// Per model: whether it has a colour (a model of the plan).
    colored: Vec<bool>,
    classes: Vec<&'a str>,
    migs: Vec<&'a str>,
    holders: Vec<HolderData<'a>>,
    /// [kind, name, node indices]
    pools: Vec<(&'a str, &'a str, &'a [u32])>,
    /// [id, state, [cpus requested, allocatable] (millicores), [memory
    /// requested, allocatable] (MiB), GPUs, note]
    nodes: Vec<NodeData<'a>>,
}

/// [state, model, replica, profile, engine, where]
type HolderData<'a> = (u8, usize, u32, Option<&'a str>, Option<&'a str>, String);

type NodeData<'a> = (&'a str, &'static str, Option<(u64, u64)>, Option<(u64, u64)>, Vec<GpuData>, String);

/// [index, class, state, holder or -1] and, in MIG mode, [[MIG index,
/// profile, state, holder or -1], ...].
struct GpuData {
    index: u32,
    class: u32,
    whole: Cell,
    mig: Vec<(u32, u32, Cell)>,
}

impl Serialize for GpuData {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let holder = |c: &Cell| c.holder.map_or(-1, i64::from);
        let mut seq = s.serialize_seq(Some(if self.mig.is_empty() { 4 } else { 5 }))?;
        seq.serialize_element(&self.index)?;
        seq.serialize_element(&self.class)?;
        seq.serialize_element(&state_code(self.whole.state))?;
        seq.serialize_element(&holder(&self.whole))?;
        if !self.mig.is_empty() {
            let devices: Vec<(u32, u32, u8, i64)> =
                self.mig.iter().map(|(i, p, c)| (*i, *p, state_code(c.state), holder(c))).collect();
            seq.serialize_element(&devices)?;
        }
        seq.end()
    }
}

impl<'a> Data<'a> {
    fn new(input: &Input<'a>, fleet: &'a Fleet<'a>) -> Data<'a> {
        let inv = input.inv;
        let mut classes: Vec<&str> = inv.nodes.iter().flat_map(|n| n.gpus.iter().map(|g| g.class.as_str())).collect();
        classes.sort_unstable();
        classes.dedup();
        let mut migs: Vec<&str> = inv
            .nodes
            .iter()
            .flat_map(|n| n.gpus.iter().flat_map(|g| g.mig_devices.iter().map(|m| m.profile.as_str())))
            .collect();
        migs.sort_unstable();
        migs.dedup();
        let model_at: std::collections::HashMap<&str, usize> =
            fleet.models.iter().enumerate().map(|(i, m)| (*m, i)).collect();
        let holders = fleet
            .usage
            .holders
            .iter()
            .map(|h| {
                let place: Vec<String> =
                    h.at.iter()
                        .map(|(n, gpus, mig)| {
                            let id = &inv.nodes[*n as usize].id;
                            match (gpus.len(), mig.is_empty()) {
                                (0, _) => format!("{id} CPUs only"),
                                (1, false) => format!("{id} GPU {} MIG {}", gpus[0], runs(mig)),
                                (1, true) => format!("{id} GPU {}", gpus[0]),
                                _ => format!("{id} GPUs {}", runs(gpus)),
                            }
                        })
                        .collect();
                (state_code(h.state), model_at[h.model], h.replica, h.profile, h.engine, place.join("; "))
            })
            .collect();
        let nodes = inv
            .nodes
            .iter()
            .zip(&fleet.usage.nodes)
            .zip(&fleet.requested)
            .map(|((n, gpus), req)| {
                let gpus = n
                    .gpus
                    .iter()
                    .zip(gpus)
                    .map(|(g, u): (_, &GpuUse)| GpuData {
                        index: g.index,
                        class: classes.binary_search(&g.class.as_str()).unwrap_or(0) as u32,
                        whole: u.whole,
                        mig: g
                            .mig_devices
                            .iter()
                            .zip(&u.mig)
                            .map(|(d, c)| (d.index, migs.binary_search(&d.profile.as_str()).unwrap_or(0) as u32, *c))
                            .collect(),
                    })
                    .collect();
                let cpus = n.cpus.map(|c| (req.0, crate::units::millis(c)));
                let mem = (n.memory_schedulable_mb() > 0).then(|| (req.1, n.memory_schedulable_mb()));
                let mut note = Vec::new();
                if !n.fabrics.is_empty() {
                    let f: Vec<String> =
                        n.fabrics.iter().map(|f| format!("{} ({})", f.name, f.kind.as_str())).collect();
                    note.push(format!("fabrics: {}", f.join(", ")));
                }
                if !n.taints.is_empty() {
                    note.push(format!("taints: {}", n.taints.join(", ")));
                }
                (n.id.as_str(), n.state.as_str(), cpus, mem, gpus, note.join("\n"))
            })
            .collect();
        Data {
            states: STATES.iter().map(|s| s.as_str()).collect(),
            models: &fleet.models,
            colored: fleet.colors.iter().map(Option::is_some).collect(),
            classes,
            migs,
            holders,
            pools: fleet.pools.iter().map(|(k, n, v)| (*k, *n, v.as_slice())).collect(),
            nodes,
        }
    }
}
