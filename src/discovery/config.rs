//! The node config: what discovery cannot find out for itself.
//!
//! ```toml
//! id = "gpu-a01"                     # default: the hostname
//! state = "ready"
//! labels = { zone = "a" }
//! model_dirs = ["/models", "/root/.cache/huggingface"]
//! [fabrics]                          # fabric name -> this node's HCAs on it
//! ib-east = ["mlx5_0", "mlx5_1"]
//! [engines]                          # engine -> binary, instead of PATH lookup
//! vllm = "/opt/vllm/bin/vllm"
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::decode::Decoder;
use crate::diag::{Code, Diag, suggest};
use crate::doc;
use crate::inventory::State;

#[derive(Clone, Debug, Default)]
pub struct NodeConfig {
    pub id: Option<String>,
    pub state: Option<State>,
    pub labels: BTreeMap<String, String>,
    pub model_dirs: Vec<PathBuf>,
    pub fabrics: BTreeMap<String, Vec<String>>,
    pub engines: BTreeMap<String, PathBuf>,
}

const FIELDS: &[&str] = &["id", "state", "labels", "model_dirs", "fabrics", "engines"];

impl NodeConfig {
    /// The config at `path`, or `<root>/etc/llmgw/node.toml` when present,
    /// or an empty one.
    pub fn load(path: Option<&Path>, root: &Path) -> Result<NodeConfig, Vec<Diag>> {
        let path = match path {
            Some(p) => p.to_path_buf(),
            None => {
                let default = root.join("etc/llmgw/node.toml");
                if !default.exists() {
                    return Ok(NodeConfig::default());
                }
                default
            }
        };
        let src = crate::load::read(&path).map_err(|d| vec![d])?;
        parse(&src)
    }
}

pub fn parse(src: &crate::diag::Source) -> Result<NodeConfig, Vec<Diag>> {
    let root = doc::parse(src.text(), src.format()).map_err(|e| {
        vec![
            Diag::error(Code::Syntax, format!("{} is not a valid node config: {}", src.name(), e.message))
                .at(src, e.span, "here"),
        ]
    })?;
    let mut dec = Decoder::new(src.clone());
    let mut cfg = NodeConfig::default();
    if let Some(mut t) = dec.table(&root, "node config") {
        cfg.id = t.get("id").and_then(|n| dec.string(n, "id"));
        if let Some(n) = t.get("state")
            && let Some(s) = dec.string(n, "state")
        {
            cfg.state = State::parse(&s);
            if cfg.state.is_none() {
                dec.error(
                    Code::UnknownState,
                    n.span,
                    format!("unknown node state `{s}`"),
                    "unknown state",
                    Some("a node is one of: ready, cordoned, draining, down".into()),
                );
            }
        }
        if let Some(n) = t.get("labels") {
            cfg.labels =
                dec.string_map(n, "labels").unwrap_or_default().into_iter().map(|e| (e.key, e.value)).collect();
        }
        if let Some(n) = t.get("model_dirs") {
            cfg.model_dirs =
                dec.string_list(n, "model_dirs").unwrap_or_default().into_iter().map(PathBuf::from).collect();
        }
        if let Some(n) = t.get("fabrics") {
            if let doc::Value::Table(entries) = &n.value {
                for e in entries {
                    let hcas = dec.string_list(&e.value, &format!("fabrics.{}", e.key)).unwrap_or_default();
                    cfg.fabrics.insert(e.key.to_string(), hcas);
                }
            } else {
                dec.table(n, "fabrics");
            }
        }
        if let Some(n) = t.get("engines") {
            for e in dec.string_map(n, "engines").unwrap_or_default() {
                if crate::engines::find(&e.key).is_none() {
                    let help = Some(suggest(&e.key, crate::engines::names(), "known engines"));
                    dec.error(
                        Code::UnknownEngine,
                        e.key_span,
                        format!("unknown engine `{}`", e.key),
                        "not an engine llmgw knows",
                        help,
                    );
                }
                cfg.engines.insert(e.key, PathBuf::from(e.value));
            }
        }
        t.finish(&mut dec, FIELDS);
    }
    if dec.diags.is_empty() { Ok(cfg) } else { Err(dec.diags) }
}
