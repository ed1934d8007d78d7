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
    /// Of a key given twice, the last is the record's own (a job: words a
    /// user wrote in a free field come before Slurm's field); else the first.
    last_wins: bool,
}

impl TextRecord {
    fn field(&self, key: &str) -> Option<&(String, Span, Span)> {
        if self.last_wins {
            self.fields.iter().rev().find(|f| f.0 == key)
        } else {
            self.fields.iter().find(|f| f.0 == key)
        }
    }

    /// A field's value (of a key given twice, see `last_wins`).
    pub fn get<'t>(&self, src: &'t str, key: &str) -> Option<&'t str> {
        self.field(key).map(|f| &src[f.2.start..f.2.end])
    }

    pub fn span_of(&self, key: &str) -> Option<Span> {
        self.field(key).map(|f| f.1)
    }
}

/// A key: what comes before the first `=` of a word, made of the
/// characters Slurm's keys use (`CPUs/Task`, `AllocNode:Sid`, `GRES_IDX`).
fn key_len(word: &str) -> Option<usize> {
    word.find('=')
        .filter(|&k| k > 0 && word[..k].bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b':' | b'/')))
}

/// Where a record's free text is: fields whose value is whatever the user
/// set (a job's name, command, comment, output paths) and so may hold
/// words that read like `Key=value`. Slurm prints them in a fixed order,
/// each on a line of its own without `-o` and one after another with it:
/// a free field's value runs to the end of its line, or to the first word
/// that starts a field Slurm prints after it. From `tail` on, only the
/// keys Slurm prints from there on start a field (a comment saying
/// `Nodes=gpu01 GRES=gpu:h100:8(IDX:0-7)` is words of the comment, never a
/// node of the job's).
pub struct Layout {
    /// Each free field and the keys that may follow it.
    pub free: &'static [(&'static str, &'static [&'static str])],
    /// The key that opens the tail, and the keys printed from there on.
    pub tail: Option<(&'static str, &'static [&'static str])>,
    /// A free field printed first and the key Slurm prints right after it
    /// (`JobName` and `UserId`): what it says may hold that key too, so
    /// the field runs to the last such key before the tail: anything the
    /// user wrote comes before Slurm's own.
    pub head: Option<(&'static str, &'static str)>,
}

/// No free text: every `Key=` word starts a field.
pub const PLAIN: Layout = Layout { free: &[], tail: None, head: None };

/// The records of a text, each starting at a line whose first word is
/// `lead=`. A line before the first record is an error.
pub fn records(src: &Source, lead: &str, help: &str) -> Result<Vec<TextRecord>, Vec<Diag>> {
    records_in(src, lead, help, &PLAIN)
}

/// `records`, reading free text where `layout` says it is.
pub fn records_in(src: &Source, lead: &str, help: &str, layout: &Layout) -> Result<Vec<TextRecord>, Vec<Diag>> {
    let text = src.text();
    let mut out: Vec<TextRecord> = Vec::new();
    let mut errors = crate::import::Problems::default();
    let mut in_tail = false;
    // Where in the tail's order the last field read is.
    let mut tail_at: Option<usize> = None;
    for (line_no, line) in crate::import::lines(text).into_iter().enumerate() {
        let body = &text[line.start..line.end];
        let trimmed = body.trim_start();
        if trimmed.trim().is_empty() {
            continue;
        }
        let starts = trimmed.strip_prefix(lead).is_some_and(|r| r.starts_with('='));
        if starts {
            out.push(TextRecord { span: line, fields: Vec::new(), last_wins: layout.tail.is_some() });
            in_tail = false;
            tail_at = None;
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
        // The keys that end the free field being read, if one is.
        let mut free: Option<&[&str]> = None;
        for word in body.split([' ', '\t']) {
            let start = pos;
            pos += word.len() + 1;
            if word.is_empty() {
                continue;
            }
            let end = start + word.len();
            // In the tail, only a key Slurm prints after the last one.
            let order = |key: &str| layout.tail.and_then(|(_, keys)| keys.iter().position(|k| *k == key));
            // Without `-o` Slurm starts a line with a field of its own: the
            // first word of a record's line is a field whatever came before.
            let line_start = !field_on_line && !starts;
            let key = key_len(word).filter(|&k| {
                let key = &word[..k];
                line_start
                    || free.is_none_or(|ends| ends.contains(&key))
                        && (!in_tail || order(key).is_some_and(|i| tail_at.is_none_or(|at| i > at)))
            });
            match key {
                Some(k) => {
                    let key = &word[..k];
                    // A field Slurm prints only in the tail is free text
                    // only there: before it, a job name's `Comment=...` must
                    // not swallow the job's own fields.
                    let free_here = in_tail || order(key).is_none() || layout.tail.is_some_and(|(t, _)| t == key);
                    free = layout.free.iter().find(|(f, _)| *f == key && free_here).map(|(_, ends)| *ends);
                    in_tail |= layout.tail.is_some_and(|(t, _)| t == key);
                    if in_tail {
                        tail_at = order(key);
                    }
                    rec.fields.push((key.to_string(), Span::new(start, end), Span::new(start + k + 1, end)));
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
    if let Some((opener, keys)) = layout.tail {
        out.iter_mut().for_each(|r| words_before_tail(r, opener, keys));
    }
    if let Some((name, next)) = layout.head {
        let tail = layout.tail.map(|t| t.0);
        out.iter_mut().for_each(|r| join_head(r, name, next, tail));
    }
    errors.into_result()?;
    Ok(out)
}

/// The keys `scontrol show job` prints from `Command=` on, in its order
/// (Slurm 19.05 to 25.11, src/scontrol/info_job.c, formerly
/// src/api/job_info.c): the per-node `Nodes=` lines and every field llmgw
/// reads but `Comment` and `TresPerNode` come before them.
const TAIL: &[&str] = &[
    "Command",
    "SubmitLine",
    "WorkDir",
    "AdminComment",
    "SystemComment",
    "Comment",
    "Extra",
    "StdErr",
    "StdIn",
    "StdOut",
    "SegmentSize",
    "SpreadSegments",
    "ConsolidateSegments",
    "Switches",
    "BurstBuffer",
    "BurstBufferState",
    "CpuFreqMin",
    "CpuFreqMax",
    "CpuFreqGov",
    "GresAllowTaskSharing",
    "GresEnforceBind",
    "GresOneTaskPerSharing",
    "KillOnInvalidDependent",
    "KillOInInvalidDependent",
    "SpreadJob",
    "OOMKillStep",
    "Power",
    "CpusPerTres",
    "MemPerTres",
    "TresBind",
    "TresFreq",
    "TresPerJob",
    "TresPerNode",
    "TresPerSocket",
    "TresPerTask",
    "NtasksPerTRES",
    "MailUser",
    "MailType",
    "ResvPorts",
    "SELinuxContext",
    "ExpeditedRequeue",
    "Container",
    "ContainerID",
    "Runtime",
];

/// The fields of a job a user sets freely, and the keys that may follow
/// each: its name (then `UserId=`), and from the tail those whose value
/// is text.
static JOB_FREE: std::sync::LazyLock<Vec<(&'static str, &'static [&'static str])>> = std::sync::LazyLock::new(|| {
    let mut free: Vec<(&str, &[&str])> = vec![("JobName", &["UserId"])];
    for (i, key) in TAIL.iter().enumerate() {
        if matches!(
            *key,
            "Command"
                | "SubmitLine"
                | "WorkDir"
                | "AdminComment"
                | "SystemComment"
                | "Comment"
                | "Extra"
                | "StdErr"
                | "StdIn"
                | "StdOut"
                | "MailUser"
                | "Container"
        ) {
            free.push((key, &TAIL[i + 1..]));
        }
    }
    free
});

/// Where a `scontrol show job` record's free text is.
pub fn job_layout() -> Layout {
    Layout { free: &JOB_FREE, tail: Some(("Command", TAIL)), head: Some(("JobName", "UserId")) }
}

/// In a record whose tail opens (`Command=`), a key Slurm prints only in
/// the tail but found before it is words of the field before it: a job
/// named `j Comment=llmgw.io/model=m` has no comment of that name.
fn words_before_tail(r: &mut TextRecord, opener: &str, keys: &[&str]) {
    let Some(open) = r.fields.iter().position(|f| f.0 == opener) else { return };
    let mut i = 1;
    let mut open = open;
    while i < open {
        if keys.contains(&r.fields[i].0.as_str()) {
            let end = r.fields[i].1.end;
            r.fields[i - 1].1.end = end;
            r.fields[i - 1].2.end = end;
            r.fields.remove(i);
            open -= 1;
        } else {
            i += 1;
        }
    }
}

/// Makes field `name` run to the last `next` before the tail: the fields
/// between are words of its value (`JobName=x UserId=alice(1000)
/// Nodes=gpu02` as a job's name is a name, not a user and a node).
fn join_head(r: &mut TextRecord, name: &str, next: &str, tail: Option<&str>) {
    let Some(first) = r.fields.iter().position(|f| f.0 == name) else { return };
    let end = r.fields.iter().position(|f| Some(f.0.as_str()) == tail).unwrap_or(r.fields.len());
    let Some(last) = r.fields[..end].iter().rposition(|f| f.0 == next) else { return };
    if last > first + 1 {
        let upto = r.fields[last - 1].1.end;
        r.fields[first].1.end = upto;
        r.fields[first].2.end = upto;
        r.fields.drain(first + 1..last);
    }
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
    fn a_node_keeps_its_first_field_and_a_job_its_last() {
        // An admin's reason that reads like a state does not change the node's.
        let text = "NodeName=a State=DOWN Reason=bad State=IDLE\n";
        let src = crate::diag::source("n.txt", text.to_string());
        let r = &records(&src, "NodeName", "").unwrap()[0];
        assert_eq!(r.get(text, "State"), Some("DOWN"));
        // In a job, words in its command come before Slurm's own comment.
        let text = "JobId=1 JobName=x\n   UserId=a(1)\n   Command=/x Comment=fake\n   WorkDir=/w\n   Comment=real\n";
        let src = crate::diag::source("j.txt", text.to_string());
        let r = &records_in(&src, "JobId", "", &job_layout()).unwrap()[0];
        assert_eq!(r.get(text, "Comment"), Some("real"));
    }

    #[test]
    fn a_line_before_any_record_is_an_error() {
        let src = crate::diag::source("n.txt", "hello\nNodeName=a\n".to_string());
        assert!(records(&src, "NodeName", "").is_err());
    }
}
