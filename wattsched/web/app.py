"""The Starlette application of ``wattsched web``: pages, forms and downloads over one workspace.

=========================================  ====================================================================
route                                      what
=========================================  ====================================================================
``GET /``                                  the runs (live progress of those running), a selection to compare
``GET /new``, ``POST /runs``               a run's form: platform, workload (chosen, or uploaded with the
                                           form), preset, its options (generated from the option schema,
                                           :mod:`.forms`); launch
``GET /options``                           the options fieldset of a preset given its switches (htmx)
``GET /inputs``, ``POST /inputs/upload``,  the workspace's platforms and workloads: upload (size-limited,
``POST /inputs/platform``,                 validated like the CLI's inputs), or generate them like
``POST /inputs/workload``                  ``wattsched platform`` and ``wattsched synth``
``GET /runs/{id}``                         a run: progress, then metrics, Gantt, power against the budget,
                                           host states, downloads
``GET /runs/{id}/status``, ``/row``        live progress fragments (htmx polling)
``GET /runs/{id}/files/{name}``            Batsim's five CSVs and the Paraver trace
``POST /runs/{id}/delete``                 delete a run that has ended: a confirmation page, then (with
                                           ``confirm=yes``) its folder, outputs and index entry
``GET /compare?run=A&run=B``               metrics side by side, overlaid power and utilization
=========================================  ====================================================================

Errors a user can cause are shown on the page as the CLI's one line (HTTP 400, 404, 409 or 413) and leave
nothing behind (a run whose ``run.json`` or outputs were edited into something the page does not write is a
409 naming the file, its ``status.json`` a failed run saying why); any other error is one line in the log
and a one-line page (HTTP 500), never a traceback.
Uploads are bounded by ``upload_bytes`` of :mod:`wattsched.base.limits` (``WATTSCHED_LIMIT_UPLOAD_BYTES``,
or ``wattsched web --max-upload-mb``), whatever a body's ``Content-Length`` says (a longer body is not read
further), and checked like ``wattsched run``'s inputs before anything is stored; a generated platform or
workload larger than that bound is refused too (a flat platform before it is generated).
"""

from __future__ import annotations

import argparse
import html
import json
import logging
import math
import os
from collections.abc import Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncGenerator, AsyncIterator
from urllib.parse import unquote_plus, urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from wattsched.base.errors import OptionError, WattschedError, printable
from wattsched.base.limits import limit
from wattsched.web import charts
from wattsched.web.forms import FIELD_PREFIX, GENERAL, option_fields, options_from_form, preset_names, unknown_preset
from wattsched.web.runs import RunManager, check_run, output_files
from wattsched.web.workspace import (ACTIVE, NAME_CHARS, SUFFIX, RunActiveError, RunDamagedError, Workspace,
                                     WorkspaceError, check_run_name, logged_warnings, shown_value, upload_name)

__all__ = ["create_app"]

logger = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
#: Room for the form's other fields and the multipart framing around uploaded files, bytes.
FORM_SLACK_BYTES = 64 * 1024
#: Largest form field that is not a file, bytes (Starlette's default part size).
FIELD_BYTES = 1024 * 1024
#: Bytes read at a time from a run's file being downloaded.
CHUNK_BYTES = 256 * 1024


class FormError(WattschedError):
    """A form that cannot be read (malformed multipart data, too many files or fields, a field too large):
    one sentence saying what was wrong, naming the field when it is known (``field``: a field that is not UTF-8
    text, shown beside it)."""

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field


class BodyTooLarge(FormError):
    """A multipart form whose body goes past its bound while it is read (sent without a ``Content-Length``,
    or with a false one): reading stops there, before the rest is spooled to disk."""


async def _bounded(stream: AsyncIterator[bytes], max_bytes: int) -> AsyncGenerator[bytes, None]:
    """``stream``, raising :class:`BodyTooLarge` once more than ``max_bytes`` came through."""
    total = 0
    async for chunk in stream:
        total += len(chunk)
        if total > max_bytes:
            raise BodyTooLarge(f"upload of more than {max_bytes} bytes")
        yield chunk


#: What the readers of a form say of a field that is not UTF-8 text (a multipart one's :class:`MultiPartException`).
NOT_UTF8 = "Not UTF-8 text"


async def _read_urlencoded(request: Request, max_fields: int) -> FormData:
    """A URL-encoded form (``max_fields`` fields of at most :data:`FIELD_BYTES`), each name and value ASCII with
    percent-escapes of UTF-8, refusing a field that is not UTF-8 text: Starlette's parser reads raw bytes as Latin-1
    and replaces percent-escapes of other bytes with U+FFFD (a run named 'ÿþ' or '��', without a word), and its own
    bounds on such forms, and the names of its parser's state, changed from one version to the next.

    Raises:
        FormError: naming the field, or the bound exceeded.
    """
    chunks: list[bytes] = []
    try:
        async for chunk in _bounded(request.stream(), max_fields * (FIELD_BYTES + 1)):
            chunks.append(chunk)
    except BodyTooLarge:
        raise FormError(_form_problem("Field exceeded", "", 0, max_fields)) from None
    fields = [field for field in b"".join(chunks).split(b"&") if field]
    if len(fields) > max_fields:
        raise FormError(_form_problem("Too many fields", "", 0, max_fields))
    pairs: list[tuple[str, str | UploadFile]] = []
    for field in fields:
        raw_name, _, raw_value = field.partition(b"=")
        shown = unquote_plus(raw_name.decode("latin-1"))
        if len(raw_name) + len(raw_value) > FIELD_BYTES:
            raise FormError(_form_problem("Field exceeded", shown, 0, max_fields))
        try:
            name, value = (unquote_plus(raw.decode("ascii"), errors="strict") for raw in (raw_name, raw_value))
        except UnicodeDecodeError:
            raise FormError(_form_problem(NOT_UTF8, shown, 0, max_fields), shown) from None
        pairs.append((name, value))
    return FormData(pairs)


