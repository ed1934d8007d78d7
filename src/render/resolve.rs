//! The plan resolved against the catalog and the inventory it is
//! rendered on: each replica's profile, nodes, weights, adapters and
//! requests; what cannot be rendered refused, every problem at once.

use super::{Job, Resolved, Resources, check, least, nvlink};
use crate::catalog::{Catalog, Model, Profile};
use crate::diag::{Code, Diag};
use crate::engines::WeightsForm;
use crate::inventory::{Inventory, Node};
use crate::launch::Weights;
use crate::plan::{Entry, Plan};

const STALE_HELP: &str = "give the catalog the plan was made from, or place again with this one (--allow-stale renders the rest and leaves these out)";

/// Checks the plan against the inventory and resolves it against the
/// catalog; every problem at once, nothing half-done.
/// `containers`: the replicas run in their images (Kubernetes, Slurm with
/// `--container`), so the image's vLLM decides how it starts across
/// nodes; else the nodes' own.
pub fn resolve<'a>(
    plan: &'a Plan,
    cat: &'a Catalog,
    inv: &'a Inventory,
    allow_stale: bool,
    containers: bool,
) -> Result<Resolved<'a>, Vec<Diag>> {
    let mut errors = check::stale(plan, inv);
    let mut warnings = Vec::new();
    let stale = plan.inputs.as_ref().is_some_and(|i| i.catalog != crate::load::digest(&[&cat.src]));
    if stale {
        warnings.push(
            Diag::warning(
                Code::OtherCatalog,
                format!("{} is not the catalog {} was made from", cat.src.name(), plan.src.name()),
            )
            .help("render with the catalog the plan was made from, or place again with this one"),
        );
    }
    let models: std::collections::HashMap<&str, &Model> = cat.models.iter().map(|m| (m.name.as_str(), m)).collect();
    let mut jobs = Vec::with_capacity(plan.entries.len());
    let mut skipped = Vec::new();
    for e in &plan.entries {
        let at = |d: Diag| d.at(&plan.src, e.span, "this replica");
        // A submitted job that waits for its resources: its script (or
        // object) is already where it was written; rewriting it from the
        // nodes it asked for would change nothing it can use.
        if e.pending {
            skipped.push(e);
            continue;
        }
        // What a replica depends on, gone from the catalog: an error, or
        // with --allow-stale a warning and the replica left out.
        let mut gone = |d: Diag| {
            if allow_stale {
                warnings.push(at(Diag { severity: crate::diag::Severity::Warning, ..d }));
            } else {
                errors.push(at(d));
            }
        };
        let Some(model) = models.get(e.model.as_str()).copied() else {
            gone(
                Diag::error(Code::UnknownModel, format!("the plan runs `{}`, which the catalog has not", e.model))
                    .help(STALE_HELP),
            );
            continue;
        };
        if stale && e.replica >= model.replicas {
            gone(
                Diag::error(
                    Code::StaleCatalog,
                    format!(
                        "{} r{}: the catalog now asks for {} replica(s) of `{}`, so this one is no longer wanted",
                        e.model, e.replica, model.replicas, e.model
                    ),
                )
                .help(STALE_HELP),
            );
            continue;
        }
        let nodes: Vec<&Node> = e.nodes.iter().filter_map(|a| check::find(inv, &a.node)).collect();
        if nodes.len() != e.nodes.len() {
            continue; // check::stale said which
        }
        let profile = match &e.profile {
            // Of a `gpu_class` list's profiles, the one of the planned GPUs' class.
            Some(name) => {
                match model.profiles.iter().filter(|p| &p.name == name).min_by_key(|p| misfit(p, e, &nodes).is_some()) {
                    Some(p) => p,
                    None => {
                        gone(
                            Diag::error(
                                Code::UnknownModel,
                                format!("the plan uses profile `{name}` of `{}`, which the catalog has not", e.model),
                            )
                            .help(STALE_HELP),
                        );
                        continue;
                    }
                }
            }
            None => match fitting_profile(model, e, &nodes) {
                Some(p) => p,
                None => {
                    warnings.push(at(Diag::warning(
                        Code::NoFittingProfile,
                        format!(
                            "{} r{} runs without saying its profile, and no profile of the model fits its GPUs: not rendered",
                            e.model, e.replica
                        ),
                    )
                    .help("its file in the output folder, if any, is left as it is")));
                    skipped.push(e);
                    continue;
                }
            },
        };
        let weights = weights(e, model, profile, &nodes);
        if let Some(d) = unrenderable(e, profile, &nodes, &weights) {
            errors.push(at(d));
            continue;
        }
        let (per_node, nvlink) = (per_node(e), nvlink(e, &nodes));
        let (resources, hcas) = (least(&per_node), if nvlink.is_some() { Vec::new() } else { hcas(e, &nodes) });
        let mut job = Job { entry: e, model, profile, nodes, weights, resources, per_node, hcas, ray: false, nvlink };
        job.ray = crate::launch::vllm_over_ray(profile, &job.nodes, containers.then(|| job.image()));
        match ray_missing(&job).filter(|_| containers) {
            Some(d) => errors.push(at(d)),
            None => jobs.push(job),
        }
    }
    warnings.extend(resource_warning(&jobs).into_iter().chain(arm_warning(&jobs)));
    if errors.is_empty() { Ok(Resolved { plan, jobs, skipped, warnings }) } else { Err(errors) }
}

