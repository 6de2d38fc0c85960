-- The text of the readable chunks $ids ($scopes: null = any).
select c.chunk_id, c.text
from chunks c
join documents d using (doc_id)
where c.chunk_id in (select unnest($ids::varchar[]))
  and ($scopes::varchar[] is null or d.scope is null or list_contains($scopes::varchar[], d.scope))
