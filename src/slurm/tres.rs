//! Slurm's trackable-resource strings: a node's `AllocTRES=cpu=9,mem=320G,
//! gres/gpu=2,gres/gpu:a100=2`, a job's `TRES=` / `tres_alloc_str`, and the
//! per-node request of `TresPerNode=gres:gpu:h100:4` / `tres_per_node`.

/// What one TRES string counts; `None` where it does not say.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Tres {
    pub cpus: Option<u64>,
    /// MiB.
    pub memory_mb: Option<u64>,
    /// `node=N`: how many nodes a job's string covers.
    pub nodes: Option<u64>,
    /// `gres/gpu=N`: GPUs of any type.
    pub gpus: Option<u64>,
    /// `gres/gpu:TYPE=N`, in the order written.
    pub typed: Vec<(String, u64)>,
}

/// A memory size as Slurm prints it (`320G`, `6.50G`, `490120M`, `16384`:
/// MiB when it has no unit), in MiB rounded down; `None` when it is not one.
pub fn memory_mb(v: &str) -> Option<u64> {
    let v = v.trim();
    let (num, scale) = match v.char_indices().last()? {
        (at, 'K' | 'k') => (&v[..at], 1.0 / 1024.0),
        (at, 'M' | 'm') => (&v[..at], 1.0),
        (at, 'G' | 'g') => (&v[..at], 1024.0),
        (at, 'T' | 't') => (&v[..at], 1024.0 * 1024.0),
        (at, 'P' | 'p') => (&v[..at], 1024.0 * 1024.0 * 1024.0),
        _ => (v, 1.0),
    };
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let n: f64 = num.parse().ok()?;
    crate::units::mib_of_bytes(n * scale * 1024.0 * 1024.0)
}

/// The counts of a TRES string; entries llmgw has no use for (`billing`,
/// `energy`, licences, other gres) are passed over, as are values that are
/// not numbers.
pub fn parse(s: &str) -> Tres {
    let mut out = Tres::default();
    for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let Some((key, value)) = item.split_once('=') else { continue };
        let count = || value.trim().parse::<u64>().ok();
        match key {
            "cpu" => out.cpus = count(),
            "mem" => out.memory_mb = memory_mb(value),
            "node" => out.nodes = count(),
            "gres/gpu" => out.gpus = count(),
            _ => {
                if let (Some(ty), Some(n)) = (key.strip_prefix("gres/gpu:"), count()) {
                    out.typed.push((ty.to_string(), n));
                }
            }
        }
    }
    out
}

/// GPUs asked for per node in a `TresPerNode` / `tres_per_node` string
/// (`gres:gpu:h100:4`, `gres/gpu:4`, `gres/gpu=2`, `gpu:2`): the type
/// (empty when any) and the count of each GPU entry.
pub fn gpus_per_node(s: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for item in s.split(',').map(str::trim) {
        let item = item.strip_prefix("gres:").or_else(|| item.strip_prefix("gres/")).unwrap_or(item);
        let Some(rest) = item.strip_prefix("gpu") else { continue };
        let (spec, count) = match rest.rsplit_once(['=', ':']) {
            _ if rest.is_empty() => ("", "1"),
            Some((spec, n)) if n.bytes().all(|b| b.is_ascii_digit()) && !n.is_empty() => (spec, n),
            // `gpu:h100`: one of the type.
            Some(("", ty)) => (ty, "1"),
            _ => continue,
        };
        let ty = spec.strip_prefix(':').unwrap_or(spec);
        if ty.contains([':', '=']) {
            continue;
        }
        if let Ok(n) = count.parse::<u64>() {
            out.push((ty.to_string(), n));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_alloc_tres_is_read() {
        let t = parse("cpu=2,mem=104G,gres/gpu=1,gres/gpu:nvidia_a100-sxm4-40gb=1");
        assert_eq!(t.cpus, Some(2));
        assert_eq!(t.memory_mb, Some(104 * 1024));
        assert_eq!(t.gpus, Some(1));
        assert_eq!(t.typed, [("nvidia_a100-sxm4-40gb".to_string(), 1)]);
        assert_eq!(parse("cpu=13,mem=6.50G").memory_mb, Some(6656));
        assert_eq!(parse("cpu=122,mem=490120M").memory_mb, Some(490_120));
        assert_eq!(parse("cpu=8,mem=64G,node=2,billing=8,gres/gpu=8").nodes, Some(2));
        assert_eq!(parse(""), Tres::default());
        assert_eq!(parse("cpu=x,mem=lots,gres/gpu:a=y").cpus, None);
    }

    #[test]
    fn memory_sizes_have_units() {
        assert_eq!(memory_mb("16G"), Some(16384));
        assert_eq!(memory_mb("512"), Some(512));
        assert_eq!(memory_mb("2048K"), Some(2));
        assert_eq!(memory_mb("1T"), Some(1_048_576));
        assert_eq!(memory_mb("G"), None);
        assert_eq!(memory_mb("-1G"), None);
        assert_eq!(memory_mb(""), None);
    }

    #[test]
    fn per_node_gpu_requests_are_read() {
        let v = |s: &str| gpus_per_node(s);
        assert_eq!(v("gres:gpu:h100:4"), [("h100".to_string(), 4)]);
        assert_eq!(v("gres/gpu:4"), [(String::new(), 4)]);
        assert_eq!(v("gres/gpu=2"), [(String::new(), 2)]);
        assert_eq!(v("gres:gpu"), [(String::new(), 1)]);
        assert_eq!(v("gres:gpu:nvidia_a100_3g.39gb:1"), [("nvidia_a100_3g.39gb".to_string(), 1)]);
        assert_eq!(v("gres:shard:2,gres:gpu:a:1"), [("a".to_string(), 1)]);
        assert!(v("").is_empty());
        assert!(v("gres:gpu:a:b:c").is_empty());
    }
}
