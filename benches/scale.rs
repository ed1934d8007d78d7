//! The scale check: 10,000 nodes x 8 GPUs, a ~10,000-replica catalog (it
//! grows with the fleet for other sizes), and
//! the real release binary placing it with `--format json`.
//!
//!     cargo bench --bench scale            # 10k nodes
//!     cargo bench --bench scale -- 50000   # any size
//!
//! For each inventory format: `nodes --format json` (the yardstick),
//! `place --format json` grouped and full, and, on JSON, `capacity` (with
//! 3,000 more 8-GPU replicas, the B200 model left out: a model no added
//! node could hold is answered at once); each the best of three runs, with
//! the split from LLMGW_TIMINGS and peak RSS. Then, on
//! JSON, the same catalog with 70 more models that no node can hold (each
//! rejected by nearly every node, each explained on its own): what a plan
//! that leaves replicas unplaced costs to write.

mod common;

use common::measure::measure;

/// Models added that no node can hold, for the unplaced-replicas run.
const UNPLACEABLE: usize = 70;

fn main() {
    let nodes: u32 = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(10_000);
    let dir = tempfile::tempdir().expect("temp dir");
    let fleet = common::fleet(nodes);
    let gpus: usize = fleet.nodes.iter().map(|n| n.gpus.len()).sum();
    let catalog = common::catalog(common::models_for(nodes));
    let cat_path = dir.path().join("catalog.toml");
    std::fs::write(&cat_path, &catalog).unwrap();
    let capacity_path = dir.path().join("catalog-capacity.toml");
    let without_b200 = catalog.split("[[model]]\nname = \"model-b200\"").next().unwrap_or_default();
    let more = "[[model]]\nname = \"more-tp8\"\nreplicas = 3000\n[[model.profile]]\nname = \"h100\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\n";
    std::fs::write(&capacity_path, format!("{without_b200}{more}")).unwrap();
    let unplaced_path = dir.path().join("catalog-unplaced.toml");
    std::fs::write(&unplaced_path, catalog.clone() + &common::unplaceable(UNPLACEABLE)).unwrap();
    let replicas: u64 = llmgw::catalog::check(&llmgw::diag::source("c.toml", catalog))
        .0
        .unwrap()
        .models
        .iter()
        .map(|m| u64::from(m.replicas))
        .sum();
    whole_nodes(nodes, dir.path(), &cat_path);
    for (ext, format) in [("json", llmgw::doc::Format::Json), ("toml", llmgw::doc::Format::Toml)] {
        let inv_path = dir.path().join(format!("fleet.{ext}"));
        let text = llmgw::output::render_inventory(&fleet, format).unwrap();
        std::fs::write(&inv_path, &text).unwrap();
        println!(
            "\n{nodes} nodes, {gpus} GPUs, {replicas} replicas; inventory as {ext}: {:.1} MB",
            text.len() as f64 / 1e6
        );
        let (cat, inv) = (cat_path.to_str().unwrap(), inv_path.to_str().unwrap());
        let (nodes_wall, _) = measure(&["nodes", "--inventory", inv, "--format", "json"], "nodes --format json");
        let (place_wall, _) = measure(&["place", cat, "--inventory", inv, "--format", "json"], "place --format json");
        measure(
            &["place", cat, "--inventory", inv, "--format", "json", "--rejections", "full"],
            "place --format json --rejections full",
        );
        println!("place (grouped) takes {:.2}x the time of nodes", place_wall / nodes_wall);
        if ext == "json" {
            let cat = capacity_path.to_str().unwrap();
            measure(
                &["capacity", cat, "--inventory", inv, "--add", "dgx-h100@ib-east", "--max", "4096"],
                "capacity (3,000 more TP8 replicas)",
            );
            let cat = unplaced_path.to_str().unwrap();
            println!("\nwith {UNPLACEABLE} more models no node can hold:");
            let (wall, _) = measure(&["place", cat, "--inventory", inv, "--format", "json"], "place --format json");
            println!("place (grouped) takes {:.2}x the time of nodes", wall / nodes_wall);
            measure(
                &["place", cat, "--inventory", inv, "--format", "json", "--rejections", "none"],
                "place --format json --rejections none",
            );
        }
    }
}

/// The same catalog on the fleet as a scheduler reports it: CPUs,
/// allocatable memory, taints, allocations holding CPUs and memory (see
/// `common::whole_node_fleet`): every candidate is also checked for taints,
/// free CPUs and free memory, and every placement records what it asks.
fn whole_nodes(nodes: u32, dir: &std::path::Path, cat: &std::path::Path) {
    let fleet = common::whole_node_fleet(nodes);
    let inv_path = dir.join("fleet-whole.json");
    let text = llmgw::output::render_inventory(&fleet, llmgw::doc::Format::Json).unwrap();
    std::fs::write(&inv_path, &text).unwrap();
    println!(
        "\n{nodes} nodes with CPUs, allocatable memory and taints; inventory as json: {:.1} MB",
        text.len() as f64 / 1e6
    );
    let (cat, inv) = (cat.to_str().unwrap(), inv_path.to_str().unwrap());
    let (nodes_wall, _) = measure(&["nodes", "--inventory", inv, "--format", "json"], "nodes --format json");
    let (place_wall, _) = measure(&["place", cat, "--inventory", inv, "--format", "json"], "place --format json");
    println!("place (grouped) takes {:.2}x the time of nodes", place_wall / nodes_wall);
}
