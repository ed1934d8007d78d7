//! Both importers on arbitrary, mutated and hostile input: never a panic,
//! every span inside its file, and whatever is imported within the caps
//! (1024 GPUs a node, 7 MIG devices a GPU) and loadable by llmgw's own
//! loader. Bounds are asserted on what is produced, never on time.

use llmgw::diag::{Diag, source};
use llmgw::inventory::Inventory;
use proptest::prelude::*;

const KUBE_NODES: &str = include_str!("../data/kubernetes/nodes.json");
const KUBE_PODS: &str = include_str!("../data/kubernetes/pods.json");
const KUBE_YAML: &str = include_str!("../data/kubernetes/node.yaml");
const SLURM_NODES: &[(&str, &str)] = &[
    ("sinfo.json", include_str!("../data/slurm/sinfo-22.05.json")),
    ("nodes.txt", include_str!("../data/slurm/scontrol-22.05.txt")),
    ("nodes.json", include_str!("../data/slurm/nodes-24.11.json")),
    ("plain.txt", include_str!("../data/real/slurm/scontrol-d-show-node-huji.txt")),
    ("jobs-nodes.txt", include_str!("../data/slurm/scontrol-jobs-nodes-22.05.txt")),
];
const SLURM_JOBS: &[(&str, &str)] = &[
    ("squeue.json", include_str!("../data/slurm/squeue-22.05.json")),
    ("jobs.txt", include_str!("../data/slurm/scontrol-jobs-22.05.txt")),
    ("jobs-plain.txt", include_str!("../data/real/slurm/scontrol-d-show-job-huji-2019-2025.txt")),
];
const DRA_SLICES: &str = include_str!("../data/real/kubernetes/dra/slice-docs-20c35fe2.list.json");
const DRA_MIG_SLICES: &str =
    include_str!("../data/real/kubernetes/dra/slice-a100-mig-v1-issue719.reconstructed.list.json");
const DRA_CLAIMS: &str = include_str!("../data/real/kubernetes/dra/claim-issue426.list.json");
const TOPOLOGY: &str = include_str!("../data/real/slurm/topology-circe-superpod.conf");
const BLOCKS: &[&str] = &[
    include_str!("../data/real/slurm/topology-block-azure-cyclecloud-slurm-gb200.conf"),
    include_str!("../data/real/slurm/scontrol-show-topology-block-slinky-oke-gb300.txt"),
    include_str!("../data/real/slurm/topology-block-nvidia-topograph-ci-expected.conf"),
];
const KARPENTER_LABELS: &str =
    include_str!("../data/real/kubernetes/karpenter/karpenter-p4d-24xlarge-a100-eks-1.34-describe.labels.json");

/// Applies edits: 0 inserts, 1 deletes, 2 overwrites, 3 cuts the text there.
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

/// What an import gives, held to the bounds: spans inside their files,
/// few diagnostics, GPUs and MIG devices within the caps, loadable.
fn within_bounds(result: Result<(Inventory, Vec<Diag>), Vec<Diag>>, lens: &[(&str, usize)]) {
    let check_spans = |diags: &[Diag]| {
        assert!(diags.len() <= 200, "{} diagnostics", diags.len());
        for d in diags {
            let len = lens.iter().find(|(n, _)| Some(*n) == d.file()).map_or(usize::MAX, |x| x.1);
            for (span, _) in &d.labels {
                assert!(span.start <= span.end && span.end <= len, "{span:?} past {len} for {}", d.message);
            }
        }
        let _ = llmgw::report::diagnostics::render(diags, false);
    };
    match result {
        Err(diags) => check_spans(&diags),
        Ok((inv, warnings)) => {
            check_spans(&warnings);
            for n in &inv.nodes {
                assert!(n.gpus.len() <= 1024, "{}: {} GPUs", n.id, n.gpus.len());
                for g in &n.gpus {
                    assert!(
                        g.mig_devices.len() <= 7,
                        "{}: GPU {} has {} MIG devices",
                        n.id,
                        g.index,
                        g.mig_devices.len()
                    );
                }
            }
            let text = llmgw::output::render_inventory(&inv, llmgw::doc::Format::Json).unwrap();
            if let Err(d) = llmgw::load::inventory_file(&source("x.json", text.clone())) {
                panic!("the import does not load: {}\n{text}", llmgw::report::diagnostics::render(&d, false));
            }
        }
    }
}

