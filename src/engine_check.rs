//! `engine-check`: the one command that runs engines, for an operator who
//! means to. Each version command runs with stdin closed, in a process group
//! of its own, and the group is killed at the timeout — a wrapper script that
//! starts a server instead of printing a version cannot hang it.

use std::time::Duration;

use rayon::prelude::*;
use serde::Serialize;

use crate::cli::{EngineCheckArgs, OutputFormat};
use crate::diag::{Code, Diag, did_you_mean};
use crate::engines::{self, Engine};
use crate::process::{Ran, run_bounded};
use crate::term::escape;
use crate::{Exit, Outcome};

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
            why.push_str(&format!(", and python3 finds no {m} module"));
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

pub fn command(a: &EngineCheckArgs) -> Outcome {
    let mut selected: Vec<&'static Engine> = Vec::new();
    let mut bad = Vec::new();
    for name in &a.engines {
        match engines::find(name) {
            Some(e) => {
                if !selected.iter().any(|s| s.name == e.name) {
                    selected.push(e)
                }
            }
            None => {
                let mut d = Diag::error(Code::UnknownEngine, format!("unknown engine `{name}`"));
                d.help = Some(match did_you_mean(name, engines::names()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!("known engines: {}", engines::names().collect::<Vec<_>>().join(", ")),
                });
                bad.push(d);
            }
        }
    }
    if !bad.is_empty() {
        return Err(bad.into());
    }
    if !(a.timeout.is_finite() && a.timeout > 0.0) {
        return Err(Diag::error(
            Code::BadArgument,
            format!("--timeout must be a positive number of seconds, not {}", a.timeout),
        )
        .into());
    }
    let format = crate::commands::report_format(a.output.as_deref(), a.format)?;
    let mut out = crate::output::Sink::open(a.output.as_deref())?;
    let named = !selected.is_empty();
    if !named {
        selected = engines::ENGINES.iter().collect();
    }
    let path_env = std::env::var_os("PATH");
    if let Some(w) = engines::SearchPath::new(path_env.as_deref()).warning() {
        eprint!("{}", crate::diag::render(&[w], crate::diag::colour_for_stderr()));
    }
    let timeout = Duration::from_secs_f64(a.timeout.min(3600.0));
    // In parallel, so six hung wrappers cost one timeout, not six.
    let checks: Vec<Check> = selected.par_iter().map(|e| check(e, path_env.as_deref(), timeout)).collect();
    match format {
        OutputFormat::Json => {
            #[derive(Serialize)]
            struct Doc<'a> {
                engines: &'a [Check],
            }
            crate::report::write_json(&mut out, &Doc { engines: &checks })?;
        }
        OutputFormat::Human => {
            out.fit_width();
            let mut t = crate::report::table(&["ENGINE", "PATH", "VERSION", "STATUS"]);
            for c in &checks {
                let status =
                    if c.detail.is_empty() { c.status.to_string() } else { format!("{}: {}", c.status, c.detail) };
                let shown = |s: &Option<String>| s.as_deref().map_or("-".into(), |s| escape(s).into_owned());
                t.add_row(vec![c.engine.to_string(), shown(&c.path), shown(&c.version), escape(&status).into_owned()]);
            }
            out.human(&format!("{t}\n"))?;
        }
    }
    out.finish()?;
    // A named engine must be there and answer; of the engines looked for
    // unasked, those found must answer.
    let failing = checks.iter().any(|c| if named { c.status != "ok" } else { c.found && c.status != "ok" });
    Ok(if failing { Exit::No } else { Exit::Success })
}
