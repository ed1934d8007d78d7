"""Holds command lines to an engine's own argument parser (tests/it/engines.rs).

Run with the python of an environment that has the engine installed
(`.ci/engines vllm|sglang` makes one). Reads one JSON object a line on
standard input, `{"argv": [...], "ray": false}`: the argv of one start as
the pod or job runs it, program first (`["vllm", "serve", ...]` or
`["python3", "-m", "sglang.launch_server", ...]`), and whether Ray is
installed where it runs (the default images have none; nor has this
environment). Writes one JSON object a line: `{"ok": true, "args": {...}}`
with what the engine read, or `{"ok": false, "code": N, "error": "..."}`
with what it said.

Nothing is imitated: vLLM's own `vllm` entry point (`vllm.entrypoints.cli.main`)
builds its parser, parses and runs the serve command's own checks
(`validate_parsed_serve_args`); only the last step, starting the server, is
replaced by reporting what was parsed, and the parallel settings then go
through vLLM's own `ParallelConfig` checks (those that need no model).
SGLang's `launch_server` module reads its arguments with
`prepare_server_args`, as `python3 -m sglang.launch_server` does, and is
stopped before it starts a server.
"""

import contextlib
import io
import json
import os
import sys

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")

SHOWN = (
    "model_tag", "model", "model_path", "host", "port", "tensor_parallel_size", "tp_size",
    "pipeline_parallel_size", "nnodes", "node_rank", "master_addr", "master_port", "headless",
    "served_model_name", "distributed_executor_backend", "dist_init_addr", "max_model_len",
    "context_length", "gpu_memory_utilization", "mem_fraction_static",
)


class Parsed(Exception):
    def __init__(self, ns):
        super().__init__()
        self.ns = ns


def shown(ns):
    return {k: getattr(ns, k) for k in SHOWN if hasattr(ns, k)}


def vllm(argv, ray):
    import vllm.entrypoints.cli.serve as serve
    from vllm.entrypoints.cli.main import main

    def report(args):
        raise Parsed(args)

    serve.ServeSubcommand.cmd = staticmethod(report)
    sys.argv = ["vllm"] + argv[1:]
    try:
        main()
    except Parsed as p:
        args = p.ns
    else:
        raise SystemExit("vllm: nothing was served (no subcommand?)")
    if args.distributed_executor_backend != "ray" or not ray:
        # The checks of vLLM's ParallelConfig that need no model (nnodes,
        # node_rank, backend). Over Ray it imports Ray: where Ray is not
        # installed (the default image, this environment) that fails, as it
        # fails in the pod; where it is, only the parse is checked.
        from vllm.config import ParallelConfig

        ParallelConfig(
            tensor_parallel_size=args.tensor_parallel_size,
            pipeline_parallel_size=args.pipeline_parallel_size,
            nnodes=args.nnodes,
            node_rank=args.node_rank,
            master_addr=args.master_addr,
            master_port=args.master_port,
            distributed_executor_backend=args.distributed_executor_backend,
        )
    return shown(args)


def sglang(argv, ray):
    if argv[1:3] != ["-m", "sglang.launch_server"]:
        raise SystemExit("sglang: not `python3 -m sglang.launch_server`: %r" % argv[:3])
    from sglang.srt.server_args import prepare_server_args

    server_args = prepare_server_args(argv[3:])
    return shown(server_args)


def main():
    engine = sys.argv[1]
    parse = {"vllm": vllm, "sglang": sglang}[engine]
    for line in sys.stdin:
        if not line.strip():
            continue
        start = json.loads(line)
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
                args = parse(start["argv"], start.get("ray", False))
            out = {"ok": True, "args": args}
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
            msg = err.getvalue().strip().splitlines()
            out = {"ok": code == 0, "code": code, "error": msg[-1] if msg else str(e.code)}
        except Exception as e:  # what the engine raises for a value it refuses
            out = {"ok": False, "code": 1, "error": "%s: %s" % (type(e).__name__, e)}
        print(json.dumps(out, default=str), flush=True)


if __name__ == "__main__":
    main()
