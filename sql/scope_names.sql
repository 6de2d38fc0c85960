-- What a caller with $scopes may see of the entities, as an index of only the documents it may read
-- would hold them: each name (alias) of an entity that a readable chunk mentions and that has a name
-- from a readable source, with the entity's label (its heaviest such name, then the smallest) and the
-- readable chunks that mention it. A name's source depends on the mentions mode $mode: the gazetteer
-- (the index's own settings, readable by all); the documents that list it (given); the documents named
-- with it (titles: a document's title, or with its id when documents share the title, counted over all of
-- them: sql/document_names.sql); the chunks whose candidates spell it (nlp, spacy). In titles mode an
-- entity only an unreadable document is named after stays hidden, even where readable text uses its name.
with readable as (
    select c.chunk_id, d.doc_id, d.title
    from chunks c
    join documents d using (doc_id)
    where d.scope is null or list_contains($scopes::varchar[], d.scope)
),
named as (  -- mode titles: each document's name, as sql/document_names.sql gives it
    select doc_id,
           case when count(*) over (partition by title) > 1 then title || ' (' || doc_id || ')' else title end
               as name
    from documents
    where $mode = 'titles'
),
seen as (
    select m.entity_id, count(*)::integer as n_chunks
    from mentions m
    join readable r using (chunk_id)
    group by m.entity_id
),
sourced as (
    select entity_id, name, weight
    from names
    where $mode = 'gazetteer'
    union all
    select entity_id, label, count(*)::integer
    from document_entities
    where $mode = 'given' and doc_id in (select doc_id from readable)
    group by all
    union all
    select distinct entity_id, title, 1
    from title_names
    where $mode = 'titles' and title in (select name from named where doc_id in (select doc_id from readable))
    union all
    select n.entity_id, n.name, count(distinct x.chunk_id) filter (where u.c.entity_id = n.entity_id)::integer
    from chunk_candidates x, unnest(x.names) as u(c)
    join names n on n.name = u.c.name
    where $mode in ('nlp', 'spacy') and x.chunk_id in (select chunk_id from readable)
    group by all
),
labels as (
    select entity_id, min_by(name, {'weight': -weight, 'name': name}) as label
    from sourced
    group by entity_id
)
select a.alias, a.entity_id, l.label, s.n_chunks
from entity_aliases a
join labels l using (entity_id)
join seen s using (entity_id)
order by a.entity_id, a.alias
