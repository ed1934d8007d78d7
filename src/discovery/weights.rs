//! Model weights already on disk, named as an engine would be given them.

use std::path::Path;

/// Looks in one model dir: Hugging Face cache folders `models--ORG--NAME`
/// (at the top or under `hub/`) become `ORG/NAME`; a folder holding
/// `config.json` and `*.safetensors` becomes its path relative to the model
/// dir; a `*.gguf` file its relative path.
pub fn find(model_dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    walk(model_dir, model_dir, 0, &mut out);
    out.sort();
    out.dedup();
    out
}

const MAX_DEPTH: usize = 6;

fn walk(root: &Path, dir: &Path, depth: usize, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    let names: Vec<String> = entries.iter().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    if depth > 0 && names.iter().any(|n| n == "config.json") && names.iter().any(|n| n.ends_with(".safetensors")) {
        out.push(relative(root, dir));
        return;
    }
    for (e, name) in entries.iter().zip(&names) {
        let path = e.path();
        let is_dir = std::fs::metadata(&path).is_ok_and(|m| m.is_dir());
        if is_dir {
            if let Some(repo) = name.strip_prefix("models--") {
                // The cache keeps snapshots inside; the folder itself names it.
                out.push(repo.replacen("--", "/", 1));
            } else if depth < MAX_DEPTH && !name.starts_with('.') {
                walk(root, &path, depth + 1, out);
            }
        } else if name.ends_with(".gguf") {
            out.push(relative(root, &path));
        }
    }
}

fn relative(root: &Path, p: &Path) -> String {
    p.strip_prefix(root).unwrap_or(p).to_string_lossy().into_owned()
}
