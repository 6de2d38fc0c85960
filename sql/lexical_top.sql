-- The $limit readable chunks ($scopes: null = any) that BM25 ranks best for the query $q, then by id.
select chunk_id, doc_id, text, n_tokens, score
from (
    select *, fts_main_search_chunks.match_bm25(chunk_id, $q) as score
    from search_chunks
    where $scopes::varchar[] is null or scope is null or list_contains($scopes::varchar[], scope)
)
where score is not null
order by score desc, chunk_id
limit $limit
