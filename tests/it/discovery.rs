//! Discovery on fake machines: sysfs/procfs trees in temp dirs, a fake GPU
//! source, a fake PATH. Nothing here reads the machine the tests run on.

use crate::common::*;

use std::path::{Path, PathBuf};
use std::time::Duration;

use llmgw::discovery::gpu::{GpuFacts, GpuSource};
use llmgw::discovery::{Machine, NodeConfig, discover};

struct Fixed(Result<Vec<GpuFacts>, String>);

impl GpuSource for Fixed {
    fn gpus(&self) -> Result<Vec<GpuFacts>, String> {
        self.0.clone()
    }
}

fn fake_statvfs(_: &Path) -> Option<(u64, u64)> {
    Some((1_200_000_000_000, 2_000_000_000_000))
}

fn machine(root: &Path, gpus: Result<Vec<GpuFacts>, String>, config: NodeConfig, path: Option<&Path>) -> Machine {
    Machine {
        root: root.to_path_buf(),
        path: Some(path.map_or_else(|| root.join("empty-path").into_os_string(), |p| p.as_os_str().to_owned())),
        gpus: Box::new(Fixed(gpus)),
        config,
        probe_timeout: Duration::from_secs(5),
        statvfs: fake_statvfs,
    }
}

fn toml_of(node: llmgw::inventory::Node) -> String {
    let inv = llmgw::inventory::Inventory { nodes: vec![node] };
    llmgw::output::render_inventory(&inv, llmgw::doc::Format::Toml).unwrap()
}

fn ib_port(root: &Path, dev: &str, port: u32, state: &str, layer: &str, gid: &str, sm_lid: &str) {
    let d = format!("sys/class/infiniband/{dev}/ports/{port}");
    write(root, &format!("{d}/state"), &format!("{state}\n"));
    write(root, &format!("{d}/link_layer"), &format!("{layer}\n"));
    write(root, &format!("{d}/rate"), "400 Gb/sec (4X NDR)\n");
    write(root, &format!("{d}/gids/0"), &format!("{gid}\n"));
    write(root, &format!("{d}/sm_lid"), &format!("{sm_lid}\n"));
}

#[test]
fn dgx_h100_like_node() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "proc/meminfo", "MemTotal:       2113470464 kB\nMemFree:        2000000000 kB\n");
    write(root, "proc/sys/kernel/hostname", "dgx-h100-a01\n");
    // Four NVSwitches, each a PCI device of class 0x068000.
    let switches = ["0000:05:00.0", "0000:06:00.0", "0000:07:00.0", "0000:08:00.0"];
    for s in switches {
        write(root, &format!("sys/bus/pci/devices/{s}/class"), "0x068000\n");
    }
    let bus = ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"];
    let gpus: Vec<GpuFacts> = (0..8)
        .map(|i| GpuFacts {
            index: i,
            name: "NVIDIA H100 80GB HBM3".into(),
            memory_mb: 81559,
            uuid: Some(format!("GPU-5e0c1a2b-0000-4000-8000-00000000000{i}")),
            pci_bus_id: Some(format!("00000000:{}:00.0", bus[i as usize].to_uppercase())),
            mig: Some(false),
            // 18 links, spread over the switches, as NVML reports them.
            active_links: (0..18).map(|l| format!("00000000:{}", &switches[l % 4][5..].to_uppercase())).collect(),
            mig_devices: Vec::new(),
            fabric: None,
        })
        .collect();
    // Eight compute HCAs on one fabric (a non-default subnet prefix), two
    // storage ports on RoCE, one compute port down.
    for i in 0..8 {
        ib_port(
            root,
            &format!("mlx5_{i}"),
            1,
            "4: ACTIVE",
            "InfiniBand",
            "fe80:0000:0000:0001:a088:c203:00ab:cd0{i}",
            "0x1",
        );
    }
    ib_port(root, "mlx5_8", 1, "4: ACTIVE", "Ethernet", "fe80:0000:0000:0000:0000:0000:0000:0001", "0x0");
    ib_port(root, "mlx5_9", 1, "4: ACTIVE", "Ethernet", "fe80:0000:0000:0000:0000:0000:0000:0002", "0x0");
    ib_port(root, "mlx5_10", 1, "1: DOWN", "InfiniBand", "fe80:0000:0000:0001:0000:0000:0000:0003", "0x1");
    // Model dirs: a Hugging Face cache, a plain safetensors folder, a GGUF.
    let models = root.join("models");
    std::fs::create_dir_all(models.join("hub/models--meta-llama--Llama-3.1-70B-Instruct/snapshots/abc")).unwrap();
    std::fs::create_dir_all(models.join("hub/models--gpt2")).unwrap();
    write(&models, "qwen/Qwen2.5-72B-Instruct/config.json", "{}");
    write(&models, "qwen/Qwen2.5-72B-Instruct/model-00001-of-00037.safetensors", "");
    write(&models, "gguf/llama-3.1-8b-instruct-q4_k_m.gguf", "");
    write(&models, "notes/readme.txt", "");
    let config = NodeConfig {
        labels: [("zone".to_string(), "a".to_string())].into(),
        model_dirs: vec![PathBuf::from("/models")],
        ..NodeConfig::default()
    };
    // vllm on PATH; nothing else, and no python3 for the SGLang probe.
    let bin = root.join("bin");
    executable(&bin.join("vllm"), "#!/bin/sh\ntouch \"$0.ran\"\nsleep 30\n");
    let (node, warnings) = discover(&machine(root, Ok(gpus), config, Some(&bin)));
    assert!(warnings.is_empty(), "{}", llmgw::report::diagnostics::render(&warnings, false));
    assert!(!bin.join("vllm.ran").exists(), "discovery ran vllm");
    insta::assert_snapshot!(toml_of(node));
}

