//! `--pack most` measured: how many replicas it places against the order
//! and against an exact solver, and what it costs at 10,000 nodes.
//!
//!     cargo bench --bench pack              # both
//!     cargo bench --bench pack -- quality   # 40 oversubscribed fleets
//!     cargo bench --bench pack -- time      # 10,000 nodes, ~10,000 replicas
//!
//! Quality: 40 fleets of `common::oversubscribed` (6 to 40 nodes, 3 to 8
//! models), each planned in order and with `--pack most` by the library,
//! and solved exactly by the generator's own integer program. Time: the
//! scale check's fleet and catalog (and the same catalog tripled, which
//! the fleet cannot hold) placed by the release binary in both modes.

mod common;

use std::time::Instant;

use common::measure::measure;
use llmgw::diag::source;
use llmgw::placement::{Options, Pack, plan};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let all = args.is_empty();
    if all || args.first().is_some_and(|a| a == "quality") {
        quality();
    }
    // `dump SEED DIR`: one quality fleet's files, to run llmgw on by hand.
    if let (Some("dump"), Some(seed), Some(dir)) = (args.first().map(String::as_str), args.get(1), args.get(2)) {
        let f = common::oversubscribed::generate(seed.parse().expect("a seed"), (6, 40), (3, 8));
        std::fs::create_dir_all(dir).expect("a folder");
        std::fs::write(format!("{dir}/catalog.toml"), f.catalog()).expect("written");
        std::fs::write(format!("{dir}/fleet.toml"), f.inventory()).expect("written");
        return;
    }
    if all || args.iter().any(|a| a == "time") {
        time(args.iter().find_map(|a| a.parse().ok()).unwrap_or(10_000));
    }
}

fn quality() {
    let (mut order, mut most, mut exact, mut short, mut worse) = (0u64, 0u64, 0u64, 0, 0);
    let mut bound_below = 0;
    let mut slowest = 0f64;
    println!("fleet nodes models  order  most exact  bound");
    for seed in 0..40 {
        let f = common::oversubscribed::generate(seed, (6, 40), (3, 8));
        let (cat, _) = llmgw::catalog::check(&source("c.toml", f.catalog()));
        let cat = cat.expect("a valid catalog");
        let nodes = llmgw::load::inventory_file(&source("i.toml", f.inventory())).expect("a valid inventory");
        let inv = llmgw::inventory::merge(vec![nodes]).expect("one file");
        let o = plan(&cat, &inv, Options::default()).summary;
        let t = Instant::now();
        let m = plan(&cat, &inv, Options { pack: Pack::Most, ..Options::default() }).summary;
        slowest = slowest.max(t.elapsed().as_secs_f64());
        let Some(e) = f.exact() else {
            println!("{seed:5} exact solver stopped short; left out");
            continue;
        };
        println!(
            "{seed:5} {:5} {:6} {:6} {:5} {:5} {:6}",
            f.nodes.len(),
            f.models.len(),
            o.placed,
            m.placed,
            e,
            m.bound
        );
        order += o.placed;
        most += m.placed;
        exact += e;
        short += usize::from(m.placed < e);
        worse += usize::from(m.placed < o.placed);
        bound_below += usize::from(m.bound < e || o.bound < e);
    }
    let pct = |x: u64| 100.0 * x as f64 / exact.max(1) as f64;
    println!(
        "order {order} ({:.1}%), most {most} ({:.1}%), exact {exact}; most short of exact on {short} fleets, \
         below order on {worse}; a bound below the optimum on {bound_below}; slowest most plan {:.3} s",
        pct(order),
        pct(most),
        slowest
    );
}

fn time(nodes: u32) {
    let dir = tempfile::tempdir().expect("temp dir");
    let fleet = common::fleet(nodes);
    let inv = dir.path().join("fleet.json");
    std::fs::write(&inv, llmgw::output::render_inventory(&fleet, llmgw::doc::Format::Json).unwrap()).unwrap();
    let text = common::catalog(common::models_for(nodes));
    let cat = dir.path().join("catalog.toml");
    std::fs::write(&cat, &text).unwrap();
    // Three times the models: far more than the fleet holds.
    let big = dir.path().join("catalog-3x.toml");
    std::fs::write(&big, common::catalog(common::models_for(nodes) * 3)).unwrap();
    let inv = inv.to_str().unwrap();
    for (what, cat) in [("catalog", cat.to_str().unwrap()), ("catalog x3", big.to_str().unwrap())] {
        println!("\n{nodes} nodes, {what}:");
        let (order, _) = measure(&["place", cat, "--inventory", inv, "--format", "json"], "place --pack order");
        let (most, _) =
            measure(&["place", cat, "--inventory", inv, "--format", "json", "--pack", "most"], "place --pack most");
        println!("most takes {:.2}x the time of order", most / order);
    }
}
