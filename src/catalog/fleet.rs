//! Catalog warnings that need a fleet: a class nobody has, a MIG profile
//! nobody offers, a shape nobody can hold, an engine nobody has installed.

use std::collections::{BTreeMap, BTreeSet};

use super::{Catalog, Model, Profile};
use crate::diag::{Code, Diag, suggest};
use crate::inventory::Inventory;

/// What the fleet has, as these checks ask it.
struct Facts<'i> {
    /// The most GPUs of each class on one node. A node has a class when it
    /// has any GPU of it, healthy or not, in MIG mode or not.
    most_per_class: BTreeMap<&'i str, u32>,
    /// The MIG profiles offered on GPUs of each class.
    mig_per_class: BTreeMap<&'i str, BTreeSet<&'i str>>,
    engines_seen: BTreeSet<&'i str>,
    any_reports_engines: bool,
    /// The most CPUs (millicores) and schedulable memory (MiB) a node
    /// reports, per class it has (`None`: nodes without GPUs), over the
    /// nodes that report them.
    most_cpus: BTreeMap<Option<&'i str>, u64>,
    most_memory: BTreeMap<Option<&'i str>, u64>,
}

impl<'i> Facts<'i> {
    fn of(inv: &'i Inventory) -> Self {
        let mut f = Facts {
            most_per_class: BTreeMap::new(),
            mig_per_class: BTreeMap::new(),
            engines_seen: BTreeSet::new(),
            any_reports_engines: false,
            most_cpus: BTreeMap::new(),
            most_memory: BTreeMap::new(),
        };
        for n in &inv.nodes {
            let mut per_class: BTreeMap<&str, u32> = BTreeMap::new();
            for g in &n.gpus {
                *per_class.entry(g.class.as_str()).or_default() += 1;
                if !g.mig_devices.is_empty() {
                    f.mig_per_class
                        .entry(g.class.as_str())
                        .or_default()
                        .extend(g.mig_devices.iter().map(|m| m.profile.as_str()));
                }
            }
            let classes: Vec<Option<&str>> =
                if per_class.is_empty() { vec![None] } else { per_class.keys().map(|c| Some(*c)).collect() };
            for c in classes {
                if let Some(cpus) = n.cpus {
                    let e = f.most_cpus.entry(c).or_default();
                    *e = (*e).max(crate::units::millis(cpus));
                }
                if n.memory_allocatable_mb.is_some() || n.memory_total_mb > 0 {
                    let e = f.most_memory.entry(c).or_default();
                    *e = (*e).max(n.memory_schedulable_mb());
                }
            }
            for (c, k) in per_class {
                let e = f.most_per_class.entry(c).or_default();
                *e = (*e).max(k);
            }
            if n.reports_engines() {
                f.any_reports_engines = true;
                f.engines_seen.extend(n.engine_names());
            }
        }
        f
    }
}

