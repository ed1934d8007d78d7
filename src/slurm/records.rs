//! The nodes of a Slurm controller as its commands print them: the JSON of
//! `sinfo --json` / `scontrol show nodes --json` (Slurm 22.05's OpenAPI
//! v0.0.38 and the later data_parser versions), or the text of
//! `scontrol [-d] show node -o`, one node a line. Each becomes a `Record`
//! that remembers where in the file its fields were, for diagnostics.

use serde_json::Value;

use crate::diag::{Code, Diag, Source};
use crate::doc::Span;
use crate::kubernetes::{File, Step};

/// One node as Slurm described it, before any meaning is given to it.
pub struct Record {
    pub name: String,
    /// State words, upper case: `IDLE`, `DRAIN`, `NOT_RESPONDING`, ...
    pub states: Vec<String>,
    pub gres: String,
    pub gres_used: Option<String>,
    pub features: Vec<String>,
    pub partitions: Vec<String>,
    pub real_memory: u64,
    pub at: At,
}

/// Where a record came from.
pub enum At {
    /// A JSON object: its path from the top of the file.
    Json(Vec<Step<'static>>),
    /// A text line: the spans of its `Key=value` fields by key.
    Text { line: Span, fields: Vec<(String, Span)> },
}

/// The input, kept to point into it.
pub enum Input<'s> {
    Json(File<'s>),
    Text(&'s Source),
}

impl Input<'_> {
    pub fn source(&self) -> &Source {
        match self {
            Input::Json(f) => f.src,
            Input::Text(s) => s,
        }
    }

    /// The span of one field of a record (`name`, `state`, `gres`,
    /// `gres_used`), or of the record when the field cannot be found.
    pub fn span(&self, r: &Record, field: &str) -> Span {
        match (&r.at, self) {
            (At::Json(path), Input::Json(f)) => {
                let key = match (field, path.first()) {
                    ("name", Some(Step::Key("sinfo"))) => "nodes",
                    ("state", Some(Step::Key("sinfo"))) => "node",
                    ("gres_used", Some(Step::Key("sinfo"))) => "gres",
                    (k, _) => k,
                };
                let mut p = path.clone();
                p.push(Step::Key(key));
                f.span(&p)
            }
            (At::Text { line, fields }, _) => {
                let want = match field {
                    "name" => "NodeName",
                    "state" => "State",
                    "gres" => "Gres",
                    "gres_used" => "GresUsed",
                    other => other,
                };
                fields.iter().find(|(k, _)| k == want).map_or(*line, |(_, s)| *s)
            }
            _ => Span::new(0, 0),
        }
    }
}

/// The records of a file: JSON when it starts with `{`, else text.
pub fn read(src: &Source) -> Result<(Input<'_>, Vec<Record>), Vec<Diag>> {
    if src.text().trim_start().starts_with('{') {
        let file = File::read_json(src, "give what `sinfo --json` or `scontrol show nodes --json` prints")
            .map_err(|d| vec![d])?;
        let records = json(&file)?;
        Ok((Input::Json(file), records))
    } else {
        let records = text(src)?;
        Ok((Input::Text(src), records))
    }
}

fn bad_shape(file: &File<'_>, path: &[Step<'_>], why: String) -> Vec<Diag> {
    vec![file.error(
        Code::WrongType,
        path,
        why,
        "not what Slurm prints",
        "give what `sinfo --json` or `scontrol show nodes --json` prints (Slurm 22.05 or later)",
    )]
}

/// A string, or a list of strings, or a comma list in one string.
fn words(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::String(s)) => s.split(',').map(str::trim).filter(|w| !w.is_empty()).map(str::to_string).collect(),
        Some(Value::Array(a)) => a.iter().flat_map(|x| words(Some(x))).collect(),
        _ => Vec::new(),
    }
}

/// A number, or the data_parser's `{"set": true, "number": N}`.
fn number(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::Number(n) => n.as_u64(),
        Value::Object(o) if o.get("set").and_then(Value::as_bool) != Some(false) => o.get("number")?.as_u64(),
        _ => None,
    }
}

fn string(v: Option<&Value>) -> String {
    v.and_then(Value::as_str).unwrap_or_default().to_string()
}

fn json(file: &File<'_>) -> Result<Vec<Record>, Vec<Diag>> {
    let top = file.value();
    if let Some(nodes) = top.get("nodes").and_then(Value::as_array) {
        return nodes.iter().enumerate().map(|(i, n)| node_object(file, i, n)).collect::<Result<_, _>>();
    }
    if let Some(groups) = top.get("sinfo").and_then(Value::as_array) {
        let mut out = Vec::new();
        for (i, g) in groups.iter().enumerate() {
            out.extend(sinfo_group(file, i, g)?);
        }
        return Ok(out);
    }
    Err(bad_shape(file, &[], format!("{} has neither `nodes` nor `sinfo`", file.src.name())))
}

