//! Names derived from model names for files, Kubernetes objects, labels
//! and Slurm jobs: sanitised for where they go, cut to fit, and never two
//! alike (a short hash of the exact identity where they would be).

use std::collections::HashMap;

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
pub struct Want {
    pub identity: String,
    pub head: String,
    pub suffix: String,
    pub max: usize,
}

/// Final names, in order: `head + suffix` when it fits and no other item
/// would get the same; else the head cut to leave room for the suffix and
/// `-<hash of identity>`, which keeps it apart. Names are compared as they
/// come out, so a name that still equals another (a model literally named
/// like another's hashed name, or a hash collision) takes a hash, then a
/// longer one, until every name is unique; which name is whose depends on
/// the set of names only, never on their order.
pub fn unique(items: &[Want]) -> Vec<String> {
    let plain: Vec<String> = items.iter().map(|w| format!("{}{}", w.head, w.suffix)).collect();
    // Per item: 0 plain, k the k-th hash length of DIGITS.
    let mut level: Vec<usize> = plain.iter().zip(items).map(|(p, w)| usize::from(p.len() > w.max)).collect();
    let name = |i: usize, level: usize| -> String {
        let w = &items[i];
        if level == 0 {
            return plain[i].clone();
        }
        let hash = short_hash(&w.identity, DIGITS[(level - 1).min(DIGITS.len() - 1)]);
        let room = w.max.saturating_sub(hash.len() + 1 + w.suffix.len());
        let head: String = w.head.chars().take(room).collect();
        format!("{}{}-{hash}", head.trim_end_matches(['-', '.', '_']), w.suffix)
    };
    let mut names: Vec<String> = (0..items.len()).map(|i| name(i, level[i])).collect();
    for _ in 0..=DIGITS.len() {
        let mut count: HashMap<&str, usize> = HashMap::new();
        for n in &names {
            *count.entry(n.as_str()).or_default() += 1;
        }
        let alike: Vec<usize> = (0..names.len()).filter(|&i| count[names[i].as_str()] > 1).collect();
        if alike.is_empty() {
            break;
        }
        for i in alike {
            level[i] = (level[i] + 1).min(DIGITS.len());
            names[i] = name(i, level[i]);
        }
    }
    names
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

    fn workload(model: &str) -> Want {
        Want { identity: format!("{model}/0"), head: dns(&format!("llmgw-{model}")), suffix: "-r0".into(), max: 63 }
    }

    #[test]
    fn names_whose_old_24_bit_hashes_collided_stay_apart() {
        // FNV-1a's low 24 bits of `m_.__-.x/0` and `m---_-._--x/0` are
        // equal, and both models sanitise to `llmgw-m-x`: one Deployment
        // name for two models under the old hash.
        let names = unique(&[workload("m_.__-.x"), workload("m---_-._--x")]);
        assert_ne!(names[0], names[1], "{names:?}");
        assert!(names.iter().all(|n| n.starts_with("llmgw-m-x-r0-") && n.len() == "llmgw-m-x-r0-".len() + 10));
    }

    #[test]
    fn a_plain_name_equal_to_anothers_hashed_one_is_kept_apart_in_any_order() {
        let service =
            |m: &str| Want { identity: m.into(), head: dns(&format!("llmgw-{m}")), suffix: String::new(), max: 63 };
        // `Llama` and `llama` both want `llmgw-llama`: each gets a hash; a
        // third model literally named like the first's hashed name.
        let hashed = unique(&[service("Llama"), service("llama")]);
        let copycat = hashed[0].trim_start_matches("llmgw-").to_string();
        let items = [service("Llama"), service("llama"), service(&copycat)];
        let names = unique(&items);
        let mut set: Vec<&String> = names.iter().collect();
        set.sort();
        set.dedup();
        assert_eq!(set.len(), 3, "{names:?}");
        let reversed: Vec<Want> = items
            .iter()
            .rev()
            .map(|w| Want { identity: w.identity.clone(), head: w.head.clone(), suffix: w.suffix.clone(), max: w.max })
            .collect();
        let mut back = unique(&reversed);
        back.reverse();
        assert_eq!(names, back, "the same names whatever the order");
    }
}
