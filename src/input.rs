//! Input files: each read exactly once, bounded in size, and told apart by
//! extension or, where the name says nothing (`-`, `/dev/fd/63`), by content.
//!
//! Every diagnostic about a file points into the bytes that were parsed, so
//! a pipe or a file replaced while llmgw runs can never be read a second
//! time into something else (an empty fleet, say).

use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use crate::diag::{Code, Diag};
use crate::doc::{Format, Span};

/// The default ceiling on one input file: 1 GiB.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 1 << 30;

static MAX_INPUT_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_MAX_INPUT_BYTES);
static STDIN_TAKEN: AtomicBool = AtomicBool::new(false);

/// Sets the ceiling `--max-input-bytes` asks for, once, at start-up.
pub fn set_max_input_bytes(n: u64) {
    MAX_INPUT_BYTES.store(n, Ordering::Relaxed);
}

pub fn max_input_bytes() -> u64 {
    MAX_INPUT_BYTES.load(Ordering::Relaxed)
}

/// The text of one input file, named as the user gave it.
pub type Source = Arc<SourceFile>;

pub struct SourceFile {
    name: String,
    text: String,
    format: Format,
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
    let text = match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    };
    let format = Format::from_extension(name).unwrap_or_else(|| sniff(&text));
    Arc::new(SourceFile { name: name.to_string(), text, format, lines: OnceLock::new() })
}

impl SourceFile {
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

/// Reads one input file (`-`: standard input), refusing one over the size
/// ceiling, one that is not text, and a second read of standard input.
pub fn read(path: &Path) -> Result<Source, Diag> {
    let stdin = path.as_os_str() == "-";
    let name = if stdin { "<stdin>".to_string() } else { path.display().to_string() };
    let limit = max_input_bytes();
    let cannot = |e: std::io::Error| {
        Diag::error(Code::Io, format!("cannot read {name}: {e}")).help("check the path and its permissions")
    };
    let mut reader: Box<dyn Read> = if stdin {
        if STDIN_TAKEN.swap(true, Ordering::SeqCst) {
            return Err(Diag::error(Code::Io, "standard input (`-`) is named twice")
                .help("standard input can be read only once; save it to a file to use it twice"));
        }
        Box::new(std::io::stdin().lock())
    } else {
        let file = std::fs::File::open(path).map_err(cannot)?;
        let meta = file.metadata().map_err(cannot)?;
        if meta.is_dir() {
            return Err(Diag::error(Code::Io, format!("cannot read {name}: it is a directory"))
                .help("give a TOML, YAML or JSON file"));
        }
        if meta.is_file() && meta.len() > limit {
            return Err(too_large(&name, limit));
        }
        Box::new(file)
    };
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(cannot(e)),
        };
        // No TOML, YAML or JSON file holds a NUL byte: stop at the first
        // one instead of reading on (`/dev/zero` never ends).
        if let Some(at) = memchr::memchr(0, &chunk[..n]) {
            let offset = bytes.len() + at;
            bytes.extend_from_slice(&chunk[..at]);
            let src = source(&name, String::from_utf8_lossy(&bytes).into_owned());
            let end = src.text().len();
            return Err(Diag::error(
                Code::Syntax,
                format!("{name} holds a NUL byte at offset {offset}: it is not text"),
            )
            .at(&src, Span::new(end, end), "NUL byte here")
            .help("catalogs and inventories are UTF-8 TOML, YAML or JSON"));
        }
        if (bytes.len() + n) as u64 > limit {
            return Err(too_large(&name, limit));
        }
        bytes.extend_from_slice(&chunk[..n]);
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(source(&name, text)),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let src = source(&name, String::from_utf8_lossy(e.as_bytes()).into_owned());
            Err(Diag::error(Code::Syntax, format!("{name} is not UTF-8 text"))
                .at(&src, Span::new(at, at + 1), "invalid byte here")
                .help("catalogs and inventories are UTF-8 TOML, YAML or JSON"))
        }
    }
}

fn too_large(name: &str, limit: u64) -> Diag {
    Diag::error(Code::TooLarge, format!("{name} is larger than {} bytes", limit)).help(format!(
        "llmgw reads at most {limit} bytes per file; if this file is meant, raise the limit with --max-input-bytes"
    ))
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