#: What :func:`read_form` says of a multipart body that ends before its closing boundary.
CUT_SHORT = "Body cut short"


class Utf8MultiPartParser(MultiPartParser):
    """Starlette's multipart parser, refusing a field (not a file) that is not UTF-8 text, which Starlette reads as
    Latin-1, and noting whether the body reached its closing boundary (``ended``): python-multipart does not check
    it, and Starlette returned the parts read so far, the last one, cut short, dropped (a run launched without the
    option it was given last)."""

    ended = False

    def on_end(self) -> None:
        self.ended = True
        super().on_end()

    def on_part_end(self) -> None:
        if self._current_part.file is None:
            try:
                bytes(self._current_part.data).decode("utf-8")
            except UnicodeDecodeError:
                raise MultiPartException(NOT_UTF8) from None
        super().on_part_end()


async def read_form(request: Request, *, max_files: int, max_fields: int = 1000,
                    max_bytes: int | None = None, known: tuple[str, ...] | None = None,
                    known_prefix: str | None = None) -> FormData:
    """The submitted form, read with Starlette's parsers and bounds (``max_files`` files, ``max_fields``
    other fields of at most :data:`FIELD_BYTES`, a multipart body of at most ``max_bytes`` whatever its
    ``Content-Length`` says); what they refuse becomes a :class:`FormError` that says what was wrong,
    instead of Starlette's plain-text 400. A body of another type (JSON, text, none given) is refused, not read
    as an empty form. With ``known``, a field the page's form does not have (other than those starting with
    ``known_prefix``) is refused: a misspelt field was dropped without a word (``nmae=...``: a run named
    otherwise).

    Raises:
        BodyTooLarge: a multipart body longer than ``max_bytes``.
        FormError: the form cannot be read.
    """
    from starlette.formparsers import parse_options_header

    content_type, _ = parse_options_header(request.headers.get("content-type", ""))
    if content_type not in (b"multipart/form-data", b"application/x-www-form-urlencoded") and (
            content_type or request.headers.get("content-length", "0") != "0"
            or "transfer-encoding" in request.headers):  # Starlette would read it as an empty form
        kind = f"of type '{printable(content_type.decode('latin-1')[:60])}'" if content_type else "of no type"
        raise FormError(f"the form could not be read: its body is {kind} (post it from the page: "
                        "application/x-www-form-urlencoded or multipart/form-data)")
    if content_type != b"multipart/form-data":
        return _known_only(_once_each(await _read_urlencoded(request, max_fields)), known, known_prefix)
    stream = request.stream() if max_bytes is None else _bounded(request.stream(), max_bytes)
    parser = Utf8MultiPartParser(request.headers, stream, max_files=max_files, max_fields=max_fields,
                                 max_part_size=FIELD_BYTES)
    try:
        form = await parser.parse()
    except (MultiPartException, ValueError) as error:  # (python-multipart's own errors are ValueErrors, which
        # Starlette before 1.5 let through: a header too large was a 500)
        detail = error.message if isinstance(error, MultiPartException) else str(error)
        part = getattr(parser, "_current_part", None)
        field = getattr(part, "field_name", "") or ""
        raise FormError(_form_problem(detail, field, max_files, max_fields),
                        field if detail == NOT_UTF8 else "") from None
    request._form = form  # closed with the request, as Starlette's own request.form() does
    if not parser.ended:  # no closing boundary: the part being read when the body ended is not in the form
        part = getattr(parser, "_current_part", None)
        raise FormError(_form_problem(CUT_SHORT, getattr(part, "field_name", "") or "", max_files, max_fields))
    return _known_only(_once_each(form), known, known_prefix)


def _known_only(form: FormData, known: tuple[str, ...] | None, known_prefix: str | None) -> FormData:
    """``form`` when each of its fields is one of ``known`` (or starts with ``known_prefix``), or ``known`` is None.

    Raises:
        FormError: naming the first other field, with those the form has.
    """
    if known is not None:
        for key in form.keys():
            if key not in known and not (known_prefix and key.startswith(known_prefix)):
                names = ", ".join(known) + (f", {known_prefix}*" if known_prefix else "")
                raise FormError(f"the form could not be read: field '{shown_value(key)}' is not one of this form's "
                                f"({names})")
    return form


