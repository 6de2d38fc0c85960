-- Each document's token and chunk totals, from its chunks.
update documents d
set n_tokens = s.n_tokens, n_chunks = s.n_chunks
from (
    select doc_id, sum(n_tokens)::integer as n_tokens, count(*)::integer as n_chunks
    from chunks
    group by doc_id
) s
where d.doc_id = s.doc_id
