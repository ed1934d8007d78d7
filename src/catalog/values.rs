//! Checks of single catalog values: ranges, names, engines, selectors.

use super::{MAX_GPUS_PER_NODE, MAX_NODES};
use crate::decode::{Decoder, MapEntry};
use crate::diag::{Code, suggest};
use crate::doc::{self, Span};
use crate::engines;

/// A count of at least 1 and at most `max`.
pub(super) fn at_least_one(dec: &mut Decoder, n: &doc::Node<'_>, field: &str, max: u64) -> Option<u64> {
    let v = dec.uint(n, field, max)?;
    if v == 0 {
        let message = format!("`{field}` must be at least 1; leave it out for the default");
        dec.error(Code::OutOfRange, n.span, message, "0", None);
        return None;
    }
    Some(v)
}

/// Environment names are POSIX identifiers: render writes them after
/// `export` in a script, so `A=1;touch X;B` would run `touch`. False (and
/// one error each) when one is not.
pub(super) fn env_names(dec: &mut Decoder, entries: &[MapEntry]) -> bool {
    let mut ok = true;
    for e in entries {
        let mut chars = e.key.chars();
        let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        if first_ok && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
            if let Some(why) = runs_as_code(&e.key) {
                dec.error(
                    Code::EnvRuns,
                    e.key_span,
                    format!("`{}` cannot be set from a catalog: {why}", e.key),
                    "not settable",
                    Some("leave it out; configure the engine with `args` or with env names of its own".into()),
                );
                ok = false;
            }
            continue;
        }
        dec.error(
            Code::EnvName,
            e.key_span,
            format!("`{}` is not an environment variable name", crate::term::escape(&e.key)),
            "not [A-Za-z_][A-Za-z0-9_]*",
            Some("an env name is letters, digits and `_`, not starting with a digit; put values on the right".into()),
        );
        ok = false;
    }
    ok
}

/// Why an env name may not come from a catalog: names a shell or the
/// dynamic loader reads as code or configuration (every `bash -c` of the
/// start-up scripts would run `BASH_ENV = "$(cmd)"`), and llmgw's own
/// knobs, which the scripts read.
pub fn runs_as_code(name: &str) -> Option<&'static str> {
    const SHELL: &[&str] =
        &["BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "IFS", "CDPATH", "GLOBIGNORE"];
    if SHELL.contains(&name) || name.starts_with("BASH_FUNC_") {
        Some("the shell that starts the engine reads it as code or configuration")
    } else if matches!(name, "LD_PRELOAD" | "LD_AUDIT") {
        Some("the dynamic loader runs what it names in every process")
    } else if name.starts_with("LLMGW_") {
        Some("llmgw's own start-up scripts read it")
    } else {
        None
    }
}

/// The engine a catalog names, or a report that llmgw knows no such engine.
pub(super) fn known_engine(dec: &mut Decoder, name: &str, span: Span) -> Option<&'static engines::Engine> {
    let found = engines::find(name);
    if found.is_none() {
        let help = suggest(name, engines::names(), "known engines");
        dec.error(
            Code::UnknownEngine,
            span,
            format!("unknown engine `{name}`"),
            "not an engine llmgw knows",
            Some(help),
        );
    }
    found
}

/// A GPU-only engine needs a `gpu_class`; false (and a report) when missing.
pub(super) fn gpu_engine_has_class(dec: &mut Decoder, engine: &engines::Engine, span: Span) -> bool {
    if engine.cpu_capable {
        return true;
    }
    let cpu: Vec<_> = engines::ENGINES.iter().filter(|e| e.cpu_capable).map(|e| e.name).collect();
    dec.error(
        Code::GpuClassRequired,
        span,
        format!("{} needs a GPU, but this profile has no `gpu_class`", engine.name),
        "GPU-only engine",
        Some(format!("add `gpu_class = \"...\"`, or use a CPU-capable engine ({})", cpu.join(", "))),
    );
    false
}

