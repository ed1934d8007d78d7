//! `explain-placement --format json`, written by hand around its biggest
//! part. Explaining a model of 1,500 replicas on 10,000 nodes lists five
//! million rejections; through serde each cost its four keys and three
//! texts escaped again, and the command ran thirteen times as long as
//! `place`. Here each distinct (profile, pool, reason) of an attempt is
//! laid out once, escaped and indented, and a rejection is three copies:
//! its kind's head, its node's id (escaped once for the run), its kind's
//! tail. The rest (placement, grouped reasons) goes through serde, nested
//! at its depth. The bytes are those `write_json` gives the same document
//! (`tests` below hold the two to it).

use std::io::Write;

use crate::placement::{Attempt, Rejections};
use crate::wording::Names;

/// Spaces for a depth (two per level) as deep as this document goes.
const SPACES: &str = "                    ";

fn indent(depth: usize) -> &'static str {
    &SPACES[..2 * depth]
}

fn string(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

pub fn write<W: Write>(out: W, names: &Names<'_>, model: u32, attempts: &[&Attempt]) -> std::io::Result<()> {
    let mut w = std::io::BufWriter::with_capacity(1 << 16, out);
    write!(w, "{{\n{}\"model\": {},\n{}\"replicas\": [", indent(1), string(&names.model(model).name), indent(1))?;
    for (i, a) in attempts.iter().enumerate() {
        w.write_all(if i == 0 { b"\n" } else { b",\n" })?;
        write!(w, "{}{{\n{}\"replica\": {}", indent(2), indent(3), a.replica)?;
        if a.through > a.replica {
            write!(w, ",\n{}\"through\": {}", indent(3), a.through)?;
        }
        write!(w, ",\n{}\"placement\": ", indent(3))?;
        crate::json::write_json_at(&mut w, &a.placement.as_ref().map(|p| names.placement_json(p)), 3)?;
        write!(w, ",\n{}\"rejections\": ", indent(3))?;
        rejections(&mut w, names, model, &a.rejections)?;
        write!(w, ",\n{}\"reasons\": ", indent(3))?;
        crate::json::write_json_at(&mut w, &crate::plan::reasons::grouped_of(names, model, &a.rejections), 3)?;
        write!(w, "\n{}}}", indent(2))?;
    }
    if !attempts.is_empty() {
        write!(w, "\n{}", indent(1))?;
    }
    w.write_all(b"]\n}\n")?;
    w.flush()
}

/// The rejections array, its elements at depth 4.
fn rejections<W: Write>(w: &mut W, names: &Names<'_>, model: u32, list: &Rejections) -> std::io::Result<()> {
    if list.is_empty() {
        return w.write_all(b"[]");
    }
    let (field, close) = (indent(5), indent(4));
    // Per kind: everything before the node's id, and everything after.
    let parts: Vec<(String, String)> = list
        .kinds()
        .iter()
        .map(|&(profile, pool, reason)| {
            let prof = names.profile(model, profile);
            (
                format!(
                    "{{\n{field}\"profile\": {},\n{field}\"pool\": {},\n{field}\"node\": ",
                    string(&prof.name),
                    string(&names.pool(pool, prof))
                ),
                format!(",\n{field}\"reason\": {}\n{close}}}", string(&names.reason(reason, prof))),
            )
        })
        .collect();
    let first = format!("[\n{close}");
    let next = format!(",\n{close}");
    for (i, (node, k)) in list.entries().enumerate() {
        w.write_all(if i == 0 { first.as_bytes() } else { next.as_bytes() })?;
        let (head, tail) = &parts[k];
        w.write_all(head.as_bytes())?;
        match node {
            Some(n) => w.write_all(names.node_json(n).get().as_bytes())?,
            None => w.write_all(b"\"\"")?,
        }
        w.write_all(tail.as_bytes())?;
    }
    write!(w, "\n{}]", indent(3))
}

#[cfg(test)]
mod tests {
    use crate::diag::source;
    use crate::placement::{Options, plan_with_fleet};
    use crate::wording::Names;

    /// The document as serde would write it from plain values.
    fn by_serde(names: &Names<'_>, model: u32, attempts: &[&crate::placement::Attempt]) -> String {
        let replicas: Vec<serde_json::Value> = attempts
            .iter()
            .map(|a| {
                let mut v = serde_json::Map::new();
                v.insert("replica".into(), a.replica.into());
                if a.through > a.replica {
                    v.insert("through".into(), a.through.into());
                }
                let p = a.placement.as_ref().map(|p| names.placement_json(p));
                v.insert("placement".into(), serde_json::to_value(p).unwrap());
                let rej: Vec<_> = a.rejections.iter().map(|r| names.rejection_json(model, &r)).collect();
                v.insert("rejections".into(), serde_json::to_value(rej).unwrap());
                let reasons = crate::plan::reasons::grouped(names, model, &a.rejections.to_vec());
                v.insert("reasons".into(), serde_json::to_value(reasons).unwrap());
                serde_json::Value::Object(v)
            })
            .collect();
        let doc = serde_json::json!({"model": names.model(model).name, "replicas": replicas});
        let mut out = Vec::new();
        crate::json::write_json(&mut out, &doc).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_same_bytes_as_serde() {
        let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let cat = crate::load::catalog(&repo.join("catalog/fleet.toml")).unwrap();
        let inv = crate::load::inventories(&[repo.join("examples/fleet.toml")]).unwrap();
        for mi in 0..cat.models.len() {
            let (plan, fleet) = plan_with_fleet(&cat, &inv, Options { explain: Some(mi), ..Options::default() });
            let names = Names::new(&cat, &fleet);
            let attempts: Vec<_> = plan.attempts.iter().collect();
            for some in [&attempts[..], &attempts[..attempts.len().min(1)], &[]] {
                let mut ours = Vec::new();
                super::write(&mut ours, &names, mi as u32, some).unwrap();
                assert_eq!(String::from_utf8(ours).unwrap(), by_serde(&names, mi as u32, some), "model {mi}");
            }
        }
        // A node id that needs escaping, and a rejection of no node.
        let text = "[[node]]\nid = \"a\\\"b\"\nstate = \"cordoned\"\n[[node.fabric]]\nname = \"f\"\n";
        let inv =
            crate::inventory::Inventory { nodes: crate::load::inventory_file(&source("i.toml", text.into())).unwrap() };
        let cat = "[[model]]\nname = \"m\\\"\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100\"\nnodes = 2\n";
        let cat = crate::catalog::check(&source("c.toml", cat.into())).0.unwrap();
        let (plan, fleet) = plan_with_fleet(&cat, &inv, Options { explain: Some(0), ..Options::default() });
        let names = Names::new(&cat, &fleet);
        let attempts: Vec<_> = plan.attempts.iter().collect();
        let mut ours = Vec::new();
        super::write(&mut ours, &names, 0, &attempts).unwrap();
        assert_eq!(String::from_utf8(ours).unwrap(), by_serde(&names, 0, &attempts));
    }
}
