//! llmgw's facts about a node as Kubernetes labels in the `llmgw.io`
//! namespace, written by `discover --format nfd` as a Node Feature
//! Discovery feature file and read back by `inventory import kubernetes`.

use std::fmt::Write as _;

use crate::identity as keys;
use crate::inventory::Node;

/// The longest label value Kubernetes accepts.
const MAX_VALUE: usize = 63;

/// A value Kubernetes accepts: characters outside `[A-Za-z0-9._-]` become
/// `-`, at most 63 of them, starting and ending with a letter or digit
/// (cut first, then trimmed, so a cut never ends in `.` or `-`).
pub fn safe(v: &str) -> String {
    crate::names::label_value(v)
}

/// The NFD feature file for a discovered node: `key=value` lines.
pub fn feature_file(n: &Node) -> String {
    let mut out = String::from("# llmgw's facts about this node, for Node Feature Discovery (the llmgw.io\n");
    out.push_str("# namespace must be allowed: --extra-label-ns=llmgw.io, or NFD's denyLabelNs).\n");
    if let Some(by) = &n.discovered_by {
        let _ = writeln!(out, "{}={}", keys::DISCOVERED_BY, safe(&by.replace(' ', "-")));
    }
    for (engine, version) in n.engines.iter().flatten() {
        let v = safe(version);
        let _ = writeln!(out, "{}{}={}", keys::ENGINE_PREFIX, safe(engine), if v.is_empty() { "present" } else { &v });
    }
    for g in n.gpus.iter().filter(|g| !g.nvlink_peers.is_empty()) {
        let peers: Vec<String> = g.nvlink_peers.iter().map(u32::to_string).collect();
        let _ = writeln!(out, "{}{}={}", keys::NVLINK_PREFIX, g.index, peers.join("."));
    }
    // An NVLink domain is not written: GPU Feature Discovery labels it
    // (`nvidia.com/gpu.clique`), and the import reads it from there.
    for f in n.fabrics.iter().filter(|f| f.kind != crate::inventory::FabricKind::Nvlink) {
        let hcas = f.hcas.as_deref().unwrap_or_default();
        let joined = hcas.iter().map(|h| safe(h)).collect::<Vec<_>>().join(".");
        // Too long for a label: its count, which the import reads as
        // "adapters not reported".
        let value = if joined.len() > MAX_VALUE { hcas.len().to_string() } else { joined };
        let _ = writeln!(out, "{}{}={value}", keys::FABRIC_PREFIX, safe(&f.name));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn values_are_label_safe() {
        assert_eq!(super::safe("llmgw 0.1.0"), "llmgw-0.1.0");
        assert_eq!(super::safe("0.6.3+cu124"), "0.6.3-cu124");
        assert_eq!(super::safe("--x--"), "x");
        assert_eq!(super::safe(&"a".repeat(100)).len(), 63);
        assert_eq!(super::safe(&format!("{}.{}", "a".repeat(62), "b".repeat(9))), "a".repeat(62));
    }
}
