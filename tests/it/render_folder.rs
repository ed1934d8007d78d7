//! The folder render owns: only its own files are replaced, and two
//! renders into one folder never interleave. Each test pins a defect of
//! the third hostile probe.

use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use crate::common::*;

/// A fleet of three 8-GPU nodes, a catalog of `replicas` one-GPU replicas of
/// `m` (profile-less source so every engine runs), and its plan.
fn setup(dir: &Path, name: &str, replicas: u32) -> (PathBuf, PathBuf, PathBuf) {
    let fleet = dir.join("fleet.toml");
    if !fleet.exists() {
        let out = run(&["inventory", "synth", "dgx-h100:3", "-o", fleet.to_str().unwrap()]);
        assert_eq!(code(&out), 0, "{}", transcript(&out));
    }
    let catalog = write(
        dir,
        &format!("{name}.toml"),
        &format!(
            "[[model]]\nname = \"m\"\nsource = \"org/m\"\nreplicas = {replicas}\n[[model.profile]]\nname = \"p\"\n\
             engine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 1\n"
        ),
    );
    let sub = dir.join(name);
    std::fs::create_dir_all(&sub).unwrap();
    let plan = placed_plan(&sub, &catalog, &fleet);
    (plan, catalog, fleet)
}

/// Two plans of one fleet (2 and 3 replicas), the first rendered into
/// `jobs`: the folder a second turn renders into.
struct Turns {
    plan2: PathBuf,
    catalog2: PathBuf,
    plan3: PathBuf,
    catalog3: PathBuf,
    fleet: PathBuf,
    out_dir: PathBuf,
}

