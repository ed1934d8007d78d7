//! Timing the release binary from the benches: best of three runs, with
//! the phase timings it prints under LLMGW_TIMINGS and its peak RSS.

use std::process::{Command, Stdio};
use std::time::Instant;

/// Runs the release binary three times with phase timings on, and prints
/// the best wall time, with that run's timings, peak RSS and output size;
/// returns the wall time in seconds and the exit code.
pub fn measure(args: &[&str], what: &str) -> (f64, i32) {
    measure_after(args, what, &|| {})
}

/// As `measure`, with `reset` run before each run (not timed): a render
/// into a folder that is removed first writes every file each time.
pub fn measure_after(args: &[&str], what: &str, reset: &dyn Fn()) -> (f64, i32) {
    let runs: Vec<Run> = (0..3)
        .map(|_| {
            reset();
            run(args)
        })
        .collect();
    let best = runs.into_iter().min_by(|a, b| a.wall.total_cmp(&b.wall)).expect("three runs");
    // The phase timings; not the warnings (the catalog's B200 model is
    // one no node has, on purpose).
    for line in best.stderr.lines().filter(|l| l.starts_with("timings") || l.starts_with("capacity:")) {
        println!("  {what}: {line}");
    }
    println!(
        "  {what}: wall {:.3} s (best of 3), exit {}, peak RSS {:.0} MB, {:.1} MB written",
        best.wall, best.code, best.rss_mb, best.written_mb
    );
    (best.wall, best.code)
}

struct Run {
    wall: f64,
    code: i32,
    rss_mb: f64,
    written_mb: f64,
    stderr: String,
}

fn run(args: &[&str]) -> Run {
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
    let mut stderr = child.stderr.take().unwrap();
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut text).map(|_| text).unwrap_or_default()
    });
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: zeroed is a valid rusage (plain integers), and wait4 is given
    // our own child and valid out-pointers.
    #[allow(unsafe_code)]
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::wait4(pid, &mut status, 0, &mut usage);
        usage
    };
    let wall = start.elapsed().as_secs_f64();
    Run {
        wall,
        code: libc::WEXITSTATUS(status),
        rss_mb: usage.ru_maxrss as f64 / 1024.0,
        written_mb: counter.join().unwrap() as f64 / 1e6,
        stderr: errors.join().unwrap(),
    }
}
