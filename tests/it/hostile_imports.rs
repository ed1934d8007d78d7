//! Issue 18's defects, one test each, named after what it pins: what real
//! clusters print that the importers got wrong, and hostile input that
//! made them panic, abort or run away. Each runs the real binary; the
//! bounded ones assert on what comes out (exit code, sizes), not on time.

use std::io::Write as _;
use std::process::{Output, Stdio};

use serde_json::{Value, json};

use crate::common::*;

fn kube(args: &[&str]) -> Output {
    let mut a = vec!["inventory", "import", "kubernetes"];
    a.extend_from_slice(args);
    run(&a)
}

fn slurm(args: &[&str]) -> Output {
    let mut a = vec!["inventory", "import", "slurm"];
    a.extend_from_slice(args);
    run(&a)
}

/// Runs llmgw with `input` on standard input.
fn with_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child =
        llmgw().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

fn node(name: &str, labels: Value, capacity: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
           "status": {"capacity": capacity, "allocatable": capacity, "conditions": [{"type": "Ready", "status": "True"}]}})
}

fn list(items: Vec<Value>) -> String {
    json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string()
}

fn err(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Exit 2, the diagnostic code, a span in `file`, nothing written.
fn refused(out: &Output, code_str: &str, file: &str) {
    assert_eq!(code(out), 2, "{}", transcript(out));
    let e = err(out);
    assert!(e.contains(code_str), "{e}");
    assert!(e.contains(&format!("{file}:")), "no span in {file}: {e}");
    assert!(out.stdout.is_empty());
}

// ------------------------------------------------------------- Kubernetes

#[test]
fn a_time_sliced_product_with_a_mig_label_does_not_panic() {
    let dir = tempfile::tempdir().unwrap();
    let labels = json!({"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-SHARED", "nvidia.com/gpu.replicas": "4",
                        "nvidia.com/mig-1g.10gb.count": "2"});
    let f = write(dir.path(), "n.json", &list(vec![node("n1", labels, json!({"nvidia.com/gpu": "1"}))]));
    let out = kube(&[f.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let v = json(&out);
    assert_eq!(v["node"][0]["gpu"][0]["mig_device"].as_array().unwrap().len(), 2);
}

#[test]
fn a_gpu_count_of_two_to_the_32_is_refused_at_its_label() {
    let dir = tempfile::tempdir().unwrap();
    let labels = json!({"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "4294967296",
                        "nvidia.com/mig-1g.10gb.count": "1"});
    let f = write(dir.path(), "n.json", &list(vec![node("n1", labels, json!({}))]));
    refused(&kube(&[f.to_str().unwrap()]), "llmgw::import::too-many-gpus", "n.json");
}

#[test]
fn a_gpu_capacity_of_1e18_is_refused_at_its_resource() {
    let dir = tempfile::tempdir().unwrap();
    let labels = json!({"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"});
    let f = write(dir.path(), "n.json", &list(vec![node("n1", labels, json!({"nvidia.com/gpu": "1e18"}))]));
    refused(&kube(&[f.to_str().unwrap()]), "llmgw::import::too-many-gpus", "n.json");
}

#[test]
fn a_gpu_count_of_ten_million_is_refused_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let labels = json!({"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "10000000"});
    let f = write(dir.path(), "n.json", &list(vec![node("n1", labels, json!({}))]));
    refused(&kube(&[f.to_str().unwrap()]), "llmgw::import::too-many-gpus", "n.json");
    // 1024 is the most a node may have, and imports.
    let labels = json!({"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "1024"});
    let f = write(dir.path(), "ok.json", &list(vec![node("n1", labels, json!({}))]));
    assert_eq!(
        json(&kube(&[f.to_str().unwrap(), "--format", "json"]))["node"][0]["gpu"].as_array().unwrap().len(),
        1024
    );
}

#[test]
fn more_than_seven_mig_devices_on_a_gpu_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let labels = json!({"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "1",
                        "nvidia.com/mig.strategy": "mixed"});
    let f = write(dir.path(), "n.json", &list(vec![node("n1", labels, json!({"nvidia.com/mig-1g.10gb": "8"}))]));
    refused(&kube(&[f.to_str().unwrap()]), "llmgw::import::too-many-gpus", "n.json");
}

#[test]
fn a_list_of_millions_of_empty_items_stops_at_a_hundred_problems() {
    // 4 MB of `{}` items: every one lacks a name. The import keeps 100
    // problems and stops; the report stays small.
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{{\"kind\":\"List\",\"items\":[{}]}}", vec!["{}"; 1_300_000].join(","));
    let f = write(dir.path(), "empty-items.json", &text);
    let out = kube(&[f.to_str().unwrap()]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(err(&out).contains("llmgw::import::too-many-problems"), "{}", err(&out));
    assert!(out.stderr.len() < 200_000, "{} bytes of diagnostics", out.stderr.len());
}

#[test]
fn memory_of_1e300_is_refused_at_its_quantity() {
    let dir = tempfile::tempdir().unwrap();
    let n = json!({"kind": "Node", "metadata": {"name": "n1"}, "status": {"capacity": {"memory": "1e300"}}});
    let f = write(dir.path(), "n.json", &list(vec![n]));
    refused(&kube(&[f.to_str().unwrap()]), "llmgw::schema::out-of-range", "n.json");
}

#[test]
fn unquoted_yaml_label_values_read_as_the_strings_they_spell() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: n1\n    labels:\n      nvidia.com/cuda.driver.rev: 08\n      nvidia.com/gpu.present: true\n      nvidia.com/cuda.runtime.version: 1.0\n      nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n      nvidia.com/gpu.count: 8\n  status:\n    allocatable:\n      cpu: 95500m\n      nvidia.com/gpu: 8\n    conditions:\n    - type: Ready\n      status: \"True\"\n";
    let f = write(dir.path(), "n.yaml", yaml);
    let out = kube(&[f.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let v = json(&out);
    let labels = &v["node"][0]["labels"];
    assert_eq!(labels["nvidia.com/cuda.driver.rev"], "08");
    assert_eq!(labels["nvidia.com/gpu.present"], "true");
    assert_eq!(labels["nvidia.com/cuda.runtime.version"], "1.0");
    assert_eq!(v["node"][0]["gpu"].as_array().unwrap().len(), 8);
    // Fractional CPUs are kept, as the scheduler counts them (whole CPUs
    // are a replica's request, not the node's size).
    assert_eq!(v["node"][0]["cpus"], 95.5);
}

#[test]
fn mixed_mig_devices_take_their_memory_from_the_memory_labels() {
    let dir = tempfile::tempdir().unwrap();
    let labels = json!({"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "1",
        "nvidia.com/mig.strategy": "mixed", "nvidia.com/mig-3g.40gb.count": "2", "nvidia.com/mig-3g.40gb.memory": "40192"});
    let f = write(dir.path(), "n.json", &list(vec![node("n1", labels, json!({"nvidia.com/mig-3g.40gb": "2"}))]));
    let v = json(&kube(&[f.to_str().unwrap(), "--format", "json"]));
    let devices = v["node"][0]["gpu"][0]["mig_device"].as_array().unwrap().clone();
    assert_eq!(devices.len(), 2);
    assert!(devices.iter().all(|d| d["memory_mb"] == 40192), "{devices:?}");
}

#[test]
fn mig_resources_only_in_capacity_are_devices_not_a_cpu_node() {
    let dir = tempfile::tempdir().unwrap();
    let labels = json!({"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/mig.strategy": "mixed"});
    let f = write(dir.path(), "n.json", &list(vec![node("n1", labels, json!({"nvidia.com/mig-1g.10gb": "7"}))]));
    let out = kube(&[f.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert!(err(&out).contains("llmgw::kubernetes::mig-resources"), "{}", err(&out));
    let v = json(&out);
    assert_eq!(v["node"][0]["gpu"].as_array().unwrap().len(), 1);
    assert_eq!(v["node"][0]["gpu"][0]["mig_device"].as_array().unwrap().len(), 7);
}

#[test]
fn a_gfd_label_naming_another_profile_is_warned_and_the_resources_win() {
    let dir = tempfile::tempdir().unwrap();
    let labels = json!({"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "1",
        "nvidia.com/mig.strategy": "mixed", "nvidia.com/mig-1g.10gb.count": "7"});
    let f = write(dir.path(), "n.json", &list(vec![node("n1", labels, json!({"nvidia.com/mig-2g.20gb": "3"}))]));
    let out = kube(&[f.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert!(err(&out).contains("llmgw::kubernetes::mig-resources"), "{}", err(&out));
    let v = json(&out);
    let devices = v["node"][0]["gpu"][0]["mig_device"].as_array().unwrap().clone();
    assert_eq!(devices.len(), 3);
    assert!(devices.iter().all(|d| d["profile"] == "2g.20gb"));
}

#[test]
fn an_empty_node_list_on_stdin_is_refused() {
    for args in [["inventory", "import", "kubernetes", "-"], ["inventory", "import", "slurm", "-"]] {
        for input in [&b""[..], b"  \n\n"] {
            let out = with_stdin(&args, input);
            assert_eq!(code(&out), 2, "{args:?}: {}", transcript(&out));
            assert!(err(&out).contains("llmgw::import::empty-input"), "{}", err(&out));
            assert!(out.stdout.is_empty());
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "none.json", "{\"kind\": \"List\", \"items\": []}");
    refused(&kube(&[f.to_str().unwrap()]), "llmgw::import::empty-input", "none.json");
}

#[test]
fn a_node_id_with_a_control_character_is_refused_at_import() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "n.json", &list(vec![node("n1\u{1b}[2J", json!({}), json!({}))]));
    refused(&kube(&[f.to_str().unwrap()]), "llmgw::schema::control-character", "n.json");
    let f = write(dir.path(), "n.txt", "NodeName=a\u{7}b State=IDLE\n");
    refused(&slurm(&[f.to_str().unwrap()]), "llmgw::schema::control-character", "n.txt");
}

/// Two nodes: `n1` with 4 whole GPUs, `m1` with one A100 cut in seven 1g.10gb.
fn two_nodes(dir: &std::path::Path) -> std::path::PathBuf {
    let h = json!({"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "4"});
    let m = json!({"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "1", "nvidia.com/mig.strategy": "mixed"});
    let text = list(vec![
        node("n1", h, json!({"nvidia.com/gpu": "4", "cpu": "64"})),
        node("m1", m, json!({"nvidia.com/mig-1g.10gb": "7"})),
    ]);
    write(dir, "nodes.json", &text)
}

fn pod(name: &str, on: &str, limits: Value, annotations: Value, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "ns", "annotations": annotations, "labels": labels},
           "spec": {"nodeName": on, "containers": [{"name": "c", "resources": {"limits": limits}}]},
           "status": {"phase": "Running"}})
}

#[test]
fn pod_annotations_that_cannot_be_true_are_refused_with_their_span() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = two_nodes(dir.path());
    let gpus = |n: &str, a: &str| pod("p", "n1", json!({"nvidia.com/gpu": n}), json!({"llmgw.io/gpus": a}), json!({}));
    let mig =
        |a: &str| pod("p", "m1", json!({"nvidia.com/mig-1g.10gb": "1"}), json!({"llmgw.io/mig-devices": a}), json!({}));
    for (name, p) in [
        ("minus-one.json", gpus("4", "n1=-1")),
        ("words.json", gpus("4", "n1=zero,one")),
        ("twice.json", gpus("2", "n1=3,3")),
        ("lacks.json", gpus("1", "n1=9")),
        ("fewer.json", gpus("4", "n1=0,1")),
        ("no-equals.json", gpus("1", "n1")),
        ("mig-lacks.json", mig("m1=7:99")),
        ("mig-words.json", mig("m1=zero")),
        (
            "mig-twice.json",
            pod(
                "p",
                "m1",
                json!({"nvidia.com/mig-1g.10gb": "2"}),
                json!({"llmgw.io/mig-devices": "m1=0:1,0:1"}),
                json!({}),
            ),
        ),
    ] {
        let f = write(dir.path(), name, &list(vec![p]));
        let out = kube(&[nodes.to_str().unwrap(), "--pods", f.to_str().unwrap()]);
        refused(&out, "llmgw::kubernetes::gpus-annotation", name);
    }
}

#[test]
fn pods_holding_more_than_the_node_has_are_warned_and_the_later_hold_what_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = two_nodes(dir.path());
    let pods = list(vec![
        pod("a", "n1", json!({"nvidia.com/gpu": "3"}), json!({"llmgw.io/gpus": "n1=0,1,2"}), json!({})),
        pod("b", "n1", json!({"nvidia.com/gpu": "2"}), json!({"llmgw.io/gpus": "n1=2,3"}), json!({})),
        pod("c", "n1", json!({"nvidia.com/gpu": "1"}), json!({}), json!({})),
    ]);
    let f = write(dir.path(), "pods.json", &pods);
    let out = kube(&[nodes.to_str().unwrap(), "--pods", f.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert!(err(&out).contains("llmgw::import::over-subscribed"), "{}", err(&out));
    let v = json(&out);
    let n1 = v["node"].as_array().unwrap().iter().find(|n| n["id"] == "n1").unwrap().clone();
    let held: Vec<(String, Value)> = n1["allocation"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["model"].as_str().unwrap().to_string(), a["gpus"].clone()))
        .collect();
    assert_eq!(held, [("pod:ns/a".to_string(), json!([0, 1, 2])), ("pod:ns/b".to_string(), json!([3]))]);
}

#[test]
fn pods_give_their_cpus_and_llmgw_pods_their_profile() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = two_nodes(dir.path());
    let mut p = pod(
        "llmgw-m-r1",
        "n1",
        json!({"nvidia.com/gpu": "2", "cpu": "8"}),
        json!({"llmgw.io/gpus": "n1=2,3", "llmgw.io/model": "org/m"}),
        json!({"llmgw.io/model": "org-m", "llmgw.io/replica": "1", "llmgw.io/profile": "tp2"}),
    );
    p["spec"]["containers"][0]["resources"]["requests"] = json!({"cpu": "7500m"});
    let cpu = pod("web", "n1", json!({"cpu": "2"}), json!({}), json!({}));
    let cpu_replica =
        pod("llmgw-small-r0", "n1", json!({}), json!({}), json!({"llmgw.io/model": "small", "llmgw.io/replica": "0"}));
    let f = write(dir.path(), "pods.json", &list(vec![p, cpu, cpu_replica]));
    let out = kube(&[nodes.to_str().unwrap(), "--pods", f.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let v = json(&out);
    let n1 = v["node"].as_array().unwrap().iter().find(|n| n["id"] == "n1").unwrap().clone();
    assert_eq!(n1["cpus"], 64);
    let by = |m: &str| n1["allocation"].as_array().unwrap().iter().find(|a| a["model"] == m).unwrap().clone();
    let a = by("org/m");
    assert_eq!((a["replica"].clone(), a["profile"].clone(), a["cpus"].clone()), (json!(1), json!("tp2"), json!(7.5)));
    assert_eq!(a["gpus"], json!([2, 3]));
    assert_eq!(by("pod:ns/web")["cpus"], json!(2));
    assert_eq!(by("small")["gpus"], json!([]));
}

// ------------------------------------------------------------------ Slurm

const PLAIN: &str = "NodeName=gpu01 Arch=x86_64 CoresPerSocket=1
   CPUAlloc=1 CPUEfctv=2 CPUTot=2 CPULoad=0.19
   AvailableFeatures=ib-east
   ActiveFeatures=ib-east
   Gres=gpu:h100:8
   GresUsed=gpu:h100:2(IDX:0-1)
   OS=Linux 6.1.0-27-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.115-1 (2024-11-01)
   RealMemory=2000 AllocMem=2000 FreeMem=23618 Sockets=2 Boards=1
   State=MIXED ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A
   Partitions=gpu

NodeName=gpu02 CoresPerSocket=1
   CPUAlloc=0 CPUTot=2
   Gres=gpu:h100:8
   RealMemory=2000
   State=IDLE+DRAIN
   Partitions=gpu
";

#[test]
fn the_plain_multi_line_scontrol_show_node_imports_like_the_one_line_form() {
    let dir = tempfile::tempdir().unwrap();
    let plain = write(dir.path(), "plain.txt", PLAIN);
    let one_line: String =
        PLAIN.split("\n\n").map(|rec| rec.lines().map(str::trim).collect::<Vec<_>>().join(" ") + "\n").collect();
    let o = write(dir.path(), "o.txt", &one_line);
    let a = slurm(&[plain.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&a), 0, "{}", transcript(&a));
    assert_eq!(json(&a), json(&slurm(&[o.to_str().unwrap(), "--format", "json"])));
    let v = json(&a);
    assert_eq!(v["node"][0]["allocation"][0]["gpus"], json!([0, 1]));
    assert_eq!(v["node"][0]["cpus"], 2);
    assert_eq!(v["node"][1]["state"], "draining");
}

#[test]
fn cr_lf_and_crlf_line_ends_import_alike() {
    let dir = tempfile::tempdir().unwrap();
    let lf = "NodeName=gpu01 Gres=gpu:h100:8 State=IDLE\nNodeName=gpu02 Gres=gpu:h100:4 State=DOWN\n";
    let outs: Vec<Value> =
        [("lf.txt", lf.to_string()), ("crlf.txt", lf.replace('\n', "\r\n")), ("cr.txt", lf.replace('\n', "\r"))]
            .iter()
            .map(|(name, text)| {
                let f = write(dir.path(), name, text);
                let out = slurm(&[f.to_str().unwrap(), "--format", "json"]);
                assert_eq!(code(&out), 0, "{name}: {}", transcript(&out));
                json(&out)
            })
            .collect();
    assert_eq!(outs[0]["node"].as_array().unwrap().len(), 2);
    assert_eq!(outs[0], outs[1]);
    assert_eq!(outs[0], outs[2]);
    let plain = write(dir.path(), "plain-cr.txt", &PLAIN.replace('\n', "\r"));
    assert_eq!(json(&slurm(&[plain.to_str().unwrap(), "--format", "json"]))["node"].as_array().unwrap().len(), 2);
}

#[test]
fn a_slurm_node_without_a_state_is_refused_never_ready() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("absent.txt", "NodeName=a1 Gres=gpu:h100:8\n".to_string()),
        ("empty.txt", "NodeName=a1 Gres=gpu:h100:8 State=\n".to_string()),
        ("absent.json", json!({"nodes": [{"name": "a1", "gres": "gpu:h100:8"}]}).to_string()),
        ("empty-list.json", json!({"nodes": [{"name": "a1", "state": []}]}).to_string()),
    ] {
        let f = write(dir.path(), name, &text);
        refused(&slurm(&[f.to_str().unwrap()]), "llmgw::slurm::no-state", name);
    }
}

#[test]
fn a_mig_profile_gres_type_gives_mig_devices_not_whole_gpus() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "n.txt", "NodeName=a1 Gres=gpu:1g.10gb:21 State=IDLE\n");
    let out = slurm(&[f.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert!(err(&out).contains("llmgw::slurm::mig-gres"), "{}", err(&out));
    let v = json(&out);
    let gpus = v["node"][0]["gpu"].as_array().unwrap();
    assert_eq!(gpus.len(), 3);
    for g in gpus {
        assert_eq!((g["class"].clone(), g["mig"].clone()), (json!("mig-parent"), json!(true)));
        assert_eq!(g["mig_device"].as_array().unwrap().len(), 7);
    }
    assert_eq!(v["node"][0]["labels"]["slurm/mig-gres-type.1g.10gb"], "1g.10gb");
    // Beside whole GPUs of one product, the parents are that product, and
    // Slurm's indices of the MIG devices name them.
    let f = write(
        dir.path(),
        "mixed.txt",
        "NodeName=a2 Gres=gpu:nvidia_a100-sxm4-80gb:1,gpu:nvidia_a100_3g.39gb:2 GresUsed=gpu:nvidia_a100-sxm4-80gb:0(IDX:N/A),gpu:nvidia_a100_3g.39gb:1(IDX:2) State=MIXED\n",
    );
    let v = json(&slurm(&[f.to_str().unwrap(), "--format", "json"]));
    let g = &v["node"][0]["gpu"];
    assert_eq!((g[1]["name"].clone(), g[1]["mig"].clone()), (json!("nvidia_a100-sxm4-80gb"), json!(true)));
    assert_eq!(
        v["node"][0]["allocation"][0],
        json!({"model": "slurm:busy", "replica": 0, "gpus": [1], "mig_devices": [1]})
    );
}

#[test]
fn a_node_whose_cpus_are_all_allocated_holds_its_free_gpus() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "n.txt",
        "NodeName=a1 Gres=gpu:h100:8 GresUsed=gpu:h100:2(IDX:0-1) State=MIXED CPUTot=64 CPUAlloc=64\n",
    );
    let out = slurm(&[f.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert!(err(&out).contains("llmgw::slurm::cpus-full"), "{}", err(&out));
    let v = json(&out);
    let a = &v["node"][0]["allocation"];
    assert_eq!((a[0]["model"].clone(), a[0]["gpus"].clone()), (json!("slurm:busy"), json!([0, 1])));
    assert_eq!(a[0]["cpus"], 64, "what CPUAlloc says is allocated is held");
    assert_eq!((a[1]["model"].clone(), a[1]["gpus"].clone()), (json!("slurm:cpus-full"), json!([2, 3, 4, 5, 6, 7])));
    // JSON's `cpus` and `alloc_cpus` say the same.
    let j = json!({"nodes": [{"name": "a1", "state": ["MIXED"], "gres": "gpu:h100:2", "cpus": 8, "alloc_cpus": 8}]});
    let f = write(dir.path(), "n.json", &j.to_string());
    let v = json(&slurm(&[f.to_str().unwrap(), "--format", "json"]));
    let a = &v["node"][0]["allocation"];
    assert_eq!((a[0]["model"].clone(), a[0]["cpus"].clone()), (json!("slurm:busy"), json!(8)));
    assert_eq!((a[1]["model"].clone(), a[1]["gpus"].clone()), (json!("slurm:cpus-full"), json!([0, 1])));
}

const NODES: &str = "NodeName=gpu01 Gres=gpu:h100:8 State=IDLE\nNodeName=gpu02 Gres=gpu:h100:8 State=IDLE\nNodeName=gpu03 Gres=gpu:h100:8 State=IDLE\n";

#[test]
fn a_node_under_two_leaf_switches_is_in_both_fabrics_and_unmatched_names_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = write(dir.path(), "nodes.txt", NODES);
    let topo = write(
        dir.path(),
        "topology.conf",
        "SwitchName=leaf1 Nodes=gpu[01-02]\nSwitchName=leaf2 Nodes=gpu[02-03],gpu[90-99]\nSwitchName=a Switches=leaf1\nSwitchName=b Switches=leaf2,ghost\n",
    );
    let out = slurm(&[nodes.to_str().unwrap(), "--topology", topo.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let e = err(&out);
    assert!(e.contains("llmgw::slurm::two-switches") && e.contains("gpu02 (leaf1, leaf2)"), "{e}");
    assert!(
        e.contains("llmgw::slurm::unmatched-topology")
            && e.contains("10 node name(s)")
            && e.contains("1 switch name(s)"),
        "{e}"
    );
    assert_eq!(e.matches("unmatched-topology").count(), 1, "warned once: {e}");
    let v = json(&out);
    assert_eq!(v["node"][1]["fabric"], json!([{"name": "a"}, {"name": "b"}]));
}

#[test]
fn a_switch_cycle_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = write(dir.path(), "nodes.txt", NODES);
    let topo = write(
        dir.path(),
        "topology.conf",
        "SwitchName=a Switches=b Nodes=gpu01\nSwitchName=b Switches=a Nodes=gpu02\n",
    );
    refused(
        &slurm(&[nodes.to_str().unwrap(), "--topology", topo.to_str().unwrap()]),
        "llmgw::slurm::topology-cycle",
        "topology.conf",
    );
}

#[test]
fn a_small_topology_standing_for_millions_of_names_is_refused_before_expanding() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = write(dir.path(), "nodes.txt", NODES);
    // 4 KB: 120 switches of 100,000 names each.
    let text: String = (0..120).map(|i| format!("SwitchName=s{i} Nodes=n{i}-[0-99999]\n")).collect();
    let topo = write(dir.path(), "topology.conf", &text[..4096.min(text.len())]);
    refused(
        &slurm(&[nodes.to_str().unwrap(), "--topology", topo.to_str().unwrap()]),
        "llmgw::slurm::hostlist",
        "topology.conf",
    );
    // One bracket of 200 ranges, a million names each.
    let inner: Vec<String> = (0..200u64).map(|i| format!("{}-{}", i * 1_000_000, i * 1_000_000 + 999_999)).collect();
    let topo = write(dir.path(), "bracket.conf", &format!("SwitchName=s1 Nodes=n[{}]\n", inner.join(",")));
    refused(
        &slurm(&[nodes.to_str().unwrap(), "--topology", topo.to_str().unwrap()]),
        "llmgw::slurm::hostlist",
        "bracket.conf",
    );
}

#[test]
fn a_long_gres_line_of_many_entries_is_refused_not_two_million_gpus() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("NodeName=a1 State=IDLE Gres={}\n", vec!["gpu:h100:1000"; 2000].join(","));
    let f = write(dir.path(), "gres.txt", &text);
    refused(&slurm(&[f.to_str().unwrap()]), "llmgw::import::too-many-gpus", "gres.txt");
}
