//! Reading the spanned document tree into typed values, collecting every
//! problem as a diagnostic instead of stopping at the first.

use crate::diag::{Code, Diag, Source, suggest};
use crate::doc::{Entry, Node, Span, Value};

pub struct Decoder {
    pub src: Source,
    pub diags: Vec<Diag>,
}

/// The fields of one table, handed out by name; whatever is left when the
/// caller is done is an unknown field.
pub struct Table<'v, 'a> {
    entries: &'v [Entry<'a>],
    used: Vec<bool>,
    pub span: Span,
    what: &'static str,
}

impl Decoder {
    pub fn new(src: Source) -> Self {
        Decoder { src, diags: Vec::new() }
    }

    pub fn push(&mut self, d: Diag) {
        self.diags.push(d);
    }

    pub fn error(&mut self, code: Code, span: Span, message: String, label: &str, help: Option<String>) {
        let mut d = Diag::error(code, message).at(&self.src, span, label);
        d.help = help;
        self.diags.push(d);
    }

    fn wrong_type(&mut self, node: &Node<'_>, field: &str, want: &str) {
        self.error(
            Code::WrongType,
            node.span,
            format!("`{field}` must be {want}, found {}", node.value.kind()),
            &format!("expected {want}"),
            Some(type_help(want, &node.value)),
        );
    }

    pub fn table<'v, 'a>(&mut self, node: &'v Node<'a>, what: &'static str) -> Option<Table<'v, 'a>> {
        let Value::Table(entries) = &node.value else {
            self.wrong_type(node, what, "a table");
            return None;
        };
        self.check_duplicate_keys(entries);
        Some(Table { entries, used: vec![false; entries.len()], span: node.span, what })
    }

    fn check_duplicate_keys(&mut self, entries: &[Entry<'_>]) {
        // TOML rejects duplicate keys itself; JSON and YAML parsers keep the
        // last one, which would silently drop what the user wrote first.
        if entries.len() < 2 {
            return;
        }
        // Tables here are small (a GPU has nine fields): comparing each key
        // with the ones before it beats hashing; labels can be larger.
        let first_of = |i: usize| -> Option<Span> {
            let key = entries[i].key.as_ref();
            entries[..i].iter().find(|e| e.key == key).map(|e| e.key_span)
        };
        if entries.len() <= 32 {
            for (i, e) in entries.iter().enumerate() {
                if let Some(first) = first_of(i) {
                    self.duplicate(e, first);
                }
            }
        } else {
            let mut seen: std::collections::HashMap<&str, Span> = std::collections::HashMap::new();
            for e in entries {
                match seen.get(e.key.as_ref()) {
                    Some(first) => self.duplicate(e, *first),
                    None => {
                        seen.insert(e.key.as_ref(), e.key_span);
                    }
                }
            }
        }
    }

    fn duplicate(&mut self, e: &Entry<'_>, first: Span) {
        let d = Diag::error(Code::DuplicateKey, format!("`{}` is given twice", e.key))
            .at(&self.src, e.key_span, "given again here")
            .label(first, "first given here")
            .help("keep one of the two");
        self.diags.push(d);
    }

    pub fn string(&mut self, node: &Node<'_>, field: &str) -> Option<String> {
        match &node.value {
            Value::Str(s) => Some(s.to_string()),
            _ => {
                self.wrong_type(node, field, "a string");
                None
            }
        }
    }

    pub fn boolean(&mut self, node: &Node<'_>, field: &str) -> Option<bool> {
        match node.value {
            Value::Bool(b) => Some(b),
            _ => {
                self.wrong_type(node, field, "a boolean");
                None
            }
        }
    }

    pub fn int(&mut self, node: &Node<'_>, field: &str) -> Option<i64> {
        match node.value {
            Value::Int(i) => Some(i),
            _ => {
                self.wrong_type(node, field, "an integer");
                None
            }
        }
    }

    /// A number (integer or float) greater than 0, like a parameter count.
    pub fn positive(&mut self, node: &Node<'_>, field: &str) -> Option<f64> {
        self.number_above(node, field, false, "write the size of the model, e.g. 70.6")
    }

    /// A finite number above 0 (or at least 0 with `zero`), with `help`
    /// when it is not.
    pub fn number_above(&mut self, node: &Node<'_>, field: &str, zero: bool, help: &str) -> Option<f64> {
        let x = match node.value {
            Value::Int(i) => i as f64,
            Value::Float(f) => f,
            _ => {
                self.wrong_type(node, field, "a number");
                return None;
            }
        };
        if !(x.is_finite() && (x > 0.0 || (zero && x == 0.0))) {
            let bound = if zero { "at least 0" } else { "above 0" };
            self.error(
                Code::OutOfRange,
                node.span,
                format!("`{field}` must be a number {bound}, found {x}"),
                if zero { "below 0" } else { "not above 0" },
                Some(help.into()),
            );
            return None;
        }
        Some(x)
    }

    /// A non-negative integer no larger than `max`.
    pub fn uint(&mut self, node: &Node<'_>, field: &str, max: u64) -> Option<u64> {
        let i = self.int(node, field)?;
        if i < 0 {
            self.error(
                Code::OutOfRange,
                node.span,
                format!("`{field}` cannot be negative, found {i}"),
                "negative",
                Some("counts, sizes and indices are 0 or more".into()),
            );
            return None;
        }
        if i as u64 > max {
            self.error(
                Code::OutOfRange,
                node.span,
                format!("`{field}` must be at most {max}, found {i}"),
                "too large",
                Some(format!("use a number from 0 to {max}")),
            );
            return None;
        }
        Some(i as u64)
    }

    pub fn array<'v, 'a>(&mut self, node: &'v Node<'a>, field: &str) -> Option<&'v [Node<'a>]> {
        match &node.value {
            Value::Array(items) => Some(items),
            _ => {
                self.wrong_type(node, field, "an array");
                None
            }
        }
    }

