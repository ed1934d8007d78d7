//! Shell completions and man pages, generated from the clap definitions.
//! The committed copies under completions/ and man/ are checked against
//! these by a test; `LLMGW_REGENERATE=1 cargo test --test it generated` rewrites them.

use std::io::Write;

use crate::cli;
use crate::exit::{Exit, Outcome};
use crate::output;

/// The file each shell's completions are committed as.
pub const COMPLETION_FILES: &[(clap_complete::Shell, &str)] = &[
    (clap_complete::Shell::Bash, "llmgw.bash"),
    (clap_complete::Shell::Zsh, "_llmgw"),
    (clap_complete::Shell::Fish, "llmgw.fish"),
    (clap_complete::Shell::Elvish, "llmgw.elv"),
    (clap_complete::Shell::PowerShell, "_llmgw.ps1"),
];

pub fn completions(shell: clap_complete::Shell) -> Vec<u8> {
    use clap::CommandFactory;
    let mut cmd = cli::Cli::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "llmgw", &mut buf);
    buf
}

/// Examples per page, as (what it does, the command).
fn examples(page: &str) -> &'static [(&'static str, &'static str)] {
    match page {
        "llmgw" | "llmgw-place" => &[
            (
                "Place the example catalog on the example fleet:",
                "llmgw place catalog/fleet.toml --inventory examples/fleet.toml",
            ),
            ("Write the plan as JSON:", "llmgw place catalog/fleet.toml -i examples/fleet.toml -o plan.json"),
            ("Place onto a fleet read from standard input:", "cat fleet.json | llmgw place catalog/fleet.toml -i -"),
        ],
        "llmgw-explain-placement" => &[(
            "Why replica 1 of a model went where it did, or nowhere:",
            "llmgw explain-placement catalog/fleet.toml --model llama-3.1-405b --replica 1 -i examples/fleet.toml",
        )],
        "llmgw-lint" => &[
            (
                "Check catalogs in CI, as GitHub annotations:",
                "llmgw lint catalog/*.toml --format github --deny-warnings",
            ),
            ("Check a catalog against a fleet:", "llmgw lint catalog/fleet.toml --inventory examples/fleet.toml"),
            ("Check an inventory on its own:", "llmgw lint examples/fleet.toml"),
        ],
        "llmgw-engine-check" => {
            &[("Ask vLLM and SGLang for their versions:", "llmgw engine-check vllm sglang --timeout 5")]
        }
        "llmgw-nodes" => &[
            ("The nodes in zone a:", "llmgw nodes -i examples/fleet.toml --selector zone=a"),
            (
                "The CPU nodes of zone b, with their labels:",
                "llmgw nodes -i examples/fleet.toml -l zone=b,role=cpu --wide",
            ),
        ],
        "llmgw-map" => &[
            (
                "Draw a plan on its fleet:",
                "llmgw place catalog/fleet.toml -i examples/fleet.toml -o plan.json; llmgw map plan.json -i examples/fleet.toml -o map.html",
            ),
            ("Place and draw at once:", "llmgw place catalog/fleet.toml -i examples/fleet.toml -o plan.html"),
        ],
        "llmgw-discover" => &[
            ("This machine as an inventory file:", "llmgw discover -o /var/lib/llmgw/node.toml"),
            ("With another node config:", "llmgw discover --config node.toml --format json"),
        ],
        "llmgw-inventory" | "llmgw-inventory-merge" => {
            &[("Join node snapshots into a fleet:", "llmgw inventory merge nodes/*.toml -o fleet.toml")]
        }
        "llmgw-inventory-synth" => &[(
            "A synthetic fleet of 128 DGX H100s on two fabrics:",
            "llmgw inventory synth dgx-h100:64@ib-east dgx-h100:64@ib-west --load 0.3 -o fleet.json",
        )],
        "llmgw-capacity" => &[
            (
                "How many DGX H100s on ib-east would place the whole catalog:",
                "llmgw capacity catalog/fleet.toml -i examples/fleet.toml --add dgx-h100@ib-east",
            ),
            (
                "Two shapes compared, for one model alone:",
                "llmgw capacity catalog/fleet.toml -i examples/fleet.toml --add dgx-h100@ib-east --add hgx-a100@ib-west --model deepseek-v3",
            ),
        ],
        "llmgw-diff" => {
            &[("What a catalog change moves (exit 1 when a placement differs):", "llmgw diff before.json after.json")]
        }
        "llmgw-inventory-import-kubernetes" => &[KUBE_IMPORT],
        "llmgw-inventory-import-slurm" => &[SLURM_IMPORT],
        "llmgw-inventory-import" => &[KUBE_IMPORT, SLURM_IMPORT],
        "llmgw-render-kubernetes" => &[KUBE_RENDER],
        "llmgw-render-slurm" => &[SLURM_RENDER],
        "llmgw-render" => &[KUBE_RENDER, SLURM_RENDER],
        "llmgw-completions" => &[("Bash completions:", "llmgw completions bash > /etc/bash_completion.d/llmgw")],
        "llmgw-man" => &[("Every page, into a folder:", "llmgw man --dir /usr/local/share/man/man1")],
        _ => &[],
    }
}

