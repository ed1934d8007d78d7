//! Names derived from model names for files, Kubernetes objects, labels
//! and Slurm jobs: sanitised for where they go, cut to fit, and never two
//! alike (a short hash of the exact identity where they would be).

use std::collections::HashSet;

use sha2::{Digest, Sha256};

/// The hash that keeps two names apart: the first `digits` hex digits of
/// the sha256 of the exact identity (10 digits, 40 bits, unless two would
/// still be alike). Stable from release to release: names are compared
/// across renders to find stale files and jobs.
pub fn short_hash(s: &str, digits: usize) -> String {
    let hex: String = Sha256::digest(s.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    hex[..digits.min(hex.len())].to_string()
}

/// Hash lengths tried, shortest first: a name takes a longer one only
/// when it would still equal another name.
const DIGITS: [usize; 5] = [10, 16, 24, 40, 64];

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
/// `running`: the replica (or a replica of the model) runs already, so its
/// objects exist under the name it had: it keeps that name.
pub struct Want {
    pub identity: String,
    pub head: String,
    pub suffix: String,
    pub max: usize,
    pub running: bool,
}

/// Final names, in order: `head + suffix` when it fits and no earlier item
/// took it; else the head cut to leave room for the suffix and `-<hash of
/// identity>` (a longer hash while that is taken too). Running replicas
/// choose first, then the new ones, each in the plan's order: a model
/// added beside a running one whose name sanitises alike takes the hash,
/// and the running replica's objects keep their names (renaming them
/// would make `kubectl apply --prune` restart it). Deterministic for a
/// given plan: two renders of one plan give the same names.
pub fn unique(items: &[Want]) -> Vec<String> {
    let name = |i: usize, level: usize| -> String {
        let w = &items[i];
        if level == 0 {
            return format!("{}{}", w.head, w.suffix);
        }
        let hash = short_hash(&w.identity, DIGITS[(level - 1).min(DIGITS.len() - 1)]);
        let room = w.max.saturating_sub(hash.len() + 1 + w.suffix.len());
        let head: String = w.head.chars().take(room).collect();
        format!("{}{}-{hash}", head.trim_end_matches(['-', '.', '_']), w.suffix)
    };
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| !items[i].running);
    let mut taken: HashSet<String> = HashSet::with_capacity(items.len());
    let mut names = vec![String::new(); items.len()];
    for i in order {
        let w = &items[i];
        let plain_fits = w.head.len() + w.suffix.len() <= w.max;
        let mut level = usize::from(!plain_fits);
        let chosen = loop {
            let candidate = name(i, level);
            if !taken.contains(&candidate) {
                break candidate;
            }
            if level >= DIGITS.len() {
                // The whole sha256 of two identities alike: one identity
                // twice, which callers never give; kept apart all the same.
                break format!("{candidate}-{i}");
            }
            level += 1;
        };
        taken.insert(chosen.clone());
        names[i] = chosen;
    }
    names
}

/// A DNS-1123 label: at most 63 lower-case letters, digits and `-`,
/// beginning and ending with a letter or digit.
pub fn dns_label(s: &str) -> bool {
    let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    let b = s.as_bytes();
    !b.is_empty() && b.len() <= 63 && alnum(b[0]) && alnum(b[b.len() - 1]) && b.iter().all(|&c| alnum(c) || c == b'-')
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
            running: false,
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

    fn workload(model: &str) -> Want {
        Want {
            identity: format!("{model}/0"),
            head: dns(&format!("llmgw-{model}")),
            suffix: "-r0".into(),
            max: 63,
            running: false,
        }
    }

    #[test]
    fn names_whose_old_24_bit_hashes_collided_stay_apart() {
        // FNV-1a's low 24 bits of `m_.__-.x/0` and `m---_-._--x/0` are
        // equal, and both models sanitise to `llmgw-m-x`: one Deployment
        // name for two models under the old hash.
        let names = unique(&[workload("m_.__-.x"), workload("m---_-._--x")]);
        assert_ne!(names[0], names[1], "{names:?}");
        assert_eq!(names[0], "llmgw-m-x-r0");
        assert!(names[1].starts_with("llmgw-m-x-r0-") && names[1].len() == "llmgw-m-x-r0-".len() + 10);
    }

    fn service(m: &str, running: bool) -> Want {
        Want { identity: m.into(), head: dns(&format!("llmgw-{m}")), suffix: String::new(), max: 63, running }
    }

    #[test]
    fn a_plain_name_equal_to_anothers_hashed_one_is_kept_apart() {
        // `Llama` and `llama` both want `llmgw-llama`; a third model
        // literally named like the second's hashed name.
        let hashed = unique(&[service("Llama", false), service("llama", false)]);
        let copycat = hashed[1].trim_start_matches("llmgw-").to_string();
        let names = unique(&[service("Llama", false), service("llama", false), service(&copycat, false)]);
        let mut set: Vec<&String> = names.iter().collect();
        set.sort();
        set.dedup();
        assert_eq!(set.len(), 3, "{names:?}");
    }

    #[test]
    fn a_running_replica_keeps_its_name_when_a_model_alike_is_added() {
        // Turn 1: `Llama-3` alone. Turn 2: `llama.3` added before it in the
        // catalog, `Llama-3` running. Turn 3: both running.
        let alone = unique(&[service("Llama-3", false)]);
        let added = unique(&[service("llama.3", false), service("Llama-3", true)]);
        assert_eq!(added[1], alone[0], "the running replica keeps its name");
        assert_ne!(added[0], added[1]);
        let both = unique(&[service("Llama-3", true), service("llama.3", true)]);
        assert_eq!(both, [added[1].clone(), added[0].clone()], "and keeps it once both run");
    }
}
