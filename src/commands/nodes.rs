//! `nodes`: one row per node of the fleet.

use super::{fleet_inventory, report_format};
use crate::cli::{self, OutputFormat};
use crate::output::Sink;
use crate::placement::Fleet;
use crate::report;
use crate::{Exit, Outcome};

pub fn run(a: &cli::NodesArgs) -> Outcome {
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
