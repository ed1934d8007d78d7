//! The command line, declared once: `--help`, the man pages and the shell
//! completions are all generated from these definitions.

mod inventory;
pub use inventory::*;

mod render;
pub use render::*;

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
    pub rejections: crate::plan::write::Rejections,
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