/// A replica that runs `ray start` in an image that ships no Ray: it would
/// fail in every pod or step.
fn ray_missing(job: &Job<'_>) -> Option<Diag> {
    (job.ray && crate::images::ships_ray(job.image()) == Some(false)).then(|| {
        Diag::error(
            Code::CannotRender,
            format!(
                "{} r{}: launcher = \"ray\" runs `ray start` in {}, which ships no Ray",
                job.entry.model,
                job.entry.replica,
                job.image()
            ),
        )
        .help("drop `launcher` (vLLM 0.11.1 and later start across nodes without Ray), or give the profile an `image` with Ray installed (`pip install 'ray[cgraph]'`)")
    })
}

/// Why the replica's planned GPUs are not what its profile runs on: the
/// node count, the GPU count on each node, one class (the profile's), the
/// MIG profile; `None` when they are.
fn misfit(p: &Profile, e: &Entry, nodes: &[&Node]) -> Option<String> {
    if p.nodes as usize != e.nodes.len() {
        return Some(format!("{} node(s), but profile `{}` runs on {}", e.nodes.len(), p.name, p.nodes));
    }
    for (at, node) in e.nodes.iter().zip(nodes) {
        if p.cpu_only() {
            if !at.gpus.is_empty() {
                return Some(format!("GPUs on {}, but profile `{}` runs on CPUs", at.node, p.name));
            }
            continue;
        }
        let class = |g: &u32| node.gpu_position(*g).map(|i| node.gpus[i].class.as_str());
        if let Some(other) = at.gpus.iter().find(|g| class(g) != p.gpu_class.as_deref()) {
            return Some(format!(
                "GPU {other} of {} is not `{}`, the class profile `{}` runs on",
                at.node,
                p.gpu_class.as_deref().unwrap_or_default(),
                p.name
            ));
        }
        match &p.mig_profile {
            None if !at.mig_devices.is_empty() || at.gpus.len() != p.gpus_per_node as usize => {
                return Some(format!(
                    "{} GPU(s) on {}, but profile `{}` takes {} whole GPU(s) a node",
                    at.gpus.len(),
                    at.node,
                    p.name,
                    p.gpus_per_node
                ));
            }
            None => {}
            Some(m) => {
                let ok = at.gpus.len() == 1
                    && at.mig_devices.len() == 1
                    && node.gpu_position(at.gpus[0]).is_some_and(|i| {
                        node.gpus[i].mig_devices.iter().any(|d| d.index == at.mig_devices[0] && &d.profile == m)
                    });
                if !ok {
                    return Some(format!("not one `{m}` MIG device on {}, as profile `{}` takes", at.node, p.name));
                }
            }
        }
    }
    None
}

