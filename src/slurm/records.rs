//! The nodes of a Slurm controller as its commands print them: the JSON of
//! `sinfo --json` / `scontrol show nodes --json` (Slurm 22.05's OpenAPI
//! v0.0.38 and the later data_parser versions), or the text of
//! `scontrol [-d] show node [-o]`. Each becomes a `Record` that remembers
//! where in the file its fields were, for diagnostics.

use serde_json::Value;

use super::text::{self, TextRecord};
use crate::diag::{Code, Diag, Source};
use crate::doc::Span;
use crate::import::file::{File, Step};

/// One node as Slurm described it, before any meaning is given to it.
pub struct Record {
    pub name: String,
    /// State words, upper case: `IDLE`, `DRAIN`, `NOT_RESPONDING`, ...;
    /// empty when the node has none (an error, not "ready").
    pub states: Vec<String>,
    pub gres: String,
    pub gres_used: Option<String>,
    pub features: Vec<String>,
    pub partitions: Vec<String>,
    pub real_memory: u64,
    /// `CPUTot` / `cpus`, and `CPUAlloc` / `alloc_cpus`, when given.
    pub cpus: Option<u64>,
    pub alloc_cpus: Option<u64>,
    /// `CPUEfctv` / `effective_cpus`: the CPUs jobs may use once
    /// `CoreSpecCount` cores are set aside for the system.
    pub cpus_effective: Option<u64>,
    /// `MemSpecLimit` / `specialized_memory`, MiB kept for the system.
    pub mem_spec: Option<u64>,
    /// `AllocMem` / `alloc_memory`, MiB allocated to jobs.
    pub alloc_memory: Option<u64>,
    /// `AllocTRES` / `tres_used`: `cpu=9,mem=320G,gres/gpu=2`.
    pub alloc_tres: Option<String>,
    /// `Arch` / `architecture`: `x86_64`, `aarch64` (which image runs).
    pub arch: Option<String>,
    pub at: At,
}

impl Record {
    /// `slurm/arch` for a node that is not x86-64 (GH200, GB200: it needs
    /// arm64 images); x86-64 is assumed, and not written.
    pub fn arch_label(&self) -> Option<(String, String)> {
        let a = self.arch.as_ref().filter(|a| crate::images::Arch::parse(a) != Some(crate::images::Arch::Amd64))?;
        Some(("slurm/arch".to_string(), a.clone()))
    }
}

