//! `discover`: this machine as a one-node inventory.

use std::io::Write;

use crate::cli::{self, DiscoverFormat};
use crate::diag::{Code, Diag};
use crate::discovery::{Machine, Seams, discover};
use crate::doc::Format;
use crate::exit::{Exit, Outcome};

pub fn run(a: &cli::DiscoverArgs) -> Outcome {
    if !(a.probe_timeout.is_finite() && a.probe_timeout > 0.0) {
        let d = Diag::error(
            Code::BadArgument,
            format!("--probe-timeout must be a positive number of seconds, not {}", a.probe_timeout),
        );
        return Err(d.into());
    }
    let machine = Machine::with(&Seams {
        root: a.root.clone(),
        config: a.config.clone(),
        gpu_facts: a.gpu_facts.clone(),
        probe_timeout: Some(a.probe_timeout),
    })?;
    let (node, warnings) = discover(&machine);
    crate::report::diagnostics::eprint(&warnings);
    let format = match a.format {
        Some(DiscoverFormat::Nfd) => {
            let mut out = crate::output::Sink::open(a.output.as_deref())?;
            out.write_all(crate::kubernetes::labels::feature_file(&node).as_bytes())?;
            out.finish()?;
            return Ok(Exit::Success);
        }
        Some(DiscoverFormat::Toml) => Some(Format::Toml),
        Some(DiscoverFormat::Json) => Some(Format::Json),
        Some(DiscoverFormat::Yaml) => Some(Format::Yaml),
        None => None,
    };
    let inv = crate::inventory::Inventory { nodes: vec![node] };
    super::inventory::write_inventory(&inv, a.output.as_deref(), format)?;
    Ok(Exit::Success)
}
