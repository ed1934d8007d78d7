"""`ollama` stand-in: serve, pull, run, list. Contract (ollama/ollama
envconfig/config.go Host/ConnectableHost, server/routes.go, cmd/):
  - `ollama serve` listens on OLLAMA_HOST (default 127.0.0.1:11434; a host
    without a port gets 11434, `http://host` gets 80, `https://host` 443;
    quotes and spaces trimmed); a taken port fails ("listen tcp ...: bind:
    address already in use");
  - no /health (404): `GET /` answers "Ollama is running", /api/version,
    /api/tags and /v1/models list the pulled models, /api/pull pulls (no
    download), /api/generate and /v1/chat/completions need a pulled model;
  - `ollama pull NAME` / `ollama run NAME [PROMPT]` / `ollama list` are
    clients of OLLAMA_HOST (0.0.0.0 and :: mean the loopback), failing with
    "could not connect to ollama server" when none answers; `run` pulls
    first, as ollama does;
  - a model is listed only once its pull has ended (STANDIN_PULL_SECONDS,
    default 1: a real pull downloads gigabytes and writes the manifest
    last), so /api/tags, /v1/models, `ollama list` and `ollama show` say
    nothing of it before;
  - `ollama cp SRC DST` (POST /api/copy {source, destination}) names a
    pulled model again, 404 `model "SRC" not found` otherwise; `ollama
    show NAME` (POST /api/show {model}) exits 1 with "Error: model 'NAME'
    not found" until NAME is there (server/routes.go CopyHandler,
    ShowHandler; cmd/cmd.go CopyHandler, ShowHandler). Names without a tag
    are `NAME:latest`, in the OpenAI-compatible routes too.
"""

import json
import sys
import urllib.error
import urllib.request

from . import core


def host_from_env():
    """envconfig.Host(): (scheme, host, port)."""
    s = core.os.environ.get("OLLAMA_HOST", "").strip().strip("\"'")
    default_port = "11434"
    scheme, sep, hostport = s.partition("://")
    if not sep:
        scheme, hostport = "http", s
    elif scheme == "http":
        default_port = "80"
    elif scheme == "https":
        default_port = "443"
    hostport = hostport.split("/", 1)[0]
    try:
        host, port = core.split_hostport(hostport)
        port = str(port)
    except ValueError:
        host, port = "127.0.0.1", default_port
        if hostport:
            host = hostport.strip("[]")
    try:
        p = int(port)
        if not 0 <= p <= 65535:
            raise ValueError
    except ValueError:
        p = int(default_port)
    return scheme, host, p


def tagged(name):
    return name if ":" in name.rsplit("/", 1)[-1] else name + ":latest"


def main(argv):
    if not argv or argv[0] in ("-h", "--help", "help"):
        print("Usage:\n  ollama [command]\n\nAvailable Commands:\n  serve pull run list ps (llmgw stand-in)")
        return 0
    if argv[0] in ("-v", "--version"):
        print("ollama version is 0.12.0 (llmgw stand-in)")
        return 0
    cmd, rest = argv[0], argv[1:]
    if cmd in ("serve", "start"):
        return serve(rest)
    if cmd == "pull":
        return client_pull(rest)
    if cmd == "run":
        return client_run(rest)
    if cmd in ("list", "ls"):
        return client_list(rest)
    if cmd in ("cp", "copy"):
        return client_copy(rest)
    if cmd == "show":
        return client_show(rest)
    sys.stderr.write(f'Error: unknown command "{cmd}" for "ollama"\nRun \'ollama --help\' for usage.\n')
    return 1


