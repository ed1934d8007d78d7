//! Small inputs that once cost minutes or gigabytes, timed on the release
//! binary (best of three, peak RSS): what each amplification costs now.
//!
//!     cargo bench --bench amplify              # 450,000 fabrics
//!     cargo bench --bench amplify -- 100000    # fewer
//!
//! - one node on many fabrics, a two-node profile (a pool per fabric):
//!   `place --format json`, `explain-placement`;
//! - a million replicas no node can hold: `explain-placement`, `place`;
//! - two plans whose unplaced run ends at the last index (4,294,967,295
//!   replicas in 85 bytes): `diff`;
//! - the fourth hardening round's inputs: a ResourceSlice of 200,000
//!   devices (34 MB), a Pod of 150,000 containers (2 MB), 80,000 taints
//!   against 80,000 tolerations, and `--jobs` Slurm JSON of 12 MB (six
//!   million items that are no job; four million finished ones).

mod common;

use common::measure::measure;
use std::fmt::Write as _;

fn main() {
    let fabrics: u32 = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(450_000);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = |name: &str| dir.path().join(name).to_str().expect("utf-8 temp path").to_string();

    let mut inv = String::from("[[node]]\nid = \"n1\"\nstate = \"ready\"\nengines = { vllm = \"0.11.1\" }\n");
    for i in 0..8 {
        let _ = writeln!(inv, "[[node.gpu]]\nindex = {i}\nname = \"NVIDIA H100 80GB HBM3\"\nmemory_mb = 81559");
    }
    for f in 0..fabrics {
        let _ = writeln!(inv, "[[node.fabric]]\nname = \"ib-{f}\"");
    }
    std::fs::write(path("fabrics.toml"), &inv).unwrap();
    std::fs::write(
        path("two.toml"),
        "[[model]]\nname = \"m\"\nreplicas = 1\n[[model.profile]]\nname = \"two\"\nengine = \"vllm\"\n\
         gpu_class = \"h100-80gb-hbm3\"\ngpus_per_node = 8\nnodes = 2\n",
    )
    .unwrap();
    println!("one node on {fabrics} fabrics ({:.1} MB), a two-node profile:", inv.len() as f64 / 1e6);
    let (cat, fleet) = (path("two.toml"), path("fabrics.toml"));
    measure(&["place", &cat, "-i", &fleet, "--format", "json"], "place --format json");
    measure(&["explain-placement", &cat, "--model", "m", "-i", &fleet], "explain-placement");

    std::fs::write(
        path("million.toml"),
        "[[model]]\nname = \"m\"\nreplicas = 1000000\n[[model.profile]]\nname = \"b200\"\nengine = \"vllm\"\n\
         gpu_class = \"b200\"\ngpus_per_node = 8\n",
    )
    .unwrap();
    let one = inv.split("[[node.fabric]]").next().unwrap_or_default();
    std::fs::write(path("one.toml"), one).unwrap();
    println!("\na million replicas no node can hold (one node):");
    let (cat, fleet) = (path("million.toml"), path("one.toml"));
    measure(
        &["explain-placement", &cat, "--model", "m", "-i", &fleet, "--format", "json"],
        "explain-placement --format json",
    );
    measure(&["place", &cat, "-i", &fleet, "--format", "json"], "place --format json");

    let run = format!(
        "{{\"placements\": [], \"unplaced\": [{{\"model\": \"m\", \"replica\": 0, \"through\": {}}}]}}",
        u32::MAX
    );
    std::fs::write(path("old.json"), &run).unwrap();
    std::fs::write(path("new.json"), "{\"placements\": [], \"unplaced\": []}").unwrap();
    println!(
        "\na plan of {} bytes leaving {} replicas unplaced, against an empty one:",
        run.len(),
        u64::from(u32::MAX) + 1
    );
    measure(&["diff", &path("old.json"), &path("new.json"), "--format", "json"], "diff --format json");
    fourth_round(&path);
}