def _once_each(form: FormData) -> FormData:
    """``form`` when each of its fields is given once: Starlette keeps the last of ``name=a&name=b`` (a page
    sends each field once; a second value is a client's mistake, not a choice between two runs).

    Raises:
        FormError: naming the field given twice.
    """
    seen: set[str] = set()
    for key, _ in form.multi_items():
        if key in seen:
            raise FormError(f"the form could not be read: field '{shown_value(key)}' is given twice (which value is "
                            "meant?)")
        seen.add(key)
    return form


def _form_problem(detail: str, field: str, max_files: int, max_fields: int) -> str:
    """One sentence for a form Starlette's parsers refuse with ``detail``."""
    shown = printable(field if len(field) <= 60 else field[:57] + "...")
    if detail == NOT_UTF8:
        return f"the form could not be read: field '{shown}' is not UTF-8 text (post it from the page)"
    if detail.startswith(("Part exceeded", "Field exceeded")):
        where = f"field '{shown}'" if shown else "a field"
        return (f"the form could not be read: {where} holds more than {FIELD_BYTES // 1024} KiB (only files "
                "may be larger)")
    if detail.startswith("Too many files"):
        return (f"the form could not be read: it holds more than {max_files} file"
                f"{'s' if max_files != 1 else ''}" + (f" (extra file field '{shown}')" if shown else ""))
    if detail.startswith("Too many fields"):
        return f"the form could not be read: it holds more than {max_fields} fields"
    if detail == CUT_SHORT:
        return ("the form could not be read: its body ends before the form's closing boundary (cut short"
                + (f", in field '{shown}'" if shown else "") + "; post it again from the page)")
    if detail.startswith("Missing boundary"):
        return ("the form could not be read: its Content-Type multipart/form-data has no boundary (post it "
                "from the page)")
    if "name" in detail and "Content-Disposition" in detail:
        return "the form could not be read: a part of it has no field name"
    return ("the form could not be read: malformed multipart data (a body cut short, or a part header such as "
            "a file name that is too long)" + (f" after field '{shown}'" if shown else ""))


