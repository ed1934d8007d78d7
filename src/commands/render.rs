//! `render`: what runs a plan where it was placed, checked against the
//! inventory first; and `--stop`: what to stop when a new plan replaces it.

use std::io::Write;

use crate::cli;
use crate::diag::{Code, Diag};
use crate::exit::{Exit, Outcome};
use crate::load;
use crate::output::Sink;
use crate::plan::Plan;
use crate::render::out::{self, Target};
use crate::render::{self, Rendered, Resolved};

/// The plan, catalog and inventory every render starts from.
struct Inputs {
    plan: Plan,
    catalog: crate::catalog::Catalog,
    inventory: crate::inventory::Inventory,
}

fn inputs(a: &cli::RenderArgs) -> Result<Inputs, crate::exit::Failure> {
    let (Some(plan), Some(catalog)) = (&a.plan, &a.catalog) else {
        return Err(Diag::error(Code::BadArgument, "render needs a PLAN, --catalog and --inventory").into());
    };
    let plan = crate::plan::read(&load::read(plan)?)?;
    let catalog = load::catalog(catalog)?;
    let inventory = load::inventories(&a.inventory)?;
    Ok(Inputs { plan, catalog, inventory })
}

fn stop_plans(stop: &[std::path::PathBuf]) -> Result<(Plan, Plan), crate::exit::Failure> {
    let mut errors = Vec::new();
    let old =
        load::read(&stop[0]).map_err(|d| vec![d]).and_then(|s| crate::plan::read(&s)).map_err(|d| errors.extend(d));
    let new =
        load::read(&stop[1]).map_err(|d| vec![d]).and_then(|s| crate::plan::read(&s)).map_err(|d| errors.extend(d));
    match (old, new) {
        (Ok(o), Ok(n)) => Ok((o, n)),
        _ => Err(errors.into()),
    }
}

/// `render kubernetes`: one YAML stream, or one file per object under `-o DIR`.
pub fn kubernetes(a: &cli::RenderKubernetesArgs) -> Outcome {
    use crate::kubernetes::render as k8s;
    if let Some(ns) = &a.namespace {
        super::namespace(ns)?;
    }
    let settings = k8s::Settings {
        namespace: a.namespace.clone(),
        rdma: a.rdma_resource.as_deref().map(rdma).transpose()?,
        priority_class: a.priority_class.clone(),
        service_account: a.service_account.clone(),
        image_pull_secrets: a.image_pull_secret.clone(),
        devices: a.devices,
        gateway: k8s::gateway::from_flags(a.epp.as_deref(), a.gateway_parent.as_deref(), &a.route_timeout)?,
    };
    if let Some(stop) = &a.common.stop {
        let (old, new) = stop_plans(stop)?;
        // The inventory, when given, says which replicas ran in an NVLink
        // domain (and so have a ComputeDomain to delete).
        let inventory =
            if a.common.inventory.is_empty() { None } else { Some(load::inventories(&a.common.inventory)?) };
        let lines = k8s::stop_lines(
            &old,
            &new,
            &crate::plan::stopped(&old, &new),
            &k8s::Stop { namespace: settings.namespace.as_deref(), settings: &settings, inventory: inventory.as_ref() },
        );
        return print(&lines);
    }
    render_into(&a.common, true, |resolved, _| k8s::render(resolved, &settings))
}

/// `render slurm`: the scripts one after another, or one file each under `-o DIR`.
pub fn slurm(a: &cli::RenderSlurmArgs) -> Outcome {
    use crate::slurm::{render as sl, submit};
    if let Some(stop) = &a.common.stop {
        let (old, new) = stop_plans(stop)?;
        let inventory =
            if a.common.inventory.is_empty() { None } else { Some(load::inventories(&a.common.inventory)?) };
        let by = submit::Cancel { inventory: inventory.as_ref(), user: submit::submitting_user() };
        return print(&submit::stop_lines(&old, &crate::plan::stopped(&old, &new), &by));
    }
    let settings = sl::Settings {
        log_dir: a.log_dir.clone(),
        partition: a.partition.clone(),
        account: a.account.clone(),
        qos: a.qos.clone(),
        time: a.time.clone(),
        pyxis: a.container == Some(cli::ContainerRuntime::Pyxis),
        cache_dir: a.cache_dir.clone(),
    };
    render_into(&a.common, settings.pyxis, |resolved, dir| sl::render(resolved, &settings, dir))
}

