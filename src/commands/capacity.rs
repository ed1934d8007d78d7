//! `capacity`: the fewest nodes of a shape to add so that every replica
//! places; exit 1 when even `--max` fall short.

use super::{fleet_inventory, report_format};
use crate::cli::{self, OutputFormat};
use crate::output::Sink;
use crate::report;
use crate::{Exit, Outcome, load};

pub fn run(a: &cli::CapacityArgs) -> Outcome {
    let format = report_format("capacity", a.output.as_deref(), a.format)?;
    let add = crate::capacity::parse_add(&a.add)?;
    let mut out = Sink::open(a.output.as_deref())?;
    let catalog = load::catalog(&a.catalog)?;
    let inv = fleet_inventory(&a.inventory)?;
    let answer = crate::capacity::search_packed(&catalog, &inv, &add, a.max, a.pack)?;
    if std::env::var_os("LLMGW_TIMINGS").is_some() {
        eprintln!("capacity: {} plans", answer.plans);
    }
    match format {
        OutputFormat::Json => report::capacity::json(&mut out, &answer)?,
        OutputFormat::Human => out.human(&report::capacity::human(&answer, a.max))?,
    }
    out.finish()?;
    Ok(if answer.added.is_some() { Exit::Success } else { Exit::No })
}
