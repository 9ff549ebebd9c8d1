"""The language server (pygls on lsprotocol), on stdio.

Features:

- diagnostics when a Python file is opened, changed (debounced) or saved:
  every use the conversion will mark, with the reason; every unrecognised
  torch API; every warning of the conversion; every hazard ``analyze`` finds;
- hover on a torch API: its MindSpore form, argument differences and how the
  rule is proven;
- code actions (kind ``source.ms-migrate.*``): "Convert this file to MindSpore"
  (a workspace edit replacing the document with the converted text), "Write the
  MindSpore version beside it" (``foo.py`` -> ``foo_mindspore.py``: a CreateFile
  and an edit, or the ``ms-migrate.writeBeside`` command for clients without
  resource operations) and "Show the MindSpore diff" (the ``ms-migrate.showDiff``
  command: writes the unified diff to a ``.diff`` file, asks the editor to show
  it, and returns the diff text).

Checking a document converts it in a worker process (``worker``), and
analyze's hazards are found at the same time in a second one: the event loop
never runs converter code, so every request is answered at once and only the
answers that need the new conversion wait for it. One conversion per document
text is shared by diagnostics, hover and code actions; a text the user has
changed again before its turn is not converted at all. The workers import the
converter and load the rules as soon as the client is initialised (warm-up).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import NoReturn

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from transpiler import __version__
from transpiler.lsp import worker
from transpiler.lsp.documents import (
    CONVERTED, DocumentReport, Span, beside_path, carried_hazards, end_of, from_client, split_lines, to_client,
    unified_diff,
)
from transpiler.lsp.hover import hover_markdown

DEBOUNCE_SECONDS = 0.3  # after the last change before checking (initializationOptions {"debounce": seconds})

KIND_CONVERT = "source.ms-migrate.convert"
KIND_BESIDE = "source.ms-migrate.writeBeside"
KIND_DIFF = "source.ms-migrate.diff"
COMMAND_DIFF = "ms-migrate.showDiff"
COMMAND_BESIDE = "ms-migrate.writeBeside"
TITLE_CONVERT = "Convert this file to MindSpore"
TITLE_BESIDE = "Write the MindSpore version beside it"
TITLE_DIFF = "Show the MindSpore diff"

_SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
             "information": types.DiagnosticSeverity.Information, "hint": types.DiagnosticSeverity.Hint}
_ENCODING = {types.PositionEncodingKind.Utf8: "utf-8", types.PositionEncodingKind.Utf32: "utf-32"}

class Stale(Exception):
    """The document changed before its check started: a newer check replaces it."""


@dataclass
class _Check:
    text: str
    future: asyncio.Future


class _Worker:
    """One worker process and the jobs for it, one at a time: a job whose text
    the user has changed meanwhile is dropped before it starts."""

    def __init__(self, name: str):
        self.name = name
        self.lock = asyncio.Lock()
        self.pool: ProcessPoolExecutor | None = None

    async def run(self, fresh, function, *args):
        """``function(*args)`` in the worker; ``fresh()``: whether it is still wanted (else Stale)."""
        async with self.lock:
            if not fresh():
                raise Stale(self.name)
            if self.pool is None:
                # spawn: a fork of the server would copy its threads' locks
                self.pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
            try:
                return await asyncio.get_running_loop().run_in_executor(self.pool, function, *args)
            except BrokenProcessPool:  # the worker died (killed, out of memory): the next job starts another
                self.pool = None
                raise

    def stop(self) -> None:
        pool, self.pool = self.pool, None
        if pool is None:
            return
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:  # a conversion under way need not finish: the editor is leaving
            process.terminate()


class MigrationServer(LanguageServer):
    def __init__(self):
        super().__init__("ms-migrate", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.converter = _Worker("convert")  # conversions: the diagnostics, hover and code actions need them
        self.analyser = _Worker("analyze")  # analyze's hazards, at the same time on another core
        self.debounce = DEBOUNCE_SECONDS
        self.checks: dict[str, _Check] = {}  # uri -> the latest conversion asked for
        self.latest: dict[str, str] = {}  # uri -> the text last seen
        self.refreshes: dict[str, asyncio.Task] = {}  # uri -> the pending diagnostics refresh
        self.published: dict[str, str] = {}  # uri -> the text whose diagnostics were published
        self.hazards: dict[str, tuple[str, list]] = {}  # uri -> (text, analyze's hazards in it)
        self.catalogs: dict[tuple, dict] = {}  # rule set key -> API -> rule_catalog.Entry
        self.warm: asyncio.Future | None = None
        self._diff_dir: str | None = None

    # -- checking ----------------------------------------------------------------------------------------------------
    def warm_up(self) -> None:
        """Start the workers (imports, rules, the hover catalog) before the first file is opened."""
        async def warm():
            start = time.perf_counter()
            analysed = asyncio.ensure_future(self.analyser.run(lambda: True, worker.warm_up))
            key, catalog = await self.converter.run(lambda: True, worker.warm_up)
            self.catalogs[key] = catalog
            await analysed
            self._log(f"warmed up in {time.perf_counter() - start:.1f} s")

        self.warm = asyncio.ensure_future(warm())

    async def report(self, uri: str) -> DocumentReport:
        """The conversion's report on the document's current text (shared with
        every other caller asking for that text)."""
        document = self.workspace.get_text_document(uri)
        text = document.source
        self.latest[uri] = text
        check = self.checks.get(uri)
        if check is None or check.text != text or (check.future.done() and check.future.exception() is not None):
            check = _Check(text, asyncio.ensure_future(self._convert(uri, text, document.path or uri)))
            self.checks[uri] = check
        return await asyncio.shield(check.future)

    async def _convert(self, uri: str, text: str, path: str) -> DocumentReport:
        report = await self.converter.run(lambda: self.latest.get(uri) == text, worker.convert, text, path)
        self._log(f"converted {os.path.basename(path)} ({text.count(chr(10)) + 1} lines) in {report.seconds:.2f} s "
                  f"(CPU {report.cpu_seconds:.2f} s)")
        return report

    async def _analyse(self, uri: str, text: str, path: str) -> list:
        start = time.perf_counter()
        items, cpu = await self.analyser.run(lambda: self.latest.get(uri) == text, worker.hazards, text, path)
        self._log(f"analysed {os.path.basename(path)} in {time.perf_counter() - start:.2f} s (CPU {cpu:.2f} s)")
        return items

    async def catalog(self, report: DocumentReport) -> dict:
        catalog = self.catalogs.get(report.rules_key)
        if catalog is None:
            key, catalog = await self.converter.run(lambda: True, worker.catalog, report.path)
            self.catalogs[key] = catalog
        return catalog

    def _log(self, message: str) -> None:
        """A line for the editor's log of this server (window/logMessage)."""
        self.window_log_message(types.LogMessageParams(type=types.MessageType.Log, message=f"ms-migrate: {message}"))

    async def refresh(self, uri: str, delay: float) -> None:
        """Publish the diagnostics of the document ``delay`` seconds from now (a newer refresh replaces this one)."""
        pending = self.refreshes.pop(uri, None)
        if pending is not None and not pending.done():
            pending.cancel()
        self.latest[uri] = self.workspace.get_text_document(uri).source
        self.refreshes[uri] = asyncio.ensure_future(self._refresh(uri, delay))

    async def _refresh(self, uri: str, delay: float) -> None:
        """The conversion's diagnostics as soon as it is done (with the hazards
        of the lines the edit left alone, or the new ones if analyze was
        quicker), then with analyze's hazards. Both run at once, each in its
        worker process."""
        if delay > 0:
            await asyncio.sleep(delay)
        document = self.workspace.get_text_document(uri)
        text = document.source
        self.latest[uri] = text
        analysed = asyncio.ensure_future(self._analyse(uri, text, document.path or uri))
        try:
            report = await self.report(uri)
            if report.text != text:
                return
            if not report.diagnostics and not any(i.kind == CONVERTED for i in report.items):
                analysed.cancel()  # nothing torch-like: no hazards either
                self._publish(uri, report, [])
                return
            if not analysed.done():
                previous = self.hazards.get(uri)
                carried = carried_hazards(_as_report(previous), text) if previous else []
                if not self._publish(uri, report, carried):
                    return
            hazards = await analysed
            self.hazards[uri] = (text, hazards)
            self._publish(uri, report, hazards)
        except Stale:
            return
        except Exception as exc:  # noqa: BLE001 - a failed check is logged; the next edit checks again
            self._log(f"checking {os.path.basename(document.path or uri)} failed: {type(exc).__name__}: {exc}")
        finally:
            if not analysed.done():
                analysed.cancel()

    def _publish(self, uri: str, report: DocumentReport, extra: list) -> bool:
        """Publish ``report``'s diagnostics if the document still holds its text."""
        if uri not in self.workspace.text_documents:
            return False  # closed meanwhile
        document = self.workspace.get_text_document(uri)
        if document.source != report.text:
            return False  # changed meanwhile: its own refresh publishes
        lines = split_lines(report.text)
        diagnostics = [types.Diagnostic(range=self.client_range(lines, item.span), message=item.message,
                                        severity=_SEVERITY[item.level], code=item.code, source=item.source)
                       for item in sorted([*report.diagnostics, *extra], key=lambda item: item.span.start)]
        self.published[uri] = report.text
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=document.version, diagnostics=diagnostics))
        return True

    def forget(self, uri: str) -> None:
        pending = self.refreshes.pop(uri, None)
        if pending is not None:
            pending.cancel()
        for table in (self.checks, self.latest, self.published, self.hazards):
            table.pop(uri, None)

    # -- positions ---------------------------------------------------------------------------------------------------
    @property
    def encoding(self) -> str:
        return _ENCODING.get(self.workspace.position_encoding, "utf-16")

    def client_position(self, lines: list[str], position) -> types.Position:
        line, character = to_client(lines, position, self.encoding)
        return types.Position(line=line, character=character)

    def client_range(self, lines: list[str], span: Span) -> types.Range:
        return types.Range(start=self.client_position(lines, span.start), end=self.client_position(lines, span.end))

    def whole(self, text: str) -> types.Range:
        lines = split_lines(text)
        return types.Range(start=types.Position(line=0, character=0), end=self.client_position(lines, end_of(lines)))

    # -- what the client supports ------------------------------------------------------------------------------------
    def _capability(self, *names):
        value = self.client_capabilities
        for name in names:
            value = getattr(value, name, None)
            if value is None:
                return None
        return value

    @property
    def document_changes(self) -> bool:
        return bool(self._capability("workspace", "workspace_edit", "document_changes"))

    @property
    def creates_files(self) -> bool:
        operations = self._capability("workspace", "workspace_edit", "resource_operations") or ()
        return self.document_changes and types.ResourceOperationKind.Create in operations

    @property
    def shows_documents(self) -> bool:
        return bool(self._capability("window", "show_document", "support"))

    # -- edits -------------------------------------------------------------------------------------------------------
    def replace_edit(self, uri: str, report: DocumentReport) -> types.WorkspaceEdit:
        edit = types.TextEdit(range=self.whole(report.text), new_text=report.output)
        if self.document_changes:
            version = self.workspace.get_text_document(uri).version
            return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), edits=[edit])])
        return types.WorkspaceEdit(changes={uri: [edit]})

    def beside_edit(self, target_uri: str, report: DocumentReport) -> types.WorkspaceEdit:
        start = types.Position(line=0, character=0)
        return types.WorkspaceEdit(document_changes=[
            types.CreateFile(uri=target_uri, options=types.CreateFileOptions(overwrite=True)),
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=target_uri, version=None),
                edits=[types.TextEdit(range=types.Range(start=start, end=start), new_text=report.output)]),
        ])

    def diff_file(self, report: DocumentReport, diff: str) -> str:
        if self._diff_dir is None:
            self._diff_dir = tempfile.mkdtemp(prefix="ms-migrate-lsp-")
        name = os.path.basename(report.path) or "untitled.py"
        path = os.path.join(self._diff_dir, f"{name}.mindspore.diff")
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(diff)
        return path

    def cleanup(self) -> None:
        if self._diff_dir is not None:
            shutil.rmtree(self._diff_dir, ignore_errors=True)
            self._diff_dir = None
        self.converter.stop()
        self.analyser.stop()


