"""acervo's stages: each module builds one set of index tables from the ones before it."""