#[test]
fn pcie_box_with_two_nvlink_pairs_and_no_hcas() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "proc/meminfo", "MemTotal:        528032768 kB\n");
    write(root, "proc/sys/kernel/hostname", "l40s-box\n");
    let bus = ["0000:17:00.0", "0000:31:00.0", "0000:b1:00.0", "0000:ca:00.0"];
    let pair = |i: usize| vec![bus[i ^ 1].to_string(), bus[i ^ 1].to_string()];
    let gpus: Vec<GpuFacts> = (0..4)
        .map(|i| GpuFacts {
            index: i as u32,
            name: "NVIDIA A100 80GB PCIe".into(),
            memory_mb: 81920,
            uuid: None,
            pci_bus_id: Some(bus[i].into()),
            mig: None,
            active_links: pair(i),
            mig_devices: Vec::new(),
            fabric: None,
        })
        .collect();
    let (node, warnings) = discover(&machine(root, Ok(gpus), NodeConfig::default(), None));
    assert!(warnings.is_empty());
    let peers: Vec<_> = node.gpus.iter().map(|g| g.nvlink_peers.clone()).collect();
    assert_eq!(peers, vec![vec![1], vec![0], vec![3], vec![2]]);
    assert!(node.fabrics.is_empty());
    // Discovery writes every list it looked for: no model dirs, no weights.
    assert_eq!(node.weights, Some(Vec::new()));
    assert_eq!(node.engines, Some(Default::default()));
    assert!(node.discovered_by.as_deref().is_some_and(|d| d.starts_with("llmgw ")));
    insta::assert_snapshot!(toml_of(node));
}

