//! Diagnostics as miette reports, bounded whatever the input.
//!
//! miette reads its excerpt straight from the source: a report about a
//! 200 MB one-line JSON file would copy the whole line, panic past column
//! 65,535, and print whatever escape sequences the file holds. So each
//! report gets its own small excerpt: the lines around its labels, each long
//! line cut to a window around the label, control characters escaped, and
//! the real line and column numbers kept. The cost of a report depends on
//! the excerpt, not on the file.

use std::fmt::{self, Write as _};

use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents, SourceCode,
    SourceSpan, SpanContents,
};

use crate::diag::{Diag, Severity};
use crate::doc::Span;
use crate::source::SourceFile;
use crate::term::{escape, escape_except, escaped_len};

/// Reports rendered per file; the rest are counted.
pub const PER_FILE: usize = 100;
/// A label over more lines than this is shown by its first line.
const MAX_LABEL_LINES: usize = 8;
/// Lines longer than this are cut to a window around their labels.
const MAX_LINE: usize = 160;
/// Bytes shown before a label's start on a cut line, and at most in all.
const LEAD: usize = 40;
const WINDOW: usize = 120;

/// Prints diagnostics (warnings, or why the input was unusable) on stderr.
pub fn eprint(diags: &[Diag]) {
    if !diags.is_empty() {
        eprint!("{}", render(diags, crate::term::colour_for_stderr()));
    }
}

/// Renders diagnostics as miette reports, in the order given: at most
/// `PER_FILE` of each file, then a line saying how many more there are.
pub fn render(diags: &[Diag], colour: bool) -> String {
    let theme = if colour { GraphicalTheme::unicode() } else { GraphicalTheme::unicode_nocolor() };
    let handler = GraphicalReportHandler::new_themed(theme).with_width(crate::term::stderr_width()).with_links(false);
    let mut out = String::new();
    let mut shown: Vec<(Option<&str>, usize)> = Vec::new();
    for d in diags {
        let file = d.file();
        let i = match shown.iter().position(|(f, _)| *f == file) {
            Some(i) => i,
            None => {
                shown.push((file, 0));
                shown.len() - 1
            }
        };
        shown[i].1 += 1;
        if file.is_some() && shown[i].1 > PER_FILE {
            continue;
        }
        // Rendering into a String cannot fail short of a formatter bug.
        let _ = handler.render_report(&mut out, &Shown::new(d));
        out.push('\n');
    }
    for (file, count) in shown {
        if let (Some(file), true) = (file, count > PER_FILE) {
            let more = count - PER_FILE;
            let _ = writeln!(
                out,
                "  and {more} more {} in {} (the first {PER_FILE} are shown)\n",
                if more == 1 { "problem" } else { "problems" },
                escape(file)
            );
        }
    }
    out
}

/// One diagnostic as it is shown: its texts escaped, its labels moved into
/// its own excerpt.
struct Shown {
    severity: Severity,
    code: &'static str,
    message: String,
    help: Option<String>,
    excerpt: Option<Excerpt>,
    labels: Vec<(Span, Option<String>)>,
}

impl Shown {
    fn new(d: &Diag) -> Self {
        let text = |s: &str| escape_except(s, &['\n']).into_owned();
        let (excerpt, spans) = match &d.src {
            Some(src) if !d.labels.is_empty() => {
                let (e, spans) = Excerpt::build(src, &d.labels);
                (Some(e), spans)
            }
            _ => (None, Vec::new()),
        };
        let labels = spans
            .into_iter()
            .zip(&d.labels)
            .map(|(span, (_, label))| (span, (!label.is_empty()).then(|| text(label))))
            .collect();
        Shown {
            severity: d.severity,
            code: d.code.as_str(),
            message: text(&d.message),
            help: d.help.as_deref().map(text),
            excerpt,
            labels,
        }
    }
}

impl fmt::Debug for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Display for Shown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Shown {}

impl Diagnostic for Shown {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.code))
    }
    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }
    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help.as_ref().map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.excerpt.as_ref().map(|e| e as &dyn SourceCode)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        self.excerpt.as_ref()?;
        Some(Box::new(self.labels.iter().enumerate().map(|(i, (span, label))| {
            let span: SourceSpan = (*span).into();
            if i == 0 {
                LabeledSpan::new_primary_with_span(label.clone(), span)
            } else {
                LabeledSpan::new_with_span(label.clone(), span)
            }
        })))
    }
}

