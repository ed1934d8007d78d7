//! Oversubscribed fleets, as the quality check of `--pack most` draws them
//! (SPEC section 22): 6 to 40 nodes of H100, A100, L40S and PCIe A100
//! pairs, some already loaded, on one or two InfiniBand fabrics; 3 to 8
//! models of TP1 to TP8, some with two-node profiles, `replicas_per_node`
//! 1 to 4, asking for more GPUs than the fleet has free. Written as the
//! files a user would write, and solved exactly by an integer program of
//! its own (not llmgw's), for the yardstick.
#![allow(dead_code)]

use std::fmt::Write as _;

/// (GPU name, class, GPUs per node, fabric-attached).
pub const KINDS: &[(&str, &str, u32, bool)] = &[
    ("NVIDIA H100 80GB HBM3", "h100-80gb-hbm3", 8, true),
    ("NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb", 8, true),
    ("NVIDIA L40S", "l40s", 4, false),
    ("NVIDIA A100 80GB PCIe", "a100-80gb-pcie", 2, false),
];
const FABRICS: &[&str] = &["ib-a", "ib-b"];

pub struct Node {
    pub kind: usize,
    pub used: u32,
    pub fabric: Option<usize>,
}

pub struct Profile {
    pub kind: usize,
    pub tp: u32,
    pub nodes: u32,
}

pub struct Model {
    pub replicas: u32,
    pub per_node: u32,
    /// In the order tried (priorities written descending).
    pub profiles: Vec<Profile>,
}

pub struct Fleet {
    pub nodes: Vec<Node>,
    pub models: Vec<Model>,
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
}

/// A fleet of `nodes` (inclusive range) nodes and `models` models.
pub fn generate(seed: u64, nodes: (u64, u64), models: (u64, u64)) -> Fleet {
    let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let n = r.range(nodes.0, nodes.1) as usize;
    let two_fabrics = r.below(2) == 0;
    let mut fleet = Fleet { nodes: Vec::new(), models: Vec::new() };
    for _ in 0..n {
        let kind = [0, 0, 0, 1, 1, 2, 3][r.below(7) as usize];
        let gpus = KINDS[kind].2;
        let used = if r.below(10) < 3 { r.range(1, u64::from(gpus)) as u32 } else { 0 };
        let fabric = KINDS[kind].3.then(|| if two_fabrics { r.below(2) as usize } else { 0 });
        fleet.nodes.push(Node { kind, used, fabric });
    }
    let free: u32 = fleet.nodes.iter().map(|x| KINDS[x.kind].2 - x.used).sum();
    let m = r.range(models.0, models.1) as usize;
    for _ in 0..m {
        let mut profiles = Vec::new();
        for _ in 0..r.range(1, 3) {
            let kind = [0, 0, 1, 1, 2, 3][r.below(6) as usize];
            let most = KINDS[kind].2;
            let tps: Vec<u32> = [1, 2, 4, 8].into_iter().filter(|&t| t <= most).collect();
            let tp = tps[r.below(tps.len() as u64) as usize];
            let nodes = if KINDS[kind].3 && tp == 8 && r.below(3) == 0 { 2 } else { 1 };
            profiles.push(Profile { kind, tp, nodes });
        }
        let size = profiles.iter().map(|p| p.tp * p.nodes).min().unwrap_or(1);
        // Together the models ask for 1.2 to 2 times the free GPUs.
        let share = (free * r.range(12, 20) as u32 / 10 / m as u32).max(1);
        let replicas = (share / size).clamp(1, 64);
        fleet.models.push(Model { replicas, per_node: r.range(1, 4) as u32, profiles });
    }
    fleet
}

impl Fleet {
    pub fn inventory(&self) -> String {
        let mut s = String::new();
        for (i, n) in self.nodes.iter().enumerate() {
            let (name, _, gpus, _) = KINDS[n.kind];
            let _ = writeln!(s, "[[node]]\nid = \"n{i:02}\"");
            for g in 0..gpus {
                let _ = writeln!(s, "[[node.gpu]]\nindex = {g}\nname = \"{name}\"\nmemory_mb = 81920");
            }
            if let Some(f) = n.fabric {
                let _ = writeln!(s, "[[node.fabric]]\nname = \"{}\"\nhcas = [\"mlx5_0\"]", FABRICS[f]);
            }
            if n.used > 0 {
                let used: Vec<u32> = (0..n.used).collect();
                let _ = writeln!(s, "[[node.allocation]]\nmodel = \"loaded\"\nreplica = {i}\ngpus = {used:?}");
            }
        }
        s
    }

