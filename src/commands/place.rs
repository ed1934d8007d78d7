//! `place`: every replica of a catalog onto a fleet.

use std::io::Write as _;

use super::{fleet_inventory_with_digest, report_format};
use crate::cli::{self, OutputFormat, PlaceFormat};
use crate::exit::{Exit, Outcome};
use crate::load;
use crate::output::Sink;
use crate::placement::{self, Options};
use crate::report;
use crate::timings::Timings;
use crate::wording::Names;

/// What `place` writes: the plan as JSON, the table, or the map.
fn format(a: &cli::PlaceArgs) -> Result<PlaceFormat, crate::diag::Diag> {
    let path = a.output.as_deref();
    if a.format == Some(PlaceFormat::Html) || (a.format.is_none() && super::map::is_html_name(path)) {
        super::map::html_name(path, "place --format html writes HTML")?;
        return Ok(PlaceFormat::Html);
    }
    let flag = a.format.map(|f| if f == PlaceFormat::Json { OutputFormat::Json } else { OutputFormat::Human });
    Ok(match report_format("place", path, flag)? {
        OutputFormat::Json => PlaceFormat::Json,
        OutputFormat::Human => PlaceFormat::Human,
    })
}

pub fn run(a: &cli::PlaceArgs) -> Outcome {
    let format = format(a)?;
    let mut out = Sink::open(a.output.as_deref())?;
    let mut t = Timings::start();
    let catalog = load::catalog(&a.catalog)?;
    t.lap("parse catalog");
    let (inv, inventory_digest) = fleet_inventory_with_digest(&a.inventory)?;
    t.lap("parse inventory");
    let inputs = crate::plan::Inputs { catalog: load::digest(&[&catalog.src]), inventory: inventory_digest };
    // A class or MIG profile the fleet lacks: said on stderr, as lint says
    // it; the plan and the exit code stay what placement decided.
    crate::report::diagnostics::eprint(&crate::catalog::hardware_checks(&catalog, &inv));
    let (plan, fleet) = placement::plan_with_fleet(&catalog, &inv, Options { pack: a.pack, ..Options::default() });
    t.lap("placement");
    let names = Names::new(&catalog, &fleet);
    // GPUs per class after the plan: the table ends with them, and a plan
    // written to a file says them on stderr, with the counts.
    let classes = crate::usage::after_plan(&catalog, &inv, &plan);
    let stranded = crate::usage::stranded(&plan);
    let class_lines = crate::usage::after_plan_lines(&classes, stranded.as_ref()).join("\n");
    match format {
        PlaceFormat::Json => crate::plan::write::json(&mut out, &names, &plan, a.rejections, Some(&inputs))?,
        PlaceFormat::Html => {
            // Drawn from the plan as `place --format json` writes it and
            // `map` reads it: one path from a plan to its map.
            let mut json = Vec::new();
            crate::plan::write::json(&mut json, &names, &plan, crate::plan::write::Rejections::Grouped, Some(&inputs))?;
            let src = crate::diag::source("plan.json", String::from_utf8_lossy(&json).into_owned());
            let title = format!("plan of {}", a.catalog.display());
            out.write_all(super::map::page(&src, &inv, &title)?.as_bytes())?;
        }
        PlaceFormat::Human => {
            out.fit_width();
            let mut text = report::place::human(&names, &plan);
            if !class_lines.is_empty() {
                text.push_str(&class_lines);
                text.push('\n');
            }
            out.human(&text)?
        }
    }
    let to_file = !out.is_stdout();
    out.finish()?;
    if to_file && format != PlaceFormat::Human {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{}", report::place::summary_line(&plan));
        let _ = writeln!(err, "{}", report::place::outcome_line(&plan.summary));
        for line in class_lines.lines() {
            let _ = writeln!(err, "{}", crate::term::escape(line));
        }
    }
    t.lap("output");
    t.report();
    Ok(if plan.summary.unplaced > 0 { Exit::No } else { Exit::Success })
}
