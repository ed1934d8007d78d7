//! How a command ends: its exit code, or why it stopped early. Every
//! command returns an `Outcome`; `run` (lib.rs) turns it into the process's
//! exit status.

use crate::diag::Diag;

/// Exit codes, for every command (docs/placement.md, "Exit codes").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// The command did what was asked.
    Success = 0,
    /// It ran, and the answer is no: a replica left unplaced, a lint error,
    /// a named engine missing or failing.
    No = 1,
    /// The input could not be used.
    BadInput = 2,
}

/// Why a command stopped early.
#[derive(Debug)]
pub enum Failure {
    /// Unusable input: the diagnostics say why (exit 2).
    Input(Vec<Diag>),
    /// Writing the output failed.
    Io(std::io::Error),
}

impl From<Vec<Diag>> for Failure {
    fn from(d: Vec<Diag>) -> Self {
        Failure::Input(d)
    }
}

impl From<Diag> for Failure {
    fn from(d: Diag) -> Self {
        Failure::Input(vec![d])
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure::Io(e)
    }
}

pub type Outcome = Result<Exit, Failure>;
