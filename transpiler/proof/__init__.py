"""The proof tools: weight conversion, ``verify`` (torch and MindSpore run on
the same inputs and compared), emitted per-Cell tests and the import check of
converted modules. They run the frameworks; the convert pipeline never imports
them."""
