//! The command line, declared once: `--help`, the man pages and the shell
//! completions are all generated from these definitions.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "llmgw",
    version,
    about = "Decides where LLM inference replicas run on a GPU fleet, and says why",
    long_about = "Decides where LLM inference replicas run on a GPU fleet, and says why.\n\n\
        Exit codes: 0 success; 1 the command ran but the answer is no (a replica left \
        unplaced, a lint error, a named engine missing); 2 the input could not be used.",
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// When to colour diagnostics: auto follows the terminal, NO_COLOR,
    /// CLICOLOR_FORCE and TERM=dumb
    #[arg(long, global = true, value_enum, default_value_t, value_name = "WHEN")]
    pub color: crate::term::ColorChoice,
    /// Refuse an input file larger than this many bytes
    #[arg(long, global = true, value_name = "BYTES", default_value_t = crate::input::DEFAULT_MAX_INPUT_BYTES)]
    pub max_input_bytes: u64,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Inspect this machine and print a one-node inventory
    Discover(DiscoverArgs),
    /// Place every replica a catalog asks for
    Place(PlaceArgs),
    /// Show, candidate by candidate, why each replica of one model went where it did
    ExplainPlacement(ExplainArgs),
    /// Check catalogs for CI: every problem at once, each with its source span
    Lint(LintArgs),
    /// Find engines on PATH and run their version commands, safely
    EngineCheck(EngineCheckArgs),
    /// One row per node: state, free GPUs by class, fabrics, engines, memory, disk
    Nodes(NodesArgs),
    /// Work with inventory files
    #[command(subcommand)]
    Inventory(InventoryCommand),
    /// Write what runs a plan where it was placed
    #[command(subcommand)]
    Render(RenderCommand),
    /// How many nodes of a shape to add so that every replica places
    Capacity(CapacityArgs),
    /// What changed between two plans (place --format json): exit 1 if any placement differs
    Diff(DiffArgs),
    /// Draw a plan on its fleet: one self-contained HTML page, a cell per GPU
    Map(MapArgs),
    /// Print shell completions
    Completions(CompletionsArgs),
    /// Print the man page, or write one page per command into a folder
    Man(ManArgs),
}