/// What each exit code means for the command of a page (docs/placement.md, "Exit codes":
/// 0 success, 1 the answer is no, 2 the input could not be used). A command
/// that never answers no has no 1.
fn exit_status(page: &str) -> Vec<(&'static str, &'static str)> {
    const BAD_INPUT: &str = "The input could not be used: an unreadable or invalid file, a bad flag or value.";
    let (ok, no): (&str, Option<&str>) = match page {
        "llmgw-place" => (
            "Every replica the catalog asks for is placed or already runs.",
            Some("At least one replica was left unplaced (the plan is still written)."),
        ),
        "llmgw-explain-placement" => {
            ("Every replica explained is placed or already runs.", Some("A replica explained was left unplaced."))
        }
        "llmgw-lint" => (
            "No error (warnings allowed, unless --deny-warnings).",
            Some(
                "A catalog or inventory has an error, or a warning under --deny-warnings. A catalog that is not valid TOML, YAML or JSON is a lint error too.",
            ),
        ),
        "llmgw-engine-check" => (
            "Every engine checked was found and answered its version command.",
            Some(
                "An engine named on the command line is missing, or an engine that was found failed its check, was killed by a signal or timed out.",
            ),
        ),
        "llmgw-capacity" => (
            "For every shape, a number of added nodes up to --max places every replica (0 when nothing needs adding).",
            Some(
                "For some shape, even --max added nodes leave a replica unplaced, or no added node could hold any profile of the replicas left unplaced.",
            ),
        ),
        "llmgw-map" => ("The page was written.", None),
        "llmgw-diff" => (
            "No placement differs between the two plans.",
            Some("Some replica moved, was placed, unplaced or removed."),
        ),
        "llmgw-nodes" => ("The nodes were listed.", None),
        "llmgw-discover" => ("The node was described (warnings, such as no GPUs found, do not change this).", None),
        "llmgw-inventory-merge" => ("The inventory was written.", None),
        "llmgw-inventory-synth" => ("The fleet was written.", None),
        "llmgw-inventory-import-kubernetes" | "llmgw-inventory-import-slurm" | "llmgw-inventory-import" => {
            ("The inventory was written (warnings do not change this).", None)
        }
        "llmgw-render-kubernetes" | "llmgw-render-slurm" | "llmgw-render" => {
            ("What runs the placements of the plan was written.", None)
        }
        "llmgw-completions" | "llmgw-man" => ("Written.", None),
        "llmgw-inventory" => ("Success.", None),
        _ => (
            "Success.",
            Some(
                "The command ran and the answer is no: a replica left unplaced, a lint error, a named engine missing, \
                  an engine that was found failing its check or timing out, plans that differ, a capacity that --max \
                  cannot reach.",
            ),
        ),
    };
    let mut out = vec![("0", ok)];
    out.extend(no.map(|no| ("1", no)));
    out.push(("2", BAD_INPUT));
    out
}

const KUBE_IMPORT: (&str, &str) = (
    "The fleet as the cluster sees it, with the GPUs its pods hold:",
    "kubectl get nodes -o json > nodes.json; kubectl get pods -A -o json > pods.json; \
     llmgw inventory import kubernetes nodes.json --pods pods.json -o fleet.toml",
);
const SLURM_IMPORT: (&str, &str) = (
    "The fleet as the Slurm controller sees it, fabrics from its topology:",
    "scontrol -d show node -o > nodes.txt; llmgw inventory import slurm nodes.txt --topology /etc/slurm/topology.conf -o fleet.toml",
);
const KUBE_RENDER: (&str, &str) = (
    "Run a plan where it was placed:",
    "llmgw render kubernetes plan.json --catalog catalog.toml -i fleet.toml | kubectl apply -f -",
);
const SLURM_RENDER: (&str, &str) = (
    "One sbatch script per replica, then submit them:",
    "llmgw render slurm plan.json --catalog catalog.toml -i fleet.toml -o jobs; for j in jobs/*.sbatch; do sbatch \"$j\"; done",
);

