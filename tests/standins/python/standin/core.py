"""What every stand-in shares: who this node is, the emulated network, the
HTTP server, the start record, deadlines and dying with the parent.

Network emulation (only when STANDIN_HOSTS names a hosts file):
  - the node is SLURMD_NODENAME, else STANDIN_NODE, else the hostname, and
    must have a line in the hosts file; its address is that line's;
  - each node also has a private loopback address, 127.254.B.C for a node
    at 127.0.B.C (else 127.254.x.y from a hash of the name), which no other
    node and no test ever connects to;
  - binding 0.0.0.0 / :: / "" binds the node's address and its loopback
    (like all interfaces); binding 127.0.0.1 / localhost / ::1 binds only
    the loopback, so a server left on its default 127.0.0.1 cannot be
    reached from another node or from the test, as on a real cluster;
    binding the node's own name or address binds that address; binding
    another node's address fails with EADDRNOTAVAIL;
  - connecting to 127.0.0.1 / localhost / 0.0.0.0 reaches the node's
    loopback; a node name is looked up in the hosts file, then resolved for
    real.
Without STANDIN_HOSTS everything is plain: bind and connect what is given.
"""

import argparse
import ctypes
import errno
import http.server
import ipaddress
import json
import os
import signal
import socket
import sys
import threading
import time
import zlib

ENV_KEYS = [
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "NCCL_IB_HCA",
    "HF_HOME",
    "RAY_ADDRESS",
    "OLLAMA_HOST",
    "SLURM_JOB_ID",
    "SLURM_NODEID",
    "SLURM_PROCID",
    "LWS_LEADER_ADDRESS",
    "LWS_GROUP_SIZE",
    "LWS_WORKER_INDEX",
]

LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "::1", "127.0.0.1"}
ANY_NAMES = {"", "0.0.0.0", "::", "*", "[::]"}


def timeout():
    """Seconds any wait may last (STANDIN_TIMEOUT, default 600)."""
    try:
        return float(os.environ.get("STANDIN_TIMEOUT", "600"))
    except ValueError:
        return 600.0


def leader_delay():
    """STANDIN_LEADER_DELAY=S: `ray start --head` and SGLang's rank 0 start S
    seconds late, so a test can make every worker start before its leader."""
    try:
        d = float(os.environ.get("STANDIN_LEADER_DELAY", "0"))
    except ValueError:
        d = 0.0
    if d > 0:
        sys.stderr.write(f"stand-in: STANDIN_LEADER_DELAY: starting {d:g} s late\n")
        sys.stderr.flush()
        time.sleep(d)


def state_dir():
    """Per-node state (Ray's current cluster, running heads): STANDIN_STATE,
    default $TMPDIR/llmgw-standins; one folder per node under nodes/."""
    base = os.environ.get("STANDIN_STATE") or os.path.join(os.environ.get("TMPDIR", "/tmp"), "llmgw-standins")
    d = os.path.join(base, "nodes", node_name())
    os.makedirs(d, exist_ok=True)
    return d


def node_name():
    return os.environ.get("SLURMD_NODENAME") or os.environ.get("STANDIN_NODE") or socket.gethostname()


def visible_gpus():
    """The GPUs this process may use: CUDA_VISIBLE_DEVICES, else
    NVIDIA_VISIBLE_DEVICES (what a container runtime exposes); None when
    neither says (unknown)."""
    for var in ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"):
        v = os.environ.get(var)
        if v is None:
            continue
        v = v.strip()
        if var == "NVIDIA_VISIBLE_DEVICES" and v == "all":
            return None
        if v in ("", "none", "void", "NoDevFiles"):
            return 0
        return len([x for x in v.split(",") if x.strip()])
    return None


def env_summary():
    env = {k: os.environ.get(k) for k in ENV_KEYS}
    env["HF_TOKEN"] = bool(os.environ.get("HF_TOKEN"))
    return env


def pdeathsig(sig=signal.SIGTERM):
    """Dies with the parent process (PR_SET_PDEATHSIG), unless
    STANDIN_PDEATHSIG=0. Scripts and containers end what they started
    anyway; this makes a killed test leave nothing behind."""
    if os.environ.get("STANDIN_PDEATHSIG", "1") == "0":
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(sig), 0, 0, 0)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:
            os.kill(os.getpid(), sig)
    except (OSError, AttributeError):
        pass


class ArgParser(argparse.ArgumentParser):
    """argparse that also records its refusals."""

    record = None

    def error(self, message):
        sys.stderr.write(f"usage: {self.prog} [options] (see --help)\n")
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        if self.record is not None:
            self.record.log("refused", error=message, code=2)
        sys.exit(2)


class Refused(Exception):
    """A start-up the real engine refuses: message, exit code."""

    def __init__(self, message, code=1):
        super().__init__(message)
        self.code = code


