//! Node taints and profile tolerations, with Kubernetes' semantics: a taint
//! `key=value:Effect` keeps off every workload that does not tolerate it; a
//! toleration names a key, and optionally a value (else operator Exists)
//! and an effect (else every effect). See docs/inventory.md and
//! docs/catalog.md.

use std::fmt;

/// What a taint does to workloads that do not tolerate it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Effect {
    NoSchedule,
    /// Also evicts what runs: for placement the same as NoSchedule.
    NoExecute,
    /// A preference only: never a reason to reject a node.
    PreferNoSchedule,
}

impl Effect {
    pub const ALL: [Effect; 3] = [Effect::NoSchedule, Effect::NoExecute, Effect::PreferNoSchedule];

    pub fn as_str(self) -> &'static str {
        match self {
            Effect::NoSchedule => "NoSchedule",
            Effect::NoExecute => "NoExecute",
            Effect::PreferNoSchedule => "PreferNoSchedule",
        }
    }

    pub fn parse(s: &str) -> Option<Effect> {
        Effect::ALL.into_iter().find(|e| e.as_str() == s)
    }

    /// Whether a workload that does not tolerate it is kept off the node.
    pub fn repels(self) -> bool {
        self != Effect::PreferNoSchedule
    }
}

/// A taint as the inventory writes it: `key=value:Effect` or `key:Effect`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Taint<'a> {
    pub key: &'a str,
    /// `""` for a taint without a value.
    pub value: &'a str,
    pub effect: Effect,
}

/// The one GPU taint every GPU workload tolerates: clouds that taint GPU
/// nodes add this toleration to pods that request GPUs, and render writes
/// it on every GPU pod.
pub const GPU_KEY: &str = "nvidia.com/gpu";

const TAINT_FORM: &str =
    "a taint reads `key=value:Effect` or `key:Effect`, Effect one of NoSchedule, NoExecute, PreferNoSchedule";
const TOLERATION_FORM: &str = "a toleration reads `key`, `key=value`, `key:Effect` or `key=value:Effect`, Effect one of NoSchedule, NoExecute, PreferNoSchedule";

/// Parses `key[=value]:Effect`; the error says what is wrong.
pub fn parse_taint(s: &str) -> Result<Taint<'_>, String> {
    let Some((kv, effect)) = s.rsplit_once(':') else {
        return Err(format!("the taint `{s}` has no effect; {TAINT_FORM}"));
    };
    let effect = Effect::parse(effect).ok_or_else(|| format!("`{effect}` is not a taint effect; {TAINT_FORM}"))?;
    let (key, value) = kv.split_once('=').unwrap_or((kv, ""));
    check_key(key, s, TAINT_FORM)?;
    Ok(Taint { key, value, effect })
}

fn check_key(key: &str, whole: &str, form: &str) -> Result<(), String> {
    if key.is_empty() {
        return Err(format!("`{whole}` has an empty key; {form}"));
    }
    if key.contains(['=', ':']) || key.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("`{whole}`: the key `{key}` holds a space, `=` or `:`; {form}"));
    }
    Ok(())
}

/// A profile's toleration.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Toleration {
    pub key: String,
    /// `None`: operator Exists (any value); `Some(v)`: operator Equal.
    pub value: Option<String>,
    /// `None`: every effect.
    pub effect: Option<Effect>,
}

impl Toleration {
    /// Parses `key`, `key=value`, `key:Effect` or `key=value:Effect`.
    pub fn parse(s: &str) -> Result<Toleration, String> {
        let (kv, effect) = match s.rsplit_once(':') {
            Some((kv, e)) => {
                let effect =
                    Effect::parse(e).ok_or_else(|| format!("`{e}` is not a taint effect; {TOLERATION_FORM}"))?;
                (kv, Some(effect))
            }
            None => (s, None),
        };
        let (key, value) = match kv.split_once('=') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (kv, None),
        };
        check_key(key, s, TOLERATION_FORM)?;
        if value.as_deref().is_some_and(|v| v.contains([':', '=']) || v.chars().any(char::is_control)) {
            return Err(format!("`{s}`: a value holds no `:`, `=` or control character; {TOLERATION_FORM}"));
        }
        Ok(Toleration { key: key.to_string(), value, effect })
    }

    /// Kubernetes' rule: the same key, the value when one is given, the
    /// effect when one is given.
    pub fn tolerates(&self, t: &Taint<'_>) -> bool {
        self.key == t.key
            && self.value.as_deref().is_none_or(|v| v == t.value)
            && self.effect.is_none_or(|e| e == t.effect)
    }
}

impl fmt::Display for Toleration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.key)?;
        if let Some(v) = &self.value {
            write!(f, "={v}")?;
        }
        if let Some(e) = self.effect {
            write!(f, ":{}", e.as_str())?;
        }
        Ok(())
    }
}

/// Whether a workload with these tolerations (and, for a GPU workload,
/// the implicit `nvidia.com/gpu` one) may be placed despite the taint.
pub fn tolerated(t: &Taint<'_>, tolerations: &[Toleration], gpu: bool) -> bool {
    !t.effect.repels() || (gpu && t.key == GPU_KEY) || tolerations.iter().any(|x| x.tolerates(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taints_parse_as_written() {
        let t = parse_taint("nvidia.com/gpu=present:NoSchedule").unwrap();
        assert_eq!((t.key, t.value, t.effect), ("nvidia.com/gpu", "present", Effect::NoSchedule));
        let t = parse_taint("dedicated:NoExecute").unwrap();
        assert_eq!((t.key, t.value, t.effect), ("dedicated", "", Effect::NoExecute));
        for bad in ["x", "x=y", ":NoSchedule", "x:Sometimes", "x y:NoSchedule", "=v:NoSchedule"] {
            assert!(parse_taint(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn tolerations_follow_kubernetes() {
        let sku = parse_taint("sku=gpu:NoSchedule").unwrap();
        let tol = |s: &str| Toleration::parse(s).unwrap();
        assert!(tol("sku").tolerates(&sku));
        assert!(tol("sku=gpu").tolerates(&sku));
        assert!(tol("sku:NoSchedule").tolerates(&sku));
        assert!(tol("sku=gpu:NoSchedule").tolerates(&sku));
        assert!(!tol("sku=cpu").tolerates(&sku));
        assert!(!tol("sku:NoExecute").tolerates(&sku));
        assert!(!tol("other").tolerates(&sku));
        // The GPU taint is tolerated by GPU workloads only; a preference never repels.
        let gpu = parse_taint("nvidia.com/gpu=present:NoSchedule").unwrap();
        assert!(tolerated(&gpu, &[], true));
        assert!(!tolerated(&gpu, &[], false));
        assert!(tolerated(&parse_taint("x:PreferNoSchedule").unwrap(), &[], false));
        assert_eq!(tol("a=b:NoExecute").to_string(), "a=b:NoExecute");
        for bad in ["", "=x", "a:Bad", "a=b=c"] {
            assert!(Toleration::parse(bad).is_err(), "{bad}");
        }
    }
}
