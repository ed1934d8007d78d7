//! A spanned document tree shared by the three input formats.
//!
//! Catalogs and inventories arrive as TOML, YAML or JSON. Each format's parser
//! is different, but every check after parsing (unknown fields, wrong types,
//! duplicate ids) must point at the exact bytes that caused it, so all three
//! are lowered into this one tree of values that carry their byte spans. The
//! decoders in `decode` then read that tree without caring where it came from.

mod yaml;
pub use yaml::*;

use std::borrow::Cow;
use std::collections::HashMap;

/// A byte range in the source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Self {
        Span { start, end: end.max(start) }
    }
}

impl From<Span> for miette::SourceSpan {
    fn from(s: Span) -> Self {
        (s.start, s.end - s.start).into()
    }
}

/// Which syntax a file is written in (and `--format` for inventories).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Toml,
    Json,
    Yaml,
}

impl Format {
    /// The format a file name's extension names, if it names one.
    pub fn from_extension(path: &str) -> Option<Format> {
        let lower = path.to_ascii_lowercase();
        if lower.ends_with(".yaml") || lower.ends_with(".yml") {
            Some(Format::Yaml)
        } else if lower.ends_with(".json") {
            Some(Format::Json)
        } else if lower.ends_with(".toml") {
            Some(Format::Toml)
        } else {
            None
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Toml => "toml",
            Format::Yaml => "yaml",
            Format::Json => "json",
        }
    }
}

#[derive(Clone, Debug)]
pub enum Value<'a> {
    Str(Cow<'a, str>),
    Int(i64),
    Float(f64),
    Bool(bool),
    Null,
    Array(Vec<Node<'a>>),
    Table(Vec<Entry<'a>>),
    /// A value of a kind no llmgw field takes (a TOML datetime, an integer
    /// beyond 64 bits); kept so the decoder can name it in its error.
    Other(&'static str),
}

#[derive(Clone, Debug)]
pub struct Node<'a> {
    pub span: Span,
    pub value: Value<'a>,
}

#[derive(Clone, Debug)]
pub struct Entry<'a> {
    pub key: Cow<'a, str>,
    pub key_span: Span,
    pub value: Node<'a>,
}

impl Value<'_> {
    /// The kind of value, as an error message names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Str(_) => "a string",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a float",
            Value::Bool(_) => "a boolean",
            Value::Null => "null",
            Value::Array(_) => "an array",
            Value::Table(_) => "a table",
            Value::Other(k) => k,
        }
    }
}

/// A file that could not be parsed at all.
#[derive(Debug, Clone)]
pub struct SyntaxError {
    pub message: String,
    pub span: Span,
}

pub fn parse(text: &str, format: Format) -> Result<Node<'_>, SyntaxError> {
    match format {
        Format::Toml => parse_toml(text),
        Format::Yaml => parse_yaml(text),
        Format::Json => parse_json(text),
    }
}

// ---------------------------------------------------------------- TOML

fn parse_toml(text: &str) -> Result<Node<'_>, SyntaxError> {
    match toml::de::DeTable::parse(text) {
        Ok(table) => {
            let span = table.span();
            Ok(Node { span: Span::new(span.start, span.end), value: toml_table(table.into_inner()) })
        }
        Err(e) => {
            let span = e.span().unwrap_or(0..0);
            let message = e.message().trim_end().to_string();
            Err(SyntaxError { message, span: Span::new(span.start, span.end) })
        }
    }
}

fn toml_table(table: toml::de::DeTable<'_>) -> Value<'_> {
    let mut entries = Vec::with_capacity(table.len());
    for (k, v) in table {
        let ks = k.span();
        entries.push(Entry { key: k.into_inner(), key_span: Span::new(ks.start, ks.end), value: toml_node(v) });
    }
    Value::Table(entries)
}

fn toml_node(v: toml::Spanned<toml::de::DeValue<'_>>) -> Node<'_> {
    use toml::de::DeValue;
    let s = v.span();
    let span = Span::new(s.start, s.end);
    let value = match v.into_inner() {
        DeValue::String(s) => Value::Str(s),
        DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
            Ok(n) => Value::Int(n),
            Err(_) => Value::Other("an integer out of range"),
        },
        DeValue::Float(f) => match f.as_str().parse::<f64>() {
            Ok(x) => Value::Float(x),
            Err(_) => Value::Other("a float"),
        },
        DeValue::Boolean(b) => Value::Bool(b),
        DeValue::Datetime(_) => Value::Other("a datetime"),
        DeValue::Array(a) => Value::Array(a.into_iter().map(toml_node).collect()),
        DeValue::Table(t) => toml_table(t),
    };
    Node { span, value }
}

// ---------------------------------------------------------------- JSON

fn parse_json(text: &str) -> Result<Node<'_>, SyntaxError> {
    use jsonc_parser::{CollectOptions, ParseOptions, parse_to_ast};
    // An empty file is an empty document, as it is in TOML and YAML.
    if text.trim().is_empty() {
        return Ok(Node { span: Span::new(0, 0), value: Value::Null });
    }
    // Plain JSON: none of the JSONC/JSON5 leniencies, so a file that llmgw
    // accepts is one every other JSON tool accepts too.
    let options = ParseOptions {
        allow_comments: false,
        allow_loose_object_property_names: false,
        allow_trailing_commas: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    };
    match parse_to_ast(text, &CollectOptions::default(), &options) {
        Ok(result) => match result.value {
            Some(v) => Ok(json_node(v)),
            None => Err(SyntaxError { message: "the file holds no JSON value".into(), span: Span::new(0, 0) }),
        },
        Err(e) => {
            let r = e.range();
            Err(SyntaxError { message: e.kind().to_string(), span: Span::new(r.start, r.end) })
        }
    }
}

