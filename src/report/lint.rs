//! `lint` output: miette reports, a JSON list, or GitHub annotations.

use serde::Serialize;
use std::fmt::Write as _;

use crate::diag::{Diag, Severity};

#[derive(Serialize)]
struct LintDoc<'a> {
    diagnostics: Vec<DiagJson<'a>>,
    errors: usize,
    warnings: usize,
}

#[derive(Serialize)]
struct DiagJson<'a> {
    severity: &'static str,
    code: &'static str,
    message: &'a str,
    file: Option<&'a str>,
    line: Option<usize>,
    col: Option<usize>,
    /// Byte offset and length of the primary span.
    offset: Option<usize>,
    length: Option<usize>,
    help: Option<&'a str>,
}

fn severity(d: &Diag) -> &'static str {
    match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// The reports, then "1 catalog: 0 errors, 2 warnings" (or "3 files").
pub fn human(diags: &[Diag], files: usize, noun: &str, colour: bool) -> String {
    let errors = diags.iter().filter(|d| d.is_error()).count();
    let warnings = diags.len() - errors;
    let mut text = super::diagnostics::render(diags, colour);
    let _ = writeln!(
        text,
        "{files} {noun}{}: {errors} error{}, {warnings} warning{}",
        if files == 1 { "" } else { "s" },
        if errors == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" },
    );
    text
}

pub fn json<W: std::io::Write>(out: W, diags: &[Diag]) -> std::io::Result<()> {
    let doc = LintDoc {
        diagnostics: diags
            .iter()
            .map(|d| {
                let lc = d.line_col();
                DiagJson {
                    severity: severity(d),
                    code: d.code.as_str(),
                    message: &d.message,
                    file: d.file(),
                    line: lc.map(|x| x.0),
                    col: lc.map(|x| x.1),
                    offset: d.primary().map(|s| s.start),
                    length: d.primary().map(|s| s.end - s.start),
                    help: d.help.as_deref(),
                }
            })
            .collect(),
        errors: diags.iter().filter(|d| d.is_error()).count(),
        warnings: diags.iter().filter(|d| !d.is_error()).count(),
    };
    crate::json::write_json(out, &doc)
}

/// GitHub workflow commands: `::error file=F,line=L,col=C::message`.
pub fn github(diags: &[Diag]) -> String {
    let mut out = String::new();
    for d in diags {
        let mut props = Vec::new();
        if let Some(f) = d.file() {
            props.push(format!("file={}", escape_property(f)));
        }
        if let Some((line, col)) = d.line_col() {
            props.push(format!("line={line}"));
            props.push(format!("col={col}"));
        }
        // GitHub's form: `::error file=F,line=L,col=C::message`; the code goes at
        // the end of the message, where the annotation shows it.
        let mut message = format!("{} [{}]", d.message, d.code.as_str());
        if let Some(h) = &d.help {
            message.push('\n');
            message.push_str(h);
        }
        let _ = writeln!(out, "::{} {}::{}", severity(d), props.join(","), escape_data(&message));
    }
    out
}

fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_escapes_data_and_properties() {
        assert_eq!(escape_data("50% done\nnext"), "50%25 done%0Anext");
        assert_eq!(escape_property("a:b,c"), "a%3Ab%2Cc");
    }
}
