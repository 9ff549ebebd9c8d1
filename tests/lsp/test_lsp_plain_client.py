"""`ms-migrate lsp` with a client that declares no optional capability: edits
as a plain `changes` map, "Write the MindSpore version beside it" as a command
the server carries out, the diff's place said in a message."""

from __future__ import annotations

import asyncio
import pathlib
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from transpiler.convert.pipeline import convert_source

pytestmark = pytest.mark.asyncio(loop_scope="module")

SOURCE = "import torch\n\nx = torch.zeros(2, 3)\ny = torch.cat([x, x], dim=1)\n"


@pytest_lsp.fixture(scope="module", config=ClientServerConfig(server_command=[sys.executable, "-m", "transpiler", "lsp"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(types.InitializeParams(capabilities=types.ClientCapabilities()))
    yield
    await lsp_client.shutdown_session()


async def test_actions_for_a_client_without_document_changes_nor_show_document(client: LanguageClient, tmp_path):
    path = tmp_path / "plain.py"
    path.write_text(SOURCE, encoding="utf-8")
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=SOURCE)))
    start = types.Position(line=0, character=0)
    actions = await asyncio.wait_for(client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=types.Range(start=start, end=start),
        context=types.CodeActionContext(diagnostics=[]))), 300)
    actions = {action.title: action for action in actions}
    expected = convert_source(SOURCE, str(path)).output

    (edit,) = actions["Convert this file to MindSpore"].edit.changes[uri]
    assert edit.range == types.Range(start=start, end=types.Position(line=4, character=0))
    assert edit.new_text == expected

    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="ms-migrate.writeBeside", arguments=[uri]))
    beside = tmp_path / "plain_mindspore.py"
    assert result["uri"] == beside.as_uri() and beside.read_text(encoding="utf-8") == expected

    result = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command="ms-migrate.showDiff", arguments=[uri]))
    assert "-y = torch.cat([x, x], dim=1)\n+x = ops.zeros((2, 3))\n+y = ops.cat([x, x], axis=1)\n" in result["diff"]
    message = client.messages[-1].message
    assert message.startswith("ms-migrate: the MindSpore diff is in ")
    assert pathlib.Path(message.rsplit(" ", 1)[-1]).read_text(encoding="utf-8") == result["diff"]