pub(super) fn nodes_in_range(dec: &mut Decoder, n: i64, span: Span) -> Option<u32> {
    if (1..=MAX_NODES as i64).contains(&n) {
        return Some(n as u32);
    }
    dec.error(
        Code::NodesRange,
        span,
        format!("`nodes` must be between 1 and {MAX_NODES}, found {n}"),
        "out of range",
        Some("a replica spans at least one node".into()),
    );
    None
}

/// `gpus_per_node` of a GPU profile; on a CPU-only one it is ignored (0),
/// but a negative number is still a typo worth pointing at.
pub(super) fn gpus_in_range(dec: &mut Decoder, g: i64, span: Span, gpu: bool, ok: &mut bool) -> Option<u32> {
    if !gpu {
        if g < 0 {
            let message = format!("`gpus_per_node` must not be negative, found {g}");
            dec.error(Code::GpusPerNodeRange, span, message, "out of range", None);
            *ok = false;
        }
        return Some(0);
    }
    if (1..=MAX_GPUS_PER_NODE as i64).contains(&g) {
        return Some(g as u32);
    }
    dec.error(
        Code::GpusPerNodeRange,
        span,
        format!("`gpus_per_node` must be between 1 and {MAX_GPUS_PER_NODE} on a GPU profile, found {g}"),
        "out of range",
        Some("omit `gpu_class` for a CPU-only profile instead".into()),
    );
    None
}

/// A node selector, sorted by key; an empty key or value is reported.
pub(super) fn selector_entries(
    dec: &mut Decoder,
    entries: Vec<MapEntry>,
    ok: &mut bool,
) -> Option<Vec<(String, String)>> {
    for MapEntry { key, key_span, value, value_span } in &entries {
        let bad = if key.is_empty() {
            Some((*key_span, "empty label key"))
        } else if value.is_empty() {
            Some((*value_span, "empty label value"))
        } else {
            None
        };
        if let Some((s, what)) = bad {
            dec.error(
                Code::EmptyLabel,
                s,
                format!("node_selector has an {what}"),
                what,
                Some("a selector entry needs a key and a value: `zone = \"a\"`".into()),
            );
            *ok = false;
        }
    }
    let mut sel: Vec<_> = entries.into_iter().map(|e| (e.key, e.value)).collect();
    sel.sort();
    Some(sel)
}

/// `nodes` above 1 only for an engine that can span nodes; false (and a
/// report) otherwise.
pub(super) fn engine_spans(dec: &mut Decoder, engine: &engines::Engine, nodes: u32, span: Span) -> bool {
    if nodes <= 1 || engine.multi_node {
        return true;
    }
    let spanning: Vec<_> = engines::ENGINES.iter().filter(|e| e.multi_node).map(|e| e.name).collect();
    dec.error(
        Code::SingleNodeEngine,
        span,
        format!("{} serves from one node, but this profile asks for {nodes} nodes", engine.name),
        "one node only",
        Some(format!(
            "set nodes = 1 (and more gpus_per_node), or use an engine that spans nodes ({})",
            spanning.join(", ")
        )),
    );
    false
}

