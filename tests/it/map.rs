//! The map, opened in a real headless Chromium: once loaded, the DOM holds
//! what the plan says (every GPU once, in its state, with its model and
//! replica; every MIG device; every node in its state; every unplaced run;
//! a tooltip naming who holds a GPU), and a screenshot is a picture. The
//! states expected are worked out here from the plan and the inventory,
//! not read back from llmgw's own reckoning.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use crate::browser::{self, Dom};
use crate::common::*;

/// The state docs/map.md gives each GPU (and MIG device), from the plan's
/// JSON and the inventory: (node, GPU, MIG device) -> (state, model, replica).
type Expected = BTreeMap<(String, u32, Option<u32>), (String, Option<(String, u32)>)>;

fn expected(plan: &serde_json::Value, inventory: &Path) -> Expected {
    let inv = llmgw::load::inventories(&[inventory]).unwrap();
    let ours: HashSet<(String, u64)> = plan["existing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["model"].as_str().unwrap().to_string(), e["replica"].as_u64().unwrap()))
        .collect();
    let mut out = Expected::new();
    /// GPU `gpu` of `node` held whole, or the MIG devices named (`all`: the
    /// GPU's devices, when it is in MIG mode).
    fn held(out: &mut Expected, at: (&str, u32), migs: &[u32], all: &[u32], state: &str, who: (String, u32)) {
        let (node, gpu) = at;
        if migs.is_empty() && all.is_empty() {
            out.insert((node.to_string(), gpu, None), (state.to_string(), Some(who)));
        } else {
            for &m in if migs.is_empty() { all } else { migs } {
                out.insert((node.to_string(), gpu, Some(m)), (state.to_string(), Some(who.clone())));
            }
        }
    }
    for p in plan["placements"].as_array().unwrap() {
        let who = (p["model"].as_str().unwrap().to_string(), p["replica"].as_u64().unwrap() as u32);
        for at in p["nodes"].as_array().unwrap() {
            let node = at["node"].as_str().unwrap();
            let migs: Vec<u32> = at["mig_devices"]
                .as_array()
                .map(|v| v.iter().map(|m| m.as_u64().unwrap() as u32).collect())
                .unwrap_or_default();
            for g in at["gpus"].as_array().unwrap() {
                held(&mut out, (node, g.as_u64().unwrap() as u32), &migs, &[], "new", who.clone());
            }
        }
    }
    for n in &inv.nodes {
        for a in &n.allocations {
            let state = if a.pending {
                "pending"
            } else if ours.contains(&(a.model.clone(), u64::from(a.replica))) {
                "existing"
            } else {
                "held"
            };
            for &g in &a.gpus {
                let gpu = n.gpus.iter().find(|x| x.index == g).unwrap();
                let all: Vec<u32> = gpu.mig_devices.iter().map(|d| d.index).collect();
                held(&mut out, (&n.id, g), &a.mig_devices, &all, state, (a.model.clone(), a.replica));
            }
        }
        for g in &n.gpus {
            let idle = if g.healthy { "free" } else { "unhealthy" };
            if g.mig == Some(true) && !g.mig_devices.is_empty() {
                for d in &g.mig_devices {
                    out.entry((n.id.clone(), g.index, Some(d.index))).or_insert((idle.to_string(), None));
                }
            } else {
                out.entry((n.id.clone(), g.index, None)).or_insert((idle.to_string(), None));
            }
        }
    }
    out
}

/// What the DOM says of each GPU cell (and MIG device).
fn drawn(dom: &Dom) -> Expected {
    let mut out = Expected::new();
    for e in dom.with("data-gpu", None) {
        let node = e.get("data-node").expect("a GPU cell names its node").to_string();
        let gpu: u32 = e.get("data-gpu").unwrap().parse().unwrap();
        let mig = e.get("data-mig-index").map(|m| m.parse().unwrap());
        // A GPU in MIG mode is drawn as its devices, inside it.
        if e.get("class").is_some_and(|c| c.split(' ').any(|c| c == "mig")) {
            continue;
        }
        let who = e.get("data-model").map(|m| (m.to_string(), e.get("data-replica").unwrap().parse().unwrap()));
        let state = e.get("data-state").expect("a GPU cell has a state").to_string();
        assert!(e.get("title").is_some_and(|t| t.contains(&node)), "no tooltip naming {node} on {e:?}");
        let again = out.insert((node.clone(), gpu, mig), (state, who));
        assert!(again.is_none(), "{node} GPU {gpu} {mig:?} is drawn twice");
    }
    out
}

fn place_and_map(dir: &Path, catalog: &Path, inventory: &Path) -> (serde_json::Value, std::path::PathBuf) {
    let plan = dir.join("plan.json");
    let out =
        run(&["place", catalog.to_str().unwrap(), "-i", inventory.to_str().unwrap(), "-o", plan.to_str().unwrap()]);
    assert!(code(&out) <= 1, "{}", transcript(&out));
    let page = dir.join("map.html");
    let out = run(&["map", plan.to_str().unwrap(), "-i", inventory.to_str().unwrap(), "-o", page.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    (serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap(), page)
}

/// The DOM against the plan: every GPU once in its state; every node in
/// its state; every unplaced run.
fn check_dom(dom: &Dom, plan: &serde_json::Value, inventory: &Path) {
    assert!(dom.elements.iter().any(|e| e.tag == "html" && e.has("data-drawn-ms")), "the script did not finish");
    assert_eq!(drawn(dom), expected(plan, inventory));
    let inv = llmgw::load::inventories(&[inventory]).unwrap();
    for n in &inv.nodes {
        let boxes: Vec<_> = dom.with("data-node-state", None).filter(|e| e.get("data-node") == Some(&n.id)).collect();
        assert_eq!(boxes.len(), 1, "node {}", n.id);
        assert_eq!(boxes[0].get("data-node-state"), Some(n.state.as_str()), "node {}", n.id);
    }
    for u in plan["unplaced"].as_array().unwrap() {
        let model = u["model"].as_str().unwrap();
        let replica = u["replica"].to_string();
        let found = dom.with("data-unplaced", Some(model)).find(|e| e.get("data-replica") == Some(&replica));
        assert!(found.is_some(), "unplaced {model} r{replica} is not on the page");
    }
}

#[test]
fn the_example_fleet_in_a_browser() {
    let Some(chromium) = browser::chromium("the_example_fleet_in_a_browser") else { return };
    let dir = tempfile::tempdir().unwrap();
    let inventory = root().join("examples/fleet.toml");
    let (plan, page) = place_and_map(dir.path(), &root().join("catalog/fleet.toml"), &inventory);
    let dom = browser::dom(&chromium, &page);
    check_dom(&dom, &plan, &inventory);
    // The tooltip of a new replica's GPU names who, with what, where.
    let p = &plan["placements"][0];
    let at = &p["nodes"][0];
    let cell = dom
        .with("data-node", at["node"].as_str())
        .find(|e| e.get("data-gpu") == Some(&at["gpus"][0].to_string()))
        .unwrap();
    let title = cell.get("title").unwrap();
    for part in [&p["model"], &p["profile"], &p["engine"], &at["node"]] {
        assert!(title.contains(part.as_str().unwrap()), "{title}");
    }
    assert!(title.contains(&format!(" r{}", p["replica"])), "{title}");
}

/// A fleet with every state a GPU can be in: MIG devices free, given and
/// held, a pending replica, another workload's GPUs, an unhealthy GPU,
/// nodes cordoned, draining and down.
const EVERY_STATE: &str = r#"
[[node]]
id = "a100-mig"
state = "ready"
cpus = 64
memory_total_mb = 524288
engines = { vllm = "0.8.0" }
gpu = [
  { index = 0, name = "NVIDIA A100-SXM4-80GB", memory_mb = 81920, mig = true, mig_device = [
      { index = 0, profile = "3g.40gb", memory_mb = 40192 }, { index = 1, profile = "3g.40gb", memory_mb = 40192 } ] },
  { index = 1, name = "NVIDIA A100-SXM4-80GB", memory_mb = 81920, healthy = false },
  { index = 2, name = "NVIDIA A100-SXM4-80GB", memory_mb = 81920 },
  { index = 3, name = "NVIDIA A100-SXM4-80GB", memory_mb = 81920 },
]
allocation = [
  { model = "other-mig", replica = 0, gpus = [0], mig_devices = [1], cpus = 4, memory_mb = 8192 },
  { model = "batch-job", replica = 0, gpus = [2] },
  { model = "small", replica = 1, gpus = [3], pending = true },
]

[[node]]
id = "h100-01"
state = "ready"
engines = { vllm = "0.8.0" }
gpu = [
  { index = 0, name = "H100" }, { index = 1, name = "H100" }, { index = 2, name = "H100" }, { index = 3, name = "H100" },
  { index = 4, name = "H100" }, { index = 5, name = "H100" }, { index = 6, name = "H100" }, { index = 7, name = "H100" },
]
allocation = [ { model = "big", replica = 0, gpus = [0, 1, 2, 3], profile = "tp4" } ]

[[node]]
id = "h100-02"
state = "cordoned"
gpu = [ { index = 0, name = "H100" }, { index = 1, name = "H100" } ]

[[node]]
id = "h100-03"
state = "draining"
gpu = [ { index = 0, name = "H100" } ]

[[node]]
id = "cpu-01"
state = "down"
cpus = 32
memory_total_mb = 65536
"#;

const EVERY_STATE_CATALOG: &str = r#"
[[model]]
name = "big"
replicas = 2
replicas_per_node = 2
[[model.profile]]
name = "tp4"
engine = "vllm"
gpu_class = "h100"
gpus_per_node = 4

[[model]]
name = "small"
replicas = 2
replicas_per_node = 2
[[model.profile]]
name = "mig"
engine = "vllm"
gpu_class = "a100-sxm4-80gb"
mig_profile = "3g.40gb"

[[model]]
name = "huge"
replicas = 2
[[model.profile]]
name = "tp8"
engine = "vllm"
gpu_class = "h100"
gpus_per_node = 8
"#;

#[test]
fn every_state_and_mig_device_in_a_browser() {
    let Some(chromium) = browser::chromium("every_state_and_mig_device_in_a_browser") else { return };
    let dir = tempfile::tempdir().unwrap();
    let inventory = write(dir.path(), "fleet.toml", EVERY_STATE);
    let catalog = write(dir.path(), "catalog.toml", EVERY_STATE_CATALOG);
    let (plan, page) = place_and_map(dir.path(), &catalog, &inventory);
    let dom = browser::dom(&chromium, &page);
    check_dom(&dom, &plan, &inventory);
    let states: HashSet<&str> = dom.with("data-state", None).filter_map(|e| e.get("data-state")).collect();
    for s in ["free", "new", "existing", "pending", "held", "unhealthy"] {
        assert!(states.contains(s), "no {s} cell: {states:?}");
    }
    let migs: Vec<_> = dom.with("data-mig", Some("3g.40gb")).collect();
    assert_eq!(migs.len(), 2, "{migs:?}");
    assert_eq!(migs[0].get("data-model"), Some("small"));
    assert_eq!(migs[1].get("data-state"), Some("held"));
    // Unplaced: huge r0-1, one run, with why.
    let run: Vec<_> = dom.with("data-unplaced", Some("huge")).collect();
    assert_eq!((run.len(), run[0].get("data-through")), (1, Some("1")));
    assert!(dom.html.contains("huge replicas 0-1 (2): not placed"));
    // The summary: h100 GPUs free, used, and stranded not made up.
    let row = dom.with("data-class", Some("h100")).next().unwrap();
    assert_eq!(row.tag, "tr");
}

#[test]
fn the_filter_hides_all_but_the_models_and_nodes_typed() {
    let Some(chromium) = browser::chromium("the_filter_hides_all_but_the_models_and_nodes_typed") else { return };
    let dir = tempfile::tempdir().unwrap();
    let inventory = write(dir.path(), "fleet.toml", EVERY_STATE);
    let catalog = write(dir.path(), "catalog.toml", EVERY_STATE_CATALOG);
    let (_, page) = place_and_map(dir.path(), &catalog, &inventory);
    // Opened at `#filter=WORDS`, as if typed.
    let dom = browser::dom_at(&chromium, &page, "#filter=small%20cpu-01");
    let shown: Vec<&str> =
        dom.with("data-node-state", None).filter(|e| !e.has("hidden")).filter_map(|e| e.get("data-node")).collect();
    assert_eq!(shown, ["a100-mig", "cpu-01"]);
    // Within a node shown, other models' GPUs are dimmed.
    let batch = dom.with("data-model", Some("batch-job")).next().unwrap();
    assert!(batch.get("class").unwrap().contains("dim"), "{batch:?}");
    assert!(dom.with("data-unplaced", Some("huge")).all(|e| e.has("hidden")));
}

#[test]
fn a_screenshot_is_a_picture_of_the_fleet() {
    let Some(chromium) = browser::chromium("a_screenshot_is_a_picture_of_the_fleet") else { return };
    let dir = tempfile::tempdir().unwrap();
    let inventory = root().join("examples/fleet.toml");
    let (_, page) = place_and_map(dir.path(), &root().join("catalog/fleet.toml"), &inventory);
    let (w, h, rgba) = browser::screenshot(&chromium, &page, 1280, 900);
    assert_eq!((w, h), (1280, 900));
    let colours: HashSet<[u8; 3]> = rgba.chunks(4).map(|p| [p[0], p[1], p[2]]).collect();
    assert!(colours.len() > 50, "a blank page: {} colours", colours.len());
    // Each model's colour, as the page's style gives it, is on screen:
    // the GPU cells are drawn, not only the text.
    let text = std::fs::read_to_string(&page).unwrap();
    let mut found = 0;
    for rule in text.lines().filter(|l| l.starts_with(".m") && l.contains("{--c:#")) {
        let hex = &rule[rule.find('#').unwrap() + 1..][..6];
        let rgb = [0, 2, 4].map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap());
        let pixels = rgba.chunks(4).filter(|p| p[..3] == rgb).count();
        found += usize::from(pixels > 100);
    }
    assert!(found >= 4, "only {found} model colours on screen");
}

/// `place --format html` draws the same fleet `map` draws from the plan.
#[test]
fn place_format_html_is_the_map_of_its_plan() {
    let dir = tempfile::tempdir().unwrap();
    let inventory = root().join("examples/fleet.toml");
    let (_, page) = place_and_map(dir.path(), &root().join("catalog/fleet.toml"), &inventory);
    let data = |html: &str| {
        let start = html.find("id=\"map-data\">").unwrap();
        html[start..start + html[start..].find("</script>").unwrap()].to_string()
    };
    let out = run(&["place", "catalog/fleet.toml", "-i", "examples/fleet.toml", "--format", "html"]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    assert_eq!(data(&stdout(&out)), data(&std::fs::read_to_string(&page).unwrap()));
    let html = dir.path().join("plan.html");
    let out = run(&["place", "catalog/fleet.toml", "-i", "examples/fleet.toml", "-o", html.to_str().unwrap()]);
    assert_eq!(code(&out), 1, "{}", transcript(&out));
    assert!(std::fs::read_to_string(&html).unwrap().starts_with("<!doctype html>"));
    let out = run(&["place", "catalog/fleet.toml", "-i", "examples/fleet.toml", "--format", "html", "-o", "x.json"]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    let out = run(&["map", "examples/fleet.toml", "-i", "examples/fleet.toml"]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
}

/// A plan made on another inventory is not drawn: its GPUs would be wrong.
#[test]
fn map_refuses_a_plan_the_inventory_no_longer_fits() {
    let dir = tempfile::tempdir().unwrap();
    let inventory = write(dir.path(), "fleet.toml", EVERY_STATE);
    let catalog = write(dir.path(), "catalog.toml", EVERY_STATE_CATALOG);
    let (_, _) = place_and_map(dir.path(), &catalog, &inventory);
    let changed = write(
        dir.path(),
        "changed.toml",
        &EVERY_STATE.replace("id = \"h100-01\"\nstate = \"ready\"", "id = \"h100-01\"\nstate = \"down\""),
    );
    let plan = dir.path().join("plan.json");
    let out = run(&["map", plan.to_str().unwrap(), "-i", changed.to_str().unwrap()]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(flat(&out.stderr).contains("h100-01 is down"), "{}", transcript(&out));
    assert!(out.stdout.is_empty());
}

/// docs/map.png is the map of the example plan; docs/map.png.sha256 the
/// sha256 of the page it was drawn from. The page is made again here
/// (no browser needed): a different page means the picture is stale.
/// `LLMGW_REGENERATE=1` (with LLMGW_CHROMIUM) draws it again.
#[test]
fn map_screenshot_in_the_docs() {
    use sha2::Digest as _;
    let dir = tempfile::tempdir().unwrap();
    let (_, page) = place_and_map(dir.path(), &root().join("catalog/fleet.toml"), &root().join("examples/fleet.toml"));
    let html = std::fs::read(&page).unwrap();
    let digest: String = sha2::Sha256::digest(&html).iter().map(|b| format!("{b:02x}")).collect();
    let (png, sum) = (root().join("docs/map.png"), root().join("docs/map.png.sha256"));
    if std::env::var("LLMGW_REGENERATE").is_ok_and(|v| v == "1") {
        let chromium = browser::chromium("map_screenshot_in_the_docs").expect("LLMGW_CHROMIUM to draw docs/map.png");
        let shot = dir.path().join("map.png");
        browser::run(&chromium, &page, &["--window-size=1280,900".into(), format!("--screenshot={}", shot.display())]);
        std::fs::copy(&shot, &png).unwrap();
        std::fs::write(&sum, format!("{digest}  map.example.html\n")).unwrap();
    }
    let recorded = std::fs::read_to_string(&sum).unwrap_or_default();
    assert_eq!(
        recorded.split_whitespace().next().unwrap_or(""),
        digest,
        "docs/map.png is not the map `llmgw map` draws now: run \
         LLMGW_CHROMIUM=$(.ci/chromium) LLMGW_REGENERATE=1 cargo test --test it map_screenshot_in_the_docs"
    );
    let (w, h, rgba) = browser::decode_png(&std::fs::read(&png).unwrap());
    assert_eq!((w, h), (1280, 900));
    assert!(rgba.chunks(4).map(|p| [p[0], p[1], p[2]]).collect::<HashSet<_>>().len() > 50, "docs/map.png is blank");
}