fn kube(nodes: (&str, String), pods: Option<String>) {
    let n = source(nodes.0, nodes.1);
    let p = pods.map(|t| source("pods.json", t));
    let settings = llmgw::kubernetes::Settings {
        fabric_label: Some("network.topology.nvidia.com/spine".into()),
        namespaces: None,
    };
    let lens = [(nodes.0, n.text().len()), ("pods.json", p.as_ref().map_or(0, |p| p.text().len()))];
    within_bounds(llmgw::kubernetes::import(&n, p.as_ref(), &settings), &lens);
}

/// Nodes named as the DRA fixtures' pools, with the slices and claims given.
fn dra(slices: String, claims: String) {
    let nodes = r#"{"kind": "List", "items": [
        {"kind": "Node", "metadata": {"name": "ipp1-0033"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}},
        {"kind": "Node", "metadata": {"name": "cdiadmin"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}},
        {"kind": "Node", "metadata": {"name": "aks-migpool-68842551-vmss000001"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}]}"#;
    let n = source("nodes.json", nodes.to_string());
    let s = source("slices.json", slices);
    let c = source("claims.json", claims);
    let lens = [("nodes.json", n.text().len()), ("slices.json", s.text().len()), ("claims.json", c.text().len())];
    let dra = llmgw::kubernetes::Dra { slices: Some(&s), claims: Some(&c) };
    within_bounds(llmgw::kubernetes::import_with(&n, None, &dra, &llmgw::kubernetes::Settings::default()), &lens);
}

/// A pool of `gpus` GPU devices and `migs` MIG devices on one parent
/// (the attributes import reads), around the caps of a node and a GPU.
fn hostile_slices() -> impl Strategy<Value = String> {
    (prop_oneof![0..16usize, 1022..1027usize], 0..12usize, prop::bool::ANY).prop_map(|(gpus, migs, beta)| {
        let attrs = |kind: &str, uuid: String, extra: &[(&str, &str)]| {
            let mut a = serde_json::json!({"type": {"string": kind}, "uuid": {"string": uuid}, "productName": {"string": "NVIDIA A100-PCIE-40GB"}});
            for (k, v) in extra {
                a[*k] = serde_json::json!({"string": v});
            }
            a
        };
        let device = |name: String, attributes: serde_json::Value| {
            let capacity = serde_json::json!({"memory": {"value": "4864Mi"}});
            if beta {
                serde_json::json!({"name": name, "basic": {"attributes": attributes, "capacity": capacity}})
            } else {
                serde_json::json!({"name": name, "attributes": attributes, "capacity": capacity})
            }
        };
        let mut devices: Vec<serde_json::Value> =
            (0..gpus).map(|i| device(format!("gpu-{i}"), attrs("gpu", format!("GPU-{i}"), &[]))).collect();
        devices.extend((0..migs).map(|m| {
            device(format!("gpu-0-mig-{m}"), attrs("mig", format!("MIG-{m}"), &[("parentUUID", "GPU-0"), ("profile", "1g.5gb")]))
        }));
        serde_json::json!({"kind": "List", "items": [{"kind": "ResourceSlice", "spec": {"driver": "gpu.nvidia.com",
            "nodeName": "ipp1-0033", "pool": {"name": "ipp1-0033", "generation": 1, "resourceSliceCount": 1}, "devices": devices}}]})
        .to_string()
    })
}

