//! "How many nodes would place the 405B alone?": the capacity answer for
//! one model of the catalog, the others left out, as if the fleet were
//! bought for it. A model the whole catalog's plan already places needs
//! none: alone, it has the fleet to itself.

use serde::Serialize;

use super::Add;
use crate::catalog::Catalog;
use crate::diag::{Code, Diag, suggest};
use crate::inventory::Inventory;
use crate::placement::{self, Decision, Options};

/// One model's answer: the fewest nodes of the shape that place all of
/// its replicas with no other model of the catalog placed.
#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct ModelAnswer {
    pub model: String,
    /// `None` when even `--max` nodes fall short.
    pub added: Option<u32>,
    pub wanted: u64,
    /// Its replicas running or placed, alone, without added nodes.
    pub placed_without: u64,
}

/// The catalog with only the model named, or the error naming the models
/// it has.
pub fn only(cat: &Catalog, model: &str) -> Result<Catalog, Diag> {
    let Some(m) = cat.models.iter().find(|m| m.name == model) else {
        let mut d = Diag::error(Code::UnknownModel, format!("the catalog has no model `{model}`"));
        d.help = Some(suggest(model, cat.models.iter().map(|m| m.name.as_str()), "its models are"));
        return Err(d);
    };
    Ok(Catalog { src: cat.src.clone(), models: vec![m.clone()] })
}

/// Each model's answer, in catalog order.
pub fn each(
    cat: &Catalog,
    inv: &Inventory,
    add: &Add,
    max: u32,
    pack: placement::Pack,
) -> Result<Vec<ModelAnswer>, Diag> {
    let plan = placement::plan(cat, inv, Options { pack, measure: false, ..Options::default() });
    let mut short = vec![false; cat.models.len()];
    for d in &plan.decisions {
        if let Decision::Unplaced { model, .. } = d {
            short[*model as usize] = true;
        }
    }
    let mut out = Vec::with_capacity(cat.models.len());
    for (m, model) in cat.models.iter().enumerate() {
        let wanted = u64::from(model.replicas);
        if !short[m] {
            out.push(ModelAnswer { model: model.name.clone(), added: Some(0), wanted, placed_without: wanted });
            continue;
        }
        let one = Catalog { src: cat.src.clone(), models: vec![model.clone()] };
        let a = super::search_packed(&one, inv, add, max, pack)?;
        out.push(ModelAnswer { model: model.name.clone(), added: a.added, wanted, placed_without: a.placed_without });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::search;
    use crate::diag::source;

    #[test]
    fn each_model_alone_gets_its_own_count() {
        // Two free DGX nodes. Together: `small` takes one GPU of the
        // first, a r0 the second, and a r1-3 and b r0-1 need five more
        // nodes. Alone, a has both nodes (two more to add) and b fits.
        let tp8 =
            "[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\n";
        let text = format!(
            "[[model]]\nname = \"small\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n\
             [[model]]\nname = \"a\"\nreplicas = 4\n{tp8}[[model]]\nname = \"b\"\nreplicas = 2\n{tp8}"
        );
        let cat = crate::catalog::check(&source("c.toml", text)).0.unwrap();
        let groups = [crate::synth::Group {
            shape: &crate::synth::SHAPES[0],
            count: 2,
            fabric: None,
            labels: Default::default(),
        }];
        let inv = crate::synth::synthesize(&groups, 0.0, 0.0, 1, "gpu");
        let add = super::super::parse_add("dgx-h100").unwrap();
        let all = search(&cat, &inv, &add, 64).unwrap();
        assert_eq!(all.added, Some(5));
        let each = each(&cat, &inv, &add, 64, placement::Pack::Order).unwrap();
        let got: Vec<(&str, Option<u32>, u64)> =
            each.iter().map(|a| (a.model.as_str(), a.added, a.placed_without)).collect();
        assert_eq!(got, [("small", Some(0), 1), ("a", Some(2), 2), ("b", Some(0), 2)]);
        assert_eq!(search(&only(&cat, "a").unwrap(), &inv, &add, 64).unwrap().added, Some(2));
        assert!(only(&cat, "d").is_err());
    }
}
