//! `capacity` output: a sentence per shape, or per shape `{"shape",
//! "fabric", "added", "wanted", "placed_without", "placed_with", "models"}`
//! (one object for one `--add`, an array of them for several).

use std::fmt::Write as _;

use serde::Serialize;

use crate::capacity::Answer;
use crate::capacity::alone::ModelAnswer;

/// One shape's answer, and each model's alone.
#[derive(Serialize)]
pub struct ShapeAnswer {
    #[serde(flatten)]
    pub answer: Answer,
    pub models: Vec<ModelAnswer>,
}

pub fn json<W: std::io::Write>(out: W, answers: &[ShapeAnswer]) -> std::io::Result<()> {
    match answers {
        [one] => crate::json::write_json(out, one),
        many => crate::json::write_json(out, &many),
    }
}

pub fn human(answers: &[ShapeAnswer], max: u32) -> String {
    let mut text = String::new();
    for s in answers {
        let a = &s.answer;
        text.push_str(&sentence(a, max));
        for l in &a.left {
            let which = match l.through {
                Some(t) => format!("replicas {}-{t}", l.replica),
                None => format!("replica {}", l.replica),
            };
            let _ = writeln!(text, "  {} {which}: {}", l.model, l.reason);
        }
    }
    text
}

fn sentence(a: &Answer, max: u32) -> String {
    let on = a.fabric.as_deref().map(|f| format!(" on {f}")).unwrap_or_default();
    if a.useless {
        return format!(
            "no {} node{on} could hold any profile of the {} unplaced replicas, so adding them cannot help: {}/{} replicas placed\n",
            a.shape,
            a.wanted - a.placed_without,
            a.placed_without,
            a.wanted
        );
    }
    match a.added {
        Some(0) => format!("nothing to add: {}/{} replicas placed already\n", a.placed_without, a.wanted),
        Some(n) => format!(
            "add {n} x {}{on}: {}/{} replicas placed ({} without)\n",
            a.shape, a.placed_with, a.wanted, a.placed_without
        ),
        None => format!(
            "even {max} x {}{on} leave {} of {} replicas unplaced ({} placed without)\n",
            a.shape,
            a.wanted - a.placed_with,
            a.wanted,
            a.placed_without
        ),
    }
}
