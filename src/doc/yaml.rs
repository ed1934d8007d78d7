//! YAML documents read into the one tree every input format gives, with the
//! span of every value, and with aliases bounded so a small file cannot
//! expand without end.

use super::*;

/// saphyr reports positions in characters; miette wants bytes.
pub(super) struct CharToByte {
    pub(super) table: Option<Vec<usize>>,
    pub(super) len: usize,
}

impl CharToByte {
    pub(super) fn new(text: &str) -> Self {
        let table = if text.is_ascii() {
            None
        } else {
            let mut t: Vec<usize> = text.char_indices().map(|(b, _)| b).collect();
            t.push(text.len());
            Some(t)
        };
        CharToByte { table, len: text.len() }
    }
    pub(super) fn byte(&self, char_index: usize) -> usize {
        match &self.table {
            None => char_index.min(self.len),
            Some(t) => t.get(char_index).copied().unwrap_or(self.len),
        }
    }
    pub(super) fn span(&self, s: saphyr_parser::Span) -> Span {
        Span::new(self.byte(s.start.index()), self.byte(s.end.index()))
    }
}

pub(super) enum Frame<'a> {
    Seq { start: Span, anchor: usize, items: Vec<Node<'a>>, weight: usize },
    Map { start: Span, anchor: usize, entries: Vec<Entry<'a>>, key: Option<(Cow<'a, str>, Span)>, weight: usize },
}

impl<'a> Frame<'a> {
    /// Adds a finished value to the sequence or mapping being built: an item,
    /// a mapping's next key, or the value for the key before it.
    pub(super) fn add(&mut self, node: Node<'a>, weight: usize) -> Result<(), SyntaxError> {
        match self {
            Frame::Seq { items, weight: w, .. } => {
                *w = w.saturating_add(weight);
                items.push(node);
            }
            Frame::Map { entries, key, weight: w, .. } => match key.take() {
                None => {
                    let k = match node.value {
                        Value::Str(s) => s,
                        Value::Int(i) => Cow::Owned(i.to_string()),
                        Value::Bool(b) => Cow::Owned(b.to_string()),
                        Value::Float(f) => Cow::Owned(f.to_string()),
                        Value::Null => Cow::Borrowed(""),
                        other => {
                            return Err(SyntaxError {
                                message: format!("a mapping key must be a plain value, not {}", other.kind()),
                                span: node.span,
                            });
                        }
                    };
                    *key = Some((k, node.span));
                }
                Some((k, key_span)) => {
                    *w = w.saturating_add(weight).saturating_add(weight_of(key_span));
                    entries.push(Entry { key: k, key_span, value: node });
                }
            },
        }
        Ok(())
    }
}

/// How far aliases may grow a YAML document: at most this many times its
/// size ("billion laughs": a few hundred bytes of nested aliases would
/// otherwise expand to gigabytes).
pub const YAML_ALIAS_GROWTH: usize = 10;

/// The size a value stands for once aliases are expanded: its bytes in the
/// file, or for an alias the expanded size of what it names.
pub(super) fn weight_of(span: Span) -> usize {
    (span.end - span.start).max(1)
}

