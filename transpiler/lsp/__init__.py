"""``ms-migrate lsp``: a language server on stdio (pygls on lsprotocol) for
reviewing a migration in the editor.

- ``documents``: what the server knows about one torch file, as plain data (a
  pure function of the text: the conversion's markers and warnings, the hazards
  ``analyze`` finds, each at its range; the converted text);
- ``hover``: the text shown over a torch API (its MindSpore form, argument
  differences, how its rule is proven), from the rule catalog;
- ``server``: the LSP features (diagnostics, hover, code actions, commands);
  conversions run on a worker thread, debounced while the user types, so the
  editor never waits on the server.
"""
