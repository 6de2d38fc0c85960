-- A BM25 index (fts extension) over search_chunks.text.
pragma create_fts_index('search_chunks', 'chunk_id', 'text', overwrite = 1)
