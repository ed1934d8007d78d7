//! Where render writes: standard output, or a folder it owns.
//!
//! A folder rendered into before holds the last plan's files. Left there,
//! the files of replicas the new plan dropped come back with the next
//! `kubectl apply -f DIR` or re-submission, so render removes its own
//! stale files (those that begin with its header line, never any other
//! file) and says which. The new set is written as a whole: staged beside
//! DIR and exchanged with it in one rename (exchange.rs), so DIR is always
//! wholly old or wholly new; where that cannot be had, staged inside DIR
//! and renamed file by file, every rename undone if one fails. An
//! entry of DIR that is a symlink is replaced by a regular file, never
//! followed: a link planted in DIR cannot make render write elsewhere.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::diag::{Code, Diag};

mod exchange;
mod report;

pub use report::{report_text, unplaced_line};

/// Every file render writes begins (after a `#!` line, for scripts) with a
/// line that starts so; it is how a later render knows its own files.
pub const HEADER: &str = "# Written by llmgw render";

/// One file of a render: its name in the folder, its text, and the
/// replica it starts (a Service: its model only; `submit.sh`: none).
pub struct File {
    pub name: String,
    pub text: String,
    pub model: Option<String>,
    pub replica: Option<u32>,
}

/// What a render did to one file of the folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    New,
    Changed,
    Unchanged,
    Removed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::New => "new",
            Status::Changed => "changed",
            Status::Unchanged => "unchanged",
            Status::Removed => "removed",
        }
    }
}

/// Each file's name and what happened to it: the rendered ones in their
/// order, then the removed ones, sorted.
pub type Report = Vec<(String, Status)>;

/// `-o` as render reads it.
pub enum Target {
    Stdout,
    Dir(PathBuf),
}

/// `-o -` (or none) is standard output; an existing regular file is
/// refused, since render writes several files; anything else is a folder.
pub fn target(o: Option<&Path>) -> Result<Target, Diag> {
    let Some(path) = o.filter(|p| p.as_os_str() != "-") else { return Ok(Target::Stdout) };
    match std::fs::metadata(path) {
        Ok(m) if !m.is_dir() => Err(Diag::error(
            Code::BadArgument,
            format!("-o {} names a file, but render writes a folder of files", path.display()),
        )
        .help("give a folder (it is created when missing), or `-o -` for one stream on standard output")),
        _ => Ok(Target::Dir(path.to_path_buf())),
    }
}

