//! The page, read back: every GPU of the inventory once, with the state
//! the plan gives it, and nothing from an input read as markup.

use crate::diag::source;

fn inventory(text: &str) -> crate::inventory::Inventory {
    let src = source("inv.toml", text.to_string());
    crate::inventory::Inventory { nodes: crate::load::inventory_file(&src).unwrap() }
}

const INV: &str = r#"
[[node]]
id = "a"
state = "ready"
cpus = 64
memory_total_mb = 262144
gpu = [
  { index = 0, name = "H100" }, { index = 1, name = "H100" },
  { index = 2, name = "H100", healthy = false },
  { index = 3, name = "A100", mig = true, mig_device = [
      { index = 0, profile = "3g.40gb" }, { index = 1, profile = "3g.40gb" } ] },
]
allocation = [
  { model = "m", replica = 0, gpus = [0], cpus = 8, memory_mb = 1024 },
  { model = "other", replica = 0, gpus = [3], mig_devices = [1] },
]

[[node]]
id = "b<script>"
state = "cordoned"
gpu = [ { index = 0, name = "H100" } ]
"#;

fn plan_json(extra: &str) -> String {
    format!(
        r#"{{"placements": [{{"model": "m", "replica": 1, "profile": "p", "engine": "vllm", "pool": "none/h100",
            "fabric": null, "nodes": [{{"node": "a", "rank": 0, "gpus": [1], "hcas": [], "cpus": 4}}]}}],
          "existing": [{{"model": "m", "replica": 0, "profile": "p", "nodes": [{{"node": "a", "gpus": [0]}}]}}],
          "unplaced": [{{"model": "m", "replica": 2, "through": 4,
             "reasons": [{{"profile": "p", "pool": "none/h100", "reason": "node is cordoned", "count": 1, "nodes": ["b<script>"]}}],
             "closest": []}}],
          "summary": {{"wanted": 5, "existing": 1, "placed": 1, "unplaced": 3{extra}}}}}"#
    )
}

fn page(plan: &str) -> String {
    let inv = inventory(INV);
    let src = source("plan.json", plan.to_string());
    let plan = crate::plan::read(&src).unwrap();
    let extras = super::extras::read(&src).unwrap();
    super::page(&super::Input { plan: &plan, extras: &extras, inv: &inv, title: "plan.json" }).unwrap()
}

/// The fleet as the page's script sees it.
fn data(page: &str) -> serde_json::Value {
    let start = page.find("id=\"map-data\">").unwrap() + "id=\"map-data\">".len();
    let end = start + page[start..].find("</script>").unwrap();
    serde_json::from_str(&page[start..end]).unwrap()
}

#[test]
fn every_gpu_once_with_its_state() {
    let p = page(&plan_json(""));
    let d = data(&p);
    let states: Vec<&str> = d["states"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    let node_a = &d["nodes"][0];
    assert_eq!(node_a[0], "a");
    let gpus = node_a[4].as_array().unwrap();
    let state = |g: &serde_json::Value| states[g[2].as_u64().unwrap() as usize];
    assert_eq!(gpus.iter().map(state).collect::<Vec<_>>(), ["existing", "new", "unhealthy", "held"]);
    let mig = gpus[3][4].as_array().unwrap();
    assert_eq!(mig.iter().map(|m| states[m[2].as_u64().unwrap() as usize]).collect::<Vec<_>>(), ["free", "held"]);
    // CPUs requested: 8 held, 4 planned; of 64.
    assert_eq!(node_a[2], serde_json::json!([12000, 64000]));
    // The holder of GPU 1 says who, with what, where.
    let h = &d["holders"][gpus[1][3].as_u64().unwrap() as usize];
    assert_eq!(h[2], 1);
    assert_eq!((h[3].as_str(), h[4].as_str(), h[5].as_str()), (Some("p"), Some("vllm"), Some("a GPU 1")));
    // The existing replica's engine comes from its profile's placements.
    let e = &d["holders"][gpus[0][3].as_u64().unwrap() as usize];
    assert_eq!(e[4], "vllm");
}

#[test]
fn the_unplaced_run_and_the_summary_are_plain_html() {
    let p = page(&plan_json(""));
    assert!(p.contains("data-unplaced=\"m\" data-replica=\"2\" data-through=\"4\""), "{p}");
    assert!(p.contains("m replicas 2-4 (3): not placed"));
    assert!(p.contains("node is cordoned (b&lt;script&gt;)"));
    // No stranded figure in the plan: the map does not make one up.
    assert!(p.contains("<td data-stranded><span title="));
    let p = page(&plan_json(r#", "stranded": {"h100": 1}"#));
    assert!(p.contains("<tr data-class=\"h100\"><th>h100</th><td>4</td><td>1</td><td>1</td>"), "{p}");
    assert!(p.contains("<td data-stranded>1</td>"));
}

#[test]
fn no_input_ends_the_script_early() {
    let p = page(&plan_json(""));
    let d = p.split("id=\"map-data\">").nth(1).unwrap();
    let json = &d[..d.find("</script>").unwrap()];
    assert!(!json.contains('<'), "{json}");
    assert!(json.contains("b\\u003cscript>"));
    // Nothing else is loaded: no URL outside the page.
    for needle in ["src=", "href=\"http", "url(", "@import"] {
        assert!(!p.contains(needle) || needle == "src=" && !p.contains("<script src"), "{needle}");
    }
}

#[test]
fn a_plan_the_inventory_no_longer_fits_is_refused() {
    let inv = inventory(INV);
    let text = plan_json("").replace(r#""gpus": [1], "hcas""#, r#""gpus": [0], "hcas""#);
    let src = source("plan.json", text);
    let plan = crate::plan::read(&src).unwrap();
    let extras = super::extras::read(&src).unwrap();
    let err = super::page(&super::Input { plan: &plan, extras: &extras, inv: &inv, title: "t" }).unwrap_err();
    assert!(err[0].message.contains("held by m r0"), "{}", err[0].message);
}
