//! The inference engines llmgw knows: one registry that discovery, lint,
//! placement and engine-check all read, so an engine is added in one place.

/// Python code run first by the SGLang probe and version command: only
/// absolute entries stay on `sys.path`. `python3 -c` puts the current folder
/// first, so an `sglang/` folder in a git clone would otherwise count as an
/// installed SGLang; a PYTHONPATH install (absolute) still counts.
macro_rules! absolute_sys_path {
    () => {
        "import os, sys; sys.path[:] = [p for p in sys.path if os.path.isabs(p)]"
    };
}

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
    /// Whether one replica can span several nodes (vLLM over Ray, SGLang's
    /// own launcher, TensorRT-LLM over MPI); the others serve from one.
    pub multi_node: bool,
    /// The GPU vendors it runs on (llama.cpp's CUDA and ROCm builds, vLLM
    /// and SGLang through ROCm; TensorRT-LLM is CUDA only).
    pub vendors: &'static [Vendor],
    /// The port its server listens on unless told otherwise.
    pub default_port: u16,
    pub version: VersionCommand,
}

use crate::vendor::Vendor;

const BOTH: &[Vendor] = &[Vendor::Nvidia, Vendor::Amd];

impl Engine {
    /// Whether it runs on this vendor's GPUs.
    pub fn runs_on(&self, v: Vendor) -> bool {
        self.vendors.contains(&v)
    }
    /// Whether it runs on the GPUs of every vendor llmgw knows.
    pub fn runs_on_every_vendor(&self) -> bool {
        Vendor::ALL.iter().all(|&v| self.runs_on(v))
    }
}

pub static ENGINES: &[Engine] = &[
    Engine {
        name: "vllm",
        binaries: &["vllm"],
        python_module: None,
        cpu_capable: false,
        multi_node: true,
        vendors: BOTH,
        default_port: 8000,
        version: VersionCommand { program: "vllm", args: &["--version"] },
    },
    Engine {
        name: "sglang",
        binaries: &["sglang"],
        python_module: Some("sglang"),
        cpu_capable: false,
        multi_node: true,
        vendors: BOTH,
        default_port: 30000,
        version: VersionCommand {
            program: "python3",
            args: &[
                "-c",
                concat!(absolute_sys_path!(), "; import importlib.metadata as m; print(m.version('sglang'))"),
            ],
        },
    },
    Engine {
        name: "llama.cpp",
        binaries: &["llama-server"],
        python_module: None,
        cpu_capable: true,
        multi_node: false,
        vendors: BOTH,
        default_port: 8080,
        version: VersionCommand { program: "llama-server", args: &["--version"] },
    },
    Engine {
        name: "tgi",
        binaries: &["text-generation-launcher"],
        python_module: None,
        cpu_capable: false,
        multi_node: false,
        vendors: BOTH,
        default_port: 8080,
        version: VersionCommand { program: "text-generation-launcher", args: &["--version"] },
    },
    Engine {
        name: "trtllm",
        binaries: &["trtllm-serve"],
        python_module: None,
        cpu_capable: false,
        multi_node: true,
        vendors: &[Vendor::Nvidia],
        default_port: 8000,
        version: VersionCommand { program: "trtllm-serve", args: &["--version"] },
    },
    Engine {
        name: "ollama",
        binaries: &["ollama"],
        python_module: None,
        cpu_capable: true,
        multi_node: false,
        vendors: BOTH,
        default_port: 11434,
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

pub fn find(name: &str) -> Option<&'static Engine> {
    ENGINES.iter().find(|e| e.name == name)
}

pub fn names() -> impl Iterator<Item = &'static str> + Clone {
    ENGINES.iter().map(|e| e.name)
}

#[cfg(test)]
mod tests {
    #[test]
    fn relative_path_entries_are_left_out() {
        let sp = super::SearchPath::new(Some(std::ffi::OsStr::new(":/usr/bin:.:rel/bin:/bin")));
        assert_eq!(sp.ignored, ["", ".", "rel/bin"]);
        assert!(sp.warning().is_some_and(|d| d.message.contains("`rel/bin`")));
        assert!(super::SearchPath::new(Some(std::ffi::OsStr::new("."))).find("sh").is_none());
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = super::names().collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), super::ENGINES.len());
    }
}
