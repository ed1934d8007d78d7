//! Slurm's `Key=value` text, as `scontrol show node|job` prints it: with
//! `-o` one record a line, without it one record over several indented
//! lines, records apart by blank lines. A record starts at a line whose
//! first word is its leading key (`NodeName=`, `JobId=`); any other line
//! continues the record before it. LF, CRLF and a lone CR all end a line.

use crate::diag::{Code, Diag, Source};
use crate::doc::Span;

/// One record: where it is, and its fields in order (a key may repeat:
/// `scontrol -d show job` gives `Nodes=` and `GRES=` once per node).
pub struct TextRecord {
    pub span: Span,
    /// Key, span of `Key=value`, span of the value.
    pub fields: Vec<(String, Span, Span)>,
}

impl TextRecord {
    pub fn get<'t>(&self, src: &'t str, key: &str) -> Option<&'t str> {
        self.fields.iter().find(|f| f.0 == key).map(|f| &src[f.2.start..f.2.end])
    }

    pub fn span_of(&self, key: &str) -> Option<Span> {
        self.fields.iter().find(|f| f.0 == key).map(|f| f.1)
    }
}

/// A key: what comes before the first `=` of a word, made of the
/// characters Slurm's keys use (`CPUs/Task`, `AllocNode:Sid`, `GRES_IDX`).
fn key_len(word: &str) -> Option<usize> {
    word.find('=')
        .filter(|&k| k > 0 && word[..k].bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b':' | b'/')))
}

/// The records of a text, each starting at a line whose first word is
/// `lead=`. A line before the first record is an error.
pub fn records(src: &Source, lead: &str, help: &str) -> Result<Vec<TextRecord>, Vec<Diag>> {
    let text = src.text();
    let mut out: Vec<TextRecord> = Vec::new();
    let mut errors = crate::import::Problems::default();
    for (line_no, line) in crate::import::lines(text).into_iter().enumerate() {
        let body = &text[line.start..line.end];
        let trimmed = body.trim_start();
        if trimmed.trim().is_empty() {
            continue;
        }
        let starts = trimmed.strip_prefix(lead).is_some_and(|r| r.starts_with('='));
        if starts {
            out.push(TextRecord { span: line, fields: Vec::new() });
        }
        let Some(rec) = out.last_mut() else {
            errors.push(
                Diag::error(Code::MissingField, format!("line {} has no `{lead}=`", line_no + 1))
                    .at(src, line, format!("not a `{lead}=` record"))
                    .help(help.to_string()),
            );
            if errors.full() {
                break;
            }
            continue;
        };
        rec.span.end = line.end;
        // Words are apart by spaces; a word without `Key=` belongs to the
        // field before it on the same line (`OS=Linux 6.8.0 #1 SMP`).
        let mut pos = line.start;
        let mut field_on_line = false;
        for word in body.split([' ', '\t']) {
            let start = pos;
            pos += word.len() + 1;
            if word.is_empty() {
                continue;
            }
            let end = start + word.len();
            match key_len(word) {
                Some(k) => {
                    rec.fields.push((word[..k].to_string(), Span::new(start, end), Span::new(start + k + 1, end)));
                    field_on_line = true;
                }
                None if field_on_line => {
                    if let Some(last) = rec.fields.last_mut() {
                        last.1.end = end;
                        last.2.end = end;
                    }
                }
                None => {}
            }
        }
    }
    errors.into_result()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<Vec<(String, String)>> {
        let src = crate::diag::source("n.txt", text.to_string());
        records(&src, "NodeName", "")
            .unwrap()
            .iter()
            .map(|r| r.fields.iter().map(|f| (f.0.clone(), text[f.2.start..f.2.end].to_string())).collect())
            .collect()
    }

    #[test]
    fn one_line_and_several_lines_read_alike() {
        let one = read("NodeName=a State=IDLE OS=Linux 6.1 #1 SMP\nNodeName=b State=DOWN\n");
        let many = read("NodeName=a\n   State=IDLE\n   OS=Linux 6.1 #1 SMP\n\nNodeName=b\n   State=DOWN\n");
        assert_eq!(one, many);
        assert_eq!(one[0][2], ("OS".to_string(), "Linux 6.1 #1 SMP".to_string()));
    }

    #[test]
    fn every_line_end_reads_alike() {
        let lf = read("NodeName=a State=IDLE\nNodeName=b State=DOWN\n");
        assert_eq!(read("NodeName=a State=IDLE\r\nNodeName=b State=DOWN\r\n"), lf);
        assert_eq!(read("NodeName=a State=IDLE\rNodeName=b State=DOWN\r"), lf);
        assert_eq!(lf.len(), 2);
    }

    #[test]
    fn a_line_before_any_record_is_an_error() {
        let src = crate::diag::source("n.txt", "hello\nNodeName=a\n".to_string());
        assert!(records(&src, "NodeName", "").is_err());
    }
}
