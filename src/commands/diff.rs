//! `diff`: what changed between two plans; exit 1 when a placement differs,
//! as diff(1) does.

use super::report_format;
use crate::cli::{self, OutputFormat};
use crate::exit::{Exit, Outcome};
use crate::load;
use crate::output::Sink;
use crate::report;

pub fn run(a: &cli::DiffArgs) -> Outcome {
    let format = report_format("diff", a.output.as_deref(), a.format)?;
    let mut out = Sink::open(a.output.as_deref())?;
    let (old, new) = (load::read(&a.old)?, load::read(&a.new)?);
    let mut errors = Vec::new();
    let old = crate::plan::read(&old).map_err(|d| errors.extend(d));
    let new = crate::plan::read(&new).map_err(|d| errors.extend(d));
    let (Ok(old), Ok(new)) = (old, new) else {
        return Err(errors.into());
    };
    let d = crate::diff::compare(&crate::diff::of(&old), &crate::diff::of(&new));
    match format {
        OutputFormat::Json => report::diff::json(&mut out, &d)?,
        OutputFormat::Human => {
            out.fit_width();
            out.human(&report::diff::human(&d))?;
        }
    }
    out.finish()?;
    Ok(if d.differs() { Exit::No } else { Exit::Success })
}
