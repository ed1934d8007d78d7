//! The loaders take whatever bytes a user hands them: arbitrary input and
//! mutated valid files give diagnostics, never a panic.

use llmgw::diag::source;
use proptest::prelude::*;
use std::fmt::Write as _;

const CATALOG: &str = include_str!("../../catalog/fleet.toml");
const INVENTORY: &str = include_str!("../../examples/fleet.toml");
const NAMES: &[&str] = &["x.toml", "x.yaml", "x.json"];

fn load_all(name: &str, text: &str) {
    let src = source(name, text.to_string());
    let (_, diags) = llmgw::catalog::check(&src);
    if let Err(inv) = llmgw::load::inventory_file(&src) {
        let shown = llmgw::report::diagnostics::render(&inv, false);
        // At most 100 reports, each a bounded excerpt, whatever the input.
        assert!(shown.len() < 400_000, "{name}: {} bytes of diagnostics", shown.len());
    }
    let shown = llmgw::report::diagnostics::render(&diags, false);
    assert!(shown.len() < 400_000, "{name}: {} bytes of diagnostics", shown.len());
    for d in &diags {
        let _ = d.line_col();
        // Every span points inside the text it names.
        for (span, _) in &d.labels {
            assert!(span.end <= text.len() && span.start <= span.end, "{name}: {span:?} for {}", d.message);
        }
    }
}

/// Applies edits at random places: 0 inserts the piece, 1 deletes as many
/// characters, 2 overwrites with it, 3 cuts the file short there.
fn mutate(mut text: String, edits: Vec<(prop::sample::Index, u8, String)>) -> String {
    let floor = |t: &str, mut i: usize| {
        i = i.min(t.len());
        while !t.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    for (at, kind, piece) in edits {
        let i = floor(&text, at.index(text.len().max(1)));
        let end = floor(&text, i + piece.len());
        match kind {
            0 => text.insert_str(i, &piece),
            1 => text.replace_range(i..end, ""),
            2 => text.replace_range(i..end, &piece),
            _ => text.truncate(i),
        }
    }
    text
}

/// Input shaped the way hostile or generated files are: one very long line,
/// thousands of problems, aliases of aliases.
fn hostile(kind: u8, size: usize, fanout: usize, bad: &str) -> (&'static str, String) {
    match kind {
        // A fleet written by json.dump: one line, a long id, a bad value.
        0 => ("x.json", format!("{{\"node\": [{{\"id\": \"{}\", \"state\": {bad}}}]}}", "n".repeat(size))),
        // Many wrong elements on one line.
        1 => {
            let peers = vec![bad; size % 3000].join(",");
            (
                "x.json",
                format!(
                    "{{\"node\": [{{\"id\": \"a\", \"gpu\": [{{\"index\": 0, \"name\": \"X\", \"nvlink_peers\": [{peers}]}}]}}]}}"
                ),
            )
        }
        // Many wrong nodes, one per line, in TOML.
        2 => ("x.toml", "[[node]]\nid = \"a\"\nstate = 1\n".repeat(size % 2000)),
        // Aliases of aliases in YAML, `fanout` wide.
        _ => {
            let mut t = format!("a0: &a0 [{}]\n", vec!["\"x\""; fanout.max(1)].join(","));
            for i in 1..(size % 12) {
                let _ = writeln!(t, "a{i}: &a{i} [{}]", vec![format!("*a{}", i - 1); fanout.max(1)].join(","));
            }
            t.push_str("node:\n  - id: n\n    labels: *a0\n");
            ("x.yaml", t)
        }
    }
}

/// Valid files in all three syntaxes, to mutate.
fn seeds() -> Vec<(&'static str, String)> {
    let inv = llmgw::load::inventories(&[concat!(env!("CARGO_MANIFEST_DIR"), "/examples/fleet.toml")]).unwrap();
    let json = llmgw::output::render_inventory(&inv, llmgw::doc::Format::Json).unwrap();
    let yaml = llmgw::output::render_inventory(&inv, llmgw::doc::Format::Yaml).unwrap();
    // The catalog by its own path: its models' config.json files are beside it.
    let catalog = concat!(env!("CARGO_MANIFEST_DIR"), "/catalog/fleet.toml");
    // GPUs of two vendors, so mutations reach `vendor` too.
    let mixed = include_str!("../data/amd/fleet-mixed.toml").to_string();
    vec![
        (catalog, CATALOG.to_string()),
        ("x.toml", INVENTORY.to_string()),
        ("x.json", json),
        ("x.yaml", yaml),
        ("mixed.toml", mixed),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,400}", which in 0..3usize) {
        load_all(NAMES[which], &text);
    }

    #[test]
    fn hostile_shapes_never_panic(
        kind in 0..4u8,
        size in 0..120_000usize,
        fanout in 0..12usize,
        bad in "\"[a-z\\\\u001b]{0,8}\"|-1|1.5|true|null|\\[\\]",
    ) {
        let (name, text) = hostile(kind, size, fanout, &bad);
        load_all(name, &text);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300), which in 0..3usize) {
        load_all(NAMES[which], &String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn mutated_valid_files_never_panic(
        seed in 0..5usize,
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0..4u8, "[\\[\\]{}\"'=:,#0-9a-z\\n -]{0,6}"), 1..6),
    ) {
        let seeds = seeds();
        let (name, text) = seeds[seed].clone();
        load_all(name, &mutate(text, edits));
    }
}