/// Whether `path` (as the file it names once links are followed) lies in
/// `dir` or below it.
pub fn inside(path: &Path, dir: &Path) -> bool {
    let real = |p: &Path| -> Option<PathBuf> {
        if let Ok(c) = std::fs::canonicalize(p) {
            return Some(c);
        }
        // Not there yet: its folder's real path, and its name.
        let parent = p.parent().filter(|q| !q.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let base = std::fs::canonicalize(parent).ok().or_else(|| std::path::absolute(parent).ok())?;
        Some(p.file_name().map_or(base.clone(), |n| base.join(n)))
    };
    match (real(path), real(dir)) {
        (Some(p), Some(d)) => p.starts_with(&d),
        _ => false,
    }
}

/// Whether a folder entry is a file an earlier render of this kind wrote
/// (`kind`: `slurm`, `kubernetes`): a regular file (never a link) whose
/// first or second line is its header. A folder both renderers write
/// into loses neither's files to the other.
pub fn ours(path: &Path, kind: &str) -> bool {
    header_of(path).is_some_and(|line| line.starts_with(&format!("{HEADER} {kind}")))
}

/// The header line of a regular file (never a link) that has one in its
/// first two lines.
fn header_of(path: &Path) -> Option<String> {
    let m = std::fs::symlink_metadata(path).ok()?;
    if !m.is_file() {
        return None;
    }
    let mut head = [0u8; 512];
    let mut f = std::fs::File::open(path).ok()?;
    let n = f.read(&mut head).unwrap_or(0);
    let text = String::from_utf8_lossy(&head[..n]);
    text.lines().take(2).find(|l| l.starts_with(HEADER)).map(str::to_string)
}

/// Whether a regular file begins with llmgw's header (of either kind).
fn has_header(path: &Path) -> bool {
    header_of(path).is_some()
}

/// An exclusive hold on an output folder for one render: two renders into
/// one folder at once would each remove the other's files and leave both
/// plans' files. The lock is `flock` on the folder itself (no file of its
/// own in it); a second render waits, then gives up.
pub struct Lock {
    folder: std::fs::File,
    path: PathBuf,
    created: bool,
}

/// How long a render waits for another render of the same folder:
/// `LLMGW_RENDER_WAIT` seconds, else 10.
fn lock_wait() -> std::time::Duration {
    let secs = std::env::var("LLMGW_RENDER_WAIT").ok().and_then(|s| s.parse::<f64>().ok()).filter(|s| s.is_finite());
    std::time::Duration::from_secs_f64(secs.unwrap_or(10.0).clamp(0.0, 3600.0))
}

/// Takes the folder (creating it when missing) for this render.
pub fn lock(dir: &Path) -> Result<Lock, Diag> {
    let created = !dir.exists();
    std::fs::create_dir_all(dir).map_err(|e| io("create", dir, &e))?;
    let file = std::fs::File::open(dir).map_err(|e| io("open", dir, &e))?;
    let mut lock = Lock { folder: file, path: dir.to_path_buf(), created };
    let deadline = std::time::Instant::now() + lock_wait();
    loop {
        match rustix::fs::flock(&lock.folder, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            // The render before may have exchanged the folder for a new
            // one while this one waited: its lock was on the folder that
            // is gone. Lock the folder the path names now.
            Ok(()) if !exchange::same_folder(&lock.folder, dir) => {
                lock.folder = std::fs::File::open(dir).map_err(|e| io("open", dir, &e))?;
            }
            Ok(()) => return Ok(lock),
            Err(rustix::io::Errno::WOULDBLOCK) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(rustix::io::Errno::WOULDBLOCK) => {
                lock.created = false;
                let shown = crate::term::escape(&dir.display().to_string()).into_owned();
                return Err(Diag::error(Code::FolderBusy, format!("another render is writing into {shown}")).help(
                    "wait for it to finish and render again (LLMGW_RENDER_WAIT sets how many seconds render waits)",
                ));
            }
            // A file system without flock: render on, unlocked.
            Err(_) => return Ok(lock),
        }
    }
}

impl Drop for Lock {
    /// A folder this render created and then wrote nothing into goes
    /// again (`remove_dir` leaves a folder with files alone): a refused
    /// render leaves no trace.
    fn drop(&mut self) {
        if self.created {
            let _ = std::fs::remove_dir(&self.path);
        }
    }
}

/// The hidden folder a render stages its files in, inside DIR.
const STAGE: &str = ".llmgw-render-";

/// Removes what a render killed mid-way (SIGKILL, power loss) left of its
/// staging folder: a folder of that name holding nothing but its `new`
/// and `old` folders. Only called with the folder locked, so no render is
/// using it; anything else of that name is left alone.
fn leftover(path: &Path) {
    let Ok(m) = std::fs::symlink_metadata(path) else { return };
    if !m.is_dir() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else { return };
    let names: Vec<std::ffi::OsString> = entries.filter_map(Result::ok).map(|e| e.file_name()).collect();
    let ours = names.iter().all(|n| n == "new" || n == "old")
        && names.iter().all(|n| std::fs::symlink_metadata(path.join(n)).is_ok_and(|m| m.is_dir()));
    if ours {
        let _ = std::fs::remove_dir_all(path);
    }
}

/// A file or folder that could not be read or written, as a diagnostic.
pub fn io_error(what: &str, p: &Path, e: &std::io::Error) -> Diag {
    io(what, p, e)
}

fn io(what: &str, p: &Path, e: &std::io::Error) -> Diag {
    Diag::error(Code::Io, format!("cannot {what} {}: {e}", crate::term::escape(&p.display().to_string())))
        .help("the folder was left as it was")
}

/// What each file's render would do to the folder as it is now.
pub fn statuses(dir: &Path, files: &[File]) -> Vec<Status> {
    files
        .iter()
        .map(|f| {
            let path = dir.join(&f.name);
            match std::fs::symlink_metadata(&path) {
                Err(_) => Status::New,
                // A link or anything but a file is replaced, never followed.
                Ok(m) if !m.is_file() => Status::Changed,
                Ok(m) if m.len() != f.text.len() as u64 => Status::Changed,
                Ok(_) => match std::fs::read(&path) {
                    Ok(old) if old == f.text.as_bytes() => Status::Unchanged,
                    _ => Status::Changed,
                },
            }
        })
        .collect()
}

/// Writes `files` into `dir`, removing the files an earlier render of this
/// `kind` wrote that are not among them or `keep`; returns what happened
/// to each file. A file whose bytes are already there is left alone.
pub fn write_dir(dir: &Path, kind: &str, files: &[File], keep: &[String]) -> Result<Report, Diag> {
    std::fs::create_dir_all(dir).map_err(|e| io("create", dir, &e))?;
    let mut stale = Vec::new();
    let wanted: std::collections::HashSet<&str> =
        files.iter().map(|f| f.name.as_str()).chain(keep.iter().map(String::as_str)).collect();
    for entry in std::fs::read_dir(dir).map_err(|e| io("read", dir, &e))? {
        let entry = entry.map_err(|e| io("read", dir, &e))?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else { continue };
        if name.starts_with(STAGE) {
            leftover(&entry.path());
            continue;
        }
        if name.starts_with('.') || wanted.contains(name.as_str()) {
            continue;
        }
        if ours(&entry.path(), kind) {
            stale.push(name);
        }
    }
    stale.sort();
    let status = statuses(dir, files);
    // A file render did not write, at a name it wants: someone's own file,
    // never replaced or deleted behind their back.
    let foreign: Vec<String> = files
        .iter()
        .zip(&status)
        .filter(|(_, s)| **s == Status::Changed)
        .map(|(f, _)| dir.join(&f.name))
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()) && !has_header(p))
        .map(|p| crate::term::escape(&p.display().to_string()).into_owned())
        .collect();
    if !foreign.is_empty() {
        return Err(Diag::error(
            Code::NotOurs,
            format!("{} was not written by llmgw render; render replaces only its own files", foreign.join(", ")),
        )
        .help("move the file away or render into another folder (-o); nothing was written"));
    }
    let written: Vec<(&File, Status)> =
        files.iter().zip(&status).filter(|(_, s)| **s != Status::Unchanged).map(|(f, s)| (f, *s)).collect();
    if exchange::swap_whole(dir, &written, &stale)? {
        let mut report: Report = files.iter().map(|f| f.name.clone()).zip(status).collect();
        report.extend(stale.into_iter().map(|n| (n, Status::Removed)));
        return Ok(report);
    }
    // Removed when this returns, and when a signal ends the process first.
    let stage = crate::output::TempDir::new_in(dir, STAGE).map_err(|e| io("write in", dir, &e))?;
    let staged = stage.path().join("new");
    let old = stage.path().join("old");
    for d in [&staged, &old] {
        stage.hold(|| std::fs::create_dir(d)).map_err(|e| io("write in", dir, &e))?;
    }
    for (f, _) in &written {
        // Each file is made with the signal cleanup held off, so the
        // cleanup never races a file being created in the folder it removes.
        stage
            .hold(|| {
                let mut file = std::fs::File::create(staged.join(&f.name))?;
                file.write_all(f.text.as_bytes())
            })
            .map_err(|e| io("write", &dir.join(&f.name), &e))?;
    }
    // Durable before any of it replaces the old set: one sync of the file
    // system the folder is on, not one per file (20,000 fsyncs took
    // seconds, the rendering itself a fraction of that).
    let names: Vec<&str> = written.iter().map(|(f, _)| f.name.as_str()).collect();
    durable(&staged, &names).map_err(|e| io("write", dir, &e))?;
    // Every step of the swap is a rename within one folder, planned
    // first: old files (and links) aside, new ones in, stale ones aside.
    let mut moves: Vec<(PathBuf, PathBuf)> = Vec::new();
    for (f, was) in &written {
        let target = dir.join(&f.name);
        // A new file has nothing in its place to move aside (looked at
        // a moment ago): no second look for each of thousands of files.
        let there = if *was == Status::New { None } else { std::fs::symlink_metadata(&target).ok() };
        if let Some(m) = there {
            if m.is_dir() {
                let e = std::io::Error::other("a folder of that name is in the way");
                return Err(io("write", &target, &e));
            }
            moves.push((target.clone(), old.join(&f.name)));
        }
        moves.push((staged.join(&f.name), target));
    }
    moves.extend(stale.iter().map(|name| (dir.join(name), old.join(name))));
    // A signal during the swap waits until it is done (or undone).
    stage.hold(|| swap(&moves, |from, to| std::fs::rename(from, to))).map_err(|e| io("write", dir, &e))?;
    drop(stage);
    // The renames, durable too.
    std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(|e| io("write", dir, &e))?;
    let mut report: Report = files.iter().map(|f| f.name.clone()).zip(status).collect();
    report.extend(stale.into_iter().map(|n| (n, Status::Removed)));
    Ok(report)
}

