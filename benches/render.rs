//! Rendering a plan into a folder against placing it: 20,000 single-GPU
//! replicas (it takes any count) on DGX H100s, eight a node, rendered as
//! sbatch scripts and as Kubernetes manifests, each into a folder render
//! owns (so each file is written, made durable and put in place as a set).
//!
//!     cargo bench --bench render            # 20,000 replicas
//!     cargo bench --bench render -- 50000   # any count
//!
//! Each the best of three runs of the release binary, and the ratio of
//! each render to `place --format json` of the same plan: into an empty
//! folder (every file new), and again into the same one (every file
//! unchanged, so none is rewritten).

mod common;

use std::fmt::Write as _;

use common::measure::{measure, measure_after};
use llmgw::synth::{Group, SHAPES, synthesize};

fn main() {
    let replicas: u32 = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(20_000);
    let dir = tempfile::tempdir().expect("temp dir");
    let nodes = replicas.div_ceil(8);
    let dgx = SHAPES.iter().find(|s| s.name == "dgx-h100").expect("a shape");
    let group = Group { shape: dgx, count: nodes, fabric: Some("ib-east".into()), labels: Default::default() };
    let fleet = synthesize(&[group], 0.0, 0.0, 7, "gpu");
    let inv = dir.path().join("fleet.json");
    std::fs::write(&inv, llmgw::output::render_inventory(&fleet, llmgw::doc::Format::Json).unwrap()).unwrap();
    // Twenty models, a thousand replicas each at 20,000, eight to a node.
    let models = 20;
    let mut catalog = String::new();
    for m in 0..models {
        let count = replicas / models + u32::from(m < replicas % models);
        let _ = write!(
            catalog,
            "[[model]]\nname = \"model-{m:02}\"\nsource = \"org/model-{m:02}\"\nreplicas = {count}\nreplicas_per_node = 8\n\
             [[model.profile]]\nname = \"tp1\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n"
        );
    }
    let cat = dir.path().join("catalog.toml");
    std::fs::write(&cat, catalog).unwrap();
    let plan = dir.path().join("plan.json");
    let (cat, inv, plan_s) = (cat.to_str().unwrap(), inv.to_str().unwrap(), plan.to_str().unwrap());
    println!("\n{replicas} replicas on {nodes} nodes");
    let (place, _) = measure(&["place", cat, "--inventory", inv, "--format", "json"], "place --format json");
    std::process::Command::new(env!("CARGO_BIN_EXE_llmgw"))
        .args(["place", cat, "--inventory", inv, "-o", plan_s])
        .status()
        .expect("place runs");
    for kind in ["slurm", "kubernetes"] {
        let out = dir.path().join(format!("out-{kind}"));
        let args = ["render", kind, plan_s, "--catalog", cat, "--inventory", inv, "-o", out.to_str().unwrap()];
        // Into an empty folder: every file written.
        let reset = || {
            let _ = std::fs::remove_dir_all(&out);
        };
        let (wall, code) = measure_after(&args, &format!("render {kind} -o DIR (new)"), &reset);
        assert_eq!(code, 0, "render {kind} failed");
        println!("render {kind} into an empty folder takes {:.2}x the time of place", wall / place);
        // Again into the same folder: every file unchanged.
        let (wall, code) = measure(&args, &format!("render {kind} -o DIR (again)"));
        assert_eq!(code, 0, "render {kind} failed");
        println!("render {kind} again takes {:.2}x the time of place", wall / place);
    }
}
