//! What the Kubernetes and Slurm importers share: the input file they read
//! (`file`), the limits that keep their work bounded by the input, MIG
//! profiles and how their devices fill a GPU, line ends, and the cap on how
//! many problems one import collects.
//!
//! An importer reads what a cluster prints, and what a cluster prints can
//! be wrong, truncated or hostile: a count of 4294967296 GPUs, a hostlist
//! of a billion names. Every count is checked against these limits where
//! it is parsed, before anything is allocated for it.

pub mod file;
pub mod mig;

use crate::diag::{Code, Diag};
use crate::doc::Span;

/// More GPUs than this on one node is a typo or an attack, never a node.
pub const MAX_GPUS_PER_NODE: u64 = 1024;

/// A GPU holds at most seven MIG devices (A100, H100, B200: 7 slices).
pub const MAX_MIG_PER_GPU: u64 = 7;

/// The most names a hostlist expression or a topology may stand for, in
/// all: checked before a name is written out.
pub const MAX_NAMES: u64 = 1 << 20;

/// An import stops collecting problems here: the report shows 100 per
/// file anyway, and a file of four million broken nodes must not keep four
/// million diagnostics in memory.
pub const MAX_PROBLEMS: usize = 100;

/// The errors of one import, capped at `MAX_PROBLEMS`.
#[derive(Default)]
pub struct Problems {
    errors: Vec<Diag>,
    stopped: bool,
}

impl Problems {
    pub fn push(&mut self, d: Diag) {
        if self.errors.len() < MAX_PROBLEMS {
            self.errors.push(d);
        } else if !self.stopped {
            self.stopped = true;
            self.errors.push(
                Diag::error(Code::TooManyProblems, format!("the import stopped after {MAX_PROBLEMS} problems"))
                    .help("fix these first, then import again: a file this wrong is rarely what a cluster printed"),
            );
        }
    }

    pub fn extend(&mut self, ds: impl IntoIterator<Item = Diag>) {
        for d in ds {
            self.push(d);
        }
    }

    /// Whether the import should stop reading: more problems would not be kept.
    pub fn full(&self) -> bool {
        self.stopped
    }

    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    pub fn into_result(self) -> Result<(), Vec<Diag>> {
        if self.errors.is_empty() { Ok(()) } else { Err(self.errors) }
    }
}

/// The lines of a text, without their ends: LF, CRLF and a lone CR (old
/// Mac files, some terminal captures) all end a line.
pub fn lines(text: &str) -> Vec<Span> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                out.push(Span::new(start, i));
                start = i + 1;
            }
            b'\r' => {
                out.push(Span::new(start, i));
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < bytes.len() {
        out.push(Span::new(start, bytes.len()));
    }
    out
}

/// Whether an input holds nothing at all: no bytes, or only blanks. An
/// import of it would be an empty fleet, which is never what a cluster
/// printed (a failed command piped in, a file truncated to nothing).
pub fn is_blank(text: &str) -> bool {
    text.trim().is_empty()
}

/// The diagnostic for an input with nothing in it.
pub fn empty_input(src: &crate::diag::Source, command: &str) -> Diag {
    Diag::error(Code::EmptyInput, format!("{} is empty: there is no node to import", src.name()))
        .at(src, Span::new(0, src.text().len()), "nothing here")
        .help(format!(
            "give what `{command}` prints; an empty input is most often a command that failed before the pipe"
        ))
}

/// A node id a script can carry: no control characters (ids end up in
/// file names, job scripts and terminal output).
pub fn control_in_id(id: &str) -> Option<char> {
    id.chars().find(|c| c.is_control())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_end_ends_a_line() {
        let text = "a\nb\r\nc\rd";
        let got: Vec<&str> = lines(text).iter().map(|s| &text[s.start..s.end]).collect();
        assert_eq!(got, ["a", "b", "c", "d"]);
        assert_eq!(lines("a\n\nb\n").len(), 3);
        assert!(lines("").is_empty());
    }

    #[test]
    fn problems_stop_at_the_cap() {
        let mut p = Problems::default();
        for _ in 0..1000 {
            p.push(Diag::error(Code::Syntax, "x"));
        }
        assert!(p.full());
        assert_eq!(p.into_result().unwrap_err().len(), MAX_PROBLEMS + 1);
    }
}