def format_value(value: Any) -> str:
    """A metric as ``wattsched metrics`` prints it (:func:`wattsched.analysis.metrics.format_table`)."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    value = float(value)
    if math.isnan(value):
        return "n/a"
    return f"{value:.6g}" if abs(value) < 1e6 else f"{value:.0f}"


def format_time(t_s: Any) -> str:
    """Simulated time as ``1d02:03:04`` (:func:`wattsched.experiments.runner.format_sim_time`)."""
    from wattsched.experiments.runner import format_sim_time

    return format_sim_time(float(t_s or 0.0))


#: Characters written as JSON escapes inside a ``<script>`` element: with ``<`` and ``>`` escaped, no text of a
#: run (a name, a job id) can close the element (``</script>``) or make the HTML parser read past its end
#: (``<!--<script>``); ``&`` as Django's ``json_script`` does.
_SCRIPT_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026"}


def _figure_json(figure: Mapping[str, Any]) -> str:
    """A figure as JSON safe inside a ``<script type="application/json">`` element."""
    return json.dumps(figure, allow_nan=False, default=float).translate(_SCRIPT_ESCAPES)


class OneLineErrors:
    """ASGI middleware: an exception a handler did not expect becomes one log line and a one-line 500 page
    (no traceback in the browser or the server's log)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as error:  # noqa: BLE001 - the one place that turns any error into one line
            line = str(error).strip().splitlines()[0] if str(error).strip() else ""
            logger.error("%s %s: %s%s", scope.get("method"), scope.get("path"), type(error).__name__,
                         f": {line}" if line else "")
            if not started:
                body = (f"<!doctype html><title>error</title><p class=error>internal error: "
                        f"{html.escape(type(error).__name__)}</p>").encode()
                await send({"type": "http.response.start", "status": 500,
                            "headers": [(b"content-type", b"text/html; charset=utf-8")]})
                await send({"type": "http.response.body", "body": body})


def create_app(workspace: str | Path, *, workers: int = 2, processes: bool = True,
               max_upload_bytes: int | None = None, allowed_hosts: list[str] | None = None) -> Starlette:
    """The page over ``workspace`` (created when missing; runs left running by a previous server are marked
    interrupted).

    Args:
        workers: simulations at once.
        processes: simulate in worker processes (else threads of the server: tests).
        max_upload_bytes: largest platform or workload accepted; ``None``: the bound ``upload_bytes`` of
            :mod:`wattsched.base.limits`.
        allowed_hosts: the ``Host`` headers answered (others get 400: a page of another site cannot drive this
            one through DNS rebinding); ``None`` answers any.
    """
    if max_upload_bytes is None:
        max_upload_bytes = int(limit("upload_bytes"))
    space = Workspace(workspace)
    space.recover()
    manager = RunManager(space, workers=workers, processes=processes)
    env = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(default=True))
    env.filters.update(num=format_value, simtime=format_time)

    def page(request: Request, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        text = env.get_template(template).render(request=request, **context)
        return HTMLResponse(text, status_code=status_code)

    def refused(request: Request, message: str, status_code: int = 400) -> HTMLResponse:
        return page(request, "error.html", status_code=status_code, message=message)

    # ------------------------------------------------------------------------------------- runs
    def gone(run_id: str, error: Exception) -> Exception:
        """``error`` met while reading run ``run_id``: a 404 when the run was deleted meanwhile (its folder
        renamed away under the request), else ``error`` without the workspace's absolute path."""
        if not (space.runs_dir / run_id / "run.json").is_file():
            return WorkspaceError(f"run {run_id} no longer exists (it was deleted)")
        if isinstance(error, WattschedError):  # its outputs no longer read as the run wrote them (edited by hand)
            return RunDamagedError(f"run {run_id}: {str(error).replace(str(space.root), 'workspace')}")
        return error

    def run_or_404(request: Request) -> tuple[str, dict[str, Any]]:
        run_id = request.path_params["run_id"]
        try:
            spec = space.spec(run_id)  # WorkspaceError: not a run
        except (OSError, ValueError) as error:  # deleted between the check and the read
            raise gone(run_id, error) from None
        return run_id, {**spec.as_dict(), **space.status(run_id)}

    def just_deleted(text: str) -> str:
        """``text`` of the link a deletion redirects to (``NAME (ID)``) when it names a run that is gone, else
        ``""``: the page does not say "deleted run ..." of any text a link from elsewhere puts in its address."""
        import re

        from wattsched.web.workspace import RUN_ID

        match = re.fullmatch(r"(.*) \(([^()]*)\)", text, flags=re.DOTALL)
        if match is None or not RUN_ID.match(match.group(2)) or (space.runs_dir / match.group(2)).exists():
            return ""
        try:
            return text if check_run_name(match.group(1)) == match.group(1) else ""
        except OptionError:
            return ""

    def index(request: Request) -> Response:
        return page(request, "index.html", runs=space.runs(), active=ACTIVE,
                    deleted=just_deleted(request.query_params.get("deleted", "")))

    def run_row(request: Request) -> Response:
        _, run = run_or_404(request)
        return page(request, "run_row.html", run=run, active=ACTIVE)

    def run_status(request: Request) -> Response:
        _, run = run_or_404(request)
        response = page(request, "run_status.html", run=run, active=ACTIVE)
        if run["state"] not in ACTIVE:
            response.headers["HX-Refresh"] = "true"
        return response

    def run_page(request: Request) -> Response:
        run_id, run = run_or_404(request)
        figures: dict[str, str] = {}
        files: list[str] = []
        if run["state"] == "done":
            from wattsched.analysis.outputs import load_outputs
            from wattsched.schedulers.presets import PRESETS

            try:
                outputs = load_outputs(str(space.prefix(run_id)))
            except (WattschedError, OSError) as error:  # deleted while being read
                raise gone(run_id, error) from None
            chosen, values = PRESETS[run["scheduler"]].validate(run["options"])
            window, budget_w = charts.budget_power_w(chosen, values, int(run["metrics"]["nb_hosts"]))
            figures = {"gantt": _figure_json(charts.gantt(outputs)),
                       "power": _figure_json(charts.power(outputs, window, budget_w)),
                       "states": _figure_json(charts.host_states(outputs))}
            files = [name for name, path in output_files(space.prefix(run_id)).items() if path.is_file()]
        return page(request, "run.html", run=run, figures=figures, files=files, active=ACTIVE)

    def download(request: Request) -> Response:
        run_id, _ = run_or_404(request)
        name = request.path_params["name"]
        path = output_files(space.prefix(run_id)).get(name)
        if path is None or not path.is_file():
            raise WorkspaceError(f"run {run_id} has no file '{name}'")
        try:  # opened before answering: a deletion from now on (a rename, then removal) cannot cut the body
            handle = open(space.inside(path.relative_to(space.root)), "rb")  # noqa: SIM115 - closed by chunks()
        except OSError as error:
            raise gone(run_id, error) from None
        size = os.fstat(handle.fileno()).st_size

        def chunks() -> Any:
            with handle:
                left = size
                while left > 0:
                    chunk = handle.read(min(CHUNK_BYTES, left))
                    if not chunk:
                        return
                    left -= len(chunk)
                    yield chunk

        filename = f"{run_id}_{name}"
        return StreamingResponse(chunks(), media_type="text/csv" if name.endswith(".csv") else "text/plain",
                                 headers={"content-length": str(size),
                                          "content-disposition": f'attachment; filename="{filename}"'})

    def compare(request: Request) -> Response:
        from wattsched.analysis.outputs import load_outputs

        ids = list(dict.fromkeys(request.query_params.getlist("run")))
        runs = []
        for run_id in ids:
            try:
                spec = space.spec(run_id)
            except (OSError, ValueError) as error:  # deleted between the check and the read
                raise gone(run_id, error) from None
            status = space.status(run_id)
            if status.get("state") != "done":
                return refused(request, f"run {run_id} ({spec.name}) is not done: only finished runs compare")
            runs.append({**spec.as_dict(), **status})
        if len(runs) < 2:
            return refused(request, "choose at least two finished runs to compare")
        names: list[str] = []
        for run in runs:
            names += [k for k in run["metrics"] if k not in names]
        loaded = []
        for run in runs:
            try:
                loaded.append((f"{run['name']} ({run['id'][-6:]})", load_outputs(str(space.prefix(run["id"])))))
            except (WattschedError, OSError) as error:  # deleted while being read
                raise gone(run["id"], error) from None
        figures = {"power": _figure_json(charts.compare_power(loaded)),
                   "utilization": _figure_json(charts.compare_utilization(loaded))}
        return page(request, "compare.html", runs=runs, names=names, figures=figures)

    # ---------------------------------------------------------------------------------- new run
    def new_run_page(request: Request, form: Mapping[str, str], errors: Mapping[str, str],
                     fields: list[Any] | None = None, status_code: int = 200) -> HTMLResponse:
        scheduler = form.get("scheduler") or "easy-backfill"
        if scheduler not in preset_names():
            scheduler = "easy-backfill"
        return page(request, "new.html", status_code=status_code, form=form, errors=errors,
                    schedulers=preset_names(), scheduler=scheduler,
                    fields=fields if fields is not None else option_fields(scheduler, form),
                    platforms=space.input_choices("platform"), workloads=space.input_choices("workload"),
                    general=errors.get(GENERAL, ""), max_upload_mb=max_upload_bytes / 2**20, name_chars=NAME_CHARS)

    def new_run(request: Request) -> Response:
        return new_run_page(request, dict(request.query_params), {})

    def options_fragment(request: Request) -> Response:
        form = dict(request.query_params)
        scheduler = form.get("scheduler", "")
        if scheduler not in preset_names():
            return refused(request, unknown_preset(shown_value(scheduler)))
        return page(request, "options.html", fields=option_fields(scheduler, form), scheduler=scheduler)

    def too_big(what: str) -> str:
        return (f"{what}: more than the {max_upload_bytes} bytes accepted (raise with wattsched web "
                "--max-upload-mb or WATTSCHED_LIMIT_UPLOAD_BYTES)")

    async def launch(request: Request) -> Response:
        declared = request.headers.get("content-length", "")
        max_bytes = 2 * max_upload_bytes + FORM_SLACK_BYTES
        if declared.isdigit() and int(declared) > max_bytes:
            return new_run_page(request, {}, {GENERAL: too_big(f"upload of {int(declared)} bytes")}, status_code=413)
        try:
            submitted = await read_form(request, max_files=2, max_bytes=max_bytes, known_prefix=FIELD_PREFIX,
                                        known=("name", "scheduler", "platform", "platform_file", "workload",
                                               "workload_file"))
        except BodyTooLarge as error:
            return new_run_page(request, {}, {GENERAL: too_big(str(error))}, status_code=413)
        except FormError as error:  # beside the field it names, when the page shows one
            field = error.field if error.field in ("platform", "workload", "scheduler", "name") else GENERAL
            return new_run_page(request, {}, {field: str(error)}, status_code=400)
        form = {k: v for k, v in submitted.items() if isinstance(v, str)}
        errors: dict[str, str] = {}
        scheduler = form.get("scheduler", "")
        fields = None
        for key, value in submitted.multi_items():
            if not isinstance(value, str) and key not in ("platform_file", "workload_file"):
                errors[GENERAL] = (f"field '{shown_value(key)}': a file where the form takes none (files go in "
                                   "platform_file and workload_file)")
        try:
            name = check_run_name(form.get("name", ""))
        except OptionError as error:
            errors["name"] = str(error)
        if scheduler not in preset_names():
            errors["scheduler"] = unknown_preset(shown_value(scheduler))
            options: dict[str, Any] = {}
        else:
            # a path option is a choice of the page (a shipped model, a folder of the inputs), never a path
            options, fields, option_errors = options_from_form(
                scheduler, form, resolve=lambda option, value: str(space.model_path(option, value)))
            errors.update(option_errors)
        uploads: dict[str, tuple[str, bytes, str]] = {}  # kind -> (name to store under, contents, name shown)
        status_code = 400
        for kind in ("platform", "workload"):
            upload_file = submitted.get(f"{kind}_file")
            if isinstance(upload_file, UploadFile) and upload_file.filename:  # an upload replaces the choice
                data = await upload_file.read(max_upload_bytes + 1)
                if len(data) > max_upload_bytes:
                    errors[kind] = too_big(upload_name(kind, upload_file.filename))
                    status_code = 413
                    continue
                try:
                    stored = await run_in_threadpool(space.check_upload, kind, upload_file.filename, data)
                except WattschedError as error:
                    errors[kind] = str(error)
                else:
                    uploads[kind] = (stored, data, upload_name(kind, upload_file.filename))
                continue
            try:
                space.input_path(kind, form.get(kind, ""))
            except WattschedError as error:
                errors[kind] = str(error)
        if not errors:  # what the CLI checks before it simulates: binding the scheduler to the platform
            try:
                await run_in_threadpool(precheck, scheduler, options, form, uploads)
            except WattschedError as error:
                errors[_field_of(str(error), fields)] = str(error)
                for f in fields or []:
                    f.error = f.error or errors.get(f.name, "")
        if errors:  # nothing was written: uploads are stored only with the run they are for
            return new_run_page(request, form, errors, fields, status_code=status_code)
        stored_now: list[Path] = []  # the uploads this launch stored: removed again when the run cannot be made
        try:
            for kind, (stored, data, _) in uploads.items():
                target = space.inputs_dir / stored
                existed = target.exists()
                form[kind] = await run_in_threadpool(space.save_input, stored, data)
                if not existed:
                    stored_now.append(target)
            spec = space.new_run(name=name, scheduler=scheduler, options=options,
                                 platform=form["platform"], workload=form["workload"])
        except WattschedError as error:  # the workspace cannot be written (removed or replaced behind the server)
            for target in stored_now:
                target.unlink(missing_ok=True)
            return new_run_page(request, form, {GENERAL: str(error).replace(str(space.root), "workspace")}, fields,
                                status_code=400)
        try:
            await run_in_threadpool(manager.submit, spec.id)  # the first run starts the Dask cluster
        except Exception as error:  # noqa: BLE001 - the run fails saying why, rather than staying queued forever
            from wattsched.experiments.sweep import one_line_error

            message = one_line_error(error).replace(str(space.root), "workspace")
            logger.error("run %s could not be started: %s", spec.id, message)
            await run_in_threadpool(space.set_status, spec.id, state="failed",
                                    error=f"the run could not be started: {message}")
        return RedirectResponse(f"/runs/{spec.id}", status_code=303)

    def precheck(scheduler: str, options: dict[str, Any], form: Mapping[str, str],
                 uploads: Mapping[str, tuple[str, bytes, str]]) -> None:
        """:func:`~wattsched.web.runs.check_run` on the form's inputs (an upload in a temporary folder
        outside the workspace: it is stored only with its run); each input's path in the message is the
        name the form shows."""
        import tempfile

        with tempfile.TemporaryDirectory(prefix="wattsched-check-") as tmp:
            paths: dict[str, Path] = {}
            shown: dict[str, str] = {}
            for kind in ("platform", "workload"):
                if kind in uploads:
                    stored, data, name = uploads[kind]
                    paths[kind] = Path(tmp) / stored
                    paths[kind].write_bytes(data)
                    shown[str(paths[kind])] = name
                else:
                    paths[kind] = space.input_path(kind, form.get(kind, ""))
                    shown[str(paths[kind])] = form.get(kind, "")
            try:
                check_run(space, scheduler, options, paths["platform"], paths["workload"])
            except WattschedError as error:
                message = str(error)
                for path, name in shown.items():
                    message = message.replace(path, name)
                raise OptionError(message.replace(tmp, "upload").replace(str(space.root), "workspace")) from None

    # ---------------------------------------------------------------------------------- delete
    async def delete_run(request: Request) -> Response:
        run_id, run = run_or_404(request)
        try:
            form = await read_form(request, max_files=0, max_fields=10, known=("confirm",))
        except FormError as error:
            return refused(request, f"delete run {run_id}: {error}")
        if form.get("confirm") != "yes" and run["state"] not in ACTIVE:
            return page(request, "delete.html", run=run)
        try:
            spec = await run_in_threadpool(space.delete_run, run_id)
        except RunActiveError as error:
            return refused(request, str(error), 409)
        return RedirectResponse(f"/?{urlencode({'deleted': f'{spec.name} ({run_id})'})}", status_code=303)

    # ------------------------------------------------------------------------------------ inputs
    def inputs_page(request: Request, status_code: int = 200, **context: Any) -> HTMLResponse:
        return page(request, "inputs.html", status_code=status_code,
                    platforms=space.input_choices("platform"), workloads=space.input_choices("workload"),
                    max_upload_mb=max_upload_bytes / 2**20, **context)

    def stored_page(request: Request, choice: str, warnings: list[str]) -> Response:
        """After an input was stored: back to the inputs page, or that page with the warnings of the input's
        making (as the CLI prints them on its terminal; a redirect would lose them)."""
        if warnings:
            return inputs_page(request, stored=choice, stored_warnings=warnings)
        return RedirectResponse(f"/inputs?stored={choice}", status_code=303)

    def inputs(request: Request) -> Response:
        stored = request.query_params.get("stored", "")  # said only of an input the workspace holds
        held = {value for kind in SUFFIX for value, _ in space.input_choices(kind)}  # type: ignore[arg-type]
        return inputs_page(request, stored=stored if stored.startswith("workspace:") and stored in held else "")

    async def upload(request: Request) -> Response:
        declared = request.headers.get("content-length", "")
        max_bytes = max_upload_bytes + FORM_SLACK_BYTES
        if declared.isdigit() and int(declared) > max_bytes:
            return inputs_page(request, 413, upload_error=too_big(f"upload of {int(declared)} bytes"))
        try:
            form = await read_form(request, max_files=1, max_fields=10, max_bytes=max_bytes, known=("kind", "file"))
        except BodyTooLarge as error:
            return inputs_page(request, 413, upload_error=too_big(str(error)))
        except FormError as error:
            return inputs_page(request, 400, upload_error=str(error))
        kind = str(form.get("kind", ""))
        upload_file = form.get("file")
        if kind not in SUFFIX:
            return inputs_page(request, 400,
                               upload_error=f"kind: must be platform or workload, got '{shown_value(kind)}'")
        if not isinstance(upload_file, UploadFile) or not upload_file.filename:
            return inputs_page(request, 400, upload_error=f"{kind}: choose a file to upload")
        data = await upload_file.read(max_upload_bytes + 1)
        if len(data) > max_upload_bytes:
            return inputs_page(request, 413, upload_error=too_big(upload_name(kind, upload_file.filename)))
        warnings: list[str] = []
        try:
            choice = await run_in_threadpool(space.store_input, kind, upload_file.filename, data,  # type: ignore[arg-type]
                                             warnings)
        except WattschedError as error:  # (a folder that cannot be written: named inside the workspace)
            return inputs_page(request, 400, upload_error=str(error).replace(str(space.root), "workspace"))
        return stored_page(request, choice, warnings)

    async def generate_platform(request: Request) -> Response:
        from wattsched.base.validate import check_count, option_error
        from wattsched.platforms.generate import esc_platform_xml, taurus_platform_xml, upas_platform_xml

        try:
            form = await read_form(request, max_files=0, max_fields=10, known=("hosts", "node", "flat"))
        except FormError as error:
            return inputs_page(request, 400, platform_errors={"hosts": str(error)})
        errors: dict[str, str] = {}
        hosts = _positive_int(form.get("hosts"), "--hosts", errors)
        node = str(form.get("node", "taurus"))
        # the node kinds of 'wattsched platform --node' that need no more options (eamc takes partitions)
        generators = {"taurus": (taurus_platform_xml, "taurus-"), "esc": (esc_platform_xml, "node"),
                      "upas": (upas_platform_xml, "cpu")}
        if node not in generators:
            errors["node"] = (f"argument --node: invalid choice: '{shown_value(node)}' (choose from 'taurus', 'esc', "
                              "'upas')")
        if errors:
            return inputs_page(request, 400, platform_errors=errors)
        generate, prefix = generators[node]
        flat = str(form.get("flat", ""))
        if flat not in ("", "on"):  # the checkbox sends "on", or nothing
            return inputs_page(request, 400,
                               platform_errors={"flat": f"flat: a checkbox (on, or left out), got '{printable(flat[:60])}'"})
        cluster = flat != "on"
        try:  # the generator's bound on hosts (platform_xml's check), before anything is generated
            check_count(hosts, "hosts", "platform", "hosts", "hosts", option_error)
        except OptionError as error:
            return inputs_page(request, 400, platform_errors={"hosts": str(error)})
        # a flat platform grows with its hosts: the page stores no input larger than it takes as an upload,
        # and refuses one before generating it (its size from those of 1 and 2 hosts: a host's elements)
        one, two = (len(generate(n, prefix=prefix, cluster=cluster).encode()) for n in (1, 2))
        if one + (hosts - 1) * (two - one) > max_upload_bytes:
            return inputs_page(request, 413, platform_errors={"hosts": too_big(
                f"platform of {hosts} hosts (about {one + (hosts - 1) * (two - one)} bytes)")})
        data = (await run_in_threadpool(generate, hosts, prefix=prefix, cluster=cluster)).encode()
        if len(data) > max_upload_bytes:
            return inputs_page(request, 413, platform_errors={"hosts": too_big(f"platform of {hosts} hosts")})
        warnings: list[str] = []
        choice = await run_in_threadpool(space.store_input, "platform", f"{node}_{hosts}.xml", data, warnings)
        return stored_page(request, choice, warnings)

    async def generate_workload(request: Request) -> Response:
        from wattsched.base.validate import check_count, check_memory
        from wattsched.cli.common import days, non_negative_int, positive_float
        from wattsched.workloads.synthetic import synthetic_week

        try:
            form = await read_form(request, max_files=0, max_fields=20,
                                   known=("hosts", "seed", "days", "load", "users"))
        except FormError as error:  # beside the field it names, when the page shows one
            field = error.field if error.field in ("hosts", "seed", "days", "load", "users") else "hosts"
            return inputs_page(request, 400, workload_errors={field: str(error)})
        errors: dict[str, str] = {}
        hosts = _positive_int(form.get("hosts"), "--hosts", errors)
        users = _positive_int(str(form.get("users", "")).strip() or "50", "--users", errors)  # blank: the default
        if "users" not in errors:
            def users_error(source: str, field: str, problem: str) -> OptionError:
                return OptionError(f"argument --users: {problem}")
            try:  # the bounds of a workload's jobs and of the memory: the user ids are drawn from an array
                check_count(users, "jobs", "synthetic workload", "users", "users (a workload has no more users "
                            "than jobs)", users_error)
                check_memory(48.0 * users, "synthetic workload", "users", f"{users} users", users_error)
            except OptionError as error:
                errors["users"] = str(error)
        try:
            seed = non_negative_int(str(form.get("seed", "")).strip())
        except argparse.ArgumentTypeError as error:
            errors["seed"] = f"argument --seed: {error}"
        numbers = {}
        for name, default, parse in (("days", "7", days), ("load", "0.85", positive_float)):
            try:
                # stripped as the integer fields are; the number in ASCII (positive_float: not '١٦', '1_6'); days
                # within their bound as 'wattsched synth --days' (1e308 days was an infinite "duration_s")
                numbers[name] = parse(str(form.get(name, "")).strip() or default)  # blank, as empty: the default
            except argparse.ArgumentTypeError as error:
                errors[name] = f"argument --{name}: {error}"
        if errors:
            return inputs_page(request, 400, workload_errors=errors)

        def generate() -> tuple[dict[str, Any], list[str]]:
            with logged_warnings() as kept:  # a load the workload cannot reach: said on the page, as synth says it
                made = synthetic_week(hosts, seed=seed, duration_s=numbers["days"] * 86400.0,
                                      target_load=numbers["load"], users=users)
            return made, kept

        try:
            workload, warnings = await run_in_threadpool(generate)
        except OptionError as error:  # synthetic_week's own bounds (hosts, days, jobs): the field they name
            field = next((f for f, names in (("hosts", ("nb_hosts", "hosts")), ("days", ("duration_s", "days")),
                                             ("load", ("target_load", "jobs")), ("users", ("users",)))
                          if any(n in str(error) for n in names)), "hosts")
            return inputs_page(request, 400, workload_errors={field: str(error)})
        except MemoryError:
            return inputs_page(request, 413, workload_errors={"hosts": "out of memory while generating this workload: "
                                                                       "fewer hosts, days or users"})
        data = (json.dumps(workload, indent=1) + "\n").encode()
        if len(data) > max_upload_bytes:  # the page stores no input larger than it takes as an upload
            return inputs_page(request, 413, workload_errors={"hosts": too_big(
                f"workload of {len(workload['jobs'])} jobs ({len(data)} bytes)")})
        choice = await run_in_threadpool(space.store_input, "workload", f"synth_{hosts}h_seed{seed}.json", data,
                                         warnings)
        return stored_page(request, choice, warnings)

    # ---------------------------------------------------------------------------------- assets
    def plotly_js(request: Request) -> Response:
        import importlib.util

        spec = importlib.util.find_spec("plotly")
        if spec is None or spec.origin is None:
            return Response("// plotly is not installed: pip install 'wattsched[web]'\n",
                            media_type="text/javascript", status_code=404)
        return FileResponse(Path(spec.origin).parent / "package_data" / "plotly.min.js",
                            media_type="text/javascript")

    async def user_error(request: Request, exc: Exception) -> Response:
        status = 404 if isinstance(exc, WorkspaceError) else 409 if isinstance(exc, RunDamagedError) else 400
        return refused(request, str(exc).replace(str(space.root), "workspace"), status)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        manager.close()

    def same_origin(request: Request) -> bool:
        """A form posted from this page (or by a client that says nothing of where the form comes from, such as
        curl), not from another site: its ``Origin``, or when a browser sends none (older ones, on a form's POST)
        its ``Referer``, is this page's; a browser's ``Sec-Fetch-Site`` says ``same-origin`` or ``none`` (a page of
        another port of this machine is ``same-site``, not the same origin)."""
        from urllib.parse import urlsplit

        host = request.headers.get("host", "")
        origin = request.headers.get("origin")
        if origin is not None:
            return urlsplit(origin).netloc == host
        if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            return False
        referer = request.headers.get("referer")
        return referer is None or urlsplit(referer).netloc == host

    def posted_here(handler: Any) -> Any:
        """``handler`` for a POST that refuses (403) a form posted from another site (launch, upload,
        generate, delete: each writes to the workspace or runs work)."""
        async def checked(request: Request) -> Response:
            if not same_origin(request):
                return refused(request, f"{request.url.path}: a form must be posted from this page, not from "
                               "another site", 403)
            return await handler(request)
        return checked

    routes = [
        Route("/", index),
        Route("/new", new_run),
        Route("/options", options_fragment),
        Route("/runs", posted_here(launch), methods=["POST"]),
        Route("/runs/{run_id}", run_page),
        Route("/runs/{run_id}/status", run_status),
        Route("/runs/{run_id}/row", run_row),
        Route("/runs/{run_id}/files/{name}", download),
        Route("/runs/{run_id}/delete", posted_here(delete_run), methods=["POST"]),
        Route("/compare", compare),
        Route("/inputs", inputs),
        Route("/inputs/upload", posted_here(upload), methods=["POST"]),
        Route("/inputs/platform", posted_here(generate_platform), methods=["POST"]),
        Route("/inputs/workload", posted_here(generate_workload), methods=["POST"]),
        Route("/assets/plotly.min.js", plotly_js),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={WattschedError: user_error})
    if allowed_hosts is not None:
        from starlette.middleware.trustedhost import TrustedHostMiddleware

        app.add_middleware(TrustedHostMiddleware, allowed_hosts=allowed_hosts)
    app.add_middleware(OneLineErrors)
    app.state.workspace = space
    app.state.manager = manager
    return app


def _positive_int(value: Any, flag: str, errors: dict[str, str]) -> int:
    """A form's positive integer with the CLI's message (:func:`wattsched.cli.common.positive_int`)."""
    from wattsched.cli.common import positive_int

    try:
        return positive_int(str(value or "").strip())
    except argparse.ArgumentTypeError as error:
        errors[flag.lstrip("-")] = f"argument {flag}: {error}"
        return 0



def _field_of(message: str, fields: list[Any] | None) -> str:
    """The option field an error names first (the form's general error when none)."""
    import re

    names = {f.name for f in fields or []}
    named = [n for n in re.findall(r"'([A-Za-z0-9_]+)'", message) if n in names]
    return named[0] if named else GENERAL
