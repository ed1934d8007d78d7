//! Diagnostics: every problem llmgw finds in a file, with a stable code, the
//! span it points at, and a line that says what to change.
//!
//! Checks collect `Diag`s instead of returning at the first problem, so one
//! run of `lint` (or a failed `place`) shows everything that is wrong at once.

use std::fmt;

use crate::doc::Span;
pub use crate::source::{Source, source};

macro_rules! codes {
    ($($variant:ident => $code:literal, $what:literal;)*) => {
        /// Stable diagnostic codes. Scripts and CI filters match on these, so a
        /// code, once published, keeps its meaning.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Code { $(#[doc = $what] $variant),* }

        impl Code {
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $code),* }
            }
        }
    };
}

codes! {
    Io => "llmgw::io", "a file could not be read or written";
    Syntax => "llmgw::syntax", "the file is not valid TOML, YAML or JSON";
    UnknownField => "llmgw::schema::unknown-field", "a field llmgw does not know";
    WrongType => "llmgw::schema::wrong-type", "a value of the wrong type";
    MissingField => "llmgw::schema::missing-field", "a required field is absent";
    DuplicateKey => "llmgw::schema::duplicate-key", "the same key twice in one table";
    OutOfRange => "llmgw::schema::out-of-range", "a number outside what the field accepts";
    ControlCharacter => "llmgw::schema::control-character", "a name or id holding a newline or another control character";
    DuplicateModel => "llmgw::catalog::duplicate-model", "two models with one name";
    DuplicateProfile => "llmgw::catalog::duplicate-profile", "two profiles with one name in a model";
    UnknownEngine => "llmgw::catalog::unknown-engine", "an engine llmgw does not know";
    UnknownDtype => "llmgw::catalog::unknown-dtype", "a dtype other than bf16, fp16, fp8, int8, int4, fp4";
    EnvName => "llmgw::catalog::env-name", "an env name that is not a POSIX identifier";
    EnvRuns => "llmgw::catalog::env-runs", "an env name a shell, the loader or llmgw's scripts read as code";
    SingleNodeEngine => "llmgw::catalog::single-node-engine", "a multi-node profile for an engine that runs on one node only";
    MigProfileShape => "llmgw::catalog::mig-profile-shape", "a mig_profile on a profile that is not one GPU on one node";
    RayNotInImage => "llmgw::catalog::ray-not-in-image", "launcher = \"ray\" across nodes with an image that ships no Ray";
    NoArmImage => "llmgw::catalog::no-arm64-image", "an engine with no arm64 image, for arm64 nodes";
    UntypedGres => "llmgw::render::untyped-gres", "GPUs asked of Slurm without a gres type, on nodes not imported from Slurm";
    FitTooSmall => "llmgw::fit::too-small", "a profile whose GPUs cannot hold even the weights";
    FitMargins => "llmgw::fit::margins", "a profile whose GPUs hold the weights but not the room to serve them";
    FitNoShape => "llmgw::fit::no-shape", "a memory-fit setting on a profile whose model gives no shape (config or arch)";
    MaxModelLen => "llmgw::fit::max-model-len", "a max_model_len past the longest context the model takes";
    Shape => "llmgw::catalog::shape", "a model shape (config or arch) that cannot be used";
    GpuClassRequired => "llmgw::catalog::gpu-class-required", "a GPU-only engine with no gpu_class";
    NodesRange => "llmgw::catalog::nodes-range", "nodes outside 1..=1024";
    GpusPerNodeRange => "llmgw::catalog::gpus-per-node-range", "gpus_per_node outside 1..=64 on a GPU profile";
    BadToleration => "llmgw::catalog::toleration", "a toleration that is not `key`, `key=value`, `key:Effect` or `key=value:Effect`";
    EmptyLabel => "llmgw::catalog::empty-label", "a node_selector entry with an empty key or value";
    NoProfiles => "llmgw::catalog::no-profiles", "a model with replicas but no profile to place them with";
    DiskWithoutSource => "llmgw::catalog::disk-without-source", "min_disk_gb with no source, so it can never be checked";
    EqualPriority => "llmgw::catalog::equal-priority", "two profiles of a model with the same priority";
    UnknownGpuClass => "llmgw::catalog::unknown-gpu-class", "a gpu_class that no node of the inventory has";
    ClassAlias => "llmgw::catalog::class-alias", "a GPU class the fleet also has under a longer or shorter name";
    SelectorMatchesNothing => "llmgw::catalog::selector-matches-nothing", "a node_selector that no node of the inventory satisfies";
    UnknownMigProfile => "llmgw::catalog::unknown-mig-profile", "a mig_profile that no GPU of the inventory offers";
    NeverFits => "llmgw::catalog::never-fits", "a profile no node of the inventory could ever hold";
    EngineNowhere => "llmgw::catalog::engine-nowhere", "an engine that no reporting node has installed";
    DuplicateNode => "llmgw::inventory::duplicate-node", "two nodes with one id";
    EmptyNodeId => "llmgw::inventory::empty-id", "a node with an empty id";
    DuplicateGpu => "llmgw::inventory::duplicate-gpu", "two GPUs with one index on a node";
    UnknownGpu => "llmgw::inventory::unknown-gpu", "an allocation naming a GPU the node does not have";
    GpuAllocatedTwice => "llmgw::inventory::gpu-allocated-twice", "a GPU held by two allocations";
    UnknownPeer => "llmgw::inventory::unknown-peer", "an NVLink peer that is not a GPU of the node";
    UnknownState => "llmgw::inventory::unknown-state", "a node state other than ready, cordoned, draining, down";
    MixedVendorClass => "llmgw::inventory::mixed-vendor-class", "one GPU class given to GPUs of two vendors";
    FabricKinds => "llmgw::inventory::fabric-kinds", "one fabric given different kinds on different nodes";
    UnknownFabricKind => "llmgw::inventory::unknown-fabric-kind", "a fabric kind other than infiniband, roce, nvlink";
    UnknownVendor => "llmgw::inventory::unknown-vendor", "a GPU vendor other than nvidia and amd";
    NoState => "llmgw::inventory::no-state", "a node with no state, taken as ready";
    InventoryEngine => "llmgw::inventory::unknown-engine", "an inventory engine name that is no engine llmgw knows";
    SmallUnit => "llmgw::inventory::unit", "a size too small for its unit (MiB, bytes)";
    MigWithoutMigMode => "llmgw::inventory::mig-without-mig-mode", "MIG devices on a GPU without mig = true";
    DuplicateMig => "llmgw::inventory::duplicate-mig", "two MIG devices with one index on a GPU";
    UnknownMig => "llmgw::inventory::unknown-mig-device", "an allocation naming a MIG device the GPU does not have";
    MigHeldTwice => "llmgw::inventory::mig-device-held-twice", "a MIG device held by two allocations";
    MigHeldWhole => "llmgw::inventory::mig-held-whole", "a GPU held whole while one of its MIG devices is held too";
    BadTaint => "llmgw::inventory::taint", "a node taint that is not `key=value:Effect` or `key:Effect`";
    MigNeedsOneGpu => "llmgw::inventory::mig-needs-one-gpu", "mig_devices in an allocation that does not name exactly one GPU";
    DefaultPrefixFabric => "llmgw::inventory::default-prefix-fabric", "a fabric named after its subnet manager";
    UnusedGpuClass => "llmgw::inventory::unused-gpu-class", "a GPU class that no profile of the catalogs given asks for";
    UnreadMemory => "llmgw::import::unread-memory", "a GPU memory value that does not read, taken as unknown";
    UnknownMemory => "llmgw::import::unknown-memory", "GPUs whose memory no label or device gives, so the memory fit is skipped for them";
    SliceNumbering => "llmgw::kubernetes::slice-numbering", "GPUs of DRA slices numbered by their place on the PCI bus, for want of a minor number in their names";
    DuplicateUuid => "llmgw::kubernetes::duplicate-uuid", "two devices that publish one UUID";
    ClaimsNotGiven => "llmgw::kubernetes::claims-not-given", "pods that claim devices through DRA, imported without --claims";
    ForeignClaim => "llmgw::kubernetes::foreign-claim", "a DRA claim with llmgw's labels that is not a claim of its replica's pods";
    DraAndDevicePlugin => "llmgw::kubernetes::dra-and-device-plugin", "a node whose GPUs both NVIDIA's DRA driver and its device plugin hand out";
    NoGpus => "llmgw::discover::no-gpus", "NVML reported no GPUs: a CPU-only node";
    DefaultSubnetPrefix => "llmgw::discover::default-subnet-prefix", "an InfiniBand fabric named by its subnet manager, not its prefix";
    ProbeFailed => "llmgw::discover::probe-failed", "an engine probe that timed out or failed";
    NotARail => "llmgw::discover::not-a-rail", "an adapter left out of fabrics: it shares no PCIe switch with a GPU";
    DuplicateReplica => "llmgw::plan::duplicate-replica", "a plan that lists one replica twice";
    StalePlan => "llmgw::render::stale-plan", "a plan that no longer fits the inventory it is rendered on";
    OtherCatalog => "llmgw::render::other-catalog", "render given another catalog than the one the plan was made from";
    NoFittingProfile => "llmgw::render::no-fitting-profile", "a running replica that no profile of its model fits";
    CannotRender => "llmgw::render::cannot-render", "a replica llmgw cannot start on that platform";
    NoResources => "llmgw::render::no-resources", "replicas rendered without CPU or memory requests";
    NoRdma => "llmgw::render::no-rdma", "multi-node pods without an RDMA device: NCCL falls back to TCP";
    SharedPicker => "llmgw::render::shared-picker", "several InferencePools that name one endpoint picker, which serves one pool";
    PortsApart => "llmgw::render::ports-apart", "a model whose replicas listen on different ports behind one InferencePool";
    UnknownModel => "llmgw::cli::unknown-model", "a model name the catalog does not have";
    UnknownReplica => "llmgw::cli::unknown-replica", "a replica index the model does not have";
    BadArgument => "llmgw::cli::bad-argument", "a command-line value llmgw cannot use";
    TimeSliced => "llmgw::kubernetes::time-sliced", "GPUs offered several times over by time-slicing";
    PodOnUnknownNode => "llmgw::kubernetes::pod-on-unknown-node", "a pod holding GPUs on a node the node list lacks";
    GpusAssumed => "llmgw::kubernetes::gpus-assumed", "pods holding GPUs without saying which";
    ForeignPod => "llmgw::kubernetes::foreign-pod", "a pod outside the namespaces --namespace names that carries llmgw's labels";
    ClaimedTwice => "llmgw::kubernetes::claimed-twice", "one replica claimed by two pods";
    LlmgwNamespaces => "llmgw::kubernetes::namespaces", "llmgw's pods taken from every namespace, as no --namespace was given";
    SlurmGres => "llmgw::slurm::gres", "a Gres or GresUsed string llmgw cannot read";
    Hostlist => "llmgw::slurm::hostlist", "a malformed hostlist expression or topology file";
    EmptyInput => "llmgw::import::empty-input", "an import given no input at all: an empty file or standard input";
    TooManyProblems => "llmgw::import::too-many-problems", "an import that stopped collecting problems at 100";
    TooManyGpus => "llmgw::import::too-many-gpus", "more than 1024 GPUs on a node, or more than 7 MIG devices on a GPU";
    OverSubscribed => "llmgw::import::over-subscribed", "workloads that hold more GPUs or MIG devices than the node has";
    Unloadable => "llmgw::import::unloadable", "an imported inventory that llmgw's own loader refuses (a bug in the import)";
    GpuAnnotation => "llmgw::kubernetes::gpus-annotation", "an llmgw.io/gpus or llmgw.io/mig-devices annotation that cannot be what the pod holds";
    NoDevicePlugin => "llmgw::kubernetes::no-device-plugin", "GPUs the labels count but the kubelet does not offer";
    OtherVendor => "llmgw::import::other-vendor", "GPUs of a vendor llmgw does not import yet (Intel, Habana)";
    MigResources => "llmgw::kubernetes::mig-resources", "MIG labels that disagree with the MIG resources a node advertises";
    SlurmNoState => "llmgw::slurm::no-state", "a Slurm node with no state, which llmgw will not take as ready";
    StaleCatalog => "llmgw::render::stale-catalog", "a catalog that no longer wants a replica the plan has";
    NotOurs => "llmgw::render::not-ours", "a file render would replace that llmgw did not write";
    FolderBusy => "llmgw::render::folder-busy", "another render writing into the same folder";
    GgufFileName => "llmgw::catalog::gguf-file-name", "a llama.cpp source that is a file name, with no copy to run";
    SlurmGpusAssumed => "llmgw::slurm::gpus-assumed", "GPUs a node says are in use without saying which";
    SlurmGpusUnknown => "llmgw::slurm::gpus-unknown", "a node with jobs whose output does not say how many GPUs are in use";
    CpusFull => "llmgw::slurm::cpus-full", "a node whose CPUs are all allocated, so its free GPUs can start nothing";
    MigGres => "llmgw::slurm::mig-gres", "MIG devices in a node's gres, put on GPUs that Slurm does not list";
    TwoSwitches => "llmgw::slurm::two-switches", "a node under two leaf switches of the topology";
    UnmatchedTopology => "llmgw::slurm::unmatched-topology", "topology names that match no imported node or switch";
    TopologyCycle => "llmgw::slurm::topology-cycle", "switches that are their own ancestors in the topology";
    SlurmJob => "llmgw::slurm::job", "a job record or llmgw job comment that llmgw cannot read";
    ForeignJob => "llmgw::slurm::foreign-job", "a job of another user than --jobs-user that carries llmgw's comment";
    JobOnUnknownNode => "llmgw::slurm::job-on-unknown-node", "a job on a node the node list lacks";
    PendingWithoutNode => "llmgw::slurm::pending-without-node", "a pending llmgw job that names no node, so it cannot be counted";
    TooLarge => "llmgw::io::too-large", "an input file over the size ceiling (--max-input-bytes)";
    WrongKind => "llmgw::input::wrong-kind", "a file of another kind than the command reads: a Kubernetes or Slurm listing to import first, a catalog for an inventory";
    IncompletePool => "llmgw::kubernetes::incomplete-pool", "a DRA pool whose slices are not all in the file, so its node keeps the GPUs its labels give";
    SlicesDisagree => "llmgw::kubernetes::slices-disagree", "GPU labels that disagree with the GPUs a node's ResourceSlices publish";
    SliceUnknownNode => "llmgw::kubernetes::slice-unknown-node", "ResourceSlices or claims of a node the node list lacks";
    ClaimUnknownDevice => "llmgw::kubernetes::claim-unknown-device", "a claim allocated a device no imported slice publishes";
    SharedComputeDomain => "llmgw::render::shared-compute-domain", "a node holding two multi-node replicas on an NVLink domain, which NVIDIA's driver cannot give two ComputeDomains";
    HeaderValue => "llmgw::render::header-value", "a model name an HTTPRoute cannot match in a header";
    LitellmWildcard => "llmgw::render::litellm-wildcard", "a model name with `*`, which LiteLLM takes as a wildcard";
    NoUuid => "llmgw::render::no-uuid", "a planned GPU without a uuid, which a DRA claim cannot pin";
    CelTooLong => "llmgw::render::cel-too-long", "a DRA claim selector longer than the API takes";
    NotAHost => "llmgw::render::not-a-host", "a node id that is no host name, where render needs one as a URL's host";
    EndpointsInFolder => "llmgw::render::endpoints-in-folder", "an --endpoints file inside the folder render writes";
    RelativePath => "llmgw::engines::relative-path", "a relative PATH entry, ignored when looking for engines";
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Clone, Debug)]
pub struct Diag {
    pub severity: Severity,
    pub code: Code,
    pub message: String,
    pub src: Option<Source>,
    /// The first label is the primary one.
    pub labels: Vec<(Span, String)>,
    pub help: Option<String>,
}

