//! The whole folder swapped at once: the new set is staged in a sibling
//! folder (same parent, so the same file system), beside hard links of
//! every entry of DIR the render keeps, and the two folders trade places
//! with one `renameat2(RENAME_EXCHANGE)`. Whatever kills render, DIR is
//! wholly the old set or wholly the new one; the old tree, now at the
//! sibling's name, is removed after. Where that cannot be done (a file
//! system or kernel without RENAME_EXCHANGE, a parent folder render may
//! not write in, DIR a mount point or holding folders of its own), the
//! caller falls back to renaming file by file inside DIR.

use std::collections::HashSet;
use std::path::Path;

use super::{File, Status, durable, io};
use crate::diag::Diag;
use crate::output::TempDir;

/// Stages `written` (and links to what DIR keeps) beside DIR, exchanges
/// the two, and removes the old tree: `Ok(true)`. `Ok(false)` when it
/// cannot be done this way, with DIR untouched.
pub fn swap_whole(dir: &Path, written: &[(&File, Status)], stale: &[String]) -> Result<bool, Diag> {
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else { return Ok(false) };
    let parent = if parent.as_os_str().is_empty() { Path::new(".") } else { parent };
    // A link to a folder: exchanging would swap the link, not the folder.
    let Ok(meta) = std::fs::symlink_metadata(dir) else { return Ok(false) };
    if !meta.is_dir() {
        return Ok(false);
    }
    let replaced: HashSet<&str> =
        written.iter().map(|(f, _)| f.name.as_str()).chain(stale.iter().map(String::as_str)).collect();
    let mut kept = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| io("read", dir, &e))? {
        let entry = entry.map_err(|e| io("read", dir, &e))?;
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir {
            // A folder cannot be hard-linked: keep DIR as it is.
            return Ok(false);
        }
        let n = entry.file_name();
        if !n.to_str().is_some_and(|n| replaced.contains(n)) {
            kept.push(n);
        }
    }
    clean_siblings(parent, &prefix(name));
    let Ok(stage) = TempDir::new_in(parent, &prefix(name)) else { return Ok(false) };
    // The folder that takes DIR's place is DIR to everyone else: its
    // owner, its group and its mode (a setgid bit that gives a team's
    // group to every file in it) come along, or the folder is not swapped.
    if !same_owner_and_mode(stage.path(), &meta) {
        return Ok(false);
    }
    for n in &kept {
        // The same inode: other users' files, the other renderer's files
        // and unchanged ones stay exactly what they were.
        if std::fs::hard_link(dir.join(n), stage.path().join(n)).is_err() {
            return Ok(false);
        }
    }
    for (f, _) in written {
        stage
            .hold(|| {
                let mut file = std::fs::File::create(stage.path().join(&f.name))?;
                std::io::Write::write_all(&mut file, f.text.as_bytes())
            })
            .map_err(|e| io("write", &dir.join(&f.name), &e))?;
    }
    let names: Vec<&str> = written.iter().map(|(f, _)| f.name.as_str()).collect();
    durable(stage.path(), &names).map_err(|e| io("write", dir, &e))?;
    let swapped = stage.hold(|| {
        rustix::fs::renameat_with(
            rustix::fs::CWD,
            stage.path(),
            rustix::fs::CWD,
            dir,
            rustix::fs::RenameFlags::EXCHANGE,
        )
    });
    match swapped {
        Ok(()) => {}
        // Not to be had here: DIR untouched, the stage goes.
        Err(_) => return Ok(false),
    }
    // The stage's name now holds the old tree: dropping it removes that.
    drop(stage);
    std::fs::File::open(parent).and_then(|d| d.sync_all()).map_err(|e| io("write", dir, &e))?;
    Ok(true)
}

/// Gives `stage` the owner, group and mode of `was` (the mode last: a
/// change of owner clears setgid); false when that is not allowed here
/// (another user's folder, a group render's user is not in) or did not
/// hold.
fn same_owner_and_mode(stage: &Path, was: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let Ok(now) = std::fs::metadata(stage) else { return false };
    if (now.uid(), now.gid()) != (was.uid(), was.gid())
        && std::os::unix::fs::chown(stage, Some(was.uid()), Some(was.gid())).is_err()
    {
        return false;
    }
    let mode = was.mode() & 0o7777;
    if std::fs::set_permissions(stage, std::fs::Permissions::from_mode(mode)).is_err() {
        return false;
    }
    std::fs::metadata(stage).is_ok_and(|m| (m.uid(), m.gid(), m.mode() & 0o7777) == (was.uid(), was.gid(), mode))
}

/// The sibling staging folders of DIR: `.<DIR's name>.llmgw-render-<pid>-<n>`.
fn prefix(name: &std::ffi::OsStr) -> String {
    format!(".{}.llmgw-render-", name.to_string_lossy())
}

/// Removes what a render killed mid-way left beside DIR: a folder of that
/// name whose render (the pid in its name) no longer runs. Called with DIR
/// locked, so no live render of it is staging.
fn clean_siblings(parent: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(prefix)) else { continue };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<i32>().ok()) else { continue };
        let alive = rustix::process::Pid::from_raw(pid).is_some_and(|p| rustix::process::test_kill_process(p).is_ok());
        if !alive && entry.file_type().is_ok_and(|t| t.is_dir()) && pid != std::process::id() as i32 {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Whether the open folder is the one `path` names now.
pub fn same_folder(open: &std::fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (open.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => true,
    }
}
