//! Jobs from `scontrol show job -d` text: each job's shares of its nodes,
//! CPU ids and GPU indices as the text writes them.

use super::*;

/// Each node's CPUs and memory (MiB), in the order of the job's nodes.
pub(super) type PerNode = (Vec<Option<f64>>, Vec<Option<u64>>);

/// CPUs in a `CPU_IDs=0-3,8` list, counted without expanding it.
pub(super) fn cpu_ids(list: &str) -> Option<f64> {
    let mut n = 0u64;
    for part in list.split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (u64, u64) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
        n = n.saturating_add(b.checked_sub(a)?.saturating_add(1));
    }
    (n > 0).then_some(n as f64)
}

pub(super) fn text_jobs(src: &Source) -> Result<Vec<Job>, Vec<Diag>> {
    let t = src.text();
    let help = "give what `scontrol -d show job -o` prints: `JobId=... JobState=...`";
    let records = text::records_in(src, "JobId", help, &text::job_layout())?;
    let mut left = crate::import::MAX_NAMES;
    let mut out = Vec::with_capacity(records.len());
    let mut errors = crate::import::Problems::default();
    for r in &records {
        let bad = |why: String, key: &str| {
            Diag::error(Code::SlurmJob, format!("job {}: {why}", r.get(t, "JobId").unwrap_or("?")))
                .at(src, r.span_of(key).unwrap_or(r.span), "here")
                .help(HELP)
        };
        let phase = phase(&[r.get(t, "JobState").unwrap_or_default().to_string()]);
        let mut job =
            Job::new(r.get(t, "JobId").unwrap_or_default().to_string(), phase, r.get(t, "Comment").and_then(identity));
        job.span = r.span;
        // `UserId=alice(1000)`.
        if let Some(u) = r.get(t, "UserId") {
            let (name, uid) = u.split_once('(').unwrap_or((u, ""));
            job.user = Some(name.to_string()).filter(|n| !n.is_empty());
            job.uid = uid.strip_suffix(')').and_then(|n| n.parse().ok());
        }
        let result = match phase {
            Phase::Done => Ok(()),
            Phase::Pending => nodes_of(r.get(t, "ReqNodeList").unwrap_or_default(), &mut left)
                .map(|w| {
                    job.ask = text_ask(t, r, w.len());
                    job.wanted = w;
                })
                .map_err(|w| bad(w, "ReqNodeList")),
            Phase::Holding => text_shares(t, r, &mut job.shares, &mut left).map_err(|(w, k)| bad(w, k)),
        };
        match result {
            Ok(()) if job.matters() => out.push(job),
            Ok(()) => {}
            Err(d) => errors.push(d),
        }
        if errors.full() {
            break;
        }
    }
    errors.into_result()?;
    Ok(out)
}

/// The per-node lines of `scontrol -d show job`: `Nodes=<hostlist>
/// CPU_IDs=<list> Mem=<MB> GRES=<gres>` (`GRES_IDX=gpu(IDX:0)` before
/// 20.11). Without `-d` there are none: the job's nodes from `NodeList`,
/// its CPUs spread evenly, no GPU indices.
pub(super) fn text_shares(
    t: &str,
    r: &text::TextRecord,
    out: &mut Vec<Share>,
    left: &mut u64,
) -> Result<(), (String, &'static str)> {
    let mut current: Vec<usize> = Vec::new();
    for (key, _, value) in &r.fields {
        let v = &t[value.start..value.end];
        match key.as_str() {
            "Nodes" => {
                let names = nodes_of(v, left).map_err(|w| (w, "Nodes"))?;
                current = (out.len()..out.len() + names.len()).collect();
                out.extend(names.into_iter().map(|node| Share {
                    node,
                    gres: String::new(),
                    cpus: None,
                    memory_mb: None,
                }));
            }
            "CPU_IDs" => {
                let c = cpu_ids(v);
                current.iter().for_each(|&k| out[k].cpus = c);
            }
            "Mem" => {
                let m = tres::memory_mb(v);
                current.iter().for_each(|&k| out[k].memory_mb = m);
            }
            "GRES" | "GRES_IDX" => current.iter().for_each(|&k| out[k].gres = v.to_string()),
            _ => {}
        }
    }
    if out.is_empty() {
        let nodes = nodes_of(r.get(t, "NodeList").unwrap_or_default(), left).map_err(|w| (w, "NodeList"))?;
        let total: Option<f64> = r.get(t, "NumCPUs").and_then(|c| c.parse::<u32>().ok()).map(f64::from);
        let cpus = total.filter(|_| !nodes.is_empty()).map(|c| c / nodes.len() as f64);
        let memory = each(tres::parse(r.get(t, "TRES").unwrap_or_default()).memory_mb, nodes.len());
        out.extend(nodes.into_iter().map(|node| Share { node, gres: String::new(), cpus, memory_mb: memory }));
    }
    Ok(())
}

/// What a pending job of `scontrol show job` asks of each node:
/// `TresPerNode` GPUs (else its `TRES` over `NumNodes`), `CPUs/Task` (one
/// task a node), `MinMemoryNode`, else `MinMemoryCPU` times those CPUs,
/// else its `TRES` memory over its nodes.
pub(super) fn text_ask(t: &str, r: &text::TextRecord, wanted: usize) -> Ask {
    let get = |k: &str| r.get(t, k).unwrap_or_default();
    let req = tres::parse(get("TRES"));
    // `NumNodes=2-2`, `NumNodes=1`: the least it runs on.
    let nodes = get("NumNodes")
        .split('-')
        .next()
        .and_then(|n| n.parse::<u64>().ok())
        .or(req.nodes)
        .map_or(wanted.max(1), |n| n.max(1) as usize);
    let cpus = get("CPUs/Task").parse::<u64>().ok().or_else(|| each(req.cpus, nodes));
    let memory = match (tres::memory_mb(get("MinMemoryNode")), tres::memory_mb(get("MinMemoryCPU")), cpus) {
        (Some(m), _, _) => Some(m),
        (None, Some(m), Some(c)) => Some(m.saturating_mul(c)),
        _ => each(req.memory_mb, nodes),
    };
    Ask { gpus: gpu_ask(get("TresPerNode"), &req, nodes), cpus: cpus.map(|c| c as f64), memory_mb: memory }
}
