//! Loading and placement at 1k, 10k and 50k nodes, with a catalog that grows
//! with the fleet (about one replica per node, a few left unplaced).
//!
//!     cargo bench --bench placement

mod common;

use llmgw::diag::source;
use llmgw::doc::Format;
use llmgw::placement::{Options, plan};

fn main() {
    divan::main();
}

const SIZES: &[u32] = &[1_000, 10_000, 50_000];

fn inventory_text(nodes: u32, format: Format) -> String {
    llmgw::output::render_inventory(&common::fleet(nodes), format).unwrap()
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn load_json(bencher: divan::Bencher, nodes: u32) {
    let text = inventory_text(nodes, Format::Json);
    bencher.bench(|| llmgw::load::inventory_file(&source("fleet.json", text.clone())).unwrap().len());
}

#[divan::bench(args = [1_000, 10_000], sample_count = 5, sample_size = 1)]
fn load_toml(bencher: divan::Bencher, nodes: u32) {
    let text = inventory_text(nodes, Format::Toml);
    bencher.bench(|| llmgw::load::inventory_file(&source("fleet.toml", text.clone())).unwrap().len());
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn place(bencher: divan::Bencher, nodes: u32) {
    let inv = common::fleet(nodes);
    let (cat, _) = llmgw::catalog::check(&source("catalog.toml", common::catalog(common::models_for(nodes))));
    let cat = cat.unwrap();
    bencher.bench(|| plan(&cat, &inv, Options::default()).summary.placed);
}

#[divan::bench(args = SIZES, sample_count = 5, sample_size = 1)]
fn explain_one_model(bencher: divan::Bencher, nodes: u32) {
    let inv = common::fleet(nodes);
    let (cat, _) = llmgw::catalog::check(&source("catalog.toml", common::catalog(common::models_for(nodes))));
    let cat = cat.unwrap();
    // The last model before the unplaceable one: the whole plan runs first.
    let model = cat.models.len() - 2;
    bencher.bench(|| plan(&cat, &inv, Options { explain: Some(model), ..Options::default() }).attempts.len());
}

/// The literal placement algorithm for every replica (what the fast path is
/// tested against), for comparison.
#[divan::bench(args = [1_000, 10_000], sample_count = 1, sample_size = 1)]
fn place_reference(bencher: divan::Bencher, nodes: u32) {
    let inv = common::fleet(nodes);
    let (cat, _) = llmgw::catalog::check(&source("catalog.toml", common::catalog(common::models_for(nodes))));
    let cat = cat.unwrap();
    bencher.bench(|| {
        plan(&cat, &inv, Options { mode: llmgw::placement::Mode::Reference, ..Options::default() }).summary.placed
    });
}

/// Writing an inventory in each format (merge, synth and discover -o): TOML
/// was quadratic in the node count before it was written node by node.
#[divan::bench(args = [(1_000, Format::Toml), (10_000, Format::Toml), (50_000, Format::Toml), (50_000, Format::Json), (50_000, Format::Yaml)], sample_count = 3, sample_size = 1)]
fn write_inventory(bencher: divan::Bencher, (nodes, format): (u32, Format)) {
    let inv = common::fleet(nodes);
    bencher.bench(|| llmgw::output::render_inventory(&inv, format).unwrap().len());
}

/// The same inventory as YAML through serde-saphyr, to compare with the
/// hand-written writer.
#[divan::bench(args = [10_000, 50_000], sample_count = 3, sample_size = 1)]
fn write_yaml_serde_saphyr(bencher: divan::Bencher, nodes: u32) {
    let inv = common::fleet(nodes);
    bencher.bench(|| serde_saphyr::to_string(&inv).unwrap().len());
}

/// `inventory import kubernetes` on `kubectl get nodes -o json` of 1k and
/// 10k GPU nodes (the test fixture's DGX node, repeated; about 6 KB each).
#[divan::bench(args = [1_000, 10_000], sample_count = 3, sample_size = 1)]
fn import_kubernetes(bencher: divan::Bencher, nodes: u32) {
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("../tests/data/kubernetes/nodes.json")).expect("the fixture is JSON");
    let template = fixture["items"][0].clone();
    let items: Vec<serde_json::Value> = (0..nodes)
        .map(|i| {
            let mut n = template.clone();
            n["metadata"]["name"] = format!("gpu-{i:05}").into();
            n
        })
        .collect();
    let text = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string();
    let settings = llmgw::kubernetes::Settings::default();
    bencher.bench(|| {
        llmgw::kubernetes::import(&source("nodes.json", text.clone()), None, &settings).unwrap().0.nodes.len()
    });
}
