//! What the map needs of a plan beyond the replicas it runs (`plan::read`
//! has those, checked): why each unplaced run was left out, its closest
//! misses, and the summary. Read with serde, skipping the rest; a plan of
//! 10,000 nodes names every node in every reason, so only the first few
//! node ids of each reason are kept, and the count.

use std::collections::BTreeMap;

use serde::Deserialize;

/// How many node ids of a reason the map names ("a, b, c, d, e and 312 more").
pub const SHOWN: usize = 5;

#[derive(Deserialize, Default)]
pub struct Extras {
    #[serde(default)]
    pub unplaced: Vec<Run>,
    #[serde(default)]
    pub summary: Option<Summary>,
}

/// A run of unplaced replicas of one model, as the plan has it.
#[derive(Deserialize)]
pub struct Run {
    pub model: String,
    pub replica: u32,
    #[serde(default)]
    pub through: Option<u32>,
    /// The grouped form (`--rejections grouped`, the default).
    #[serde(default)]
    pub reasons: Option<Vec<Group>>,
    /// The full form: grouped here, as the grouped form would have it.
    #[serde(default)]
    pub rejections: Option<Vec<Rejection>>,
    #[serde(default)]
    pub closest: Vec<Closest>,
}

#[derive(Deserialize, Clone, Debug, PartialEq)]
pub struct Group {
    pub profile: String,
    pub pool: String,
    pub reason: String,
    pub count: u64,
    pub nodes: Capped,
}

#[derive(Deserialize)]
pub struct Rejection {
    pub profile: String,
    pub pool: String,
    #[serde(default)]
    pub node: String,
    pub reason: String,
}

#[derive(Deserialize)]
pub struct Closest {
    pub profile: String,
    pub pool: String,
    #[serde(default)]
    pub qualify: u64,
    #[serde(default)]
    pub needs: u64,
    #[serde(default)]
    pub nearest: Vec<Near>,
}

#[derive(Deserialize)]
pub struct Near {
    pub node: String,
    pub free: u64,
    pub needs: u64,
    #[serde(default)]
    pub taken_in_plan: Vec<Taken>,
}

#[derive(Deserialize)]
pub struct Taken {
    pub model: String,
    pub replica: u32,
    #[serde(default)]
    pub gpus: Vec<u32>,
}

#[derive(Deserialize, Default)]
pub struct Summary {
    #[serde(default)]
    pub wanted: u64,
    #[serde(default)]
    pub existing: u64,
    #[serde(default)]
    pub placed: u64,
    #[serde(default)]
    pub unplaced: u64,
    /// Free GPUs per class that no unplaced replica can use (docs/placement.md,
    /// "Stranded GPUs"), in plans that carry it.
    #[serde(default)]
    pub stranded: Option<BTreeMap<String, u64>>,
}

/// The first `SHOWN` ids of a list, and how many it had.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Capped {
    pub first: Vec<String>,
    pub total: u64,
}

impl Capped {
    fn push(&mut self, id: &str) {
        if self.first.len() < SHOWN {
            self.first.push(id.to_string());
        }
        self.total += 1;
    }
}

impl<'de> Deserialize<'de> for Capped {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Capped, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Capped;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of node ids")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Capped, A::Error> {
                let mut c = Capped::default();
                while c.first.len() < SHOWN {
                    match seq.next_element::<String>()? {
                        Some(id) => c.push(&id),
                        None => return Ok(c),
                    }
                }
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                    c.total += 1;
                }
                Ok(c)
            }
        }
        d.deserialize_seq(V)
    }
}

/// Reads the extras of a plan `plan::read` has accepted; a plan whose
/// reasons are not what `place` writes is unusable input.
pub fn read(src: &crate::diag::Source) -> Result<Extras, crate::diag::Diag> {
    serde_json::from_str(src.text()).map_err(|e| {
        crate::diag::Diag::error(
            crate::diag::Code::WrongType,
            format!("the unplaced replicas of {} cannot be read: {e}", src.name()),
        )
        .help("give the JSON that `llmgw place --format json` prints (any --rejections form)")
    })
}

impl Run {
    /// The reasons grouped as `place --format json` groups them: per
    /// profile and pool in the order tried, one entry per reason, most
    /// nodes first, ties by first occurrence.
    pub fn groups(&self) -> Vec<Group> {
        if let Some(g) = &self.reasons {
            return g.clone();
        }
        let Some(all) = &self.rejections else { return Vec::new() };
        let mut pools: Vec<((&str, &str), Vec<Group>)> = Vec::new();
        for r in all {
            let key = (r.profile.as_str(), r.pool.as_str());
            let i = match pools.iter().position(|(k, _)| *k == key) {
                Some(i) => i,
                None => {
                    pools.push((key, Vec::new()));
                    pools.len() - 1
                }
            };
            let groups = &mut pools[i].1;
            let g = match groups.iter_mut().position(|g| g.reason == r.reason) {
                Some(j) => &mut groups[j],
                None => {
                    groups.push(Group {
                        profile: r.profile.clone(),
                        pool: r.pool.clone(),
                        reason: r.reason.clone(),
                        count: 0,
                        nodes: Capped::default(),
                    });
                    groups.last_mut().expect("just pushed")
                }
            };
            g.count += 1;
            if !r.node.is_empty() {
                g.nodes.push(&r.node);
            }
        }
        let mut out = Vec::new();
        for (_, mut groups) in pools {
            groups.sort_by_key(|g| std::cmp::Reverse(g.count));
            out.extend(groups);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_full_form_groups_as_the_grouped_form_does() {
        let rej = |node: &str, reason: &str| Rejection {
            profile: "p".into(),
            pool: "none/h100".into(),
            node: node.into(),
            reason: reason.into(),
        };
        let run = Run {
            model: "m".into(),
            replica: 0,
            through: None,
            reasons: None,
            rejections: Some(vec![rej("a", "x"), rej("b", "y"), rej("c", "y"), rej("d", "z")]),
            closest: Vec::new(),
        };
        let g = run.groups();
        let got: Vec<(&str, u64, Vec<String>)> =
            g.iter().map(|g| (g.reason.as_str(), g.count, g.nodes.first.clone())).collect();
        assert_eq!(
            got,
            [("y", 2, vec!["b".to_string(), "c".into()]), ("x", 1, vec!["a".into()]), ("z", 1, vec!["d".into()])]
        );
    }

    #[test]
    fn a_long_node_list_keeps_its_first_ids_and_its_count() {
        let ids: Vec<String> = (0..1000).map(|i| format!("n{i}")).collect();
        let c: Capped = serde_json::from_str(&serde_json::to_string(&ids).unwrap()).unwrap();
        assert_eq!((c.first.len(), c.total, c.first[4].as_str()), (SHOWN, 1000, "n4"));
    }
}
