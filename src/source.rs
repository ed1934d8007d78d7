//! The text of an input file, as it was read: its name, its format, and a
//! line index built on first use so that any number of diagnostics find
//! their line and column in time independent of the file's size.

use std::sync::{Arc, OnceLock};

use crate::doc::{Format, Span};

/// The text of one input file, named as the user gave it.
pub type Source = Arc<SourceFile>;

pub struct SourceFile {
    name: String,
    text: String,
    format: Format,
    /// The file began with a byte-order mark, dropped from `text`.
    bom: bool,
    lines: OnceLock<LineIndex>,
}

impl std::fmt::Debug for SourceFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceFile").field("name", &self.name).field("bytes", &self.text.len()).finish()
    }
}

/// A source from text already in memory: the format follows the name's
/// extension, else the content. A leading byte-order mark is dropped, so
/// the three syntaxes treat one alike.
pub fn source(name: &str, text: String) -> Source {
    let (text, bom) = match text.strip_prefix('\u{feff}') {
        Some(rest) => (rest.to_string(), true),
        None => (text, false),
    };
    let format = Format::from_extension(name).unwrap_or_else(|| sniff(&text));
    Arc::new(SourceFile { name: name.to_string(), text, format, bom, lines: OnceLock::new() })
}

impl SourceFile {
    /// Feeds the bytes as they were read (a byte-order mark included) to
    /// a digest: plans record what they were made from.
    pub fn digest_into(&self, d: &mut impl sha2::Digest) {
        if self.bom {
            d.update("\u{feff}".as_bytes());
        }
        d.update(self.text.as_bytes());
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn text(&self) -> &str {
        &self.text
    }
    pub fn format(&self) -> Format {
        self.format
    }

    fn index(&self) -> &LineIndex {
        self.lines.get_or_init(|| LineIndex::new(&self.text))
    }

    /// 0-based line of a byte offset.
    pub fn line_of(&self, offset: usize) -> usize {
        let starts = &self.index().starts;
        starts.partition_point(|&s| s <= offset.min(self.text.len())).saturating_sub(1)
    }

    /// Byte range of a 0-based line, without its line break.
    pub fn line_span(&self, line: usize) -> Span {
        let starts = &self.index().starts;
        let start = starts.get(line).copied().unwrap_or(self.text.len());
        let mut end = starts.get(line + 1).map_or(self.text.len(), |&next| next - 1);
        if end > start && self.text.as_bytes()[end - 1] == b'\r' {
            end -= 1;
        }
        Span::new(start, end.max(start))
    }

    pub fn line_count(&self) -> usize {
        self.index().starts.len()
    }

    /// Characters in `text[..offset]`, in time independent of the offset.
    fn chars_before(&self, offset: usize) -> usize {
        let bytes = self.text.as_bytes();
        let offset = offset.min(bytes.len());
        match &self.index().char_marks {
            None => offset,
            Some(marks) => {
                let block = offset / CHAR_BLOCK;
                marks[block] + count_chars(&bytes[block * CHAR_BLOCK..offset])
            }
        }
    }

    /// 1-based line and column (in characters) of a byte offset; fast for
    /// any number of calls, so a file with 100,000 problems stays linear.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let line = self.line_of(offset);
        let start = self.index().starts[line];
        (line + 1, self.chars_before(offset) - self.chars_before(start) + 1)
    }
}

const CHAR_BLOCK: usize = 4096;

/// Where each line starts and, for non-ASCII text, how many characters come
/// before each 4 KiB block: built once per file, on the first diagnostic.
struct LineIndex {
    starts: Vec<usize>,
    char_marks: Option<Vec<usize>>,
}

impl LineIndex {
    fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', bytes).map(|i| i + 1));
        let char_marks = (!text.is_ascii()).then(|| {
            let mut marks = Vec::with_capacity(bytes.len() / CHAR_BLOCK + 2);
            let mut total = 0;
            marks.push(0);
            for block in bytes.chunks(CHAR_BLOCK) {
                total += count_chars(block);
                marks.push(total);
            }
            marks
        });
        LineIndex { starts, char_marks }
    }
}

/// UTF-8 characters in a byte range: every byte that does not continue one.
fn count_chars(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b & 0xC0) != 0x80).count()
}

/// The byte offset of a 1-based line and column, as serde_json reports
/// them (the column counts bytes), clamped to the text.
pub fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let start = if line <= 1 { 0 } else { text.match_indices('\n').nth(line - 2).map_or(text.len(), |(i, _)| i + 1) };
    (start + column.saturating_sub(1)).min(text.len())
}

/// The format of a file whose name does not say: JSON when the first
/// non-blank character is `{`; TOML when the first line that is neither
/// blank nor a comment is a `[table]` / `[[array]]` header or a
/// `key = value`; else YAML.
pub fn sniff(text: &str) -> Format {
    if text.trim_start().starts_with('{') {
        return Format::Json;
    }
    let Some(first) = text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#')) else {
        return Format::Yaml;
    };
    let key_chars = |s: &str| {
        let s = s.trim();
        !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '"' | '\'' | ' '))
    };
    let header = first
        .strip_prefix('[')
        .map(|rest| rest.split('#').next().unwrap_or("").trim_end())
        .and_then(|rest| rest.strip_suffix(']'))
        .map(|inner| inner.strip_prefix('[').and_then(|i| i.strip_suffix(']')).unwrap_or(inner))
        .is_some_and(key_chars);
    let assignment = first.split_once('=').is_some_and(|(key, rest)| key_chars(key) && !rest.starts_with('='));
    if header || assignment { Format::Toml } else { Format::Yaml }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_told_from_content_when_the_name_says_nothing() {
        assert_eq!(sniff("  {\"node\": []}"), Format::Json);
        assert_eq!(sniff("# fleet\n\n[[node]]\nid = \"a\"\n"), Format::Toml);
        assert_eq!(sniff("[model.x]\n"), Format::Toml);
        assert_eq!(sniff("name = \"x\"\n"), Format::Toml);
        assert_eq!(sniff("\"quoted key\" = 1\n"), Format::Toml);
        assert_eq!(sniff("node:\n  - id: a\n"), Format::Yaml);
        assert_eq!(sniff("[a, b]\n"), Format::Yaml);
        assert_eq!(sniff("key: a=b\n"), Format::Yaml);
        assert_eq!(sniff(""), Format::Yaml);
    }

    #[test]
    fn a_byte_order_mark_is_dropped_in_every_format() {
        for name in ["a.json", "a.toml", "a.yaml"] {
            assert_eq!(source(name, "\u{feff}x".into()).text(), "x");
        }
    }

    #[test]
    fn line_and_column_in_characters_from_the_index() {
        let s = source("a.toml", "ab\ncé d\n".into());
        assert_eq!(s.line_col(7), (2, 4));
        assert_eq!(s.line_col(0), (1, 1));
        assert_eq!(s.line_col(999), (3, 1));
        assert_eq!(s.line_span(1), Span::new(3, 8));
        let long: String = "é".repeat(10_000) + "x";
        let s = source("a.toml", long.clone());
        assert_eq!(s.line_col(long.len() - 1), (1, 10_001));
    }
}
