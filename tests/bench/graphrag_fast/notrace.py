"""GraphRAG's CLI with its per-workflow memory tracer off: 3.3.0 runs tracemalloc around every workflow, with no
setting to turn it off, and it makes a run 2 to 3 times slower; the timings in stats.json are kept."""

import sys
import types

import graphrag.index.run.profiling as profiling
from graphrag.cli.main import app

profiling.tracemalloc = types.SimpleNamespace(start=lambda *a: None, stop=lambda: None,
                                              get_traced_memory=lambda: (0, 0), get_tracemalloc_memory=lambda: 0)
sys.argv[0] = "graphrag"
sys.exit(app())