def serve(argv):
    record = core.Record("ollama", ["ollama", "serve"] + list(argv))
    if argv:
        core.fail(record, "ollama", f'Error: unknown flag: {argv[0]}')
    _, host, port = host_from_env()
    net = core.run_refusing(record, "ollama", core.Net)
    pulled = []
    record.set(host=host, port=port)
    core.pdeathsig()

    def models():
        return list(pulled)

    app = core.App(record, models, "library")
    app.not_found = lambda path: "404 page not found"
    app.not_found_type = "text/plain"
    del app.routes[("GET", "/health")]
    running = lambda _: (200, "Ollama is running", "text/plain")  # noqa: E731

    def pull(body):
        name = tagged((body or {}).get("model") or (body or {}).get("name") or "")
        if not name or name == ":latest":
            return 400, {"error": "model is required"}
        # The download takes time; the model is there once it ends.
        core.time.sleep(float(core.os.environ.get("STANDIN_PULL_SECONDS", "1")))
        if name not in pulled:
            pulled.append(name)
        return 200, {"status": "success"}

    def copy(body):
        raw = (body or {}).get("source") or ""
        src = tagged(raw)
        dst = tagged((body or {}).get("destination") or "")
        if src not in pulled:
            # server/routes.go CopyHandler: fmt.Sprintf("model %q not found", r.Source),
            # the name as sent; ShowHandler says 'NAME:TAG' (DisplayShortest).
            return 404, {"error": f"model {json.dumps(raw)} not found"}
        if dst not in pulled:
            pulled.append(dst)
        return 200, {}

    def show(body):
        name = tagged((body or {}).get("model") or (body or {}).get("name") or "")
        if name not in pulled:
            return 404, {"error": f"model '{name}' not found"}
        return 200, {"modelfile": f"FROM {name}", "details": {"format": "gguf"}}

    def tags(_):
        return 200, {"models": [{"name": m, "model": m, "size": 1, "digest": "standin"} for m in pulled]}

    def generate(body):
        name = tagged((body or {}).get("model") or "")
        if name not in pulled:
            return 404, {"error": f"model '{name}' not found"}
        return 200, {"model": name, "response": "standin", "done": True}

    def chat(body):
        if body is not None and body.get("model"):
            body = dict(body, model=tagged(body["model"]))
        return app.complete(body)

    app.routes.update({
        ("GET", "/"): running,
        ("GET", "/api/version"): lambda _: (200, {"version": "0.12.0"}),
        ("GET", "/api/tags"): tags,
        ("GET", "/api/ps"): tags,
        ("POST", "/api/pull"): pull,
        ("POST", "/api/copy"): copy,
        ("POST", "/api/show"): show,
        ("POST", "/api/generate"): generate,
        ("POST", "/api/chat"): generate,
        ("POST", "/v1/chat/completions"): chat,
        ("POST", "/v1/completions"): chat,
    })
    try:
        socks = net.listen(host, port)
    except OSError as e:
        core.fail(record, "ollama", f"Error: listen tcp {host}:{port}: bind: {e.strerror}")
    for s in socks:
        s.close()
    return core.serve_http(record, "ollama", net, host, port, app, f"ollama stand-in: Listening on {host}:{port}")


def _client():
    scheme, host, port = host_from_env()
    if host in core.ANY_NAMES:
        host = "127.0.0.1"  # envconfig.ConnectableHost
    net = core.Net()
    return f"{scheme}://{net.connect_addr(host)}:{port}"


def _call(method, path, body=None):
    base = _client()
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except (urllib.error.URLError, OSError):
        sys.stderr.write("Error: could not connect to ollama server, run 'ollama serve' to start it\n")
        sys.exit(1)


def client_pull(argv):
    if len(argv) != 1:
        sys.stderr.write('Error: accepts 1 arg(s), received %d\n' % len(argv))
        return 1
    code, text = _call("POST", "/api/pull", {"model": argv[0]})
    if code != 200:
        sys.stderr.write(f"Error: {text}\n")
        return 1
    print("pulling manifest\nsuccess")
    return 0


def client_run(argv):
    if not argv:
        sys.stderr.write("Error: requires at least 1 arg(s), only received 0\n")
        return 1
    name, prompt = argv[0], " ".join(argv[1:])
    if not prompt and not sys.stdin.isatty():
        prompt = sys.stdin.read()
    code, _ = _call("GET", "/api/tags")
    if client_pull([name]) != 0:
        return 1
    if prompt:
        code, text = _call("POST", "/api/generate", {"model": name, "prompt": prompt, "stream": False})
        if code != 200:
            sys.stderr.write(f"Error: {text}\n")
            return 1
        print(json.loads(text).get("response", ""))
    return 0


def client_list(argv):
    code, text = _call("GET", "/api/tags")
    print("NAME\tID\tSIZE\tMODIFIED")
    for m in json.loads(text).get("models", []):
        print(f"{m['name']}\tstandin\t1 B\tnow")
    return 0


def client_copy(argv):
    if len(argv) != 2:
        sys.stderr.write("Error: accepts 2 arg(s), received %d\n" % len(argv))
        return 1
    code, text = _call("POST", "/api/copy", {"source": argv[0], "destination": argv[1]})
    if code != 200:
        sys.stderr.write(f"Error: {json.loads(text).get('error', text)}\n")
        return 1
    print(f"copied '{argv[0]}' to '{argv[1]}'")
    return 0


def client_show(argv):
    if len(argv) != 1:
        sys.stderr.write("Error: accepts 1 arg(s), received %d\n" % len(argv))
        return 1
    code, text = _call("POST", "/api/show", {"model": argv[0]})
    if code != 200:
        sys.stderr.write(f"Error: {json.loads(text).get('error', text)}\n")
        return 1
    print(json.loads(text).get("modelfile", ""))
    return 0
