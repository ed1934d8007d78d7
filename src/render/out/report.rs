//! What render says it did to the folder: a line per file, or totals past
//! 50 files, or the same as JSON; and the replicas the plan left unplaced.

use std::fmt::Write as _;
use std::path::Path;

use super::{File, Report, Status};
use crate::plan::Unplaced;

/// Past this many files, the report gives totals instead of a line each.
const LINES: usize = 50;

/// One line per file (`new`, `changed`, `unchanged`, `removed`), or past
/// 50 files the totals; then the replicas the plan left unplaced. As JSON:
/// `{"files": [{"path", "status", "model", "replica"}], "totals": {...},
/// "unplaced": [{"model", "replica", "through"}]}`.
pub fn report_text(dir: &Path, files: &[File], report: &Report, unplaced: &[Unplaced], json: bool) -> String {
    let path = |name: &str| dir.join(name).display().to_string();
    let mut totals = [0usize; 4];
    for (_, status) in report {
        totals[*status as usize] += 1;
    }
    let statuses = [Status::New, Status::Changed, Status::Unchanged, Status::Removed];
    if json {
        let by_name: std::collections::HashMap<&str, &File> = files.iter().map(|f| (f.name.as_str(), f)).collect();
        let list: Vec<serde_json::Value> = report
            .iter()
            .map(|(name, status)| {
                let f = by_name.get(name.as_str()).copied();
                serde_json::json!({
                    "path": path(name),
                    "status": status,
                    "model": f.and_then(|f| f.model.clone()),
                    "replica": f.and_then(|f| f.replica),
                })
            })
            .collect();
        let totals: serde_json::Map<String, serde_json::Value> =
            statuses.iter().map(|s| (s.as_str().to_string(), totals[*s as usize].into())).collect();
        let left: Vec<serde_json::Value> = unplaced
            .iter()
            .map(|u| {
                let mut v = serde_json::json!({"model": u.model, "replica": u.replica});
                if u.through != u.replica {
                    v["through"] = u.through.into();
                }
                v
            })
            .collect();
        let doc = serde_json::json!({ "files": list, "totals": totals, "unplaced": left });
        let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
        s.push('\n');
        return s;
    }
    let mut s = String::new();
    if report.len() <= LINES {
        for (name, status) in report {
            let why = if *status == Status::Removed { " (no longer in the plan)" } else { "" };
            let _ = writeln!(s, "{} {}{why}", status.as_str(), crate::term::escape(&path(name)));
        }
    } else {
        let parts: Vec<String> =
            statuses.iter().map(|st| format!("{} {}", totals[*st as usize], st.as_str())).collect();
        let _ = writeln!(
            s,
            "{} files in {}: {} (--format json lists each)",
            report.len(),
            crate::term::escape(&dir.display().to_string()),
            parts.join(", ")
        );
    }
    if let Some(line) = unplaced_line(unplaced) {
        let _ = writeln!(s, "{}", crate::term::escape(&line));
    }
    s
}

/// "the plan leaves 3 replicas unplaced: llama-3.1-405b replicas 1-2,
/// deepseek-v3 replica 0"; `None` when it places every one.
pub fn unplaced_line(unplaced: &[Unplaced]) -> Option<String> {
    const SHOWN: usize = 10;
    if unplaced.is_empty() {
        return None;
    }
    let count: u64 = unplaced.iter().map(|u| u64::from(u.through - u.replica) + 1).sum();
    let mut runs: Vec<String> = unplaced
        .iter()
        .take(SHOWN)
        .map(|u| match u.through == u.replica {
            true => format!("{} replica {}", u.model, u.replica),
            false => format!("{} replicas {}-{}", u.model, u.replica, u.through),
        })
        .collect();
    if unplaced.len() > SHOWN {
        runs.push(format!("and {} more runs", unplaced.len() - SHOWN));
    }
    let noun = if count == 1 { "replica" } else { "replicas" };
    Some(format!("the plan leaves {count} {noun} unplaced, not rendered: {}", runs.join(", ")))
}
