"""Small command-line parsers that fail as the engines' own do: click (Ray,
TRT-LLM) and clap (TGI). argparse users (vLLM, SGLang) use argparse."""

import os
import sys


class UsageError(Exception):
    pass


def click_parse(argv, options, positionals=()):
    """options: {"--name": (dest, kind)} with kind "flag", "str", "int",
    "float" or "bool" (click's BOOLEAN); aliases share a dest. Accepts
    `--opt value` and `--opt=value`. Returns (values, extra positionals)."""
    values = {}
    pos = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            pos.extend(argv[i + 1 :])
            break
        if a.startswith("-") and a != "-":
            name, eq, val = a.partition("=")
            if name not in options:
                raise UsageError(f"No such option: {name}")
            dest, kind = options[name]
            if kind == "flag":
                if eq:
                    raise UsageError(f"Option '{name}' does not take a value.")
                values[dest] = True
            else:
                if not eq:
                    i += 1
                    if i >= len(argv):
                        raise UsageError(f"Option '{name}' requires an argument.")
                    val = argv[i]
                values[dest] = convert(name, kind, val)
        else:
            pos.append(a)
        i += 1
    if len(pos) < len(positionals):
        raise UsageError(f"Missing argument '{positionals[len(pos)]}'.")
    if len(pos) > len(positionals):
        raise UsageError(f"Got unexpected extra argument ({' '.join(pos[len(positionals):])})")
    for name, v in zip(positionals, pos):
        values[name] = v
    return values


def convert(name, kind, val):
    try:
        if kind == "int":
            return int(val)
        if kind == "float":
            return float(val)
    except ValueError:
        word = "integer" if kind == "int" else "float"
        raise UsageError(f"Invalid value for '{name}': '{val}' is not a valid {word}.")
    if kind == "bool":
        low = val.lower()
        if low in ("1", "true", "t", "yes", "y", "on"):
            return True
        if low in ("0", "false", "f", "no", "n", "off"):
            return False
        raise UsageError(f"Invalid value for '{name}': '{val}' is not a valid boolean.")
    return val


def click_fail(prog, usage, message):
    sys.stderr.write(f"Usage: {prog} {usage}\nTry '{prog} --help' for help.\n\nError: {message}\n")
    sys.exit(2)


def clap_parse(argv, options, prog):
    """options: {"long-name": (kind, default, short)}; kind "flag", "str",
    "int", "float". Each option also reads its env var (NAME_IN_CAPS), as
    TGI's `#[clap(long, env)]`. Returns {"long_name": value}."""
    shorts = {spec[2]: name for name, spec in options.items() if spec[2]}
    values = {}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("--"):
            name, eq, val = a[2:].partition("=")
        elif a.startswith("-") and len(a) >= 2 and a[1] in shorts:
            name, eq, val = shorts[a[1]], ("=" if len(a) > 2 else ""), a[2:].lstrip("=")
        else:
            raise UsageError(
                f"unexpected argument '{a}' found\n\nUsage: {prog} [OPTIONS]\n\nFor more information, try '--help'."
            )
        if name not in options:
            raise UsageError(
                f"unexpected argument '--{name}' found\n\nUsage: {prog} [OPTIONS]\n\nFor more information, try '--help'."
            )
        kind = options[name][0]
        if kind == "flag":
            values[name] = True
        else:
            if not eq:
                i += 1
                if i >= len(argv):
                    raise UsageError(f"a value is required for '--{name} <{name.upper()}>' but none was supplied")
                val = argv[i]
            try:
                values[name] = {"int": int, "float": float}.get(kind, str)(val)
            except ValueError:
                raise UsageError(f"invalid value '{val}' for '--{name} <{name.upper()}>': invalid digit found in string")
        i += 1
    out = {}
    for name, (kind, default, _) in options.items():
        key = name.replace("-", "_")
        if name in values:
            out[key] = values[name]
            continue
        env = os.environ.get(key.upper())
        if env is not None and kind != "flag":
            try:
                out[key] = {"int": int, "float": float}.get(kind, str)(env)
            except ValueError:
                raise UsageError(f"invalid value '{env}' for '--{name} <{name.upper()}>' (from env {key.upper()})")
        elif env is not None:
            out[key] = env.lower() in ("1", "true", "yes", "on")
        else:
            out[key] = default
    return out
