//! Names derived from model names for files, Kubernetes objects, labels
//! and Slurm jobs: sanitised for where they go, cut to fit, and never two
//! alike (a short hash of the exact identity where they would be).

use std::collections::HashMap;

/// FNV-1a: the short hash that keeps two sanitised names apart. Six hex
/// digits, stable from release to release (names are compared across
/// renders to find stale files and jobs).
pub fn short_hash(s: &str) -> String {
    let h = s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    format!("{:06x}", h & 0xff_ffff)
}

/// A Kubernetes label value: `[A-Za-z0-9._-]`, at most 63 characters,
/// beginning and ending with an alphanumeric one. Cut first, then trimmed,
/// so a cut never leaves a `.` or `-` at the end.
pub fn label_value(v: &str) -> String {
    let s: String = v
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' })
        .take(63)
        .collect();
    s.trim_matches(|c: char| !c.is_ascii_alphanumeric()).to_string()
}

/// A DNS-1123 label base: lower-case alphanumerics and single `-`.
pub fn dns(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars().flat_map(char::to_lowercase) {
        let c = if c.is_ascii_alphanumeric() { c } else { '-' };
        if !(c == '-' && (out.is_empty() || out.ends_with('-'))) {
            out.push(c);
        }
    }
    out.trim_end_matches('-').to_string()
}

/// A Slurm job name: the model's characters where they are plain.
pub fn job(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' }).collect()
}

/// One name to give out: `head` + `suffix` (a `-r3`), at most `max` long,
/// kept apart from every other by `identity` (the exact model and replica).
pub struct Want {
    pub identity: String,
    pub head: String,
    pub suffix: String,
    pub max: usize,
}

/// Final names, in order: `head + suffix` when it fits and no other item
/// would get the same; else the head cut to leave room for the suffix and
/// `-<hash of identity>`, which keeps it apart.
pub fn unique(items: &[Want]) -> Vec<String> {
    let plain: Vec<String> = items.iter().map(|w| format!("{}{}", w.head, w.suffix)).collect();
    let mut count: HashMap<&str, usize> = HashMap::new();
    for p in &plain {
        *count.entry(p.as_str()).or_default() += 1;
    }
    items
        .iter()
        .zip(&plain)
        .map(|(w, p)| {
            if p.len() <= w.max && count[p.as_str()] == 1 {
                return p.clone();
            }
            let hash = short_hash(&w.identity);
            let room = w.max.saturating_sub(hash.len() + 1 + w.suffix.len());
            let head: String = w.head.chars().take(room).collect();
            format!("{}{}-{hash}", head.trim_end_matches(['-', '.', '_']), w.suffix)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_cut_then_trimmed() {
        let v = format!("{}.x", "a".repeat(62));
        assert_eq!(label_value(&v), "a".repeat(62));
        assert_eq!(label_value("--Qwen/Qwen2.5 72B--"), "Qwen-Qwen2.5-72B");
        assert_eq!(label_value("..."), "");
    }

    #[test]
    fn equal_or_long_names_get_a_hash_and_stay_apart() {
        let want = |id: &str, head: &str, suffix: &str| Want {
            identity: id.into(),
            head: head.into(),
            suffix: suffix.into(),
            max: 45,
        };
        let long = format!("llmgw-{}", "x".repeat(80));
        let items = vec![
            want("Llama/0", "llmgw-llama", "-r0"),
            want("llama/0", "llmgw-llama", "-r0"),
            want("other/0", "llmgw-other", "-r0"),
            want("long/3", &long, "-r3"),
        ];
        let names = unique(&items);
        assert_ne!(names[0], names[1]);
        assert_eq!(names[2], "llmgw-other-r0");
        assert!(names.iter().all(|n| n.len() <= 45), "{names:?}");
        assert!(names[3].contains("-r3-"), "{}", names[3]);
        assert_eq!(dns("Qwen/Qwen2.5_72B"), "qwen-qwen2-5-72b");
    }
}
