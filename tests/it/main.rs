//! The integration tests, one binary with a module per topic: each runs the
//! real `llmgw` on real files, or drives the library as a user of it would.

mod amplify;
mod architecture;
mod cli;
mod common;
mod diagnostics;
mod discovery;
mod docs;
mod engine_check;
mod fit;
mod generated;
mod hardening;
mod hostile_imports;
mod imports_never_panic;
mod injection;
mod kubernetes;
mod kubernetes_trust;
mod loaders_never_panic;
mod openapi;
mod policy;
mod real_outputs;
mod real_whole_nodes;
mod render;
mod render_folder;
mod render_loop;
mod render_turns;
mod scenarios;
mod serve;
mod serving_two;
mod slurm;
mod slurm_jobs;
mod slurm_loop;
mod slurm_trust;
mod slurm_whole_nodes;
mod synth;
mod whole_nodes;
