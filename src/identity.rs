//! Replica identity: how everything render writes names its replica and
//! profile, and how imports read that back (docs/slurm.md and
//! docs/kubernetes.md). On Kubernetes, labels and annotations under the
//! `llmgw.io/` prefix; on Slurm, the job comment
//! `llmgw.io/model=<model>,llmgw.io/replica=<r>,llmgw.io/profile=<p>`.
//! One writer and one parser of that comment, used by render, by the
//! import of jobs and by render's read-back of its own scripts.

use std::fmt::Write as _;

/// The prefix every key below starts with: llmgw's own. A pod whose
/// labels or annotations say so is not trusted from another namespace.
pub const PREFIX: &str = "llmgw.io/";
/// The catalog model a replica serves: an annotation (the name as it is)
/// and a label (the name as a label value may hold it).
pub const MODEL: &str = "llmgw.io/model";
/// The replica's index within its model: a label.
pub const REPLICA: &str = "llmgw.io/replica";
/// The catalog profile a replica runs: an annotation (as it is) and a label.
pub const PROFILE: &str = "llmgw.io/profile";
/// `true` on the pods that serve HTTP (a multi-node replica's leader): the
/// Service selects them.
pub const SERVES: &str = "llmgw.io/serves";
/// The GPUs a pod was placed on, per node (`n1=0,1`): an annotation.
pub const GPUS: &str = "llmgw.io/gpus";
/// The MIG device a pod was placed on (`n1=0:3`): an annotation.
pub const MIG_DEVICES: &str = "llmgw.io/mig-devices";
/// A node taint: the node is being drained, nothing new goes there.
pub const DRAINING: &str = "llmgw.io/draining";
/// A node label: which discovery wrote the node's facts.
pub const DISCOVERED_BY: &str = "llmgw.io/discovered-by";
/// Node labels `llmgw.io/engine.<engine>=<version>`: the installed engines.
pub const ENGINE_PREFIX: &str = "llmgw.io/engine.";
/// Node labels `llmgw.io/fabric.<name>=...`: the node's fabrics.
pub const FABRIC_PREFIX: &str = "llmgw.io/fabric.";
/// Node labels `llmgw.io/nvlink.<gpu>=<peers>`: a GPU's NVLink peers.
pub const NVLINK_PREFIX: &str = "llmgw.io/nvlink.";

/// An llmgw replica, as its Slurm job's comment names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub model: String,
    pub replica: u32,
    pub profile: Option<String>,
}

const C_MODEL: &str = "llmgw.io/model=";
const C_REPLICA: &str = ",llmgw.io/replica=";
const C_PROFILE: &str = ",llmgw.io/profile=";