/// Warnings that need a fleet: a class nobody has, a MIG profile nobody
/// offers, a shape nobody can hold, an engine nobody has installed.
pub fn fleet_checks(cat: &Catalog, inv: &Inventory) -> Vec<Diag> {
    let facts = Facts::of(inv);
    let mut out = Vec::new();
    for m in &cat.models {
        for p in &m.profiles {
            hardware(cat, m, p, &facts, &mut out);
            selector(cat, m, p, inv, &mut out);
            if let Some(class) = &p.gpu_class
                && let Some(&most) = facts.most_per_class.get(class.as_str())
                && most < p.gpus_per_node
            {
                out.push(
                    Diag::warning(
                        Code::NeverFits,
                        format!(
                            "profile `{}` of `{}` needs {} `{class}` GPUs per node, but no node has more than {most}",
                            p.name, m.name, p.gpus_per_node
                        ),
                    )
                    .at(&cat.src, p.class_span, "no node is this big")
                    .help("lower gpus_per_node and raise nodes, or add bigger nodes"),
                );
            }
            if let Some(class) = p.gpu_class.as_deref()
                && let Some(v) = inv
                    .nodes
                    .iter()
                    .flat_map(|n| &n.gpus)
                    .filter(|g| g.class == class)
                    .map(|g| g.vendor)
                    .find(|&v| !p.engine.runs_on(v))
                && inv.nodes.iter().flat_map(|n| &n.gpus).filter(|g| g.class == class).all(|g| g.vendor == v)
            {
                out.push(
                    Diag::warning(
                        Code::NeverFits,
                        format!(
                            "profile `{}` of `{}` runs {}, which does not run on the fleet's `{class}` GPUs ({})",
                            p.name,
                            m.name,
                            p.engine.name,
                            v.as_str()
                        ),
                    )
                    .at(&cat.src, p.engine_span, "not on this vendor's GPUs")
                    .help("place it on another class, or serve these GPUs with an engine that runs on them (vllm, sglang)"),
                );
            }
            requests(cat, m, p, &facts, &mut out);
            let source = p.source.as_deref().unwrap_or(&m.name);
            if p.is_gguf_file_name(source) && !inv.nodes.iter().any(|n| n.gguf_copy(source).is_some()) {
                out.push(
                    Diag::error(
                        Code::GgufFileName,
                        format!(
                            "`{source}` (profile `{}` of `{}`) is a file name, not a Hugging Face repository, and no node holds a copy: llama.cpp cannot start it",
                            p.name, m.name
                        ),
                    )
                    .at(&cat.src, p.engine_span, "llama.cpp needs a repository or a local file")
                    .help(crate::catalog::GGUF_HELP),
                );
            }
            if facts.any_reports_engines && !facts.engines_seen.contains(p.engine.name) {
                out.push(
                    Diag::warning(
                        Code::EngineNowhere,
                        format!(
                            "no node that reports its engines has {} installed (profile `{}` of `{}`)",
                            p.engine.name, p.name, m.name
                        ),
                    )
                    .at(&cat.src, p.engine_span, "installed nowhere")
                    .help("only nodes that report no engines at all (older agents) could take this profile"),
                );
            }
            out.extend(no_arm_image(cat, m, p, inv));
        }
    }
    out
}

/// A profile that names no image, whose engine publishes none for arm64
/// (GH200, GB200 nodes), while nodes it could run on are arm64: render
/// would give them the x86-64 image, which cannot start there.
fn no_arm_image(cat: &Catalog, m: &Model, p: &Profile, inv: &Inventory) -> Option<Diag> {
    use crate::images::{Arch, default_image_for};
    let none = default_image_for(p.engine.name, !p.cpu_only(), crate::vendor::Vendor::Nvidia, Arch::Arm64).is_none();
    if p.serving.image.is_some() || !none {
        return None;
    }
    let class = p.gpu_class.as_deref();
    let arm: Vec<&str> = inv
        .nodes
        .iter()
        .filter(|n| crate::images::arch_of(n) == Some(Arch::Arm64))
        .filter(|n| class.is_none_or(|c| n.gpus.iter().any(|g| g.class == c)))
        .map(|n| n.id.as_str())
        .collect();
    if arm.is_empty() {
        return None;
    }
    Some(
        Diag::warning(
            Code::NoArmImage,
            format!(
                "{} publishes no arm64 image{}, and {} {} arm64 (profile `{}` of `{}`)",
                p.engine.name,
                if p.cpu_only() { "" } else { " for GPUs" },
                crate::diag::shorten(&arm, 3),
                if arm.len() == 1 { "is" } else { "are" },
                p.name,
                m.name
            ),
        )
        .at(&cat.src, p.engine_span, "no arm64 image")
        .help("give the profile an `image` built for arm64, or keep it off those nodes with a node_selector (kubernetes.io/arch=amd64)"),
    )
}