#[test]
fn seeds_are_valid_in_every_format() {
    for (name, text) in seeds() {
        let src = source(name, text);
        if src.text().contains("[[model]]") {
            assert!(llmgw::catalog::check(&src).0.is_some());
        } else {
            let nodes = llmgw::load::inventory_file(&src)
                .unwrap_or_else(|d| panic!("{name}: {}", llmgw::report::diagnostics::render(&d, false)));
            assert_eq!(nodes.len(), if name == "mixed.toml" { 3 } else { 13 }, "{name}");
        }
    }
}

fn nodes_json(nodes: &[llmgw::inventory::Node]) -> String {
    let inv = llmgw::inventory::Inventory { nodes: nodes.to_vec() };
    llmgw::output::render_inventory(&inv, llmgw::doc::Format::Json).unwrap()
}

/// Whenever the fast loader accepts a file, the spanned loader accepts it
/// too and reads the same fleet; the fast loader never says yes alone.
fn fast_agrees(name: &str, text: &str) -> Result<(), TestCaseError> {
    let src = source(name, text.to_string());
    if let Some(fast) = llmgw::inventory::load_fast(&src) {
        let spanned = llmgw::inventory::load_spanned(&src);
        prop_assert!(spanned.is_ok(), "fast path accepted what the spanned path rejects:\n{text}\n{:?}", spanned.err());
        prop_assert_eq!(nodes_json(&fast), nodes_json(&spanned.unwrap()));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn fast_loader_agrees_with_the_spanned_one(
        seed in prop::sample::select(vec![1usize, 2, 4]),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0..3u8, "[\\[\\]{}\"=:,0-9a-z\\n -]{0,5}|null|-1|1.5|\"id\"|9223372036854775808"), 0..3),
    ) {
        let seeds = seeds();
        let (name, text) = seeds[seed].clone();
        fast_agrees(name, &mutate(text, edits))?;
    }
}

#[test]
fn fast_loader_defers_what_only_the_spanned_path_can_judge() {
    let cases = [
        r#"{"node": [{"id": "a", "weights": null}]}"#,
        r#"{"node": [{"id": "a", "labels": {"z": "1", "z": "2"}}]}"#,
        r#"{"node": [{"id": "a", "memory_total_mb": 9223372036854775808}]}"#,
        r#"{"node": [{"id": "a", "id": "b"}]}"#,
        r#"{"node": [{"id": ""}]}"#,
        r#"{"node": [{"id": "a", "state": "gone"}]}"#,
        r#"{"node": [{"id": "a", "gpu": [{"index": 0, "name": "x", "nvlink_peers": [3]}]}]}"#,
        r#"{"node": [{"id": "a"}, {"id": "a"}]}"#,
        r#"{"node": [{"id": "a", "fabric": [{"name": ""}]}]}"#,
        r#"{"node": [{"id": "a", "gpu": [{"index": 0, "name": "x", "vendor": "intel"}]}]}"#,
        r#"{"node": [{"id": "a", "gpu": [{"index": 0, "name": "x", "vendor": null}]}]}"#,
    ];
    for text in cases {
        let src = source("x.json", text.to_string());
        assert!(llmgw::inventory::load_fast(&src).is_none(), "{text}");
        assert!(llmgw::inventory::load_spanned(&src).is_err(), "{text}");
    }
}

const SLURM: &[(&str, &str)] = &[
    ("sinfo.json", include_str!("../data/slurm/sinfo-22.05.json")),
    ("nodes.txt", include_str!("../data/slurm/scontrol-22.05.txt")),
    ("nodes.json", include_str!("../data/slurm/nodes-24.11.json")),
];

/// The Slurm importer on mutated recorded output and topology: a
/// diagnostic inside the text, or an inventory, never a panic.
fn import_slurm(name: &str, text: &str, topology: &str) {
    let src = source(name, text.to_string());
    let topo = source("topology.conf", topology.to_string());
    let settings = llmgw::slurm::Settings { fabric_feature: Some("ib-".into()), jobs_user: "root".into() };
    if let Err(diags) = llmgw::slurm::import(&src, Some(&topo), None, &settings) {
        for d in &diags {
            for (span, _) in &d.labels {
                let len = if d.file() == Some("topology.conf") { topology.len() } else { text.len() };
                assert!(span.end <= len && span.start <= span.end, "{name}: {span:?} for {}", d.message);
            }
        }
        let _ = llmgw::report::diagnostics::render(&diags, false);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn mutated_slurm_output_never_panics(
        seed in 0..3usize,
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0..4u8, "[\\[\\]{}()\"=:,+*0-9a-zA-Z_\\n -]{0,6}"), 1..6),
        topo_edits in prop::collection::vec((any::<prop::sample::Index>(), 0..4u8, "[\\[\\]=,0-9a-z\\n -]{0,4}"), 0..3),
    ) {
        let (name, text) = SLURM[seed];
        let topology = include_str!("../data/slurm/topology.conf");
        import_slurm(name, &mutate(text.to_string(), edits), &mutate(topology.to_string(), topo_edits));
    }
}