/// One element of `nodes`: v0.0.38 has `state` a word and `state_flags`
/// beside it, later versions `state` a list; features a comma string or a list.
fn node_object(file: &File<'_>, i: usize, n: &Value) -> Result<Record, Vec<Diag>> {
    let path = vec![Step::Key("nodes"), Step::Index(i)];
    let name = string(n.get("name"));
    if name.is_empty() {
        return Err(bad_shape(file, &path, format!("node {i} has no `name`")));
    }
    let mut states = words(n.get("state"));
    states.extend(words(n.get("state_flags")));
    Ok(Record {
        name,
        states: states.iter().map(|s| s.to_ascii_uppercase()).collect(),
        gres: string(n.get("gres")),
        gres_used: n.get("gres_used").and_then(Value::as_str).map(str::to_string),
        features: words(n.get("features")),
        partitions: words(n.get("partitions")),
        real_memory: number(n.get("real_memory")).unwrap_or(0),
        at: At::Json(path),
    })
}

/// One element of the newer `sinfo --json`'s `sinfo` list: a group of
/// nodes alike in partition and state. GPU use is per group there, so it
/// is kept only for a group of one node.
fn sinfo_group(file: &File<'_>, i: usize, g: &Value) -> Result<Vec<Record>, Vec<Diag>> {
    let path = vec![Step::Key("sinfo"), Step::Index(i)];
    let names = words(g.pointer("/nodes/nodes"));
    if names.is_empty() {
        return Err(bad_shape(file, &path, format!("sinfo entry {i} names no nodes (`nodes.nodes`)")));
    }
    let one = names.len() == 1;
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        out.push(Record {
            name,
            states: words(g.pointer("/node/state")).iter().map(|s| s.to_ascii_uppercase()).collect(),
            gres: string(g.pointer("/gres/total")),
            gres_used: if one { g.pointer("/gres/used").and_then(Value::as_str).map(str::to_string) } else { None },
            features: words(g.pointer("/features/total")),
            partitions: words(g.pointer("/partition/name")),
            real_memory: number(g.pointer("/memory/maximum")).unwrap_or(0),
            at: At::Json(path.clone()),
        });
    }
    Ok(out)
}

/// `scontrol show node -o` text: `Key=value` fields; a value may hold
/// spaces (`OS=Linux 6.8.0 #1 SMP`, `Reason=...`), so a word without `=`
/// belongs to the field before it.
fn text(src: &Source) -> Result<Vec<Record>, Vec<Diag>> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for line_no in 0..src.line_count() {
        let line = src.line_span(line_no);
        let text = &src.text()[line.start..line.end];
        if text.trim().is_empty() {
            continue;
        }
        let mut fields: Vec<(String, Span, Span)> = Vec::new();
        let mut pos = 0;
        for word in text.split(' ') {
            let start = line.start + pos;
            pos += word.len() + 1;
            if word.is_empty() {
                continue;
            }
            let key_len =
                word.find('=').filter(|&k| k > 0 && word[..k].bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
            match (key_len, fields.last_mut()) {
                (Some(k), _) => fields.push((
                    word[..k].to_string(),
                    Span::new(start, start + word.len()),
                    Span::new(start + k + 1, start + word.len()),
                )),
                (None, Some(last)) => {
                    last.1.end = start + word.len();
                    last.2.end = start + word.len();
                }
                (None, None) => {}
            }
        }
        let get = |k: &str| fields.iter().find(|f| f.0 == k).map(|f| &src.text()[f.2.start..f.2.end]);
        let Some(name) = get("NodeName").filter(|n| !n.is_empty()) else {
            errors.push(
                Diag::error(Code::MissingField, format!("line {} has no `NodeName=`", line_no + 1))
                    .at(src, line, "not a node line")
                    .help("give what `scontrol -d show node -o` prints: one `NodeName=... State=...` line a node"),
            );
            continue;
        };
        let list = |k: &str| get(k).map_or_else(Vec::new, |v| words(Some(&Value::String(v.replace("(null)", "")))));
        let states = get("State")
            .unwrap_or_default()
            .split('+')
            .filter(|s| !s.is_empty())
            .map(|s| s.trim_end_matches(['*', '~', '#', '!', '%', '$', '@', '^', '-']).to_ascii_uppercase())
            .collect();
        out.push(Record {
            name: name.to_string(),
            states,
            gres: get("Gres").unwrap_or_default().to_string(),
            gres_used: get("GresUsed").map(str::to_string),
            features: list("AvailableFeatures"),
            partitions: list("Partitions"),
            real_memory: get("RealMemory").and_then(|m| m.parse().ok()).unwrap_or(0),
            at: At::Text { line, fields: fields.into_iter().map(|(k, _, v)| (k, v)).collect() },
        });
    }
    if errors.is_empty() { Ok(out) } else { Err(errors) }
}