    pub fn catalog(&self) -> String {
        let mut s = String::new();
        for (mi, m) in self.models.iter().enumerate() {
            let _ = writeln!(
                s,
                "[[model]]\nname = \"m{mi}\"\nreplicas = {}\nreplicas_per_node = {}",
                m.replicas, m.per_node
            );
            for (pi, p) in m.profiles.iter().enumerate() {
                let _ = writeln!(
                    s,
                    "[[model.profile]]\nname = \"p{pi}\"\nengine = \"vllm\"\ngpu_class = \"{}\"\ngpus_per_node = {}\nnodes = {}\npriority = {}",
                    KINDS[p.kind].1,
                    p.tp,
                    p.nodes,
                    10 - pi as i32
                );
            }
        }
        s
    }

    /// The most replicas any plan places, by an integer program written
    /// from the generator's own description (not from llmgw's), solved to
    /// optimality; `None` if the solver stops short of proving it.
    pub fn exact(&self) -> Option<u64> {
        use microlp::{ComparisonOp, OptimizationDirection, Problem, SolveOptions, Variable};
        let mut p = Problem::new(OptimizationDirection::Maximize);
        let free = |n: &Node| KINDS[n.kind].2 - n.used;
        let mut gpu_rows: Vec<Vec<(Variable, f64)>> = vec![Vec::new(); self.nodes.len()];
        for m in &self.models {
            let mut count: Vec<(Variable, f64)> = Vec::new();
            let mut spread: Vec<Vec<(Variable, f64)>> = vec![Vec::new(); self.nodes.len()];
            for pr in &m.profiles {
                let fits = |n: &Node| n.kind == pr.kind && free(n) >= pr.tp;
                if pr.nodes == 1 {
                    for (i, n) in self.nodes.iter().enumerate().filter(|(_, n)| fits(n)) {
                        let most = (free(n) / pr.tp).min(m.per_node).min(m.replicas);
                        let v = p.add_integer_var(1.0, (0, most as i32));
                        count.push((v, 1.0));
                        gpu_rows[i].push((v, f64::from(pr.tp)));
                        spread[i].push((v, 1.0));
                    }
                    continue;
                }
                for f in 0..FABRICS.len() {
                    let on: Vec<usize> = (0..self.nodes.len())
                        .filter(|&i| self.nodes[i].fabric == Some(f) && fits(&self.nodes[i]))
                        .collect();
                    if on.len() < pr.nodes as usize {
                        continue;
                    }
                    let g = p.add_integer_var(1.0, (0, m.replicas as i32));
                    count.push((g, 1.0));
                    let mut sum = vec![(g, -f64::from(pr.nodes))];
                    for &i in &on {
                        let most = (free(&self.nodes[i]) / pr.tp).min(m.per_node);
                        let z = p.add_integer_var(0.0, (0, most as i32));
                        p.add_constraint(&[(z, 1.0), (g, -1.0)][..], ComparisonOp::Le, 0.0);
                        sum.push((z, 1.0));
                        gpu_rows[i].push((z, f64::from(pr.tp)));
                        spread[i].push((z, 1.0));
                    }
                    p.add_constraint(&sum[..], ComparisonOp::Eq, 0.0);
                }
            }
            if !count.is_empty() {
                p.add_constraint(&count[..], ComparisonOp::Le, f64::from(m.replicas));
            }
            for row in spread.into_iter().filter(|r| r.len() > 1) {
                p.add_constraint(&row[..], ComparisonOp::Le, f64::from(m.per_node));
            }
        }
        for (i, row) in gpu_rows.into_iter().enumerate().filter(|(_, r)| !r.is_empty()) {
            p.add_constraint(&row[..], ComparisonOp::Le, f64::from(free(&self.nodes[i])));
        }
        let mut opts = SolveOptions::default();
        opts.node_limit = Some(200_000);
        let out = p.solve_with(opts).ok()?;
        if !out.is_optimal() {
            return None;
        }
        Some((out.solution()?.objective() + 0.5).floor() as u64)
    }
}