impl Diag {
    pub fn error(code: Code, message: impl Into<String>) -> Self {
        Diag { severity: Severity::Error, code, message: message.into(), src: None, labels: Vec::new(), help: None }
    }
    pub fn warning(code: Code, message: impl Into<String>) -> Self {
        Diag { severity: Severity::Warning, ..Diag::error(code, message) }
    }
    pub fn at(mut self, src: &Source, span: Span, label: impl Into<String>) -> Self {
        self.src = Some(src.clone());
        self.labels.push((span, label.into()));
        self
    }
    pub fn label(mut self, span: Span, label: impl Into<String>) -> Self {
        self.labels.push((span, label.into()));
        self
    }
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
    pub fn file(&self) -> Option<&str> {
        self.src.as_ref().map(|s| s.name())
    }
    pub fn primary(&self) -> Option<Span> {
        self.labels.first().map(|l| l.0)
    }
    /// 1-based line and column (in characters) of the primary span.
    pub fn line_col(&self) -> Option<(usize, usize)> {
        let (src, span) = (self.src.as_ref()?, self.primary()?);
        Some(src.line_col(span.start))
    }
}

impl fmt::Display for Diag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Diag {}

/// Sorts diagnostics by file, then position, keeping the order of equal ones.
pub fn sort(diags: &mut [Diag]) {
    diags.sort_by(|a, b| (a.file(), a.primary().map(|s| s.start)).cmp(&(b.file(), b.primary().map(|s| s.start))));
}

