//! `engine-check`: the one command that runs engines, for an operator who
//! means to.

use std::time::Duration;

use rayon::prelude::*;

use crate::cli::{EngineCheckArgs, OutputFormat};
use crate::diag::{Code, Diag, suggest};
use crate::engine_check::{Check, check};
use crate::engines::{self, Engine};
use crate::exit::{Exit, Outcome};
use crate::output::Sink;
use crate::report;

pub fn run(a: &EngineCheckArgs) -> Outcome {
    let mut selected: Vec<&'static Engine> = Vec::new();
    let mut bad = Vec::new();
    for name in &a.engines {
        match engines::find(name) {
            Some(e) => {
                if !selected.iter().any(|s| s.name == e.name) {
                    selected.push(e)
                }
            }
            None => {
                let mut d = Diag::error(Code::UnknownEngine, format!("unknown engine `{name}`"));
                d.help = Some(suggest(name, engines::names(), "known engines"));
                bad.push(d);
            }
        }
    }
    if !bad.is_empty() {
        return Err(bad.into());
    }
    if !(a.timeout.is_finite() && a.timeout > 0.0) {
        return Err(Diag::error(
            Code::BadArgument,
            format!("--timeout must be a positive number of seconds, not {}", a.timeout),
        )
        .into());
    }
    let format = super::report_format("engine-check", a.output.as_deref(), a.format)?;
    let mut out = Sink::open(a.output.as_deref())?;
    let named = !selected.is_empty();
    if !named {
        selected = engines::ENGINES.iter().collect();
    }
    let path_env = std::env::var_os("PATH");
    if let Some(w) = engines::SearchPath::new(path_env.as_deref()).warning() {
        report::diagnostics::eprint(&[w]);
    }
    let timeout = Duration::from_secs_f64(a.timeout.min(3600.0));
    // In parallel, so six hung wrappers cost one timeout, not six.
    let checks: Vec<Check> = selected.par_iter().map(|e| check(e, path_env.as_deref(), timeout)).collect();
    match format {
        OutputFormat::Json => report::engine_check::json(&mut out, &checks)?,
        OutputFormat::Human => {
            out.fit_width();
            out.human(&report::engine_check::human(&checks))?;
        }
    }
    out.finish()?;
    // A named engine must be there and answer; of the engines looked for
    // unasked, those found must answer.
    let failing = checks.iter().any(|c| if named { c.status != "ok" } else { c.found && c.status != "ok" });
    Ok(if failing { Exit::No } else { Exit::Success })
}
