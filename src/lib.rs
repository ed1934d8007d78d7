//! llmgw: decides where LLM inference replicas run on a GPU fleet, and says why.
//!
//! `run` is the whole program; `main.rs` only hands it the arguments. Each
//! command returns an `Exit`, or the diagnostics that made its input unusable.
//!
//! No unsafe code but one call: the system calls llmgw needs (poll,
//! statvfs, killing a process group, signal handling) come through rustix
//! and signal-hook; NVML's GPU fabric info, which nvml-wrapper has no safe
//! wrapper for, is the one raw call (`discovery::gpu`, with its reasons).
#![deny(unsafe_code)]

pub mod capacity;
pub mod catalog;
pub mod cli;
pub mod commands;
pub mod decode;
pub mod diag;
pub mod diff;
pub mod discovery;
pub mod doc;
pub mod engine_check;
pub mod engines;
pub mod exit;
pub mod fit;
pub mod identity;
pub mod images;
pub mod import;
pub mod input;
pub mod inventory;
pub mod json;
pub mod kinds;
pub mod kubernetes;
pub mod launch;
pub mod load;
pub mod map;
pub mod names;
pub mod output;
pub mod placement;
pub mod plan;
pub mod process;
pub mod render;
pub mod report;
pub mod shape;
pub mod share;
pub mod slurm;
pub mod source;
pub mod synth;
pub mod taints;
pub mod term;
mod timings;
pub mod units;
pub mod usage;
pub mod vendor;
pub mod wording;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;

use crate::exit::{Exit, Failure};

pub fn run<I: IntoIterator<Item = OsString>>(args: I) -> ExitCode {
    let cli = match cli::Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version to stdout (exit 0) and usage errors
            // to stderr; a bad flag is unusable input.
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { Exit::BadInput as u8 } else { 0 });
        }
    };
    term::set_color(cli.color);
    input::set_max_input_bytes(cli.max_input_bytes);
    match commands::dispatch(cli.command) {
        Ok(exit) => ExitCode::from(exit as u8),
        Err(Failure::Input(diags)) => {
            report::diagnostics::eprint(&diags);
            ExitCode::from(Exit::BadInput as u8)
        }
        // `llmgw place ... | head` closes the pipe early: not an error.
        Err(Failure::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(Failure::Io(e)) => {
            eprintln!("llmgw: {e}");
            ExitCode::from(Exit::BadInput as u8)
        }
    }
}
