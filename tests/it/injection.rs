//! Nothing from an input runs: hostile strings in every catalog and
//! inventory field render writes, each rendered script run in a sandbox
//! whose PATH holds only recording stubs, and each manifest read back with
//! exactly the intended strings.

use std::path::Path;
use std::process::Command;

use crate::common::*;

/// Strings a shell, a YAML reader or sbatch would read as more than text.
const HOSTILE: &[&str] = &[
    "$(touch PWNED)",
    "`touch PWNED`",
    "x; touch PWNED",
    "'; touch PWNED; '",
    "\"$(touch PWNED)\"",
    "a\\b",
    "a b,c=d%e",
    "- [x]: {y} # &z *w !t |p >q @r",
];

/// Stubs that record their argv (one file per call, NUL-separated) and do
/// nothing else: srun runs what follows its options, scontrol names the
/// node, python3 answers the Ray poll.
fn sandbox(dir: &Path) -> std::path::PathBuf {
    let bin = dir.join("bin");
    let record = r#"#!/bin/bash
printf '%s\0' "$(basename "$0")" "$@" > "$LOG/$(date +%s%N).$$"
"#;
    for name in ["vllm", "ray", "llama-server", "text-generation-launcher", "trtllm-serve", "ollama"] {
        executable(&bin.join(name), record);
    }
    executable(&bin.join("python3"), &format!("{record}echo 2\n"));
    executable(&bin.join("scontrol"), "#!/bin/bash\necho n1\n");
    // Inside the llama.cpp image the server is /app/llama-server.
    executable(
        &bin.join("srun"),
        "#!/bin/bash\nwhile [[ \"$1\" == --* ]]; do shift; done\n[ \"$1\" = /app/llama-server ] && set -- llama-server \"${@:2}\"\nexec \"$@\"\n",
    );
    bin
}

/// Every recorded call: argv as strings.
fn calls(log: &Path) -> Vec<Vec<String>> {
    let mut files: Vec<_> = std::fs::read_dir(log).unwrap().map(|e| e.unwrap().path()).collect();
    // Named by the nanosecond each call began and its pid: two calls at
    // once (a server in the background) never write one file.
    files.sort_by_key(|p| {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        name.split('.').next().and_then(|n| n.parse::<u128>().ok()).unwrap_or(0)
    });
    files
        .iter()
        .map(|p| {
            let bytes = std::fs::read(p).unwrap();
            bytes
                .split(|b| *b == 0)
                .filter(|s| !s.is_empty())
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect()
        })
        .collect()
}

fn catalog(bad: &str, i: usize) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap();
    let long = "m".repeat(300);
    format!(
        "[[model]]\nname = {name}\nsource = {src}\n\
         [[model.profile]]\nname = {prof}\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\nnodes = 2\n\
         image = {img}\nargs = [{arg}, \"--x\"]\nenv = {{ SAFE = {val} }}\n\
         [[model]]\nname = {name2}\nsource = {src}\n\
         [[model.profile]]\nname = \"p\"\nengine = \"llama.cpp\"\nargs = [{arg}]\nenv = {{ SAFE = {val} }}\n\
         [[model]]\nname = {name3}\nsource = {src}\n\
         [[model.profile]]\nname = \"p\"\nengine = \"ollama\"\n\
         [[model]]\nname = \"{long}{i}\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n",
        name = q(&format!("{bad}-a")),
        name2 = q(&format!("{bad}-b")),
        name3 = q(&format!("{bad}-c")),
        src = q(&format!("org/{bad}")),
        prof = q(&format!("{bad}-p")),
        img = q(&format!("img:{bad}")),
        arg = q(bad),
        val = q(bad),
    )
}