/// Why a resolved replica cannot be written, if it cannot.
fn unrenderable(e: &Entry, profile: &Profile, nodes: &[&Node], weights: &Weights) -> Option<Diag> {
    // What is written must be what the profile runs on; a running replica
    // whose import could not say which GPUs it holds is rendered where it runs.
    let unknown_gpus = e.kind == crate::plan::Kind::Existing && e.nodes.iter().any(|a| a.gpus.is_empty());
    if let Some(why) = misfit(profile, e, nodes).filter(|_| !unknown_gpus) {
        return Some(
            Diag::error(Code::StalePlan, format!("{} r{}: {why}; place again", e.model, e.replica)).help(
                "render writes what the plan names; a plan edited or made for another catalog can ask for what the profile cannot run on",
            ),
        );
    }
    let vendors: std::collections::BTreeSet<&str> = e
        .nodes
        .iter()
        .zip(nodes)
        .flat_map(|(a, n)| a.gpus.iter().filter_map(|g| n.gpu_position(*g).map(|i| n.gpus[i].vendor.as_str())))
        .collect();
    if vendors.len() > 1 {
        return Some(
            Diag::error(
                Code::CannotRender,
                format!(
                    "{} r{}: its GPUs are of two vendors ({}), and no pod or job can ask for both",
                    e.model,
                    e.replica,
                    vendors.into_iter().collect::<Vec<_>>().join(" and ")
                ),
            )
            .help("a class that names GPUs of two vendors mixes them: give each vendor's GPUs a class of their own"),
        );
    }
    if e.nodes.len() > 1 && profile.engine.mpi_ranks {
        return Some(Diag::error(
            Code::CannotRender,
            format!("{} r{}: llmgw does not start trtllm across nodes", e.model, e.replica),
        )
        .help("TensorRT-LLM needs an MPI launch with one task per GPU across nodes; use a single-node profile, or vllm or sglang"));
    }
    if let Some(d) = control_values(e, profile) {
        return Some(d);
    }
    if let Weights::Hub(source) = weights
        && profile.is_gguf_file_name(source)
    {
        return Some(
            Diag::error(
                Code::GgufFileName,
                format!(
                    "{} r{}: llama.cpp's source `{}` is a file name, not a Hugging Face repository, and its node holds no copy of it",
                    e.model,
                    e.replica,
                    crate::term::escape(source)
                ),
            )
            .help(crate::catalog::GGUF_HELP),
        );
    }
    None
}

/// The adapters NCCL is told of: those the plan names, else (a replica
/// that already runs) its nodes' adapters on the first fabric, by name,
/// that every one of its nodes is attached to. Each adapter once, in order.
fn hcas(e: &Entry, nodes: &[&Node]) -> Vec<String> {
    let mut named: Vec<&String> = e.nodes.iter().flat_map(|a| a.hcas.iter().flatten()).collect();
    if named.is_empty() && nodes.len() > 1 {
        let mut shared: Vec<&str> = nodes[0].fabrics.iter().map(|f| f.name.as_str()).collect();
        shared.retain(|name| nodes.iter().all(|n| n.fabric(name).is_some()));
        shared.sort_unstable();
        if let Some(name) = shared.first() {
            named = nodes.iter().filter_map(|n| n.fabric(name)?.hcas.as_ref()).flatten().collect();
        }
    }
    let mut out: Vec<String> = Vec::new();
    for h in named {
        if !out.contains(h) {
            out.push(h.clone());
        }
    }
    out
}

/// For a running replica that does not say its profile: the highest
/// priority profile of its model that fits its GPUs (count, nodes, class,
/// MIG profile), ties in file order.
fn fitting_profile<'a>(model: &'a Model, e: &Entry, nodes: &[&Node]) -> Option<&'a Profile> {
    let fits = |p: &Profile| misfit(p, e, nodes).is_none();
    let mut best: Option<&Profile> = None;
    for p in model.profiles.iter().filter(|p| fits(p)) {
        if best.is_none_or(|b| p.priority > b.priority) {
            best = Some(p);
        }
    }
    best
}

/// A value render would place in a script or manifest that holds a
/// control character: refused, never quoted around.
fn control_values(e: &Entry, p: &Profile) -> Option<Diag> {
    let s = &p.serving;
    let mut values: Vec<(&str, &str)> = vec![("source", p.source.as_deref().unwrap_or_default())];
    values.extend(s.image.as_deref().map(|i| ("image", i)));
    values.extend(s.args.iter().map(|a| ("args", a.as_str())));
    values.extend(s.env.iter().map(|(_, v)| ("env", v.as_str())));
    values.extend(e.nodes.iter().flat_map(|a| a.hcas.iter().flatten()).map(|h| ("adapter", h.as_str())));
    values.extend(e.nodes.iter().map(|a| ("node", a.node.as_str())));
    let (what, v) = values.into_iter().find(|(_, v)| v.chars().any(char::is_control))?;
    Some(
        Diag::error(
            Code::ControlCharacter,
            format!("{} r{}: its {what} `{}` holds a control character", e.model, e.replica, crate::term::escape(v)),
        )
        .help("render writes this value into a script or manifest: remove the newline or control character"),
    )
}

