
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'llmgw' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'llmgw'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'llmgw' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Refuse an input file larger than this many bytes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('discover', 'discover', [CompletionResultType]::ParameterValue, 'Inspect this machine and print a one-node inventory')
            [CompletionResult]::new('place', 'place', [CompletionResultType]::ParameterValue, 'Place every replica a catalog asks for')
            [CompletionResult]::new('explain-placement', 'explain-placement', [CompletionResultType]::ParameterValue, 'Show, candidate by candidate, why each replica of one model went where it did')
            [CompletionResult]::new('lint', 'lint', [CompletionResultType]::ParameterValue, 'Check catalogs for CI: every problem at once, each with its source span')
            [CompletionResult]::new('engine-check', 'engine-check', [CompletionResultType]::ParameterValue, 'Find engines on PATH and run their version commands, safely')
            [CompletionResult]::new('nodes', 'nodes', [CompletionResultType]::ParameterValue, 'One row per node: state, free GPUs by class, fabrics, engines, memory, disk')
            [CompletionResult]::new('inventory', 'inventory', [CompletionResultType]::ParameterValue, 'Work with inventory files')
            [CompletionResult]::new('render', 'render', [CompletionResultType]::ParameterValue, 'Write what runs a plan where it was placed')
            [CompletionResult]::new('capacity', 'capacity', [CompletionResultType]::ParameterValue, 'How many nodes of a shape to add so that every replica places')
            [CompletionResult]::new('diff', 'diff', [CompletionResultType]::ParameterValue, 'What changed between two plans (place --format json): exit 1 if any placement differs')
            [CompletionResult]::new('map', 'map', [CompletionResultType]::ParameterValue, 'Draw a plan on its fleet: one self-contained HTML page, a cell per GPU')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print shell completions')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the man page, or write one page per command into a folder')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'llmgw;discover' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Node config (default: /etc/llmgw/node.toml when present)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (default: from the extension of -o, else toml); nfd is a Node Feature Discovery feature file of llmgw.io labels')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write to this file (atomically) instead of stdout')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write to this file (atomically) instead of stdout')
            [CompletionResult]::new('--probe-timeout', '--probe-timeout', [CompletionResultType]::ParameterName, 'Seconds the SGLang probe may take')
            [CompletionResult]::new('--root', '--root', [CompletionResultType]::ParameterName, 'Read the machine under DIR instead of / (sysfs in DIR/sys, procfs in DIR/proc, the default config in DIR/etc/llmgw): for tests and for inspecting a copied tree')
            [CompletionResult]::new('--gpu-facts', '--gpu-facts', [CompletionResultType]::ParameterName, 'Take the GPUs from this JSON file instead of NVML: a list of {index, name, memory_mb, uuid, pci_bus_id, mig, active_links, mig_devices, fabric}, where active_links are the remote PCI bus ids of the GPU''s active NVLinks, mig_devices [{index, profile, memory_mb, uuid}] and fabric NVML''s fabric info {cluster_uuid, clique_id, completed}')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Refuse an input file larger than this many bytes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'llmgw;place' {
            [CompletionResult]::new('-i', '-i', [CompletionResultType]::ParameterName, 'A fleet inventory (TOML, YAML or JSON); repeat to merge several. Without it, this machine is discovered and used')
            [CompletionResult]::new('--inventory', '--inventory', [CompletionResultType]::ParameterName, 'A fleet inventory (TOML, YAML or JSON); repeat to merge several. Without it, this machine is discovered and used')
            [CompletionResult]::new('--rejections', '--rejections', [CompletionResultType]::ParameterName, 'In JSON, why each unplaced replica was left out: grouped reasons, the full per-node list, or none (closest misses are always given)')
            [CompletionResult]::new('--pack', '--pack', [CompletionResultType]::ParameterName, 'How new replicas'' profiles and nodes are chosen: `order` (the catalog''s order, one at a time) or `most` (together, to place the most)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (default: from the extension of -o, else human)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the output to this file (atomically) instead of stdout; a .json name means --format json, a .html name --format html. The summary is printed on stderr')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the output to this file (atomically) instead of stdout; a .json name means --format json, a .html name --format html. The summary is printed on stderr')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Refuse an input file larger than this many bytes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'llmgw;explain-placement' {
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'The model to explain')
            [CompletionResult]::new('--replica', '--replica', [CompletionResultType]::ParameterName, 'Only this replica index')
            [CompletionResult]::new('--pack', '--pack', [CompletionResultType]::ParameterName, 'How new replicas'' profiles and nodes are chosen: `order` (the catalog''s order, one at a time) or `most` (together, to place the most)')
            [CompletionResult]::new('-i', '-i', [CompletionResultType]::ParameterName, 'A fleet inventory (TOML, YAML or JSON); repeat to merge several. Without it, this machine is discovered and used')
            [CompletionResult]::new('--inventory', '--inventory', [CompletionResultType]::ParameterName, 'A fleet inventory (TOML, YAML or JSON); repeat to merge several. Without it, this machine is discovered and used')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (default: from the extension of -o, else human)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the output to this file (atomically) instead of stdout; a .json name means --format json')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the output to this file (atomically) instead of stdout; a .json name means --format json')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Refuse an input file larger than this many bytes')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'List every rejection after the summary')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'List every rejection after the summary')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'llmgw;lint' {
            [CompletionResult]::new('-i', '-i', [CompletionResultType]::ParameterName, 'Also check the catalogs against this fleet (repeat to merge several)')
            [CompletionResult]::new('--inventory', '--inventory', [CompletionResultType]::ParameterName, 'Also check the catalogs against this fleet (repeat to merge several)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (default: from the extension of -o, else human)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the output to this file (atomically) instead of stdout (human reports go to stderr); a .json name means --format json')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the output to this file (atomically) instead of stdout (human reports go to stderr); a .json name means --format json')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Refuse an input file larger than this many bytes')
            [CompletionResult]::new('--deny-warnings', '--deny-warnings', [CompletionResultType]::ParameterName, 'Exit 1 on warnings too')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'llmgw;engine-check' {
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Seconds a version command may take before its process group is killed')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (default: from the extension of -o, else human)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the output to this file (atomically) instead of stdout; a .json name means --format json')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the output to this file (atomically) instead of stdout; a .json name means --format json')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Refuse an input file larger than this many bytes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'llmgw;nodes' {
            [CompletionResult]::new('-i', '-i', [CompletionResultType]::ParameterName, 'A fleet inventory (TOML, YAML or JSON); repeat to merge several. Without it, this machine is discovered and used')
            [CompletionResult]::new('--inventory', '--inventory', [CompletionResultType]::ParameterName, 'A fleet inventory (TOML, YAML or JSON); repeat to merge several. Without it, this machine is discovered and used')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Only nodes carrying these labels: KEY=VALUE[,KEY=VALUE...], as kubectl reads it (every pair must hold; repeat to add more)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Only nodes carrying these labels: KEY=VALUE[,KEY=VALUE...], as kubectl reads it (every pair must hold; repeat to add more)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (default: from the extension of -o, else human)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the output to this file (atomically) instead of stdout; a .json name means --format json')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the output to this file (atomically) instead of stdout; a .json name means --format json')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Refuse an input file larger than this many bytes')
            [CompletionResult]::new('-w', '-w', [CompletionResultType]::ParameterName, 'Also show each node''s labels')
            [CompletionResult]::new('--wide', '--wide', [CompletionResultType]::ParameterName, 'Also show each node''s labels')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'llmgw;inventory' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Refuse an input file larger than this many bytes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('merge', 'merge', [CompletionResultType]::ParameterValue, 'Join node snapshots into one inventory')
            [CompletionResult]::new('synth', 'synth', [CompletionResultType]::ParameterValue, 'Write a synthetic fleet inventory for capacity planning')
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'An inventory from a scheduler''s view of the fleet')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'llmgw;inventory;merge' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write here (atomically) instead of stdout; the format follows the extension')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write here (atomically) instead of stdout; the format follows the extension')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (default: from the extension of -o, else toml)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Refuse an input file larger than this many bytes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'llmgw;inventory;synth' {
            [CompletionResult]::new('--cordoned', '--cordoned', [CompletionResultType]::ParameterName, 'Fraction of nodes made cordoned, 0 to 1 (exactly that share, rounded)')
            [CompletionResult]::new('--load', '--load', [CompletionResultType]::ParameterName, 'Fraction of GPUs already allocated, 0 to 1')
            [CompletionResult]::new('--seed', '--seed', [CompletionResultType]::ParameterName, 'Seed, so the same command writes the same fleet')
            [CompletionResult]::new('--prefix', '--prefix', [CompletionResultType]::ParameterName, 'Prefix of node ids')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write here (atomically) instead of stdout; the format follows the extension')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write here (atomically) instead of stdout; the format follows the extension')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (default: from the extension of -o, else toml)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Refuse an input file larger than this many bytes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'llmgw;inventory;import' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Refuse an input file larger than this many bytes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('kubernetes', 'kubernetes', [CompletionResultType]::ParameterValue, 'From `kubectl get nodes -o json|yaml` (and `kubectl get pods -A -o json`)')
            [CompletionResult]::new('slurm', 'slurm', [CompletionResultType]::ParameterValue, 'From `sinfo --json`, `scontrol show nodes --json` or `scontrol -d show node -o`')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'llmgw;inventory;import;kubernetes' {
            [CompletionResult]::new('--pods', '--pods', [CompletionResultType]::ParameterName, 'The output of `kubectl get pods -A -o json`: pods holding GPUs or CPUs become allocations')
            [CompletionResult]::new('--resource-slices', '--resource-slices', [CompletionResultType]::ParameterName, 'The output of `kubectl get resourceslices -o json`: nodes whose GPUs NVIDIA''s DRA driver publishes get them from there, each with its UUID and device name')
            [CompletionResult]::new('--claims', '--claims', [CompletionResultType]::ParameterName, 'The output of `kubectl get resourceclaims -A -o json`: the devices each allocated claim was given are held by its replica')
            [CompletionResult]::new('--fabric-label', '--fabric-label', [CompletionResultType]::ParameterName, 'A node label whose value names the node''s fabric, for nodes without llmgw''s own labels')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Only pods in this namespace are llmgw''s replicas (repeatable); others with llmgw''s labels stay foreign [default: every namespace, with a warning]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write here (atomically) instead of stdout; the format follows the extension')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write here (atomically) instead of stdout; the format follows the extension')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (default: from the extension of -o, else toml)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Refuse an input file larger than this many bytes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'llmgw;inventory;import;slurm' {
            [CompletionResult]::new('--topology', '--topology', [CompletionResultType]::ParameterName, 'Slurm''s topology.conf or topology.yaml: nodes under one top-level switch (or in one block) share a fabric')
            [CompletionResult]::new('--fabric-feature', '--fabric-feature', [CompletionResultType]::ParameterName, 'A feature prefix naming the node''s fabric, when there is no topology (`ib-` for a feature `ib-east`)')
            [CompletionResult]::new('--jobs', '--jobs', [CompletionResultType]::ParameterName, 'The output of `squeue --json` or `scontrol -d show job -o`: llmgw''s jobs become its replicas, others stay busy')
            [CompletionResult]::new('--jobs-user', '--jobs-user', [CompletionResultType]::ParameterName, 'Only this user''s jobs (a name or uid) are llmgw''s replicas; other users'' jobs with llmgw''s comment stay foreign [default: $USER, else $LOGNAME, else your uid]')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write here (atomically) instead of stdout; the format follows the extension')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write here (atomically) instead of stdout; the format follows the extension')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (default: from the extension of -o, else toml)')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Refuse an input file larger than this many bytes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'llmgw;inventory;import;help' {
            [CompletionResult]::new('kubernetes', 'kubernetes', [CompletionResultType]::ParameterValue, 'From `kubectl get nodes -o json|yaml` (and `kubectl get pods -A -o json`)')
            [CompletionResult]::new('slurm', 'slurm', [CompletionResultType]::ParameterValue, 'From `sinfo --json`, `scontrol show nodes --json` or `scontrol -d show node -o`')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'llmgw;inventory;import;help;kubernetes' {
            break
        }
        'llmgw;inventory;import;help;slurm' {
            break
        }
        'llmgw;inventory;import;help;help' {
            break
        }
        'llmgw;inventory;help' {
            [CompletionResult]::new('merge', 'merge', [CompletionResultType]::ParameterValue, 'Join node snapshots into one inventory')
            [CompletionResult]::new('synth', 'synth', [CompletionResultType]::ParameterValue, 'Write a synthetic fleet inventory for capacity planning')
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'An inventory from a scheduler''s view of the fleet')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'llmgw;inventory;help;merge' {
            break
        }
        'llmgw;inventory;help;synth' {
            break
        }
        'llmgw;inventory;help;import' {
            [CompletionResult]::new('kubernetes', 'kubernetes', [CompletionResultType]::ParameterValue, 'From `kubectl get nodes -o json|yaml` (and `kubectl get pods -A -o json`)')
            [CompletionResult]::new('slurm', 'slurm', [CompletionResultType]::ParameterValue, 'From `sinfo --json`, `scontrol show nodes --json` or `scontrol -d show node -o`')
            break
        }
        'llmgw;inventory;help;import;kubernetes' {
            break
        }
        'llmgw;inventory;help;import;slurm' {
            break
        }
        'llmgw;inventory;help;help' {
            break
        }
        'llmgw;render' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Refuse an input file larger than this many bytes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('kubernetes', 'kubernetes', [CompletionResultType]::ParameterValue, 'Kubernetes manifests: a Deployment per single-node replica, a LeaderWorkerSet per multi-node one, a Service per model')
            [CompletionResult]::new('slurm', 'slurm', [CompletionResultType]::ParameterValue, 'Slurm batch scripts: one sbatch script per replica, on exactly its planned nodes')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'llmgw;render;kubernetes' {
            [CompletionResult]::new('--catalog', '--catalog', [CompletionResultType]::ParameterName, 'The catalog the plan was made from')
            [CompletionResult]::new('-i', '-i', [CompletionResultType]::ParameterName, 'The inventory to render on: the plan is checked against it (repeat to merge several)')
            [CompletionResult]::new('--inventory', '--inventory', [CompletionResultType]::ParameterName, 'The inventory to render on: the plan is checked against it (repeat to merge several)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write one file per object into this folder, which render owns: its own stale files there are removed (`-`: one stream on stdout)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write one file per object into this folder, which render owns: its own stale files there are removed (`-`: one stream on stdout)')
            [CompletionResult]::new('--endpoints', '--endpoints', [CompletionResultType]::ParameterName, 'Also write every replica''s URL here, for a gateway or load balancer (JSON, or see --endpoints-format)')
            [CompletionResult]::new('--endpoints-format', '--endpoints-format', [CompletionResultType]::ParameterName, 'What --endpoints writes: llmgw''s JSON list, or a LiteLLM proxy config (`model_list`, one entry per replica)')
            [CompletionResult]::new('--stop', '--stop', [CompletionResultType]::ParameterName, 'Print what to stop when plan NEW replaces plan OLD (nothing is run); with --inventory, Slurm jobs the inventory knows are cancelled by id, and the ComputeDomains of replicas on NVLink domains are deleted')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'How to report what was done to each file under -o DIR: a line each (new, changed, unchanged, removed), or JSON')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'The namespace of every object')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'The namespace of every object')
            [CompletionResult]::new('--rdma-resource', '--rdma-resource', [CompletionResultType]::ParameterName, 'The RDMA device multi-node pods ask for, as the cluster''s RDMA device plugin advertises it (e.g. rdma/ib, or rdma/ib=2)')
            [CompletionResult]::new('--priority-class', '--priority-class', [CompletionResultType]::ParameterName, 'The PriorityClass of every pod (a profile''s `kubernetes.priority_class` wins)')
            [CompletionResult]::new('--service-account', '--service-account', [CompletionResultType]::ParameterName, 'The ServiceAccount of every pod (a profile''s `kubernetes.service_account` wins)')
            [CompletionResult]::new('--image-pull-secret', '--image-pull-secret', [CompletionResultType]::ParameterName, 'A Secret every pod pulls its image with; repeat for several (a profile''s `kubernetes.image_pull_secrets` wins)')
            [CompletionResult]::new('--devices', '--devices', [CompletionResultType]::ParameterName, 'How pods get their GPUs: device-plugin (`nvidia.com/gpu` limits; the plugin picks which GPUs) or dra (a ResourceClaim per pod that admits exactly the planned GPUs, by UUID; needs NVIDIA''s DRA driver)')
            [CompletionResult]::new('--gateway', '--gateway', [CompletionResultType]::ParameterName, 'Also write what a gateway routes by: an InferencePool per model (Gateway API Inference Extension), picked from by --epp')
            [CompletionResult]::new('--epp', '--epp', [CompletionResultType]::ParameterName, 'With --gateway: the endpoint picker''s Service and port [default port: 9002]')
            [CompletionResult]::new('--gateway-parent', '--gateway-parent', [CompletionResultType]::ParameterName, 'With --gateway: also an HTTPRoute per model, attached to this Gateway, that sends requests naming the model (X-Gateway-Model-Name) to its pool')
            [CompletionResult]::new('--route-timeout', '--route-timeout', [CompletionResultType]::ParameterName, 'With --gateway-parent: how long each route lets one request take, end to end (a Gateway API duration: 300s, 10m, 1h30m); gateways'' own defaults (15 to 30 s) cut long generations')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Refuse an input file larger than this many bytes')
            [CompletionResult]::new('--allow-stale', '--allow-stale', [CompletionResultType]::ParameterName, 'Render even when the catalog no longer has (or wants) some of the plan''s replicas: those are left out with a warning, not an error')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'llmgw;render;slurm' {
            [CompletionResult]::new('--catalog', '--catalog', [CompletionResultType]::ParameterName, 'The catalog the plan was made from')
            [CompletionResult]::new('-i', '-i', [CompletionResultType]::ParameterName, 'The inventory to render on: the plan is checked against it (repeat to merge several)')
            [CompletionResult]::new('--inventory', '--inventory', [CompletionResultType]::ParameterName, 'The inventory to render on: the plan is checked against it (repeat to merge several)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write one file per object into this folder, which render owns: its own stale files there are removed (`-`: one stream on stdout)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write one file per object into this folder, which render owns: its own stale files there are removed (`-`: one stream on stdout)')
            [CompletionResult]::new('--endpoints', '--endpoints', [CompletionResultType]::ParameterName, 'Also write every replica''s URL here, for a gateway or load balancer (JSON, or see --endpoints-format)')
            [CompletionResult]::new('--endpoints-format', '--endpoints-format', [CompletionResultType]::ParameterName, 'What --endpoints writes: llmgw''s JSON list, or a LiteLLM proxy config (`model_list`, one entry per replica)')
            [CompletionResult]::new('--stop', '--stop', [CompletionResultType]::ParameterName, 'Print what to stop when plan NEW replaces plan OLD (nothing is run); with --inventory, Slurm jobs the inventory knows are cancelled by id, and the ComputeDomains of replicas on NVLink domains are deleted')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'How to report what was done to each file under -o DIR: a line each (new, changed, unchanged, removed), or JSON')
            [CompletionResult]::new('--log-dir', '--log-dir', [CompletionResultType]::ParameterName, 'Where jobs write their output and errors (default: the submit directory)')
            [CompletionResult]::new('--partition', '--partition', [CompletionResultType]::ParameterName, 'sbatch --partition')
            [CompletionResult]::new('--account', '--account', [CompletionResultType]::ParameterName, 'sbatch --account')
            [CompletionResult]::new('--qos', '--qos', [CompletionResultType]::ParameterName, 'sbatch --qos')
            [CompletionResult]::new('--time', '--time', [CompletionResultType]::ParameterName, 'sbatch --time')
            [CompletionResult]::new('--container', '--container', [CompletionResultType]::ParameterName, 'Run every replica in its profile''s image, else its engine''s default image (pyxis: srun --container-image)')
            [CompletionResult]::new('--cache-dir', '--cache-dir', [CompletionResultType]::ParameterName, 'With --container: the node folder hub downloads go to, mounted into the container as HF_HOME [default: $HOME/.cache/huggingface]')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Refuse an input file larger than this many bytes')
            [CompletionResult]::new('--allow-stale', '--allow-stale', [CompletionResultType]::ParameterName, 'Render even when the catalog no longer has (or wants) some of the plan''s replicas: those are left out with a warning, not an error')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'llmgw;render;help' {
            [CompletionResult]::new('kubernetes', 'kubernetes', [CompletionResultType]::ParameterValue, 'Kubernetes manifests: a Deployment per single-node replica, a LeaderWorkerSet per multi-node one, a Service per model')
            [CompletionResult]::new('slurm', 'slurm', [CompletionResultType]::ParameterValue, 'Slurm batch scripts: one sbatch script per replica, on exactly its planned nodes')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'llmgw;render;help;kubernetes' {
            break
        }
        'llmgw;render;help;slurm' {
            break
        }
        'llmgw;render;help;help' {
            break
        }
        'llmgw;capacity' {
            [CompletionResult]::new('-i', '-i', [CompletionResultType]::ParameterName, 'A fleet inventory (TOML, YAML or JSON); repeat to merge several. Without it, this machine is discovered and used')
            [CompletionResult]::new('--inventory', '--inventory', [CompletionResultType]::ParameterName, 'A fleet inventory (TOML, YAML or JSON); repeat to merge several. Without it, this machine is discovered and used')
            [CompletionResult]::new('--add', '--add', [CompletionResultType]::ParameterName, 'The nodes to add: SHAPE[@FABRIC][,key=value...] with a shape of inventory synth, or like:NODE for copies of a node of the fleet; repeat to compare shapes (each gets its own answer)')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'Answer for this model alone: the catalog''s other models left out')
            [CompletionResult]::new('--max', '--max', [CompletionResultType]::ParameterName, 'The most nodes to try')
            [CompletionResult]::new('--pack', '--pack', [CompletionResultType]::ParameterName, 'How the new replicas'' profiles and nodes are chosen: `order` keeps the catalog''s order, one replica at a time; `most` chooses them all together to place the most (the answer is then the fewest nodes with which that places everything)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (default: from the extension of -o, else human)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the output to this file (atomically) instead of stdout; a .json name means --format json')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the output to this file (atomically) instead of stdout; a .json name means --format json')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Refuse an input file larger than this many bytes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'llmgw;diff' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format (default: from the extension of -o, else human)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the output to this file (atomically) instead of stdout; a .json name means --format json')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the output to this file (atomically) instead of stdout; a .json name means --format json')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Refuse an input file larger than this many bytes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'llmgw;map' {
            [CompletionResult]::new('-i', '-i', [CompletionResultType]::ParameterName, 'The inventory the plan was made on (repeat to merge several)')
            [CompletionResult]::new('--inventory', '--inventory', [CompletionResultType]::ParameterName, 'The inventory the plan was made on (repeat to merge several)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the page to this file (atomically) instead of stdout')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the page to this file (atomically) instead of stdout')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Refuse an input file larger than this many bytes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'llmgw;completions' {
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Refuse an input file larger than this many bytes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'llmgw;man' {
            [CompletionResult]::new('--dir', '--dir', [CompletionResultType]::ParameterName, 'Write llmgw.1 and one page per command here instead of printing llmgw.1')
            [CompletionResult]::new('--color', '--color', [CompletionResultType]::ParameterName, 'When to colour diagnostics: auto follows the terminal, NO_COLOR, CLICOLOR_FORCE and TERM=dumb')
            [CompletionResult]::new('--max-input-bytes', '--max-input-bytes', [CompletionResultType]::ParameterName, 'Refuse an input file larger than this many bytes')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'llmgw;help' {
            [CompletionResult]::new('discover', 'discover', [CompletionResultType]::ParameterValue, 'Inspect this machine and print a one-node inventory')
            [CompletionResult]::new('place', 'place', [CompletionResultType]::ParameterValue, 'Place every replica a catalog asks for')
            [CompletionResult]::new('explain-placement', 'explain-placement', [CompletionResultType]::ParameterValue, 'Show, candidate by candidate, why each replica of one model went where it did')
            [CompletionResult]::new('lint', 'lint', [CompletionResultType]::ParameterValue, 'Check catalogs for CI: every problem at once, each with its source span')
            [CompletionResult]::new('engine-check', 'engine-check', [CompletionResultType]::ParameterValue, 'Find engines on PATH and run their version commands, safely')
            [CompletionResult]::new('nodes', 'nodes', [CompletionResultType]::ParameterValue, 'One row per node: state, free GPUs by class, fabrics, engines, memory, disk')
            [CompletionResult]::new('inventory', 'inventory', [CompletionResultType]::ParameterValue, 'Work with inventory files')
            [CompletionResult]::new('render', 'render', [CompletionResultType]::ParameterValue, 'Write what runs a plan where it was placed')
            [CompletionResult]::new('capacity', 'capacity', [CompletionResultType]::ParameterValue, 'How many nodes of a shape to add so that every replica places')
            [CompletionResult]::new('diff', 'diff', [CompletionResultType]::ParameterValue, 'What changed between two plans (place --format json): exit 1 if any placement differs')
            [CompletionResult]::new('map', 'map', [CompletionResultType]::ParameterValue, 'Draw a plan on its fleet: one self-contained HTML page, a cell per GPU')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print shell completions')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the man page, or write one page per command into a folder')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'llmgw;help;discover' {
            break
        }
        'llmgw;help;place' {
            break
        }
        'llmgw;help;explain-placement' {
            break
        }
        'llmgw;help;lint' {
            break
        }
        'llmgw;help;engine-check' {
            break
        }
        'llmgw;help;nodes' {
            break
        }
        'llmgw;help;inventory' {
            [CompletionResult]::new('merge', 'merge', [CompletionResultType]::ParameterValue, 'Join node snapshots into one inventory')
            [CompletionResult]::new('synth', 'synth', [CompletionResultType]::ParameterValue, 'Write a synthetic fleet inventory for capacity planning')
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'An inventory from a scheduler''s view of the fleet')
            break
        }
        'llmgw;help;inventory;merge' {
            break
        }
        'llmgw;help;inventory;synth' {
            break
        }
        'llmgw;help;inventory;import' {
            [CompletionResult]::new('kubernetes', 'kubernetes', [CompletionResultType]::ParameterValue, 'From `kubectl get nodes -o json|yaml` (and `kubectl get pods -A -o json`)')
            [CompletionResult]::new('slurm', 'slurm', [CompletionResultType]::ParameterValue, 'From `sinfo --json`, `scontrol show nodes --json` or `scontrol -d show node -o`')
            break
        }
        'llmgw;help;inventory;import;kubernetes' {
            break
        }
        'llmgw;help;inventory;import;slurm' {
            break
        }
        'llmgw;help;render' {
            [CompletionResult]::new('kubernetes', 'kubernetes', [CompletionResultType]::ParameterValue, 'Kubernetes manifests: a Deployment per single-node replica, a LeaderWorkerSet per multi-node one, a Service per model')
            [CompletionResult]::new('slurm', 'slurm', [CompletionResultType]::ParameterValue, 'Slurm batch scripts: one sbatch script per replica, on exactly its planned nodes')
            break
        }
        'llmgw;help;render;kubernetes' {
            break
        }
        'llmgw;help;render;slurm' {
            break
        }
        'llmgw;help;capacity' {
            break
        }
        'llmgw;help;diff' {
            break
        }
        'llmgw;help;map' {
            break
        }
        'llmgw;help;completions' {
            break
        }
        'llmgw;help;man' {
            break
        }
        'llmgw;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
