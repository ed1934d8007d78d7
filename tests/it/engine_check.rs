//! engine-check runs version commands safely: stdin closed, own process
//! group, the whole group killed at the timeout.

use crate::common::*;

use std::path::Path;
use std::time::{Duration, Instant};

fn check(bin: &Path, args: &[&str]) -> std::process::Output {
    let mut a = vec!["engine-check"];
    a.extend_from_slice(args);
    llmgw().args(&a).env("PATH", bin).output().unwrap()
}

fn alive(pid: &str) -> bool {
    // A zombie waiting for its reaper is not running anything.
    std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
        .is_ok_and(|s| s.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')))
}

#[test]
fn versions_from_stdout_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path();
    executable(&bin.join("vllm"), "#!/bin/sh\necho 0.6.3\n");
    executable(&bin.join("llama-server"), "#!/bin/sh\necho 'version: 4242 (abcdef0)' >&2\n");
    let out = check(bin, &["vllm", "llama.cpp", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let v = json(&out);
    assert_eq!(v["engines"][0]["engine"], "vllm");
    assert_eq!(v["engines"][0]["version"], "0.6.3");
    assert_eq!(v["engines"][0]["status"], "ok");
    assert_eq!(v["engines"][1]["version"], "version: 4242 (abcdef0)");
}

#[test]
fn missing_or_failing_named_engines_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path();
    executable(&bin.join("tgi-broken"), "#!/bin/sh\nexit 0\n");
    executable(&bin.join("text-generation-launcher"), "#!/bin/sh\necho 'no CUDA' >&2\nexit 3\n");
    let out = check(bin, &["tgi", "--format", "json"]);
    assert_eq!(code(&out), 1);
    assert_eq!(json(&out)["engines"][0]["status"], "failed");
    assert!(json(&out)["engines"][0]["detail"].as_str().unwrap().contains("exit 3: no CUDA"));
    let out = check(bin, &["vllm"]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    assert!(stdout(&out).contains("missing"));
    // Without names, every engine is listed; a missing one is no failure,
    // a found one that fails its check is (it used to exit 0).
    let out = check(bin, &[]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    std::fs::remove_file(bin.join("text-generation-launcher")).unwrap();
    let out = check(bin, &[]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
}

#[test]
fn unknown_engine_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let out = check(dir.path(), &["vlm"]);
    assert_eq!(code(&out), 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("did you mean `vllm`?"));
}

#[test]
fn a_wrapper_that_starts_a_server_is_killed_with_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    let pids = dir.path().join("pids");
    // Ignores --version, starts a "server" and a worker, and waits forever.
    executable(
        &bin.join("vllm"),
        &format!(
            "#!/bin/sh\n/bin/sleep 300 &\necho $! > {p}.worker\necho $$ > {p}.main\nread line\n/bin/sleep 300\n",
            p = pids.display()
        ),
    );
    let start = Instant::now();
    let out = check(&bin, &["vllm", "--timeout", "1", "--format", "json"]);
    let took = start.elapsed();
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    assert_eq!(json(&out)["engines"][0]["status"], "timeout");
    assert!(took < Duration::from_secs(2), "took {took:?}");
    std::thread::sleep(Duration::from_millis(100));
    for which in ["main", "worker"] {
        let pid = std::fs::read_to_string(format!("{}.{which}", pids.display())).unwrap();
        assert!(!alive(&pid), "the {which} process {pid} survived");
    }
}

#[test]
fn sglang_version_comes_from_python() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path();
    executable(
        &bin.join("python3"),
        "#!/bin/sh\ncase \"$2\" in *find_spec*sglang*) exit 0;; *metadata*sglang*) echo 0.4.1;; *) exit 1;; esac\n",
    );
    let out = check(bin, &["sglang", "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert_eq!(json(&out)["engines"][0]["version"], "0.4.1");
}

#[test]
fn python_without_the_sglang_module_is_missing_not_failed() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path();
    executable(&bin.join("python3"), "#!/bin/sh\nexit 1\n");
    let out = check(bin, &["sglang", "--format", "json"]);
    assert_eq!(code(&out), 1);
    assert_eq!(json(&out)["engines"][0]["status"], "missing");
}
