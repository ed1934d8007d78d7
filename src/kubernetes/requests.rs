//! What a pod holds on its node, as the scheduler counts it (its
//! NodeResourcesFit plugin): each resource summed over the app containers,
//! raised to the largest init container where that is more (sidecars,
//! init containers that keep running, count beside everything started
//! after them), plus the pod's overhead. A limit without a request is the
//! request, as the API server defaults it.

use std::collections::BTreeMap;

use super::podspec::{Container, Pod};
use super::quantity;
use crate::diag::{Code, Diag};
use crate::import::file::Text as Quantity;
use crate::import::file::{File, Step};
use crate::import::{MAX_GPUS_PER_NODE, MAX_MIG_PER_GPU};

/// What a pod asks for: whole GPUs, MIG devices per profile, CPUs, memory.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Demands {
    /// Whole NVIDIA GPUs (`nvidia.com/gpu`).
    pub whole: u64,
    /// Whole AMD GPUs (`amd.com/gpu`, the AMD device plugin's resource).
    pub amd: u64,
    /// MIG devices wanted per profile.
    pub migs: Vec<(String, u64)>,
    pub cpus: f64,
    /// MiB, rounded up: a pod that holds part of a MiB holds it.
    pub memory_mib: u64,
}

impl Demands {
    /// Whether the pod holds anything llmgw counts.
    pub fn any(&self) -> bool {
        self.holds_gpus() || self.cpus > 0.0 || self.memory_mib > 0
    }

    /// Whether the pod holds GPUs or MIG devices of any vendor.
    pub fn holds_gpus(&self) -> bool {
        self.whole > 0 || self.amd > 0 || self.migs.iter().any(|m| m.1 > 0)
    }

    fn add(&mut self, o: &Demands) {
        self.whole += o.whole;
        self.amd += o.amd;
        for (p, n) in &o.migs {
            match self.migs.iter_mut().find(|m| &m.0 == p) {
                Some(m) => m.1 += n,
                None => self.migs.push((p.clone(), *n)),
            }
        }
        self.cpus += o.cpus;
        self.memory_mib = self.memory_mib.saturating_add(o.memory_mib);
    }

    /// Each resource the larger of the two.
    fn raise(&mut self, o: &Demands) {
        self.whole = self.whole.max(o.whole);
        self.amd = self.amd.max(o.amd);
        for (p, n) in &o.migs {
            match self.migs.iter_mut().find(|m| &m.0 == p) {
                Some(m) => m.1 = m.1.max(*n),
                None => self.migs.push((p.clone(), *n)),
            }
        }
        self.cpus = self.cpus.max(o.cpus);
        self.memory_mib = self.memory_mib.max(o.memory_mib);
    }
}

const GPU_CAP: f64 = MAX_GPUS_PER_NODE as f64;
const MIG_CAP: f64 = (MAX_GPUS_PER_NODE * MAX_MIG_PER_GPU) as f64;
const CPU_CAP: f64 = u32::MAX as f64;
/// 8 EiB, as the node quantities.
const BYTES_CAP: f64 = (1u64 << 63) as f64;

/// The pod's demands, or the error at the quantity that is none.
pub fn of(file: &File<'_>, i: usize, pod: &Pod) -> Result<Demands, Diag> {
    let Some(spec) = pod.spec.as_ref() else { return Ok(Demands::default()) };
    let one = |list: &'static str, c: usize, container: &Container| container_demands(file, i, pod, list, c, container);
    let mut apps = Demands::default();
    for (c, container) in spec.containers.iter().enumerate() {
        apps.add(&one("containers", c, container)?);
    }
    let mut sidecars = Demands::default();
    let mut peak = Demands::default();
    for (c, container) in spec.init_containers.iter().flatten().enumerate() {
        let d = one("initContainers", c, container)?;
        if container.restart_policy.as_deref() == Some("Always") {
            sidecars.add(&d);
            peak.raise(&sidecars);
        } else {
            let mut with = sidecars.clone();
            with.add(&d);
            peak.raise(&with);
        }
    }
    apps.add(&sidecars);
    apps.raise(&peak);
    // More GPUs than a node may have, over all containers.
    if apps.whole.max(apps.amd) > MAX_GPUS_PER_NODE {
        let mut p = file.item_path(i);
        p.extend([Step::Key("spec"), Step::Key("containers")]);
        return Err(file.error(
            Code::TooManyGpus,
            &p,
            format!(
                "pod {}: its containers ask for {} GPUs, more than the 1024 a node may have",
                pod_name(pod),
                apps.whole.max(apps.amd)
            ),
            "here",
            "kubectl prints whole counts of GPUs, at most 1024 a node",
        ));
    }
    if let Some(overhead) = &spec.overhead {
        let bad = |key: &str, q: &str| {
            let mut p = file.item_path(i);
            p.extend([Step::Key("spec"), Step::Key("overhead")]);
            p.push(Step::Key(key));
            file.error(
                Code::OutOfRange,
                &p,
                format!("pod {}: overhead {key} is `{q}`, not a quantity llmgw takes", pod_name(pod)),
                "here",
                "the RuntimeClass writes its overhead as quantities such as 250m or 120Mi",
            )
        };
        apps.cpus += cpus_of(overhead.get("cpu")).map_err(|q| bad("cpu", &q))?;
        apps.memory_mib =
            apps.memory_mib.saturating_add(mib_of(overhead.get("memory")).map_err(|q| bad("memory", &q))?);
    }
    Ok(apps)
}