/// Where a record came from.
pub enum At {
    /// A JSON object: its path from the top of the file.
    Json(Vec<Step<'static>>),
    /// Text: the span of the record and of its `Key=value` fields by key.
    Text { line: Span, fields: Vec<(String, Span)> },
}

/// The input, kept to point into it.
pub enum Input<'s> {
    Json(File<'s>),
    Text(&'s Source),
}

/// A field's key in `scontrol` text.
fn text_key(field: &str) -> &str {
    match field {
        "name" => "NodeName",
        "state" => "State",
        "gres" => "Gres",
        "gres_used" => "GresUsed",
        "real_memory" => "RealMemory",
        "cpus" => "CPUTot",
        "alloc_cpus" => "CPUAlloc",
        "cpus_effective" => "CPUEfctv",
        "mem_spec" => "MemSpecLimit",
        "alloc_memory" => "AllocMem",
        "alloc_tres" => "AllocTRES",
        other => other,
    }
}

impl Input<'_> {
    pub fn source(&self) -> &Source {
        match self {
            Input::Json(f) => f.src,
            Input::Text(s) => s,
        }
    }

    /// The span of one field of a record (`name`, `state`, `gres`,
    /// `gres_used`, `real_memory`, `cpus`), or of the record when the
    /// field cannot be found.
    pub fn span(&self, r: &Record, field: &str) -> Span {
        match (&r.at, self) {
            (At::Json(path), Input::Json(f)) => f.span(&json_path(path, field)),
            (At::Text { line, fields }, _) => {
                let want = text_key(field);
                fields.iter().find(|(k, _)| k == want).map_or(*line, |(_, s)| *s)
            }
            _ => Span::new(0, 0),
        }
    }
}

/// The path of a field in the JSON, by the shape the record came from.
fn json_path(path: &[Step<'static>], field: &str) -> Vec<Step<'static>> {
    let grouped = matches!(path.first(), Some(Step::Key("sinfo")));
    let mut p = path.to_vec();
    let keys: &[&'static str] = match (field, grouped) {
        ("name", true) => &["nodes"],
        ("state", true) => &["node"],
        ("gres", true) => &["gres"],
        ("gres_used", true) => &["gres"],
        ("real_memory", true) => &["memory"],
        ("cpus" | "alloc_cpus", true) => &["cpus"],
        ("name", false) => &["name"],
        ("state", false) => &["state"],
        ("gres", false) => &["gres"],
        ("gres_used", false) => &["gres_used"],
        ("real_memory", false) => &["real_memory"],
        ("cpus", false) => &["cpus"],
        ("alloc_cpus", false) => &["alloc_cpus"],
        ("cpus_effective", false) => &["effective_cpus"],
        ("mem_spec", false) => &["specialized_memory"],
        ("alloc_memory", false) => &["alloc_memory"],
        ("alloc_tres", false) => &["tres_used"],
        ("alloc_memory", true) => &["memory", "allocated"],
        _ => &[],
    };
    p.extend(keys.iter().map(|k| Step::Key(k)));
    p
}

const HELP: &str = "give what `sinfo --json`, `scontrol show nodes --json` or `scontrol -d show node` prints";

/// The records of a file: JSON when it starts with `{`, else text.
pub fn read(src: &Source) -> Result<(Input<'_>, Vec<Record>), Vec<Diag>> {
    if crate::import::is_blank(src.text()) {
        return Err(vec![crate::import::empty_input(src, "scontrol -d show node -o")]);
    }
    if src.text().trim_start().starts_with('{') {
        let file = File::read_json_items(src, &["nodes", "sinfo"], HELP).map_err(|d| vec![d])?;
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
pub fn words(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::String(s)) => {
            s.split(',').map(str::trim).filter(|w| !w.is_empty() && *w != "(null)").map(str::to_string).collect()
        }
        Some(Value::Array(a)) => a.iter().flat_map(|x| words(Some(x))).collect(),
        _ => Vec::new(),
    }
}

/// A number as Slurm's JSON writes it: plain, or the data_parser's
/// `{"set": true, "number": N}`; `Ok(None)` when absent or unset, an error
/// when it is no whole number up to `max`.
pub fn number(v: Option<&Value>, max: u64) -> Result<Option<u64>, String> {
    let n = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(o)) if o.get("set").and_then(Value::as_bool) == Some(false) => return Ok(None),
        Some(Value::Object(o)) => match o.get("number") {
            None | Some(Value::Null) => return Ok(None),
            Some(n) => n,
        },
        Some(n) => n,
    };
    match n.as_u64() {
        Some(x) if x <= max => Ok(Some(x)),
        _ => Err(format!("`{n}` is not a whole number from 0 to {max}")),
    }
}

/// The CPUs of a node's configured TRES (`CfgTRES=cpu=63,mem=...`), which
/// leave out the cores `CoreSpecCount` sets aside.
fn configured_cpus(tres: Option<&str>) -> Option<u64> {
    tres.and_then(|t| super::tres::parse(t).cpus)
}

pub fn string(v: Option<&Value>) -> String {
    v.and_then(Value::as_str).unwrap_or_default().to_string()
}

fn json(file: &File<'_>) -> Result<Vec<Record>, Vec<Diag>> {
    let top = file.value();
    let mut out = Vec::new();
    let mut errors = crate::import::Problems::default();
    // Item by item: each node (or sinfo group) is a value only while it is read.
    if let Some((key, items)) = file.items() {
        for (i, raw) in items.iter().enumerate() {
            let v: Value = serde_json::from_str(raw.get()).unwrap_or(Value::Null);
            let got = if key == "sinfo" { sinfo_group(file, i, &v) } else { node_object(file, i, &v).map(|r| vec![r]) };
            match got {
                Ok(r) => out.extend(r),
                Err(d) => errors.extend(d),
            }
            if errors.full() {
                break;
            }
        }
    } else if let Some(nodes) = top.get("nodes").and_then(Value::as_array) {
        for (i, n) in nodes.iter().enumerate() {
            match node_object(file, i, n) {
                Ok(r) => out.push(r),
                Err(d) => errors.extend(d),
            }
            if errors.full() {
                break;
            }
        }
    } else if let Some(groups) = top.get("sinfo").and_then(Value::as_array) {
        for (i, g) in groups.iter().enumerate() {
            match sinfo_group(file, i, g) {
                Ok(r) => out.extend(r),
                Err(d) => errors.extend(d),
            }
            if errors.full() {
                break;
            }
        }
    } else {
        return Err(bad_shape(file, &[], format!("{} has neither `nodes` nor `sinfo`", file.src.name())));
    }
    errors.into_result()?;
    Ok(out)
}

/// A number field of a JSON record, or the diagnostic at it.
fn json_number(
    file: &File<'_>,
    path: &[Step<'static>],
    field: &str,
    v: Option<&Value>,
    max: u64,
) -> Result<Option<u64>, Vec<Diag>> {
    number(v, max).map_err(|why| {
        vec![file.error(
            Code::OutOfRange,
            &json_path(path, field),
            format!("`{field}`: {why}"),
            "out of range",
            "Slurm writes this as a whole number; check the file was not edited",
        )]
    })
}

const U32: u64 = u32::MAX as u64;

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
        real_memory: json_number(file, &path, "real_memory", n.get("real_memory"), crate::units::MAX_MIB)?.unwrap_or(0),
        cpus: json_number(file, &path, "cpus", n.get("cpus"), U32)?,
        alloc_cpus: json_number(file, &path, "alloc_cpus", n.get("alloc_cpus"), U32)?,
        cpus_effective: match json_number(file, &path, "cpus_effective", n.get("effective_cpus"), U32)? {
            Some(c) => Some(c),
            // Before `effective_cpus` (v0.0.38): the configured TRES.
            None => configured_cpus(n.get("tres").and_then(Value::as_str)),
        },
        mem_spec: json_number(file, &path, "mem_spec", n.get("specialized_memory"), crate::units::MAX_MIB)?,
        alloc_memory: json_number(file, &path, "alloc_memory", n.get("alloc_memory"), crate::units::MAX_MIB)?,
        alloc_tres: n.get("tres_used").and_then(Value::as_str).map(str::to_string),
        arch: n.get("architecture").and_then(Value::as_str).filter(|a| !a.is_empty()).map(str::to_string),
        at: At::Json(path),
    })
}