class Net:
    def __init__(self):
        self.node = node_name()
        path = os.environ.get("STANDIN_HOSTS")
        self.hosts = None
        self.addr = None
        self.loopback = None
        if not path:
            return
        self.hosts = {}
        try:
            with open(path) as f:
                for line in f:
                    line = line.split("#", 1)[0].split()
                    if len(line) < 2:
                        continue
                    for name in line[1:]:
                        self.hosts.setdefault(name, line[0])
        except OSError as e:
            raise Refused(f"STANDIN_HOSTS={path}: {e.strerror}")
        if self.node not in self.hosts:
            raise Refused(
                f"stand-in: node {self.node!r} (SLURMD_NODENAME / STANDIN_NODE / hostname) is not in STANDIN_HOSTS={path}"
            )
        self.addr = self.hosts[self.node]
        self.loopback = loopback_of(self.node, self.addr)

    @property
    def emulated(self):
        return self.hosts is not None

    def node_addresses(self):
        return {a for a in self.hosts.values()} if self.hosts else set()

    def bind_addrs(self, host):
        """The addresses a bind of `host` takes on this node."""
        host = (host or "").strip()
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        if not self.emulated:
            if host in ANY_NAMES:
                return ["0.0.0.0"]
            if host in ("localhost", "::1"):
                return ["127.0.0.1"]
            return [host]
        if host in ANY_NAMES:
            return [self.addr, self.loopback]
        if host in LOOPBACK_NAMES:
            return [self.loopback]
        if host == self.addr or host == self.node or host == socket.gethostname():
            return [self.addr]
        if host in self.hosts:
            target = self.hosts[host]
            if target == self.addr:
                return [self.addr]
            raise OSError(errno.EADDRNOTAVAIL, f"Cannot assign requested address: {host} ({target}) is not an address of node {self.node}")
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            try:
                ip = ipaddress.ip_address(socket.gethostbyname(host))
            except OSError as e:
                raise OSError(errno.EADDRNOTAVAIL, f"cannot resolve {host}: {e}")
        if ip.is_loopback and str(ip) not in self.node_addresses():
            return [self.loopback]
        raise OSError(errno.EADDRNOTAVAIL, f"Cannot assign requested address: {host} is not an address of node {self.node}")

    def connect_addr(self, host):
        host = (host or "").strip()
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        if not self.emulated:
            if host in ANY_NAMES or host in ("localhost", "::1"):
                return "127.0.0.1"
            return host
        if host in ANY_NAMES or host in LOOPBACK_NAMES:
            return self.loopback
        if host in self.hosts:
            return self.hosts[host]
        if host == socket.gethostname():
            return self.addr
        return host

    def listen(self, host, port, backlog=128, bind_only=False):
        """Listening sockets for `host`:`port` (several when it means all
        interfaces); raises OSError as bind does (EADDRINUSE...). With
        bind_only the sockets are bound but not listening (serve_http
        listens later): a connection is refused, a port another socket
        listens on fails the bind, but another SO_REUSEADDR socket may
        still bind the port meanwhile, as on Linux."""
        socks = []
        try:
            for a in self.bind_addrs(host):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    s.bind((a, port))
                except OSError as e:
                    s.close()
                    raise OSError(e.errno, f"[Errno {e.errno}] error while attempting to bind on address ('{a}', {port}): {e.strerror}")
                if not bind_only:
                    s.listen(backlog)
                socks.append(s)
                if port == 0:
                    port = s.getsockname()[1]
        except Exception:
            for s in socks:
                s.close()
            raise
        return socks

    def connect(self, host, port, wait=0.0):
        return socket.create_connection((self.connect_addr(host), int(port)), timeout=wait or None)


def loopback_of(node, addr):
    try:
        ip = ipaddress.ip_address(addr)
        if ip.version == 4:
            o = str(ip).split(".")
            if o[0] == "127" and o[1] == "0":
                return f"127.254.{o[2]}.{o[3]}"
    except ValueError:
        pass
    h = zlib.crc32(node.encode()) % 65000 + 256
    return f"127.254.{h >> 8}.{h & 255}"


def split_hostport(s, default_port=None):
    s = s.strip()
    if s.startswith("["):
        host, _, rest = s[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif s.count(":") == 1:
        host, port = s.split(":")
    else:
        host, port = s, ""
    if not port:
        if default_port is None:
            raise ValueError(f"{s!r} has no port")
        return host, int(default_port)
    return host, int(port)


class Record:
    """What a stand-in says about itself: GET /standin, and one JSON line per
    start (serving or refused) in $STANDIN_LOG/<engine>.jsonl."""

    def __init__(self, engine, argv):
        self.data = {
            "engine": engine,
            "argv": list(argv),
            "node": node_name(),
            "pid": os.getpid(),
            "env": env_summary(),
            "bound": [],
        }

    def set(self, **kw):
        self.data.update(kw)

    def log(self, event, **kw):
        line = dict(self.data, event=event, time=round(time.time(), 3), **kw)
        d = os.environ.get("STANDIN_LOG")
        if d:
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, f"{self.data['engine']}.jsonl"), "a") as f:
                f.write(json.dumps(line) + "\n")
        return line