fn json_node(v: jsonc_parser::ast::Value<'_>) -> Node<'_> {
    use jsonc_parser::ast::Value as J;
    let (span, value) = match v {
        J::StringLit(s) => (s.range, Value::Str(s.value)),
        J::NumberLit(n) => {
            let value = if let Ok(i) = n.value.parse::<i64>() {
                Value::Int(i)
            } else if n.value.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
                Value::Other("an integer out of range")
            } else {
                n.value.parse::<f64>().map_or(Value::Other("a number"), Value::Float)
            };
            (n.range, value)
        }
        J::BooleanLit(b) => (b.range, Value::Bool(b.value)),
        J::NullKeyword(n) => (n.range, Value::Null),
        J::Array(a) => (a.range, Value::Array(a.elements.into_iter().map(json_node).collect())),
        J::Object(o) => {
            let entries = o
                .properties
                .into_iter()
                .map(|p| {
                    let (key, key_span) = match p.name {
                        jsonc_parser::ast::ObjectPropName::String(s) => (s.value, s.range),
                        jsonc_parser::ast::ObjectPropName::Word(w) => (Cow::Borrowed(w.value), w.range),
                    };
                    Entry { key, key_span: Span::new(key_span.start, key_span.end), value: json_node(p.value) }
                })
                .collect();
            (o.range, Value::Table(entries))
        }
    };
    Node { span: Span::new(span.start, span.end), value }
}

// ---------------------------------------------------------------- YAML

#[cfg(test)]
mod tests {
    use super::*;

    fn table<'a>(n: &'a Node<'a>) -> &'a [Entry<'a>] {
        match &n.value {
            Value::Table(t) => t,
            other => panic!("not a table: {other:?}"),
        }
    }

    #[test]
    fn toml_spans_are_bytes() {
        let text = "a = \"é\"\nb = 3\n";
        let root = parse(text, Format::Toml).unwrap();
        let t = table(&root);
        let b = t.iter().find(|e| e.key == "b").unwrap();
        assert_eq!(&text[b.value.span.start..b.value.span.end], "3");
    }

    #[test]
    fn yaml_spans_are_bytes_after_multibyte_text() {
        let text = "a: \"é€\"\nb: 3\n";
        let root = parse(text, Format::Yaml).unwrap();
        let t = table(&root);
        assert_eq!(&text[t[1].key_span.start..t[1].key_span.end], "b");
        assert_eq!(&text[t[1].value.span.start..t[1].value.span.end], "3");
        assert!(matches!(t[1].value.value, Value::Int(3)));
    }

    #[test]
    fn json_spans_are_bytes_after_multibyte_text() {
        let text = "{\"a\": \"é€\", \"b\": 3}";
        let root = parse(text, Format::Json).unwrap();
        let t = table(&root);
        assert_eq!(&text[t[1].value.span.start..t[1].value.span.end], "3");
    }

    #[test]
    fn yaml_plain_scalars_resolve_by_core_schema() {
        let root = parse("a: 1\nb: '1'\nc: true\nd: ~\ne: 1.5\nf: x1\n", Format::Yaml).unwrap();
        let kinds: Vec<_> = table(&root).iter().map(|e| e.value.value.kind()).collect();
        assert_eq!(kinds, ["an integer", "a string", "a boolean", "null", "a float", "a string"]);
    }

    #[test]
    fn yaml_aliases_copy_the_anchored_value() {
        let root = parse("a: &x {k: v}\nb: *x\n", Format::Yaml).unwrap();
        assert!(matches!(&table(&root)[1].value.value, Value::Table(t) if t.len() == 1));
    }

    #[test]
    fn yaml_aliases_may_not_grow_a_document_tenfold() {
        use std::fmt::Write as _;
        let mut laughs =
            String::from("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
        for (prev, name) in
            ["a", "b", "c", "d", "e", "f", "g", "h"].iter().zip(["b", "c", "d", "e", "f", "g", "h", "i"])
        {
            let refs = vec![format!("*{prev}"); 9].join(",");
            let _ = writeln!(laughs, "{name}: &{name} [{refs}]");
        }
        let e = parse(&laughs, Format::Yaml).unwrap_err();
        assert!(e.message.contains("aliases expand"), "{e:?}");
        // Ordinary reuse stays well inside the budget.
        let root = parse("base: &b {zone: a, rack: r1}\nx: *b\ny: *b\nz: *b\n", Format::Yaml).unwrap();
        assert_eq!(table(&root).len(), 4);
    }

    #[test]
    fn syntax_errors_carry_a_span() {
        for (text, f) in [("a = [", Format::Toml), ("{\"a\": }", Format::Json), ("a: [1,\n", Format::Yaml)] {
            let e = parse(text, f).unwrap_err();
            assert!(e.span.end <= text.len(), "{f:?}: {e:?}");
            assert!(!e.message.is_empty());
        }
    }
}