#[test]
fn mig_gpus_have_no_peers_and_invisible_remotes_mean_a_switch() {
    let dir = tempfile::tempdir().unwrap();
    let gpus = vec![
        GpuFacts {
            index: 0,
            name: "NVIDIA H100 80GB HBM3".into(),
            pci_bus_id: Some("0000:18:00.0".into()),
            mig: Some(true),
            active_links: vec!["FFFFFFFF:FF:FF.0".into()],
            ..GpuFacts::default()
        },
        GpuFacts {
            index: 1,
            name: "NVIDIA H100 80GB HBM3".into(),
            pci_bus_id: Some("0000:2a:00.0".into()),
            active_links: vec!["FFFFFFFF:FF:FF.0".into()],
            ..GpuFacts::default()
        },
        GpuFacts {
            index: 2,
            name: "NVIDIA H100 80GB HBM3".into(),
            pci_bus_id: Some("0000:3a:00.0".into()),
            active_links: vec!["ffffffff:ff:ff.0".into(), "0000:18:00.0".into()],
            ..GpuFacts::default()
        },
    ];
    let (node, _) = discover(&machine(dir.path(), Ok(gpus), NodeConfig::default(), None));
    let peers: Vec<_> = node.gpus.iter().map(|g| (g.mig, g.nvlink_peers.clone())).collect();
    assert_eq!(peers, vec![(Some(true), vec![]), (None, vec![2]), (None, vec![1])]);
}

#[test]
fn no_nvml_is_a_cpu_only_node_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let (node, warnings) = discover(&machine(
        dir.path(),
        Err("the NVML library (libnvidia-ml.so.1) is not installed".into()),
        NodeConfig::default(),
        None,
    ));
    assert!(node.gpus.is_empty());
    assert_eq!(node.id, "localhost");
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].message.contains("libnvidia-ml.so.1"), "{}", warnings[0].message);
}

#[test]
fn default_subnet_prefix_names_the_fabric_by_subnet_manager_and_warns() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    ib_port(root, "mlx5_0", 1, "4: ACTIVE", "InfiniBand", "fe80:0000:0000:0000:a088:c203:0000:0001", "0x2a");
    ib_port(root, "mlx5_1", 1, "4: ACTIVE", "InfiniBand", "fe80:0000:0000:0000:a088:c203:0000:0002", "0x2a");
    ib_port(root, "mlx5_2", 1, "4: ACTIVE", "Ethernet", "fe80:0000:0000:0000:0000:0000:0000:0003", "0x0");
    let (node, warnings) = discover(&machine(root, Ok(vec![]), NodeConfig::default(), None));
    assert_eq!(node.fabrics.len(), 1);
    assert_eq!(node.fabrics[0].name, "ib-sm42");
    assert_eq!(node.fabrics[0].hcas, Some(vec!["mlx5_0".to_string(), "mlx5_1".to_string()]));
    assert_eq!(warnings.len(), 1);
    // The config names fabrics, RoCE ones too, and silences the guess.
    let config = NodeConfig {
        fabrics: [
            ("ib-east".to_string(), vec!["mlx5_0".into(), "mlx5_1".into()]),
            ("roce-storage".into(), vec!["mlx5_2".into()]),
        ]
        .into(),
        ..NodeConfig::default()
    };
    let (node, warnings) = discover(&machine(root, Ok(vec![]), config, None));
    let names: Vec<_> = node.fabrics.iter().map(|f| (f.name.as_str(), f.hcas.as_ref().map_or(0, Vec::len))).collect();
    assert_eq!(names, vec![("ib-east", 2), ("roce-storage", 1)]);
    assert!(warnings.is_empty());
}

fn fake_python(dir: &Path, body: &str) -> PathBuf {
    let bin = dir.join("pybin");
    executable(&bin.join("python3"), &format!("#!/bin/sh\n{body}\n"));
    bin
}

#[test]
fn sglang_probe_exit_code_is_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let probe = |body: &str, timeout: Duration| {
        let bin = fake_python(root, body);
        let mut m = machine(root, Ok(vec![]), NodeConfig::default(), Some(&bin));
        m.probe_timeout = timeout;
        discover(&m)
    };
    let (node, w) = probe("exit 0", Duration::from_secs(5));
    assert!(node.engine_names().any(|e| e == "sglang") && w.is_empty());
    let (node, w) = probe("exit 1", Duration::from_secs(5));
    assert!(!node.engine_names().any(|e| e == "sglang") && w.is_empty());
    let start = std::time::Instant::now();
    let (node, w) = probe("/bin/sleep 30", Duration::from_millis(300));
    assert!(!node.engine_names().any(|e| e == "sglang"));
    assert_eq!(w.len(), 1, "a timed-out probe warns");
    assert!(start.elapsed() < Duration::from_secs(5));
    // The probe asks find_spec, not import.
    let (node, _) = probe("case \"$2\" in *find_spec*) exit 0;; *) exit 3;; esac", Duration::from_secs(5));
    assert!(node.engine_names().any(|e| e == "sglang"));
}

