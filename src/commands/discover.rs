//! `discover`: this machine as a one-node inventory.

use crate::cli;
use crate::diag::{Code, Diag};
use crate::discovery::{Machine, Seams, discover};
use crate::{Exit, Outcome};

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
    let inv = crate::inventory::Inventory { nodes: vec![node] };
    super::inventory::write_inventory(&inv, a.output.as_deref(), a.format)?;
    Ok(Exit::Success)
}