def _as_report(previous: tuple[str, list]) -> DocumentReport:
    text, hazards = previous
    return DocumentReport("", text, "converted", None, list(hazards))


def _is_python(document) -> bool:
    return document.language_id == "python" or document.uri.endswith((".py", ".pyi"))


def _wanted(kind: str, only) -> bool:
    return not only or any(kind == wanted or kind.startswith(wanted + ".") for wanted in only)


def build_server() -> MigrationServer:
    server = MigrationServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: MigrationServer, params: types.InitializeParams):
        options = params.initialization_options
        if isinstance(options, dict) and isinstance(options.get("debounce"), (int, float)):
            ls.debounce = max(0.0, float(options["debounce"]))

    @server.feature(types.INITIALIZED)
    async def initialized(ls: MigrationServer, params: types.InitializedParams):
        ls.warm_up()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: MigrationServer, params: types.DidOpenTextDocumentParams):
        document = ls.workspace.get_text_document(params.text_document.uri)
        if _is_python(document):
            await ls.refresh(document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: MigrationServer, params: types.DidChangeTextDocumentParams):
        document = ls.workspace.get_text_document(params.text_document.uri)
        if _is_python(document):
            await ls.refresh(document.uri, ls.debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: MigrationServer, params: types.DidSaveTextDocumentParams):
        document = ls.workspace.get_text_document(params.text_document.uri)
        if _is_python(document) and ls.published.get(document.uri) != document.source:
            await ls.refresh(document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: MigrationServer, params: types.DidCloseTextDocumentParams):
        uri = params.text_document.uri
        ls.forget(uri)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: MigrationServer, params: types.HoverParams):
        document = ls.workspace.get_text_document(params.text_document.uri)
        if not _is_python(document):
            return None
        try:
            report = await ls.report(document.uri)
        except Stale:
            return None
        lines = split_lines(report.text)
        position = from_client(lines, params.position.line, params.position.character, ls.encoding)
        items = report.at(position)
        if not items:
            return None
        catalog = await ls.catalog(report)
        text = hover_markdown(items, catalog)
        if text is None:
            return None
        span = next(item.hover_span for item in items if item.kind in ("converted", "marker", "unknown", "warning"))
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
                           range=ls.client_range(lines, span))

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[KIND_CONVERT, KIND_BESIDE, KIND_DIFF], resolve_provider=False))
    async def code_action(ls: MigrationServer, params: types.CodeActionParams):
        uri = params.text_document.uri
        document = ls.workspace.get_text_document(uri)
        only = params.context.only
        if not _is_python(document) or not any(_wanted(k, only) for k in (KIND_CONVERT, KIND_BESIDE, KIND_DIFF)):
            return None
        try:
            report = await ls.report(uri)
        except Stale:
            return None
        if not report.converts:
            return None
        actions = []
        if _wanted(KIND_CONVERT, only):
            actions.append(types.CodeAction(title=TITLE_CONVERT, kind=KIND_CONVERT, edit=ls.replace_edit(uri, report)))
        if _wanted(KIND_BESIDE, only) and document.path:
            target = from_fs_path(beside_path(document.path))
            if ls.creates_files:
                actions.append(types.CodeAction(title=TITLE_BESIDE, kind=KIND_BESIDE,
                                                edit=ls.beside_edit(target, report)))
            else:
                actions.append(types.CodeAction(title=TITLE_BESIDE, kind=KIND_BESIDE, command=types.Command(
                    title=TITLE_BESIDE, command=COMMAND_BESIDE, arguments=[uri])))
        if _wanted(KIND_DIFF, only):
            actions.append(types.CodeAction(title=TITLE_DIFF, kind=KIND_DIFF, command=types.Command(
                title=TITLE_DIFF, command=COMMAND_DIFF, arguments=[uri])))
        return actions

    @server.command(COMMAND_DIFF)
    async def show_diff(ls: MigrationServer, *arguments):
        uri = _uri_argument(arguments)
        report = await ls.report(uri)
        diff = unified_diff(report)
        if not diff:
            message = "the conversion would not change this file" if report.output is not None else \
                "this file cannot be converted: " + "; ".join(i.message for i in report.diagnostics if i.kind == "error")
            ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=f"ms-migrate: {message}"))
            return {"diff": "", "uri": None}
        path = ls.diff_file(report, diff)
        shown = False
        if ls.shows_documents:
            result = await ls.window_show_document_async(types.ShowDocumentParams(uri=from_fs_path(path), take_focus=True))
            shown = bool(result and result.success)
        if not shown:
            ls.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Info, message=f"ms-migrate: the MindSpore diff is in {path}"))
        return {"diff": diff, "uri": from_fs_path(path)}

    @server.command(COMMAND_BESIDE)
    async def write_beside(ls: MigrationServer, *arguments):
        uri = _uri_argument(arguments)
        report = await ls.report(uri)
        if report.output is None:
            raise ValueError(f"{report.path} cannot be converted")
        path = to_fs_path(uri)
        if path is None:
            raise ValueError(f"not a file: {uri}")
        target = beside_path(path)
        from transpiler.batch.source_io import write_atomic

        write_atomic(target, report.output.encode("utf-8"))
        if ls.shows_documents:
            await ls.window_show_document_async(types.ShowDocumentParams(uri=from_fs_path(target), take_focus=True))
        return {"uri": from_fs_path(target)}

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: MigrationServer, params):
        ls.cleanup()

    return server


def _uri_argument(arguments) -> str:
    if not arguments or not isinstance(arguments[0], str):
        raise ValueError("expected the document's URI as the argument")
    return arguments[0]


def serve() -> NoReturn:
    server = build_server()
    try:
        server.start_io()  # pygls ends it on the client's exit notification (it catches its own SystemExit)
    finally:
        server.cleanup()
    # A worker stopped while it wrote a result leaves the process pool's manager thread
    # waiting for the rest of that message, and the interpreter's exit joins that thread:
    # measured, a server that never exited after its client left (a test session hung on it).
    # Nothing is left to do, so the process ends here, its output flushed.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed with the connection
            pass
    os._exit(0)