/// Roff for text: a leading dot or quote, and every hyphen and backslash,
/// escaped.
fn roff(text: &str) -> String {
    let t = text.replace('\\', "\\e").replace('-', "\\-");
    if t.starts_with(['.', '\'']) { format!("\\&{t}") } else { t }
}

/// The sections clap does not write: exit status, environment, files and
/// examples, placed before VERSION.
fn with_sections(page: &str, rendered: Vec<u8>) -> Vec<u8> {
    use std::fmt::Write as _;
    let mut extra = String::new();
    let item = |out: &mut String, term: &str, text: &str| {
        let _ = write!(out, ".TP\n\\fB{}\\fR\n{}\n", roff(term), roff(text));
    };
    extra.push_str(".SH \"EXIT STATUS\"\n");
    for (code, text) in exit_status(page) {
        item(&mut extra, code, text);
    }
    extra.push_str(".SH ENVIRONMENT\n");
    item(&mut extra, "NO_COLOR", "When set and not empty, no colour (under --color auto).");
    item(&mut extra, "CLICOLOR_FORCE", "When set and not 0, colour even when not writing to a terminal.");
    item(&mut extra, "TERM", "dumb: no colour.");
    item(&mut extra, "COLUMNS", "The width human output is fitted to, instead of the terminal's.");
    item(&mut extra, "PATH", "Where discover and engine-check look for engines; relative entries are ignored.");
    item(&mut extra, "PYTHONPATH", "Where the SGLang probe of python3 may find the sglang module.");
    item(&mut extra, "LLMGW_TIMINGS", "When set, place prints how long each phase took on stderr.");
    extra.push_str(".SH FILES\n");
    item(
        &mut extra,
        "/etc/llmgw/node.toml",
        "The node config that discover reads (and place, explain-placement and nodes, when they discover this \
         machine for want of --inventory).",
    );
    item(&mut extra, "docs/", "The catalog and inventory formats and the placement rules, in the source tree.");
    let examples = examples(page);
    if !examples.is_empty() {
        extra.push_str(".SH EXAMPLES\n");
        for (what, command) in examples {
            let _ = write!(extra, ".PP\n{}\n.PP\n.nf\n.RS 4\n{}\n.RE\n.fi\n", roff(what), roff(command));
        }
    }
    let text = String::from_utf8_lossy(&rendered).into_owned();
    let at = text.find("\n.SH VERSION").map_or(text.len(), |i| i + 1);
    let mut out = text[..at].to_string();
    out.push_str(&extra);
    out.push_str(&text[at..]);
    out.into_bytes()
}

/// Every man page: `llmgw.1` and one per (sub)command, as (file name, bytes).
pub fn man_pages() -> std::io::Result<Vec<(String, Vec<u8>)>> {
    use clap::CommandFactory;
    fn walk(cmd: &clap::Command, prefix: &str, out: &mut Vec<(String, Vec<u8>)>) -> std::io::Result<()> {
        let name = if prefix.is_empty() { cmd.get_name().to_string() } else { format!("{prefix}-{}", cmd.get_name()) };
        let page = cmd.clone().name(name.clone());
        let mut buf = Vec::new();
        clap_mangen::Man::new(page).render(&mut buf)?;
        out.push((format!("{name}.1"), with_sections(&name, buf)));
        for sub in cmd.get_subcommands() {
            if sub.get_name() != "help" {
                walk(sub, &name, out)?;
            }
        }
        Ok(())
    }
    let mut cmd = cli::Cli::command();
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, "", &mut out)?;
    Ok(out)
}

pub fn completions_command(a: &cli::CompletionsArgs) -> Outcome {
    std::io::stdout().lock().write_all(&self::completions(a.shell))?;
    Ok(Exit::Success)
}

pub fn man_command(a: &cli::ManArgs) -> Outcome {
    let pages = self::man_pages()?;
    match &a.dir {
        None => std::io::stdout().lock().write_all(&pages[0].1)?,
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            for (name, bytes) in &pages {
                output::write_file(&dir.join(name), bytes)?;
            }
        }
    }
    Ok(Exit::Success)
}
