//! SPEC 19, point 6: each bound pod's containers run exactly as the real
//! pod object holds them: the command and arguments the controllers put
//! there, the environment LeaderWorkerSet's webhook injected
//! (LWS_LEADER_ADDRESS, LWS_GROUP_SIZE, LWS_WORKER_INDEX), downward-API
//! fields resolved from the pod's real labels and metadata. They run under
//! the stand-in engines (tests/standins), each pod on an address of its
//! own, its DNS names (`<hostname>.<subdomain>.<namespace>`) in a hosts
//! file, as cluster DNS would give them. Every replica answers on its
//! serving pod's probe path.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::process::Command;

use super::apply::mixed_fleet;
use super::*;
use crate::serve::{Group, path_with_standins, python3, standins, wait_ok};

/// A downward-API field of a pod (`metadata.labels['k']`, `metadata.name`,
/// ...), as the kubelet resolves it.
fn field(pod: &Value, path: &str) -> String {
    let m = &pod["metadata"];
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    if let Some(key) = path.strip_prefix("metadata.labels['").and_then(|k| k.strip_suffix("']")) {
        return text(&m["labels"][key]);
    }
    if let Some(key) = path.strip_prefix("metadata.annotations['").and_then(|k| k.strip_suffix("']")) {
        return text(&m["annotations"][key]);
    }
    match path {
        "metadata.name" => text(&m["name"]),
        "metadata.namespace" => text(&m["namespace"]),
        "metadata.uid" => text(&m["uid"]),
        "spec.nodeName" => text(&pod["spec"]["nodeName"]),
        "spec.serviceAccountName" => text(&pod["spec"]["serviceAccountName"]),
        other => panic!("a downward-API field the test does not resolve: {other}"),
    }
}

/// The container's environment as the kubelet would give it. A Secret the
/// test has not made is optional (render marks it so) and left out.
fn environment(pod: &Value, c: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in c["env"].as_array().into_iter().flatten() {
        let name = e["name"].as_str().unwrap().to_string();
        if let Some(v) = e["value"].as_str() {
            out.push((name, v.to_string()));
        } else if let Some(path) = e["valueFrom"]["fieldRef"]["fieldPath"].as_str() {
            out.push((name, field(pod, path)));
        } else {
            let secret = &e["valueFrom"]["secretKeyRef"];
            assert!(secret["optional"] == true, "{name}: a value the test cannot resolve: {e}");
        }
    }
    out
}

/// The names a pod is reached by: its name, and its DNS name when it has
/// a hostname and subdomain (StatefulSet pods, so LeaderWorkerSet's).
fn names(pod: &Value, ns: &str) -> Vec<String> {
    let mut out = vec![pod["metadata"]["name"].as_str().unwrap().to_string()];
    if let (Some(h), Some(s)) = (pod["spec"]["hostname"].as_str(), pod["spec"]["subdomain"].as_str()) {
        out.push(format!("{h}.{s}.{ns}"));
        out.push(format!("{h}.{s}.{ns}.svc"));
        out.push(format!("{h}.{s}.{ns}.svc.cluster.local"));
    }
    out
}