#[derive(Args, Debug, Clone, Default)]
pub struct InventoryFlag {
    /// A fleet inventory (TOML, YAML or JSON); repeat to merge several.
    /// Without it, this machine is discovered and used
    #[arg(long = "inventory", short = 'i', value_name = "FILE")]
    pub inventory: Vec<PathBuf>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OutputFormat {
    #[default]
    Human,
    Json,
}

/// What `place` writes.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlaceFormat {
    Human,
    Json,
    /// The map of the plan on its fleet (as `llmgw map` draws it)
    Html,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiscoverFormat {
    Toml,
    Json,
    Yaml,
    Nfd,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LintFormat {
    #[default]
    Human,
    Json,
    Github,
}

#[derive(Args, Debug)]
pub struct PlaceArgs {
    /// The catalog of models and profiles
    #[arg(value_name = "CATALOG")]
    pub catalog: PathBuf,
    #[command(flatten)]
    pub inventory: InventoryFlag,
    /// In JSON, why each unplaced replica was left out: grouped reasons, the
    /// full per-node list, or none (closest misses are always given)
    #[arg(long, value_enum, default_value_t, value_name = "FORM")]
    pub rejections: crate::report::place::Rejections,
    /// How new replicas' profiles and nodes are chosen: `order` (the
    /// catalog's order, one at a time) or `most` (together, to place the most)
    #[arg(long, value_enum, default_value_t, value_name = "MODE")]
    pub pack: crate::placement::Pack,
    /// Output format (default: from the extension of -o, else human)
    #[arg(long, value_enum)]
    pub format: Option<PlaceFormat>,
    /// Write the output to this file (atomically) instead of stdout; a .json
    /// name means --format json, a .html name --format html. The summary
    /// is printed on stderr
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct MapArgs {
    /// The plan: what `place --format json` printed (`-`: stdin)
    #[arg(value_name = "PLAN")]
    pub plan: PathBuf,
    /// The inventory the plan was made on (repeat to merge several)
    #[arg(long = "inventory", short = 'i', value_name = "FILE", required = true)]
    pub inventory: Vec<PathBuf>,
    /// Write the page to this file (atomically) instead of stdout
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// The catalog of models and profiles
    #[arg(value_name = "CATALOG")]
    pub catalog: PathBuf,
    /// The model to explain
    #[arg(long, value_name = "NAME")]
    pub model: String,
    /// Only this replica index
    #[arg(long, value_name = "N")]
    pub replica: Option<u32>,
    /// How new replicas' profiles and nodes are chosen: `order` (the
    /// catalog's order, one at a time) or `most` (together, to place the most)
    #[arg(long, value_enum, default_value_t, value_name = "MODE")]
    pub pack: crate::placement::Pack,
    #[command(flatten)]
    pub inventory: InventoryFlag,
    /// Output format (default: from the extension of -o, else human)
    #[arg(long, value_enum)]
    pub format: Option<OutputFormat>,
    /// Write the output to this file (atomically) instead of stdout; a .json
    /// name means --format json
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// List every rejection after the summary
    #[arg(long, short)]
    pub verbose: bool,
}

#[derive(Args, Debug)]
pub struct LintArgs {
    /// Catalogs and inventories to check; a file with a top-level `node` is
    /// an inventory
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Also check the catalogs against this fleet (repeat to merge several)
    #[arg(long = "inventory", short = 'i', value_name = "FILE")]
    pub inventory: Vec<PathBuf>,
    /// Output format (default: from the extension of -o, else human)
    #[arg(long, value_enum)]
    pub format: Option<LintFormat>,
    /// Write the output to this file (atomically) instead of stdout (human reports go to stderr); a .json
    /// name means --format json
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Exit 1 on warnings too
    #[arg(long)]
    pub deny_warnings: bool,
}

#[derive(Args, Debug)]
pub struct NodesArgs {
    #[command(flatten)]
    pub inventory: InventoryFlag,
    /// Only nodes carrying these labels: KEY=VALUE[,KEY=VALUE...], as
    /// kubectl reads it (every pair must hold; repeat to add more)
    #[arg(long, short = 'l', value_name = "KEY=VALUE,...")]
    pub selector: Vec<String>,
    /// Also show each node's labels
    #[arg(long, short = 'w')]
    pub wide: bool,
    /// Output format (default: from the extension of -o, else human)
    #[arg(long, value_enum)]
    pub format: Option<OutputFormat>,
    /// Write the output to this file (atomically) instead of stdout; a .json
    /// name means --format json
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct DiscoverArgs {
    /// Node config (default: /etc/llmgw/node.toml when present)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Output format (default: from the extension of -o, else toml); nfd is a
    /// Node Feature Discovery feature file of llmgw.io labels
    #[arg(long, value_enum)]
    pub format: Option<DiscoverFormat>,
    /// Write to this file (atomically) instead of stdout
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Seconds the SGLang probe may take
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    pub probe_timeout: f64,
    /// Read the machine under DIR instead of / (sysfs in DIR/sys, procfs in
    /// DIR/proc, the default config in DIR/etc/llmgw): for tests and for
    /// inspecting a copied tree
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Take the GPUs from this JSON file instead of NVML: a list of
    /// {index, name, memory_mb, uuid, pci_bus_id, mig, active_links,
    /// mig_devices, fabric}, where active_links are the remote PCI bus ids
    /// of the GPU's active NVLinks, mig_devices [{index, profile,
    /// memory_mb, uuid}] and fabric NVML's fabric info {cluster_uuid,
    /// clique_id, completed}
    #[arg(long, value_name = "FILE")]
    pub gpu_facts: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct EngineCheckArgs {
    /// Engines to check (default: every known engine)
    #[arg(value_name = "ENGINE")]
    pub engines: Vec<String>,
    /// Seconds a version command may take before its process group is killed
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    pub timeout: f64,
    /// Output format (default: from the extension of -o, else human)
    #[arg(long, value_enum)]
    pub format: Option<OutputFormat>,
    /// Write the output to this file (atomically) instead of stdout; a .json
    /// name means --format json
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

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

#[derive(Subcommand, Debug)]
pub enum RenderCommand {
    /// Kubernetes manifests: a Deployment per single-node replica, a LeaderWorkerSet per multi-node one, a Service per model
    Kubernetes(RenderKubernetesArgs),
    /// Slurm batch scripts: one sbatch script per replica, on exactly its planned nodes
    Slurm(RenderSlurmArgs),
}

#[derive(Args, Debug)]
pub struct RenderArgs {
    /// The plan: what `place --format json` printed (`-`: stdin)
    #[arg(value_name = "PLAN", required_unless_present = "stop")]
    pub plan: Option<PathBuf>,
    /// The catalog the plan was made from
    #[arg(long, value_name = "CATALOG", required_unless_present = "stop")]
    pub catalog: Option<PathBuf>,
    /// The inventory to render on: the plan is checked against it (repeat to merge several)
    #[arg(long = "inventory", short = 'i', value_name = "FILE", required_unless_present = "stop")]
    pub inventory: Vec<PathBuf>,
    /// Write one file per object into this folder, which render owns: its
    /// own stale files there are removed (`-`: one stream on stdout)
    #[arg(long, short, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Also write every replica's URL here, for a gateway or load balancer (JSON, or see --endpoints-format)
    #[arg(long, value_name = "FILE")]
    pub endpoints: Option<PathBuf>,
    /// What --endpoints writes: llmgw's JSON list, or a LiteLLM proxy
    /// config (`model_list`, one entry per replica)
    #[arg(long, value_enum, value_name = "FORMAT", requires = "endpoints")]
    pub endpoints_format: Option<EndpointsFormat>,
    /// Print what to stop when plan NEW replaces plan OLD (nothing is run);
    /// with --inventory, Slurm jobs the inventory knows are cancelled by id,
    /// and the ComputeDomains of replicas on NVLink domains are deleted
    #[arg(long, num_args = 2, value_names = ["OLD", "NEW"], conflicts_with_all = ["plan", "catalog", "output", "endpoints"])]
    pub stop: Option<Vec<PathBuf>>,
    /// Render even when the catalog no longer has (or wants) some of the
    /// plan's replicas: those are left out with a warning, not an error
    #[arg(long)]
    pub allow_stale: bool,
    /// How to report what was done to each file under -o DIR: a line each
    /// (new, changed, unchanged, removed), or JSON
    #[arg(long, value_enum, requires = "output")]
    pub format: Option<OutputFormat>,
}

#[derive(Args, Debug)]
pub struct RenderKubernetesArgs {
    #[command(flatten)]
    pub common: RenderArgs,
    /// The namespace of every object
    #[arg(long, short = 'n', value_name = "NS")]
    pub namespace: Option<String>,
    /// The RDMA device multi-node pods ask for, as the cluster's RDMA
    /// device plugin advertises it (e.g. rdma/ib, or rdma/ib=2)
    #[arg(long, value_name = "NAME[=COUNT]")]
    pub rdma_resource: Option<String>,
    /// The PriorityClass of every pod (a profile's `kubernetes.priority_class` wins)
    #[arg(long, value_name = "NAME")]
    pub priority_class: Option<String>,
    /// The ServiceAccount of every pod (a profile's `kubernetes.service_account` wins)
    #[arg(long, value_name = "NAME")]
    pub service_account: Option<String>,
    /// A Secret every pod pulls its image with; repeat for several (a
    /// profile's `kubernetes.image_pull_secrets` wins)
    #[arg(long, value_name = "NAME")]
    pub image_pull_secret: Vec<String>,
    /// How pods get their GPUs: device-plugin (`nvidia.com/gpu` limits; the
    /// plugin picks which GPUs) or dra (a ResourceClaim per pod that admits
    /// exactly the planned GPUs, by UUID; needs NVIDIA's DRA driver)
    #[arg(long, value_enum, value_name = "HOW", default_value = "device-plugin")]
    pub devices: crate::kubernetes::render::Devices,
    /// Also write what a gateway routes by: an InferencePool per model
    /// (Gateway API Inference Extension), picked from by --epp
    #[arg(long, value_enum, value_name = "KIND", requires = "epp")]
    pub gateway: Option<GatewayKind>,
    /// With --gateway: the endpoint picker's Service and port [default port: 9002]
    #[arg(long, value_name = "NAME[:PORT]", requires = "gateway")]
    pub epp: Option<String>,
    /// With --gateway: also an HTTPRoute per model, attached to this Gateway,
    /// that sends requests naming the model (X-Gateway-Model-Name) to its pool
    #[arg(long, value_name = "NS/NAME", requires = "gateway")]
    pub gateway_parent: Option<String>,
    /// With --gateway-parent: how long each route lets one request take,
    /// end to end (a Gateway API duration: 300s, 10m, 1h30m); gateways'
    /// own defaults (15 to 30 s) cut long generations
    #[arg(long, value_name = "DURATION", default_value = "300s", requires = "gateway_parent")]
    pub route_timeout: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GatewayKind {
    /// An InferencePool per model (inference.networking.k8s.io/v1)
    InferencePool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, ValueEnum)]
pub enum EndpointsFormat {
    /// {"endpoints": [{"model", "replica", "url"}]}
    #[default]
    Json,
    /// A LiteLLM proxy config: `model_list`, one entry per replica
    Litellm,
}

#[derive(Args, Debug)]
pub struct RenderSlurmArgs {
    #[command(flatten)]
    pub common: RenderArgs,
    /// Where jobs write their output and errors (default: the submit directory)
    #[arg(long, value_name = "DIR")]
    pub log_dir: Option<String>,
    /// sbatch --partition
    #[arg(long, value_name = "PARTITION")]
    pub partition: Option<String>,
    /// sbatch --account
    #[arg(long, value_name = "ACCOUNT")]
    pub account: Option<String>,
    /// sbatch --qos
    #[arg(long, value_name = "QOS")]
    pub qos: Option<String>,
    /// sbatch --time
    #[arg(long, value_name = "TIME")]
    pub time: Option<String>,
    /// Run every replica in its profile's image, else its engine's default
    /// image (pyxis: srun --container-image)
    #[arg(long, value_enum, value_name = "RUNTIME")]
    pub container: Option<ContainerRuntime>,
    /// With --container: the node folder hub downloads go to, mounted into
    /// the container as HF_HOME [default: $HOME/.cache/huggingface]
    #[arg(long, value_name = "DIR", requires = "container")]
    pub cache_dir: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ContainerRuntime {
    /// NVIDIA's pyxis SPANK plugin (enroot)
    Pyxis,
}

#[derive(Args, Debug)]
pub struct CapacityArgs {
    /// The catalog of models and profiles
    #[arg(value_name = "CATALOG")]
    pub catalog: PathBuf,
    #[command(flatten)]
    pub inventory: InventoryFlag,
    /// The nodes to add: SHAPE[@FABRIC][,key=value...] with a shape of
    /// inventory synth, or like:NODE for copies of a node of the fleet;
    /// repeat to compare shapes (each gets its own answer)
    #[arg(long, value_name = "SHAPE", required = true, value_parser = ShapeValues { like: true })]
    pub add: Vec<String>,
    /// Answer for this model alone: the catalog's other models left out
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// The most nodes to try
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub max: u32,
    /// How the new replicas' profiles and nodes are chosen: `order` keeps
    /// the catalog's order, one replica at a time; `most` chooses them all
    /// together to place the most (the answer is then the fewest nodes
    /// with which that places everything)
    #[arg(long, value_enum, default_value_t, value_name = "MODE")]
    pub pack: crate::placement::Pack,
    /// Output format (default: from the extension of -o, else human)
    #[arg(long, value_enum)]
    pub format: Option<OutputFormat>,
    /// Write the output to this file (atomically) instead of stdout; a .json
    /// name means --format json
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The plan before
    #[arg(value_name = "OLD")]
    pub old: PathBuf,
    /// The plan after
    #[arg(value_name = "NEW")]
    pub new: PathBuf,
    /// Output format (default: from the extension of -o, else human)
    #[arg(long, value_enum)]
    pub format: Option<OutputFormat>,
    /// Write the output to this file (atomically) instead of stdout; a .json
    /// name means --format json
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write llmgw.1 and one page per command here instead of printing llmgw.1
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Any text (the command reads it and says what is wrong), offering the
/// shapes of `inventory synth` to `--help`, the man pages and the shell
/// completions.
#[derive(Clone)]
struct ShapeValues {
    /// Also offer `like:` (capacity copies a node of the fleet).
    like: bool,
}

impl clap::builder::TypedValueParser for ShapeValues {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        use clap::builder::PossibleValue;
        let shapes = crate::synth::SHAPES.iter().map(|s| PossibleValue::new(s.name).help(s.describe()));
        let like = self
            .like
            .then(|| PossibleValue::new("like:NODE").help("copies of a node of the fleet (hardware, engines, labels)"));
        Some(Box::new(shapes.chain(like)))
    }
}