#[test]
fn discover_cli_finds_wrappers_without_running_them() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    let marker = dir.path().join("ran");
    for name in ["vllm", "llama-server"] {
        executable(&bin.join(name), &format!("#!/bin/sh\ntouch {}\nsleep 30\n", marker.display()));
    }
    let out = llmgw()
        .args(["discover", "--format", "json"])
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let v = json(&out);
    let engines = &v["node"][0]["engines"];
    assert_eq!(engines["vllm"], "");
    assert_eq!(engines["llama.cpp"], "");
    assert!(!marker.exists(), "discover executed an engine");
}

#[test]
fn discover_output_is_accepted_by_place_and_written_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let snapshot = dir.path().join("node.json");
    let out = run(&["discover", "-o", snapshot.to_str().unwrap()]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    assert!(std::fs::read_to_string(&snapshot).unwrap().trim_start().starts_with('{'), "-o .json writes JSON");
    let plan = run(&["place", "catalog/fleet.toml", "--inventory", snapshot.to_str().unwrap(), "--format", "json"]);
    assert!(matches!(code(&plan), 0 | 1), "{}", transcript(&plan));
    json(&plan);
    // And with no inventory at all, this machine is discovered live.
    let live = run(&["place", "catalog/fleet.toml", "--format", "json"]);
    assert!(matches!(code(&live), 0 | 1), "{}", transcript(&live));
    assert_eq!(json(&live)["summary"]["wanted"], 14);
}

#[test]
fn a_bad_node_config_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(dir.path(), "node.toml", "id = \"a\"\nmodel_dir = [\"/models\"]\n[engines]\nvlm = \"/opt/vllm\"\n");
    let out = run(&["discover", "--config", cfg.to_str().unwrap()]);
    assert_eq!(code(&out), 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("did you mean `model_dirs`?") && err.contains("did you mean `vllm`?"), "{err}");
}

#[test]
fn discover_cli_on_a_described_machine() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    write(&root, "proc/meminfo", "MemTotal:       1056964608 kB\n");
    write(&root, "proc/sys/kernel/hostname", "a100-07\n");
    write(&root, "sys/bus/pci/devices/0000:05:00.0/class", "0x068000\n");
    for i in 0..4 {
        ib_port(
            &root,
            &format!("mlx5_{i}"),
            1,
            "4: ACTIVE",
            "InfiniBand",
            "fe80:0000:0000:0007:0000:0000:0000:0001",
            "0x3",
        );
    }
    write(&root, "models/hub/models--Qwen--Qwen2.5-72B-Instruct/refs/main", "abc");
    write(&root, "models/hub/models--Qwen--Qwen2.5-72B-Instruct/snapshots/abc/config.json", "{}");
    let facts: Vec<String> = (0..4)
        .map(|i| {
            format!(
                "{{\"index\": {i}, \"name\": \"NVIDIA A100-SXM4-80GB\", \"memory_mb\": 81920, \"pci_bus_id\": \"00000000:{:02X}:00.0\", \"active_links\": [\"00000000:05:00.0\"]}}",
                0x10 + i
            )
        })
        .collect();
    let facts_file = write(dir.path(), "gpus.json", &format!("[{}]", facts.join(",")));
    write(&root, "etc/llmgw/node.toml", "labels = { zone = \"c\" }\nmodel_dirs = [\"/models\"]\n");
    let out = llmgw()
        .args([
            "discover",
            "--root",
            root.to_str().unwrap(),
            "--gpu-facts",
            facts_file.to_str().unwrap(),
            "--format",
            "json",
        ])
        .env("PATH", dir.path().join("nothing"))
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let node = &json(&out)["node"][0];
    assert_eq!(node["id"], "a100-07");
    assert_eq!(node["labels"]["zone"], "c");
    assert_eq!(node["memory_total_mb"], 1032192);
    // A Hugging Face cache entry says where its files are: the snapshot
    // refs/main names, on the node (not in the tree discover read).
    assert_eq!(
        node["weights"],
        serde_json::json!([{"source": "Qwen/Qwen2.5-72B-Instruct", "path": "/models/hub/models--Qwen--Qwen2.5-72B-Instruct/snapshots/abc"}])
    );
    assert_eq!(node["gpu"][2]["nvlink_peers"], serde_json::json!([0, 1, 3]));
    assert_eq!(
        node["fabric"][0],
        serde_json::json!({"name": "ib-fe80000000000007", "hcas": ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]})
    );
    assert!(node["disk"]["total_bytes"].as_u64().unwrap() > 0);
    assert!(out.stderr.is_empty(), "{}", transcript(&out));
}

