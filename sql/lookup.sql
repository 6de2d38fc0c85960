-- One entity or one community by id, as a caller with $scopes may read it (null = any): what the query
-- service's /entities and /communities return (pipelines/query/lookup.py). What a scoped caller may see of the
-- graph is the query side's view (query.scope_names, query.scope_edges); these read the rest.

-- name: entity
-- The entity $id: its stored label and how many chunks mention it, and its best evidence chunks (best first).
select e.entity_id, e.label, e.n_chunks, a.evidence
from entities e
left join entity_answers a using (entity_id)
where e.entity_id = $id

-- name: chunks
-- The chunks $ids (a JSON array) that $scopes may read, with their document's id and title and their locator.
select c.chunk_id, c.text, d.doc_id, d.title, c.locator
from chunks c
join documents d using (doc_id)
where c.chunk_id in (select unnest(from_json($ids, '["VARCHAR"]')))
  and ($scopes::varchar[] is null or d.scope is null or list_contains($scopes::varchar[], d.scope))

-- name: community
-- The community $id: its level, parent and stored title, and its members, most central first.
select c.level, c.parent_id, c.title, m.entity_id, m.centrality
from communities c
join community_members m using (community_id)
where c.community_id = $id
order by m.centrality, m.entity_id

-- name: children
-- The communities split from the community $id, by id.
select community_id
from communities
where parent_id = $id
order by community_id

-- name: lines
-- The report lines of the community $id, in order, with the member's short answer (a scoped caller's lines are
-- written again under the labels it sees).
select l.ord, l.entity_id, l.text, l.evidence_ref, a.answer
from report_lines l
join entity_answers a using (entity_id)
where l.community_id = $id
order by l.ord

-- name: labels
-- The labels of the entities $ids (a JSON array).
select entity_id, label
from entities
where entity_id in (select unnest(from_json($ids, '["VARCHAR"]')))
