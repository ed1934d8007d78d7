//! InfiniBand adapters and the fabrics they are on, from sysfs.

use std::collections::BTreeMap;
use std::path::Path;

use crate::diag::{Code, Diag};

/// An adapter's active port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Port {
    pub hca: String,
    pub port: String,
    pub infiniband: bool,
    /// Upper 64 bits of GID 0, as 16 hex digits.
    pub subnet_prefix: Option<String>,
    pub sm_lid: Option<u32>,
}

const DEFAULT_PREFIX: &str = "fe80000000000000";

/// Active ports under `<sysfs>/class/infiniband/<dev>/ports/<n>/`.
pub fn active_ports(sysfs_root: &Path) -> Vec<Port> {
    let mut out = Vec::new();
    let Ok(devs) = std::fs::read_dir(sysfs_root.join("class/infiniband")) else {
        return out;
    };
    let mut devs: Vec<_> = devs.flatten().map(|d| d.file_name().to_string_lossy().into_owned()).collect();
    devs.sort();
    for dev in devs {
        let ports_dir = sysfs_root.join("class/infiniband").join(&dev).join("ports");
        let Ok(ports) = std::fs::read_dir(&ports_dir) else {
            continue;
        };
        let mut ports: Vec<_> = ports.flatten().map(|p| p.file_name().to_string_lossy().into_owned()).collect();
        ports.sort_by_key(|p| p.parse::<u32>().unwrap_or(u32::MAX));
        for port in ports {
            let dir = ports_dir.join(&port);
            let read = |f: &str| super::read_small(&dir.join(f)).map(|s| s.trim().to_string());
            // "4: ACTIVE"; anything else carries no traffic.
            if !read("state").is_some_and(|s| s.ends_with("ACTIVE")) {
                continue;
            }
            let infiniband = read("link_layer").is_none_or(|l| l.eq_ignore_ascii_case("infiniband"));
            let subnet_prefix = read("gids/0").and_then(|g| {
                let hex: String = g.split(':').take(4).map(|grp| format!("{:0>4}", grp.to_ascii_lowercase())).collect();
                (hex.len() == 16).then_some(hex)
            });
            let sm_lid = read("sm_lid").and_then(|s| {
                let s = s.trim();
                match s.strip_prefix("0x") {
                    Some(h) => u32::from_str_radix(h, 16).ok(),
                    None => s.parse().ok(),
                }
            });
            out.push(Port { hca: dev.clone(), port, infiniband, subnet_prefix, sm_lid });
        }
    }
    out
}

/// Groups active ports into fabrics. When the node config names fabrics,
/// those are all of them; otherwise an InfiniBand port with a non-default subnet prefix is on
/// `ib-<prefix>`, and one with the default prefix on `ib-sm<lid>` of its
/// subnet manager, with a warning. RoCE ports get a fabric only from config.
pub fn fabrics(ports: &[Port], configured: &BTreeMap<String, Vec<String>>) -> (Vec<(String, Vec<String>)>, Vec<Diag>) {
    let mut by_fabric: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut warned = false;
    let mut warnings = Vec::new();
    for p in ports {
        let from_config = configured.iter().find(|(_, hcas)| hcas.contains(&p.hca)).map(|(f, _)| f.clone());
        let fabric = match from_config {
            Some(f) => Some(f),
            // Fabrics named by the config are all the node's fabrics.
            None if !configured.is_empty() || !p.infiniband => None,
            None => match (&p.subnet_prefix, p.sm_lid) {
                (Some(prefix), _) if prefix != DEFAULT_PREFIX => Some(format!("ib-{prefix}")),
                (_, Some(lid)) => {
                    if !warned {
                        warned = true;
                        warnings.push(
                            Diag::warning(
                                Code::DefaultSubnetPrefix,
                                format!(
                                    "{} is on the default subnet prefix fe80::; naming its fabric by subnet manager (ib-sm{lid})",
                                    p.hca
                                ),
                            )
                            .help("separate fabrics often share the default prefix: name them in the node config ([fabrics] NAME = [\"mlx5_0\", ...])"),
                        );
                    }
                    Some(format!("ib-sm{lid}"))
                }
                _ => None,
            },
        };
        if let Some(f) = fabric {
            let hcas = by_fabric.entry(f).or_default();
            if !hcas.contains(&p.hca) {
                hcas.push(p.hca.clone());
            }
        }
    }
    (by_fabric.into_iter().collect(), warnings)
}
