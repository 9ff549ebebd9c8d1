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

Checking a document converts it: it runs on one worker thread, never on the
event loop, so hover and every other request are answered while a conversion
runs. One conversion per document text is shared by diagnostics, hover and code
actions; a text the user has already changed again is not converted at all.
The first conversion imports the converter and loads the rules: the server
warms up in the background as soon as the client is initialised.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from transpiler import __version__
from transpiler.lsp.documents import (
    DocumentReport, Span, beside_path, carried_hazards, check_document, end_of, from_client, split_lines, to_client,
    unified_diff, with_hazards,
)
from transpiler.lsp.hover import catalog_of, hover_markdown

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

_WARM_UP = "import torch\nimport torch.nn as nn\n\nclass M(nn.Module):\n    def forward(self, x):\n" \
           "        return torch.relu(nn.functional.linear(x, x)).view(-1)\n"


class Stale(Exception):
    """The document changed before its check started: a newer check replaces it."""


@dataclass
class _Check:
    text: str
    future: asyncio.Future


class MigrationServer(LanguageServer):
    def __init__(self):
        super().__init__("ms-migrate", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ms-migrate-check")
        self.debounce = DEBOUNCE_SECONDS
        self.checks: dict[str, _Check] = {}  # uri -> the latest check started
        self.latest: dict[str, str] = {}  # uri -> the text last seen (read by the worker thread)
        self.refreshes: dict[str, asyncio.Task] = {}  # uri -> the pending diagnostics refresh
        self.published: dict[str, str] = {}  # uri -> the text whose diagnostics were published
        self.analysed: dict[str, DocumentReport] = {}  # uri -> the last report with analyze's hazards
        self._diff_dir: str | None = None
        self.event_loop: asyncio.AbstractEventLoop | None = None  # set when the client initialises

    # -- checking ----------------------------------------------------------------------------------------------------
    async def report(self, uri: str) -> DocumentReport:
        """The conversion's report on the document's current text (shared with
        every other caller asking for that text); analyze's hazards are added
        by ``refresh``."""
        document = self.workspace.get_text_document(uri)
        text = document.source
        self.latest[uri] = text
        check = self.checks.get(uri)
        if check is None or check.text != text or (check.future.done() and check.future.exception() is not None):
            path = document.path or uri
            loop = asyncio.get_running_loop()
            check = _Check(text, loop.run_in_executor(self.executor, self._check, uri, text, path))
            self.checks[uri] = check
        return await asyncio.shield(check.future)

    def _check(self, uri: str, text: str, path: str) -> DocumentReport:
        if self.latest.get(uri, text) != text:
            raise Stale(uri)
        start = time.thread_time()
        report = check_document(text, path, hazards=False)
        self._log(f"converted {os.path.basename(path)} ({text.count(chr(10)) + 1} lines) in {report.seconds:.2f} s "
                  f"(CPU {time.thread_time() - start:.2f} s)")
        return report

    def _hazards(self, uri: str, report: DocumentReport) -> DocumentReport:
        if self.latest.get(uri, report.text) != report.text:
            raise Stale(uri)
        start = time.thread_time()
        full = with_hazards(report)
        self._log(f"analysed {os.path.basename(report.path)} in {full.seconds - report.seconds:.2f} s "
                  f"(CPU {time.thread_time() - start:.2f} s)")
        return full

    def _log(self, message: str) -> None:
        """A line for the editor's log of this server (window/logMessage), from any thread."""
        loop = self.event_loop
        if loop is None:
            return
        params = types.LogMessageParams(type=types.MessageType.Log, message=f"ms-migrate: {message}")
        try:
            loop.call_soon_threadsafe(self.window_log_message, params)
        except RuntimeError:  # the loop has closed: the server is exiting
            pass

    async def refresh(self, uri: str, delay: float) -> None:
        """Publish the diagnostics of the document ``delay`` seconds from now (a newer refresh replaces this one)."""
        pending = self.refreshes.pop(uri, None)
        if pending is not None and not pending.done():
            pending.cancel()
        self.latest[uri] = self.workspace.get_text_document(uri).source
        self.refreshes[uri] = asyncio.ensure_future(self._refresh(uri, delay))

    async def _refresh(self, uri: str, delay: float) -> None:
        """The conversion's diagnostics as soon as it is done (with the hazards
        of the lines the edit left alone), then analyze's hazards."""
        if delay > 0:
            await asyncio.sleep(delay)
        try:
            report = await self.report(uri)
            if not self._publish(uri, report, carried_hazards(self.analysed.get(uri), report.text)):
                return
            if not report.analysed:
                loop = asyncio.get_running_loop()
                report = await loop.run_in_executor(self.executor, self._hazards, uri, report)
                if not self._publish(uri, report, []):
                    return
            self.analysed[uri] = report
        except Stale:
            return

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
        self.checks.pop(uri, None)
        self.latest.pop(uri, None)
        self.published.pop(uri, None)
        self.analysed.pop(uri, None)

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
        self.executor.shutdown(wait=False, cancel_futures=True)


def _is_python(document) -> bool:
    return document.language_id == "python" or document.uri.endswith((".py", ".pyi"))


def _wanted(kind: str, only) -> bool:
    return not only or any(kind == wanted or kind.startswith(wanted + ".") for wanted in only)


def build_server() -> MigrationServer:
    server = MigrationServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: MigrationServer, params: types.InitializeParams):
        try:
            ls.event_loop = asyncio.get_running_loop()
        except RuntimeError:
            pass
        options = params.initialization_options
        if isinstance(options, dict) and isinstance(options.get("debounce"), (int, float)):
            ls.debounce = max(0.0, float(options["debounce"]))

    @server.feature(types.INITIALIZED)
    def initialized(ls: MigrationServer, params: types.InitializedParams):
        def warm_up():  # imports the converter and analyze, loads the rules and the catalog hover reads
            start = time.perf_counter()
            report = check_document(_WARM_UP, "warm_up.py")
            catalog_of(report.rules)
            ls._log(f"warmed up in {time.perf_counter() - start:.1f} s")

        ls.executor.submit(warm_up)

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
        catalog = await asyncio.get_running_loop().run_in_executor(ls.executor, catalog_of, report.rules)
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


def serve() -> int:
    server = build_server()
    try:
        server.start_io()
    finally:
        server.cleanup()
    return 0
