
use builtin;
use str;

set edit:completion:arg-completer[llmgw] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'llmgw'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'llmgw'= {
            cand --color 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb'
            cand --max-input-bytes 'Refuse an input file larger than this many bytes'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand discover 'Inspect this machine and print a one-node inventory'
            cand place 'Place every replica a catalog asks for'
            cand explain-placement 'Show, candidate by candidate, why each replica of one model went where it did'
            cand lint 'Check catalogs for CI: every problem at once, each with its source span'
            cand engine-check 'Find engines on PATH and run their version commands, safely'
            cand nodes 'One row per node: state, free GPUs by class, fabrics, engines, memory, disk'
            cand inventory 'Work with inventory files'
            cand render 'Write what runs a plan where it was placed'
            cand capacity 'How many nodes of a shape to add so that every replica places'
            cand diff 'What changed between two plans (place --format json): exit 1 if any placement differs'
            cand map 'Draw a plan on its fleet: one self-contained HTML page, a cell per GPU'
            cand completions 'Print shell completions'
            cand man 'Print the man page, or write one page per command into a folder'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'llmgw;discover'= {
            cand --config 'Node config (default: /etc/llmgw/node.toml when present)'
            cand --format 'Output format (default: from the extension of -o, else toml); nfd is a Node Feature Discovery feature file of llmgw.io labels'
            cand -o 'Write to this file (atomically) instead of stdout'
            cand --output 'Write to this file (atomically) instead of stdout'
            cand --probe-timeout 'Seconds the SGLang probe may take'
            cand --root 'Read the machine under DIR instead of / (sysfs in DIR/sys, procfs in DIR/proc, the default config in DIR/etc/llmgw): for tests and for inspecting a copied tree'
            cand --gpu-facts 'Take the GPUs from this JSON file instead of NVML: a list of {index, name, memory_mb, uuid, pci_bus_id, mig, active_links, mig_devices, fabric}, where active_links are the remote PCI bus ids of the GPU''s active NVLinks, mig_devices [{index, profile, memory_mb, uuid}] and fabric NVML''s fabric info {cluster_uuid, clique_id, completed}'
            cand --color 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb'
            cand --max-input-bytes 'Refuse an input file larger than this many bytes'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'llmgw;place'= {
            cand -i 'A fleet inventory (TOML, YAML or JSON); repeat to merge several. Without it, this machine is discovered and used'
            cand --inventory 'A fleet inventory (TOML, YAML or JSON); repeat to merge several. Without it, this machine is discovered and used'
            cand --rejections 'In JSON, why each unplaced replica was left out: grouped reasons, the full per-node list, or none (closest misses are always given)'
            cand --pack 'How new replicas'' profiles and nodes are chosen: `order` (the catalog''s order, one at a time) or `most` (together, to place the most)'
            cand --format 'Output format (default: from the extension of -o, else human)'
            cand -o 'Write the output to this file (atomically) instead of stdout; a .json name means --format json, a .html name --format html. The summary is printed on stderr'
            cand --output 'Write the output to this file (atomically) instead of stdout; a .json name means --format json, a .html name --format html. The summary is printed on stderr'
            cand --color 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb'
            cand --max-input-bytes 'Refuse an input file larger than this many bytes'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'llmgw;explain-placement'= {
            cand --model 'The model to explain'
            cand --replica 'Only this replica index'
            cand --pack 'How new replicas'' profiles and nodes are chosen: `order` (the catalog''s order, one at a time) or `most` (together, to place the most)'
            cand -i 'A fleet inventory (TOML, YAML or JSON); repeat to merge several. Without it, this machine is discovered and used'
            cand --inventory 'A fleet inventory (TOML, YAML or JSON); repeat to merge several. Without it, this machine is discovered and used'
            cand --format 'Output format (default: from the extension of -o, else human)'
            cand -o 'Write the output to this file (atomically) instead of stdout; a .json name means --format json'
            cand --output 'Write the output to this file (atomically) instead of stdout; a .json name means --format json'
            cand --color 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb'
            cand --max-input-bytes 'Refuse an input file larger than this many bytes'
            cand -v 'List every rejection after the summary'
            cand --verbose 'List every rejection after the summary'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'llmgw;lint'= {
            cand -i 'Also check the catalogs against this fleet (repeat to merge several)'
            cand --inventory 'Also check the catalogs against this fleet (repeat to merge several)'
            cand --format 'Output format (default: from the extension of -o, else human)'
            cand -o 'Write the output to this file (atomically) instead of stdout (human reports go to stderr); a .json name means --format json'
            cand --output 'Write the output to this file (atomically) instead of stdout (human reports go to stderr); a .json name means --format json'
            cand --color 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb'
            cand --max-input-bytes 'Refuse an input file larger than this many bytes'
            cand --deny-warnings 'Exit 1 on warnings too'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'llmgw;engine-check'= {
            cand --timeout 'Seconds a version command may take before its process group is killed'
            cand --format 'Output format (default: from the extension of -o, else human)'
            cand -o 'Write the output to this file (atomically) instead of stdout; a .json name means --format json'
            cand --output 'Write the output to this file (atomically) instead of stdout; a .json name means --format json'
            cand --color 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb'
            cand --max-input-bytes 'Refuse an input file larger than this many bytes'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'llmgw;nodes'= {
            cand -i 'A fleet inventory (TOML, YAML or JSON); repeat to merge several. Without it, this machine is discovered and used'
            cand --inventory 'A fleet inventory (TOML, YAML or JSON); repeat to merge several. Without it, this machine is discovered and used'
            cand -l 'Only nodes carrying these labels: KEY=VALUE[,KEY=VALUE...], as kubectl reads it (every pair must hold; repeat to add more)'
            cand --selector 'Only nodes carrying these labels: KEY=VALUE[,KEY=VALUE...], as kubectl reads it (every pair must hold; repeat to add more)'
            cand --format 'Output format (default: from the extension of -o, else human)'
            cand -o 'Write the output to this file (atomically) instead of stdout; a .json name means --format json'
            cand --output 'Write the output to this file (atomically) instead of stdout; a .json name means --format json'
            cand --color 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb'
            cand --max-input-bytes 'Refuse an input file larger than this many bytes'
            cand -w 'Also show each node''s labels'
            cand --wide 'Also show each node''s labels'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'llmgw;inventory'= {
            cand --color 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb'
            cand --max-input-bytes 'Refuse an input file larger than this many bytes'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
            cand merge 'Join node snapshots into one inventory'
            cand synth 'Write a synthetic fleet inventory for capacity planning'
            cand import 'An inventory from a scheduler''s view of the fleet'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'llmgw;inventory;merge'= {
            cand -o 'Write here (atomically) instead of stdout; the format follows the extension'
            cand --output 'Write here (atomically) instead of stdout; the format follows the extension'
            cand --format 'Output format (default: from the extension of -o, else toml)'
            cand --color 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb'
            cand --max-input-bytes 'Refuse an input file larger than this many bytes'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'llmgw;inventory;synth'= {
            cand --cordoned 'Fraction of nodes made cordoned, 0 to 1 (exactly that share, rounded)'
            cand --load 'Fraction of GPUs already allocated, 0 to 1'
            cand --seed 'Seed, so the same command writes the same fleet'
            cand --prefix 'Prefix of node ids'
            cand -o 'Write here (atomically) instead of stdout; the format follows the extension'
            cand --output 'Write here (atomically) instead of stdout; the format follows the extension'
            cand --format 'Output format (default: from the extension of -o, else toml)'
            cand --color 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb'
            cand --max-input-bytes 'Refuse an input file larger than this many bytes'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'llmgw;inventory;import'= {
            cand --color 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb'
            cand --max-input-bytes 'Refuse an input file larger than this many bytes'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
            cand kubernetes 'From `kubectl get nodes -o json|yaml` (and `kubectl get pods -A -o json`)'
            cand slurm 'From `sinfo --json`, `scontrol show nodes --json` or `scontrol -d show node -o`'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'llmgw;inventory;import;kubernetes'= {
            cand --pods 'The output of `kubectl get pods -A -o json`: pods holding GPUs or CPUs become allocations'
            cand --resource-slices 'The output of `kubectl get resourceslices -o json`: nodes whose GPUs NVIDIA''s DRA driver publishes get them from there, each with its UUID and device name'
            cand --claims 'The output of `kubectl get resourceclaims -A -o json`: the devices each allocated claim was given are held by its replica'
            cand --fabric-label 'A node label whose value names the node''s fabric, for nodes without llmgw''s own labels'
            cand --namespace 'Only pods in this namespace are llmgw''s replicas (repeatable); others with llmgw''s labels stay foreign [default: every namespace, with a warning]'
            cand -o 'Write here (atomically) instead of stdout; the format follows the extension'
            cand --output 'Write here (atomically) instead of stdout; the format follows the extension'
            cand --format 'Output format (default: from the extension of -o, else toml)'
            cand --color 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb'
            cand --max-input-bytes 'Refuse an input file larger than this many bytes'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'llmgw;inventory;import;slurm'= {
            cand --topology 'Slurm''s topology.conf or topology.yaml: nodes under one top-level switch (or in one block) share a fabric'
            cand --fabric-feature 'A feature prefix naming the node''s fabric, when there is no topology (`ib-` for a feature `ib-east`)'
            cand --jobs 'The output of `squeue --json` or `scontrol -d show job -o`: llmgw''s jobs become its replicas, others stay busy'
            cand --jobs-user 'Only this user''s jobs (a name or uid) are llmgw''s replicas; other users'' jobs with llmgw''s comment stay foreign [default: $USER, else $LOGNAME, else your uid]'
            cand -o 'Write here (atomically) instead of stdout; the format follows the extension'
            cand --output 'Write here (atomically) instead of stdout; the format follows the extension'
            cand --format 'Output format (default: from the extension of -o, else toml)'
            cand --color 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb'
            cand --max-input-bytes 'Refuse an input file larger than this many bytes'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'llmgw;inventory;import;help'= {
            cand kubernetes 'From `kubectl get nodes -o json|yaml` (and `kubectl get pods -A -o json`)'
            cand slurm 'From `sinfo --json`, `scontrol show nodes --json` or `scontrol -d show node -o`'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'llmgw;inventory;import;help;kubernetes'= {
        }
        &'llmgw;inventory;import;help;slurm'= {
        }
        &'llmgw;inventory;import;help;help'= {
        }
        &'llmgw;inventory;help'= {
            cand merge 'Join node snapshots into one inventory'
            cand synth 'Write a synthetic fleet inventory for capacity planning'
            cand import 'An inventory from a scheduler''s view of the fleet'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'llmgw;inventory;help;merge'= {
        }
        &'llmgw;inventory;help;synth'= {
        }
        &'llmgw;inventory;help;import'= {
            cand kubernetes 'From `kubectl get nodes -o json|yaml` (and `kubectl get pods -A -o json`)'
            cand slurm 'From `sinfo --json`, `scontrol show nodes --json` or `scontrol -d show node -o`'
        }
        &'llmgw;inventory;help;import;kubernetes'= {
        }
        &'llmgw;inventory;help;import;slurm'= {
        }
        &'llmgw;inventory;help;help'= {
        }
        &'llmgw;render'= {
            cand --color 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb'
            cand --max-input-bytes 'Refuse an input file larger than this many bytes'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
            cand kubernetes 'Kubernetes manifests: a Deployment per single-node replica, a LeaderWorkerSet per multi-node one, a Service per model'
            cand slurm 'Slurm batch scripts: one sbatch script per replica, on exactly its planned nodes'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'llmgw;render;kubernetes'= {
            cand --catalog 'The catalog the plan was made from'
            cand -i 'The inventory to render on: the plan is checked against it (repeat to merge several)'
            cand --inventory 'The inventory to render on: the plan is checked against it (repeat to merge several)'
            cand -o 'Write one file per object into this folder, which render owns: its own stale files there are removed (`-`: one stream on stdout)'
            cand --output 'Write one file per object into this folder, which render owns: its own stale files there are removed (`-`: one stream on stdout)'
            cand --endpoints 'Also write every replica''s URL here, for a gateway or load balancer (JSON, or see --endpoints-format)'
            cand --endpoints-format 'What --endpoints writes: llmgw''s JSON list, or a LiteLLM proxy config (`model_list`, one entry per replica)'
            cand --stop 'Print what to stop when plan NEW replaces plan OLD (nothing is run); with --inventory, Slurm jobs the inventory knows are cancelled by id, and the ComputeDomains of replicas on NVLink domains are deleted'
            cand --format 'How to report what was done to each file under -o DIR: a line each (new, changed, unchanged, removed), or JSON'
            cand -n 'The namespace of every object'
            cand --namespace 'The namespace of every object'
            cand --rdma-resource 'The RDMA device multi-node pods ask for, as the cluster''s RDMA device plugin advertises it (e.g. rdma/ib, or rdma/ib=2)'
            cand --priority-class 'The PriorityClass of every pod (a profile''s `kubernetes.priority_class` wins)'
            cand --service-account 'The ServiceAccount of every pod (a profile''s `kubernetes.service_account` wins)'
            cand --image-pull-secret 'A Secret every pod pulls its image with; repeat for several (a profile''s `kubernetes.image_pull_secrets` wins)'
            cand --devices 'How pods get their GPUs: device-plugin (`nvidia.com/gpu` limits; the plugin picks which GPUs) or dra (a ResourceClaim per pod that admits exactly the planned GPUs, by UUID; needs NVIDIA''s DRA driver)'
            cand --gateway 'Also write what a gateway routes by: an InferencePool per model (Gateway API Inference Extension), picked from by --epp'
            cand --epp 'With --gateway: the endpoint picker''s Service and port [default port: 9002]'
            cand --gateway-parent 'With --gateway: also an HTTPRoute per model, attached to this Gateway, that sends requests naming the model (X-Gateway-Model-Name) to its pool'
            cand --route-timeout 'With --gateway-parent: how long each route lets one request take, end to end (a Gateway API duration: 300s, 10m, 1h30m); gateways'' own defaults (15 to 30 s) cut long generations'
            cand --color 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb'
            cand --max-input-bytes 'Refuse an input file larger than this many bytes'
            cand --allow-stale 'Render even when the catalog no longer has (or wants) some of the plan''s replicas: those are left out with a warning, not an error'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'llmgw;render;slurm'= {
            cand --catalog 'The catalog the plan was made from'
            cand -i 'The inventory to render on: the plan is checked against it (repeat to merge several)'
            cand --inventory 'The inventory to render on: the plan is checked against it (repeat to merge several)'
            cand -o 'Write one file per object into this folder, which render owns: its own stale files there are removed (`-`: one stream on stdout)'
            cand --output 'Write one file per object into this folder, which render owns: its own stale files there are removed (`-`: one stream on stdout)'
            cand --endpoints 'Also write every replica''s URL here, for a gateway or load balancer (JSON, or see --endpoints-format)'
            cand --endpoints-format 'What --endpoints writes: llmgw''s JSON list, or a LiteLLM proxy config (`model_list`, one entry per replica)'
            cand --stop 'Print what to stop when plan NEW replaces plan OLD (nothing is run); with --inventory, Slurm jobs the inventory knows are cancelled by id, and the ComputeDomains of replicas on NVLink domains are deleted'
            cand --format 'How to report what was done to each file under -o DIR: a line each (new, changed, unchanged, removed), or JSON'
            cand --log-dir 'Where jobs write their output and errors (default: the submit directory)'
            cand --partition 'sbatch --partition'
            cand --account 'sbatch --account'
            cand --qos 'sbatch --qos'
            cand --time 'sbatch --time'
            cand --container 'Run every replica in its profile''s image, else its engine''s default image (pyxis: srun --container-image)'
            cand --cache-dir 'With --container: the node folder hub downloads go to, mounted into the container as HF_HOME [default: $HOME/.cache/huggingface]'
            cand --color 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb'
            cand --max-input-bytes 'Refuse an input file larger than this many bytes'
            cand --allow-stale 'Render even when the catalog no longer has (or wants) some of the plan''s replicas: those are left out with a warning, not an error'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'llmgw;render;help'= {
            cand kubernetes 'Kubernetes manifests: a Deployment per single-node replica, a LeaderWorkerSet per multi-node one, a Service per model'
            cand slurm 'Slurm batch scripts: one sbatch script per replica, on exactly its planned nodes'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'llmgw;render;help;kubernetes'= {
        }
        &'llmgw;render;help;slurm'= {
        }
        &'llmgw;render;help;help'= {
        }
        &'llmgw;capacity'= {
            cand -i 'A fleet inventory (TOML, YAML or JSON); repeat to merge several. Without it, this machine is discovered and used'
            cand --inventory 'A fleet inventory (TOML, YAML or JSON); repeat to merge several. Without it, this machine is discovered and used'
            cand --add 'The nodes to add: SHAPE[@FABRIC][,key=value...] with a shape of inventory synth, or like:NODE for copies of a node of the fleet; repeat to compare shapes (each gets its own answer)'
            cand --model 'Answer for this model alone: the catalog''s other models left out'
            cand --max 'The most nodes to try'
            cand --pack 'How the new replicas'' profiles and nodes are chosen: `order` keeps the catalog''s order, one replica at a time; `most` chooses them all together to place the most (the answer is then the fewest nodes with which that places everything)'
            cand --format 'Output format (default: from the extension of -o, else human)'
            cand -o 'Write the output to this file (atomically) instead of stdout; a .json name means --format json'
            cand --output 'Write the output to this file (atomically) instead of stdout; a .json name means --format json'
            cand --color 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb'
            cand --max-input-bytes 'Refuse an input file larger than this many bytes'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'llmgw;diff'= {
            cand --format 'Output format (default: from the extension of -o, else human)'
            cand -o 'Write the output to this file (atomically) instead of stdout; a .json name means --format json'
            cand --output 'Write the output to this file (atomically) instead of stdout; a .json name means --format json'
            cand --color 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb'
            cand --max-input-bytes 'Refuse an input file larger than this many bytes'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'llmgw;map'= {
            cand -i 'The inventory the plan was made on (repeat to merge several)'
            cand --inventory 'The inventory the plan was made on (repeat to merge several)'
            cand -o 'Write the page to this file (atomically) instead of stdout'
            cand --output 'Write the page to this file (atomically) instead of stdout'
            cand --color 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb'
            cand --max-input-bytes 'Refuse an input file larger than this many bytes'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'llmgw;completions'= {
            cand --color 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb'
            cand --max-input-bytes 'Refuse an input file larger than this many bytes'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'llmgw;man'= {
            cand --dir 'Write llmgw.1 and one page per command here instead of printing llmgw.1'
            cand --color 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb'
            cand --max-input-bytes 'Refuse an input file larger than this many bytes'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
        }
        &'llmgw;help'= {
            cand discover 'Inspect this machine and print a one-node inventory'
            cand place 'Place every replica a catalog asks for'
            cand explain-placement 'Show, candidate by candidate, why each replica of one model went where it did'
            cand lint 'Check catalogs for CI: every problem at once, each with its source span'
            cand engine-check 'Find engines on PATH and run their version commands, safely'
            cand nodes 'One row per node: state, free GPUs by class, fabrics, engines, memory, disk'
            cand inventory 'Work with inventory files'
            cand render 'Write what runs a plan where it was placed'
            cand capacity 'How many nodes of a shape to add so that every replica places'
            cand diff 'What changed between two plans (place --format json): exit 1 if any placement differs'
            cand map 'Draw a plan on its fleet: one self-contained HTML page, a cell per GPU'
            cand completions 'Print shell completions'
            cand man 'Print the man page, or write one page per command into a folder'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'llmgw;help;discover'= {
        }
        &'llmgw;help;place'= {
        }
        &'llmgw;help;explain-placement'= {
        }
        &'llmgw;help;lint'= {
        }
        &'llmgw;help;engine-check'= {
        }
        &'llmgw;help;nodes'= {
        }
        &'llmgw;help;inventory'= {
            cand merge 'Join node snapshots into one inventory'
            cand synth 'Write a synthetic fleet inventory for capacity planning'
            cand import 'An inventory from a scheduler''s view of the fleet'
        }
        &'llmgw;help;inventory;merge'= {
        }
        &'llmgw;help;inventory;synth'= {
        }
        &'llmgw;help;inventory;import'= {
            cand kubernetes 'From `kubectl get nodes -o json|yaml` (and `kubectl get pods -A -o json`)'
            cand slurm 'From `sinfo --json`, `scontrol show nodes --json` or `scontrol -d show node -o`'
        }
        &'llmgw;help;inventory;import;kubernetes'= {
        }
        &'llmgw;help;inventory;import;slurm'= {
        }
        &'llmgw;help;render'= {
            cand kubernetes 'Kubernetes manifests: a Deployment per single-node replica, a LeaderWorkerSet per multi-node one, a Service per model'
            cand slurm 'Slurm batch scripts: one sbatch script per replica, on exactly its planned nodes'
        }
        &'llmgw;help;render;kubernetes'= {
        }
        &'llmgw;help;render;slurm'= {
        }
        &'llmgw;help;capacity'= {
        }
        &'llmgw;help;diff'= {
        }
        &'llmgw;help;map'= {
        }
        &'llmgw;help;completions'= {
        }
        &'llmgw;help;man'= {
        }
        &'llmgw;help;help'= {
        }
    ]
    $completions[$command]
}
