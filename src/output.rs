//! Writing documents: inventories (discover, merge, synth) in any of the
//! three formats, and every `-o FILE` so that nothing is ever half-written.

mod atomic;
pub use atomic::*;

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::diag::{Code, Diag};
use crate::doc::Format;
use crate::inventory::Inventory;

/// The format an inventory is written in: `--format`, else the extension of
/// `-o`, else TOML. A `--format` that the extension contradicts is refused:
/// the file would not read back.
pub fn data_format(path: Option<&Path>, flag: Option<Format>) -> Result<Format, Diag> {
    let by_name = path.and_then(|p| Format::from_extension(&p.to_string_lossy()));
    match (flag, by_name) {
        (Some(f), Some(n)) if f != n => Err(contradiction(path, f.name())),
        (Some(f), _) => Ok(f),
        (None, Some(n)) => Ok(n),
        (None, None) => Ok(Format::Toml),
    }
}

/// For commands that print human or JSON output: whether `-o` with this
/// name, and perhaps `--format`, means JSON. A `.toml`/`.yaml` name, or a
/// `.json` one with `--format` other than json, is refused; `writes` says
/// what the command can write instead ("place writes human text or JSON").
pub fn report_is_json(path: Option<&Path>, flag: Option<&str>, writes: &str) -> Result<bool, Diag> {
    let by_name = path.and_then(|p| Format::from_extension(&p.to_string_lossy()));
    match (flag, by_name) {
        (None, Some(f @ (Format::Toml | Format::Yaml))) => Err(not_written(path, f, writes)),
        (Some(f), Some(Format::Toml | Format::Yaml)) => Err(contradiction(path, f)),
        (Some(f), Some(Format::Json)) if f != "json" => Err(contradiction(path, f)),
        (Some(f), _) => Ok(f == "json"),
        (None, Some(Format::Json)) => Ok(true),
        (None, None) => Ok(false),
    }
}

fn contradiction(path: Option<&Path>, format: &str) -> Diag {
    let name = path.map(|p| crate::term::escape(&p.display().to_string()).into_owned()).unwrap_or_default();
    Diag::error(Code::BadArgument, format!("--format {format} contradicts the name {name}"))
        .help("the extension of -o says what the file holds: give a name that matches the format, or drop --format")
}

/// `-o plan.yaml` on a command that has no YAML (or TOML) to write.
fn not_written(path: Option<&Path>, format: Format, writes: &str) -> Diag {
    let name = path.map(|p| crate::term::escape(&p.display().to_string()).into_owned()).unwrap_or_default();
    Diag::error(Code::BadArgument, format!("{writes}, not {}: cannot write {name}", format.name().to_uppercase()))
        .help("name the file .json for JSON, or give it another extension (or none) for human text")
}

/// An inventory as text. TOML is written node by node, in parallel: the
/// toml crate's serializer takes time quadratic in the number of array
/// entries, while each node on its own is small.
pub fn render_inventory(inv: &Inventory, format: Format) -> Result<String, String> {
    match format {
        Format::Toml => {
            use rayon::prelude::*;
            #[derive(serde::Serialize)]
            struct One<'a> {
                node: [&'a crate::inventory::Node; 1],
            }
            let parts: Result<Vec<String>, String> =
                inv.nodes.par_iter().map(|n| toml::to_string(&One { node: [n] }).map_err(|e| e.to_string())).collect();
            Ok(parts?.join("\n"))
        }
        Format::Json => serde_json::to_string_pretty(inv).map(|s| s + "\n").map_err(|e| e.to_string()),
        Format::Yaml => serde_saphyr::to_string(inv).map_err(|e| e.to_string()),
    }
}

/// Where a command's document goes: standard output, or the `-o` file.
pub enum Sink {
    Stdout(BufWriter<std::io::StdoutLock<'static>>),
    /// A regular file, written as a temporary file beside it and renamed
    /// over it at the end.
    Atomic(AtomicFile),
    /// A device, a FIFO, `/dev/stdout`: written in place.
    InPlace(BufWriter<File>),
}

impl Sink {
    /// Standard output, or the file `-o` names (`-` is standard output).
    pub fn open(path: Option<&Path>) -> Result<Sink, Diag> {
        match path {
            None => Ok(Sink::Stdout(BufWriter::with_capacity(1 << 16, std::io::stdout().lock()))),
            Some(p) if p.as_os_str() == "-" => {
                Ok(Sink::Stdout(BufWriter::with_capacity(1 << 16, std::io::stdout().lock())))
            }
            Some(p) => open_file(p).map_err(|e| cannot_write(p, &e)),
        }
    }