/// The inputs the fourth hardening round bounded, each timed with its size.
fn fourth_round(path: &dyn Fn(&str) -> String) {
    let node = r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":{}},"status":{"capacity":{"cpu":"96","memory":"2Ti","nvidia.com/gpu":"8"},"allocatable":{"cpu":"96","memory":"2Ti","nvidia.com/gpu":"8"},"conditions":[{"type":"Ready","status":"True"}]}}"#;
    std::fs::write(path("nodes.json"), format!(r#"{{"apiVersion":"v1","kind":"List","items":[{node}]}}"#)).unwrap();
    let mut devices = String::new();
    for i in 0..200_000 {
        if i > 0 {
            devices.push(',');
        }
        let _ = write!(
            devices,
            r#"{{"name":"gpu-{i}","attributes":{{"type":{{"string":"gpu"}},"uuid":{{"string":"GPU-{i:08}"}},"productName":{{"string":"NVIDIA H100"}}}},"capacity":{{"memory":{{"value":"80Gi"}}}}}}"#
        );
    }
    let slices = format!(
        r#"{{"apiVersion":"v1","kind":"List","items":[{{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{{"name":"s"}},"spec":{{"driver":"gpu.nvidia.com","nodeName":"n1","pool":{{"name":"n1","generation":1,"resourceSliceCount":1}},"devices":[{devices}]}}}}]}}"#
    );
    std::fs::write(path("slices.json"), &slices).unwrap();
    println!("\na ResourceSlice of 200,000 devices ({:.1} MB):", slices.len() as f64 / 1e6);
    let nodes = path("nodes.json");
    measure(&["inventory", "import", "kubernetes", &nodes, "--resource-slices", &path("slices.json")], "import");

    let pod = format!(
        r#"{{"apiVersion":"v1","kind":"List","items":[{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"p","namespace":"x"}},"spec":{{"nodeName":"n1","containers":[{}]}},"status":{{"phase":"Running"}}}}]}}"#,
        vec![r#"{"name":"c"}"#; 150_000].join(",")
    );
    std::fs::write(path("pods.json"), &pod).unwrap();
    println!("\na Pod of 150,000 containers ({:.1} MB):", pod.len() as f64 / 1e6);
    measure(&["inventory", "import", "kubernetes", &nodes, "--pods", &path("pods.json")], "import");

    let n = 80_000;
    let taints: Vec<String> = (0..n).map(|i| format!("\"k{i}=v:NoSchedule\"")).collect();
    let tolerations: Vec<String> = (0..n).map(|i| format!("\"k{i}=v\"")).collect();
    std::fs::write(
        path("taints.toml"),
        format!(
            "[[node]]\nid = \"n1\"\nstate = \"ready\"\ntaints = [{}]\n[[node.gpu]]\nindex = 0\nname = \"NVIDIA H100 80GB HBM3\"\nmemory_mb = 81559\n",
            taints.join(",")
        ),
    )
    .unwrap();
    std::fs::write(
        path("tolerations.toml"),
        format!(
            "[[model]]\nname = \"m\"\n[[model.profile]]\nname = \"p\"\nengine = \"vllm\"\ngpu_class = \"h100-80gb-hbm3\"\ntolerations = [{}]\n",
            tolerations.join(",")
        ),
    )
    .unwrap();
    println!("\n80,000 taints on a node, 80,000 tolerations on a profile:");
    measure(
        &["place", &path("tolerations.toml"), "-i", &path("taints.toml"), "--format", "json"],
        "place --format json",
    );

    std::fs::write(path("nodes.txt"), "NodeName=n1 CPUTot=64 RealMemory=512000 Gres=gpu:h100:8 State=IDLE\n").unwrap();
    for (name, item, count) in [("zeros", "0", 6_000_000), ("finished", "{}", 4_000_000)] {
        let jobs = format!("{{\"jobs\": [{}]}}", vec![item; count].join(","));
        std::fs::write(path(&format!("{name}.json")), &jobs).unwrap();
        println!("\n--jobs Slurm JSON of {count} items `{item}` ({:.1} MB):", jobs.len() as f64 / 1e6);
        let j = path(&format!("{name}.json"));
        measure(&["inventory", "import", "slurm", &path("nodes.txt"), "--jobs", &j, "--jobs-user", "root"], "import");
    }
}
