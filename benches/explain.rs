//! `explain-placement` of one model with 1,500 replicas on 10,000 nodes,
//! against `place` on the same inputs (SPEC: at most 2x its time and
//! memory). The release binary, best of three, peak RSS from wait4:
//!
//!     cargo bench --bench explain            # 10k nodes
//!     cargo bench --bench explain -- 50000   # any size
//!
//! The model is the scale catalog's first (a TP1 model with H100, A100,
//! L40S and CPU profiles), asked for 1,500 replicas: most place with
//! H100s, every one passing over the nodes full or already holding one.

mod common;

use common::measure::measure;

fn main() {
    let nodes: u32 = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(10_000);
    let dir = tempfile::tempdir().expect("temp dir");
    let catalog = common::catalog(common::models_for(nodes)).replacen(
        "name = \"model-0000-tp1\"\nsource = \"org/model-0000\"\nreplicas = 85",
        "name = \"model-0000-tp1\"\nsource = \"org/model-0000\"\nreplicas = 1500",
        1,
    );
    assert!(catalog.contains("replicas = 1500"), "the scale catalog's first model changed");
    let cat = dir.path().join("catalog.toml");
    std::fs::write(&cat, &catalog).unwrap();
    let inv = dir.path().join("fleet.json");
    std::fs::write(&inv, llmgw::output::render_inventory(&common::fleet(nodes), llmgw::doc::Format::Json).unwrap())
        .unwrap();
    let (cat, inv) = (cat.to_str().unwrap(), inv.to_str().unwrap());
    println!("{nodes} nodes; model-0000-tp1 asks for 1,500 replicas");
    let (place, _) = measure(&["place", cat, "-i", inv, "--format", "json"], "place --format json");
    let model = ["--model", "model-0000-tp1"];
    for (args, what) in [
        (vec!["--format", "json"], "explain-placement --format json"),
        (vec![], "explain-placement (human)"),
        (vec!["--replica", "0", "--format", "json"], "explain-placement --replica 0 --format json"),
        (vec!["--replica", "1499", "--format", "json"], "explain-placement --replica 1499 --format json"),
    ] {
        let mut all = vec!["explain-placement", cat, "-i", inv];
        all.extend(model);
        all.extend(args);
        let (wall, _) = measure(&all, what);
        println!("  {what}: {:.2}x the time of place", wall / place);
    }
}
