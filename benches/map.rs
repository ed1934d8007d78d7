//! The map at 1,000 and 10,000 nodes of 8 GPUs (SPEC: at most 25 MB,
//! open in headless Chromium within 20 s): the page's size, how long
//! `map` takes, and how long Chromium takes to open it and draw it (a
//! screenshot) and to hand back its DOM once the script has run.
//!
//!     LLMGW_CHROMIUM=$(.ci/chromium) cargo bench --bench map
//!     cargo bench --bench map -- 50000     # any size
//!
//! Without LLMGW_CHROMIUM only the page is made and measured.

mod common;

use std::process::Command;
use std::time::Instant;

use common::measure::measure;

fn main() {
    let sizes: Vec<u32> = {
        let given: Vec<u32> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
        if given.is_empty() { vec![1_000, 10_000] } else { given }
    };
    let chromium = std::env::var_os("LLMGW_CHROMIUM").filter(|v| !v.is_empty());
    if chromium.is_none() {
        println!("LLMGW_CHROMIUM is not set (`.ci/chromium` installs Chromium): the page is measured, not opened");
    }
    for nodes in sizes {
        let dir = tempfile::tempdir().expect("temp dir");
        let cat = dir.path().join("catalog.toml");
        std::fs::write(&cat, common::catalog(common::models_for(nodes))).unwrap();
        let inv = dir.path().join("fleet.json");
        std::fs::write(&inv, llmgw::output::render_inventory(&common::fleet(nodes), llmgw::doc::Format::Json).unwrap())
            .unwrap();
        let plan = dir.path().join("plan.json");
        let page = dir.path().join("map.html");
        let (cat, inv, plan_s, page_s) =
            (cat.to_str().unwrap(), inv.to_str().unwrap(), plan.to_str().unwrap(), page.to_str().unwrap());
        println!("\n{nodes} nodes:");
        let status = Command::new(env!("CARGO_BIN_EXE_llmgw")).args(["place", cat, "-i", inv, "-o", plan_s]).status();
        assert!(status.is_ok_and(|s| s.code().is_some_and(|c| c <= 1)), "place failed");
        measure(&["map", plan_s, "-i", inv, "-o", page_s], "map");
        let size = std::fs::metadata(&page).unwrap().len();
        println!("  page: {:.2} MB ({size} bytes)", size as f64 / 1e6);
        let Some(chromium) = &chromium else { continue };
        for (what, flags) in [
            (
                "open and draw (--screenshot, 1280x900)",
                vec!["--window-size=1280,900".to_string(), format!("--screenshot={}/shot.png", dir.path().display())],
            ),
            ("open and hand back the DOM (--dump-dom)", vec!["--dump-dom".to_string()]),
        ] {
            let profile = tempfile::tempdir().unwrap();
            let start = Instant::now();
            let out = Command::new(chromium)
                .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"])
                .args(["--disable-background-networking", "--disable-component-update", "--disable-sync"])
                .arg(format!("--user-data-dir={}", profile.path().display()))
                .args(&flags)
                .arg(format!("file://{}", page.display()))
                .output()
                .expect("chromium runs");
            let wall = start.elapsed().as_secs_f64();
            let dom = String::from_utf8_lossy(&out.stdout);
            let drawn = dom
                .split("data-drawn-ms=\"")
                .nth(1)
                .and_then(|s| s.split('"').next())
                .map(|ms| format!(", the script drew it in {ms} ms"))
                .unwrap_or_default();
            let cells = if dom.is_empty() {
                String::new()
            } else {
                format!(", {} GPU cells", dom.matches(" data-gpu=\"").count())
            };
            println!("  chromium, {what}: {wall:.2} s wall{drawn}{cells}");
        }
    }
}
