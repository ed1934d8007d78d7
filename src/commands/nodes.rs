//! `nodes`: one row per node of the fleet.

use super::{fleet_inventory, report_format};
use crate::cli::{self, OutputFormat};
use crate::diag::{Code, Diag};
use crate::output::Sink;
use crate::placement::Fleet;
use crate::report;
use crate::{Exit, Outcome};

pub fn run(a: &cli::NodesArgs) -> Outcome {
    let format = report_format("nodes", a.output.as_deref(), a.format)?;
    let mut out = Sink::open(a.output.as_deref())?;
    let selector = selector(&a.selector)?;
    let inv = fleet_inventory(&a.inventory)?;
    let fleet = Fleet::new(&inv);
    match format {
        OutputFormat::Json => report::nodes::json(&mut out, &fleet, &selector)?,
        OutputFormat::Human => {
            out.fit_width();
            let text = report::nodes::human(&fleet, &selector);
            out.human(&text)?
        }
    }
    out.finish()?;
    Ok(Exit::Success)
}

/// `--selector zone=a`: the pairs a node must carry.
fn selector(given: &[String]) -> Result<Vec<(String, String)>, Diag> {
    given
        .iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => Err(Diag::error(Code::BadArgument, format!("--selector `{s}` is not KEY=VALUE"))
                .help("write the label as a node's `labels` has it, e.g. --selector zone=a")),
        })
        .collect()
}
