//! `render`: what runs a plan where it was placed.

use std::io::Write;

use crate::cli;
use crate::diag::{Code, Diag};
use crate::output::{self, Sink};
use crate::{Exit, Outcome, load};

/// `render kubernetes`: one YAML stream, or one file per replica under `-o DIR`.
pub fn kubernetes(a: &cli::RenderArgs) -> Outcome {
    let plan = crate::render::read_plan(&load::read(&a.plan)?)?;
    let catalog = load::catalog(&a.catalog)?;
    let inv = load::inventories(&a.inventory)?;
    let objects = crate::kubernetes::render::render(&plan, &catalog, &inv)?;
    let yaml = |o: &crate::kubernetes::render::Object| {
        o.yaml().map_err(|e| Diag::error(Code::Io, format!("cannot write {}: {e}", o.name())))
    };
    match &a.output {
        None => {
            let mut out = Sink::open(None)?;
            for o in &objects {
                out.write_all(b"---\n")?;
                out.write_all(yaml(o)?.as_bytes())?;
            }
            out.finish()?;
        }
        Some(dir) => {
            create_dir(dir)?;
            for o in &objects {
                output::write_file(&dir.join(format!("{}.yaml", o.name())), yaml(o)?.as_bytes())?;
            }
        }
    }
    Ok(Exit::Success)
}

/// `render slurm`: the scripts one after another, or one file each under `-o DIR`.
pub fn slurm(a: &cli::RenderArgs) -> Outcome {
    let plan = crate::render::read_plan(&load::read(&a.plan)?)?;
    let catalog = load::catalog(&a.catalog)?;
    let inv = load::inventories(&a.inventory)?;
    let scripts = crate::slurm::render::render(&plan, &catalog, &inv)?;
    match &a.output {
        None => {
            let mut out = Sink::open(None)?;
            for (i, s) in scripts.iter().enumerate() {
                if i > 0 {
                    out.write_all(b"\n")?;
                }
                out.write_all(s.text.as_bytes())?;
            }
            out.finish()?;
        }
        Some(dir) => {
            create_dir(dir)?;
            for s in &scripts {
                output::write_file(&dir.join(&s.name), s.text.as_bytes())?;
            }
        }
    }
    Ok(Exit::Success)
}

fn create_dir(dir: &std::path::Path) -> Result<(), Diag> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Diag::error(Code::Io, format!("cannot create {}: {e}", dir.display())).help("nothing was written"))
}