/// The node's own copy when every node of the replica holds the source
/// and says where (`disk.path`), else the hub id. Ollama pulls by name.
fn weights(e: &Entry, model: &Model, p: &Profile, nodes: &[&Node]) -> Weights {
    let source = p.source.clone().unwrap_or_else(|| model.name.clone());
    let gguf = match p.engine.weights {
        WeightsForm::Pulled => return Weights::Hub(source),
        WeightsForm::Gguf => true,
        WeightsForm::Repository => false,
    };
    let paths: Vec<Option<String>> =
        nodes.iter().map(|n| if gguf { n.gguf_copy(&source) } else { n.local_copy(&source) }).collect();
    match paths.first() {
        Some(Some(first)) if paths.iter().all(|p| p.as_ref() == Some(first)) && e.nodes.len() == nodes.len() => {
            Weights::Local(first.clone())
        }
        _ => Weights::Hub(source),
    }
}

/// What the plan asks of each node, exactly as placement decided it (or,
/// for a replica that runs, what its allocation holds): never computed
/// again here. A zero is no request (`--mem=0` would ask Slurm for the
/// whole node).
fn per_node(e: &Entry) -> Vec<Resources> {
    e.nodes
        .iter()
        .map(|a| Resources { millicpus: a.cpus_millis.filter(|&m| m > 0), memory_mib: a.memory_mb.filter(|&m| m > 0) })
        .collect()
}

/// One warning for the replicas on arm64 nodes whose engine publishes no
/// arm64 image: they are given the x86-64 one, which cannot start there.
fn arm_warning(jobs: &[Job<'_>]) -> Option<Diag> {
    use crate::images::{Arch, default_image_for};
    let bad: Vec<String> = jobs
        .iter()
        .filter(|j| j.profile.serving.image.is_none() && j.arch() == Arch::Arm64)
        .filter(|j| default_image_for(j.profile.engine.name, !j.profile.cpu_only(), j.vendor(), Arch::Arm64).is_none())
        .map(|j| format!("{} r{} ({})", j.entry.model, j.entry.replica, j.profile.engine.name))
        .collect();
    if bad.is_empty() {
        return None;
    }
    Some(
        Diag::warning(
            Code::NoArmImage,
            format!(
                "{}: on arm64 nodes, but the engine publishes no arm64 image; rendered with its x86-64 image, which cannot start there",
                crate::diag::shorten(&bad.iter().map(String::as_str).collect::<Vec<_>>(), 5)
            ),
        )
        .help("give the profile an `image` built for arm64, or keep it off arm64 nodes (node_selector kubernetes.io/arch=amd64)"),
    )
}

/// One warning for the replicas rendered without a CPU or memory request.
fn resource_warning(jobs: &[Job<'_>]) -> Option<Diag> {
    let name = |j: &Job<'_>| format!("{} r{}", j.entry.model, j.entry.replica);
    let no_cpu: Vec<String> = jobs.iter().filter(|j| j.resources.millicpus.is_none()).map(name).collect();
    let no_mem: Vec<String> = jobs.iter().filter(|j| j.resources.memory_mib.is_none()).map(name).collect();
    if !no_cpu.is_empty() || !no_mem.is_empty() {
        let shown = |list: &[String]| crate::diag::shorten(&list.iter().map(String::as_str).collect::<Vec<_>>(), 5);
        let mut parts = Vec::new();
        if !no_cpu.is_empty() {
            parts.push(format!("no CPU request for {}", shown(&no_cpu)));
        }
        if !no_mem.is_empty() {
            parts.push(format!("no memory request for {}", shown(&no_mem)));
        }
        return Some(
            Diag::warning(
                Code::NoResources,
                format!(
                    "{}: the plan asks for none there (the nodes report no `cpus` / memory, none is free there, or the plan was made by an older llmgw)",
                    parts.join("; ")
                ),
            )
            .help("import the nodes with their CPUs and memory, then place again: the plan then asks for what is free"),
        );
    }
    None
}