/// The warnings `place` and `explain-placement` give too: a `gpu_class`, or
/// a `mig_profile`, that no node of the fleet has. Without them every node
/// reads "has 0 free h100 GPUs" and nobody sees the typo.
pub fn hardware_checks(cat: &Catalog, inv: &Inventory) -> Vec<Diag> {
    let facts = Facts::of(inv);
    let mut out = Vec::new();
    for m in &cat.models {
        for p in &m.profiles {
            hardware(cat, m, p, &facts, &mut out);
        }
    }
    out
}

/// A profile asking each node for more CPUs or memory than any node that
/// could run it has (over the nodes that report them): placement would
/// refuse every node, and a scheduler would keep the job waiting.
fn requests(cat: &Catalog, m: &Model, p: &Profile, facts: &Facts<'_>, out: &mut Vec<Diag>) {
    let class = p.gpu_class.as_deref();
    // A CPU-only profile may run on any node.
    let most = |map: &BTreeMap<Option<&str>, u64>| match class {
        Some(_) => map.get(&class).copied(),
        None => map.values().copied().max(),
    };
    let on = class.map_or_else(|| "node".to_string(), |c| format!("node with `{c}` GPUs"));
    if let (Some(want), Some(have)) = (p.serving.cpus, most(&facts.most_cpus))
        && u64::from(want) * 1000 > have
    {
        out.push(
            Diag::warning(
                Code::NeverFits,
                format!(
                    "profile `{}` of `{}` asks each node for {want} CPUs, but no {on} has more than {}",
                    p.name,
                    m.name,
                    crate::units::cpus_text(have)
                ),
            )
            .at(&cat.src, p.serving.cpus_span, "more CPUs than any node has")
            .help("ask for fewer CPUs (or leave `cpus` out: the node's share), or add bigger nodes"),
        );
    }
    if let (Some(want), Some(have)) = (p.serving.memory_gb, most(&facts.most_memory))
        && want.saturating_mul(1024) > have
    {
        out.push(
            Diag::warning(
                Code::NeverFits,
                format!(
                    "profile `{}` of `{}` asks each node for {want} GiB of memory, but no {on} has more than {} GiB for workloads",
                    p.name,
                    m.name,
                    have / 1024
                ),
            )
            .at(&cat.src, p.serving.memory_span, "more memory than any node has")
            .help("`memory_gb` is GiB per node: ask for less (or leave it out: the node's share), or add bigger nodes"),
        );
    }
}

