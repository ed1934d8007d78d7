# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_llmgw_global_optspecs
    string join \n color= max-input-bytes= h/help V/version
end

function __fish_llmgw_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_llmgw_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_llmgw_using_subcommand
    set -l cmd (__fish_llmgw_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c llmgw -n "__fish_llmgw_needs_command" -l color -d 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb' -r -f -a "auto\t''
always\t''
never\t''"
complete -c llmgw -n "__fish_llmgw_needs_command" -l max-input-bytes -d 'Refuse an input file larger than this many bytes' -r
complete -c llmgw -n "__fish_llmgw_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c llmgw -n "__fish_llmgw_needs_command" -s V -l version -d 'Print version'
complete -c llmgw -n "__fish_llmgw_needs_command" -f -a "discover" -d 'Inspect this machine and print a one-node inventory'
complete -c llmgw -n "__fish_llmgw_needs_command" -f -a "place" -d 'Place every replica a catalog asks for'
complete -c llmgw -n "__fish_llmgw_needs_command" -f -a "explain-placement" -d 'Show, candidate by candidate, why each replica of one model went where it did'
complete -c llmgw -n "__fish_llmgw_needs_command" -f -a "lint" -d 'Check catalogs for CI: every problem at once, each with its source span'
complete -c llmgw -n "__fish_llmgw_needs_command" -f -a "engine-check" -d 'Find engines on PATH and run their version commands, safely'
complete -c llmgw -n "__fish_llmgw_needs_command" -f -a "nodes" -d 'One row per node: state, free GPUs by class, fabrics, engines, memory, disk'
complete -c llmgw -n "__fish_llmgw_needs_command" -f -a "inventory" -d 'Work with inventory files'
complete -c llmgw -n "__fish_llmgw_needs_command" -f -a "render" -d 'Write what runs a plan where it was placed'
complete -c llmgw -n "__fish_llmgw_needs_command" -f -a "capacity" -d 'How many nodes of a shape to add so that every replica places'
complete -c llmgw -n "__fish_llmgw_needs_command" -f -a "diff" -d 'What changed between two plans (place --format json): exit 1 if any placement differs'
complete -c llmgw -n "__fish_llmgw_needs_command" -f -a "map" -d 'Draw a plan on its fleet: one self-contained HTML page, a cell per GPU'
complete -c llmgw -n "__fish_llmgw_needs_command" -f -a "completions" -d 'Print shell completions'
complete -c llmgw -n "__fish_llmgw_needs_command" -f -a "man" -d 'Print the man page, or write one page per command into a folder'
complete -c llmgw -n "__fish_llmgw_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c llmgw -n "__fish_llmgw_using_subcommand discover" -l config -d 'Node config (default: /etc/llmgw/node.toml when present)' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand discover" -l format -d 'Output format (default: from the extension of -o, else toml); nfd is a Node Feature Discovery feature file of llmgw.io labels' -r -f -a "toml\t''
json\t''
yaml\t''
nfd\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand discover" -s o -l output -d 'Write to this file (atomically) instead of stdout' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand discover" -l probe-timeout -d 'Seconds the SGLang probe may take' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand discover" -l root -d 'Read the machine under DIR instead of / (sysfs in DIR/sys, procfs in DIR/proc, the default config in DIR/etc/llmgw): for tests and for inspecting a copied tree' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand discover" -l gpu-facts -d 'Take the GPUs from this JSON file instead of NVML: a list of {index, name, memory_mb, uuid, pci_bus_id, mig, active_links, mig_devices, fabric}, where active_links are the remote PCI bus ids of the GPU\'s active NVLinks, mig_devices [{index, profile, memory_mb, uuid}] and fabric NVML\'s fabric info {cluster_uuid, clique_id, completed}' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand discover" -l color -d 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb' -r -f -a "auto\t''
always\t''
never\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand discover" -l max-input-bytes -d 'Refuse an input file larger than this many bytes' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand discover" -s h -l help -d 'Print help'
complete -c llmgw -n "__fish_llmgw_using_subcommand discover" -s V -l version -d 'Print version'
complete -c llmgw -n "__fish_llmgw_using_subcommand place" -s i -l inventory -d 'A fleet inventory (TOML, YAML or JSON); repeat to merge several. Without it, this machine is discovered and used' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand place" -l rejections -d 'In JSON, why each unplaced replica was left out: grouped reasons, the full per-node list, or none (closest misses are always given)' -r -f -a "grouped\t'`reasons`: one entry per distinct reason of a pool, with its nodes'
full\t'`rejections`: every rejection, node by node, in the order tried'
none\t'Neither; `closest` only'"
complete -c llmgw -n "__fish_llmgw_using_subcommand place" -l pack -d 'How new replicas\' profiles and nodes are chosen: `order` (the catalog\'s order, one at a time) or `most` (together, to place the most)' -r -f -a "order\t'Models in catalog order, each replica the first profile and node that finds a home (the reference)'
most\t'All new replicas chosen together, to place as many as the fleet holds'"
complete -c llmgw -n "__fish_llmgw_using_subcommand place" -l format -d 'Output format (default: from the extension of -o, else human)' -r -f -a "human\t''
json\t''
html\t'The map of the plan on its fleet (as `llmgw map` draws it)'"
complete -c llmgw -n "__fish_llmgw_using_subcommand place" -s o -l output -d 'Write the output to this file (atomically) instead of stdout; a .json name means --format json, a .html name --format html. The summary is printed on stderr' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand place" -l color -d 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb' -r -f -a "auto\t''
always\t''
never\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand place" -l max-input-bytes -d 'Refuse an input file larger than this many bytes' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand place" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c llmgw -n "__fish_llmgw_using_subcommand place" -s V -l version -d 'Print version'
complete -c llmgw -n "__fish_llmgw_using_subcommand explain-placement" -l model -d 'The model to explain' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand explain-placement" -l replica -d 'Only this replica index' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand explain-placement" -l pack -d 'How new replicas\' profiles and nodes are chosen: `order` (the catalog\'s order, one at a time) or `most` (together, to place the most)' -r -f -a "order\t'Models in catalog order, each replica the first profile and node that finds a home (the reference)'
most\t'All new replicas chosen together, to place as many as the fleet holds'"
complete -c llmgw -n "__fish_llmgw_using_subcommand explain-placement" -s i -l inventory -d 'A fleet inventory (TOML, YAML or JSON); repeat to merge several. Without it, this machine is discovered and used' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand explain-placement" -l format -d 'Output format (default: from the extension of -o, else human)' -r -f -a "human\t''
json\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand explain-placement" -s o -l output -d 'Write the output to this file (atomically) instead of stdout; a .json name means --format json' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand explain-placement" -l color -d 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb' -r -f -a "auto\t''
always\t''
never\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand explain-placement" -l max-input-bytes -d 'Refuse an input file larger than this many bytes' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand explain-placement" -s v -l verbose -d 'List every rejection after the summary'
complete -c llmgw -n "__fish_llmgw_using_subcommand explain-placement" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c llmgw -n "__fish_llmgw_using_subcommand explain-placement" -s V -l version -d 'Print version'
complete -c llmgw -n "__fish_llmgw_using_subcommand lint" -s i -l inventory -d 'Also check the catalogs against this fleet (repeat to merge several)' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand lint" -l format -d 'Output format (default: from the extension of -o, else human)' -r -f -a "human\t''
json\t''
github\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand lint" -s o -l output -d 'Write the output to this file (atomically) instead of stdout (human reports go to stderr); a .json name means --format json' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand lint" -l color -d 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb' -r -f -a "auto\t''
always\t''
never\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand lint" -l max-input-bytes -d 'Refuse an input file larger than this many bytes' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand lint" -l deny-warnings -d 'Exit 1 on warnings too'
complete -c llmgw -n "__fish_llmgw_using_subcommand lint" -s h -l help -d 'Print help'
complete -c llmgw -n "__fish_llmgw_using_subcommand lint" -s V -l version -d 'Print version'
complete -c llmgw -n "__fish_llmgw_using_subcommand engine-check" -l timeout -d 'Seconds a version command may take before its process group is killed' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand engine-check" -l format -d 'Output format (default: from the extension of -o, else human)' -r -f -a "human\t''
json\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand engine-check" -s o -l output -d 'Write the output to this file (atomically) instead of stdout; a .json name means --format json' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand engine-check" -l color -d 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb' -r -f -a "auto\t''
always\t''
never\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand engine-check" -l max-input-bytes -d 'Refuse an input file larger than this many bytes' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand engine-check" -s h -l help -d 'Print help'
complete -c llmgw -n "__fish_llmgw_using_subcommand engine-check" -s V -l version -d 'Print version'
complete -c llmgw -n "__fish_llmgw_using_subcommand nodes" -s i -l inventory -d 'A fleet inventory (TOML, YAML or JSON); repeat to merge several. Without it, this machine is discovered and used' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand nodes" -s l -l selector -d 'Only nodes carrying these labels: KEY=VALUE[,KEY=VALUE...], as kubectl reads it (every pair must hold; repeat to add more)' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand nodes" -l format -d 'Output format (default: from the extension of -o, else human)' -r -f -a "human\t''
json\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand nodes" -s o -l output -d 'Write the output to this file (atomically) instead of stdout; a .json name means --format json' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand nodes" -l color -d 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb' -r -f -a "auto\t''
always\t''
never\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand nodes" -l max-input-bytes -d 'Refuse an input file larger than this many bytes' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand nodes" -s w -l wide -d 'Also show each node\'s labels'
complete -c llmgw -n "__fish_llmgw_using_subcommand nodes" -s h -l help -d 'Print help'
complete -c llmgw -n "__fish_llmgw_using_subcommand nodes" -s V -l version -d 'Print version'
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and not __fish_seen_subcommand_from merge synth import help" -l color -d 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb' -r -f -a "auto\t''
always\t''
never\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and not __fish_seen_subcommand_from merge synth import help" -l max-input-bytes -d 'Refuse an input file larger than this many bytes' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and not __fish_seen_subcommand_from merge synth import help" -s h -l help -d 'Print help'
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and not __fish_seen_subcommand_from merge synth import help" -s V -l version -d 'Print version'
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and not __fish_seen_subcommand_from merge synth import help" -f -a "merge" -d 'Join node snapshots into one inventory'
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and not __fish_seen_subcommand_from merge synth import help" -f -a "synth" -d 'Write a synthetic fleet inventory for capacity planning'
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and not __fish_seen_subcommand_from merge synth import help" -f -a "import" -d 'An inventory from a scheduler\'s view of the fleet'
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and not __fish_seen_subcommand_from merge synth import help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from merge" -s o -l output -d 'Write here (atomically) instead of stdout; the format follows the extension' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from merge" -l format -d 'Output format (default: from the extension of -o, else toml)' -r -f -a "toml\t''
json\t''
yaml\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from merge" -l color -d 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb' -r -f -a "auto\t''
always\t''
never\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from merge" -l max-input-bytes -d 'Refuse an input file larger than this many bytes' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from merge" -s h -l help -d 'Print help'
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from merge" -s V -l version -d 'Print version'
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from synth" -l cordoned -d 'Fraction of nodes made cordoned, 0 to 1 (exactly that share, rounded)' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from synth" -l load -d 'Fraction of GPUs already allocated, 0 to 1' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from synth" -l seed -d 'Seed, so the same command writes the same fleet' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from synth" -l prefix -d 'Prefix of node ids' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from synth" -s o -l output -d 'Write here (atomically) instead of stdout; the format follows the extension' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from synth" -l format -d 'Output format (default: from the extension of -o, else toml)' -r -f -a "toml\t''
json\t''
yaml\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from synth" -l color -d 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb' -r -f -a "auto\t''
always\t''
never\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from synth" -l max-input-bytes -d 'Refuse an input file larger than this many bytes' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from synth" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from synth" -s V -l version -d 'Print version'
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from import" -l color -d 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb' -r -f -a "auto\t''
always\t''
never\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from import" -l max-input-bytes -d 'Refuse an input file larger than this many bytes' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from import" -s h -l help -d 'Print help'
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from import" -s V -l version -d 'Print version'
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from import" -f -a "kubernetes" -d 'From `kubectl get nodes -o json|yaml` (and `kubectl get pods -A -o json`)'
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from import" -f -a "slurm" -d 'From `sinfo --json`, `scontrol show nodes --json` or `scontrol -d show node -o`'
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from import" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from help" -f -a "merge" -d 'Join node snapshots into one inventory'
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from help" -f -a "synth" -d 'Write a synthetic fleet inventory for capacity planning'
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from help" -f -a "import" -d 'An inventory from a scheduler\'s view of the fleet'
complete -c llmgw -n "__fish_llmgw_using_subcommand inventory; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and not __fish_seen_subcommand_from kubernetes slurm help" -l color -d 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb' -r -f -a "auto\t''
always\t''
never\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and not __fish_seen_subcommand_from kubernetes slurm help" -l max-input-bytes -d 'Refuse an input file larger than this many bytes' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and not __fish_seen_subcommand_from kubernetes slurm help" -s h -l help -d 'Print help'
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and not __fish_seen_subcommand_from kubernetes slurm help" -s V -l version -d 'Print version'
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and not __fish_seen_subcommand_from kubernetes slurm help" -f -a "kubernetes" -d 'Kubernetes manifests: a Deployment per single-node replica, a LeaderWorkerSet per multi-node one, a Service per model'
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and not __fish_seen_subcommand_from kubernetes slurm help" -f -a "slurm" -d 'Slurm batch scripts: one sbatch script per replica, on exactly its planned nodes'
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and not __fish_seen_subcommand_from kubernetes slurm help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from kubernetes" -l catalog -d 'The catalog the plan was made from' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from kubernetes" -s i -l inventory -d 'The inventory to render on: the plan is checked against it (repeat to merge several)' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from kubernetes" -s o -l output -d 'Write one file per object into this folder, which render owns: its own stale files there are removed (`-`: one stream on stdout)' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from kubernetes" -l endpoints -d 'Also write every replica\'s URL here, for a gateway or load balancer (JSON, or see --endpoints-format)' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from kubernetes" -l endpoints-format -d 'What --endpoints writes: llmgw\'s JSON list, or a LiteLLM proxy config (`model_list`, one entry per replica)' -r -f -a "json\t'{"endpoints": [{"model", "replica", "url"}]}'
litellm\t'A LiteLLM proxy config: `model_list`, one entry per replica'"
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from kubernetes" -l stop -d 'Print what to stop when plan NEW replaces plan OLD (nothing is run); with --inventory, Slurm jobs the inventory knows are cancelled by id, and the ComputeDomains of replicas on NVLink domains are deleted' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from kubernetes" -l format -d 'How to report what was done to each file under -o DIR: a line each (new, changed, unchanged, removed), or JSON' -r -f -a "human\t''
json\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from kubernetes" -s n -l namespace -d 'The namespace of every object' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from kubernetes" -l rdma-resource -d 'The RDMA device multi-node pods ask for, as the cluster\'s RDMA device plugin advertises it (e.g. rdma/ib, or rdma/ib=2)' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from kubernetes" -l priority-class -d 'The PriorityClass of every pod (a profile\'s `kubernetes.priority_class` wins)' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from kubernetes" -l service-account -d 'The ServiceAccount of every pod (a profile\'s `kubernetes.service_account` wins)' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from kubernetes" -l image-pull-secret -d 'A Secret every pod pulls its image with; repeat for several (a profile\'s `kubernetes.image_pull_secrets` wins)' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from kubernetes" -l devices -d 'How pods get their GPUs: device-plugin (`nvidia.com/gpu` limits; the plugin picks which GPUs) or dra (a ResourceClaim per pod that admits exactly the planned GPUs, by UUID; needs NVIDIA\'s DRA driver)' -r -f -a "device-plugin\t'`nvidia.com/gpu` limits: the device plugin picks which GPUs'
dra\t'A DRA claim per pod that admits exactly the planned GPUs'"
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from kubernetes" -l gateway -d 'Also write what a gateway routes by: an InferencePool per model (Gateway API Inference Extension), picked from by --epp' -r -f -a "inference-pool\t'An InferencePool per model (inference.networking.k8s.io/v1)'"
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from kubernetes" -l epp -d 'With --gateway: the endpoint picker\'s Service and port [default port: 9002]' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from kubernetes" -l gateway-parent -d 'With --gateway: also an HTTPRoute per model, attached to this Gateway, that sends requests naming the model (X-Gateway-Model-Name) to its pool' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from kubernetes" -l route-timeout -d 'With --gateway-parent: how long each route lets one request take, end to end (a Gateway API duration: 300s, 10m, 1h30m); gateways\' own defaults (15 to 30 s) cut long generations' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from kubernetes" -l color -d 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb' -r -f -a "auto\t''
always\t''
never\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from kubernetes" -l max-input-bytes -d 'Refuse an input file larger than this many bytes' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from kubernetes" -l allow-stale -d 'Render even when the catalog no longer has (or wants) some of the plan\'s replicas: those are left out with a warning, not an error'
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from kubernetes" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from kubernetes" -s V -l version -d 'Print version'
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from slurm" -l catalog -d 'The catalog the plan was made from' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from slurm" -s i -l inventory -d 'The inventory to render on: the plan is checked against it (repeat to merge several)' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from slurm" -s o -l output -d 'Write one file per object into this folder, which render owns: its own stale files there are removed (`-`: one stream on stdout)' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from slurm" -l endpoints -d 'Also write every replica\'s URL here, for a gateway or load balancer (JSON, or see --endpoints-format)' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from slurm" -l endpoints-format -d 'What --endpoints writes: llmgw\'s JSON list, or a LiteLLM proxy config (`model_list`, one entry per replica)' -r -f -a "json\t'{"endpoints": [{"model", "replica", "url"}]}'
litellm\t'A LiteLLM proxy config: `model_list`, one entry per replica'"
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from slurm" -l stop -d 'Print what to stop when plan NEW replaces plan OLD (nothing is run); with --inventory, Slurm jobs the inventory knows are cancelled by id, and the ComputeDomains of replicas on NVLink domains are deleted' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from slurm" -l format -d 'How to report what was done to each file under -o DIR: a line each (new, changed, unchanged, removed), or JSON' -r -f -a "human\t''
json\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from slurm" -l log-dir -d 'Where jobs write their output and errors (default: the submit directory)' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from slurm" -l partition -d 'sbatch --partition' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from slurm" -l account -d 'sbatch --account' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from slurm" -l qos -d 'sbatch --qos' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from slurm" -l time -d 'sbatch --time' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from slurm" -l container -d 'Run every replica in its profile\'s image, else its engine\'s default image (pyxis: srun --container-image)' -r -f -a "pyxis\t'NVIDIA\'s pyxis SPANK plugin (enroot)'"
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from slurm" -l cache-dir -d 'With --container: the node folder hub downloads go to, mounted into the container as HF_HOME [default: $HOME/.cache/huggingface]' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from slurm" -l color -d 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb' -r -f -a "auto\t''
always\t''
never\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from slurm" -l max-input-bytes -d 'Refuse an input file larger than this many bytes' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from slurm" -l allow-stale -d 'Render even when the catalog no longer has (or wants) some of the plan\'s replicas: those are left out with a warning, not an error'
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from slurm" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from slurm" -s V -l version -d 'Print version'
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from help" -f -a "kubernetes" -d 'Kubernetes manifests: a Deployment per single-node replica, a LeaderWorkerSet per multi-node one, a Service per model'
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from help" -f -a "slurm" -d 'Slurm batch scripts: one sbatch script per replica, on exactly its planned nodes'
complete -c llmgw -n "__fish_llmgw_using_subcommand render; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c llmgw -n "__fish_llmgw_using_subcommand capacity" -s i -l inventory -d 'A fleet inventory (TOML, YAML or JSON); repeat to merge several. Without it, this machine is discovered and used' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand capacity" -l add -d 'The nodes to add: SHAPE[@FABRIC][,key=value...] with a shape of inventory synth, or like:NODE for copies of a node of the fleet; repeat to compare shapes (each gets its own answer)' -r -f -a "dgx-h100\t'8 x NVIDIA H100 80GB HBM3 on NVSwitch, 8 HCAs'
hgx-a100\t'8 x NVIDIA A100-SXM4-80GB on NVSwitch, 4 HCAs'
l40s-pcie\t'4 x NVIDIA L40S, PCIe only, 1 HCA'
pcie-a100-pairs\t'4 x NVIDIA A100 80GB PCIe in NVLink pairs, 1 HCA'
cpu\t'CPU only'
like:NODE\t'copies of a node of the fleet (hardware, engines, labels)'"
complete -c llmgw -n "__fish_llmgw_using_subcommand capacity" -l model -d 'Answer for this model alone: the catalog\'s other models left out' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand capacity" -l max -d 'The most nodes to try' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand capacity" -l pack -d 'How the new replicas\' profiles and nodes are chosen: `order` keeps the catalog\'s order, one replica at a time; `most` chooses them all together to place the most (the answer is then the fewest nodes with which that places everything)' -r -f -a "order\t'Models in catalog order, each replica the first profile and node that finds a home (the reference)'
most\t'All new replicas chosen together, to place as many as the fleet holds'"
complete -c llmgw -n "__fish_llmgw_using_subcommand capacity" -l format -d 'Output format (default: from the extension of -o, else human)' -r -f -a "human\t''
json\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand capacity" -s o -l output -d 'Write the output to this file (atomically) instead of stdout; a .json name means --format json' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand capacity" -l color -d 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb' -r -f -a "auto\t''
always\t''
never\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand capacity" -l max-input-bytes -d 'Refuse an input file larger than this many bytes' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand capacity" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c llmgw -n "__fish_llmgw_using_subcommand capacity" -s V -l version -d 'Print version'
complete -c llmgw -n "__fish_llmgw_using_subcommand diff" -l format -d 'Output format (default: from the extension of -o, else human)' -r -f -a "human\t''
json\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand diff" -s o -l output -d 'Write the output to this file (atomically) instead of stdout; a .json name means --format json' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand diff" -l color -d 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb' -r -f -a "auto\t''
always\t''
never\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand diff" -l max-input-bytes -d 'Refuse an input file larger than this many bytes' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand diff" -s h -l help -d 'Print help'
complete -c llmgw -n "__fish_llmgw_using_subcommand diff" -s V -l version -d 'Print version'
complete -c llmgw -n "__fish_llmgw_using_subcommand map" -s i -l inventory -d 'The inventory the plan was made on (repeat to merge several)' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand map" -s o -l output -d 'Write the page to this file (atomically) instead of stdout' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand map" -l color -d 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb' -r -f -a "auto\t''
always\t''
never\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand map" -l max-input-bytes -d 'Refuse an input file larger than this many bytes' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand map" -s h -l help -d 'Print help'
complete -c llmgw -n "__fish_llmgw_using_subcommand map" -s V -l version -d 'Print version'
complete -c llmgw -n "__fish_llmgw_using_subcommand completions" -l color -d 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb' -r -f -a "auto\t''
always\t''
never\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand completions" -l max-input-bytes -d 'Refuse an input file larger than this many bytes' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand completions" -s h -l help -d 'Print help'
complete -c llmgw -n "__fish_llmgw_using_subcommand completions" -s V -l version -d 'Print version'
complete -c llmgw -n "__fish_llmgw_using_subcommand man" -l dir -d 'Write llmgw.1 and one page per command here instead of printing llmgw.1' -r -F
complete -c llmgw -n "__fish_llmgw_using_subcommand man" -l color -d 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb' -r -f -a "auto\t''
always\t''
never\t''"
complete -c llmgw -n "__fish_llmgw_using_subcommand man" -l max-input-bytes -d 'Refuse an input file larger than this many bytes' -r
complete -c llmgw -n "__fish_llmgw_using_subcommand man" -s h -l help -d 'Print help'
complete -c llmgw -n "__fish_llmgw_using_subcommand man" -s V -l version -d 'Print version'
complete -c llmgw -n "__fish_llmgw_using_subcommand help; and not __fish_seen_subcommand_from discover place explain-placement lint engine-check nodes inventory render capacity diff map completions man help" -f -a "discover" -d 'Inspect this machine and print a one-node inventory'
complete -c llmgw -n "__fish_llmgw_using_subcommand help; and not __fish_seen_subcommand_from discover place explain-placement lint engine-check nodes inventory render capacity diff map completions man help" -f -a "place" -d 'Place every replica a catalog asks for'
complete -c llmgw -n "__fish_llmgw_using_subcommand help; and not __fish_seen_subcommand_from discover place explain-placement lint engine-check nodes inventory render capacity diff map completions man help" -f -a "explain-placement" -d 'Show, candidate by candidate, why each replica of one model went where it did'
complete -c llmgw -n "__fish_llmgw_using_subcommand help; and not __fish_seen_subcommand_from discover place explain-placement lint engine-check nodes inventory render capacity diff map completions man help" -f -a "lint" -d 'Check catalogs for CI: every problem at once, each with its source span'
complete -c llmgw -n "__fish_llmgw_using_subcommand help; and not __fish_seen_subcommand_from discover place explain-placement lint engine-check nodes inventory render capacity diff map completions man help" -f -a "engine-check" -d 'Find engines on PATH and run their version commands, safely'
complete -c llmgw -n "__fish_llmgw_using_subcommand help; and not __fish_seen_subcommand_from discover place explain-placement lint engine-check nodes inventory render capacity diff map completions man help" -f -a "nodes" -d 'One row per node: state, free GPUs by class, fabrics, engines, memory, disk'
complete -c llmgw -n "__fish_llmgw_using_subcommand help; and not __fish_seen_subcommand_from discover place explain-placement lint engine-check nodes inventory render capacity diff map completions man help" -f -a "inventory" -d 'Work with inventory files'
complete -c llmgw -n "__fish_llmgw_using_subcommand help; and not __fish_seen_subcommand_from discover place explain-placement lint engine-check nodes inventory render capacity diff map completions man help" -f -a "render" -d 'Write what runs a plan where it was placed'
complete -c llmgw -n "__fish_llmgw_using_subcommand help; and not __fish_seen_subcommand_from discover place explain-placement lint engine-check nodes inventory render capacity diff map completions man help" -f -a "capacity" -d 'How many nodes of a shape to add so that every replica places'
complete -c llmgw -n "__fish_llmgw_using_subcommand help; and not __fish_seen_subcommand_from discover place explain-placement lint engine-check nodes inventory render capacity diff map completions man help" -f -a "diff" -d 'What changed between two plans (place --format json): exit 1 if any placement differs'
complete -c llmgw -n "__fish_llmgw_using_subcommand help; and not __fish_seen_subcommand_from discover place explain-placement lint engine-check nodes inventory render capacity diff map completions man help" -f -a "map" -d 'Draw a plan on its fleet: one self-contained HTML page, a cell per GPU'
complete -c llmgw -n "__fish_llmgw_using_subcommand help; and not __fish_seen_subcommand_from discover place explain-placement lint engine-check nodes inventory render capacity diff map completions man help" -f -a "completions" -d 'Print shell completions'
complete -c llmgw -n "__fish_llmgw_using_subcommand help; and not __fish_seen_subcommand_from discover place explain-placement lint engine-check nodes inventory render capacity diff map completions man help" -f -a "man" -d 'Print the man page, or write one page per command into a folder'
complete -c llmgw -n "__fish_llmgw_using_subcommand help; and not __fish_seen_subcommand_from discover place explain-placement lint engine-check nodes inventory render capacity diff map completions man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c llmgw -n "__fish_llmgw_using_subcommand help; and __fish_seen_subcommand_from inventory" -f -a "merge" -d 'Join node snapshots into one inventory'
complete -c llmgw -n "__fish_llmgw_using_subcommand help; and __fish_seen_subcommand_from inventory" -f -a "synth" -d 'Write a synthetic fleet inventory for capacity planning'
complete -c llmgw -n "__fish_llmgw_using_subcommand help; and __fish_seen_subcommand_from inventory" -f -a "import" -d 'An inventory from a scheduler\'s view of the fleet'
complete -c llmgw -n "__fish_llmgw_using_subcommand help; and __fish_seen_subcommand_from render" -f -a "kubernetes" -d 'Kubernetes manifests: a Deployment per single-node replica, a LeaderWorkerSet per multi-node one, a Service per model'
complete -c llmgw -n "__fish_llmgw_using_subcommand help; and __fish_seen_subcommand_from render" -f -a "slurm" -d 'Slurm batch scripts: one sbatch script per replica, on exactly its planned nodes'
