//! `nodes`: one row per node of the fleet.

use super::{fleet_inventory, report_format};
use crate::cli::{self, OutputFormat};
use crate::diag::{Code, Diag};
use crate::exit::{Exit, Outcome};
use crate::output::Sink;
use crate::placement::Fleet;
use crate::report;

pub fn run(a: &cli::NodesArgs) -> Outcome {
    let format = report_format("nodes", a.output.as_deref(), a.format)?;
    let mut out = Sink::open(a.output.as_deref())?;
    let selector = selector(&a.selector)?;
    let inv = fleet_inventory(&a.inventory)?;
    let fleet = Fleet::new(&inv);
    let settings = report::nodes::Settings { selector: &selector, wide: a.wide };
    match format {
        OutputFormat::Json => report::nodes::json(&mut out, &fleet, &settings)?,
        OutputFormat::Human => {
            out.fit_width();
            let text = report::nodes::human(&fleet, &settings);
            out.human(&text)?
        }
    }
    out.finish()?;
    Ok(Exit::Success)
}

/// `--selector zone=a,role=cpu` (kubectl's form: every pair must hold),
/// given once or more.
fn selector(given: &[String]) -> Result<Vec<(String, String)>, Diag> {
    let mut pairs = Vec::new();
    for s in given {
        for part in s.split(',') {
            let pair = part.split_once("==").or_else(|| part.split_once('='));
            match pair {
                Some((k, v)) if !k.is_empty() && !k.ends_with('!') => pairs.push((k.to_string(), v.to_string())),
                _ => {
                    return Err(Diag::error(
                        Code::BadArgument,
                        format!("--selector `{}`: `{}` is not KEY=VALUE", crate::term::escape(s), crate::term::escape(part)),
                    )
                    .help("write the labels as a node's `labels` has them, e.g. --selector zone=a,role=cpu (every pair must hold)"));
                }
            }
        }
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_selector_is_pairs_that_must_all_hold() {
        let got = super::selector(&["zone=a,role=cpu".into(), "rack==r1".into()]).unwrap();
        let want: Vec<(String, String)> = [("zone", "a"), ("role", "cpu"), ("rack", "r1")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(got, want);
        for bad in ["zone", "zone=a,", "zone!=a", "=a", "zone in (a,b)"] {
            assert!(super::selector(&[bad.into()]).is_err(), "{bad}");
        }
    }
}
