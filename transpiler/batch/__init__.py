"""Converting files and trees around the per-file pipeline: discovery, the process
pool (``runner``), the result cache, safe reading and writing, notebooks, diffs,
reports and the steps after writing (``--check``, ``--emit-tests``)."""
