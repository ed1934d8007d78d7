//! Hostile and unlucky input: each test pins a defect found by trying
//! llmgw as an attacker or an unlucky user would, and is named after it.

use crate::common::*;
use std::fmt::Write as _;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs llmgw with `input` on its standard input.
fn with_stdin(args: &[&str], input: &[u8]) -> std::process::Output {
    let mut child =
        llmgw().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

#[test]
fn diagnostic_past_column_65535_renders_without_panic() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{{\"node\": [{{\"id\": \"{}\", \"state\": \"bogus\"}}]}}", "n".repeat(70_000));
    let f = write(dir.path(), "one-line.json", &text);
    let out = run(&["nodes", "--inventory", f.to_str().unwrap()]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    let err = stderr(&out);
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("one-line.json:1:700"), "{err}");
    assert!(err.contains("\"bogus\""), "{err}");
}

#[test]
fn invalid_inventory_from_a_pipe_is_refused_not_an_empty_fleet() {
    let bad = std::fs::read(root().join("tests/data/bad/duplicate-node.toml")).unwrap();
    for path in ["-", "/dev/stdin"] {
        let out = with_stdin(&["nodes", "--inventory", path], &bad);
        assert_eq!(code(&out), 2, "{path}: {}", transcript(&out));
        assert!(stderr(&out).contains("node `gpu-a01` is defined twice"), "{path}: {}", transcript(&out));
    }
    // And a valid one read from a pipe, in each syntax, is the fleet.
    for f in ["examples/fleet.toml", "tests/data/stdin/fleet.yaml", "tests/data/stdin/fleet.json"] {
        let text = std::fs::read(root().join(f)).unwrap();
        let out = with_stdin(&["nodes", "--inventory", "-", "--format", "json"], &text);
        assert_eq!(code(&out), 0, "{f}: {}", transcript(&out));
        assert!(!json(&out)["nodes"].as_array().unwrap().is_empty(), "{f}");
    }
}

#[test]
fn standard_input_named_twice_is_refused() {
    let text = std::fs::read(root().join("examples/fleet.toml")).unwrap();
    let out = with_stdin(&["nodes", "--inventory", "-", "--inventory", "-"], &text);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(stderr(&out).contains("named twice"), "{}", transcript(&out));
}

#[test]
fn yaml_billion_laughs_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"];
    for w in names.windows(2) {
        let _ = writeln!(text, "{}: &{} [{}]", w[1], w[1], vec![format!("*{}", w[0]); 9].join(","));
    }
    text.push_str("node: []\n");
    let f = write(dir.path(), "laughs.yaml", &text);
    let out = run(&["nodes", "--inventory", f.to_str().unwrap()]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(stderr(&out).contains("aliases expand this document"), "{}", transcript(&out));
}

#[test]
fn endless_input_is_refused_not_read_forever() {
    let out = run(&["lint", "/dev/zero"]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(stderr(&out).contains("NUL byte"), "{}", transcript(&out));
}

#[test]
fn input_over_the_ceiling_is_refused_unless_allowed() {
    let fleet = "examples/fleet.toml";
    let size = std::fs::metadata(root().join(fleet)).unwrap().len();
    let small = (size - 1).to_string();
    let out = run(&["nodes", "--inventory", fleet, "--max-input-bytes", &small]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(stderr(&out).contains("--max-input-bytes"), "{}", transcript(&out));
    // The same through a pipe, where no size is known up front.
    let text = std::fs::read(root().join(fleet)).unwrap();
    let out = with_stdin(&["nodes", "--inventory", "-", "--max-input-bytes", &small], &text);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    let out = run(&["nodes", "--inventory", fleet, "--max-input-bytes", &size.to_string()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
}

#[test]
fn many_problems_render_a_hundred_then_a_count() {
    let dir = tempfile::tempdir().unwrap();
    let peers = vec!["\"x\""; 10_000].join(",");
    let text = format!(
        "{{\"node\": [{{\"id\": \"a\", \"gpu\": [{{\"index\": 0, \"name\": \"X\", \"nvlink_peers\": [{peers}]}}]}}]}}"
    );
    let f = write(dir.path(), "many.json", &text);
    let out = run(&["nodes", "--inventory", f.to_str().unwrap()]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert_eq!(err.matches("× `nvlink_peers` must be").count(), 100, "{}", &err[..2000.min(err.len())]);
    assert!(err.contains("and 9900 more problems in"), "{}", &err[err.len().saturating_sub(500)..]);
    assert!(err.len() < 200_000, "{}", err.len());
}

#[test]
fn lint_json_lists_every_problem() {
    let dir = tempfile::tempdir().unwrap();
    let profiles = (0..2000)
        .map(|i| format!("{{\"name\": \"p{i}\", \"engine\": \"vllm\", \"gpu_class\": \"x\", \"nodes\": \"two\"}}"))
        .collect::<Vec<_>>()
        .join(",");
    let f = write(dir.path(), "c.json", &format!("{{\"model\": [{{\"name\": \"m\", \"profile\": [{profiles}]}}]}}"));
    let out = run(&["lint", f.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 1);
    let v = json(&out);
    assert_eq!(v["errors"], 2000);
    let last = &v["diagnostics"][1999];
    assert_eq!(last["line"], 1);
    assert!(last["col"].as_u64().unwrap() > 100_000, "{last}");
}

#[test]
fn control_characters_from_input_are_escaped_in_human_output() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "evil.toml",
        "[[node]]\nid = \"gpu-01\"\nlabels = { zone = \"\\u001b]0;pwned\\u0007red\" }\nengines = { vllm = \"0.6\\u001b[2J\" }\n",
    );
    let out = run(&["nodes", "--inventory", f.to_str().unwrap(), "--wide"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let text = stdout(&out);
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
    assert!(text.contains("\\x1b]0;pwned\\x07red"), "{text}");
    // Diagnostics too, excerpt and message alike.
    let f = write(dir.path(), "evil-state.toml", "[[node]]\nid = \"a\"\nstate = \"\\u001b[31mred\"\n");
    let raw = write(dir.path(), "raw.yaml", "node:\n  - id: \"a\"\n    state: \"\x1b[31mred\x07\"\n");
    // An id is written into scripts and file names: a control character
    // in one is refused at load, and the refusal is escaped too.
    let id = write(dir.path(), "evil-id.toml", "[[node]]\nid = \"gpu\\u001b]0;pwned\\u0007-01\"\n");
    for f in [f, raw, id] {
        let out = run(&["nodes", "--inventory", f.to_str().unwrap()]);
        assert_eq!(code(&out), 2, "{}", transcript(&out));
        let err = stderr(&out);
        assert!(!err.contains('\x1b') && !err.contains('\x07'), "{err:?}");
    }
}

#[test]
fn a_version_command_that_escapes_its_group_cannot_hang_engine_check() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    // The sleeper starts a session of its own and keeps stdout open.
    executable(&bin.join("vllm"), "#!/bin/sh\nsetsid sleep 40 &\necho 0.6.3\n");
    executable(&bin.join("text-generation-launcher"), "#!/bin/sh\nsetsid sleep 40 &\nsleep 40\n");
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let start = Instant::now();
    let out = llmgw()
        .args(["engine-check", "vllm", "tgi", "--timeout", "3", "--format", "json"])
        .env("PATH", &path)
        .output()
        .unwrap();
    let took = start.elapsed();
    assert!(took < Duration::from_secs(20), "took {took:?}");
    let v = json(&out);
    assert_eq!(v["engines"][0]["version"], "0.6.3", "{v}");
    assert_eq!(v["engines"][1]["status"], "timeout", "{v}");
    assert_eq!(code(&out), 1);
    let _ = Command::new("pkill").args(["-f", "sleep 40"]).status();
}

#[test]
fn relative_path_entries_are_ignored_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path();
    let marker = cwd.join("ran");
    let script = format!("#!/bin/sh\ntouch {}\necho 9.9.9\n", marker.display());
    executable(&cwd.join("vllm"), &script);
    executable(&cwd.join("rel/vllm"), &script);
    let facts = write(cwd, "gpus.json", "[]");
    for path in [":/usr/bin:/bin", ".:/usr/bin:/bin", "rel:/usr/bin:/bin"] {
        let out = llmgw()
            .current_dir(cwd)
            .args(["engine-check", "vllm", "--format", "json"])
            .env("PATH", path)
            .output()
            .unwrap();
        assert_eq!(code(&out), 1, "{path}: {}", transcript(&out));
        assert_eq!(json(&out)["engines"][0]["status"], "missing", "{path}");
        assert!(stderr(&out).contains("relative PATH entries ignored"), "{path}: {}", transcript(&out));
        let out = llmgw()
            .current_dir(cwd)
            .args([
                "discover",
                "--format",
                "json",
                "--root",
                cwd.to_str().unwrap(),
                "--gpu-facts",
                facts.to_str().unwrap(),
            ])
            .env("PATH", path)
            .output()
            .unwrap();
        let text = stdout(&out);
        assert!(!text.contains("\"vllm\""), "{path}: {}", transcript(&out));
        assert!(stderr(&out).contains("relative PATH entries ignored"), "{path}: {}", transcript(&out));
    }
    assert!(!marker.exists(), "a relative PATH entry was run");
}

/// The real python3, for the SGLang probe tests; `None` when the machine has none.
fn real_python() -> Option<String> {
    let out = Command::new("python3").args(["-c", "import sys; print(sys.executable)"]).output().ok()?;
    let p = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !p.is_empty()).then_some(p)
}

#[test]
fn sglang_probe_does_not_see_the_current_folder() {
    let Some(python) = real_python() else {
        eprintln!("SKIPPED sglang_probe_does_not_see_the_current_folder: no python3 on this machine");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(&python, bin.join("python3")).unwrap();
    let clone = dir.path().join("clone");
    std::fs::create_dir_all(clone.join("sglang")).unwrap();
    let facts = write(dir.path(), "gpus.json", "[]");
    let discover = |cwd: &Path, pythonpath: Option<&Path>| {
        let mut c = llmgw();
        c.current_dir(cwd)
            .args([
                "discover",
                "--format",
                "json",
                "--root",
                dir.path().to_str().unwrap(),
                "--gpu-facts",
                facts.to_str().unwrap(),
            ])
            .env("PATH", &bin)
            .env_remove("PYTHONPATH");
        if let Some(p) = pythonpath {
            c.env("PYTHONPATH", p);
        }
        let out = c.output().unwrap();
        assert_eq!(code(&out), 0, "{}", transcript(&out));
        json(&out)["node"][0]["engines"].get("sglang").is_some()
    };
    assert!(!discover(&clone, None), "an empty sglang/ folder in the current folder counted as SGLang");
    // A genuine install on PYTHONPATH still counts.
    let site = dir.path().join("site");
    write(&site, "sglang/__init__.py", "");
    assert!(discover(&clone, Some(&site)));
}

#[test]
fn written_files_keep_their_mode_and_new_ones_follow_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("fleet.toml");
    std::fs::write(&out_file, "old").unwrap();
    std::fs::set_permissions(&out_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let bin = env!("CARGO_BIN_EXE_llmgw");
    let sh = |umask: &str, target: &Path| {
        let s = format!("umask {umask}; exec '{bin}' inventory merge examples/fleet.toml -o '{}'", target.display());
        let st = Command::new("sh").arg("-c").arg(s).current_dir(root()).status().unwrap();
        assert!(st.success());
    };
    sh("077", &out_file);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&out_file), 0o644, "a replaced file keeps its mode");
    let fresh = dir.path().join("new.toml");
    sh("022", &fresh);
    assert_eq!(mode(&fresh), 0o644);
    let private = dir.path().join("private.toml");
    sh("077", &private);
    assert_eq!(mode(&private), 0o600);
    assert!(std::fs::read_to_string(&fresh).unwrap().contains("[[node]]"));
}

#[test]
fn a_symlink_is_followed_and_its_target_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("real.json");
    std::fs::write(&target, "{}").unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink("real.json", &link).unwrap();
    let dangling = dir.path().join("dangling.json");
    std::os::unix::fs::symlink("later.json", &dangling).unwrap();
    for l in [&link, &dangling] {
        let out = run(&["inventory", "merge", "examples/fleet.toml", "-o", l.to_str().unwrap()]);
        assert_eq!(code(&out), 0, "{}", transcript(&out));
        assert!(std::fs::symlink_metadata(l).unwrap().file_type().is_symlink());
    }
    assert!(std::fs::read_to_string(&target).unwrap().contains("\"node\""));
    assert!(std::fs::read_to_string(dir.path().join("later.json")).unwrap().contains("\"node\""));
}

#[test]
fn devices_and_fifos_are_written_in_place() {
    let out = run(&["nodes", "--inventory", "examples/fleet.toml", "-o", "/dev/null"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("plan.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let out = run(&["nodes", "--inventory", "examples/fleet.toml", "--format", "json", "-o", fifo.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert!(reader.join().unwrap().contains("\"nodes\""));
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(leftovers.len(), 1);
}

#[test]
fn an_interrupted_write_leaves_no_temporary_file() {
    for sig in ["TERM", "INT"] {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("big.toml");
        let mut child = crate::common::default_signals(&mut llmgw())
            .args(["inventory", "synth", "dgx-h100:60000", "-o", target.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Wait for the temporary file to appear, then interrupt.
        let start = Instant::now();
        let tmp = loop {
            let found = std::fs::read_dir(dir.path())
                .unwrap()
                .flatten()
                .find(|e| e.file_name().to_string_lossy().starts_with(".llmgw-"));
            if let Some(e) = found {
                break Some(e.path());
            }
            if start.elapsed() > Duration::from_secs(30) || child.try_wait().unwrap().is_some() {
                break None;
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        let tmp = tmp.expect("the temporary file was never seen");
        crate::common::signal(&child, sig);
        let status = child.wait().unwrap();
        assert!(status.code().is_none(), "{sig}: llmgw finished before the signal: {status:?}");
        assert!(!tmp.exists(), "{sig}: {} was left behind", tmp.display());
        assert!(!target.exists(), "{sig}: a half-written target");
    }
}

#[test]
fn a_format_that_contradicts_the_output_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (args, target) in [
        (vec!["inventory", "merge", "examples/fleet.toml", "--format", "yaml"], "out.json"),
        (vec!["inventory", "merge", "examples/fleet.toml", "--format", "json"], "out.toml"),
        (vec!["nodes", "--inventory", "examples/fleet.toml", "--format", "human"], "out.json"),
        (vec!["nodes", "--inventory", "examples/fleet.toml"], "out.yaml"),
        (vec!["place", "catalog/fleet.toml", "--inventory", "examples/fleet.toml", "--format", "json"], "plan.toml"),
    ] {
        let path = dir.path().join(target);
        let mut a = args.clone();
        a.extend(["-o", path.to_str().unwrap()]);
        let out = run(&a);
        assert_eq!(code(&out), 2, "{a:?}: {}", transcript(&out));
        let said = if a.contains(&"--format") { "contradicts" } else { "writes human text or JSON, not YAML" };
        assert!(stderr(&out).contains(said), "{}", transcript(&out));
        assert!(!path.exists(), "{a:?} wrote {target}");
    }
    // Agreeing, or a name that says nothing: written, and read back.
    let plan = dir.path().join("plan.json");
    let out = run(&["place", "catalog/fleet.toml", "--inventory", "examples/fleet.toml", "-o", plan.to_str().unwrap()]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    assert_eq!(v["summary"]["placed"], 9);
    let yaml = dir.path().join("fleet.out");
    let out = run(&["inventory", "merge", "examples/fleet.toml", "--format", "yaml", "-o", yaml.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let out = run(&["nodes", "--inventory", yaml.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
}

#[test]
fn every_document_command_writes_to_o() {
    let dir = tempfile::tempdir().unwrap();
    let o = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let cases: Vec<(Vec<String>, String, i32, &str)> = vec![
        (
            vec!["place".into(), "catalog/fleet.toml".into(), "-i".into(), "examples/fleet.toml".into()],
            o("p.txt"),
            1,
            "unplaced",
        ),
        (
            vec![
                "explain-placement".into(),
                "catalog/fleet.toml".into(),
                "--model".into(),
                "deepseek-v3".into(),
                "-i".into(),
                "examples/fleet.toml".into(),
            ],
            o("e.json"),
            1,
            "\"replicas\"",
        ),
        (vec!["nodes".into(), "-i".into(), "examples/fleet.toml".into()], o("n.txt"), 0, "gpu-"),
        (vec!["lint".into(), "catalog/fleet.toml".into()], o("l.txt"), 0, "0 errors"),
        (vec!["lint".into(), "catalog/fleet.toml".into(), "--format".into(), "github".into()], o("l.gh"), 0, ""),
        (vec!["engine-check".into(), "vllm".into()], o("c.json"), 1, "\"missing\""),
    ];
    for (mut args, target, want, needle) in cases {
        args.extend(["-o".into(), target.clone()]);
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = llmgw().args(&a).env("PATH", "/nonexistent").output().unwrap();
        assert_eq!(code(&out), want, "{a:?}: {}", transcript(&out));
        assert!(out.stdout.is_empty(), "{a:?} printed to stdout");
        let written = std::fs::read_to_string(&target).unwrap();
        assert!(written.contains(needle), "{a:?}: {written}");
    }
}

#[test]
fn toml_output_is_the_same_written_node_by_node() {
    let out = run(&["inventory", "synth", "dgx-h100:3@ib-east", "cpu:2", "--load", "0.5", "--format", "json"]);
    let v = json(&out);
    let whole = toml::to_string(&v).unwrap();
    let out = run(&["inventory", "synth", "dgx-h100:3@ib-east", "cpu:2", "--load", "0.5"]);
    assert_eq!(stdout(&out), whole);
}

#[test]
fn cordoned_share_is_exact() {
    for (n, share, want) in [(1000, "0.05", 50), (7, "0.5", 4), (10, "0", 0), (10, "1", 10)] {
        let out = run(&["inventory", "synth", &format!("cpu:{n}"), "--cordoned", share, "--format", "json"]);
        let nodes = json(&out)["node"].as_array().unwrap().clone();
        let cordoned = nodes.iter().filter(|n| n["state"] == "cordoned").count();
        assert_eq!(cordoned, want, "{n} x {share}");
    }
}

#[test]
fn synth_help_lists_every_shape() {
    let out = run(&["inventory", "synth", "--help"]);
    for shape in ["dgx-h100", "hgx-a100", "l40s-pcie", "pcie-a100-pairs", "cpu"] {
        assert!(stdout(&out).contains(shape), "{shape}");
    }
}

#[test]
fn a_byte_order_mark_is_accepted_in_json_too() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("tests/data/stdin/fleet.json")).unwrap();
    let f = write(dir.path(), "bom.json", &format!("\u{feff}{text}"));
    let out = run(&["nodes", "--inventory", f.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
}

#[test]
fn colour_follows_the_flag_and_the_environment() {
    let bad = "tests/data/bad/duplicate-node.toml";
    let has_colour = |out: &std::process::Output| stderr(out).contains('\x1b');
    let run_env = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = llmgw();
        c.args(args).env_remove("NO_COLOR");
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    assert!(has_colour(&run_env(&["nodes", "-i", bad, "--color", "always"], &[])));
    assert!(!has_colour(&run_env(&["nodes", "-i", bad, "--color", "never"], &[("CLICOLOR_FORCE", "1")])));
    assert!(has_colour(&run_env(&["nodes", "-i", bad], &[("CLICOLOR_FORCE", "1")])));
    assert!(!has_colour(&run_env(&["nodes", "-i", bad], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")])));
    // On a terminal (script(1) gives one): colour, unless TERM=dumb.
    let bin = env!("CARGO_BIN_EXE_llmgw");
    let on_tty = |term: &str| {
        let out = Command::new("script")
            .args(["-qec", &format!("'{bin}' nodes -i {bad}"), "/dev/null"])
            .current_dir(root())
            .env("TERM", term)
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE")
            .output();
        out.map(|o| String::from_utf8_lossy(&o.stdout).contains("\x1b[")).ok()
    };
    match (on_tty("xterm"), on_tty("dumb")) {
        (Some(xterm), Some(dumb)) => {
            assert!(xterm, "no colour on a terminal");
            assert!(!dumb, "colour with TERM=dumb");
        }
        _ => eprintln!("SKIPPED the terminal half of colour_follows_the_flag_and_the_environment: no script(1)"),
    }
}

#[test]
fn small_texts_read_well() {
    let dir = tempfile::tempdir().unwrap();
    let one = write(dir.path(), "one.toml", "[[node]]\nid = \"a\"\n");
    let out = run(&["nodes", "--inventory", one.to_str().unwrap()]);
    assert!(stdout(&out).ends_with("\n1 node\n"), "{}", transcript(&out));
    // A plan that places nothing says so instead of printing a blank line.
    let empty = write(dir.path(), "empty.toml", "");
    let out = run(&["place", empty.to_str().unwrap(), "--inventory", one.to_str().unwrap()]);
    assert!(stdout(&out).starts_with("No replica was placed by this plan.\n"), "{}", transcript(&out));
    // Numbers: what to write, never "between 0 and 9223372036854775807" or "like NaN".
    let nums = write(
        dir.path(),
        "nums.yaml",
        "node:\n  - id: a\n    memory_total_mb: -5\n    gpu:\n      - {index: .nan, name: X}\n      - {index: 1.6, name: X}\n",
    );
    let out = run(&["nodes", "--inventory", nums.to_str().unwrap()]);
    let err = stderr(&out);
    assert!(err.contains("`memory_total_mb` cannot be negative, found -5"), "{err}");
    assert!(err.contains("write a whole number, like 2"), "{err}");
    assert!(!err.contains("NaN") && !err.contains("9223372036854775807"), "{err}");
}

#[test]
fn human_output_fits_the_width() {
    let out = llmgw()
        .args(["place", "catalog/fleet.toml", "--inventory", "examples/fleet.toml"])
        .env("COLUMNS", "72")
        .output()
        .unwrap();
    let text = stdout(&out);
    let paragraphs: Vec<&str> =
        text.lines().filter(|l| l.chars().count() > 72 && !l.starts_with(['┌', '│', '╞', '├', '└', '┆'])).collect();
    assert!(paragraphs.is_empty(), "{paragraphs:#?}");
    assert!(text.contains("not placed"), "{text}");
    // Written to a file, the same plan is not wrapped.
    let unwrapped = run(&["place", "catalog/fleet.toml", "--inventory", "examples/fleet.toml"]);
    assert!(stdout(&unwrapped).lines().any(|l| l.chars().count() > 72));
}

#[test]
fn a_million_unplaced_replicas_are_one_explanation() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet.json");
    let out = run(&["inventory", "synth", "dgx-h100:300@ib-east", "cpu:50", "-o", fleet.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let catalog = write(
        dir.path(),
        "c.toml",
        "[[model]]\nname = \"big\"\nreplicas = 1000000\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\n",
    );
    let out = run(&["place", catalog.to_str().unwrap(), "--inventory", fleet.to_str().unwrap()]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    let text = stdout(&out);
    assert!(
        text.contains("big replicas 300-999999 (999700): not placed"),
        "{}",
        &text[text.len().saturating_sub(2000)..]
    );
    assert!(
        text.contains("\n1000000 wanted, 0 existing, 300 placed, 999700 unplaced\nplaced 300 of 1000000; no plan places more than 300\n"),
        "{}",
        &text[text.len().saturating_sub(300)..]
    );
    assert!(text.len() < 100_000, "{}", text.len());
}

/// Env names a shell or the loader read as code, and llmgw's own knobs,
/// are refused where the catalog sets them: lint points at the name,
/// render (which loads the catalog) exits 2 and writes nothing.
#[test]
fn env_names_that_run_as_code_are_refused_with_their_span() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["BASH_ENV", "ENV", "BASH_FUNC_x%%", "PS4", "IFS", "LD_PRELOAD", "LLMGW_START_TIMEOUT"] {
        let key = if name.contains('%') { format!("\"{name}\"") } else { name.to_string() };
        let catalog = write(
            dir.path(),
            "c.toml",
            &format!(
                "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100\"\nenv = {{ {key} = \"$(touch PWNED)\" }}\n"
            ),
        );
        let out = run(&["lint", catalog.to_str().unwrap()]);
        assert_eq!(code(&out), 1, "{name}: {}", transcript(&out));
        let err = stderr(&out);
        // BASH_FUNC_x%% is no identifier at all: the older check names it.
        let code_name = if name.contains('%') { "llmgw::catalog::env-name" } else { "llmgw::catalog::env-runs" };
        assert!(err.contains(code_name) && err.contains("c.toml:7:"), "{name}: {err}");
    }
    let fine = write(
        dir.path(),
        "ok.toml",
        "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100\"\nenv = { BASH_ENVIRONMENT_NOTE = \"x\", LD_LIBRARY_PATH = \"/opt/cuda/lib64\" }\n",
    );
    assert_eq!(code(&run(&["lint", fine.to_str().unwrap()])), 0);
}

/// LLMGW_START_TIMEOUT reaches `$(( ))` only as digits: bash would run
/// `a[$(cmd)]` there.
#[test]
fn the_start_timeout_is_a_number_before_any_arithmetic() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = write(d, "fleet.toml", "[[node]]\nid = \"c1\"\n");
    let catalog = write(
        d,
        "c.toml",
        "[[model]]\nname = \"chat\"\nsource = \"qwen2.5:7b\"\n[[model.profile]]\nname = \"cpu\"\nengine = \"ollama\"\n",
    );
    let plan = placed_plan(d, &catalog, &fleet);
    let out = render_plan("slurm", &plan, &catalog, &fleet, &[]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let text = stdout(&out);
    let script = text.split("bash -c ").nth(1).expect("ollama runs a script");
    // The script as bash would get it, run with a hostile value: the check
    // stops it before the arithmetic.
    let body = Command::new("bash").arg("-c").arg(format!("printf %s {script}")).output().unwrap();
    let body = String::from_utf8_lossy(&body.stdout).into_owned();
    let deadline_part: String = body
        .lines()
        .take_while(|l| !l.starts_with("until"))
        .filter(|l| !l.contains("ollama serve") && !l.starts_with("server=") && !l.starts_with("trap"))
        .collect::<Vec<_>>()
        .join("\n");
    let out = Command::new("bash")
        .arg("-c")
        .arg(&deadline_part)
        .current_dir(d)
        .env("LLMGW_START_TIMEOUT", "a[$(touch PWNED)]")
        .output()
        .unwrap();
    assert!(!d.join("PWNED").exists(), "{deadline_part}");
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("must be a number of seconds"), "{}", transcript(&out));
    let out = Command::new("bash").arg("-c").arg(&deadline_part).env("LLMGW_START_TIMEOUT", "60").output().unwrap();
    assert!(out.status.success(), "{}", transcript(&out));
}

/// pyxis splits `--container-mounts` at `,` and `:`: weights at such a
/// path, or such a --cache-dir, are refused, never turned into mounts.
#[test]
fn pyxis_mounts_are_never_split_into_other_mounts() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = write(
        d,
        "fleet.toml",
        "[[node]]\nid = \"c1\"\nweights = [{ source = \"org/m/f.gguf\", path = \"/data/m,/root:/x.gguf\" }]\n",
    );
    let catalog = write(
        d,
        "c.toml",
        "[[model]]\nname = \"m\"\nsource = \"org/m/f.gguf\"\n[[model.profile]]\nname = \"cpu\"\nengine = \"llama.cpp\"\n\
         [[model]]\nname = \"h\"\nsource = \"org/h:Q4_K_M\"\n[[model.profile]]\nname = \"cpu\"\nengine = \"llama.cpp\"\n",
    );
    let plan = placed_plan(d, &catalog, &fleet);
    let render = |extra: &[&str]| {
        let mut a = vec!["render", "slurm", plan.to_str().unwrap(), "--catalog", catalog.to_str().unwrap()];
        a.extend(["-i", fleet.to_str().unwrap(), "--container", "pyxis"]);
        a.extend_from_slice(extra);
        run(&a)
    };
    let out = render(&[]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(stderr(&out).contains("/data/m,/root:/x.gguf") && stdout(&out).is_empty(), "{}", transcript(&out));
    // Without a container the path is only a quoted argument.
    let mut plain = vec!["render", "slurm", plan.to_str().unwrap(), "--catalog", catalog.to_str().unwrap()];
    plain.extend(["-i", fleet.to_str().unwrap()]);
    assert_eq!(code(&run(&plain)), 0);
    let out = render(&["--cache-dir", "/scratch,/root"]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
}

/// `--namespace` lands in every object and every `--endpoints` URL: it must
/// be a namespace name.
#[test]
fn a_namespace_that_is_no_dns_label_is_refused() {
    for bad in ["evil.example.com/x?", "Serving", "-a", "a_b", ""] {
        let flag = format!("--namespace={bad}");
        let out = run(&["render", "kubernetes", "p.json", "--catalog", "c.toml", "-i", "f.toml", &flag]);
        assert_eq!(code(&out), 2, "{bad}: {}", transcript(&out));
        assert!(stderr(&out).contains("not a Kubernetes namespace name"), "{bad}: {}", transcript(&out));
    }
}

/// Ports are never given twice: a node whose ports are all taken is an
/// error naming it, not port 65535 handed out again.
#[test]
fn ports_run_out_with_an_error_not_a_port_given_twice() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = write(d, "fleet.toml", "[[node]]\nid = \"c1\"\ncpus = 64\n");
    let catalog = write(
        d,
        "c.toml",
        "[[model]]\nname = \"m\"\nsource = \"org/m:Q4\"\nreplicas = 3\nreplicas_per_node = 3\n[[model.profile]]\nname = \"cpu\"\nengine = \"llama.cpp\"\ncpus = 1\nport = 65534\n",
    );
    let plan = placed_plan(d, &catalog, &fleet);
    let out = render_plan("slurm", &plan, &catalog, &fleet, &[]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(stderr(&out).contains("no free port is left below 65536 on c1"), "{}", transcript(&out));
}

/// Ports of running replicas are read back only from render's own
/// scripts: a stray note in the folder does not move a replica to port 22.
#[test]
fn a_stray_script_does_not_move_a_replicas_port() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = write(d, "fleet.toml", "[[node]]\nid = \"c1\"\ncpus = 64\n");
    let catalog = write(
        d,
        "c.toml",
        "[[model]]\nname = \"m\"\nsource = \"org/m:Q4\"\n[[model.profile]]\nname = \"cpu\"\nengine = \"llama.cpp\"\n",
    );
    let plan = placed_plan(d, &catalog, &fleet);
    let jobs = d.join("jobs");
    write(
        &jobs,
        "note.sbatch",
        "#!/bin/bash\n#SBATCH --comment=llmgw.io/model=m,llmgw.io/replica=0\n# llmgw ports: http=22 ray=6379 ray_client=10001 dist=20000 master=29500\n",
    );
    let out = run(&["render", "slurm", plan.to_str().unwrap(), "--catalog", catalog.to_str().unwrap()]
        .into_iter()
        .chain(["-i", fleet.to_str().unwrap(), "-o", jobs.to_str().unwrap()])
        .collect::<Vec<_>>());
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let script = std::fs::read_to_string(jobs.join("llmgw-m-r0.sbatch")).unwrap();
    assert!(script.contains("--port 8080") && !script.contains("http=22"), "{script}");
    assert!(jobs.join("note.sbatch").exists(), "not render's: left alone");
}

/// Render writes what the profile runs on: a hand-edited plan that gives
/// a TP2 replica one GPU, or an H100 and an A100 together, is refused.
#[test]
fn planned_gpus_are_held_to_their_profile() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = write(
        d,
        "fleet.toml",
        "[[node]]\nid = \"g1\"\n[[node.gpu]]\nindex = 0\nname = \"NVIDIA H100 80GB HBM3\"\n[[node.gpu]]\nindex = 1\nname = \"NVIDIA H100 80GB HBM3\"\n\
         [[node.gpu]]\nindex = 2\nname = \"NVIDIA A100-SXM4-80GB\"\n",
    );
    let catalog = write(
        d,
        "c.toml",
        "[[model]]\nname = \"m\"\nsource = \"org/m\"\n[[model.profile]]\nname = \"tp2\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 2\n",
    );
    let plan = placed_plan(d, &catalog, &fleet);
    let good: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    let render = |gpus: serde_json::Value| {
        let mut p = good.clone();
        p["placements"][0]["nodes"][0]["gpus"] = gpus;
        let f = write(d, "edited.json", &p.to_string());
        run(&[
            "render",
            "slurm",
            f.to_str().unwrap(),
            "--catalog",
            catalog.to_str().unwrap(),
            "-i",
            fleet.to_str().unwrap(),
        ])
    };
    assert_eq!(code(&render(serde_json::json!([0, 1]))), 0);
    for (gpus, says) in [
        (serde_json::json!([0]), "1 GPU(s) on g1, but profile `tp2` takes 2"),
        (serde_json::json!([1, 2]), "GPU 2 of g1 is not `h100-80gb-hbm3`"),
    ] {
        let out = render(gpus);
        assert_eq!(code(&out), 2, "{}", transcript(&out));
        assert!(stderr(&out).contains(says) && stdout(&out).is_empty(), "{}", transcript(&out));
    }
}
