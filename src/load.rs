//! Reading input files into checked catalogs and inventories.

use std::path::Path;

use rayon::prelude::*;

use crate::catalog::{self, Catalog};
use crate::diag::{Code, Diag, Source, source};
use crate::inventory::{self, Inventory};

pub fn read(path: &Path) -> Result<Source, Diag> {
    let name = path.display().to_string();
    match std::fs::read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => Ok(source(&name, text)),
            Err(e) => {
                let at = e.utf8_error().valid_up_to();
                let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
                let src = source(&name, text);
                Err(Diag::error(Code::Syntax, format!("{name} is not UTF-8 text"))
                    .at(&src, crate::doc::Span::new(at, at + 1), "invalid byte here")
                    .help("catalogs and inventories are UTF-8 TOML, YAML or JSON"))
            }
        },
        Err(e) => {
            Err(Diag::error(Code::Io, format!("cannot read {name}: {e}")).help("check the path and its permissions"))
        }
    }
}

/// A catalog with no errors, or every error it has.
pub fn catalog(path: &Path) -> Result<Catalog, Vec<Diag>> {
    let src = read(path).map_err(|d| vec![d])?;
    let (cat, diags) = catalog::check(&src);
    cat.ok_or_else(|| diags.into_iter().filter(Diag::is_error).collect())
}

/// Several inventory files, read in parallel and merged; every error of
/// every file at once.
pub fn inventories(paths: &[impl AsRef<Path> + Sync]) -> Result<Inventory, Vec<Diag>> {
    read_all(paths, inventory::load).or_else(|_| {
        // Something is wrong. The fast loader keeps no spans, so the files
        // are read again on the spanned path for diagnostics that point.
        read_all(paths, inventory::load_spanned)
    })
}

fn read_all(
    paths: &[impl AsRef<Path> + Sync],
    load: fn(&Source) -> Result<Vec<inventory::Node>, Vec<Diag>>,
) -> Result<Inventory, Vec<Diag>> {
    let results: Vec<Result<Vec<inventory::Node>, Vec<Diag>>> = paths
        .par_iter()
        .map(|p| {
            let src = read(p.as_ref()).map_err(|d| vec![d])?;
            load(&src)
        })
        .collect();
    let mut files = Vec::with_capacity(results.len());
    let mut errors = Vec::new();
    for r in results {
        match r {
            Ok(nodes) => files.push(nodes),
            Err(d) => errors.extend(d),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    inventory::merge(files)
}