/// The Slurm job comment that says which replica a job is: authoritative
/// where the job name was cut. Names are written as they are where they
/// hold only plain characters (letters, digits, `._-/:@+`); any other byte
/// is %XX-escaped, so a name with a comma, a space or a quote cannot break
/// the `#SBATCH` line or the key=value list.
pub fn slurm_comment(model: &str, replica: u32, profile: &str) -> String {
    format!("{C_MODEL}{}{C_REPLICA}{replica}{C_PROFILE}{}", escape(model), escape(profile))
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'/' | b':' | b'@' | b'+') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// llmgw's identity in a Slurm job comment; `None` when the comment is
/// not llmgw's, `Some(Err)` when it starts as llmgw's but does not parse.
/// Render %XX-escapes every byte of a name but plain ones, so a comma or
/// an equals sign in a name arrives escaped; a comment written by hand may
/// still hold them raw: the model comes first and may hold any character,
/// the replica is the first `,llmgw.io/replica=<digits>` followed by
/// `,llmgw.io/profile=` or the end, the profile (optional) is the rest.
/// Names are unescaped after the split.
pub fn parse_slurm_comment(comment: &str) -> Option<Result<Identity, String>> {
    let rest = comment.trim().strip_prefix(C_MODEL)?;
    let bad =
        || format!("the comment `{}` is not llmgw's `{C_MODEL}<model>{C_REPLICA}<r>{C_PROFILE}<p>`", comment.trim());
    if comment.chars().any(char::is_control) {
        return Some(Err(bad()));
    }
    for (at, _) in rest.match_indices(C_REPLICA) {
        let after = &rest[at + C_REPLICA.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let tail = &after[digits..];
        let profile = if tail.is_empty() {
            None
        } else if let Some(p) = tail.strip_prefix(C_PROFILE) {
            Some(p.to_string())
        } else {
            continue;
        };
        let Ok(replica) = after[..digits].parse::<u32>() else { continue };
        let profile = match profile.map(|p| unescape(&p)) {
            None => None,
            Some(Some(p)) => Some(p),
            Some(None) => return Some(Err(bad())),
        };
        let Some(model) = unescape(&rest[..at]) else { return Some(Err(bad())) };
        if model.is_empty()
            || profile.as_deref() == Some("")
            || model.chars().chain(profile.iter().flat_map(|p| p.chars())).any(char::is_control)
        {
            return Some(Err(bad()));
        }
        return Some(Ok(Identity { model, replica, profile }));
    }
    Some(Err(bad()))
}

/// `%XX` escapes back to their bytes (`%2C` -> `,`); a `%` not followed by
/// two hex digits stays as it is. `None` when the bytes are not UTF-8.
fn unescape(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (b[i], b.get(i + 1).copied().and_then(hex), b.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(comment: &str) -> Option<Result<Identity, String>> {
        parse_slurm_comment(comment)
    }

    fn id(model: &str, replica: u32, profile: Option<&str>) -> Option<Result<Identity, String>> {
        Some(Ok(Identity { model: model.into(), replica, profile: profile.map(Into::into) }))
    }

    #[test]
    fn comments_escape_what_would_break_them() {
        assert_eq!(
            slurm_comment("llama-3.1-70b", 2, "h100-tp4"),
            "llmgw.io/model=llama-3.1-70b,llmgw.io/replica=2,llmgw.io/profile=h100-tp4"
        );
        assert_eq!(
            slurm_comment("a b,c=d", 0, "p'1"),
            "llmgw.io/model=a%20b%2Cc%3Dd,llmgw.io/replica=0,llmgw.io/profile=p%271"
        );
    }

    #[test]
    fn what_is_written_reads_back() {
        for (m, r, p) in [("m", 0, "p"), ("a b,c=d", 7, "p'1"), ("x,llmgw.io/replica=1", 3, "tp=4,x"), ("100%", 1, "é")]
        {
            assert_eq!(identity(&slurm_comment(m, r, p)), id(m, r, Some(p)));
        }
    }

    #[test]
    fn llmgw_comments_name_the_replica() {
        assert_eq!(identity("llmgw.io/model=m,llmgw.io/replica=0,llmgw.io/profile=p"), id("m", 0, Some("p")));
        assert_eq!(identity("llmgw.io/model=m,llmgw.io/replica=3"), id("m", 3, None));
        assert_eq!(identity("nothing of ours"), None);
        assert_eq!(identity(""), None);
        assert!(matches!(identity("llmgw.io/model=m"), Some(Err(_))));
        assert!(matches!(identity("llmgw.io/model=m,llmgw.io/replica=x,llmgw.io/profile=p"), Some(Err(_))));
        assert!(matches!(identity("llmgw.io/model=,llmgw.io/replica=1"), Some(Err(_))));
    }

    #[test]
    fn a_model_may_hold_commas_and_equals_signs() {
        assert_eq!(
            identity("llmgw.io/model=a,b=c,llmgw.io/replica=2,llmgw.io/profile=tp=4,x"),
            id("a,b=c", 2, Some("tp=4,x"))
        );
        // `,llmgw.io/replica=` inside a model name, not followed by digits
        // and the profile: the model keeps it.
        assert_eq!(
            identity("llmgw.io/model=x,llmgw.io/replica=y,llmgw.io/replica=1,llmgw.io/profile=p"),
            id("x,llmgw.io/replica=y", 1, Some("p"))
        );
    }

    #[test]
    fn names_render_escaped_are_unescaped() {
        // What render writes for the model `a b,c=d` and the profile `p'1`.
        assert_eq!(
            identity("llmgw.io/model=a%20b%2Cc%3Dd,llmgw.io/replica=0,llmgw.io/profile=p%271"),
            id("a b,c=d", 0, Some("p'1"))
        );
        assert_eq!(identity("llmgw.io/model=100%,llmgw.io/replica=0"), id("100%", 0, None));
        assert!(matches!(identity("llmgw.io/model=%0A,llmgw.io/replica=0"), Some(Err(_))));
        assert!(matches!(identity("llmgw.io/model=%FF,llmgw.io/replica=0"), Some(Err(_))));
    }
}
