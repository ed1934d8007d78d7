//! One function per command: read the input, call the module that decides,
//! hand the result to a renderer, choose the exit code.

use std::io::Write;
use std::path::Path;

use crate::cli::{self, Command, InventoryCommand, LintFormat, OutputFormat};
use crate::diag::{Code, Diag, Severity};
use crate::inventory::Inventory;
use crate::output::Sink;
use crate::placement::{self, Fleet, Options};
use crate::report::{self, Names};
use crate::{Exit, Outcome, load, output};

pub fn dispatch(command: Command) -> Outcome {
    match command {
        Command::Discover(a) => crate::discovery::command(&a),
        Command::Place(a) => place(&a),
        Command::ExplainPlacement(a) => explain(&a),
        Command::Lint(a) => lint(&a),
        Command::EngineCheck(a) => crate::engine_check::command(&a),
        Command::Nodes(a) => nodes(&a),
        Command::Inventory(InventoryCommand::Merge(a)) => merge(&a),
        Command::Inventory(InventoryCommand::Synth(a)) => crate::synth::command(&a),
        Command::Completions(a) => completions(&a),
        Command::Man(a) => man(&a),
    }
}

/// Human or JSON, from `--format` and the name `-o` gives.
pub fn report_format(path: Option<&Path>, flag: Option<OutputFormat>) -> Result<OutputFormat, Diag> {
    let name = flag.map(|f| if f == OutputFormat::Json { "json" } else { "human" });
    Ok(if output::report_is_json(path, name)? { OutputFormat::Json } else { OutputFormat::Human })
}

/// The fleet: the inventory files given, or this machine discovered live.
fn fleet_inventory(flag: &cli::InventoryFlag) -> Result<Inventory, crate::Failure> {
    if flag.inventory.is_empty() {
        let (node, warnings) = crate::discovery::discover(&crate::discovery::Machine::local()?);
        if !warnings.is_empty() {
            eprint!("{}", crate::diag::render(&warnings, crate::diag::colour_for_stderr()));
        }
        return Ok(Inventory { nodes: vec![node] });
    }
    Ok(load::inventories(&flag.inventory)?)
}

fn place(a: &cli::PlaceArgs) -> Outcome {
    let format = report_format(a.output.as_deref(), a.format)?;
    let mut out = Sink::open(a.output.as_deref())?;
    let mut t = Timings::start();
    let catalog = load::catalog(&a.catalog)?;
    t.lap("parse catalog");
    let inv = fleet_inventory(&a.inventory)?;
    t.lap("parse inventory");
    let (plan, fleet) = placement::plan_with_fleet(&catalog, &inv, Options::default());
    t.lap("placement");
    let names = Names { catalog: &catalog, fleet: &fleet };
    match format {
        OutputFormat::Json => report::place::json(&mut out, &names, &plan)?,
        OutputFormat::Human => {
            out.fit_width();
            let text = report::place::human(&names, &plan);
            out.human(&text)?
        }
    }
    out.finish()?;
    t.lap("output");
    t.report();
    Ok(if plan.summary.unplaced > 0 { Exit::No } else { Exit::Success })
}