/// Reads and resolves the plan (`containers`: see `render::resolve`),
/// takes the output folder, renders with `render` (given the folder it
/// renders into, if any), and writes what it returns. The folder is held
/// from before the render (which may read the folder's files) to the last
/// write.
fn render_into(
    a: &cli::RenderArgs,
    containers: bool,
    render: impl for<'r> FnOnce(&Resolved<'r>, Option<&std::path::Path>) -> Result<Rendered<'r>, Vec<Diag>>,
) -> Outcome {
    let target = out::target(a.output.as_deref())?;
    let inp = inputs(a)?;
    let resolved = render::resolve(&inp.plan, &inp.catalog, &inp.inventory, a.allow_stale, containers)?;
    crate::report::diagnostics::eprint(&resolved.warnings);
    let (_lock, dir) = match &target {
        Target::Dir(dir) => (Some(out::lock(dir)?), Some(dir.as_path())),
        Target::Stdout => (None, None),
    };
    let r = render(&resolved, dir)?;
    crate::report::diagnostics::eprint(&r.warnings);
    finish(&target, &r, a, &inp.plan.unplaced)
}

/// Writes a render: to standard output, or into the folder (removing the
/// files of earlier renders it neither wrote nor keeps), with the
/// endpoints file when asked for; then says what it did.
fn finish(target: &Target, r: &Rendered<'_>, a: &cli::RenderArgs, unplaced: &[crate::plan::Unplaced]) -> Outcome {
    if let (Target::Dir(dir), Some(path)) = (target, a.endpoints.as_deref())
        && out::inside(path, dir)
    {
        let shown = |p: &std::path::Path| crate::term::escape(&p.display().to_string()).into_owned();
        return Err(Diag::error(
            Code::EndpointsInFolder,
            format!("--endpoints {} is inside -o {}, the folder render writes as a whole", shown(path), shown(dir)),
        )
        .help("write the endpoints beside the folder (e.g. --endpoints endpoints.json -o out/): render replaces the folder's files and removes the ones it did not write")
        .into());
    }
    // Everything is rendered before anything is written.
    let (text, files) = match target {
        Target::Stdout => (Some(r.stream()?), None),
        Target::Dir(_) => (None, Some(r.files()?)),
    };
    // The endpoints are written (to a temporary file beside FILE) before
    // the folder, and put in place after it: a render that fails leaves
    // both as they were, and one that cannot write them writes no folder.
    let endpoints = match a.endpoints.as_deref() {
        Some(path) => {
            let mut sink = Sink::open(Some(path))?;
            let format = match a.endpoints_format.unwrap_or_default() {
                cli::EndpointsFormat::Json => render::endpoints::Format::Json,
                cli::EndpointsFormat::Litellm => render::endpoints::Format::Litellm,
            };
            crate::report::diagnostics::eprint(&render::endpoints::warnings(format, &r.endpoints));
            sink.write_all(render::endpoints::text(format, &r.endpoints).as_bytes())
                .map_err(|e| out::io_error("write", path, &e))?;
            Some((path, sink))
        }
        None => None,
    };
    match (target, text, files) {
        (Target::Dir(dir), _, Some(files)) => {
            let report = out::write_dir(dir, r.kind, files, &r.kept)?;
            if let Some((path, sink)) = endpoints {
                // Only the rename is left; should even that fail, say so
                // truthfully: the folder is the new render already.
                sink.finish().map_err(|_| {
                    let shown = crate::term::escape(&path.display().to_string()).into_owned();
                    Diag::error(Code::Io, format!("the folder holds the new render, but {shown} could not be put in place"))
                        .help("write the endpoints again: render the same plan into the same folder (it changes no file) with --endpoints")
                })?;
            }
            print(&out::report_text(dir, files, &report, unplaced, a.format == Some(cli::OutputFormat::Json)))
        }
        (_, Some(text), _) => {
            if let Some((_, sink)) = endpoints {
                sink.finish()?;
            }
            // The manifests go to stdout; what the plan left out, beside them.
            if let Some(line) = out::unplaced_line(unplaced) {
                eprintln!("{}", crate::term::escape(&line));
            }
            print(&text)
        }
        _ => Ok(Exit::Success),
    }
}

fn print(text: &str) -> Outcome {
    let mut out = Sink::open(None)?;
    out.write_all(text.as_bytes())?;
    out.finish()?;
    Ok(Exit::Success)
}

/// `--rdma-resource NAME[=COUNT]`.
fn rdma(v: &str) -> Result<(String, u32), Diag> {
    let bad = || {
        Diag::error(Code::BadArgument, format!("--rdma-resource {}: not NAME or NAME=COUNT", crate::term::escape(v)))
            .help("the resource name your RDMA device plugin advertises, e.g. rdma/ib or rdma/ib=1")
    };
    let (name, count) = match v.split_once('=') {
        Some((n, c)) => (n, c.parse::<u32>().ok().filter(|&c| c > 0).ok_or_else(bad)?),
        None => (v, 1),
    };
    let ok = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '/'));
    if ok { Ok((name.to_string(), count)) } else { Err(bad()) }
}