    pub fn string_list(&mut self, node: &Node<'_>, field: &str) -> Option<Vec<String>> {
        let items = self.array(node, field)?;
        let mut out = Vec::with_capacity(items.len());
        let mut ok = true;
        for item in items {
            match self.string(item, field) {
                Some(s) => out.push(s),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    pub fn uint_list(&mut self, node: &Node<'_>, field: &str, max: u64) -> Option<Vec<(u64, Span)>> {
        let items = self.array(node, field)?;
        let mut out = Vec::with_capacity(items.len());
        let mut ok = true;
        for item in items {
            match self.uint(item, field, max) {
                Some(v) => out.push((v, item.span)),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    /// A table of string values, as labels and engine versions are written.
    pub fn string_map(&mut self, node: &Node<'_>, field: &str) -> Option<Vec<MapEntry>> {
        let Value::Table(entries) = &node.value else {
            self.wrong_type(node, field, "a table of strings");
            return None;
        };
        self.check_duplicate_keys(entries);
        let mut out = Vec::with_capacity(entries.len());
        let mut ok = true;
        for e in entries {
            // TOML reads `llama.cpp = "b4500"` as `llama = { cpp = "b4500" }`.
            if let (Value::Table(inner), crate::doc::Format::Toml) = (&e.value.value, self.src.format()) {
                let dotted = dotted(&e.key, inner);
                self.error(
                    Code::WrongType,
                    e.key_span,
                    format!("`{field}.{}` must be a string, found a table", e.key),
                    "TOML reads a dotted key as tables",
                    Some(format!("quote the key, as TOML needs for a name with a dot: `\"{dotted}\" = ...`")),
                );
                ok = false;
                continue;
            }
            match self.string(&e.value, &format!("{field}.{}", e.key)) {
                Some(v) => out.push(MapEntry {
                    key: e.key.to_string(),
                    key_span: e.key_span,
                    value: v,
                    value_span: e.value.span,
                }),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }
}

/// The key a TOML dotted key was written as: `llama` holding `cpp` gives
/// `llama.cpp` (the first key at each level).
fn dotted(key: &str, mut inner: &[Entry<'_>]) -> String {
    let mut out = key.to_string();
    while let Some(e) = inner.first() {
        out.push('.');
        out.push_str(&e.key);
        inner = match &e.value.value {
            Value::Table(t) => t,
            _ => &[],
        };
    }
    out
}

/// What to write instead of a value of the wrong type.
fn type_help(want: &str, found: &Value<'_>) -> String {
    match (want, found) {
        ("an integer", Value::Str(s)) if s.trim().parse::<i64>().is_ok() => {
            format!("write the number without quotes: {}", s.trim())
        }
        ("an integer", Value::Float(f)) if f.is_finite() && f.abs() < 1e15 => {
            format!("write a whole number, like {}", f.round() as i64)
        }
        ("an integer", Value::Float(_)) => "write a whole number".into(),
        ("an integer", _) => "write a whole number, without quotes".into(),
        ("a string", Value::Int(_) | Value::Float(_) | Value::Bool(_)) => "put the value in quotes".into(),
        ("a boolean", _) => "write true or false, without quotes".into(),
        ("an array", _) => "write a list in brackets: [ ... ]".into(),
        (w, _) if w.starts_with("a table") => "write a table: { key = \"value\" } in TOML".into(),
        _ => format!("write {want} here"),
    }
}

#[derive(Clone, Debug)]
pub struct MapEntry {
    pub key: String,
    pub key_span: Span,
    pub value: String,
    pub value_span: Span,
}

/// A field that was present but could not be used; its diagnostic is
/// already recorded.
#[derive(Clone, Copy, Debug)]
pub struct Invalid;

/// An optional field: `Ok(None)` when absent, `Err(Invalid)` when present
/// but unusable.
pub type Field<T> = Result<Option<T>, Invalid>;

impl<'v, 'a> Table<'v, 'a> {
    /// An optional field, read by `read` when present.
    pub fn optional<T>(
        &mut self,
        dec: &mut Decoder,
        key: &str,
        read: impl FnOnce(&mut Decoder, &'v Node<'a>) -> Option<T>,
    ) -> Field<T> {
        match self.get(key) {
            None => Ok(None),
            Some(n) => read(dec, n).map(Some).ok_or(Invalid),
        }
    }

    /// A required field, read by `read`; absent is an error.
    pub fn required<T>(
        &mut self,
        dec: &mut Decoder,
        key: &str,
        read: impl FnOnce(&mut Decoder, &'v Node<'a>) -> Option<T>,
    ) -> Option<T> {
        let n = self.require(dec, key)?;
        read(dec, n)
    }

    /// An array of tables, each read by `item`; the items that could be read
    /// (the others have said why).
    pub fn list<T>(
        &mut self,
        dec: &mut Decoder,
        key: &str,
        mut item: impl FnMut(&mut Decoder, &'v Node<'a>) -> Option<T>,
    ) -> Vec<T> {
        let Some(n) = self.get(key) else { return Vec::new() };
        let Some(items) = dec.array(n, key) else { return Vec::new() };
        items.iter().filter_map(|i| item(dec, i)).collect()
    }

    /// The value of `key`, if the table has it.
    pub fn get(&mut self, key: &str) -> Option<&'v Node<'a>> {
        let i = self.entries.iter().position(|e| e.key == key)?;
        self.used[i] = true;
        Some(&self.entries[i].value)
    }

    /// A required field: absent is an error at the table's span.
    pub fn require(&mut self, dec: &mut Decoder, key: &str) -> Option<&'v Node<'a>> {
        let v = self.get(key);
        if v.is_none() {
            dec.error(
                Code::MissingField,
                self.header_span(dec),
                format!("{} has no `{key}`", self.what),
                &format!("`{key}` is required here"),
                Some(format!("add `{key} = ...` to this {}", self.what)),
            );
        }
        v
    }

    /// Where to point for the whole table: its first line, not its body.
    fn header_span(&self, dec: &Decoder) -> Span {
        let text = dec.src.text();
        let start = self.span.start.min(text.len());
        let end = self.span.end.min(text.len());
        let line_end = text[start..end].find('\n').map_or(end, |i| start + i);
        if line_end > start { Span::new(start, line_end) } else { self.span }
    }

    /// Reports every field that nobody asked for; returns how many.
    pub fn finish(self, dec: &mut Decoder, known: &[&str]) -> usize {
        let mut unknown = 0;
        for (e, used) in self.entries.iter().zip(&self.used) {
            if *used || known.contains(&e.key.as_ref()) {
                continue;
            }
            let help = suggest(&e.key, known.iter().copied(), &format!("the fields of a {} are", self.what));
            dec.error(
                Code::UnknownField,
                e.key_span,
                format!("unknown field `{}` in {}", e.key, self.what),
                "not a field llmgw knows",
                Some(help),
            );
            unknown += 1;
        }
        unknown
    }
}

/// A name that ends up in scripts, file names and terminals may hold no
/// control character: a newline in a node id would start a new `#SBATCH`
/// line, an escape sequence would repaint the operator's terminal. False
/// (and an error at `span`) when it does.
pub fn no_control(dec: &mut Decoder, value: &str, what: &str, span: Span) -> bool {
    let Some(c) = value.chars().find(|c| c.is_control()) else { return true };
    dec.error(
        Code::ControlCharacter,
        span,
        format!("the {what} `{}` holds the control character {}", crate::term::escape(value), c.escape_default()),
        "control character",
        Some(format!("a {what} is written into scripts and file names: use printable characters only")),
    );
    false
}