/// Phase timings on stderr when `LLMGW_TIMINGS` is set, for the scale check.
struct Timings {
    on: bool,
    last: std::time::Instant,
    laps: Vec<(&'static str, std::time::Duration)>,
}

impl Timings {
    fn start() -> Self {
        Timings { on: std::env::var_os("LLMGW_TIMINGS").is_some(), last: std::time::Instant::now(), laps: Vec::new() }
    }
    fn lap(&mut self, what: &'static str) {
        let now = std::time::Instant::now();
        self.laps.push((what, now - self.last));
        self.last = now;
    }
    fn report(&self) {
        if self.on {
            let parts: Vec<String> =
                self.laps.iter().map(|(w, d)| format!("{w} {:.0} ms", d.as_secs_f64() * 1000.0)).collect();
            eprintln!("timings: {}", parts.join(", "));
        }
    }
}

fn explain(a: &cli::ExplainArgs) -> Outcome {
    let format = report_format(a.output.as_deref(), a.format)?;
    let mut out = Sink::open(a.output.as_deref())?;
    let catalog = load::catalog(&a.catalog)?;
    let Some(mi) = catalog.models.iter().position(|m| m.name == a.model) else {
        let mut d = Diag::error(Code::UnknownModel, format!("the catalog has no model `{}`", a.model));
        d.help = Some(match crate::diag::did_you_mean(&a.model, catalog.models.iter().map(|m| m.name.as_str())) {
            Some(s) => format!("did you mean `{s}`?"),
            None => format!(
                "its models are: {}",
                catalog.models.iter().map(|m| m.name.as_str()).collect::<Vec<_>>().join(", ")
            ),
        });
        return Err(d.into());
    };
    let model = &catalog.models[mi];
    if let Some(r) = a.replica {
        if r >= model.replicas {
            let d = Diag::error(
                Code::UnknownReplica,
                format!("model `{}` has replicas 0..{}, not {r}", model.name, model.replicas),
            )
            .help(format!("the catalog asks for {} replica(s); pick an index below that", model.replicas));
            return Err(d.into());
        }
    }
    let inv = fleet_inventory(&a.inventory)?;
    let (plan, fleet) = placement::plan_with_fleet(&catalog, &inv, Options { explain: Some(mi), ..Options::default() });
    let names = Names { catalog: &catalog, fleet: &fleet };
    let attempts: Vec<_> = plan.attempts.iter().filter(|at| a.replica.is_none_or(|r| r == at.replica)).collect();
    match format {
        OutputFormat::Json => report::explain::json(&mut out, &names, mi as u32, &attempts)?,
        OutputFormat::Human => {
            out.fit_width();
            let mut text = report::explain::human(&names, &plan, mi as u32, &attempts, a.verbose);
            if let Some(r) = a.replica {
                if attempts.is_empty() {
                    text.push_str(&format!("\nreplica {r} already runs; there is nothing to decide for it\n"));
                }
            }
            out.human(&text)?;
        }
    }
    out.finish()?;
    let unplaced = attempts.iter().any(|at| at.placement.is_none());
    Ok(if unplaced { Exit::No } else { Exit::Success })
}

fn nodes(a: &cli::NodesArgs) -> Outcome {
    let format = report_format(a.output.as_deref(), a.format)?;
    let mut out = Sink::open(a.output.as_deref())?;
    let inv = fleet_inventory(&a.inventory)?;
    let fleet = Fleet::new(&inv);
    match format {
        OutputFormat::Json => report::nodes::json(&mut out, &fleet)?,
        OutputFormat::Human => {
            out.fit_width();
            let text = report::nodes::human(&fleet);
            out.human(&text)?
        }
    }
    out.finish()?;
    Ok(Exit::Success)
}

fn lint(a: &cli::LintArgs) -> Outcome {
    let format = {
        let name = a.format.map(|f| match f {
            LintFormat::Human => "human",
            LintFormat::Json => "json",
            LintFormat::Github => "github",
        });
        match (output::report_is_json(a.output.as_deref(), name)?, a.format) {
            (true, _) => LintFormat::Json,
            (false, Some(f)) => f,
            (false, None) => LintFormat::Human,
        }
    };
    let mut out = Sink::open(a.output.as_deref())?;
    // A fleet that cannot be read is unusable input, not a lint finding.
    let inv = if a.inventory.is_empty() { None } else { Some(load::inventories(&a.inventory)?) };
    let mut all = Vec::new();
    for path in &a.catalogs {
        let src = load::read(path)?;
        let (cat, mut diags) = crate::catalog::check(&src);
        if let (Some(cat), Some(inv)) = (&cat, &inv) {
            diags.extend(crate::catalog::fleet_checks(cat, inv));
        }
        all.extend(diags);
    }
    let errors = all.iter().filter(|d| d.is_error()).count();
    let warnings = all.len() - errors;
    match format {
        LintFormat::Json => report::lint::json(&mut out, &all)?,
        LintFormat::Github => out.write_all(report::lint::github(&all).as_bytes())?,
        LintFormat::Human => {
            let colour = out.is_stdout() && crate::diag::colour_for_stderr();
            let mut text = crate::diag::render(&all, colour);
            let files = a.catalogs.len();
            text.push_str(&format!(
                "{} {}: {errors} error{}, {warnings} warning{}\n",
                files,
                if files == 1 { "catalog" } else { "catalogs" },
                if errors == 1 { "" } else { "s" },
                if warnings == 1 { "" } else { "s" },
            ));
            if out.is_stdout() {
                std::io::stderr().write_all(text.as_bytes())?;
            } else {
                out.write_all(text.as_bytes())?;
            }
        }
    }
    out.finish()?;
    let failing = all.iter().any(|d| d.severity == Severity::Error || a.deny_warnings);
    Ok(if failing { Exit::No } else { Exit::Success })
}

fn merge(a: &cli::MergeArgs) -> Outcome {
    let inv = load::inventories(&a.files)?;
    write_inventory(&inv, a.output.as_deref(), a.format)
}

/// Prints an inventory, or writes it atomically where `-o` says.
pub fn write_inventory(inv: &Inventory, path: Option<&Path>, format: Option<cli::DataFormat>) -> Outcome {
    let format = output::data_format(path, format)?;
    let text = output::render_inventory(inv, format)
        .map_err(|e| Diag::error(Code::Io, format!("cannot write the inventory: {e}")))?;
    let mut out = Sink::open(path)?;
    out.write_all(text.as_bytes())?;
    out.finish()?;
    Ok(Exit::Success)
}

fn completions(a: &cli::CompletionsArgs) -> Outcome {
    std::io::stdout().lock().write_all(&crate::generate::completions(a.shell))?;
    Ok(Exit::Success)
}

fn man(a: &cli::ManArgs) -> Outcome {
    let pages = crate::generate::man_pages()?;
    match &a.dir {
        None => std::io::stdout().lock().write_all(&pages[0].1)?,
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            for (name, bytes) in &pages {
                output::write_file(&dir.join(name), bytes)?;
            }
        }
    }
    Ok(Exit::Success)
}