/// One element of the newer `sinfo --json`'s `sinfo` list: a group of
/// nodes alike in partition and state. GPU and CPU use is per group there,
/// so it is kept only for a group of one node.
fn sinfo_group(file: &File<'_>, i: usize, g: &Value) -> Result<Vec<Record>, Vec<Diag>> {
    let path = vec![Step::Key("sinfo"), Step::Index(i)];
    let names = words(g.pointer("/nodes/nodes"));
    if names.is_empty() {
        return Err(bad_shape(file, &path, format!("sinfo entry {i} names no nodes (`nodes.nodes`)")));
    }
    let one = names.len() == 1;
    let real_memory =
        json_number(file, &path, "real_memory", g.pointer("/memory/maximum"), crate::units::MAX_MIB)?.unwrap_or(0);
    // A group's CPUs add up its nodes': per node only when they are alike.
    let (min, max) = (
        json_number(file, &path, "cpus", g.pointer("/cpus/minimum"), U32)?,
        json_number(file, &path, "cpus", g.pointer("/cpus/maximum"), U32)?,
    );
    let cpus = if one {
        json_number(file, &path, "cpus", g.pointer("/cpus/total"), U32)?.or(max)
    } else {
        max.filter(|_| min == max)
    };
    let alloc_cpus =
        if one { json_number(file, &path, "alloc_cpus", g.pointer("/cpus/allocated"), U32)? } else { None };
    let alloc_memory = if one {
        json_number(file, &path, "alloc_memory", g.pointer("/memory/allocated"), crate::units::MAX_MIB)?
    } else {
        None
    };
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        out.push(Record {
            name,
            states: words(g.pointer("/node/state")).iter().map(|s| s.to_ascii_uppercase()).collect(),
            gres: string(g.pointer("/gres/total")),
            gres_used: if one { g.pointer("/gres/used").and_then(Value::as_str).map(str::to_string) } else { None },
            features: words(g.pointer("/features/total")),
            partitions: words(g.pointer("/partition/name")),
            real_memory,
            cpus,
            alloc_cpus,
            cpus_effective: None,
            mem_spec: None,
            alloc_memory,
            alloc_tres: None,
            arch: None,
            at: At::Json(path.clone()),
        });
    }
    Ok(out)
}