#[test]
fn hostile_names_and_values_never_run_and_reach_the_engines_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = d.join("fleet.toml");
    assert_eq!(
        code(&run(&[
            "inventory",
            "synth",
            "dgx-h100:3@ib-east",
            "cpu:2",
            "--prefix",
            "n",
            "-o",
            fleet.to_str().unwrap()
        ])),
        0
    );
    let bin = sandbox(d);
    for (i, bad) in HOSTILE.iter().enumerate() {
        let case = d.join(format!("case{i}"));
        std::fs::create_dir_all(&case).unwrap();
        let cat = write(&case, "c.toml", &catalog(bad, i));
        let plan = case.join("plan.json");
        let out = run(&["place", cat.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
        assert_eq!(code(&out), 0, "{bad}: {}", transcript(&out));
        let jobs = case.join("jobs");
        let out = run(&[
            "render",
            "slurm",
            plan.to_str().unwrap(),
            "--catalog",
            cat.to_str().unwrap(),
            "-i",
            fleet.to_str().unwrap(),
            "-o",
            jobs.to_str().unwrap(),
            "--container",
            "pyxis",
        ]);
        assert_eq!(code(&out), 0, "{bad}: {}", transcript(&out));
        // Each script, run as its job's first node would run it.
        for script in std::fs::read_dir(&jobs)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "sbatch"))
        {
            let log = case.join(format!("log-{}", script.file_name().unwrap().to_string_lossy()));
            std::fs::create_dir_all(&log).unwrap();
            let text = std::fs::read_to_string(&script).unwrap();
            assert!(
                text.lines().filter_map(|l| l.strip_prefix("#SBATCH ")).all(|v| !v.contains(char::is_whitespace)),
                "{text}"
            );
            let out = Command::new("bash")
                .arg(&script)
                .current_dir(&case)
                .env_clear()
                .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
                .env("LOG", &log)
                .env("SLURM_JOB_NODELIST", "n1")
                .env("SLURM_NODEID", "0")
                .output()
                .unwrap();
            assert!(out.status.success(), "{bad}: {}\n{text}", transcript(&out));
            assert!(!case.join("PWNED").exists(), "{bad}: something ran\n{text}");
            let calls = calls(&log);
            let server = calls
                .iter()
                .find(|c| c[0] != "python3" && !(c[0] == "ray" && c[1] == "start") && c[1] != "pull")
                .unwrap_or_else(|| panic!("{calls:?}"));
            match server[0].as_str() {
                "vllm" if server[2].starts_with("mmm") => {
                    assert_eq!(server.last().unwrap(), &format!("{}{i}", "m".repeat(300)), "{server:?}");
                }
                "vllm" => {
                    let served = server.iter().position(|a| a == "--served-model-name").unwrap();
                    assert_eq!(server[served + 1], format!("{bad}-a"), "{server:?}");
                    assert_eq!(server[2], format!("org/{bad}"));
                    assert_eq!(server[served + 2], *bad, "{server:?}");
                }
                "llama-server" => {
                    assert_eq!(server[1..3], ["-hf".to_string(), format!("org/{bad}")], "{server:?}");
                    assert_eq!(server.last().unwrap(), bad);
                }
                "ollama" => {
                    let pull = calls.iter().find(|c| c.get(1).map(String::as_str) == Some("pull")).unwrap();
                    assert_eq!(pull[2], format!("org/{bad}"));
                }
                other => panic!("{other}"),
            }
        }
        check_manifests(bad, &plan, &cat, &fleet);
    }
}

/// The manifests read back with exactly the strings given.
fn check_manifests(bad: &str, plan: &Path, cat: &Path, fleet: &Path) {
    let out = run(&[
        "render",
        "kubernetes",
        plan.to_str().unwrap(),
        "--catalog",
        cat.to_str().unwrap(),
        "-i",
        fleet.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{bad}: {}", transcript(&out));
    let docs = crate::render::documents(&stdout(&out));
    let lws = docs.iter().find(|d| d["kind"] == "LeaderWorkerSet").unwrap();
    assert_eq!(lws["metadata"]["annotations"]["llmgw.io/model"], format!("{bad}-a"));
    assert_eq!(lws["metadata"]["annotations"]["llmgw.io/profile"], format!("{bad}-p"));
    let c = &lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0];
    assert_eq!(c["image"], format!("img:{bad}"));
    assert!(c["env"].as_array().unwrap().iter().any(|e| e["name"] == "SAFE" && e["value"] == bad));
    let gguf = docs.iter().find(|d| d["metadata"]["annotations"]["llmgw.io/model"] == format!("{bad}-b")).unwrap();
    let args = &gguf["spec"]["template"]["spec"]["containers"][0]["args"];
    assert_eq!(args.as_array().unwrap().last().unwrap(), bad);
    assert_eq!(args[1], format!("org/{bad}"));
    for doc in &docs {
        let name = doc["metadata"]["name"].as_str().unwrap();
        assert!(
            name.len() <= 63 && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
            "{name}"
        );
    }
}

#[test]
fn values_with_control_characters_are_refused_not_quoted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = d.join("fleet.toml");
    assert_eq!(code(&run(&["inventory", "synth", "dgx-h100:1", "-o", fleet.to_str().unwrap()])), 0);
    for (field, value) in
        [("args", "[\"a\\nb\"]"), ("env", "{ A = \"x\\ny\" }"), ("source", "\"org/a\\u001bb\""), ("image", "\"i\\rj\"")]
    {
        let cat = write(
            d,
            "c.toml",
            &format!(
                "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n{field} = {value}\n"
            ),
        );
        let plan = d.join("plan.json");
        assert_eq!(
            code(&run(&["place", cat.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "-o", plan.to_str().unwrap()])),
            0
        );
        for kind in ["slurm", "kubernetes"] {
            let out = run(&[
                "render",
                kind,
                plan.to_str().unwrap(),
                "--catalog",
                cat.to_str().unwrap(),
                "-i",
                fleet.to_str().unwrap(),
            ]);
            assert_eq!(code(&out), 2, "{field} {kind}: {}", transcript(&out));
            assert!(String::from_utf8_lossy(&out.stderr).contains("control character"), "{}", transcript(&out));
            assert!(out.stdout.is_empty());
        }
    }
}
