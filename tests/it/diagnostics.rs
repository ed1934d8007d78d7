//! Bad input: every class gets a miette report with its span, the right
//! exit code, and a snapshot of exactly what the user sees (colour off).

use crate::common::*;

fn lint(file: &str) -> std::process::Output {
    run(&["lint", file])
}

macro_rules! snap {
    ($name:ident, $args:expr, $code:expr) => {
        #[test]
        fn $name() {
            let out = run(&$args);
            assert_eq!(code(&out), $code, "{}", transcript(&out));
            insta::assert_snapshot!(transcript(&out));
        }
    };
}

snap!(toml_syntax_error, ["lint", "tests/data/bad/syntax.toml"], 1);
snap!(unknown_field_suggests_the_known_one, ["lint", "tests/data/bad/unknown-field.toml"], 1);
snap!(wrong_types_are_all_reported, ["lint", "tests/data/bad/wrong-type.toml"], 1);
snap!(duplicate_model_points_at_both, ["lint", "tests/data/bad/duplicate-model.toml"], 1);
snap!(unknown_engine_suggests_one, ["lint", "tests/data/bad/unknown-engine.toml"], 1);
snap!(gpu_engine_without_class, ["lint", "tests/data/bad/gpu-engine-no-class.toml"], 1);
snap!(nodes_gpus_and_labels_out_of_range, ["lint", "tests/data/bad/ranges.toml"], 1);
snap!(yaml_catalog_errors, ["lint", "tests/data/bad/catalog.yaml"], 1);
snap!(duplicate_node_id, ["nodes", "--inventory", "tests/data/bad/duplicate-node.toml"], 2);
snap!(allocation_of_missing_gpu, ["nodes", "--inventory", "tests/data/bad/alloc-unknown-gpu.toml"], 2);
snap!(json_inventory_errors, ["nodes", "--inventory", "tests/data/bad/inventory.json"], 2);
snap!(json_trailing_comma, ["nodes", "--inventory", "tests/data/bad/trailing-comma.json"], 2);
snap!(
    merge_duplicate_across_files_names_both,
    ["inventory", "merge", "tests/data/bad/first.toml", "tests/data/bad/second.yaml"],
    2
);
snap!(warnings_do_not_fail_lint, ["lint", "tests/data/bad/warnings.toml", "--inventory", "examples/fleet.toml"], 0);
snap!(
    place_refuses_a_catalog_with_lint_errors,
    ["place", "tests/data/bad/unknown-engine.toml", "--inventory", "examples/fleet.toml"],
    2
);
snap!(missing_file, ["place", "tests/data/bad/nope.toml", "--inventory", "examples/fleet.toml"], 2);
snap!(
    explain_unknown_model_suggests,
    ["explain-placement", "catalog/fleet.toml", "--model", "llama-3.1-7b", "--inventory", "examples/fleet.toml"],
    2
);

#[test]
fn deny_warnings_turns_warnings_into_failure() {
    let out = run(&["lint", "tests/data/bad/warnings.toml", "--deny-warnings"]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
}

#[test]
fn bad_flag_is_exit_2() {
    assert_eq!(code(&run(&["place", "--no-such-flag"])), 2);
    assert_eq!(code(&run(&["lint"])), 2);
}

#[test]
fn lint_json_lists_every_diagnostic_with_position() {
    let out =
        run(&["lint", "--format", "json", "tests/data/bad/wrong-type.toml", "tests/data/bad/unknown-engine.toml"]);
    assert_eq!(code(&out), 1);
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn lint_github_annotations_are_escaped() {
    let out = run(&["lint", "--format", "github", "tests/data/bad/unknown-field.toml", "tests/data/bad/warnings.toml"]);
    assert_eq!(code(&out), 1);
    insta::assert_snapshot!(stdout(&out));
}

#[test]
fn shipped_examples_lint_clean() {
    let mut args = vec!["lint", "--deny-warnings", "--inventory", "examples/fleet.toml"];
    // Every catalog file; catalog/configs/ holds the models' config.json files.
    let catalogs: Vec<String> = std::fs::read_dir(root().join("catalog"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| format!("catalog/{}", e.file_name().to_string_lossy()))
        .collect();
    assert!(!catalogs.is_empty());
    args.extend(catalogs.iter().map(String::as_str));
    let out = run(&args);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let inv = run(&["nodes", "--inventory", "examples/fleet.toml"]);
    assert_eq!(code(&inv), 0, "{}", transcript(&inv));
    let _ = lint;
}

#[test]
fn nothing_is_half_written_when_merge_fails() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("fleet.toml");
    std::fs::write(&target, "# the old inventory\n").unwrap();
    let out = run(&[
        "inventory",
        "merge",
        "tests/data/bad/first.toml",
        "tests/data/bad/second.yaml",
        "-o",
        target.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 2);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "# the old inventory\n");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temp file left behind");
}

snap!(serving_fields_that_would_break_a_script, ["lint", "tests/data/bad/serving-fields.toml"], 1);