pub(super) fn parse_yaml(text: &str) -> Result<Node<'_>, SyntaxError> {
    use saphyr_parser::{Event, Parser};
    let conv = CharToByte::new(text);
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut anchors: HashMap<usize, (Node<'_>, usize)> = HashMap::new();
    let mut root: Option<Node<'_>> = None;
    let mut documents = 0usize;
    // What aliases have added so far, against what the file may grow by.
    let budget = text.len().max(64).saturating_mul(YAML_ALIAS_GROWTH - 1);
    let mut expanded = 0usize;

    while let Some(item) = parser.next_event() {
        let (event, span) = item.map_err(|e| {
            let at = conv.byte(e.marker().index());
            SyntaxError { message: e.info().to_string(), span: Span::new(at, at) }
        })?;
        let span = conv.span(span);
        let finished: Option<(Node<'_>, usize, usize)> = match event {
            Event::StreamStart | Event::StreamEnd | Event::Nothing | Event::DocumentEnd => None,
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(SyntaxError { message: "expected one YAML document, found a second".into(), span });
                }
                None
            }
            Event::Alias(id) => match anchors.get(&id) {
                Some((n, weight)) => {
                    expanded = expanded.saturating_add(*weight);
                    if expanded > budget {
                        return Err(SyntaxError {
                            message: format!(
                                "aliases expand this document past {YAML_ALIAS_GROWTH} times its size; \
                                 write the repeated values out, or use fewer aliases"
                            ),
                            span,
                        });
                    }
                    Some((Node { span, value: n.value.clone() }, 0, *weight))
                }
                None => {
                    return Err(SyntaxError { message: "alias to an unknown anchor".into(), span });
                }
            },
            Event::Scalar(v, style, anchor, tag) => {
                let value = yaml_scalar(v, style, tag.as_deref());
                Some((Node { span, value }, anchor, weight_of(span)))
            }
            Event::SequenceStart(anchor, _) => {
                stack.push(Frame::Seq { start: span, anchor, items: Vec::new(), weight: 1 });
                None
            }
            Event::MappingStart(anchor, _) => {
                stack.push(Frame::Map { start: span, anchor, entries: Vec::new(), key: None, weight: 1 });
                None
            }
            Event::SequenceEnd => match stack.pop() {
                Some(Frame::Seq { start, anchor, items, weight }) => {
                    let end = items.last().map_or(span.end, |n| n.span.end.max(start.end));
                    Some((Node { span: Span::new(start.start, end), value: Value::Array(items) }, anchor, weight))
                }
                _ => {
                    return Err(SyntaxError { message: "unbalanced sequence".into(), span });
                }
            },
            Event::MappingEnd => match stack.pop() {
                Some(Frame::Map { start, anchor, entries, weight, .. }) => {
                    let end = entries.last().map_or(span.end, |e| e.value.span.end.max(start.end));
                    Some((Node { span: Span::new(start.start, end), value: Value::Table(entries) }, anchor, weight))
                }
                _ => {
                    return Err(SyntaxError { message: "unbalanced mapping".into(), span });
                }
            },
        };
        let Some((node, anchor, weight)) = finished else {
            continue;
        };
        if anchor != 0 {
            anchors.insert(anchor, (node.clone(), weight));
        }
        match stack.last_mut() {
            None => root = Some(node),
            Some(parent) => parent.add(node, weight)?,
        }
    }
    Ok(root.unwrap_or(Node { span: Span::new(0, 0), value: Value::Null }))
}

/// Resolves a YAML scalar by the YAML 1.2 core schema: quoted scalars are
/// strings; plain ones may be null, booleans, integers or floats.
pub(super) fn yaml_scalar<'a>(
    v: Cow<'a, str>,
    style: saphyr_parser::ScalarStyle,
    tag: Option<&saphyr_parser::Tag>,
) -> Value<'a> {
    if style != saphyr_parser::ScalarStyle::Plain {
        return Value::Str(v);
    }
    if let Some(tag) = tag
        && tag.suffix == "str"
    {
        return Value::Str(v);
    }
    let s = v.as_ref();
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Value::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return Value::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Value::Float(f64::NAN),
        _ => {}
    }
    let digits = s.strip_prefix(['-', '+']).unwrap_or(s);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return match s.parse::<i64>() {
            Ok(i) => Value::Int(i),
            Err(_) => Value::Other("an integer out of range"),
        };
    }
    if let Some(hex) = s.strip_prefix("0x")
        && let Ok(i) = i64::from_str_radix(hex, 16)
    {
        return Value::Int(i);
    }
    if let Some(oct) = s.strip_prefix("0o")
        && let Ok(i) = i64::from_str_radix(oct, 8)
    {
        return Value::Int(i);
    }
    let looks_float = digits.bytes().next().is_some_and(|b| b.is_ascii_digit() || b == b'.')
        && digits.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'));
    if looks_float && let Ok(f) = s.parse::<f64>() {
        return Value::Float(f);
    }
    Value::Str(v)
}
