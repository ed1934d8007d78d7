//! One input file of an import (what `kubectl get ... -o json|yaml` or
//! Slurm's `--json` commands print): its items read one at a time, and a
//! spanned tree for pointing at a value only when a diagnostic needs one.

use std::cell::OnceCell;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::diag::{Code, Diag, Source};
use crate::doc::{self, Format, Span};
use crate::import::Problems;

/// An object that says its kind, for `File::each_direct`.
pub trait Kinded {
    fn kind(&self) -> Option<&str>;
}

/// A string of a map kubectl prints as strings (labels, annotations,
/// quantities), read from whatever a script wrote there: `8` and `true`
/// are the strings they print as, `null` the empty one.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Text(pub String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Text;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E>(self, v: &str) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_string<E>(self, v: String) -> Result<Text, E> {
                Ok(Text(v))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Text, E> {
                Ok(Text(serde_json::Number::from_f64(v).map_or_else(|| v.to_string(), |n| n.to_string())))
            }
            fn visit_unit<E>(self) -> Result<Text, E> {
                Ok(Text(String::new()))
            }
            fn visit_none<E>(self) -> Result<Text, E> {
                Ok(Text(String::new()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A step on the way to a value in the file, for pointing at it.
#[derive(Clone)]
pub enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// One input file: its JSON value, and its spanned tree, built only when a
/// diagnostic needs to point somewhere.
pub struct File<'s> {
    pub src: &'s Source,
    value: Value,
    /// The items of a JSON `List`, unparsed: each is read when its turn
    /// comes, so a list of millions never sits in memory as values.
    raw: Option<Vec<&'s RawValue>>,
    /// The key whose list `raw` holds: `items` (a Kubernetes `List`), or
    /// Slurm's `jobs`, `nodes`, `sinfo`.
    raw_key: &'static str,
    tree: OnceCell<Option<doc::Node<'s>>>,
}

/// The top of a JSON `List`, its items left as text.
#[derive(Deserialize)]
struct ListTop<'a> {
    #[serde(default)]
    kind: Option<String>,
    #[serde(borrow, default)]
    items: Option<Vec<&'a RawValue>>,
}

impl<'s> File<'s> {
    /// A JSON file, with the help to give when it is not JSON.
    pub fn read_json(src: &'s Source, help: &str) -> Result<File<'s>, Diag> {
        let value = serde_json::from_str(src.text()).map_err(|e| {
            let at = crate::source::offset_of(src.text(), e.line(), e.column());
            Diag::error(Code::Syntax, format!("{} is not valid JSON: {e}", src.name()))
                .at(src, Span::new(at, at), "here")
                .help(help.to_string())
        })?;
        Ok(File { src, value, raw: None, raw_key: "items", tree: OnceCell::new() })
    }

    pub fn value(&self) -> &Value {
        &self.value
    }

    /// A JSON object whose list under the first of `keys` it has is left
    /// as text, item by item (`items()`), the rest read as values: a
    /// controller's `squeue --json` of 12 MB never sits in memory as one
    /// tree of values. Without any of `keys`, the whole file as values.
    pub fn read_json_items(src: &'s Source, keys: &[&'static str], help: &str) -> Result<File<'s>, Diag> {
        let top: std::collections::BTreeMap<std::borrow::Cow<'s, str>, &'s RawValue> =
            match serde_json::from_str(src.text()) {
                Ok(top) => top,
                Err(_) => return Self::read_json(src, help),
            };
        let Some((key, list)) = keys.iter().find_map(|k| top.get(*k).map(|v| (*k, *v))) else {
            return Self::read_json(src, help);
        };
        let Ok(items) = serde_json::from_str::<Vec<&'s RawValue>>(list.get()) else {
            return Self::read_json(src, help);
        };
        let mut value = serde_json::Map::new();
        for (k, v) in &top {
            if k.as_ref() != key {
                value.insert(k.to_string(), serde_json::from_str(v.get()).unwrap_or(Value::Null));
            }
        }
        value.insert(key.to_string(), Value::Array(Vec::new()));
        Ok(File { src, value: Value::Object(value), raw: Some(items), raw_key: key, tree: OnceCell::new() })
    }

    /// The key and items `read_json_items` left as text.
    pub fn items(&self) -> Option<(&'static str, &[&'s RawValue])> {
        self.raw.as_deref().map(|r| (self.raw_key, r))
    }

    pub fn read(src: &'s Source, command: &str) -> Result<File<'s>, Diag> {
        if crate::import::is_blank(src.text()) {
            return Err(crate::import::empty_input(src, command));
        }
        if src.format() == Format::Json {
            if let Ok(ListTop { kind: Some(kind), items: Some(items) }) =
                serde_json::from_str::<ListTop<'s>>(src.text())
                && kind.ends_with("List")
            {
                let value = serde_json::json!({"kind": kind, "items": []});
                return Ok(File { src, value, raw: Some(items), raw_key: "items", tree: OnceCell::new() });
            }
            let mut f = Self::read_json(src, "give what `kubectl get ... -o json` prints")?;
            stringify(&mut f.value, false);
            return Ok(f);
        }
        let tree = doc::parse(src.text(), src.format()).map_err(|e| {
            Diag::error(Code::Syntax, format!("{} is not valid YAML: {}", src.name(), e.message))
                .at(src, e.span, "here")
                .help("give what `kubectl get ... -o yaml` prints")
        })?;
        let value = to_json(&tree, src.text(), false);
        Ok(File { src, value, raw: None, raw_key: "items", tree: OnceCell::new() })
    }

    /// Where a value is, by its path: the nearest span the tree has.
    pub fn span(&self, path: &[Step<'_>]) -> Span {
        // An item of a raw list: only that item is parsed, never the file.
        if let (Some(raw), [Step::Key(key), Step::Index(i), rest @ ..]) = (&self.raw, path)
            && *key == self.raw_key
            && let Some(item) = raw.get(*i)
        {
            return raw_span(self.src.text(), item, rest);
        }
        let tree = self.tree.get_or_init(|| doc::parse(self.src.text(), self.src.format()).ok());
        match tree.as_ref() {
            Some(t) => walk(t, path).span,
            None => Span::new(0, 0),
        }
    }

    pub fn error(&self, code: Code, path: &[Step<'_>], message: String, label: &str, help: &str) -> Diag {
        Diag::error(code, message).at(self.src, self.span(path), label).help(help)
    }

    /// Each object of kind `kind`, read one at a time (a file of millions
    /// of items never becomes millions of typed objects at once): the
    /// file's `items` (a `List`), or the file itself (one object). A file
    /// of another kind is an error; an item that is not a `kind` is one of
    /// `problems`, and reading stops when they are full.
    pub fn each<T: for<'de> Deserialize<'de>>(
        &self,
        kind: &str,
        problems: &mut Problems,
        mut f: impl FnMut(usize, T, &mut Problems),
    ) -> Result<usize, Vec<Diag>> {
        let bad = |path: &[Step<'_>], why: String| self.not_kubectl(kind, path, why);
        let top = self.value.get("kind").and_then(Value::as_str).unwrap_or("");
        if let Some(raw) = &self.raw
            && (top == "List" || top == format!("{kind}List"))
        {
            for (i, item) in raw.iter().enumerate() {
                // Valid JSON already: the whole file parsed as a list.
                let mut v: Value = serde_json::from_str(item.get()).unwrap_or(Value::Null);
                stringify(&mut v, false);
                self.one(kind, top, i, &v, problems, &mut f);
                if problems.full() {
                    break;
                }
            }
            return Ok(raw.len());
        }
        let items: &[Value] = match (top, self.value.get("items").and_then(Value::as_array)) {
            (k, _) if k == kind => std::slice::from_ref(&self.value),
            // A list trimmed of its trailing `kind: List` is still one.
            (k, Some(items)) if k.is_empty() || k == "List" || k == format!("{kind}List") => items,
            _ => {
                let what = if top.is_empty() { "no kind".to_string() } else { format!("kind `{top}`") };
                return Err(vec![bad(
                    &[Step::Key("kind")],
                    format!("{} is not a {kind} list: it has {what}", self.src.name()),
                )]);
            }
        };
        for (i, item) in items.iter().enumerate() {
            self.one(kind, top, i, item, problems, &mut f);
            if problems.full() {
                break;
            }
        }
        Ok(items.len())
    }

    /// As `each`, but an item of a JSON `List` is read from its text
    /// straight into `T`, with no tree of values in between: a Pod of
    /// 150,000 containers or a ResourceSlice of 200,000 devices costs what
    /// `T` keeps of it, not a value per field (and `T` can refuse a list
    /// past the API's own limit while it is read). `T` takes numbers where
    /// kubectl prints strings itself (`Text`).
    pub fn each_direct<T: for<'de> Deserialize<'de> + Kinded>(
        &self,
        kind: &str,
        problems: &mut Problems,
        mut f: impl FnMut(usize, T, &mut Problems),
    ) -> Result<usize, Vec<Diag>> {
        let top = self.value.get("kind").and_then(Value::as_str).unwrap_or("");
        let Some(raw) = self.raw.as_ref().filter(|_| top == "List" || top == format!("{kind}List")) else {
            return self.each(kind, problems, f);
        };
        for (i, item) in raw.iter().enumerate() {
            let path = |k| vec![Step::Key("items"), Step::Index(i), Step::Key(k)];
            match serde_json::from_str::<T>(item.get()) {
                Ok(o) => match o.kind() {
                    Some(k) if k != kind => problems.push(self.not_kubectl(
                        kind,
                        &path("kind"),
                        format!("item {i} is a {}, not a {kind}", crate::term::escape(k)),
                    )),
                    _ => f(i, o, problems),
                },
                Err(e) => {
                    problems.push(self.not_kubectl(kind, &path("metadata"), format!("item {i} is not a {kind}: {e}")))
                }
            }
            if problems.full() {
                break;
            }
        }
        Ok(raw.len())
    }

    /// The error for what is not a `kind` where one should be.
    fn not_kubectl(&self, kind: &str, path: &[Step<'_>], why: String) -> Diag {
        self.error(
            Code::WrongType,
            path,
            why,
            "not what kubectl prints",
            &format!("give the output of `kubectl get {}s -o json` (a List of {kind})", kind.to_lowercase()),
        )
    }

    /// One item of `each`.
    fn one<T: for<'de> Deserialize<'de>>(
        &self,
        kind: &str,
        top: &str,
        i: usize,
        item: &Value,
        problems: &mut Problems,
        f: &mut impl FnMut(usize, T, &mut Problems),
    ) {
        let path =
            |k| if top == kind { vec![Step::Key(k)] } else { vec![Step::Key("items"), Step::Index(i), Step::Key(k)] };
        let bad = |path: &[Step<'_>], why: String| self.not_kubectl(kind, path, why);
        match item.get("kind").and_then(Value::as_str) {
            Some(k) if k != kind => problems.push(bad(&path("kind"), format!("item {i} is a {k}, not a {kind}"))),
            _ => match T::deserialize(item) {
                Ok(o) => f(i, o, problems),
                Err(e) => problems.push(bad(&path("metadata"), format!("item {i} is not a {kind}: {e}"))),
            },
        }
    }

    pub fn item_path(&self, i: usize) -> Vec<Step<'static>> {
        if self.value.get("items").is_some() { vec![Step::Key("items"), Step::Index(i)] } else { Vec::new() }
    }
}

/// Where the value at `path` inside a raw item is, or the nearest one
/// above it: each step reads only the keys (or items) of one level as text,
/// so pointing into a ResourceSlice of 200,000 devices costs a list of
/// 200,000 slices of text, never a spanned tree of the whole item.
fn raw_span(text: &str, item: &RawValue, path: &[Step<'_>]) -> Span {
    let mut at: &RawValue = item;
    for step in path {
        let next = match step {
            Step::Key(k) => {
                serde_json::from_str::<std::collections::HashMap<std::borrow::Cow<'_, str>, &RawValue>>(at.get())
                    .ok()
                    .and_then(|m| m.get(*k).copied())
            }
            Step::Index(i) => serde_json::from_str::<Vec<&RawValue>>(at.get()).ok().and_then(|v| v.get(*i).copied()),
        };
        match next {
            Some(n) => at = n,
            None => break,
        }
    }
    let start = at.get().as_ptr() as usize - text.as_ptr() as usize;
    Span::new(start, start + at.get().len())
}

/// The node at `path` in a spanned tree, or the nearest one above it.
fn walk<'t, 'a>(mut at: &'t doc::Node<'a>, path: &[Step<'_>]) -> &'t doc::Node<'a> {
    for step in path {
        let next = match (step, &at.value) {
            (Step::Key(k), doc::Value::Table(t)) => t.iter().find(|e| e.key == *k).map(|e| &e.value),
            (Step::Index(i), doc::Value::Array(a)) => a.get(*i),
            _ => None,
        };
        match next {
            Some(n) => at = n,
            None => break,
        }
    }
    at
}

/// One YAML document as JSON, through llmgw's own bounded YAML reader.
pub fn yaml_to_json(text: &str) -> Result<Value, String> {
    doc::parse(text, Format::Yaml).map(|t| to_json(&t, text, false)).map_err(|e| e.message)
}

/// Maps whose values Kubernetes takes as strings, whatever a YAML writer
/// left unquoted: `nvidia.com/cuda.driver.rev: 08` is the label "08", as
/// kubectl reads it, not the integer 8.
const STRING_MAPS: &[&str] =
    &["labels", "annotations", "capacity", "allocatable", "limits", "requests", "nodeSelector"];

/// The spanned tree as JSON, for YAML input; in a string map (`strings`)
/// a plain scalar is the text it spells.
fn to_json(n: &doc::Node<'_>, text: &str, strings: bool) -> Value {
    let spelled = || Value::String(text.get(n.span.start..n.span.end).unwrap_or_default().to_string());
    match &n.value {
        doc::Value::Str(s) => Value::String(s.to_string()),
        doc::Value::Null if strings => Value::String(String::new()),
        doc::Value::Int(_) | doc::Value::Float(_) | doc::Value::Bool(_) | doc::Value::Other(_) if strings => spelled(),
        doc::Value::Int(i) => (*i).into(),
        doc::Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        doc::Value::Bool(b) => (*b).into(),
        doc::Value::Null | doc::Value::Other(_) => Value::Null,
        doc::Value::Array(a) => a.iter().map(|x| to_json(x, text, false)).collect(),
        doc::Value::Table(t) => t
            .iter()
            .map(|e| (e.key.to_string(), to_json(&e.value, text, strings || STRING_MAPS.contains(&e.key.as_ref()))))
            .collect::<serde_json::Map<_, _>>()
            .into(),
    }
}

/// As `to_json` for JSON input: numbers and booleans a script wrote into a
/// string map become the strings they print as.
fn stringify(v: &mut Value, strings: bool) {
    match v {
        Value::Number(n) if strings => *v = Value::String(n.to_string()),
        Value::Bool(b) if strings => *v = Value::String(b.to_string()),
        Value::Null if strings => *v = Value::String(String::new()),
        Value::Array(a) => a.iter_mut().for_each(|x| stringify(x, false)),
        Value::Object(o) => o.iter_mut().for_each(|(k, x)| stringify(x, strings || STRING_MAPS.contains(&k.as_str()))),
        _ => {}
    }
}
