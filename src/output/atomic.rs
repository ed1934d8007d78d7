//! Writing a file so that a reader never sees half of it: into a temporary
//! file beside it, renamed over it when complete, removed when the write
//! fails or a signal stops the process.

use super::*;

pub(super) fn cannot_write(p: &Path, e: &std::io::Error) -> Diag {
    Diag::error(Code::Io, format!("cannot write {}: {e}", crate::term::escape(&p.display().to_string())))
        .help("nothing was written")
}

pub(super) fn open_file(path: &Path) -> std::io::Result<Sink> {
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
pub(super) fn link_target(path: &Path) -> std::io::Result<PathBuf> {
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
    pub(super) file: BufWriter<File>,
    pub(super) tmp: PathBuf,
    pub(super) target: PathBuf,
    pub(super) committed: bool,
    /// Folders made for the target, deepest first: removed again when
    /// nothing is written.
    pub(super) made: Vec<PathBuf>,
}

/// Makes the missing folders of `dir` (as `mkdir -p`), returning those it
/// made, deepest first.
pub(super) fn make_parents(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let missing: Vec<PathBuf> =
        dir.ancestors().take_while(|d| !d.as_os_str().is_empty() && !d.exists()).map(Path::to_path_buf).collect();
    std::fs::create_dir_all(dir)?;
    Ok(missing)
}

impl AtomicFile {
    pub(super) fn create(target: &Path, keep_mode: Option<u32>) -> std::io::Result<Sink> {
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

    pub(super) fn commit(mut self) -> std::io::Result<()> {
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
    pub(super) path: PathBuf,
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
pub(super) static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

pub(super) fn with_pending<T>(f: impl FnOnce(&mut Vec<PathBuf>) -> std::io::Result<T>) -> std::io::Result<T> {
    let mut pending = PENDING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    f(&mut pending)
}

/// On SIGINT, SIGTERM or SIGHUP, removes the temporary files and ends the
/// process as the signal would have. signal-hook's handler only wakes a
/// thread, so the removal runs outside the handler, with ordinary code; the
/// lock it keeps until the end stops any new temporary file meanwhile. A
/// signal the process was started ignoring (nohup, `&` in a script) stays
/// ignored.
pub(super) fn install_cleanup() {
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
pub(super) fn ignored_signals() -> impl Fn(i32) -> bool {
    let mask = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("SigIgn:").map(|m| m.trim().to_string())))
        .and_then(|m| u64::from_str_radix(&m, 16).ok())
        .unwrap_or(0);
    move |sig| (1..=64).contains(&sig) && mask & (1 << (sig - 1)) != 0
}
