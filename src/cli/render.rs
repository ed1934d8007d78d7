//! The `render` command's arguments: what to render for Kubernetes and for
//! Slurm, and how.

use super::*;

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