/// The lines a report shows, as a small text of its own: runs of whole
/// lines of the file (segments), each line escaped and perhaps cut.
struct Excerpt {
    name: String,
    text: String,
    segments: Vec<Segment>,
    /// Where each label starts in `text`, with its real 0-based line and
    /// column, for the `[file:line:col]` header.
    origins: Vec<(usize, usize, usize)>,
}

struct Segment {
    start: usize,
    end: usize,
    /// The file's 0-based line number of the segment's first line.
    first_line: usize,
}

/// One label's place in the file, clipped to what the report shows.
struct Placed {
    start: usize,
    end: usize,
    start_line: usize,
    end_line: usize,
}

impl Excerpt {
    fn build(src: &SourceFile, labels: &[(Span, String)]) -> (Excerpt, Vec<Span>) {
        let text = src.text();
        // Spans from the parsers fall on character boundaries; any other is
        // moved back to one rather than trusted.
        let boundary = |mut p: usize| {
            p = p.min(text.len());
            while !text.is_char_boundary(p) {
                p -= 1;
            }
            p
        };
        let placed: Vec<Placed> = labels
            .iter()
            .map(|(span, _)| {
                let start = boundary(span.start);
                let mut end = boundary(span.end.max(start));
                let start_line = src.line_of(start);
                let mut end_line = if end > start { src.line_of(end - 1) } else { start_line };
                if end_line - start_line > MAX_LABEL_LINES {
                    end_line = start_line;
                    end = end.min(src.line_span(start_line).end).max(start);
                }
                Placed { start, end, start_line, end_line }
            })
            .collect();

        // The lines to show: each label's, one more on either side, merged.
        let last = src.line_count().saturating_sub(1);
        let mut ranges: Vec<(usize, usize)> =
            placed.iter().map(|p| (p.start_line.saturating_sub(1), (p.end_line + 1).min(last))).collect();
        ranges.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::new();
        for (a, b) in ranges {
            match merged.last_mut() {
                Some(m) if a <= m.1 + 1 => m.1 = m.1.max(b),
                _ => merged.push((a, b)),
            }
        }

        let mut text = String::new();
        let mut segments = Vec::new();
        let mut virt = vec![(0usize, 0usize); placed.len()];
        for (first, mut last) in merged {
            // The "line" after a final line break is no line to show.
            let labelled = |l: usize| placed.iter().any(|p| p.start_line <= l && l <= p.end_line);
            if last > first && !labelled(last) && src.line_span(last).start == src.text().len() {
                last -= 1;
            }
            let start = text.len();
            for line in first..=last {
                let ls = src.line_span(line);
                let window = window(src.text(), ls, &placed, line);
                let line_start = text.len();
                if window.start > ls.start {
                    text.push('…');
                }
                let shown_from = text.len();
                text.push_str(&escape(&src.text()[window.start..window.end]));
                let shown_to = text.len();
                if window.end < ls.end {
                    text.push('…');
                }
                text.push('\n');
                // Each label end on this line, moved into the excerpt.
                let at = |p: usize| -> usize {
                    if p <= window.start {
                        if window.start > ls.start { shown_from } else { line_start }
                    } else if p >= window.end {
                        shown_to
                    } else {
                        shown_from + escaped_len(&src.text()[window.start..p])
                    }
                };
                for (i, p) in placed.iter().enumerate() {
                    if p.start_line == line {
                        virt[i].0 = at(p.start);
                    }
                    if p.end_line == line {
                        virt[i].1 = at(p.end.min(ls.end));
                    }
                }
            }
            segments.push(Segment { start, end: text.len(), first_line: first });
        }
        let spans: Vec<Span> = virt.iter().map(|&(a, b)| Span::new(a, b)).collect();
        let origins = placed
            .iter()
            .zip(&spans)
            .map(|(p, v)| {
                let (line, col) = src.line_col(p.start);
                (v.start, line - 1, col - 1)
            })
            .collect();
        (Excerpt { name: escape(src.name()).into_owned(), text, segments, origins }, spans)
    }
}

