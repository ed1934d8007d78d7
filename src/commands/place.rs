//! `place`: every replica of a catalog onto a fleet.

use super::{fleet_inventory_with_digest, report_format};
use crate::cli::{self, OutputFormat};
use crate::output::Sink;
use crate::placement::{self, Options};
use crate::report::{self, Names};
use crate::timings::Timings;
use crate::{Exit, Outcome, load};

pub fn run(a: &cli::PlaceArgs) -> Outcome {
    let format = report_format("place", a.output.as_deref(), a.format)?;
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
    match format {
        OutputFormat::Json => report::place::json(&mut out, &names, &plan, a.rejections, Some(&inputs))?,
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