/// Makes the staged files durable: one `syncfs` of the file system they
/// are on; where that is not to be had, each file and the folder.
pub(super) fn durable(staged: &Path, names: &[&str]) -> std::io::Result<()> {
    let folder = std::fs::File::open(staged)?;
    if rustix::fs::syncfs(&folder).is_ok() {
        return Ok(());
    }
    for name in names {
        std::fs::File::open(staged.join(name))?.sync_all()?;
    }
    folder.sync_all()
}

/// Makes the moves in order; when one fails, undoes those made, last first,
/// so the folder is as it was.
fn swap(moves: &[(PathBuf, PathBuf)], rename: impl Fn(&Path, &Path) -> std::io::Result<()>) -> std::io::Result<()> {
    for (i, (from, to)) in moves.iter().enumerate() {
        if let Err(e) = rename(from, to) {
            for (from, to) in moves[..i].iter().rev() {
                let _ = rename(to, from);
            }
            return Err(e);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_move_that_fails_undoes_the_moves_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n);
        for n in ["a", "b", "new-a", "new-b"] {
            std::fs::write(p(n), n).unwrap();
        }
        std::fs::create_dir(p("old")).unwrap();
        let moves = vec![(p("a"), p("old/a")), (p("new-a"), p("a")), (p("b"), p("old/b")), (p("new-b"), p("b"))];
        let calls = std::cell::Cell::new(0);
        let failing = |from: &Path, to: &Path| {
            calls.set(calls.get() + 1);
            if calls.get() == 4 { Err(std::io::Error::other("disk full")) } else { std::fs::rename(from, to) }
        };
        assert!(swap(&moves, failing).is_err());
        for n in ["a", "b", "new-a", "new-b"] {
            assert_eq!(std::fs::read_to_string(p(n)).unwrap(), n, "{n} is back");
        }
        assert!(swap(&moves, |f, t| std::fs::rename(f, t)).is_ok());
        assert_eq!(std::fs::read_to_string(p("a")).unwrap(), "new-a");
    }
}