#[test]
fn bad_gpu_facts_are_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let facts = write(dir.path(), "gpus.json", "[{\"index\": 0, \"nam\": \"x\"}]");
    let out = run(&["discover", "--gpu-facts", facts.to_str().unwrap()]);
    assert_eq!(code(&out), 2, "{}", transcript(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("gpus.json"));
}

#[test]
fn a_mig_a100_discovered_through_the_gpu_facts_seam() {
    let dir = tempfile::tempdir().unwrap();
    let facts = write(
        dir.path(),
        "gpus.json",
        r#"[{"index": 0, "name": "NVIDIA A100-SXM4-80GB", "memory_mb": 81920, "mig": true,
             "mig_devices": [{"index": 0, "profile": "3g.40gb", "memory_mb": 40192, "uuid": "MIG-aaaa"},
                             {"index": 1, "profile": "3g.40gb", "memory_mb": 40192, "uuid": "MIG-bbbb"}]},
            {"index": 1, "name": "NVIDIA A100-SXM4-80GB", "memory_mb": 81920}]"#,
    );
    let inv = dir.path().join("node.toml");
    let out = run(&[
        "discover",
        "--root",
        dir.path().to_str().unwrap(),
        "--gpu-facts",
        facts.to_str().unwrap(),
        "-o",
        inv.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 0, "{}", transcript(&out));
    let text = std::fs::read_to_string(&inv).unwrap();
    assert!(text.contains("mig = true") && text.contains("[[node.gpu.mig_device]]"), "{text}");
    assert!(text.contains("profile = \"3g.40gb\"") && text.contains("uuid = \"MIG-bbbb\""), "{text}");
    let out = run(&["nodes", "--inventory", inv.to_str().unwrap(), "--format", "json"]);
    let v = json(&out);
    assert_eq!(v["nodes"][0]["gpus"], serde_json::json!([{"class": "a100-sxm4-80gb", "free": 1, "total": 2}]));
    assert_eq!(
        v["nodes"][0]["mig"],
        serde_json::json!([{"class": "a100-sxm4-80gb", "profile": "3g.40gb", "free": 2, "total": 2}])
    );
    let out = run(&["nodes", "--inventory", inv.to_str().unwrap()]);
    assert!(stdout(&out).contains("a100-sxm4-80gb MIG 3g.40gb 2/2"), "{}", transcript(&out));
}

/// A PCI device at `path` under sys/devices ("pci0000:17/0000:17:01.0/..."),
/// linked from sys/bus/pci/devices/<bdf> as the kernel links it.
fn pci_device(root: &Path, path: &str) {
    let bdf = path.rsplit('/').next().unwrap();
    std::fs::create_dir_all(root.join("sys/devices").join(path)).unwrap();
    std::fs::create_dir_all(root.join("sys/bus/pci/devices")).unwrap();
    std::os::unix::fs::symlink(format!("../../../devices/{path}"), root.join("sys/bus/pci/devices").join(bdf)).unwrap();
}

/// An InfiniBand adapter whose PCI device is at `path`, with one active port.
fn hca(root: &Path, dev: &str, path: &str, prefix: &str) {
    pci_device(root, path);
    ib_port(root, dev, 1, "4: ACTIVE", "InfiniBand", &format!("{prefix}:0000:0000:0000:0001"), "1");
    std::os::unix::fs::symlink(
        format!("../../../devices/{path}"),
        root.join("sys/class/infiniband").join(dev).join("device"),
    )
    .unwrap();
}

