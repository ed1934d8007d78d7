//! What a renderer hands back, whole: the files it writes, the files of
//! the output folder it leaves as they are, where clients reach its
//! replicas, and what to warn of. `render` writes it as it is, and never
//! names a file itself.

use super::out::File;
use super::{Endpoint, Resolved};
use crate::diag::Diag;
use crate::plan::Entry;

/// A render, ready to write to standard output or into a folder.
pub struct Rendered<'a> {
    /// `kubernetes` or `slurm`: the word of its files' header line, by
    /// which a later render of the same kind knows its own files.
    pub kind: &'static str,
    /// The files under `-o DIR`, in order.
    files: Vec<File>,
    /// The first file that could not be made: the render fails with it
    /// when it comes to writing, after the checks before that.
    unwritable: Option<Diag>,
    /// How the files make one stream on standard output.
    stream: fn(&[File]) -> String,
    /// The names of the folder's files that are the plan's but not
    /// rendered this time (replicas left out, models none of whose
    /// replicas is rendered): left as they are, never removed as stale.
    pub kept: Vec<String>,
    pub endpoints: Vec<Endpoint<'a>>,
    pub warnings: Vec<Diag>,
}

impl<'a> Rendered<'a> {
    /// Nothing rendered yet.
    pub fn new(kind: &'static str, stream: fn(&[File]) -> String) -> Rendered<'a> {
        Rendered {
            kind,
            files: Vec::new(),
            unwritable: None,
            stream,
            kept: Vec::new(),
            endpoints: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// One more file, or why it could not be made (the first reason is
    /// the one given).
    pub fn push(&mut self, file: Result<File, Diag>) {
        match file {
            Ok(f) => self.files.push(f),
            Err(d) => {
                self.unwritable.get_or_insert(d);
            }
        }
    }

    /// The files to write under `-o DIR`.
    pub fn files(&self) -> Result<&[File], Diag> {
        match &self.unwritable {
            Some(d) => Err(d.clone()),
            None => Ok(&self.files),
        }
    }

    /// All of it as one stream on standard output.
    pub fn stream(&self) -> Result<String, Diag> {
        self.files().map(self.stream)
    }
}

/// The names a renderer gives the plan's replicas, given out over all of
/// them (rendered or not), so a name never depends on which others were
/// left out, and `--stop` finds the same names from the plan alone.
pub struct Names {
    /// Each job's, in the order of `Resolved::jobs`.
    pub jobs: Vec<String>,
    /// Each replica's that is not rendered, in the order of
    /// `Resolved::skipped`: its files stay as they are.
    pub skipped: Vec<String>,
}

/// The names `names` gives the plan's replicas, for the jobs and the
/// skipped replicas of `r`.
pub fn names_of(r: &Resolved<'_>, names: impl Fn(&[&Entry]) -> Vec<String>) -> Names {
    let all: Vec<&Entry> = r.plan.entries.iter().collect();
    let named = names(&all);
    let at: std::collections::HashMap<*const Entry, usize> =
        all.iter().enumerate().map(|(i, e)| (std::ptr::from_ref(*e), i)).collect();
    let of = |e: &Entry| at.get(&std::ptr::from_ref(e)).map(|&i| named[i].clone()).unwrap_or_default();
    Names { jobs: r.jobs.iter().map(|j| of(j.entry)).collect(), skipped: r.skipped.iter().map(|e| of(e)).collect() }
}
