//! Ports on Slurm, where the processes of every job on a node share its
//! network: each replica gets ports none of the others on its nodes uses.
//!
//! Ports are given out in plan order, but a replica that already runs
//! keeps the ports it was started with: the last render into the output
//! folder wrote them in its script (`# llmgw ports: ...`), and a client
//! pointed at that replica must still reach it. Without them (no folder, or
//! a script from elsewhere) plan order decides.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use crate::launch::Ports;

/// The largest script render reads back (its own are a few KiB).
const MAX_SCRIPT: u64 = 1 << 20;

/// The line a script records its ports on.
pub const PORTS_LINE: &str = "# llmgw ports:";

/// Ports given out per node: a replica takes, on all of its nodes, the
/// first port from its wanted one up that none of them uses.
#[derive(Default)]
pub struct PortBook<'a> {
    used: BTreeMap<&'a str, Vec<u16>>,
}

impl<'a> PortBook<'a> {
    /// The first port from `from` up that none of the nodes uses, booked;
    /// `None` when every one up to 65535 is taken (never one given twice).
    pub fn take(&mut self, nodes: &[&'a str], from: u16) -> Option<u16> {
        self.take_block(nodes, from, 1)
    }

    /// The first `len` consecutive ports from `from` up that none of the
    /// nodes uses, all booked (SGLang takes the ports after its dist one);
    /// `None` when no such block is left below 65536.
    pub fn take_block(&mut self, nodes: &[&'a str], from: u16, len: u16) -> Option<u16> {
        let used = |b: &Self, q: u32| {
            nodes.iter().any(|n| b.used.get(n).is_some_and(|u| u.iter().any(|&x| u32::from(x) == q)))
        };
        let (len, mut p) = (u32::from(len.max(1)), u32::from(from));
        while p + len - 1 <= u32::from(u16::MAX) {
            if (p..p + len).any(|q| used(self, q)) {
                p += 1;
                continue;
            }
            for q in p..p + len {
                self.book(nodes, q as u16);
            }
            return Some(p as u16);
        }
        None
    }

    /// Marks a port as used on the nodes, whoever else had it.
    pub fn book(&mut self, nodes: &[&'a str], p: u16) {
        for n in nodes {
            self.used.entry(n).or_default().push(p);
        }
    }

    /// Marks every port of a replica as used on its nodes, SGLang's
    /// block above its dist port included.
    pub fn book_all(&mut self, nodes: &[&'a str], p: &Ports) {
        for port in [p.http, p.ray, p.ray_client, p.master] {
            self.book(nodes, port);
        }
        for port in p.dist..p.dist.saturating_add(crate::engines::DIST_BLOCK) {
            self.book(nodes, port);
        }
    }
}

/// The ports each replica's script in the folder records, by (model,
/// replica) as its `--comment` says.
pub fn previous(dir: &Path) -> HashMap<(String, u32), Ports> {
    let mut out = HashMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for entry in entries.flatten() {
        let path = entry.path();
        // Only render's own scripts, and only as much as one can be: a
        // stray note could move a running replica's port, a sparse file
        // of a gigabyte would be read whole.
        let small = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file() && m.len() <= MAX_SCRIPT);
        if !small || path.extension().is_none_or(|e| e != "sbatch") || !crate::render::out::ours(&path, "slurm") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        if let (Some(id), Some(ports)) = (identity(&text), ports(&text)) {
            out.insert(id, ports);
        }
    }
    out
}

/// (model, replica) from a script's `#SBATCH --comment=` line, as the
/// import of jobs reads a comment (`identity::parse_slurm_comment`).
fn identity(text: &str) -> Option<(String, u32)> {
    let comment = text.lines().find_map(|l| l.strip_prefix("#SBATCH --comment="))?;
    let id = crate::identity::parse_slurm_comment(comment)?.ok()?;
    Some((id.model, id.replica))
}

fn ports(text: &str) -> Option<Ports> {
    let line = text.lines().find_map(|l| l.strip_prefix(PORTS_LINE))?;
    let mut p = Ports::unrecorded(0);
    for (k, v) in line.split_whitespace().filter_map(|kv| kv.split_once('=')) {
        let v: u16 = v.parse().ok()?;
        match k {
            "http" => p.http = v,
            "ray" => p.ray = v,
            "ray_client" => p.ray_client = v,
            "dist" => p.dist = v,
            "master" => p.master = v,
            _ => {}
        }
    }
    (p.http > 0).then_some(p)
}

/// The line that records a replica's ports.
pub fn line(p: &Ports) -> String {
    format!(
        "{PORTS_LINE} http={} ray={} ray_client={} dist={} master={}",
        p.http, p.ray, p.ray_client, p.dist, p.master
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_skip_what_a_node_already_gave_out() {
        let mut b = PortBook::default();
        assert_eq!(b.take(&["n1"], 8000), Some(8000));
        assert_eq!(b.take(&["n1"], 8000), Some(8001));
        assert_eq!(b.take(&["n2"], 8000), Some(8000));
        assert_eq!(b.take(&["n1", "n2"], 8000), Some(8002));
        assert_eq!(b.take(&["n2"], 8001), Some(8001));
        // A block: no port of it taken on any of its nodes.
        assert_eq!(b.take(&["n3"], 20003), Some(20003));
        assert_eq!(b.take_block(&["n3"], 20000, 8), Some(20004));
        assert_eq!(b.take_block(&["n3", "n4"], 20000, 8), Some(20012));
        assert_eq!(b.take_block(&["n4"], 20000, 8), Some(20000));
        // The last ports: given once, then none.
        assert_eq!(b.take(&["n5"], 65535), Some(65535));
        assert_eq!(b.take(&["n5"], 65535), None);
        assert_eq!(b.take_block(&["n6"], 65530, 8), None);
    }

    #[test]
    fn a_script_says_which_replica_it_is_and_its_ports() {
        let p = Ports { http: 8001, ray: 6380, ray_client: 10001, dist: 20000, master: 29500 };
        let text = format!(
            "#!/bin/bash\n#SBATCH --comment=llmgw.io/model=a%20b,llmgw.io/replica=3,llmgw.io/profile=p\n{}\n",
            line(&p)
        );
        assert_eq!(identity(&text), Some(("a b".to_string(), 3)));
        assert_eq!(ports(&text), Some(p));
    }
}
