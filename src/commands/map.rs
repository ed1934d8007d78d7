//! `map`: a plan drawn on the fleet it was made on, as one HTML page.

use std::io::Write as _;
use std::path::Path;

use crate::cli;
use crate::diag::{Code, Diag, Source};
use crate::exit::{Exit, Outcome};
use crate::inventory::Inventory;
use crate::load;
use crate::output::Sink;

pub fn run(a: &cli::MapArgs) -> Outcome {
    html_name(a.output.as_deref(), "map writes HTML")?;
    let src = load::read(&a.plan)?;
    let inv = load::inventories(&a.inventory)?;
    let title = a.plan.file_name().map_or_else(|| a.plan.display().to_string(), |n| n.to_string_lossy().into_owned());
    let page = page(&src, &inv, &title)?;
    let mut out = Sink::open(a.output.as_deref())?;
    out.write_all(page.as_bytes())?;
    out.finish()?;
    Ok(Exit::Success)
}

/// The page of the plan `src` holds on `inv`.
pub(super) fn page(src: &Source, inv: &Inventory, title: &str) -> Result<String, crate::exit::Failure> {
    let plan = crate::plan::read(src)?;
    let extras = crate::map::extras::read(src)?;
    Ok(crate::map::page(&crate::map::Input { plan: &plan, extras: &extras, inv, title })?)
}

/// `-o plan.json` on a command that writes a page: refused, as a file
/// named for one format and holding another would be.
pub(super) fn html_name(path: Option<&Path>, writes: &str) -> Result<(), Diag> {
    let Some(p) = path else { return Ok(()) };
    match crate::doc::Format::from_extension(&p.to_string_lossy()) {
        Some(f) => Err(Diag::error(
            Code::BadArgument,
            format!(
                "{writes}, not {}: cannot write {}",
                f.name().to_uppercase(),
                crate::term::escape(&p.display().to_string())
            ),
        )
        .help("name the page .html")),
        None => Ok(()),
    }
}

/// Whether `-o` names an HTML page.
pub(super) fn is_html_name(path: Option<&Path>) -> bool {
    path.and_then(Path::extension).is_some_and(|e| e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm"))
}
