//! `explain-placement`: every candidate one model's replicas passed over.

use super::{fleet_inventory, report_format};
use crate::cli::{self, OutputFormat};
use crate::diag::{Code, Diag};
use crate::exit::{Exit, Outcome};
use crate::load;
use crate::output::Sink;
use crate::placement::{self, Options};
use crate::report;
use crate::wording::Names;
use std::fmt::Write as _;

pub fn run(a: &cli::ExplainArgs) -> Outcome {
    let format = report_format("explain-placement", a.output.as_deref(), a.format)?;
    let mut out = Sink::open(a.output.as_deref())?;
    let catalog = load::catalog(&a.catalog)?;
    let Some(mi) = catalog.models.iter().position(|m| m.name == a.model) else {
        let mut d = Diag::error(Code::UnknownModel, format!("the catalog has no model `{}`", a.model));
        d.help = Some(crate::diag::suggest(&a.model, catalog.models.iter().map(|m| m.name.as_str()), "its models are"));
        return Err(d.into());
    };
    let model = &catalog.models[mi];
    if let Some(r) = a.replica
        && r >= model.replicas
    {
        let d = Diag::error(
            Code::UnknownReplica,
            format!("model `{}` has replicas 0..{}, not {r}", model.name, model.replicas),
        )
        .help(format!("the catalog asks for {} replica(s); pick an index below that", model.replicas));
        return Err(d.into());
    }
    let inv = fleet_inventory(&a.inventory)?;
    // A class or MIG profile the fleet lacks: said on stderr, as lint says
    // it; the plan and the exit code stay what placement decided.
    crate::report::diagnostics::eprint(&crate::catalog::hardware_checks(&catalog, &inv));
    let opts = Options { explain: Some(mi), explain_only: a.replica, pack: a.pack, ..Options::default() };
    let (plan, fleet) = placement::plan_with_fleet(&catalog, &inv, opts);
    let names = Names::new(&catalog, &fleet);
    // One replica asked about: the attempt whose run holds it, for it alone.
    let one: Option<placement::Attempt> = a.replica.and_then(|r| {
        let at = plan.attempts.iter().find(|at| (at.replica..=at.through).contains(&r))?;
        Some(placement::Attempt { replica: r, through: r, ..at.clone() })
    });
    let attempts: Vec<&placement::Attempt> = match (&one, a.replica) {
        (Some(at), _) => vec![at],
        (None, Some(_)) => Vec::new(),
        (None, None) => plan.attempts.iter().collect(),
    };
    match format {
        OutputFormat::Json => report::explain::json(&mut out, &names, mi as u32, &attempts)?,
        OutputFormat::Human => {
            out.fit_width();
            let mut text = report::explain::human(&names, &plan, mi as u32, &attempts, a.verbose);
            if let Some(r) = a.replica
                && attempts.is_empty()
            {
                let _ = write!(text, "\nreplica {r} already runs; there is nothing to decide for it\n");
            }
            out.human(&text)?;
        }
    }
    out.finish()?;
    let unplaced = attempts.iter().any(|at| at.placement.is_none());
    Ok(if unplaced { Exit::No } else { Exit::Success })
}
