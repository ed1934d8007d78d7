//! Every command's entry point, one file per command or family: read the
//! input, call the module that decides, hand the result to a renderer,
//! choose the exit code. Clap's types end here; the modules below take
//! plain settings and domain types.

mod capacity;
mod diff;
mod discover;
mod engine_check;
mod explain;
pub mod generate;
mod inventory;
mod lint;
mod map;
mod nodes;
mod place;
mod render;

use std::path::Path;

use crate::cli::{self, Command, InventoryCommand, OutputFormat};
use crate::diag::Diag;
use crate::exit::Outcome;
use crate::inventory::Inventory;
use crate::{load, output};

pub fn dispatch(command: Command) -> Outcome {
    match command {
        Command::Discover(a) => discover::run(&a),
        Command::Place(a) => place::run(&a),
        Command::ExplainPlacement(a) => explain::run(&a),
        Command::Lint(a) => lint::run(&a),
        Command::EngineCheck(a) => engine_check::run(&a),
        Command::Nodes(a) => nodes::run(&a),
        Command::Inventory(InventoryCommand::Merge(a)) => inventory::merge(&a),
        Command::Inventory(InventoryCommand::Synth(a)) => inventory::synth(&a),
        Command::Inventory(InventoryCommand::Import(cli::ImportCommand::Kubernetes(a))) => {
            inventory::import_kubernetes(&a)
        }
        Command::Inventory(InventoryCommand::Import(cli::ImportCommand::Slurm(a))) => inventory::import_slurm(&a),
        Command::Diff(a) => diff::run(&a),
        Command::Capacity(a) => capacity::run(&a),
        Command::Map(a) => map::run(&a),
        Command::Render(cli::RenderCommand::Kubernetes(a)) => render::kubernetes(&a),
        Command::Render(cli::RenderCommand::Slurm(a)) => render::slurm(&a),
        Command::Completions(a) => generate::completions_command(&a),
        Command::Man(a) => generate::man_command(&a),
    }
}

/// Human or JSON, from `--format` and the name `-o` gives; `command` names
/// the command in the error for a name that says neither.
fn report_format(command: &str, path: Option<&Path>, flag: Option<OutputFormat>) -> Result<OutputFormat, Diag> {
    let name = flag.map(|f| if f == OutputFormat::Json { "json" } else { "human" });
    let writes = format!("{command} writes human text or JSON");
    Ok(if output::report_is_json(path, name, &writes)? { OutputFormat::Json } else { OutputFormat::Human })
}

/// The fleet: the inventory files given, or this machine discovered live.
/// As `fleet_inventory`, with the sha256 of the inventory's bytes (of the
/// discovered node as TOML, when discovered live).
fn fleet_inventory_with_digest(flag: &cli::InventoryFlag) -> Result<(Inventory, String), crate::exit::Failure> {
    if flag.inventory.is_empty() {
        let inv = fleet_inventory(flag)?;
        let text = crate::output::render_inventory(&inv, crate::doc::Format::Toml).unwrap_or_default();
        return Ok((inv, load::digest(&[&crate::diag::source("discovered.toml", text)])));
    }
    Ok(load::inventories_with_digest(&flag.inventory)?)
}

fn fleet_inventory(flag: &cli::InventoryFlag) -> Result<Inventory, crate::exit::Failure> {
    if flag.inventory.is_empty() {
        let (node, warnings) = crate::discovery::discover(&crate::discovery::Machine::local()?);
        crate::report::diagnostics::eprint(&warnings);
        return Ok(Inventory { nodes: vec![node] });
    }
    Ok(load::inventories(&flag.inventory)?)
}

/// A `--namespace` as Kubernetes requires it: a DNS-1123 label (it lands
/// in every object and every `--endpoints` URL).
pub(crate) fn namespace(ns: &str) -> Result<(), crate::diag::Diag> {
    let label = crate::names::dns_label(ns);
    if label {
        return Ok(());
    }
    Err(crate::diag::Diag::error(
        crate::diag::Code::BadArgument,
        format!("--namespace {}: not a Kubernetes namespace name", crate::term::escape(ns)),
    )
    .help("a namespace is a DNS-1123 label: at most 63 lower-case letters, digits and `-`, starting and ending with a letter or digit"))
}
