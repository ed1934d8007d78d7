//! `--pack most` on the real binary and the shipped example fleet: the
//! plan it writes, its summary against the default's, the explanation of
//! a replica it moved, and bad values refused.

use serde_json::json;

use crate::common::*;

fn place(extra: &[&str]) -> serde_json::Value {
    let root = root();
    let (cat, inv) = (root.join("catalog/fleet.toml"), root.join("examples/fleet.toml"));
    let mut args = vec!["place", cat.to_str().unwrap(), "--inventory", inv.to_str().unwrap(), "--format", "json"];
    args.extend(extra);
    let out = run(&args);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    json(&out)
}

#[test]
fn most_places_one_more_on_the_example_and_the_bound_says_no_plan_does_better() {
    let order = place(&[]);
    let most = place(&["--pack", "most"]);
    assert_eq!(order, place(&["--pack", "order"]), "--pack order is the default");
    assert_eq!(
        order["summary"],
        json!({"wanted": 14, "existing": 3, "placed": 9, "unplaced": 2, "bound": 10,
               "stranded": {"a100-sxm4-80gb": 12, "h100-80gb-hbm3": 8}})
    );
    assert_eq!(
        most["summary"],
        json!({"wanted": 14, "existing": 3, "placed": 10, "unplaced": 1, "bound": 10,
               "stranded": {"a100-sxm4-80gb": 3, "h100-80gb-hbm3": 5}})
    );
    // The second 405B replica is placed; what it needed was freed by
    // sending a llama-8b and a llama-70b replica to A100s.
    let placed = |v: &serde_json::Value, model: &str| {
        v["placements"].as_array().unwrap().iter().filter(|p| p["model"] == model).count()
    };
    assert_eq!((placed(&order, "llama-3.1-405b"), placed(&most, "llama-3.1-405b")), (1, 2));
    assert_eq!(most["unplaced"][0]["model"], "deepseek-v3");
    // Replicas that already run stay where they are, in both.
    assert_eq!(order["existing"], most["existing"]);
}

#[test]
fn explain_most_says_the_replica_was_chosen_with_the_rest() {
    let root = root();
    let (cat, inv) = (root.join("catalog/fleet.toml"), root.join("examples/fleet.toml"));
    let out = run(&[
        "explain-placement",
        cat.to_str().unwrap(),
        "--inventory",
        inv.to_str().unwrap(),
        "--model",
        "llama-3.1-70b",
        "--replica",
        "2",
        "--pack",
        "most",
    ]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let text = stdout(&out);
    assert!(text.contains("replica 2: placed with profile a100-tp8 (vllm)"), "{text}");
    assert!(
        text.contains("why: chosen together with every other new replica, to place the most (--pack most)"),
        "{text}"
    );
}

#[test]
fn an_unknown_pack_mode_is_a_bad_flag() {
    let root = root();
    let cat = root.join("catalog/fleet.toml");
    let out = run(&["place", cat.to_str().unwrap(), "--pack", "tightest"]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(transcript(&out).contains("most"), "{}", transcript(&out));
}
