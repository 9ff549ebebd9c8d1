"""Migration analysis before conversion (``ms-migrate analyze``): API
compliance, function-compliance findings and the training-tricks checklist,
built on the converter's own parse, name resolution and rules.

Entry points: ``transpiler.analyze.runner.analyze_source`` (one file's text)
and ``analyze_tree`` (a file or a directory)."""
