//! `capacity`: the fewest nodes of a shape to add so that every replica
//! places (of one model, with `--model`), one answer per `--add` shape;
//! exit 1 when even `--max` fall short for a shape.

use super::{fleet_inventory, report_format};
use crate::cli::{self, OutputFormat};
use crate::exit::{Exit, Outcome};
use crate::load;
use crate::output::Sink;
use crate::report;

pub fn run(a: &cli::CapacityArgs) -> Outcome {
    let format = report_format("capacity", a.output.as_deref(), a.format)?;
    let adds = a.add.iter().map(|s| crate::capacity::parse_add(s)).collect::<Result<Vec<_>, _>>()?;
    let mut out = Sink::open(a.output.as_deref())?;
    let catalog = load::catalog(&a.catalog)?;
    let catalog = match &a.model {
        Some(m) => crate::capacity::alone::only(&catalog, m)?,
        None => catalog,
    };
    let inv = fleet_inventory(&a.inventory)?;
    let mut answers = Vec::with_capacity(adds.len());
    for add in &adds {
        let answer = crate::capacity::search_packed(&catalog, &inv, add, a.max, a.pack)?;
        if std::env::var_os("LLMGW_TIMINGS").is_some() {
            eprintln!("capacity: {} plans", answer.plans);
        }
        // Each model alone; one model (--model) is the answer itself.
        let models = if catalog.models.len() == 1 {
            vec![crate::capacity::alone::ModelAnswer {
                model: catalog.models[0].name.clone(),
                added: answer.added,
                wanted: answer.wanted,
                placed_without: answer.placed_without,
            }]
        } else {
            crate::capacity::alone::each(&catalog, &inv, add, a.max, a.pack)?
        };
        answers.push(report::capacity::ShapeAnswer { answer, models });
    }
    match format {
        OutputFormat::Json => report::capacity::json(&mut out, &answers)?,
        OutputFormat::Human => out.human(&report::capacity::human(&answers, a.max))?,
    }
    out.finish()?;
    Ok(if answers.iter().all(|x| x.answer.added.is_some()) { Exit::Success } else { Exit::No })
}
