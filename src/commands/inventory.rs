//! `inventory merge` and `inventory synth`, and writing any inventory.

use std::io::Write;
use std::path::Path;

use crate::cli;
use crate::diag::{Code, Diag};
use crate::exit::{Exit, Outcome};
use crate::inventory::Inventory;
use crate::load;
use crate::output::{self, Sink};

pub fn merge(a: &cli::MergeArgs) -> Outcome {
    let inv = load::inventories(&a.files)?;
    write_inventory(&inv, a.output.as_deref(), a.format)
}

/// Prints an inventory, or writes it atomically where `-o` says.
pub fn write_inventory(inv: &Inventory, path: Option<&Path>, format: Option<crate::doc::Format>) -> Outcome {
    let format = output::data_format(path, format)?;
    let text = output::render_inventory(inv, format)
        .map_err(|e| Diag::error(Code::Io, format!("cannot write the inventory: {e}")))?;
    let mut out = Sink::open(path)?;
    out.write_all(text.as_bytes())?;
    out.finish()?;
    Ok(Exit::Success)
}

pub fn synth(a: &cli::SynthArgs) -> Outcome {
    let mut groups = Vec::new();
    let mut errors = Vec::new();
    for g in &a.groups {
        match crate::synth::parse_group(g) {
            Ok(g) => groups.push(g),
            Err(d) => errors.push(d),
        }
    }
    for (flag, v) in [("--cordoned", a.cordoned), ("--load", a.load)] {
        if !(0.0..=1.0).contains(&v) {
            errors.push(Diag::error(Code::BadArgument, format!("{flag} must be between 0 and 1, not {v}")));
        }
    }
    if !errors.is_empty() {
        return Err(errors.into());
    }
    let inv = crate::synth::synthesize(&groups, a.cordoned, a.load, a.seed, &a.prefix);
    write_inventory(&inv, a.output.as_deref(), a.format)
}

/// `inventory import kubernetes`: the fleet as the cluster sees it.
pub fn import_kubernetes(a: &cli::KubernetesImportArgs) -> Outcome {
    let nodes = load::read(&a.nodes)?;
    let pods = a.pods.as_deref().map(load::read).transpose()?;
    let slices = a.resource_slices.as_deref().map(load::read).transpose()?;
    let claims = a.claims.as_deref().map(load::read).transpose()?;
    for ns in &a.namespace {
        super::namespace(ns)?;
    }
    let namespaces = (!a.namespace.is_empty()).then(|| a.namespace.clone());
    let settings = crate::kubernetes::Settings { fabric_label: a.fabric_label.clone(), namespaces };
    let dra = crate::kubernetes::Dra { slices: slices.as_ref(), claims: claims.as_ref() };
    let (inv, warnings) = crate::kubernetes::import_with(&nodes, pods.as_ref(), &dra, &settings)?;
    crate::report::diagnostics::eprint(&warnings);
    write_import(&inv, a.output.as_deref(), a.format)
}

/// `inventory import slurm`: the fleet as the controller sees it.
pub fn import_slurm(a: &cli::SlurmImportArgs) -> Outcome {
    let nodes = load::read(&a.nodes)?;
    let topology = a.topology.as_deref().map(load::read).transpose()?;
    let jobs = a.jobs.as_deref().map(load::read).transpose()?;
    let settings = crate::slurm::Settings {
        fabric_feature: a.fabric_feature.clone(),
        jobs_user: a.jobs_user.clone().unwrap_or_else(crate::slurm::running_user),
    };
    let (inv, warnings) = crate::slurm::import(&nodes, topology.as_ref(), jobs.as_ref(), &settings)?;
    crate::report::diagnostics::eprint(&warnings);
    write_import(&inv, a.output.as_deref(), a.format)
}

/// Writes an imported inventory once llmgw's own loader has read the very
/// bytes back: an import that wrote a file `place` then refuses would hand
/// the operator a broken fleet. A refusal here is a bug in the import.
fn write_import(inv: &Inventory, path: Option<&Path>, format: Option<crate::doc::Format>) -> Outcome {
    let format = output::data_format(path, format)?;
    let text = output::render_inventory(inv, format)
        .map_err(|e| Diag::error(Code::Io, format!("cannot write the inventory: {e}")))?;
    let name = format!("imported.{}", format.name());
    if let Err(diags) = load::inventory_file(&crate::diag::source(&name, text.clone())) {
        let mut out = vec![
            Diag::error(Code::Unloadable, "the imported inventory would not load; nothing was written")
                .help("this is a bug in llmgw's import: please report it with the input files"),
        ];
        out.extend(diags);
        return Err(out.into());
    }
    let mut out = Sink::open(path)?;
    out.write_all(text.as_bytes())?;
    out.finish()?;
    Ok(Exit::Success)
}