/// `launcher = "ray"` across nodes runs `ray start` in the image: one that
/// ships no Ray (every default image: vLLM's stopped shipping it) fails at
/// start-up in every pod. A profile that names such an image is refused
/// here, naming it; one that names none runs the default image on
/// Kubernetes and under pyxis (render refuses it there) and the nodes'
/// own vLLM in a bare Slurm job, so lint warns.
pub(super) fn ray_in_image(
    dec: &mut Decoder,
    engine: &engines::Engine,
    nodes: u32,
    cpu_only: bool,
    serving: &super::Serving,
) -> bool {
    if serving.launcher.as_deref() != Some("ray") || nodes <= 1 || engine.ray_before.is_none() {
        return true;
    }
    let image = serving.image.as_deref().unwrap_or_else(|| crate::images::default_image(engine.name, !cpu_only));
    if crate::images::ships_ray(image) != Some(false) {
        return true;
    }
    let help = "drop `launcher` (vLLM 0.11.1 and later start across nodes without Ray), or give the profile an `image` with Ray installed (`pip install 'ray[cgraph]'`: pipeline parallelism across nodes needs Ray's compiled graphs)";
    let message = format!("launcher = \"ray\" runs `ray start` in {image}, which ships no Ray");
    if serving.image.is_some() {
        dec.error(Code::RayNotInImage, serving.launcher_span, message, "no Ray in the image", Some(help.into()));
        return false;
    }
    dec.push(
        crate::diag::Diag::warning(
            Code::RayNotInImage,
            format!("{message} (the default image: on Kubernetes and under pyxis; a bare Slurm job runs the nodes' own vLLM)"),
        )
        .at(&dec.src, serving.launcher_span, "no Ray in the default image")
        .help(format!("{help}; render refuses it for pods and pyxis jobs")),
    );
    true
}

/// `kubernetes = { priority_class, service_account, image_pull_secrets,
/// labels, annotations }`.
pub(super) fn kubernetes_knobs(dec: &mut Decoder, n: &doc::Node<'_>) -> Option<super::KubernetesKnobs> {
    let mut t = dec.table(n, "kubernetes table")?;
    let priority_class = t.optional(dec, "priority_class", |dec, n| dec.string(n, "priority_class"));
    let service_account = t.optional(dec, "service_account", |dec, n| dec.string(n, "service_account"));
    let secrets = t.optional(dec, "image_pull_secrets", |dec, n| dec.string_list(n, "image_pull_secrets"));
    let labels = t.optional(dec, "labels", |dec, n| dec.string_map(n, "labels"));
    let annotations = t.optional(dec, "annotations", |dec, n| dec.string_map(n, "annotations"));
    t.finish(dec, super::KUBERNETES_FIELDS);
    let pairs = |m: Option<Vec<MapEntry>>| {
        let mut v: Vec<(String, String)> = m.unwrap_or_default().into_iter().map(|e| (e.key, e.value)).collect();
        v.sort();
        v
    };
    Some(super::KubernetesKnobs {
        priority_class: priority_class.ok()?,
        service_account: service_account.ok()?,
        image_pull_secrets: secrets.ok()?.unwrap_or_default(),
        labels: pairs(labels.ok()?),
        annotations: pairs(annotations.ok()?),
    })
}

/// `slurm = { partition, account, qos, time, constraint }`.
pub(super) fn slurm_knobs(dec: &mut Decoder, n: &doc::Node<'_>) -> Option<super::SlurmKnobs> {
    let mut t = dec.table(n, "slurm table")?;
    // Each is written on a `#SBATCH` line, which sbatch splits at spaces.
    let mut get = |key: &str| {
        t.optional(dec, key, |dec, n| {
            let v = dec.string(n, key)?;
            let bad =
                v.is_empty() || v.chars().any(|c| c.is_whitespace() || c.is_control() || matches!(c, '\'' | '"' | '#'));
            if bad {
                dec.error(
                    Code::WrongType,
                    n.span,
                    format!("slurm.{key} `{}` cannot be written in a #SBATCH line", crate::term::escape(&v)),
                    "not an sbatch value",
                    Some("give a value without spaces, quotes, `#` or control characters".to_string()),
                );
                return None;
            }
            Some(v)
        })
    };
    let (partition, account, qos, time, constraint) =
        (get("partition"), get("account"), get("qos"), get("time"), get("constraint"));
    t.finish(dec, super::SLURM_FIELDS);
    Some(super::SlurmKnobs {
        partition: partition.ok()?,
        account: account.ok()?,
        qos: qos.ok()?,
        time: time.ok()?,
        constraint: constraint.ok()?,
    })
}
