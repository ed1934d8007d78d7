//! What both renderers share: the plan read and resolved against the
//! catalog and inventory it was made from.

use crate::catalog::{Catalog, Model, Profile};
use crate::diag::{Code, Diag, Source};
use crate::inventory::Inventory;
use crate::plan::Entry as Placed;

/// The replicas a plan runs (`place --format json`, any rejection form).
pub fn read_plan(src: &Source) -> Result<Vec<Placed>, Vec<Diag>> {
    crate::plan::read(src).map(|p| p.entries)
}

/// Each placement of a plan with its model and profile from the catalog;
/// errors for what the catalog or the inventory lacks.
pub fn resolve<'a>(
    plan: &'a [Placed],
    cat: &'a Catalog,
    inv: &Inventory,
) -> Result<Vec<(&'a Placed, &'a Model, &'a Profile)>, Vec<Diag>> {
    let mut errors = Vec::new();
    let mut out = Vec::with_capacity(plan.len());
    for p in plan {
        let Some(model) = cat.models.iter().find(|m| m.name == p.model) else {
            errors.push(
                Diag::error(Code::UnknownModel, format!("the plan places `{}`, which the catalog has not", p.model))
                    .help("give the catalog the plan was made from"),
            );
            continue;
        };
        let wanted = p.profile.as_deref().unwrap_or_default();
        let Some(prof) = model.profiles.iter().find(|x| x.name == wanted) else {
            errors.push(
                Diag::error(
                    Code::UnknownModel,
                    format!("the plan uses profile `{wanted}` of `{}`, which the catalog has not", p.model),
                )
                .help("give the catalog the plan was made from"),
            );
            continue;
        };
        if p.nodes.is_empty() {
            errors.push(
                Diag::error(
                    Code::MissingField,
                    format!("the plan places `{}` replica {} on no node", p.model, p.replica),
                )
                .help("give the JSON that `llmgw place --format json` prints"),
            );
            continue;
        }
        if let Some(at) = p.nodes.iter().find(|a| !inv.nodes.iter().any(|n| n.id == a.node)) {
            errors.push(
                Diag::error(
                    Code::UnknownModel,
                    format!("the plan places `{}` on `{}`, which the inventory has not", p.model, at.node),
                )
                .help("give the inventory the plan was made on"),
            );
            continue;
        }
        out.push((p, model, prof));
    }
    if errors.is_empty() { Ok(out) } else { Err(errors) }
}
