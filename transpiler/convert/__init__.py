"""The convert pipeline of one source file: parse, the metadata pass (``names``),
the rewriting traversal (``rewriter`` applying the rules through ``engine``), the
structural rewrites (``structural``: Cells, training loops, checkpoints ...),
import edits, markers and black on the changed statements. ``pipeline.convert_source``
runs it and never raises."""
