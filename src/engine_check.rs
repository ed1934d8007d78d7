//! `engine-check`: the one command that runs engines, for an operator who
//! means to. Each version command runs with stdin closed, in a process group
//! of its own, and the group is killed at the timeout — a wrapper script that
//! starts a server instead of printing a version cannot hang it.

use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;

use crate::engines::{self, Engine};
use crate::process::{Ran, run_bounded};

#[cfg(test)]
mod tests {
    #[test]
    fn the_version_is_the_line_that_holds_one() {
        let ollama = "Warning: could not connect to a running Ollama instance\nWarning: client version is 0.5.4\n";
        assert_eq!(super::version_line(ollama).as_deref(), Some("Warning: client version is 0.5.4"));
        assert_eq!(super::version_line("\n  b7d5f1c\n").as_deref(), Some("b7d5f1c"));
        assert_eq!(super::version_line(""), None);
    }
}

#[derive(Serialize, Debug)]
pub struct Check {
    pub engine: &'static str,
    pub found: bool,
    pub path: Option<String>,
    pub version: Option<String>,
    /// ok | missing | failed | timeout | signal
    pub status: &'static str,
    pub detail: String,
}

pub fn check(e: &Engine, path_env: Option<&std::ffi::OsStr>, timeout: Duration) -> Check {
    let search = engines::SearchPath::new(path_env);
    let find = |b: &str| search.find(b);
    let launcher = e.binaries.iter().find_map(|b| find(b));
    let program = find(e.version.program);
    // SGLang may be installed as a module only: python3 is then where it
    // was found, if python3 can find the module at all.
    let module_found = |python: &std::path::Path| {
        e.python_module.is_some_and(|m| crate::engines::probe_module(python, m, path_env, timeout) == Ok(true))
    };
    let found_at = launcher.clone().or_else(|| program.clone().filter(|p| module_found(p)));
    let missing =
        |detail: String| Check { engine: e.name, found: false, path: None, version: None, status: "missing", detail };
    let (Some(path), Some(program)) = (found_at, program) else {
        let mut why = format!("{} is not on PATH", e.binaries.join(" or "));
        if let Some(m) = e.python_module {
            let _ = write!(why, ", and python3 finds no {m} module");
        }
        return missing(why);
    };
    let mut c = Check {
        engine: e.name,
        found: true,
        path: Some(path.display().to_string()),
        version: None,
        status: "ok",
        detail: String::new(),
    };
    match run_bounded(&program, e.version.args, path_env, timeout) {
        Ran::Exited { code: 0, stdout, stderr } => {
            // llama-server prints its version to stderr.
            c.version = version_line(&stdout).or_else(|| version_line(&stderr));
        }
        Ran::Exited { code, stderr, .. } => {
            c.status = "failed";
            let last = stderr.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or("");
            c.detail = format!("exit {code}{}{last}", if last.is_empty() { "" } else { ": " });
        }
        Ran::TimedOut => {
            c.status = "timeout";
            c.detail = format!("no answer within {}s; its process group was killed", timeout.as_secs_f64());
        }
        Ran::Signalled => {
            c.status = "signal";
            c.detail = "killed by a signal".into();
        }
        Ran::NotStarted(err) => {
            c.status = "failed";
            c.detail = format!("could not start: {err}");
        }
    }
    c
}

/// The line of a version command's output that holds a version: the first
/// with a dotted number (ollama warns that it cannot reach its server before
/// it says its own version), else the first that is not blank.
fn version_line(text: &str) -> Option<String> {
    let lines = || text.lines().map(str::trim).filter(|l| !l.is_empty());
    let dotted = |l: &&str| {
        let b = l.as_bytes();
        b.windows(3).any(|w| w[0].is_ascii_digit() && w[1] == b'.' && w[2].is_ascii_digit())
    };
    lines().find(dotted).or_else(|| lines().next()).map(str::to_owned)
}
