//! NVLink domains: a multi-node replica tries them before any network
//! fabric, and a fleet without one places by fabric name as it always did.

use std::fmt::Write as _;

use super::load;
use crate::placement::{Decision, Fleet, Mode, Options, plan};

const CATALOG: &str = r#"
[[model]]
name = "big"
source = "org/big"
replicas = 1
[[model.profile]]
name = "two-nodes"
engine = "vllm"
gpu_class = "gb200"
gpus_per_node = 4
nodes = 2
"#;

/// Two racks' worth of nodes: `a-ib` (an InfiniBand fabric, first by name)
/// and, when `kind` is given, `z-rack` of that kind.
fn inventory(kind: Option<&str>) -> String {
    let mut s = String::new();
    for i in 0..4 {
        let fabric = if i < 2 { "a-ib" } else { "z-rack" };
        let _ = writeln!(s, "[[node]]\nid = \"n{i}\"");
        for g in 0..4 {
            let _ = writeln!(s, "[[node.gpu]]\nindex = {g}\nname = \"NVIDIA GB200\"\nmemory_mb = 189471");
        }
        let _ = writeln!(s, "[[node.fabric]]\nname = \"{fabric}\"");
        if let (Some(k), true) = (kind, i >= 2) {
            let _ = writeln!(s, "kind = \"{k}\"");
        }
    }
    s
}

fn fabric_of_first(kind: Option<&str>, mode: Mode) -> String {
    let (cat, inv) = load(CATALOG, &inventory(kind));
    let p = plan(&cat, &inv, Options { mode, ..Options::default() });
    let Decision::Placed(pl) = &p.decisions[0] else { panic!("not placed") };
    Fleet::new(&inv).fabrics[pl.fabric.expect("a multi-node replica has a fabric") as usize].to_string()
}

#[test]
fn an_nvlink_domain_is_tried_before_a_network_fabric_in_both_paths() {
    for mode in [Mode::Fast, Mode::Reference] {
        assert_eq!(fabric_of_first(Some("nvlink"), mode), "z-rack");
        // Without a kind (InfiniBand) or as RoCE: the first by name.
        assert_eq!(fabric_of_first(None, mode), "a-ib");
        assert_eq!(fabric_of_first(Some("roce"), mode), "a-ib");
    }
}
