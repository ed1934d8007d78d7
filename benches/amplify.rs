//! Small inputs that once cost minutes or gigabytes, timed on the release
//! binary (best of three, peak RSS): what each amplification costs now.
//!
//!     cargo bench --bench amplify              # 450,000 fabrics
//!     cargo bench --bench amplify -- 100000    # fewer
//!
//! - one node on many fabrics, a two-node profile (a pool per fabric):
//!   `place --format json`, `explain-placement`;
//! - a million replicas no node can hold: `explain-placement`, `place`;
//! - two plans whose unplaced run ends at the last index (4,294,967,295
//!   replicas in 85 bytes): `diff`.

mod common;

use common::measure::measure;
use std::fmt::Write as _;

fn main() {
    let fabrics: u32 = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(450_000);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = |name: &str| dir.path().join(name).to_str().expect("utf-8 temp path").to_string();

    let mut inv = String::from("[[node]]\nid = \"n1\"\nstate = \"ready\"\nengines = { vllm = \"0.11.1\" }\n");
    for i in 0..8 {
        let _ = writeln!(inv, "[[node.gpu]]\nindex = {i}\nname = \"NVIDIA H100 80GB HBM3\"\nmemory_mb = 81559");
    }
    for f in 0..fabrics {
        let _ = writeln!(inv, "[[node.fabric]]\nname = \"ib-{f}\"");
    }
    std::fs::write(path("fabrics.toml"), &inv).unwrap();
    std::fs::write(
        path("two.toml"),
        "[[model]]\nname = \"m\"\nreplicas = 1\n[[model.profile]]\nname = \"two\"\nengine = \"vllm\"\n\
         gpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\nnodes = 2\n",
    )
    .unwrap();
    println!("one node on {fabrics} fabrics ({:.1} MB), a two-node profile:", inv.len() as f64 / 1e6);
    let (cat, fleet) = (path("two.toml"), path("fabrics.toml"));
    measure(&["place", &cat, "-i", &fleet, "--format", "json"], "place --format json");
    measure(&["explain-placement", &cat, "--model", "m", "-i", &fleet], "explain-placement");

    std::fs::write(
        path("million.toml"),
        "[[model]]\nname = \"m\"\nreplicas = 1000000\n[[model.profile]]\nname = \"b200\"\nengine = \"vllm\"\n\
         gpu_class = \"b200\"\ngpus_per_node = 8\n",
    )
    .unwrap();
    let one = inv.split("[[node.fabric]]").next().unwrap_or_default();
    std::fs::write(path("one.toml"), one).unwrap();
    println!("\na million replicas no node can hold (one node):");
    let (cat, fleet) = (path("million.toml"), path("one.toml"));
    measure(
        &["explain-placement", &cat, "--model", "m", "-i", &fleet, "--format", "json"],
        "explain-placement --format json",
    );
    measure(&["place", &cat, "-i", &fleet, "--format", "json"], "place --format json");

    let run = format!(
        "{{\"placements\": [], \"unplaced\": [{{\"model\": \"m\", \"replica\": 0, \"through\": {}}}]}}",
        u32::MAX
    );
    std::fs::write(path("old.json"), &run).unwrap();
    std::fs::write(path("new.json"), "{\"placements\": [], \"unplaced\": []}").unwrap();
    println!(
        "\na plan of {} bytes leaving {} replicas unplaced, against an empty one:",
        run.len(),
        u64::from(u32::MAX) + 1
    );
    measure(&["diff", &path("old.json"), &path("new.json"), "--format", "json"], "diff --format json");
}