fn two_turns(dir: &Path) -> Turns {
    let (plan2, catalog2, fleet) = setup(dir, "two", 2);
    let (plan3, catalog3, _) = setup(dir, "three", 3);
    let out_dir = dir.join("jobs");
    let out = render_plan("slurm", &plan2, &catalog2, &fleet, &["-o", out_dir.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    Turns { plan2, catalog2, plan3, catalog3, fleet, out_dir }
}

#[test]
fn a_hand_written_file_at_a_name_render_wants_is_refused_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (plan, catalog, fleet) = setup(dir.path(), "two", 2);
    let out_dir = dir.path().join("jobs");
    let o = out_dir.to_str().unwrap();
    let out = render_plan("slurm", &plan, &catalog, &fleet, &["-o", o]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let before = files(&out_dir);
    let script = before.iter().find(|f| f.ends_with("r1.sbatch")).unwrap().clone();
    // Someone keeps their own notes under that name.
    std::fs::write(out_dir.join(&script), "my own notes\n").unwrap();
    let (plan3, catalog3, _) = setup(dir.path(), "three", 3);
    let out = render_plan("slurm", &plan3, &catalog3, &fleet, &["-o", o]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("llmgw::render::not-ours") && err.contains(&script), "{err}");
    assert_eq!(std::fs::read_to_string(out_dir.join(&script)).unwrap(), "my own notes\n");
    assert_eq!(files(&out_dir), before, "nothing written");
    // The same for Kubernetes manifests.
    let k_dir = dir.path().join("manifests");
    let k = k_dir.to_str().unwrap();
    assert_eq!(code(&render_plan("kubernetes", &plan, &catalog, &fleet, &["-o", k])), 0);
    let yaml = files(&k_dir).into_iter().find(|f| f.contains("-r0")).unwrap();
    std::fs::write(k_dir.join(&yaml), "kind: ConfigMap\n").unwrap();
    let out = render_plan("kubernetes", &plan3, &catalog3, &fleet, &["-o", k]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert_eq!(std::fs::read_to_string(k_dir.join(&yaml)).unwrap(), "kind: ConfigMap\n");
}

#[test]
fn a_second_render_into_a_folder_waits_for_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let Turns { plan2, catalog2, plan3, catalog3, fleet, out_dir } = two_turns(dir.path());
    let o = out_dir.to_str().unwrap();
    let two = files(&out_dir);
    // While the folder is held, a render gives up after its wait, writing nothing.
    let held = std::fs::File::open(&out_dir).unwrap();
    // SAFETY: flock on a descriptor this test owns.
    assert_eq!(unsafe { libc::flock(held.as_raw_fd(), libc::LOCK_EX) }, 0);
    let out = llmgw()
        .args(["render", "slurm", plan3.to_str().unwrap(), "--catalog", catalog3.to_str().unwrap()])
        .args(["-i", fleet.to_str().unwrap(), "-o", o])
        .env("LLMGW_RENDER_WAIT", "0.3")
        .output()
        .unwrap();
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("llmgw::render::folder-busy"), "{}", transcript(&out));
    assert_eq!(files(&out_dir), two);
    drop(held);
    // Renders of two plans at once: each waits its turn, and the folder
    // holds exactly one plan's files, never a mix.
    let three = {
        assert_eq!(code(&render_plan("slurm", &plan3, &catalog3, &fleet, &["-o", o])), 0);
        files(&out_dir)
    };
    assert_ne!(two, three);
    for _ in 0..4 {
        let spawn = |plan: &Path, catalog: &Path| {
            llmgw()
                .args(["render", "slurm", plan.to_str().unwrap(), "--catalog", catalog.to_str().unwrap()])
                .args(["-i", fleet.to_str().unwrap(), "-o", o])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        };
        let (mut a, mut b) = (spawn(&plan2, &catalog2), spawn(&plan3, &catalog3));
        assert!(a.wait().unwrap().success() && b.wait().unwrap().success());
        let now = files(&out_dir);
        assert!(now == two || now == three, "a mix of two plans: {now:?}");
    }
}

#[test]
fn what_a_killed_render_left_is_cleaned_by_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let (plan, catalog, fleet) = setup(dir.path(), "two", 2);
    let out_dir = dir.path().join("jobs");
    // A render killed mid-swap leaves its staging folder, with new files
    // not yet moved in and old ones moved aside.
    let left = out_dir.join(".llmgw-render-4242-0");
    std::fs::create_dir_all(left.join("new")).unwrap();
    std::fs::create_dir_all(left.join("old")).unwrap();
    std::fs::write(left.join("new/llmgw-m-r0.sbatch"), "#!/bin/bash\n").unwrap();
    // Something else of a like name is not render's to remove.
    let other = out_dir.join(".llmgw-render-mine");
    std::fs::create_dir_all(other.join("notes")).unwrap();
    let out = render_plan("slurm", &plan, &catalog, &fleet, &["-o", out_dir.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert!(!left.exists(), "the leftover staging folder is gone");
    assert!(other.join("notes").exists(), "a folder render did not make stays");
    assert!(files(&out_dir).iter().all(|f| !f.starts_with(".llmgw-render-") || f == ".llmgw-render-mine"));
}

#[test]
fn endpoints_that_cannot_be_written_leave_the_folder_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let Turns { plan3, catalog3, fleet, out_dir, .. } = two_turns(dir.path());
    let o = out_dir.to_str().unwrap();
    let before = files(&out_dir);
    // Under a file: no folder can be made there.
    let nowhere = write(dir.path(), "a-file", "x").join("endpoints.json");
    let out = render_plan("slurm", &plan3, &catalog3, &fleet, &["-o", o, "--endpoints", nowhere.to_str().unwrap()]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing was written"), "{}", transcript(&out));
    assert_eq!(files(&out_dir), before, "the folder is the previous render, as the message says");
    let fresh = dir.path().join("fresh");
    let out = render_plan(
        "kubernetes",
        &plan3,
        &catalog3,
        &fleet,
        &["-o", fresh.to_str().unwrap(), "--endpoints", nowhere.to_str().unwrap()],
    );
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(!fresh.exists(), "no folder made");
}

#[test]
fn a_render_killed_at_any_moment_leaves_the_old_set_or_the_new_one() {
    use std::time::Instant;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fleet = d.join("fleet.toml");
    assert_eq!(code(&run(&["inventory", "synth", "cpu:800", "-o", fleet.to_str().unwrap()])), 0);
    let plan_of = |n: u32| {
        let catalog = write(
            d,
            &format!("c{n}.toml"),
            &format!(
                "[[model]]\nname = \"m\"\nsource = \"Qwen/Qwen2.5-7B-Instruct-GGUF:Q4_K_M\"\nreplicas = {n}\n\
                 [[model.profile]]\nname = \"cpu\"\nengine = \"llama.cpp\"\n"
            ),
        );
        let sub = d.join(format!("p{n}"));
        std::fs::create_dir_all(&sub).unwrap();
        (placed_plan(&sub, &catalog, &fleet), catalog)
    };
    let (old_plan, old_cat) = plan_of(500);
    let (new_plan, new_cat) = plan_of(800);
    let out_dir = d.join("jobs");
    let o = out_dir.to_str().unwrap();
    let render = |plan: &Path, cat: &Path| {
        let mut c = llmgw();
        c.args(["render", "slurm", plan.to_str().unwrap(), "--catalog", cat.to_str().unwrap()])
            .args(["-i", fleet.to_str().unwrap(), "-o", o])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        c
    };
    assert!(render(&new_plan, &new_cat).status().unwrap().success());
    let new_set = files(&out_dir);
    let start = Instant::now();
    assert!(render(&old_plan, &old_cat).status().unwrap().success());
    let took = start.elapsed();
    let old_set = files(&out_dir);
    for i in 0..8u32 {
        let mut child = render(&new_plan, &new_cat).spawn().unwrap();
        std::thread::sleep(took * i / 7);
        let _ = child.kill();
        let _ = child.wait();
        let now = files(&out_dir);
        assert!(now == old_set || now == new_set, "killed after {:?}: {} files, a mix", took * i / 7, now.len());
        if now == new_set {
            assert!(render(&old_plan, &old_cat).status().unwrap().success());
        }
    }
    // The next render removes what the killed ones left beside the folder.
    assert!(render(&new_plan, &new_cat).status().unwrap().success());
    let left: Vec<String> = files(d).into_iter().filter(|f| f.starts_with(".jobs.llmgw-render-")).collect();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(files(&out_dir), new_set);
}
