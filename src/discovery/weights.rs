//! Model weights already on disk, named as an engine would be given them,
//! and where they really are.
//!
//! A Hugging Face cache (`hub/models--ORG--NAME`) keeps a model's files
//! under `snapshots/<rev>/`, the revision `refs/main` names: the engine
//! must be given that folder, not `disk.path/ORG/NAME`, which does not
//! exist. So a cache entry is written with its path; so is every `.gguf`
//! file in it, as `ORG/NAME/FILE.gguf` (llama.cpp is given the file).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::inventory::Weight;

/// Looks in one model dir, read at `dir` and written as `shown` (the path
/// on the node; they differ when discovery reads a fake tree): Hugging
/// Face cache folders `models--ORG--NAME` (at the top or under `hub/`)
/// become `ORG/NAME` at their snapshot; a folder holding `config.json` and
/// `*.safetensors` becomes its path relative to the model dir; a `*.gguf`
/// file its relative path. With `with_paths`, those last two also say
/// where they are (a model dir other than `disk.path`).
pub fn find(dir: &Path, shown: &Path, with_paths: bool) -> Vec<Weight> {
    let mut out = Vec::new();
    let mut at = Walk { root: dir, shown, with_paths, out: &mut out, seen: HashSet::new() };
    at.walk(dir, 0);
    out.sort_by(|a, b| a.source.cmp(&b.source));
    out.dedup_by(|a, b| a.source == b.source);
    out
}

const MAX_DEPTH: usize = 6;

/// The most folders one walk looks into: a model folder is a few
/// thousand entries deep at most; a tree past this is no model folder.
const MAX_FOLDERS: usize = 100_000;

struct Walk<'a> {
    root: &'a Path,
    shown: &'a Path,
    with_paths: bool,
    out: &'a mut Vec<Weight>,
    /// Folders walked, by (device, inode): a symlinked folder that leads
    /// back into the tree (14 links to `.` took 33 s) is walked once.
    seen: HashSet<(u64, u64)>,
}

impl Walk<'_> {
    /// Where `p` (under the root read) is on the node.
    fn on_node(&self, p: &Path) -> String {
        self.shown.join(p.strip_prefix(self.root).unwrap_or(p)).to_string_lossy().into_owned()
    }

    fn relative(&self, p: &Path) -> String {
        p.strip_prefix(self.root).unwrap_or(p).to_string_lossy().into_owned()
    }

    fn found(&mut self, p: &Path) {
        let path = self.with_paths.then(|| self.on_node(p));
        self.out.push(Weight { source: self.relative(p), path });
    }

    fn walk(&mut self, dir: &Path, depth: usize) {
        use std::os::unix::fs::MetadataExt;
        let Ok(meta) = std::fs::metadata(dir) else { return };
        if !self.seen.insert((meta.dev(), meta.ino())) || self.seen.len() > MAX_FOLDERS {
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        let names: Vec<String> = entries.iter().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        if depth > 0 && names.iter().any(|n| n == "config.json") && names.iter().any(|n| n.ends_with(".safetensors")) {
            self.found(dir);
            return;
        }
        for (e, name) in entries.iter().zip(&names) {
            let path = e.path();
            let is_dir = std::fs::metadata(&path).is_ok_and(|m| m.is_dir());
            if is_dir {
                if let Some(repo) = name.strip_prefix("models--") {
                    self.cached(&path, &repo.replacen("--", "/", 1));
                } else if depth < MAX_DEPTH && !name.starts_with('.') {
                    self.walk(&path, depth + 1);
                }
            } else if name.ends_with(".gguf") {
                self.found(&path);
            }
        }
    }

    /// A cache folder: the model at its snapshot, and each GGUF file in it.
    /// A folder with no snapshot holds nothing yet (a download that never
    /// finished).
    fn cached(&mut self, folder: &Path, repo: &str) {
        let Some(snapshot) = snapshot(folder) else { return };
        self.out.push(Weight { source: repo.to_string(), path: Some(self.on_node(&snapshot)) });
        let Ok(files) = std::fs::read_dir(&snapshot) else { return };
        let mut ggufs: Vec<String> = files
            .flatten()
            .map(|f| f.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".gguf"))
            .collect();
        ggufs.sort();
        for f in ggufs {
            let path = self.on_node(&snapshot.join(&f));
            self.out.push(Weight { source: format!("{repo}/{f}"), path: Some(path) });
        }
    }
}

