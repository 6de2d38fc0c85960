-- Short answers of the entities $ids whose evidence chunk the caller may read ($scopes: null = any;
-- otherwise documents without scope or with one of these scopes).
select a.entity_id, e.label, a.answer, a.evidence_ref
from entity_answers a
join entities e using (entity_id)
join chunks c on c.chunk_id = a.evidence_ref
join documents d on d.doc_id = c.doc_id
where a.entity_id in (select unnest($ids::varchar[]))
  and ($scopes::varchar[] is null or d.scope is null or list_contains($scopes::varchar[], d.scope))
order by a.entity_id