fn gpu_at(index: u32, bus: &str) -> GpuFacts {
    GpuFacts {
        index,
        name: "NVIDIA H100 80GB HBM3".into(),
        memory_mb: 81559,
        // NVML's spelling: an 8-digit domain, upper case.
        pci_bus_id: Some(format!("0000{}", bus.to_uppercase())),
        ..GpuFacts::default()
    }
}

/// A DGX-like node: behind each root port a PCIe switch with a GPU and its
/// compute adapter; a storage adapter on a subnet of its own hangs off a
/// CPU root port.
fn dgx_like(root: &Path) -> Vec<GpuFacts> {
    let mut gpus = Vec::new();
    for (i, rc) in ["17", "38", "9a", "b8"].iter().enumerate() {
        let rc_n = u8::from_str_radix(rc, 16).unwrap();
        let (up, down) = (rc_n + 1, rc_n + 2);
        let switch = format!("pci0000:{rc}/0000:{rc}:01.0/0000:{up:02x}:00.0");
        let gpu = format!("0000:{:02x}:00.0", rc_n + 4);
        pci_device(root, &format!("{switch}/0000:{down:02x}:00.0/{gpu}"));
        hca(
            root,
            &format!("mlx5_{i}"),
            &format!("{switch}/0000:{down:02x}:01.0/0000:{:02x}:00.0", rc_n + 3),
            "fe80:0000:0000:0001",
        );
        gpus.push(gpu_at(i as u32, &gpu));
    }
    hca(root, "mlx5_8", "pci0000:00/0000:00:02.0/0000:01:00.0", "fe80:0000:0000:0002");
    gpus
}

#[test]
fn gpu_rails_on_a_dgx_like_node_leave_the_storage_port_out() {
    let dir = tempfile::tempdir().unwrap();
    let gpus = dgx_like(dir.path());
    let (node, warnings) = discover(&machine(dir.path(), Ok(gpus.clone()), NodeConfig::default(), None));
    let fabrics: Vec<_> = node.fabrics.iter().map(|f| (f.name.clone(), f.hcas.clone().unwrap())).collect();
    assert_eq!(
        fabrics,
        vec![(
            "ib-fe80000000000001".to_string(),
            vec!["mlx5_0".to_string(), "mlx5_1".into(), "mlx5_2".into(), "mlx5_3".into()]
        )]
    );
    let codes: Vec<_> = warnings.iter().map(|w| (w.code.as_str(), w.message.clone())).collect();
    assert!(
        codes.contains(&(
            "llmgw::discover::not-a-rail",
            "mlx5_8 left out of fabrics: no PCIe switch shared with a GPU".into()
        )),
        "{codes:?}"
    );
    // The node config can still name it.
    let config = NodeConfig {
        fabrics: [("storage".to_string(), vec!["mlx5_8".to_string()]), ("compute".into(), vec!["mlx5_0".into()])]
            .into(),
        ..NodeConfig::default()
    };
    let (node, warnings) = discover(&machine(dir.path(), Ok(gpus), config, None));
    let names: Vec<_> = node.fabrics.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["compute", "storage"]);
    assert!(warnings.iter().all(|w| w.code.as_str() != "llmgw::discover::not-a-rail"), "{warnings:?}");
}