/// The snapshot a cache folder serves: the revision `refs/main` names,
/// else the only snapshot, else the newest (by modification time, then
/// name).
pub fn snapshot(folder: &Path) -> Option<PathBuf> {
    let snapshots = folder.join("snapshots");
    if let Some(rev) = super::read_small(&folder.join("refs/main")) {
        let rev = rev.trim();
        let at = snapshots.join(rev);
        if !rev.is_empty() && !rev.contains('/') && at.is_dir() {
            return Some(at);
        }
    }
    let mut all: Vec<(std::time::SystemTime, String)> = std::fs::read_dir(&snapshots)
        .ok()?
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| {
            let when = e.metadata().and_then(|m| m.modified()).unwrap_or(std::time::UNIX_EPOCH);
            (when, e.file_name().to_string_lossy().into_owned())
        })
        .collect();
    all.sort();
    all.pop().map(|(_, name)| snapshots.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(p: &Path) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "").unwrap();
    }

    #[test]
    fn a_cache_folder_is_found_at_the_snapshot_refs_main_names() {
        let d = tempfile::tempdir().unwrap();
        let repo = d.path().join("hub/models--meta-llama--Llama-3.1-8B-Instruct");
        touch(&repo.join("snapshots/old/config.json"));
        touch(&repo.join("snapshots/0e9e39f/config.json"));
        std::fs::write(repo.join("refs"), "").ok();
        std::fs::remove_file(repo.join("refs")).ok();
        std::fs::create_dir_all(repo.join("refs")).unwrap();
        std::fs::write(repo.join("refs/main"), "0e9e39f\n").unwrap();
        // No snapshot: nothing there yet.
        std::fs::create_dir_all(d.path().join("hub/models--gpt2/blobs")).unwrap();
        // A GGUF repository: the folder and each file.
        let gguf = d.path().join("hub/models--Qwen--Qwen2.5-7B-Instruct-GGUF");
        touch(&gguf.join("snapshots/a1/qwen2.5-7b-instruct-q4_k_m.gguf"));
        let found = find(d.path(), Path::new("/models"), false);
        let shown: Vec<(&str, Option<&str>)> = found.iter().map(|w| (w.source.as_str(), w.path.as_deref())).collect();
        assert_eq!(
            shown,
            [
                (
                    "Qwen/Qwen2.5-7B-Instruct-GGUF",
                    Some("/models/hub/models--Qwen--Qwen2.5-7B-Instruct-GGUF/snapshots/a1")
                ),
                (
                    "Qwen/Qwen2.5-7B-Instruct-GGUF/qwen2.5-7b-instruct-q4_k_m.gguf",
                    Some(
                        "/models/hub/models--Qwen--Qwen2.5-7B-Instruct-GGUF/snapshots/a1/qwen2.5-7b-instruct-q4_k_m.gguf"
                    )
                ),
                (
                    "meta-llama/Llama-3.1-8B-Instruct",
                    Some("/models/hub/models--meta-llama--Llama-3.1-8B-Instruct/snapshots/0e9e39f")
                ),
            ]
        );
    }

    #[test]
    fn without_refs_main_the_only_or_newest_snapshot() {
        let d = tempfile::tempdir().unwrap();
        let repo = d.path().join("models--org--m");
        touch(&repo.join("snapshots/only/x.safetensors"));
        assert_eq!(snapshot(&repo), Some(repo.join("snapshots/only")));
        // refs/main naming a snapshot that is not there: the newest.
        touch(&repo.join("refs/main"));
        std::fs::write(repo.join("refs/main"), "gone").unwrap();
        assert_eq!(snapshot(&repo), Some(repo.join("snapshots/only")));
        assert_eq!(snapshot(&d.path().join("models--none")), None);
    }
}