#[test]
fn every_bound_pod_runs_as_the_api_holds_it_and_every_replica_answers() {
    let Some(k) = kube() else { return };
    if !python3() {
        return;
    }
    let scope = Scope::new(k, "serve");
    let (nodes, pods) = mixed_fleet();
    scope.create(nodes, pods);
    let plan = super::apply::round(&scope, &[]);
    let d = scope.dir.path();
    let (state, log) = (d.join("standin-state"), d.join("standin-log"));
    std::fs::create_dir_all(&log).unwrap();
    let pods: Vec<Value> = scope.pods().into_iter().filter(|p| replica_of(p).is_some()).collect();
    let planned_pods: usize = planned(&plan).values().map(Vec::len).sum();
    assert_eq!(pods.len(), planned_pods);

    // Every pod an address of its own, its names in one hosts file.
    let mut hosts = String::new();
    let mut address = BTreeMap::new();
    for (i, p) in pods.iter().enumerate() {
        let addr = format!("127.77.{}.{}", i / 200, 1 + i % 200);
        let _ = writeln!(hosts, "{addr} {}", names(p, &scope.ns).join(" "));
        address.insert(p["metadata"]["name"].as_str().unwrap().to_string(), addr);
    }
    let hosts_file = write(d, "hosts", &hosts);

    let mut group = Group::default();
    for p in &pods {
        let name = p["metadata"]["name"].as_str().unwrap();
        let c = &p["spec"]["containers"][0];
        let words = |v: &Value| -> Vec<String> {
            v.as_array().into_iter().flatten().map(|w| w.as_str().unwrap().to_string()).collect()
        };
        let mut argv = words(&c["command"]);
        if argv.is_empty() {
            // No command: the image's entrypoint runs, llama.cpp's server.
            assert!(c["image"].as_str().unwrap().contains("llama.cpp"), "{name}: no command in {}", c["image"]);
            argv.push("llama-server".into());
        }
        argv.extend(words(&c["args"]));
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .env_clear()
            .env("HOME", d)
            .env("PATH", path_with_standins())
            .env("PYTHONPATH", standins().1)
            .env("STANDIN_HOSTS", &hosts_file)
            .env("STANDIN_STATE", &state)
            .env("STANDIN_LOG", &log)
            .env("STANDIN_NODE", name)
            .env("STANDIN_TIMEOUT", "90")
            .env("HOSTNAME", p["spec"]["hostname"].as_str().unwrap_or(name))
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(log.join(format!("{name}.err"))).unwrap());
        // What the device plugin gives a pod: its GPUs, numbered from 0.
        let gpus = c["resources"]["limits"]["nvidia.com/gpu"].as_str().and_then(|g| g.parse::<u32>().ok());
        if let Some(n) = gpus {
            let list: Vec<String> = (0..n).map(|g| g.to_string()).collect();
            cmd.env("NVIDIA_VISIBLE_DEVICES", list.join(","));
        }
        for (key, value) in environment(p, c) {
            cmd.env(key, value);
        }
        group.spawn(cmd);
    }

    // Every replica's serving pod answers its probe.
    let deadline = Instant::now() + Duration::from_secs(150);
    let mut answered = 0;
    for p in &pods {
        let c = &p["spec"]["containers"][0];
        let Some(port) = c["ports"][0]["containerPort"].as_u64() else { continue };
        let path = c["startupProbe"]["httpGet"]["path"].as_str().unwrap_or("/");
        let name = p["metadata"]["name"].as_str().unwrap();
        let addr = format!("{}:{port}", address[name]);
        if let Err(why) = wait_ok(&addr, path, deadline) {
            let mut logs = String::new();
            for f in std::fs::read_dir(&log).unwrap().flatten() {
                let _ = writeln!(
                    logs,
                    "== {}\n{}",
                    f.path().display(),
                    std::fs::read_to_string(f.path()).unwrap_or_default()
                );
            }
            panic!("{name} ({:?}): {why}\n{logs}", replica_of(p));
        }
        answered += 1;
    }
    let replicas = planned(&plan).len();
    assert_eq!(answered, replicas, "one serving pod a replica");
    // The ranks the multi-node engines really got, from the downward API:
    // every rank of each group once (leaders serve, the others join).
    let ranks = |engine: &str| -> std::collections::BTreeSet<(String, u64)> {
        std::fs::read_to_string(log.join(format!("{engine}.jsonl")))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|l| matches!(l["event"].as_str(), Some("serving" | "joined")))
            .filter(|l| l["nnodes"].as_u64().is_some_and(|n| n > 1))
            .map(|l| {
                (l["served_model_name"][0].as_str().unwrap_or_default().to_string(), l["node_rank"].as_u64().unwrap())
            })
            .collect()
    };
    let want = |m: &'static str, n: u64| (0..n).map(move |r| (m.to_string(), r));
    assert_eq!(ranks("sglang"), want("deepseek-v3", 3).collect(), "SGLang's ranks");
    assert_eq!(ranks("vllm"), want("llama-405b", 2).chain(want("qwen-72b", 4)).collect(), "vLLM's ranks");
}
