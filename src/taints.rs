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

/// The GPU taint every NVIDIA GPU workload tolerates: clouds that taint
/// GPU nodes add this toleration to pods that request NVIDIA GPUs (the
/// ExtendedResourceToleration admission plugin: one for each extended
/// resource a pod asks for), and render writes it on every such pod.
pub const GPU_KEY: &str = crate::vendor::NVIDIA_GPU;

/// The same for AMD GPUs, whose device plugin offers `amd.com/gpu`: an AMD
/// replica tolerates this taint, never NVIDIA's (its pods do not ask for
/// `nvidia.com/gpu`, so nothing adds that toleration to them).
pub const AMD_GPU_KEY: &str = crate::vendor::AMD_GPU;

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
/// the implicit one for its GPUs' resource, `implicit`: `nvidia.com/gpu`
/// or `amd.com/gpu`) may be placed despite the taint. One rule for place
/// and render: render writes exactly that implicit toleration.
pub fn tolerated(t: &Taint<'_>, tolerations: &[Toleration], implicit: Option<&str>) -> bool {
    !t.effect.repels() || implicit == Some(t.key) || tolerations.iter().any(|x| x.tolerates(t))
}

/// A profile's tolerations by key, so that a fleet of 80,000 distinct
/// taints and a profile of 80,000 tolerations cost one look-up a taint,
/// not one comparison a pair.
pub struct ByKey<'a> {
    keys: std::collections::HashMap<&'a str, Vec<&'a Toleration>>,
    implicit: Option<&'a str>,
}

impl<'a> ByKey<'a> {
    pub fn new(tolerations: &'a [Toleration], implicit: Option<&'a str>) -> ByKey<'a> {
        let mut keys: std::collections::HashMap<&str, Vec<&Toleration>> = std::collections::HashMap::new();
        for t in tolerations {
            keys.entry(t.key.as_str()).or_default().push(t);
        }
        ByKey { keys, implicit }
    }

    /// As `tolerated`.
    pub fn tolerates(&self, t: &Taint<'_>) -> bool {
        !t.effect.repels()
            || self.implicit == Some(t.key)
            || self.keys.get(t.key).is_some_and(|list| list.iter().any(|x| x.tolerates(t)))
    }
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
        assert!(tolerated(&gpu, &[], Some(GPU_KEY)));
        assert!(!tolerated(&gpu, &[], None));
        // An AMD workload asks for amd.com/gpu: NVIDIA's taint keeps it off.
        assert!(!tolerated(&gpu, &[], Some(AMD_GPU_KEY)));
        assert!(tolerated(&parse_taint("amd.com/gpu:NoSchedule").unwrap(), &[], Some(AMD_GPU_KEY)));
        assert!(tolerated(&parse_taint("x:PreferNoSchedule").unwrap(), &[], None));
        assert_eq!(tol("a=b:NoExecute").to_string(), "a=b:NoExecute");
        for bad in ["", "=x", "a:Bad", "a=b=c"] {
            assert!(Toleration::parse(bad).is_err(), "{bad}");
        }
    }
}
