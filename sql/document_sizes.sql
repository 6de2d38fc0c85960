-- The token and chunk totals of the documents just split (keys 'doc'), from their chunks.
update documents d
set n_tokens = s.n_tokens, n_chunks = s.n_chunks
from (
    select doc_id, sum(n_tokens)::integer as n_tokens, count(*)::integer as n_chunks
    from chunks
    where doc_id in (select id from keys where kind = 'doc')
    group by doc_id
) s
where d.doc_id = s.doc_id
