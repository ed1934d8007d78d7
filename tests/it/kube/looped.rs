//! SPEC 19, point 5: the loop on the real API server. What render wrote and
//! the scheduler bound, read back with kubectl and imported, is every
//! replica already running: `place` places nothing new. `render --stop`
//! names what to delete for the replicas the next plan drops; once deleted
//! (and the pods' deletion confirmed, as a kubelet would), `place` places
//! those replicas again, and they bind.

use super::apply::{CATALOG, mixed_fleet};
use super::*;

/// Runs the `kubectl delete` lines `--stop` printed, then confirms the
/// deletion of the pods left terminating (there is no kubelet to do it).
fn stop(scope: &Scope, lines: &str) {
    for line in lines.lines().filter(|l| !l.trim().is_empty()) {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[..2], ["kubectl", "delete"], "{line}");
        let mut args = words[1..].to_vec();
        if !args.contains(&"-n") {
            args.extend(["-n", scope.ns.as_str()]);
        }
        args.push("--wait=false");
        scope.kube.ok(&args);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let pods = scope.pods();
        let terminating: Vec<&str> = pods
            .iter()
            .filter(|p| p["metadata"]["deletionTimestamp"].is_string())
            .map(|p| p["metadata"]["name"].as_str().unwrap())
            .collect();
        for p in &terminating {
            scope.kube.run(&["delete", "pod", p, "-n", &scope.ns, "--grace-period=0", "--force"], None);
        }
        // Done when no pod of a stopped workload is left: the garbage
        // collector has deleted every pod whose owner went.
        let orphans = pods.iter().any(|p| {
            p["metadata"]["ownerReferences"].as_array().is_some_and(|o| !o.is_empty())
                && scope
                    .kube
                    .run(&["get", "pod", p["metadata"]["name"].as_str().unwrap(), "-n", &scope.ns], None)
                    .status
                    .success()
                && owner_gone(scope, p)
        });
        if terminating.is_empty() && !orphans {
            return;
        }
        assert!(Instant::now() < deadline, "pods of stopped replicas stay: {}", scope.describe());
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn owner_gone(scope: &Scope, pod: &Value) -> bool {
    let o = &pod["metadata"]["ownerReferences"][0];
    let kind = o["kind"].as_str().unwrap().to_lowercase();
    let name = o["name"].as_str().unwrap();
    !scope.kube.run(&["get", &format!("{kind}/{name}"), "-n", &scope.ns], None).status.success()
}

#[test]
fn the_loop_on_a_real_api_server_places_nothing_new_then_replaces_what_stopped() {
    let Some(k) = kube() else { return };
    let scope = Scope::new(k, "loop");
    let (nodes, pods) = mixed_fleet();
    scope.create(nodes, pods);
    let d = scope.dir.path();
    let catalog = root().join(CATALOG);

    // Turn 1: placed, rendered, applied, bound.
    let fleet = scope.import(false, &[]);
    let (old_file, old) = place(d, &catalog, &fleet, &[]);
    let out_dir = render(&scope, &old_file, &catalog, &fleet, &[]);
    assert_bound_as_planned(&scope, &out_dir, &old);
    let wanted = old["summary"]["wanted"].as_u64().unwrap();
    let placed = old["summary"]["placed"].as_u64().unwrap();

    // Turn 2: the cluster as kubectl prints it is every replica running.
    let fleet = scope.import(false, &[]);
    let (again_file, again) = place(d, &catalog, &fleet, &[]);
    assert_eq!(again["summary"]["placed"], 0, "placed again what runs: {again:#}");
    assert_eq!(again["summary"]["existing"], placed, "{again:#}");
    assert_eq!(wanted - placed, again["summary"]["unplaced"].as_u64().unwrap());
    // Rendering that plan changes nothing the API holds.
    let rerendered = render(&scope, &again_file, &catalog, &fleet, &[]);
    let out = scope.kube.run(
        &["diff", "--server-side", "--field-manager=llmgw-test", "-n", &scope.ns, "-f", rerendered.to_str().unwrap()],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "the next turn's render differs from what runs: {}", transcript(&out));

    // Turn 3: a catalog with one replica fewer of qwen-7b and no GGUF
    // model; --stop names what to delete, and it is deleted.
    let text = std::fs::read_to_string(&catalog).unwrap();
    let smaller = text.replacen("replicas = 3", "replicas = 2", 1);
    let cut = smaller.find("[[model]]\nname = \"qwen-gguf\"").unwrap();
    let smaller_catalog = write(d, "smaller.toml", &smaller[..cut]);
    let (new_file, new) = place(d, &smaller_catalog, &fleet, &[]);
    assert_eq!(new["summary"]["placed"], 0, "{new:#}");
    let out = run(&["render", "kubernetes", "--stop", old_file.to_str().unwrap(), new_file.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let lines = stdout(&out);
    for stopped in ["deployment/llmgw-qwen-7b-r2", "deployment/llmgw-qwen-gguf-r0", "deployment/llmgw-qwen-gguf-r1"] {
        assert!(lines.contains(stopped), "{stopped} not named:\n{}", transcript(&out));
    }
    stop(&scope, &lines);
    let left: Vec<(String, u64)> = scope.pods().iter().filter_map(replica_of).collect();
    for gone in [("qwen-7b".to_string(), 2), ("qwen-gguf".to_string(), 0), ("qwen-gguf".to_string(), 1)] {
        assert!(!left.contains(&gone), "{gone:?} still has pods: {left:?}");
    }

    // Turn 4: the first catalog again places exactly what was stopped, and
    // it binds where planned.
    let fleet = scope.import(false, &[]);
    let (back_file, back) = place(d, &catalog, &fleet, &[]);
    let mut again: Vec<(String, u64)> = back["placements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["model"].as_str().unwrap().to_string(), p["replica"].as_u64().unwrap()))
        .collect();
    again.sort();
    assert_eq!(
        again,
        [("qwen-7b".to_string(), 2), ("qwen-gguf".to_string(), 0), ("qwen-gguf".to_string(), 1)],
        "{back:#}"
    );
    let out_dir = render(&scope, &back_file, &catalog, &fleet, &[]);
    assert_bound_as_planned(&scope, &out_dir, &back);
}
