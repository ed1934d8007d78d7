//! The `inventory` command's arguments: importing from Kubernetes and Slurm,
//! merging, synthesizing.

use super::*;

#[derive(Subcommand, Debug)]
pub enum InventoryCommand {
    /// Join node snapshots into one inventory
    Merge(MergeArgs),
    /// Write a synthetic fleet inventory for capacity planning
    Synth(SynthArgs),
    /// An inventory from a scheduler's view of the fleet
    #[command(subcommand)]
    Import(ImportCommand),
}

#[derive(Subcommand, Debug)]
pub enum ImportCommand {
    /// From `kubectl get nodes -o json|yaml` (and `kubectl get pods -A -o json`)
    Kubernetes(KubernetesImportArgs),
    /// From `sinfo --json`, `scontrol show nodes --json` or `scontrol -d show node -o`
    Slurm(SlurmImportArgs),
}

#[derive(Args, Debug)]
pub struct SlurmImportArgs {
    /// The output of `sinfo --json`, `scontrol show nodes --json` or `scontrol -d show node -o` (`-`: stdin)
    #[arg(value_name = "FILE")]
    pub nodes: PathBuf,
    /// Slurm's topology.conf or topology.yaml: nodes under one top-level switch (or in one block) share a fabric
    #[arg(long, value_name = "FILE")]
    pub topology: Option<PathBuf>,
    /// A feature prefix naming the node's fabric, when there is no topology (`ib-` for a feature `ib-east`)
    #[arg(long, value_name = "PREFIX")]
    pub fabric_feature: Option<String>,
    /// The output of `squeue --json` or `scontrol -d show job -o`: llmgw's jobs become its replicas, others stay busy
    #[arg(long, value_name = "JOBS")]
    pub jobs: Option<PathBuf>,
    /// Only this user's jobs (a name or uid) are llmgw's replicas; other users' jobs with llmgw's comment stay foreign [default: $USER, else $LOGNAME, else your uid]
    #[arg(long, value_name = "USER")]
    pub jobs_user: Option<String>,
    /// Write here (atomically) instead of stdout; the format follows the extension
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Output format (default: from the extension of -o, else toml)
    #[arg(long, value_enum)]
    pub format: Option<crate::doc::Format>,
}

#[derive(Args, Debug)]
pub struct KubernetesImportArgs {
    /// The output of `kubectl get nodes -o json` or `-o yaml` (`-`: stdin)
    #[arg(value_name = "NODES")]
    pub nodes: PathBuf,
    /// The output of `kubectl get pods -A -o json`: pods holding GPUs or CPUs become allocations
    #[arg(long, value_name = "PODS")]
    pub pods: Option<PathBuf>,
    /// The output of `kubectl get resourceslices -o json`: nodes whose GPUs NVIDIA's DRA driver publishes get them from there, each with its UUID and device name
    #[arg(long, value_name = "SLICES")]
    pub resource_slices: Option<PathBuf>,
    /// The output of `kubectl get resourceclaims -A -o json`: the devices each allocated claim was given are held by its replica
    #[arg(long, value_name = "CLAIMS", requires = "resource_slices")]
    pub claims: Option<PathBuf>,
    /// A node label whose value names the node's fabric, for nodes without llmgw's own labels
    #[arg(long, value_name = "KEY")]
    pub fabric_label: Option<String>,
    /// Only pods in this namespace are llmgw's replicas (repeatable); others with llmgw's labels stay foreign [default: every namespace, with a warning]
    #[arg(long, value_name = "NS")]
    pub namespace: Vec<String>,
    /// Write here (atomically) instead of stdout; the format follows the extension
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Output format (default: from the extension of -o, else toml)
    #[arg(long, value_enum)]
    pub format: Option<crate::doc::Format>,
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Inventory files (TOML, YAML or JSON)
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Write here (atomically) instead of stdout; the format follows the extension
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Output format (default: from the extension of -o, else toml)
    #[arg(long, value_enum)]
    pub format: Option<crate::doc::Format>,
}

#[derive(Args, Debug)]
pub struct SynthArgs {
    /// Node groups as SHAPE:COUNT[@FABRIC][,key=value...], e.g. dgx-h100:64@ib-east,zone=a
    #[arg(value_name = "GROUP", required = true, value_parser = ShapeValues { like: false })]
    pub groups: Vec<String>,
    /// Fraction of nodes made cordoned, 0 to 1 (exactly that share, rounded)
    #[arg(long, value_name = "F", default_value_t = 0.0)]
    pub cordoned: f64,
    /// Fraction of GPUs already allocated, 0 to 1
    #[arg(long, value_name = "F", default_value_t = 0.0)]
    pub load: f64,
    /// Seed, so the same command writes the same fleet
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Prefix of node ids
    #[arg(long, default_value = "node")]
    pub prefix: String,
    /// Write here (atomically) instead of stdout; the format follows the extension
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Output format (default: from the extension of -o, else toml)
    #[arg(long, value_enum)]
    pub format: Option<crate::doc::Format>,
}