#[test]
fn a_pcie_server_with_nics_off_the_cpu_keeps_every_port() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // The GPU and the adapters each behind their own root port: no switch.
    pci_device(root, "pci0000:00/0000:00:03.0/0000:03:00.0");
    hca(root, "mlx5_0", "pci0000:00/0000:00:02.0/0000:01:00.0", "fe80:0000:0000:0001");
    hca(root, "mlx5_1", "pci0000:40/0000:40:02.0/0000:41:00.0", "fe80:0000:0000:0002");
    let (node, warnings) = discover(&machine(root, Ok(vec![gpu_at(0, "0000:03:00.0")]), NodeConfig::default(), None));
    let names: Vec<_> = node.fabrics.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["ib-fe80000000000001", "ib-fe80000000000002"]);
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn a_container_whose_sysfs_shows_no_switches_keeps_every_port() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    pci_device(root, "pci0000:00/0000:00:04.0");
    hca(root, "mlx5_0", "pci0000:00/0000:00:05.0", "fe80:0000:0000:0001");
    let (node, warnings) = discover(&machine(root, Ok(vec![gpu_at(0, "0000:00:04.0")]), NodeConfig::default(), None));
    assert_eq!(node.fabrics.len(), 1);
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn a_gb200_node_discovers_its_racks_nvlink_domain_from_nvml_fabric_info() {
    // The fabric info of a GB200 node's GPUs (cluster UUID and clique as in
    // driver issue 377); a GPU still registering, or of a zero cluster UUID,
    // does not count.
    let dir = tempfile::tempdir().unwrap();
    let gpu = |i: u32, fabric: &str| {
        format!(
            r#"{{"index": {i}, "name": "NVIDIA GB200", "memory_mb": 189471, "uuid": "GPU-{i}", "fabric": {fabric}}}"#
        )
    };
    let joined = r#"{"cluster_uuid": "3183419e-9edc-4f0e-86e8-d895a9fb06be", "clique_id": 17044, "completed": true}"#;
    let discover = |gpus: &[String]| {
        let facts = write(dir.path(), "gpus.json", &format!("[{}]", gpus.join(",")));
        let out = run(&[
            "discover",
            "--root",
            dir.path().to_str().unwrap(),
            "--gpu-facts",
            facts.to_str().unwrap(),
            "--format",
            "json",
        ]);
        assert_eq!(code(&out), 0, "{}", transcript(&out));
        json(&out)["node"][0]["fabric"].clone()
    };
    let all = discover(&(0..4).map(|i| gpu(i, joined)).collect::<Vec<_>>());
    assert_eq!(all, serde_json::json!([{"name": "nvl-3183419e-9edc-4f0e-86e8-d895a9fb06be.17044", "kind": "nvlink"}]));
    let registering =
        r#"{"cluster_uuid": "3183419e-9edc-4f0e-86e8-d895a9fb06be", "clique_id": 17044, "completed": false}"#;
    assert_eq!(discover(&[gpu(0, joined), gpu(1, registering)]), all);
    let zero = r#"{"cluster_uuid": "00000000-0000-0000-0000-000000000000", "clique_id": 0, "completed": true}"#;
    assert!(discover(&[gpu(0, zero)]).is_null(), "no domain");
    // GPUs that disagree: no domain rather than a wrong one.
    let other = r#"{"cluster_uuid": "bbc2edac-6ffb-43a0-9053-cae96152c90a", "clique_id": 17044, "completed": true}"#;
    assert!(discover(&[gpu(0, joined), gpu(1, other)]).is_null());
}

/// Builds the fake sysfs a `tests/data/real/discovery/*.txt` file describes
/// (one file a line: PATH, a tab, the content, `\n` for newlines).
fn sysfs_from(root: &Path, description: &str) {
    for line in description.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let (path, content) = line.split_once('\t').expect("PATH<TAB>CONTENT");
        write(root, &format!("sys/{path}"), &format!("{}\n", content.replace("\\n", "\n")));
    }
}

const MI300X_SYSFS: &str = include_str!("../data/real/discovery/mi300x-sysfs.txt");