/// The part of a line shown: all of it when short, else a window that
/// starts a little before the first label starting on it.
fn window(text: &str, line: Span, placed: &[Placed], n: usize) -> Span {
    if line.end - line.start <= MAX_LINE {
        return line;
    }
    let anchor = placed.iter().filter(|p| p.start_line == n).map(|p| p.start).min().unwrap_or(line.start);
    let mut start = anchor.saturating_sub(LEAD).max(line.start);
    let mut end = (start + WINDOW).min(line.end);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    while !text.is_char_boundary(end) {
        end += 1;
    }
    Span::new(start, end)
}

impl SourceCode for Excerpt {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let (offset, end) = (span.offset(), span.offset() + span.len());
        let seg = self.segments.iter().find(|s| s.start <= offset && end <= s.end).ok_or(MietteError::OutOfBounds)?;
        let local = &self.text.as_bytes()[seg.start..seg.end];
        let inner = local.read_span(&SourceSpan::new((offset - seg.start).into(), span.len()), before, after)?;
        let column = match self.origins.iter().find(|o| o.0 == offset) {
            Some(&(_, _, col)) if before == 0 => col,
            _ => inner.column(),
        };
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            SourceSpan::new((seg.start + inner.span().offset()).into(), inner.span().len()),
            seg.first_line + inner.line(),
            column,
            seg.first_line + inner.line_count(),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::{Code, source};

    fn one(text: String, span: Span) -> String {
        let src = source("f.json", text);
        render(&[Diag::error(Code::UnknownState, "bad").at(&src, span, "here")], false)
    }

    #[test]
    fn a_label_past_column_65535_renders() {
        let text = format!("{{\"id\": \"{}\", \"state\": \"bogus\"}}", "x".repeat(70_000));
        let at = text.find("\"bogus\"").unwrap();
        let out = one(text, Span::new(at, at + 7));
        assert!(out.contains("[f.json:1:70021]"), "{out}");
        assert!(out.contains("\"bogus\""), "{out}");
        assert!(out.len() < 2_000, "{}", out.len());
    }

    #[test]
    fn labels_at_the_ends_of_long_and_many_lines_render() {
        let long = "y".repeat(300_000);
        for (text, span) in [
            (long.clone(), Span::new(0, 0)),
            (long.clone(), Span::new(300_000, 300_000)),
            (long.clone(), Span::new(0, 300_000)),
            (format!("{}\n", "a\n".repeat(100_000)), Span::new(199_998, 199_999)),
            ("a\n".repeat(50), Span::new(0, 100)),
            (String::new(), Span::new(0, 0)),
            ("é€😀".repeat(1000), Span::new(3000, 3004)),
        ] {
            let out = one(text, span);
            assert!(out.contains("bad"), "{out}");
            assert!(out.len() < 4_000, "{}", out.len());
        }
    }

    #[test]
    fn control_characters_in_excerpts_and_messages_are_escaped() {
        let text = "id = \"a\x1b]0;pwned\x07\"\nstate = \"\x1b[31mred\"\n".to_string();
        let src = source("f.toml", text);
        let d = Diag::error(Code::UnknownState, "unknown state `\x1b[31mred`")
            .at(&src, Span::new(29, 40), "not a state\x07")
            .help("one of ready\x1b");
        let out = render(&[d], false);
        assert!(!out.contains('\x1b') && !out.contains('\x07'), "{out:?}");
        assert!(out.contains("\\x1b[31mred"), "{out}");
        assert!(out.contains("f.toml:2:"), "{out}");
    }

    #[test]
    fn at_most_a_hundred_per_file_then_a_count() {
        let src = source("f.toml", "a = 1\n".repeat(300));
        let diags: Vec<Diag> = (0..250)
            .map(|i| Diag::error(Code::WrongType, "wrong").at(&src, Span::new(i * 6, i * 6 + 1), "x"))
            .collect();
        let out = render(&diags, false);
        assert_eq!(out.matches("× wrong").count(), 100);
        assert!(out.contains("and 150 more problems in f.toml"), "{out}");
    }
}
