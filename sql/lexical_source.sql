-- Every chunk with its document's scope, for the in-memory BM25 index.
select c.chunk_id, c.doc_id, d.scope, c.text, c.n_tokens
from chunks c
join documents d using (doc_id)
order by c.chunk_id