#[test]
fn amd_gpus_come_from_sysfs_without_nvml() {
    let dir = tempfile::tempdir().unwrap();
    sysfs_from(dir.path(), MI300X_SYSFS);
    let (node, warnings) =
        discover(&machine(dir.path(), Err("the NVIDIA driver is not loaded".into()), NodeConfig::default(), None));
    // No NVML on an AMD machine is no reason to warn.
    assert!(warnings.is_empty(), "{:?}", warnings.iter().map(|w| &w.message).collect::<Vec<_>>());
    // The ASPEED card and its connector are not GPUs; the two MI300X are,
    // with the VRAM rocm-smi printed (206141652992 B = 196592 MiB).
    let gpus: Vec<_> = node
        .gpus
        .iter()
        .map(|g| (g.index, g.name.as_str(), g.vendor.as_str(), g.memory_mb, g.pci_bus_id.as_deref(), g.class.as_str()))
        .collect();
    assert_eq!(
        gpus,
        [
            (0, "AMD Instinct MI300X OAM", "amd", 196_592, Some("0000:1b:00.0"), "amd-instinct-mi300x-oam"),
            (1, "AMD Instinct MI300X OAM", "amd", 196_592, Some("0000:3d:00.0"), "amd-instinct-mi300x-oam"),
        ]
    );
    let text = toml_of(node);
    assert!(text.contains("vendor = \"amd\"\nmemory_mb = 196592\n"), "{text}");
    // What discover writes, place reads back.
    let src = llmgw::diag::source("x.toml", text);
    let back = llmgw::load::inventory_file(&src).unwrap();
    assert_eq!(back[0].gpus[1].vendor, llmgw::vendor::Vendor::Amd);
}

#[test]
fn an_nvidia_card_in_drm_is_listed_once_and_amd_ones_follow() {
    let dir = tempfile::tempdir().unwrap();
    sysfs_from(dir.path(), MI300X_SYSFS);
    // The NVIDIA GPU NVML reports also has a DRM card of its own.
    write(dir.path(), "sys/class/drm/card3/device/vendor", "0x10de\n");
    write(dir.path(), "sys/class/drm/card3/device/mem_info_vram_total", "85899345920\n");
    let (node, _) = discover(&machine(dir.path(), Ok(vec![gpu_at(0, ":18:00.0")]), NodeConfig::default(), None));
    let gpus: Vec<_> = node.gpus.iter().map(|g| (g.index, g.vendor.as_str(), g.name.as_str())).collect();
    assert_eq!(
        gpus,
        [
            (0, "nvidia", "NVIDIA H100 80GB HBM3"),
            (1, "amd", "AMD Instinct MI300X OAM"),
            (2, "amd", "AMD Instinct MI300X OAM")
        ]
    );
    // NVIDIA's GPUs print as they always have: no vendor key.
    let text = toml_of(node);
    assert_eq!(text.matches("vendor = ").count(), 2, "{text}");
}

#[test]
fn nvml_missing_beside_amd_gpus_is_still_said_when_an_nvidia_card_is_there() {
    let dir = tempfile::tempdir().unwrap();
    sysfs_from(dir.path(), MI300X_SYSFS);
    write(dir.path(), "sys/class/drm/card3/device/vendor", "0x10de\n");
    let (node, warnings) =
        discover(&machine(dir.path(), Err("the NVIDIA driver is not loaded".into()), NodeConfig::default(), None));
    // The AMD GPUs are read; the NVIDIA one NVML would have given is not,
    // and that is said.
    assert_eq!(node.gpus.len(), 2);
    assert!(warnings.iter().any(|w| w.message.contains("the NVIDIA driver is not loaded")), "{warnings:?}");
}

#[test]
fn amd_memory_that_does_not_read_is_said_and_taken_as_unknown() {
    let dir = tempfile::tempdir().unwrap();
    sysfs_from(dir.path(), MI300X_SYSFS);
    let card = std::fs::read_dir(dir.path().join("sys/class/drm"))
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| std::fs::read_to_string(p.join("device/vendor")).is_ok_and(|v| v.trim() == "0x1002"))
        .unwrap();
    std::fs::write(card.join("device/mem_info_vram_total"), "abc\n").unwrap();
    let (node, warnings) =
        discover(&machine(dir.path(), Err("the NVIDIA driver is not loaded".into()), NodeConfig::default(), None));
    assert!(node.gpus.iter().any(|g| g.memory_mb == 0), "{:?}", node.gpus);
    assert!(
        warnings.iter().any(|w| w.message.contains("mem_info_vram_total is `abc`, not a byte count")),
        "{:?}",
        warnings.iter().map(|w| &w.message).collect::<Vec<_>>()
    );
}