    /// Flushes, and for a file puts it in place.
    pub fn finish(self) -> Result<(), crate::exit::Failure> {
        match self {
            Sink::Stdout(mut w) => w.flush().map_err(crate::exit::Failure::Io),
            Sink::InPlace(mut w) => w.flush().map_err(crate::exit::Failure::Io),
            Sink::Atomic(f) => {
                let target = f.target.clone();
                f.commit().map_err(|e| cannot_write(&target, &e).into())
            }
        }
    }

    pub fn is_stdout(&self) -> bool {
        matches!(self, Sink::Stdout(_))
    }

    /// Makes human output fit the terminal when this is one; a file gets
    /// it unwrapped. Call before building tables.
    pub fn fit_width(&self) {
        crate::term::set_output_width(if self.is_stdout() { crate::term::stdout_width() } else { None });
    }

    /// Writes human output, escaped and wrapped (see `fit_width`).
    pub fn human(&mut self, text: &str) -> std::io::Result<()> {
        self.write_all(crate::term::human(text).as_bytes())
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::Stdout(w) => w.write(buf),
            Sink::Atomic(f) => f.file.write(buf),
            Sink::InPlace(w) => w.write(buf),
        }
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match self {
            Sink::Stdout(w) => w.write_all(buf),
            Sink::Atomic(f) => f.file.write_all(buf),
            Sink::InPlace(w) => w.write_all(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Stdout(w) => w.flush(),
            Sink::Atomic(f) => f.file.flush(),
            Sink::InPlace(w) => w.flush(),
        }
    }
}

/// Writes `bytes` where `path` says, as `-o` does.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), crate::exit::Failure> {
    let mut sink = Sink::open(Some(path))?;
    sink.write_all(bytes).map_err(|e| crate::exit::Failure::from(cannot_write(path, &e)))?;
    sink.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::{Fabric, Gpu, Node, State};

    /// Values a YAML reader could take for something else, and text that
    /// needs escapes: each written as YAML comes back as itself.
    #[test]
    fn yaml_output_reads_back_whatever_the_strings() {
        let tricky = [
            "a:b",
            "007",
            "true",
            "null",
            "~",
            "- x",
            "#c",
            "key: v",
            " lead",
            "trail ",
            "",
            "1.10",
            "0x1F",
            ".inf",
            "yes",
            "on",
            "é€",
            "tab\there",
            "line\nbreak",
            "\u{1b}[31m",
            "'q'",
            "\"dq\"",
            "[a]",
            "{b}",
            "&anchor",
            "*alias",
            "!tag",
            "%dir",
            "@at",
            "`tick`",
            "1e3",
            "-1",
            "+1",
            "0o17",
            "2024-01-01",
        ];
        let nodes = tricky
            .iter()
            .enumerate()
            .map(|(i, t)| Node {
                // Ids may hold no control character (they end up in scripts).
                id: format!("{i}{}", t.replace(char::is_control, "?")),
                discovered_by: Some(t.to_string()),
                state: State::Ready,
                labels: [(t.to_string(), t.to_string())].into(),
                memory_total_mb: 0,
                cpus: Some(7.5),
                memory_allocatable_mb: Some(1024),
                taints: vec![format!("k{i}=v:NoSchedule")],
                engines: Some([("vllm".to_string(), t.to_string())].into()),
                weights: Some(vec![
                    crate::inventory::Weight::named(*t),
                    crate::inventory::Weight {
                        source: format!("o/{t}"),
                        // A path holds no control character (an engine is given it).
                        path: Some(format!("/m/{}", t.replace(char::is_control, "?"))),
                    },
                ]),
                disk: None,
                gpus: vec![Gpu {
                    index: 0,
                    name: format!("GPU {t}"),
                    vendor: crate::vendor::Vendor::Nvidia,
                    memory_mb: 1,
                    uuid: Some(t.to_string()),
                    dra_device: None,
                    pci_bus_id: None,
                    mig: None,
                    class_override: None,
                    class: String::new(),
                    nvlink_peers: Vec::new(),
                    healthy: true,
                    mig_devices: Vec::new(),
                }],
                fabrics: vec![Fabric {
                    name: format!("f{t}"),
                    kind: crate::inventory::FabricKind::Infiniband,
                    hcas: Some(vec![t.to_string()]),
                }],
                allocations: Vec::new(),
                origin: None,
            })
            .collect();
        let inv = Inventory { nodes };
        let yaml = render_inventory(&inv, Format::Yaml).unwrap();
        let back = crate::inventory::load_spanned(&crate::diag::source("x.yaml", yaml.clone()))
            .unwrap_or_else(|d| panic!("{yaml}\n{}", crate::report::diagnostics::render(&d, false)));
        let mut want = inv.nodes.clone();
        want.sort_by(|a, b| a.id.cmp(&b.id));
        let json = |n: &[Node]| serde_json::to_string(n).unwrap();
        assert_eq!(json(&back), json(&want), "{yaml}");
    }
}