pub fn pod_name(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or_default(),
        pod.metadata.name.as_deref().unwrap_or_default()
    )
}

/// CPUs of a quantity (0 when absent), or the text that is no CPU count.
fn cpus_of(q: Option<&Quantity>) -> Result<f64, String> {
    let Some(q) = q else { return Ok(0.0) };
    match quantity::parse(&q.0) {
        Some(n) if (0.0..=CPU_CAP).contains(&n) => Ok(crate::units::round_cpus(n)),
        _ => Err(q.0.clone()),
    }
}

/// MiB of a memory quantity, rounded up (0 when absent).
fn mib_of(q: Option<&Quantity>) -> Result<u64, String> {
    let Some(q) = q else { return Ok(0) };
    match quantity::parse(&q.0) {
        Some(n) if (0.0..=BYTES_CAP).contains(&n) => crate::units::mib_up_of_bytes(n).ok_or_else(|| q.0.clone()),
        _ => Err(q.0.clone()),
    }
}

fn container_demands(
    file: &File<'_>,
    i: usize,
    pod: &Pod,
    list: &'static str,
    c: usize,
    container: &Container,
) -> Result<Demands, Diag> {
    let res = container.resources.as_ref();
    let limits = res.and_then(|r| r.limits.as_ref());
    let requests = res.and_then(|r| r.requests.as_ref());
    let bad = |which: &'static str, key: &str, q: &str, what: &str| {
        let mut p = file.item_path(i);
        p.extend([Step::Key("spec"), Step::Key(list), Step::Index(c), Step::Key("resources"), Step::Key(which)]);
        p.push(Step::Key(key));
        let code = if what.contains("GPU") || what.contains("MIG") { Code::TooManyGpus } else { Code::OutOfRange };
        file.error(
            code,
            &p,
            format!("pod {}: {which} {key} is `{q}`, not {what}", pod_name(pod)),
            "here",
            "kubectl prints whole counts of GPUs, and quantities such as 16, 500m or 64Gi",
        )
    };
    let mut d = Demands::default();
    for (k, q) in limits.into_iter().flatten() {
        let v = quantity::parse(&q.0);
        if k == crate::vendor::NVIDIA_GPU || k == crate::vendor::AMD_GPU {
            let count = if k == crate::vendor::AMD_GPU { &mut d.amd } else { &mut d.whole };
            match v {
                Some(n) if n >= 0.0 && n.fract() == 0.0 && n <= GPU_CAP => *count = n as u64,
                _ => return Err(bad("limits", k, &q.0, "a GPU count from 0 to 1024")),
            }
        } else if let Some(profile) = k.strip_prefix("nvidia.com/mig-") {
            match v {
                Some(n) if n >= 0.0 && n.fract() == 0.0 && n <= MIG_CAP => d.migs.push((profile.to_string(), n as u64)),
                _ => return Err(bad("limits", k, &q.0, "a MIG device count from 0 to 7168")),
            }
        }
    }
    // A request, else the limit (which the API server copies into it).
    let pick = |key: &str| -> Option<(&'static str, &Quantity)> {
        requests
            .and_then(|r: &BTreeMap<String, Quantity>| r.get(key))
            .map(|q| ("requests", q))
            .or_else(|| limits.and_then(|l| l.get(key)).map(|q| ("limits", q)))
    };
    if let Some((which, q)) = pick("cpu") {
        d.cpus = cpus_of(Some(q)).map_err(|q| bad(which, "cpu", &q, "a CPU quantity"))?;
    }
    if let Some((which, q)) = pick("memory") {
        d.memory_mib = mib_of(Some(q)).map_err(|q| bad(which, "memory", &q, "a memory quantity"))?;
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn demands(spec: serde_json::Value) -> Demands {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p", "namespace": "ns"}, "spec": spec
        }))
        .unwrap();
        let src = crate::diag::source("pods.json", "{}".into());
        let file = File::read_json(&src, "").unwrap();
        of(&file, 0, &pod).unwrap()
    }

    fn c(cpu: &str, mem: &str) -> serde_json::Value {
        serde_json::json!({"name": "c", "resources": {"requests": {"cpu": cpu, "memory": mem}}})
    }

    #[test]
    fn containers_add_up_and_init_containers_raise_them() {
        let d = demands(serde_json::json!({"containers": [c("2", "1Gi"), c("500m", "512Mi")]}));
        assert_eq!((d.cpus, d.memory_mib), (2.5, 1536));
        // The biggest init container wins where it is bigger.
        let d = demands(serde_json::json!({
            "containers": [c("1", "1Gi")], "initContainers": [c("4", "256Mi"), c("2", "2Gi")]
        }));
        assert_eq!((d.cpus, d.memory_mib), (4.0, 2048));
        // A sidecar runs beside the app containers and the init containers after it.
        let mut sidecar = c("1", "1Gi");
        sidecar["restartPolicy"] = "Always".into();
        let d = demands(serde_json::json!({
            "containers": [c("1", "1Gi")], "initContainers": [sidecar, c("3", "100Mi")],
            "overhead": {"cpu": "250m", "memory": "120Mi"}
        }));
        assert_eq!((d.cpus, d.memory_mib), (4.25, 2168));
        // A limit alone is the request; decimal units round up to MiB.
        let d = demands(serde_json::json!({"containers": [
            {"name": "c", "resources": {"limits": {"cpu": "3", "memory": "1G", "nvidia.com/gpu": "2"}}}
        ]}));
        assert_eq!((d.cpus, d.memory_mib, d.whole), (3.0, 954, 2));
    }
}
