-- Statements of mentions mode titles (pipelines.mentions.titles): the documents' names and their tokens.

-- name: title_names_reset
-- Forget every title's tokens (a new version of how they are derived).
delete from title_names;

-- name: document_names
-- Into the scratch relation document_names, the name each document's entity gets: its title,
-- or, when several documents share that title, the title with the document's id ("Title (doc_id)"): a
-- title shared by documents names none of them (as a short form two titles share names neither,
-- names_titles), so it never makes their chunks one entity. query.scope_names (sql/query.sql) names them alike.
create or replace temp table document_names as
select doc_id, title,
       case when count(*) over (partition by title) > 1 then title || ' (' || doc_id || ')' else title end as name
from documents;

-- name: title_names_delete
-- Forget the tokens of names that no document has any more (document_names).
delete from title_names where title not in (select name from document_names);

-- name: untokenised
-- The document names (document_names) not tokenised yet (new or retitled documents,
-- or a title that became shared or unshared), for pipelines.mentions.titles to add to title_names.
select distinct name from document_names where name not in (select title from title_names) order by name;

-- name: names
-- The dictionary into names_next. Each title names its entity (weight 1); a title's
-- short form (without a trailing "(...)") is one more name (weight 0) when no other title has the
-- same short form and no title is spelled like it. No (entity_id, name) pair can come twice: titles
-- are unique, a short form differs from its own title and is spelled like no title, and one shared
-- by two titles is left out; so the rows need no grouping (which cost half the statement).
insert into names_next
with claims as (
    select short_words, count(*) as n
    from title_names
    group by short_words
)
select entity_id, title as name, 1 as weight, words
from title_names
union all
select t.entity_id, t.short, 0, t.short_words
from title_names t
join claims c using (short_words)
where t.short <> '' and t.short <> t.title and c.n = 1
  and t.short_words not in (select words from title_names);

-- name: chunk_names_todo
-- The name of the document (document_names) of every chunk to be matched again
-- (mentions_matched): the entity its chunks are about.
select c.chunk_id, n.name
from chunks c
join document_names n using (doc_id)
where c.chunk_id in (select chunk_id from mentions_matched)
order by c.chunk_id;

-- name: rejected
-- The documents whose names (document_names) are $names, those rejected for a control character
-- (pipelines.mentions.titles), with their file and line.
select d.source, d.line, d.doc_id, n.name
from document_names n
join documents d using (doc_id)
where list_contains($names::varchar[], n.name)
order by d.source, d.line;
