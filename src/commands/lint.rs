//! `lint`: every problem of every catalog, for CI.

use std::io::Write;

use std::collections::BTreeSet;

use crate::cli::{self, LintFormat};
use crate::diag::Severity;
use crate::exit::{Exit, Outcome};
use crate::load;
use crate::output::{self, Sink};
use crate::report;
use crate::{doc, inventory};

pub fn run(a: &cli::LintArgs) -> Outcome {
    let format = {
        let name = a.format.map(|f| match f {
            LintFormat::Human => "human",
            LintFormat::Json => "json",
            LintFormat::Github => "github",
        });
        match (
            output::report_is_json(a.output.as_deref(), name, "lint writes human text, JSON or GitHub annotations")?,
            a.format,
        ) {
            (true, _) => LintFormat::Json,
            (false, Some(f)) => f,
            (false, None) => LintFormat::Human,
        }
    };
    let mut out = Sink::open(a.output.as_deref())?;
    // A fleet that cannot be read is unusable input, not a lint finding.
    let inv = if a.inventory.is_empty() { None } else { Some(load::inventories(&a.inventory)?) };
    let mut all = Vec::new();
    let mut inventories = Vec::new();
    let mut classes = BTreeSet::new();
    let mut catalogs = 0;
    for path in &a.files {
        let src = load::read(path)?;
        if doc::parse(src.text(), src.format()).is_ok_and(|root| inventory::lint::is_inventory(&root)) {
            inventories.push(src);
            continue;
        }
        catalogs += 1;
        let (cat, mut diags) = crate::catalog::check(&src);
        if let Some(cat) = &cat {
            classes.extend(cat.models.iter().flat_map(|m| m.profiles.iter().filter_map(|p| p.gpu_class.clone())));
            if let Some(inv) = &inv {
                diags.extend(crate::catalog::fleet_checks(cat, inv));
            }
            diags.extend(crate::fit::checks(cat, inv.as_ref()));
        }
        all.extend(diags);
    }
    // Which GPU classes are wanted is known once every catalog is read.
    let wanted = (catalogs > 0).then_some(&classes);
    for src in &inventories {
        all.extend(inventory::lint::lint(src, wanted));
    }
    match format {
        LintFormat::Json => report::lint::json(&mut out, &all)?,
        LintFormat::Github => out.write_all(report::lint::github(&all).as_bytes())?,
        LintFormat::Human => {
            let colour = out.is_stdout() && crate::term::colour_for_stderr();
            let noun = if inventories.is_empty() { "catalog" } else { "file" };
            let text = report::lint::human(&all, a.files.len(), noun, colour);
            if out.is_stdout() {
                std::io::stderr().write_all(text.as_bytes())?;
            } else {
                out.write_all(text.as_bytes())?;
            }
        }
    }
    out.finish()?;
    let failing = all.iter().any(|d| d.severity == Severity::Error || a.deny_warnings);
    Ok(if failing { Exit::No } else { Exit::Success })
}