fn hardware(cat: &Catalog, m: &Model, p: &Profile, facts: &Facts<'_>, out: &mut Vec<Diag>) {
    let Some(class) = p.gpu_class.as_deref() else { return };
    let has_class = facts.most_per_class.contains_key(class);
    // A class of a list is said of once, when no class of the list is there.
    let listed = !p.classes.is_empty();
    if listed
        && (p.classes.first().map(String::as_str) != Some(class)
            || p.classes.iter().any(|c| facts.most_per_class.contains_key(c.as_str())))
    {
        return;
    }
    // One GPU under two names (GFD's `h100-80gb-hbm3`, a Slurm site's `h100`).
    let alias = facts.most_per_class.keys().copied().find(|&other| {
        other != class && (other.starts_with(&format!("{class}-")) || class.starts_with(&format!("{other}-")))
    });
    if let (false, Some(other)) = (listed, alias) {
        out.push(
            Diag::warning(
                Code::ClassAlias,
                format!("the fleet also has `{other}` GPUs, which may be the `{class}` of profile `{}` of `{}` under another name", p.name, m.name),
            )
            .at(&cat.src, p.class_span, "one of the names")
            .help(format!("to place on both, list them: gpu_class = [\"{class}\", \"{other}\"]")),
        );
    }
    if !has_class {
        let help = if facts.most_per_class.is_empty() {
            "the inventory has no GPUs at all".to_string()
        } else {
            suggest(class, facts.most_per_class.keys().copied(), "the inventory's classes are")
        };
        out.push(
            Diag::warning(
                Code::UnknownGpuClass,
                format!("no node has a `{class}` GPU (profile `{}` of `{}`)", p.name, m.name),
            )
            .at(&cat.src, p.class_span, "no such class in the fleet")
            .help(help),
        );
    }
    let Some(mig) = p.mig_profile.as_deref() else { return };
    let on_class = facts.mig_per_class.get(class);
    let anywhere = facts.mig_per_class.values().any(|set| set.contains(mig));
    // A class the fleet has, without this profile on it; or a profile no
    // GPU of any class offers.
    if on_class.is_some_and(|set| set.contains(mig)) || (!has_class && anywhere) {
        return;
    }
    let (message, known): (String, Vec<&str>) = if has_class {
        (
            format!("no `{class}` GPU offers a MIG `{mig}` device (profile `{}` of `{}`)", p.name, m.name),
            on_class.map(|s| s.iter().copied().collect()).unwrap_or_default(),
        )
    } else {
        (
            format!("no GPU of the fleet offers a MIG `{mig}` device (profile `{}` of `{}`)", p.name, m.name),
            facts.mig_per_class.values().flatten().copied().collect::<BTreeSet<_>>().into_iter().collect(),
        )
    };
    let help = match (known.is_empty(), has_class) {
        (false, _) => suggest(mig, known.iter().copied(), "the MIG profiles there are"),
        (true, true) => {
            format!("no {class} GPU has MIG devices: drop mig_profile to use whole GPUs, or partition some")
        }
        (true, false) => "no GPU of the fleet has MIG devices".to_string(),
    };
    out.push(
        Diag::warning(Code::UnknownMigProfile, message)
            .at(&cat.src, p.mig_span, "no such MIG device in the fleet")
            .help(help),
    );
}

/// A `node_selector` no node of the inventory satisfies: placement would
/// pass every node over. Said with the label closest to the one missing.
fn selector(cat: &Catalog, m: &Model, p: &Profile, inv: &Inventory, out: &mut Vec<Diag>) {
    if p.node_selector.is_empty() || inv.nodes.is_empty() {
        return;
    }
    let carries = |n: &crate::inventory::Node, k: &str, v: &str| n.labels.get(k).is_some_and(|x| x == v);
    if inv.nodes.iter().any(|n| p.node_selector.iter().all(|(k, v)| carries(n, k, v))) {
        return;
    }
    // The first pair no node carries, else the pairs no node carries together.
    let missing = p.node_selector.iter().find(|(k, v)| !inv.nodes.iter().any(|n| carries(n, k, v)));
    let help = match missing {
        Some((k, v)) => {
            let mut values: Vec<&str> = inv.nodes.iter().filter_map(|n| n.labels.get(k)).map(String::as_str).collect();
            values.sort_unstable();
            values.dedup();
            if values.is_empty() {
                let keys: BTreeSet<&str> = inv.nodes.iter().flat_map(|n| n.labels.keys()).map(String::as_str).collect();
                format!("no node has a label `{k}`; {}", suggest(k, keys.iter().copied(), "the labels are"))
            } else {
                match crate::diag::did_you_mean(v, values.iter().copied()) {
                    Some(close) => format!("no node carries {k}={v}; did you mean {k}={close}?"),
                    None => {
                        let shown: Vec<String> = values.iter().take(5).map(|x| format!("{k}={x}")).collect();
                        format!("no node carries {k}={v}; nodes carry {}", shown.join(", "))
                    }
                }
            }
        }
        None => "each label is on some node, but no node carries them all".to_string(),
    };
    let pairs: Vec<String> = p.node_selector.iter().map(|(k, v)| format!("{k}={v}")).collect();
    out.push(
        Diag::warning(
            Code::SelectorMatchesNothing,
            format!(
                "no node satisfies the node_selector of profile `{}` of `{}` ({})",
                p.name,
                m.name,
                pairs.join(", ")
            ),
        )
        .at(&cat.src, p.selector_span, "no node carries these labels")
        .help(help),
    );
}
