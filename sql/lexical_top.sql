-- The $limit chunks that BM25 ranks best for the query $q, then by chunk id.
select chunk_id, doc_id, text, n_tokens, score
from (
    select *, fts_main_search_chunks.match_bm25(chunk_id, $q) as score
    from search_chunks
)
where score is not null
order by score desc, chunk_id
limit $limit