fn slurm(nodes: (&str, String), topology: Option<String>, jobs: Option<(&str, String)>) {
    let n = source(nodes.0, nodes.1);
    let t = topology.map(|t| source("topology.conf", t));
    let j = jobs.map(|(name, text)| source(name, text));
    let lens = [
        (nodes.0, n.text().len()),
        ("topology.conf", t.as_ref().map_or(0, |t| t.text().len())),
        (j.as_ref().map_or("", |j| j.name()), j.as_ref().map_or(0, |j| j.text().len())),
    ];
    let settings = llmgw::slurm::Settings { fabric_feature: Some("ib-".into()), jobs_user: "root".into() };
    within_bounds(llmgw::slurm::import(&n, t.as_ref(), j.as_ref(), &settings), &lens);
}

/// Counts where counts are parsed: huge, negative, fractional, exponent.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u64..2000).prop_map(|n| n.to_string()),
        Just("4294967296".to_string()),
        Just("18446744073709551616".to_string()),
        Just("1e18".to_string()),
        Just("1e300".to_string()),
        Just("-1".to_string()),
        Just("0.5".to_string()),
        Just("500m".to_string()),
        Just("7Ki".to_string()),
    ]
}

/// A Node with GFD labels and resources drawn from hostile counts.
fn hostile_node() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec![
            "NVIDIA-A100-SXM4-80GB",
            "NVIDIA-A100-SXM4-80GB-SHARED",
            "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb",
            "Tesla-T4",
        ]),
        prop::option::of(number()),
        prop::option::of(number()),
        prop::option::of(number()),
        prop::option::of(number()),
        prop::option::of(number()),
        prop::option::of(number()),
    )
        .prop_map(|(product, count, replicas, capacity, mig_label, mig_capacity, memory)| {
            let mut labels = serde_json::json!({"nvidia.com/gpu.product": product, "nvidia.com/mig.strategy": "mixed"});
            let mut cap = serde_json::json!({});
            let put = |m: &mut serde_json::Value, k: &str, v: Option<String>| {
                if let Some(v) = v {
                    m[k] = v.into();
                }
            };
            put(&mut labels, "nvidia.com/gpu.count", count);
            put(&mut labels, "nvidia.com/gpu.replicas", replicas);
            put(&mut labels, "nvidia.com/mig-1g.10gb.count", mig_label);
            put(&mut labels, "nvidia.com/gpu.memory", memory.clone());
            put(&mut cap, "nvidia.com/gpu", capacity);
            put(&mut cap, "nvidia.com/mig-3g.40gb", mig_capacity);
            put(&mut cap, "memory", memory.clone());
            put(&mut cap, "cpu", memory);
            serde_json::json!({"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "n1", "labels": labels},
                "status": {"capacity": cap, "allocatable": cap, "conditions": [{"type": "Ready", "status": "True"}]}}]})
            .to_string()
        })
}

/// A Node with the AMD device plugin's resource and the AMD labeller's
/// labels, drawn from hostile counts and values.
fn hostile_amd_node() -> impl Strategy<Value = String> {
    (
        prop::option::of(number()),
        prop::option::of(number()),
        prop::option::of(number()),
        prop::option::of(number()),
        prop::sample::select(vec!["192G", "99999999999999999999G", "G", "-1G", "1e18G", "", "AMD_Instinct_MI300X_OAM"]),
        prop::sample::select(vec!["AMD_Instinct_MI300X_OAM", "", "_", "74a1"]),
    )
        .prop_map(|(capacity, allocatable, beta_a, beta_b, vram, name)| {
            let mut labels = serde_json::json!({"amd.com/gpu.vram": vram, "amd.com/gpu.product-name": name});
            let mut cap = serde_json::json!({});
            let mut alloc = serde_json::json!({});
            let put = |m: &mut serde_json::Value, k: &str, v: Option<String>| {
                if let Some(v) = v {
                    m[k] = v.into();
                }
            };
            put(&mut labels, "beta.amd.com/gpu.device-id.74a1", beta_a);
            put(&mut labels, "beta.amd.com/gpu.device-id.74b5", beta_b);
            put(&mut cap, "amd.com/gpu", capacity);
            put(&mut alloc, "amd.com/gpu", allocatable);
            serde_json::json!({"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "n1", "labels": labels},
                "status": {"capacity": cap, "allocatable": alloc, "conditions": [{"type": "Ready", "status": "True"}]}}]})
            .to_string()
        })
}

