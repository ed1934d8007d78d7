//! How an installed engine is found: its binaries on the absolute folders
//! of PATH, or its Python module.

/// `python3 -c` asking `find_spec` for the module without importing it
/// (importing sglang pulls in torch: seconds). The exit code is the answer:
/// 0 installed, anything else not. Treating a failed probe as "installed"
/// would report SGLang on every node that has python3.
pub fn probe_module(
    python: &std::path::Path,
    module: &str,
    path_env: Option<&std::ffi::OsStr>,
    timeout: std::time::Duration,
) -> Result<bool, String> {
    use crate::process::{Ran, run_bounded};
    let code = format!(
        concat!(absolute_sys_path!(), "; import importlib.util; sys.exit(0 if importlib.util.find_spec({:?}) else 1)"),
        module
    );
    match run_bounded(python, &["-c", code.as_str()], path_env, timeout) {
        Ran::Exited { code, .. } => Ok(code == 0),
        Ran::TimedOut => Err(format!("the python3 probe for it took longer than {}s", timeout.as_secs_f64())),
        Ran::Signalled => Err("the python3 probe for it was killed by a signal".into()),
        Ran::NotStarted(e) => Err(format!("python3 could not be started: {e}")),
    }
}

/// The folders of PATH that engines are looked for in: the absolute ones.
/// A relative entry (`.`, `bin`, or an empty one, which means the current
/// folder) would find whatever the folder llmgw runs in holds, a git clone
/// say, and engine-check would then run it; such entries are left out, as
/// Go's `exec.LookPath` does, and named so a warning can say so.
pub struct SearchPath {
    dirs: Option<std::ffi::OsString>,
    pub ignored: Vec<String>,
}

impl SearchPath {
    pub fn new(path_env: Option<&std::ffi::OsStr>) -> SearchPath {
        let mut dirs = Vec::new();
        let mut ignored = Vec::new();
        for dir in std::env::split_paths(path_env.unwrap_or_default()) {
            if dir.is_absolute() {
                dirs.push(dir);
            } else {
                ignored.push(dir.display().to_string());
            }
        }
        let dirs = if dirs.is_empty() { None } else { std::env::join_paths(dirs).ok() };
        SearchPath { dirs, ignored }
    }

    /// Where `binary` is, in the absolute folders of PATH.
    pub fn find(&self, binary: &str) -> Option<std::path::PathBuf> {
        which::which_in(binary, self.dirs.as_ref(), "/").ok()
    }

    /// The warning for the entries left out, if any were.
    pub fn warning(&self) -> Option<crate::diag::Diag> {
        use crate::diag::{Code, Diag};
        if self.ignored.is_empty() {
            return None;
        }
        let shown: Vec<String> = self
            .ignored
            .iter()
            .map(|e| if e.is_empty() { "`` (empty: the current folder)".to_string() } else { format!("`{e}`") })
            .collect();
        Some(
            Diag::warning(
                Code::RelativePath,
                format!("relative PATH entries ignored when looking for engines: {}", shown.join(", ")),
            )
            .help("a relative entry finds whatever the current folder holds; write PATH with absolute folders only"),
        )
    }
}
