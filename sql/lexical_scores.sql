-- BM25 score of the chunks $ids for the query $q (null scores, no query term, left out).
select chunk_id, score
from (
    select chunk_id, fts_main_search_chunks.match_bm25(chunk_id, $q) as score
    from search_chunks
    where chunk_id in (select unnest($ids::varchar[]))
)
where score is not null
