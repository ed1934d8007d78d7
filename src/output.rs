//! Writing documents: inventories (discover, merge, synth) in any of the
//! three formats, and every `-o FILE` so that nothing is ever half-written.

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

fn cannot_write(p: &Path, e: &std::io::Error) -> Diag {
    Diag::error(Code::Io, format!("cannot write {}: {e}", crate::term::escape(&p.display().to_string())))
        .help("nothing was written")
}

fn open_file(path: &Path) -> std::io::Result<Sink> {
    match std::fs::metadata(path) {
        // Not a regular file: there is nothing to replace atomically.
        Ok(m) if !m.is_file() => {
            let f = OpenOptions::new().write(true).truncate(true).open(path)?;
            Ok(Sink::InPlace(BufWriter::with_capacity(1 << 16, f)))
        }
        Ok(m) => AtomicFile::create(&std::fs::canonicalize(path)?, Some(m.permissions().mode() & 0o7777)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => AtomicFile::create(&link_target(path)?, None),
        Err(e) => Err(e),
    }
}

/// Where a path that may be a dangling symlink (or a chain of them) leads:
/// the file is created there and the links stay links.
fn link_target(path: &Path) -> std::io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let t = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if t.is_relative() => dir.join(t),
                    _ => t,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(std::io::Error::other("too many levels of symbolic links"))
}

/// A temporary file in the target's folder, renamed over the target by
/// `commit`; removed when dropped uncommitted, and by the cleanup thread
/// when the process is interrupted (SIGINT, SIGTERM, SIGHUP) meanwhile.
pub struct AtomicFile {
    file: BufWriter<File>,
    tmp: PathBuf,
    target: PathBuf,
    committed: bool,
    /// Folders made for the target, deepest first: removed again when
    /// nothing is written.
    made: Vec<PathBuf>,
}

/// Makes the missing folders of `dir` (as `mkdir -p`), returning those it
/// made, deepest first.
fn make_parents(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let missing: Vec<PathBuf> =
        dir.ancestors().take_while(|d| !d.as_os_str().is_empty() && !d.exists()).map(Path::to_path_buf).collect();
    std::fs::create_dir_all(dir)?;
    Ok(missing)
}

impl AtomicFile {
    fn create(target: &Path, keep_mode: Option<u32>) -> std::io::Result<Sink> {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        install_cleanup();
        // `-o reports/today/plan.json` makes its folders, as render's `-o DIR` does.
        let made = make_parents(dir)?;
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let tmp = dir.join(format!(".llmgw-{}-{n}.tmp", std::process::id()));
            // Created and registered under the lock the cleanup holds until
            // the process ends: no moment is left in which a signal could
            // strand it.
            let created = with_pending(|pending| {
                // A new file gets 0666 less the umask, as any program's would.
                let file = OpenOptions::new().write(true).create_new(true).mode(0o666).open(&tmp)?;
                pending.push(tmp.clone());
                Ok(file)
            });
            match created {
                Ok(file) => {
                    let atomic = AtomicFile {
                        file: BufWriter::with_capacity(1 << 16, file),
                        tmp,
                        target: target.to_path_buf(),
                        committed: false,
                        made: made.clone(),
                    };
                    if let Some(mode) = keep_mode {
                        atomic.file.get_ref().set_permissions(std::fs::Permissions::from_mode(mode))?;
                    }
                    return Ok(Sink::Atomic(atomic));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn commit(mut self) -> std::io::Result<()> {
        self.file.flush()?;
        self.file.get_ref().sync_all()?;
        with_pending(|pending| {
            std::fs::rename(&self.tmp, &self.target)?;
            pending.retain(|p| *p != self.tmp);
            Ok(())
        })?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = with_pending(|pending| {
                pending.retain(|p| *p != self.tmp);
                std::fs::remove_file(&self.tmp)
            });
            for d in &self.made {
                let _ = std::fs::remove_dir(d);
            }
        }
    }
}

/// A temporary folder, removed when dropped and, like the temporary file of
/// an `-o FILE` write, when a signal ends the process first.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// A new hidden folder in `dir`, its name starting `prefix`.
    pub fn new_in(dir: &Path, prefix: &str) -> std::io::Result<TempDir> {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        install_cleanup();
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!("{prefix}{}-{n}", std::process::id()));
            let made = with_pending(|pending| {
                std::fs::create_dir(&path)?;
                pending.push(path.clone());
                Ok(())
            });
            match made {
                Ok(()) => return Ok(TempDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` with signals held off: a signal meanwhile takes effect
    /// after it, when the folder is removed, so what `f` does (a set of
    /// renames) is never cut in half.
    pub fn hold<T>(&self, f: impl FnOnce() -> T) -> T {
        let _held = PENDING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        f()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = with_pending(|pending| {
            pending.retain(|p| *p != self.path);
            std::fs::remove_dir_all(&self.path)
        });
    }
}

/// Temporary files and folders being written, for the cleanup thread to remove.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn with_pending<T>(f: impl FnOnce(&mut Vec<PathBuf>) -> std::io::Result<T>) -> std::io::Result<T> {
    let mut pending = PENDING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    f(&mut pending)
}

/// On SIGINT, SIGTERM or SIGHUP, removes the temporary files and ends the
/// process as the signal would have. signal-hook's handler only wakes a
/// thread, so the removal runs outside the handler, with ordinary code; the
/// lock it keeps until the end stops any new temporary file meanwhile. A
/// signal the process was started ignoring (nohup, `&` in a script) stays
/// ignored.
fn install_cleanup() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let ignored = ignored_signals();
        let wanted: Vec<i32> = [SIGINT, SIGTERM, SIGHUP].into_iter().filter(|&s| !ignored(s)).collect();
        let Ok(mut signals) = signal_hook::iterator::Signals::new(&wanted) else { return };
        let spawned = std::thread::Builder::new().name("llmgw-cleanup".into()).spawn(move || {
            if let Some(sig) = signals.forever().next() {
                let pending = PENDING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                for p in pending.iter() {
                    if std::fs::remove_file(p).is_err() {
                        let _ = std::fs::remove_dir_all(p);
                    }
                }
                // Still holding the lock: the process ends here.
                let _ = signal_hook::low_level::emulate_default_handler(sig);
                std::process::exit(128 + sig);
            }
        });
        drop(spawned);
    });
}

/// Which signals the process was started ignoring, from the kernel's own
/// account (`SigIgn` in /proc/self/status: a mask, bit N-1 for signal N).
/// Where that cannot be read, none.
fn ignored_signals() -> impl Fn(i32) -> bool {
    let mask = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("SigIgn:").map(|m| m.trim().to_string())))
        .and_then(|m| u64::from_str_radix(&m, 16).ok())
        .unwrap_or(0);
    move |sig| (1..=64).contains(&sig) && mask & (1 << (sig - 1)) != 0
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
