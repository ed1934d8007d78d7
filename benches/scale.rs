//! The scale check: 10,000 nodes x 8 GPUs, a ~10,000-replica catalog (it
//! grows with the fleet for other sizes), and
//! the real release binary placing it with `--format json`.
//!
//!     cargo bench --bench scale            # 10k nodes
//!     cargo bench --bench scale -- 50000   # any size
//!
//! For each inventory format: `nodes --format json` (the yardstick),
//! `place --format json` grouped and full, and, on JSON, `capacity`; each
//! with wall time, the split from LLMGW_TIMINGS, and peak RSS. Then, on
//! JSON, the same catalog with 70 more models that no node can hold (each
//! rejected by nearly every node, each explained on its own): what a plan
//! that leaves replicas unplaced costs to write.

mod common;

use std::process::{Command, Stdio};
use std::time::Instant;

/// Models added that no node can hold, for the unplaced-replicas run.
const UNPLACEABLE: usize = 70;

fn main() {
    let nodes: u32 = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(10_000);
    let dir = tempfile::tempdir().expect("temp dir");
    let fleet = common::fleet(nodes);
    let gpus: usize = fleet.nodes.iter().map(|n| n.gpus.len()).sum();
    let catalog = common::catalog(common::models_for(nodes));
    let cat_path = dir.path().join("catalog.toml");
    std::fs::write(&cat_path, &catalog).unwrap();
    let unplaced_path = dir.path().join("catalog-unplaced.toml");
    std::fs::write(&unplaced_path, catalog.clone() + &common::unplaceable(UNPLACEABLE)).unwrap();
    let replicas: u64 = llmgw::catalog::check(&llmgw::diag::source("c.toml", catalog))
        .0
        .unwrap()
        .models
        .iter()
        .map(|m| u64::from(m.replicas))
        .sum();
    for (ext, format) in [("json", llmgw::doc::Format::Json), ("toml", llmgw::doc::Format::Toml)] {
        let inv_path = dir.path().join(format!("fleet.{ext}"));
        let text = llmgw::output::render_inventory(&fleet, format).unwrap();
        std::fs::write(&inv_path, &text).unwrap();
        println!(
            "\n{nodes} nodes, {gpus} GPUs, {replicas} replicas; inventory as {ext}: {:.1} MB",
            text.len() as f64 / 1e6
        );
        let (cat, inv) = (cat_path.to_str().unwrap(), inv_path.to_str().unwrap());
        let (nodes_wall, _) = measure(&["nodes", "--inventory", inv, "--format", "json"], "nodes --format json");
        let (place_wall, _) = measure(&["place", cat, "--inventory", inv, "--format", "json"], "place --format json");
        measure(
            &["place", cat, "--inventory", inv, "--format", "json", "--rejections", "full"],
            "place --format json --rejections full",
        );
        println!("place (grouped) takes {:.2}x the time of nodes", place_wall / nodes_wall);
        if ext == "json" {
            measure(
                &["capacity", cat, "--inventory", inv, "--add", "dgx-h100@ib-east", "--max", "64"],
                "capacity --max 64",
            );
            let cat = unplaced_path.to_str().unwrap();
            println!("\nwith {UNPLACEABLE} more models no node can hold:");
            let (wall, _) = measure(&["place", cat, "--inventory", inv, "--format", "json"], "place --format json");
            println!("place (grouped) takes {:.2}x the time of nodes", wall / nodes_wall);
            measure(
                &["place", cat, "--inventory", inv, "--format", "json", "--rejections", "none"],
                "place --format json --rejections none",
            );
        }
    }
}

/// Runs the release binary with phase timings on, and prints its wall time
/// and its own peak RSS; returns the wall time in seconds and the exit code.
fn measure(args: &[&str], what: &str) -> (f64, i32) {
    let start = Instant::now();
    // Reaped by wait4 below, which also reports the child's own peak RSS.
    #[allow(clippy::zombie_processes)]
    let mut child = Command::new(env!("CARGO_BIN_EXE_llmgw"))
        .args(args)
        .env("LLMGW_TIMINGS", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("llmgw runs");
    let mut stdout = child.stdout.take().unwrap();
    let counter = std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()).unwrap_or(0));
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 on our own child with valid out-pointers.
    unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = start.elapsed().as_secs_f64();
    let mut err = String::new();
    use std::io::Read;
    child.stderr.unwrap().read_to_string(&mut err).unwrap();
    // The phase timings; not the warnings (the catalog's B200 model is
    // one no node has, on purpose).
    for line in err.lines().filter(|l| l.starts_with("timings") || l.starts_with("capacity:")) {
        println!("  {what}: {line}");
    }
    let written = counter.join().unwrap();
    println!(
        "  {what}: wall {wall:.3} s, exit {}, peak RSS {:.0} MB, {:.1} MB written",
        libc::WEXITSTATUS(status),
        usage.ru_maxrss as f64 / 1024.0,
        written as f64 / 1e6
    );
    (wall, libc::WEXITSTATUS(status))
}