/// The help for a name that is not one of `known`: "did you mean `x`?" for
/// a near miss, else `{intro}: a, b, c`.
pub fn suggest<'a, I>(given: &str, known: I, intro: &str) -> String
where
    I: IntoIterator<Item = &'a str> + Clone,
{
    match did_you_mean(given, known.clone()) {
        Some(s) => format!("did you mean `{s}`?"),
        None => format!("{intro}: {}", known.into_iter().collect::<Vec<_>>().join(", ")),
    }
}

/// The closest of `known` to `given`, when it is close enough to be a typo.
pub fn did_you_mean<'a, I: IntoIterator<Item = &'a str>>(given: &str, known: I) -> Option<&'a str> {
    let given_l = given.to_ascii_lowercase();
    known
        .into_iter()
        .map(|k| (strsim::jaro_winkler(&given_l, &k.to_ascii_lowercase()), k))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}

/// "a, b, c, d, e and 26 more".
pub fn shorten(ids: &[&str], shown: usize) -> String {
    if ids.len() <= shown + 1 {
        return match ids {
            [] => String::new(),
            [one] => (*one).to_string(),
            [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
        };
    }
    format!("{} and {} more", ids[..shown].join(", "), ids.len() - shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_namespaced() {
        let mut seen = std::collections::HashSet::new();
        for c in Code::ALL {
            assert!(seen.insert(c.as_str()), "duplicate code {}", c.as_str());
            assert!(c.as_str().starts_with("llmgw::"));
        }
    }

    #[test]
    fn suggestions_only_for_near_misses() {
        assert_eq!(did_you_mean("vlm", ["vllm", "sglang"]), Some("vllm"));
        assert_eq!(did_you_mean("gpus_per_nod", ["gpus_per_node", "nodes"]), Some("gpus_per_node"));
        assert_eq!(did_you_mean("zzzz", ["vllm", "sglang"]), None);
    }
}
