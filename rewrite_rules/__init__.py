"""Rewrite rules: one module per family of torch APIs. Each module declares a
``RULES`` list of ApiRule / AttributeRule / MethodRule entries (see ``spec``);
``registry.load_rules()`` collects them."""
