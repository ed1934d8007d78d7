//! Serving, second round: what current engines, images and clusters need
//! of what render writes (docs/serving.md).

use crate::common::*;

/// Weights found in a Hugging Face cache are given to the engine where
/// their files are (the snapshot), on both platforms; before, the engine
/// was given `disk.path/ORG/NAME`, which does not exist.
#[test]
fn weights_in_a_hugging_face_cache_are_given_at_their_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let snapshot = "/models/hub/models--meta-llama--Llama-3.1-8B-Instruct/snapshots/0e9e39f";
    let fleet = write(
        d,
        "fleet.toml",
        &format!(
            "[[node]]\nid = \"n1\"\nweights = [{{ source = \"meta-llama/Llama-3.1-8B-Instruct\", path = \"{snapshot}\" }}]\n\
             disk = {{ path = \"/models\", free_bytes = 1000000000000, total_bytes = 2000000000000 }}\n\
             [[node.gpu]]\nindex = 0\nname = \"NVIDIA H100 80GB HBM3\"\n"
        ),
    );
    let catalog = write(
        d,
        "c.toml",
        "[[model]]\nname = \"llama\"\nsource = \"meta-llama/Llama-3.1-8B-Instruct\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\n",
    );
    let plan = d.join("plan.json");
    let out = run(&["place", catalog.to_str().unwrap(), "-i", fleet.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let args = |kind: &str| {
        let out = run(&[
            "render",
            kind,
            plan.to_str().unwrap(),
            "--catalog",
            catalog.to_str().unwrap(),
            "-i",
            fleet.to_str().unwrap(),
        ]);
        assert_eq!(code(&out), 0, "{}", transcript(&out));
        stdout(&out)
    };
    let slurm = args("slurm");
    assert!(slurm.contains(&format!("vllm serve {snapshot} ")), "{slurm}");
    let kube = args("kubernetes");
    assert!(kube.contains(&format!("path: {snapshot}")) && kube.contains(&format!("- {snapshot}")), "{kube}");
    assert!(!kube.contains("/models/meta-llama"), "{kube}");
}
