//! The inference engines llmgw knows: one registry that discovery, lint,
//! placement and engine-check all read, so an engine is added in one place.

/// How `engine-check` asks an engine for its version.
#[derive(Debug)]
pub struct VersionCommand {
    pub program: &'static str,
    pub args: &'static [&'static str],
}

#[derive(Debug)]
pub struct Engine {
    /// The name catalogs use.
    pub name: &'static str,
    /// Binaries whose presence on PATH means the engine is installed.
    pub binaries: &'static [&'static str],
    /// A Python module probed by `importlib.util.find_spec`, for engines that
    /// may ship without a launcher on PATH.
    pub python_module: Option<&'static str>,
    /// Whether the engine can serve a model with no GPU at all.
    pub cpu_capable: bool,
    pub version: VersionCommand,
}

pub static ENGINES: &[Engine] = &[
    Engine {
        name: "vllm",
        binaries: &["vllm"],
        python_module: None,
        cpu_capable: false,
        version: VersionCommand { program: "vllm", args: &["--version"] },
    },
    Engine {
        name: "sglang",
        binaries: &["sglang"],
        python_module: Some("sglang"),
        cpu_capable: false,
        version: VersionCommand {
            program: "python3",
            args: &["-c", "import importlib.metadata as m; print(m.version('sglang'))"],
        },
    },
    Engine {
        name: "llama.cpp",
        binaries: &["llama-server"],
        python_module: None,
        cpu_capable: true,
        version: VersionCommand { program: "llama-server", args: &["--version"] },
    },
    Engine {
        name: "tgi",
        binaries: &["text-generation-launcher"],
        python_module: None,
        cpu_capable: false,
        version: VersionCommand { program: "text-generation-launcher", args: &["--version"] },
    },
    Engine {
        name: "trtllm",
        binaries: &["trtllm-serve"],
        python_module: None,
        cpu_capable: false,
        version: VersionCommand { program: "trtllm-serve", args: &["--version"] },
    },
    Engine {
        name: "ollama",
        binaries: &["ollama"],
        python_module: None,
        cpu_capable: true,
        version: VersionCommand { program: "ollama", args: &["--version"] },
    },
];

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
    let code = format!("import importlib.util,sys; sys.exit(0 if importlib.util.find_spec({module:?}) else 1)");
    match run_bounded(python, &["-c", code.as_str()], path_env, timeout) {
        Ran::Exited { code, .. } => Ok(code == 0),
        Ran::TimedOut => Err(format!("the python3 probe for it took longer than {}s", timeout.as_secs_f64())),
        Ran::Signalled => Err("the python3 probe for it was killed by a signal".into()),
        Ran::NotStarted(e) => Err(format!("python3 could not be started: {e}")),
    }
}

pub fn find(name: &str) -> Option<&'static Engine> {
    ENGINES.iter().find(|e| e.name == name)
}

pub fn names() -> impl Iterator<Item = &'static str> {
    ENGINES.iter().map(|e| e.name)
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = super::names().collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), super::ENGINES.len());
    }
}
