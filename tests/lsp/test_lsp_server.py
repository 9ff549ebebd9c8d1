"""`ms-migrate lsp` end to end: a real LSP client (pytest-lsp) starts the server
over stdio as an editor does, with VS Code's client capabilities, and checks
what an editor would show and apply.

One server serves the whole module (its first conversion imports the converter).
"""

from __future__ import annotations

import asyncio
import pathlib
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from transpiler.convert.pipeline import convert_source

pytestmark = pytest.mark.asyncio(loop_scope="module")

WAIT = 300  # seconds: the first check imports the converter and its rules on a shared machine

MODEL = '''\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.sn = torch.nn.utils.spectral_norm(nn.Linear(4, 4))

    def forward(self, x):
        if x.sum() > 0:
            x = x[x > 0]
        return self.conv(x)
'''


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(server_command=[sys.executable, "-m", "transpiler", "lsp"]))
async def client(lsp_client: LanguageClient):
    params = types.InitializeParams(capabilities=client_capabilities("visual-studio-code"),
                                    initialization_options={"debounce": 0.05})
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> pathlib.Path:
    return tmp_path_factory.mktemp("lsp")


def _open(client: LanguageClient, path: pathlib.Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    return uri


async def _diagnostics(client: LanguageClient, uri: str, *codes: str) -> list[types.Diagnostic]:
    """The diagnostics published for ``uri``, once they hold a diagnostic of each of ``codes``
    (the server publishes the conversion's first, then again with analyze's hazards)."""
    async def published():
        while uri not in client.diagnostics or not set(codes) <= {d.code for d in client.diagnostics[uri]}:
            await asyncio.sleep(0.05)
        return client.diagnostics[uri]

    return await asyncio.wait_for(published(), WAIT)


def _range(text: str, line: int, snippet: str) -> types.Range:
    """The range of ``snippet`` on ``line`` (ASCII lines: characters are UTF-16 units)."""
    start = text.splitlines()[line].index(snippet)
    return types.Range(start=types.Position(line=line, character=start),
                       end=types.Position(line=line, character=start + len(snippet)))


def _apply(text: str, edits) -> str:
    """Apply LSP text edits (ASCII text, non-overlapping) as an editor does."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def offset(position):
        return offsets[min(position.line, len(lines))] + position.character

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


def _by_code(diagnostics, code):
    found = [d for d in diagnostics if d.code == code]
    assert found, f"no {code} diagnostic among {[d.code for d in diagnostics]}"
    return found[0]


async def test_diagnostics_name_marked_uses_and_hazards_at_their_ranges(client: LanguageClient, folder):
    uri = _open(client, folder / "model.py", MODEL)
    diagnostics = await _diagnostics(client, uri, "torch.nn.utils.spectral_norm", "tensor-control-flow",
                                     "boolean-mask-index")

    marked = _by_code(diagnostics, "torch.nn.utils.spectral_norm")
    assert marked.range == _range(MODEL, 8, "torch.nn.utils.spectral_norm(nn.Linear(4, 4))")
    assert marked.severity == types.DiagnosticSeverity.Warning
    assert marked.message == "will be marked: torch.nn.utils.spectral_norm: no MindSpore rule for this API"
    assert marked.source == "ms-migrate"

    branch = _by_code(diagnostics, "tensor-control-flow")  # analyze's hazards
    assert branch.range == _range(MODEL, 11, "if x.sum() > 0:")
    assert branch.source == "ms-migrate analyze"
    mask = _by_code(diagnostics, "boolean-mask-index")
    assert mask.range == _range(MODEL, 12, "x[x > 0]")
    assert mask.message.startswith("dynamic shapes: ") and "\nFix: " in mask.message
    # converted uses are not diagnostics: hover tells about them
    assert not any(d.code in ("torch.nn.Conv2d", "torch.nn.Linear") for d in diagnostics)


async def test_ranges_count_utf16_units(client: LanguageClient, folder):
    text = 'import torch\nlabel = "\U0001F600 é"; w = torch.nn.utils.spectral_norm(torch.nn.Linear(2, 2))\n'
    uri = _open(client, folder / "emoji.py", text)
    marked = _by_code(await _diagnostics(client, uri), "torch.nn.utils.spectral_norm")
    line = text.splitlines()[1]
    start = line.index("torch.nn.utils.spectral_norm")
    # the emoji is one code point and two UTF-16 units
    assert marked.range.start == types.Position(line=1, character=start + 1)
    assert marked.range.end == types.Position(line=1, character=len(line) + 1)


async def test_an_edit_updates_the_diagnostics(client: LanguageClient, folder):
    uri = _open(client, folder / "edited.py", MODEL)
    await _diagnostics(client, uri, "torch.nn.utils.spectral_norm", "tensor-control-flow")
    client.diagnostics.pop(uri)
    # two quick edits (debounced into one check): delete the marked line, then a blank line
    delete = types.Range(start=types.Position(line=8, character=0), end=types.Position(line=9, character=0))
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangePartial(range=delete, text="")]))
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(line=9, character=0), end=types.Position(line=9, character=0)),
            text="\n")]))
    # the hazards of the lines the edit left alone stay on them while the new text is analysed
    diagnostics = await _diagnostics(client, uri, "tensor-control-flow")
    assert not any(d.code == "torch.nn.utils.spectral_norm" for d in diagnostics)
    assert _by_code(diagnostics, "tensor-control-flow").range.start.line == 11  # -1 line, +1 line


async def test_a_syntax_error_is_an_error_where_python_puts_it(client: LanguageClient, folder):
    text = "import torch\nx = torch.zeros(2\ny = 1 +\n"
    uri = _open(client, folder / "broken.py", text)
    (error,) = await _diagnostics(client, uri)
    assert error.severity == types.DiagnosticSeverity.Error
    assert error.message.startswith("syntax error: ")


async def test_a_file_without_torch_has_no_diagnostics_nor_actions(client: LanguageClient, folder):
    uri = _open(client, folder / "plain.py", "import os\nprint(os.getcwd())\n")
    assert list(await _diagnostics(client, uri)) == []
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=_range("import os", 0, "import"),
        context=types.CodeActionContext(diagnostics=[])))
    assert not actions


async def test_hover_shows_the_mindspore_form_argument_differences_and_proof(client: LanguageClient, folder):
    uri = _open(client, folder / "hover.py", MODEL)
    await _diagnostics(client, uri)

    def at(line, snippet, offset=0):
        position = _range(MODEL, line, snippet).start
        position.character += offset
        return client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=position))

    conv = await at(7, "Conv2d", 2)
    text = conv.contents.value
    assert text.startswith("**`torch.nn.Conv2d`** → MindSpore **`nn.Conv2d`**")
    assert "`bias`: bias=False -> has_bias=False" in text  # this call's argument
    assert "`groups`→`group`" in text  # the rule's argument differences
    assert "**Proof:** exact — " in text and "compare values" in text
    assert conv.range == _range(MODEL, 7, "nn.Conv2d")

    linear = (await at(8, "nn.Linear", 4)).contents.value
    assert linear.startswith("**`torch.nn.Linear`** → MindSpore **`nn.Dense`**")
    assert "`in_features`→`in_channels`" in linear

    marked = (await at(8, "spectral_norm", 1)).contents.value
    assert marked.startswith("**`torch.nn.utils.spectral_norm`**")
    assert "TODO(ms-migrate)" in marked

    assert await at(2, "", 0) is None  # a blank line


async def _actions(client: LanguageClient, uri: str, text: str):
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=_range(text, 0, "import"),
        context=types.CodeActionContext(diagnostics=[])))
    # lsprotocol's client reads a CodeAction that carries a command as a Command: look up by title
    return {action.title: action for action in actions}


async def test_convert_action_replaces_the_document_with_the_converted_text(client: LanguageClient, folder):
    path = folder / "convert_me.py"
    uri = _open(client, path, MODEL)
    await _diagnostics(client, uri)
    actions = await _actions(client, uri, MODEL)
    assert {"Convert this file to MindSpore", "Write the MindSpore version beside it",
            "Show the MindSpore diff"} <= actions.keys()

    convert = actions["Convert this file to MindSpore"]
    assert convert.kind == "source.ms-migrate.convert"
    (change,) = convert.edit.document_changes
    assert change.text_document.uri == uri and change.text_document.version == 1
    expected = convert_source(MODEL, str(path)).output
    assert "class Net(nn.Cell)" in expected
    assert _apply(MODEL, change.edits) == expected

    beside = actions["Write the MindSpore version beside it"]
    create, fill = beside.edit.document_changes
    target = (folder / "convert_me_mindspore.py").as_uri()
    assert isinstance(create, types.CreateFile) and create.uri == target
    assert fill.text_document.uri == target and _apply("", fill.edits) == expected


async def test_only_filters_the_actions(client: LanguageClient, folder):
    uri = _open(client, folder / "only.py", MODEL)
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=_range(MODEL, 0, "import"),
        context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.QuickFix])))
    assert not actions
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=_range(MODEL, 0, "import"),
        context=types.CodeActionContext(diagnostics=[], only=["source.ms-migrate.convert"])))
    assert [a.title for a in actions] == ["Convert this file to MindSpore"]


async def test_show_diff_command_returns_and_shows_the_unified_diff(client: LanguageClient, folder):
    path = folder / "diffed.py"
    uri = _open(client, path, MODEL)
    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="ms-migrate.showDiff", arguments=[uri]))
    diff = result["diff"]
    assert diff.startswith("--- a/diffed.py\n+++ b/diffed.py\n")
    assert "-class Net(nn.Module):\n+class Net(nn.Cell):\n" in diff
    shown = client.shown_documents[-1]
    assert shown.uri == result["uri"] and shown.take_focus
    assert pathlib.Path(shown.uri.removeprefix("file://")).read_text(encoding="utf-8") == diff