def fail(record, prog, message, code=1):
    """Refuses as the engine does: message on stderr, a record, exit code."""
    plain = message.startswith((prog, "error:", "Error:"))
    sys.stderr.write((message if plain else f"{prog}: error: {message}") + "\n")
    sys.stderr.flush()
    if record is not None:
        record.log("refused", error=message, code=code)
    sys.exit(code)


def run_refusing(record, prog, fn):
    try:
        return fn()
    except Refused as e:
        fail(record, prog, str(e), e.code)
    except OSError as e:
        fail(record, prog, f"OSError: {e.strerror or e}", 1)


class Handler(http.server.BaseHTTPRequestHandler):
    server_version = "standin"
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        if os.environ.get("STANDIN_ACCESS_LOG") == "1":
            sys.stderr.write("%s - %s\n" % (self.address_string(), fmt % args))

    def _reply(self, code, body, ctype="application/json"):
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        data = body.encode() if isinstance(body, str) else body
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return None

    def _route(self, method):
        app = self.server.app
        path = self.path.split("?", 1)[0]
        fn = app.routes.get((method, path))
        if fn is None and method == "HEAD":
            fn = app.routes.get(("GET", path))
        if fn is None:
            return self._reply(404, app.not_found(path), app.not_found_type)
        body = self._body() if method == "POST" else None
        code, out, *ctype = fn(body)
        self._reply(code, out, *(ctype or ["application/json"]))

    def do_GET(self):
        self._route("GET")

    def do_HEAD(self):
        self._route("HEAD")

    def do_POST(self):
        self._route("POST")


class App:
    """An OpenAI-style server: /health, /v1/models, /standin, completions;
    engines add or remove routes."""

    def __init__(self, record, models, engine):
        self.record = record
        self.models = models  # callable -> list of served model names
        self.engine = engine
        self.not_found_type = "application/json"
        self.routes = {
            ("GET", "/health"): lambda _: (200, ""),
            ("GET", "/v1/models"): self.list_models,
            ("GET", "/standin"): lambda _: (200, self.record.data),
            ("POST", "/v1/completions"): self.complete,
            ("POST", "/v1/chat/completions"): self.complete,
        }

    def not_found(self, path):
        return {"detail": "Not Found"}

    def list_models(self, _):
        return 200, {
            "object": "list",
            "data": [{"id": m, "object": "model", "created": 0, "owned_by": self.engine} for m in self.models()],
        }

    def complete(self, body):
        if body is None:
            return 400, {"error": {"message": "invalid JSON body", "type": "BadRequestError", "code": 400}}
        model = body.get("model")
        names = self.models()
        if model not in names:
            return 404, {
                "error": {
                    "message": f"The model `{model}` does not exist.",
                    "type": "NotFoundError",
                    "code": 404,
                }
            }
        chat = "messages" in body
        choice = (
            {"index": 0, "message": {"role": "assistant", "content": "standin"}, "finish_reason": "stop"}
            if chat
            else {"index": 0, "text": "standin", "finish_reason": "stop"}
        )
        return 200, {
            "id": "standin-0",
            "object": "chat.completion" if chat else "text_completion",
            "created": int(time.time()),
            "model": model,
            "choices": [choice],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, sock, app):
        super().__init__(sock.getsockname(), Handler, bind_and_activate=False)
        self.socket.close()
        self.socket = sock
        self.app = app


def serve_http(record, prog, net, host, port, app, banner, socks=None):
    """Binds host:port as the emulated network says, records the start and
    serves until killed. A bind failure refuses, as uvicorn does. `socks`:
    sockets bound earlier (Net.listen(..., bind_only=True)), listened on
    now."""
    if socks is None:
        try:
            socks = net.listen(host, port)
        except OSError as e:
            fail(record, prog, f"OSError: {e.strerror or e}", 1)
    else:
        try:
            for s in socks:
                s.listen(128)
        except OSError as e:
            fail(record, prog, f"OSError: [Errno {e.errno}] error while attempting to listen on port {port}: {e.strerror}", 1)
    bound = [f"{s.getsockname()[0]}:{s.getsockname()[1]}" for s in socks]
    record.set(host=host, port=port, bound=bound)
    record.log("serving")
    servers = [Server(s, app) for s in socks]
    for s in servers[1:]:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    sys.stderr.write(f"{banner} (http://{host or '0.0.0.0'}:{port}; bound {', '.join(bound)}; node {net.node})\n")
    sys.stderr.flush()
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    try:
        servers[0].serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


def looks_like_path(model):
    return model.startswith(("/", "./", "../", "~"))


def check_model_path(model, message):
    """A model given as a path must exist on this node (engines take a
    missing path for a hub id and fail to fetch it)."""
    if looks_like_path(model) and not os.path.exists(os.path.expanduser(model)):
        raise Refused(message)


def wait_until(deadline, what):
    if time.time() > deadline:
        raise Refused(f"timed out after {timeout():.0f} s (STANDIN_TIMEOUT) waiting for {what}")
