"""Records one start of an engine instead of running it (tests/it/engines.rs).

`capture.py PROGRAM ARGS...` appends `{"argv": [PROGRAM, ARGS...], "env":
{...}}` as one JSON line to the file $LLMGW_CAPTURE and exits 0. The test
puts small shell scripts named after the engines' programs first on PATH
that call it, runs what render wrote exactly as the pod or the job runs
it, and then hands every recorded argv to the engine's own parser
(parse.py). `env` holds the variables a start reads its rank and peers
from, as the platform set them.
"""

import json
import os
import sys

KEPT = ("SLURM_NODEID", "SLURM_PROCID", "LWS_LEADER_ADDRESS", "LWS_WORKER_INDEX", "LLMGW_NODE_RANK",
        "LLMGW_LEADER", "POD", "NCCL_IB_HCA", "HF_HOME", "OLLAMA_CONTEXT_LENGTH", "OLLAMA_KEEP_ALIVE")

with open(os.environ["LLMGW_CAPTURE"], "a") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "env": {k: os.environ[k] for k in KEPT if k in os.environ}}) + "\n")
