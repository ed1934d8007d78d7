//! Runs the real binary, as a user would, from the repository root.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn llmgw() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_llmgw"));
    c.current_dir(root()).env("NO_COLOR", "1").env_remove("CLICOLOR_FORCE");
    c
}

pub fn run(args: &[&str]) -> Output {
    llmgw().args(args).output().expect("llmgw runs")
}

/// Exit code, stdout and stderr in one text, for snapshots.
pub fn transcript(out: &Output) -> String {
    format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        out.status.code().map_or("signal".into(), |c| c.to_string()),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

pub fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", transcript(out)))
}

pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&p, text).unwrap();
    p
}

/// Writes an executable script (a fake engine, a fake python3).
pub fn executable(path: &Path, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, script).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Each case (file name, text, what stderr must say) written to `dir` and
/// given to `import`: exit 2, the message, a span in that file, no stdout.
pub fn assert_each_refused(dir: &Path, cases: Vec<(&str, String, &str)>, import: impl Fn(&str) -> Output) {
    for (name, text, says) in cases {
        let f = write(dir, name, &text);
        let out = import(f.to_str().unwrap());
        assert_eq!(code(&out), 2, "{name}: {}", transcript(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{name}: {err}");
        assert!(err.contains(&format!("{name}:")), "{name}: no span: {err}");
        assert!(out.stdout.is_empty(), "{name}: wrote something");
    }
}

/// Tests that submit jobs to the test Slurm cluster take turns: a job of one
/// holding GPUs the other planned would leave the other's jobs pending.
pub fn slurm_cluster_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A free port below the kernel's ephemeral range (32768 and up on Linux)
/// and away from the ports render gives engines (8000, 10001, 20000,
/// 29500, 30000 and up), so that no `srun` step or outgoing connection of
/// another test takes it between this check and the server that binds it.
pub fn quiet_port() -> u16 {
    let offset = (std::process::id() % 8000) as u16;
    (0..8000u16)
        .map(|k| 12000 + (offset + k) % 8000)
        .find(|p| std::net::TcpListener::bind(("127.0.0.1", *p)).is_ok())
        .expect("a free port from 12000 to 19999")
}

/// `place CATALOG -i FLEET -o DIR/plan.json`, which must place everything;
/// the plan's path.
pub fn placed_plan(dir: &Path, catalog: &Path, fleet: &Path) -> PathBuf {
    let plan = dir.join("plan.json");
    let out = run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    plan
}

/// `render KIND PLAN --catalog CATALOG -i FLEET EXTRA...`.
pub fn render_plan(kind: &str, plan: &Path, catalog: &Path, fleet: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "render",
        kind,
        plan.to_str().unwrap(),
        "--catalog",
        catalog.to_str().unwrap(),
        "-i",
        fleet.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    run(&args)
}

/// The names of a folder's entries, sorted.
pub fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// Diagnostics as one line of words: the report wraps them, with `│` at
/// the start of a continued line.
pub fn flat(stderr: &[u8]) -> String {
    String::from_utf8_lossy(stderr).split_whitespace().filter(|w| *w != "│").collect::<Vec<_>>().join(" ")
}

/// Runs llmgw on `args` (its output thrown away) and returns its exit code
/// and its own peak resident memory in bytes, for tests that hold a
/// hostile input to a memory bound; `None` without GNU time. Measured by
/// `/usr/bin/time`, a small process: a child of the test process itself
/// would count the test process's memory, which it was forked from.
pub fn peak_rss(args: &[&str]) -> Option<(i32, u64)> {
    let time = Path::new("/usr/bin/time");
    if !time.is_file() {
        return None;
    }
    let report = tempfile::NamedTempFile::new().unwrap();
    let status = Command::new(time)
        .args(["-f", "%M", "-o"])
        .arg(report.path())
        .arg(env!("CARGO_BIN_EXE_llmgw"))
        .args(args)
        .current_dir(root())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    let text = std::fs::read_to_string(report.path()).unwrap();
    // `time` writes "Command exited with non-zero status N" first.
    let kb: u64 = text.lines().last().and_then(|l| l.trim().parse().ok()).unwrap();
    Some((status.code().unwrap_or(-1), kb * 1024))
}

/// Sends `sig` (`TERM`, `INT`, `HUP`) to a child at once, with kill(2):
/// the tests that interrupt a write catch it in a window of a few hundred
/// milliseconds.
pub fn signal(child: &std::process::Child, sig: &str) {
    let sig = match sig {
        "TERM" => libc::SIGTERM,
        "INT" => libc::SIGINT,
        "HUP" => libc::SIGHUP,
        other => panic!("no signal {other} here"),
    };
    let pid = libc::pid_t::try_from(child.id()).expect("a pid fits pid_t");
    // SAFETY: kill(2) with a pid this test spawned and has not waited on.
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0, "kill {pid}: {}", std::io::Error::last_os_error());
}

/// Starts the command with SIGINT, SIGHUP and SIGTERM at their defaults,
/// whatever the test runner inherited: a shell starts a background job
/// (`.ci/run &`) with SIGINT ignored and nohup ignores SIGHUP, and llmgw
/// rightly carries on through a signal ignored when it started. The tests
/// that interrupt a write mean a signal that was not.
pub fn default_signals(cmd: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec the closure only calls signal(2), which
    // is async-signal-safe, and allocates nothing.
    unsafe {
        cmd.pre_exec(|| {
            for sig in [libc::SIGINT, libc::SIGHUP, libc::SIGTERM] {
                libc::signal(sig, libc::SIG_DFL);
            }
            Ok(())
        })
    }
}
