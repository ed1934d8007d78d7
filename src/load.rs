//! Reading input files into checked catalogs and inventories.

use std::path::Path;

use rayon::prelude::*;

use crate::catalog::{self, Catalog};
use crate::diag::{Diag, Source};
use crate::inventory::{self, Inventory};

pub use crate::input::read;

/// One inventory file: the fast serde path when it is sure of the file,
/// else the spanned path, which also says what is wrong.
pub fn inventory_file(src: &Source) -> Result<Vec<inventory::Node>, Vec<Diag>> {
    match inventory::load_fast(src) {
        Some(nodes) => Ok(nodes),
        None => spanned_inventory(src),
    }
}

/// The spanned loader; a file that is plainly something else (a
/// Kubernetes or Slurm listing, a catalog) says so and what to run.
fn spanned_inventory(src: &Source) -> Result<Vec<inventory::Node>, Vec<Diag>> {
    inventory::load_spanned(src)
        .map_err(|d| crate::kinds::wrong(src, &crate::kinds::Kind::Inventory).map_or(d, |w| vec![w]))
}

/// A catalog with no errors, or every error it has (one, saying what the
/// file is, when it is plainly no catalog).
pub fn catalog(path: &Path) -> Result<Catalog, Vec<Diag>> {
    let src = read(path).map_err(|d| vec![d])?;
    let (cat, diags) = catalog::check(&src);
    cat.ok_or_else(|| match crate::kinds::wrong(&src, &crate::kinds::Kind::Catalog) {
        Some(w) => vec![w],
        None => diags.into_iter().filter(Diag::is_error).collect(),
    })
}

/// Several inventory files, read in parallel (each exactly once) and merged;
/// every error of every file at once.
pub fn inventories(paths: &[impl AsRef<Path> + Sync]) -> Result<Inventory, Vec<Diag>> {
    inventories_with_digest(paths).map(|(inv, _)| inv)
}

/// The lower-case hex sha256 of sources' bytes, one after another.
pub fn digest(srcs: &[&Source]) -> String {
    use sha2::Digest;
    let mut d = sha2::Sha256::new();
    for s in srcs {
        s.digest_into(&mut d);
    }
    d.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// As `inventories`, with the sha256 of the files' bytes in the order given.
pub fn inventories_with_digest(paths: &[impl AsRef<Path> + Sync]) -> Result<(Inventory, String), Vec<Diag>> {
    let sources: Vec<Result<Source, Diag>> = paths.par_iter().map(|p| read(p.as_ref())).collect();
    let mut srcs = Vec::with_capacity(sources.len());
    let mut errors = Vec::new();
    for s in sources {
        match s {
            Ok(src) => srcs.push(src),
            Err(d) => errors.push(d),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    // The fast loader keeps no spans; a file it is not sure about, and any
    // failure to merge, goes through the spanned loader, on the same bytes.
    let fast: Vec<Result<Vec<inventory::Node>, Vec<Diag>>> = srcs.par_iter().map(inventory_file).collect();
    let digest = digest(&srcs.iter().collect::<Vec<_>>());
    if fast.iter().all(Result::is_ok) {
        let files = fast.into_iter().map(std::result::Result::unwrap_or_default).collect();
        if let Ok(inv) = inventory::merge(files) {
            return Ok((inv, digest));
        }
    }
    let spanned: Vec<Result<Vec<inventory::Node>, Vec<Diag>>> = srcs.par_iter().map(spanned_inventory).collect();
    let mut files = Vec::with_capacity(spanned.len());
    for r in spanned {
        match r {
            Ok(nodes) => files.push(nodes),
            Err(d) => errors.extend(d),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    inventory::merge(files).map(|inv| (inv, digest))
}