/// `scontrol show node` text, one line a node (`-o`) or several.
fn text(src: &Source) -> Result<Vec<Record>, Vec<Diag>> {
    let records =
        text::records(src, "NodeName", "give what `scontrol -d show node -o` prints: `NodeName=... State=...`")?;
    let mut out = Vec::with_capacity(records.len());
    let mut errors = crate::import::Problems::default();
    for r in &records {
        match text_record(src, r) {
            Ok(rec) => out.push(rec),
            Err(d) => errors.push(d),
        }
        if errors.full() {
            break;
        }
    }
    errors.into_result()?;
    Ok(out)
}

fn text_record(src: &Source, r: &TextRecord) -> Result<Record, Diag> {
    let t = src.text();
    let get = |k: &str| r.get(t, k);
    let name = get("NodeName").filter(|n| !n.is_empty()).ok_or_else(|| {
        Diag::error(Code::MissingField, "a `NodeName=` with no name".to_string())
            .at(src, r.span_of("NodeName").unwrap_or(r.span), "no name")
            .help("give what `scontrol -d show node` prints")
    })?;
    let list = |k: &str| get(k).map_or_else(Vec::new, |v| words(Some(&Value::String(v.to_string()))));
    let states = get("State")
        .unwrap_or_default()
        .split('+')
        .map(|s| s.trim().trim_end_matches(['*', '~', '#', '!', '%', '$', '@', '^', '-']).to_ascii_uppercase())
        .filter(|s| !s.is_empty())
        .collect();
    let num = |k: &str, max: u64| -> Result<Option<u64>, Diag> {
        let Some(v) = get(k) else { return Ok(None) };
        match v.trim().parse::<u64>() {
            Ok(n) if n <= max => Ok(Some(n)),
            _ => Err(Diag::error(
                Code::OutOfRange,
                format!("node `{name}`: {k} is `{v}`, not a whole number from 0 to {max}"),
            )
            .at(src, r.span_of(k).unwrap_or(r.span), "out of range")
            .help("Slurm prints this as a whole number; check the file was not edited")),
        }
    };
    let features = if get("AvailableFeatures").is_some() { list("AvailableFeatures") } else { list("Features") };
    Ok(Record {
        name: name.to_string(),
        states,
        gres: get("Gres").unwrap_or_default().to_string(),
        gres_used: get("GresUsed").map(str::to_string),
        features,
        partitions: list("Partitions"),
        real_memory: num("RealMemory", crate::units::MAX_MIB)?.unwrap_or(0),
        cpus: num("CPUTot", U32)?,
        alloc_cpus: num("CPUAlloc", U32)?,
        cpus_effective: match num("CPUEfctv", U32)? {
            Some(c) => Some(c),
            // Before 22.05's CPUEfctv: the configured TRES.
            None => configured_cpus(get("CfgTRES")),
        },
        mem_spec: num("MemSpecLimit", crate::units::MAX_MIB)?,
        alloc_memory: num("AllocMem", crate::units::MAX_MIB)?,
        alloc_tres: get("AllocTRES").map(str::to_string),
        arch: get("Arch").filter(|a| !a.is_empty()).map(str::to_string),
        at: At::Text { line: r.span, fields: r.fields.iter().map(|(k, s, _)| (k.clone(), *s)).collect() },
    })
}
