-- Every chunk the caller may read ($scopes: null = any), for an in-memory BM25 index: the index's
-- statistics then come from readable text alone.
select c.chunk_id, c.doc_id, c.text, c.n_tokens
from chunks c
join documents d using (doc_id)
where $scopes::varchar[] is null or d.scope is null or list_contains($scopes::varchar[], d.scope)
order by c.chunk_id
