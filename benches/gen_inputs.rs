//! Writes the scale check's inputs to a folder, to run llmgw on by hand:
//!
//!     cargo bench --bench gen_inputs -- /tmp/scale 10000
//!
//! `fleet-whole.json` is the same fleet with CPUs, allocatable memory and
//! taints (`common::whole_node_fleet`).
mod common;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let dir = std::path::PathBuf::from(args.first().map_or("scale-inputs", String::as_str));
    let nodes: u32 = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(10_000);
    std::fs::create_dir_all(&dir).unwrap();
    let catalog = common::catalog(common::models_for(nodes));
    std::fs::write(dir.join("catalog-unplaced.toml"), catalog.clone() + &common::unplaceable(70)).unwrap();
    std::fs::write(dir.join("catalog.toml"), catalog).unwrap();
    let fleet = common::fleet(nodes);
    for (ext, f) in [("json", llmgw::doc::Format::Json), ("toml", llmgw::doc::Format::Toml)] {
        std::fs::write(dir.join(format!("fleet.{ext}")), llmgw::output::render_inventory(&fleet, f).unwrap()).unwrap();
    }
    let whole = common::whole_node_fleet(nodes);
    std::fs::write(
        dir.join("fleet-whole.json"),
        llmgw::output::render_inventory(&whole, llmgw::doc::Format::Json).unwrap(),
    )
    .unwrap();
    println!(
        "wrote {}/catalog.toml, catalog-unplaced.toml, fleet.{{json,toml}} and fleet-whole.json ({nodes} nodes)",
        dir.display()
    );
}
