-- acervo export (pipelines/export): what `acervo export` reads of a published index. $scopes (null = any) keeps
-- an export to what a caller with those scopes may read, as the query side does (sql/query.sql); the graph of a
-- scoped export (entities, their labels and edges) is the query side's own view (query.scope_names,
-- query.scope_edges).

-- name: entities
-- Every entity, its label and how many chunks mention it (an unscoped export: the index as built).
select entity_id, label, n_chunks
from entities
order by entity_id

-- name: edges
-- Every edge row (one per direction of a pair) with its weight and the rank of dst among src's neighbours.
select src, dst, weight, rank
from edges
order by src, rank

-- name: memberships
-- The communities, every level, of the entities $ids (a JSON array), with each such member and its
-- centrality (1 = most central), and the community's parent and stored title: a scoped export keeps only the
-- members its caller may see.
select c.community_id, c.level, c.parent_id, c.title, m.entity_id, m.centrality
from communities c
join community_members m using (community_id)
where m.entity_id in (select unnest(from_json($ids, '["VARCHAR"]')))
order by c.level, c.community_id, m.centrality, m.entity_id

-- name: documents
-- The documents $scopes may read, every column.
select *
from documents
where $scopes::varchar[] is null or scope is null or list_contains($scopes::varchar[], scope)
order by doc_id

-- name: chunks
-- The chunks of the documents $scopes may read, every column.
select c.*
from chunks c
join documents d using (doc_id)
where $scopes::varchar[] is null or d.scope is null or list_contains($scopes::varchar[], d.scope)
order by c.chunk_id

-- name: mentions
-- The mentions of the entities $ids (those the caller may see) in the chunks $scopes may read.
select m.*
from mentions m
join chunks c using (chunk_id)
join documents d using (doc_id)
where m.entity_id in (select unnest(from_json($ids, '["VARCHAR"]')))
  and ($scopes::varchar[] is null or d.scope is null or list_contains($scopes::varchar[], d.scope))
order by m.entity_id, m.chunk_id

-- name: report_lines
-- The report lines of the members $ids (those the caller may see) whose evidence chunk $scopes may read, with the
-- member's short answer (a scoped export writes each line under the label its caller sees, as a query does).
select l.community_id, l.ord, l.entity_id, l.text, l.evidence_ref, a.answer
from report_lines l
join entity_answers a using (entity_id)
join chunks c on c.chunk_id = l.evidence_ref
join documents d using (doc_id)
where l.entity_id in (select unnest(from_json($ids, '["VARCHAR"]')))
  and ($scopes::varchar[] is null or d.scope is null or list_contains($scopes::varchar[], d.scope))
order by l.community_id, l.ord

-- name: tables
-- The tables of the index file, by name (an unscoped Parquet export writes each).
select table_name
from duckdb_tables()
where database_name = current_database() and schema_name = 'main'
order by table_name

-- name: graph_tables
-- A scoped export's graph tables, made in memory from what its caller may see, then written as Parquet.
create table entities (entity_id varchar, label varchar, n_chunks integer, degree integer);
create table edges (src varchar, dst varchar, weight integer, rank integer);
create table communities (community_id varchar, level integer, parent_id varchar, title varchar, n_members integer);
create table community_members (community_id varchar, entity_id varchar, centrality integer);
create table entity_answers (entity_id varchar, answer varchar, evidence_ref varchar);
create table report_lines (community_id varchar, ord integer, entity_id varchar, text varchar, evidence_ref varchar);

-- name: insert_entities
-- One row of a scoped export's graph tables each (named parameters: the columns).
insert into entities values ($entity_id, $label, $n_chunks, $degree)

-- name: insert_edges
-- One row of edges (a scoped export).
insert into edges values ($src, $dst, $weight, $rank)

-- name: insert_communities
-- One row of communities (a scoped export).
insert into communities values ($community_id, $level, $parent_id, $title, $n_members)

-- name: insert_community_members
-- One row of community_members (a scoped export).
insert into community_members values ($community_id, $entity_id, $centrality)

-- name: insert_entity_answers
-- One row of entity_answers (a scoped export).
insert into entity_answers values ($entity_id, $answer, $evidence_ref)

-- name: insert_report_lines
-- One row of report_lines (a scoped export).
insert into report_lines values ($community_id, $ord, $entity_id, $text, $evidence_ref)