/// A Slurm node line with a hostile Gres and GresUsed, and a topology
/// whose hostlists stand for many names.
fn hostile_slurm() -> impl Strategy<Value = (String, String)> {
    let gres = prop::collection::vec(
        (prop::sample::select(vec!["h100", "1g.10gb", "nvidia_a100_3g.39gb", "7g.80gb", ""]), number()),
        0..6,
    );
    let range = prop_oneof![9 => (0u64..2_000_000, 0u64..400), 1 => (0u64..2_000_000, 0u64..5_000_000)];
    (gres, prop::collection::vec(range, 1..5), number(), number()).prop_map(|(gres, ranges, cpus, alloc)| {
        let g: Vec<String> =
            gres.iter().map(|(t, n)| if t.is_empty() { format!("gpu:{n}") } else { format!("gpu:{t}:{n}") }).collect();
        let used = format!("gpu:h100:1(IDX:0-{})", ranges[0].0 % 9000);
        let line =
            format!("NodeName=gpu01 State=IDLE Gres={} GresUsed={used} CPUTot={cpus} CPUAlloc={alloc}\n", g.join(","));
        let r: Vec<String> = ranges.iter().map(|(a, len)| format!("{a}-{}", a + len)).collect();
        let topo = format!("SwitchName=s1 Nodes=gpu[{}]\nSwitchName=s2 Switches=s1\n", r.join(","));
        (line, topo)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn mutated_kubectl_output_stays_within_bounds(
        which in 0..2usize,
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0..4u8, "[\\[\\]{}\"':,0-9a-zA-Z.\\n -]{0,8}|\"1e18\"|\"4294967296\"|\"n1=3,3\"|\"0:99\""), 1..6),
        pod_edits in prop::collection::vec((any::<prop::sample::Index>(), 0..4u8, "[\\[\\]{}\"=:;,0-9a-z\\n -]{0,6}"), 0..4),
    ) {
        let (name, text) = if which == 0 { ("nodes.json", KUBE_NODES) } else { ("node.yaml", KUBE_YAML) };
        kube((name, mutate(text.to_string(), edits)), Some(mutate(KUBE_PODS.to_string(), pod_edits)));
    }

    #[test]
    fn mutated_dra_slices_and_claims_stay_within_bounds(
        which in 0..2usize,
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0..4u8, "[\\[\\]{}\"':,0-9a-zA-Z.\\n -]{0,8}|\"gpu-0\"|\"1e18\"|\"GPU-2fa81118-5a5f-aa66-7660-471eed407181\""), 1..6),
        claim_edits in prop::collection::vec((any::<prop::sample::Index>(), 0..4u8, "[\\[\\]{}\"':,0-9a-z.\\n -]{0,8}|\"ipp1-0033\"|\"gpu-0\""), 0..4),
    ) {
        let slices = if which == 0 { DRA_SLICES } else { DRA_MIG_SLICES };
        dra(mutate(slices.to_string(), edits), mutate(DRA_CLAIMS.to_string(), claim_edits));
    }

    #[test]
    fn hostile_gfd_counts_stay_within_bounds(node in hostile_node()) {
        kube(("nodes.json", node), None);
    }

    #[test]
    fn hostile_amd_counts_stay_within_bounds(node in hostile_amd_node()) {
        kube(("nodes.json", node), None);
    }

    #[test]
    fn arbitrary_text_never_panics_an_importer(text in "(?s).{0,300}", yaml in any::<bool>()) {
        kube((if yaml { "n.yaml" } else { "n.json" }, text.clone()), None);
        slurm(("n.txt", text.clone()), Some(text.clone()), Some(("jobs.txt", text)));
    }

    #[test]
    fn mutated_slurm_output_and_jobs_stay_within_bounds(
        seed in 0..SLURM_NODES.len(),
        job in 0..SLURM_JOBS.len(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0..4u8, "[\\[\\]{}()\"=:,+*0-9a-zA-Z_\\r\\n -]{0,8}"), 1..6),
        job_edits in prop::collection::vec((any::<prop::sample::Index>(), 0..4u8, "[\\[\\]{}()\"=:,0-9a-zA-Z_/.\\n -]{0,8}"), 0..4),
        topo_edits in prop::collection::vec((any::<prop::sample::Index>(), 0..4u8, "[\\[\\]=,0-9a-z\\n -]{0,6}"), 0..3),
    ) {
        let (name, text) = SLURM_NODES[seed];
        let (jname, jtext) = SLURM_JOBS[job];
        slurm(
            (name, mutate(text.to_string(), edits)),
            Some(mutate(TOPOLOGY.to_string(), topo_edits)),
            Some((jname, mutate(jtext.to_string(), job_edits))),
        );
    }

    #[test]
    fn hostile_gres_and_hostlists_stay_within_bounds((line, topo) in hostile_slurm()) {
        slurm(("n.txt", line), Some(topo), None);
    }

    #[test]
    fn mutated_block_topologies_stay_within_bounds(
        which in 0..BLOCKS.len(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0..4u8, "[\\[\\]=,0-9a-zA-Z_.\\n -]{0,8}|BlockName=|BlockSizes=|AggregatedBlock=|SwitchName="), 1..6),
    ) {
        let nodes = "NodeName=hpcbench-hpc-1 State=IDLE Gres=gpu:gb200:4\nNodeName=10.140.71.103 State=IDLE\nNodeName=srv1101 State=IDLE\n";
        slurm(("n.txt", nodes.to_string()), Some(mutate(BLOCKS[which].to_string(), edits)), None);
    }

    #[test]
    fn hostile_karpenter_labels_stay_within_bounds(
        count in "[0-9]{1,20}|-1|8|1e3|",
        memory in "[0-9]{1,20}|-5|40960|",
        name in "[a-z0-9]{0,6}|a100|v100",
        maker in "nvidia|amd|NVIDIA|aws|",
        capacity in prop::option::of("[0-9]{1,20}|1e18|8"),
    ) {
        let mut labels: serde_json::Value = serde_json::from_str(KARPENTER_LABELS).unwrap();
        labels["karpenter.k8s.aws/instance-gpu-count"] = count.into();
        labels["karpenter.k8s.aws/instance-gpu-memory"] = memory.into();
        labels["karpenter.k8s.aws/instance-gpu-name"] = name.into();
        labels["karpenter.k8s.aws/instance-gpu-manufacturer"] = maker.into();
        let mut status = serde_json::json!({"conditions": [{"type": "Ready", "status": "True"}], "capacity": {}, "allocatable": {}});
        if let Some(c) = capacity {
            status["capacity"]["nvidia.com/gpu"] = c.clone().into();
            status["allocatable"]["nvidia.com/gpu"] = c.into();
        }
        let node = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "k1", "labels": labels}, "status": status}]});
        kube(("nodes.json", node.to_string()), None);
    }
}

proptest! {
    // Each case imports and reloads a node of about 1,024 GPUs: fewer of
    // them, each around a cap.
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn hostile_dra_pools_stay_within_bounds(slices in hostile_slices()) {
        dra(slices, DRA_CLAIMS.to_string());
    }
}
