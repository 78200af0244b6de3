"""``wattsched web``: the local web page (:mod:`wattsched.web`) on 127.0.0.1 by default."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from wattsched.base.errors import OptionError
from wattsched.cli.common import named, positive_int, shown_integer, workers


def cmd_web(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from wattsched.web.app import create_app
    except ImportError as error:
        raise OptionError(f"wattsched web needs the extra 'web' ({error.name} is missing): "
                          "pip install 'wattsched[web]'") from None
    _check_free(args.host, args.port)
    app = create_app(args.workspace, workers=args.workers,
                     max_upload_bytes=None if args.max_upload_mb is None else args.max_upload_mb * 2**20,
                     allowed_hosts=loopback_hosts(args.host))
    print(f"wattsched web: http://{args.host}:{args.port}/  (workspace {Path(args.workspace).resolve()}; "
          "Ctrl-C stops)", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, access_log=args.verbose > 0,
                log_level=logging.getLevelName(logging.getLogger().getEffectiveLevel()).lower())
    return 0


def loopback_hosts(host: str) -> list[str] | None:
    """The ``Host`` headers the page answers when it listens on ``host``: on a loopback address (``localhost``, any of
    127.0.0.0/8, ``::1``, ``::ffff:127.0.0.1``), this machine's loopback names and that address, so that a page of
    another site cannot drive it through DNS rebinding; on another address (open to other machines, reached by names
    this machine cannot list), None: any. Only 127.0.0.1, localhost and ::1 were checked: 127.0.0.2 answered any."""
    import ipaddress

    names = ["127.0.0.1", "localhost", "[::1]"]
    if host.lower() == "localhost":
        return names
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:  # a host name
        return None
    mapped = getattr(address, "ipv4_mapped", None)
    if not (address.is_loopback or (mapped is not None and mapped.is_loopback)):
        return None
    literal = f"[{address.compressed}]" if address.version == 6 else address.compressed
    return names if literal in names else [*names, literal]


def _check_free(host: str, port: int) -> None:
    """:class:`OptionError` (one line, exit 2) when nothing can listen on ``host:port``."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        with socket.socket(infos[0][0], socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(infos[0][4])
    except OSError as error:
        raise OptionError(f"--host {host} --port {port}: cannot listen there ({error.strerror or error})") from None


def port_number(text: str) -> int:
    """``--port``: a TCP port, 1 to 65535 (beyond it, the socket layer raised OverflowError: a traceback)."""
    value = positive_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 1 to 65535, got {shown_integer(value)}")
    return value


def workspace_folder(text: str) -> Path:
    """``--workspace DIR``: a folder's name; an empty one was the current folder (the page's inputs/ and runs/
    made there)."""
    return Path(named("a folder, or leave --workspace out for ./wattsched-web", written=True)(text))


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("web", help="a local web page to configure, launch, watch and compare simulations",
                       description="Serve a web page to pick a platform and a workload (shipped, uploaded or "
                                   "generated), choose a preset or compose pieces with their options, launch runs "
                                   "in the background with live progress, look at each run (metrics, Gantt, power "
                                   "against the budget, host states, downloads) and compare runs. Runs and inputs "
                                   "live in --workspace and survive a restart.",
                       epilog="examples:\n"
                              "  wattsched web --workspace ~/wattsched-runs   (then open http://127.0.0.1:8000/)\n"
                              "  wattsched web --port 8080 -j 4 --max-upload-mb 200")
    p.add_argument("--host", default="127.0.0.1", metavar="ADDRESS",
                   help="address to listen on (default 127.0.0.1: this machine only, and only requests naming a "
                        "loopback host are answered, against DNS rebinding; another address, such as 0.0.0.0, lets "
                        "other machines use the page, which has no login)")
    p.add_argument("--port", type=port_number, default=8000, help="TCP port, 1 to 65535 (default 8000)")
    p.add_argument("--workspace", type=workspace_folder, default=Path("wattsched-web"), metavar="DIR",
                   help="folder of the page's inputs and runs (default ./wattsched-web; created when missing)")
    p.add_argument("-j", "--workers", type=workers, default=2, metavar="N",
                   help="simulations at once in local processes, 1 to 256 (default 2)")
    p.add_argument("--max-upload-mb", type=positive_int, default=None, metavar="MB",
                   help="largest platform or workload upload in MiB (default: the bound upload_bytes, 50 MiB, "
                        "raised with WATTSCHED_LIMIT_UPLOAD_BYTES)")
    p.set_defaults(func=cmd_web)
