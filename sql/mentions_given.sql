-- Statements of mentions mode given (pipelines.mentions.given): the entities the documents list.

-- name: names
-- Every (entity_id, label) the documents list, with how many documents list it.
select entity_id, label, count(*) from document_entities group by all;

-- name: mentions
-- Every chunk (of those in mentions_matched) mentions each entity its document lists.
select distinct de.entity_id, c.chunk_id
from document_entities de
join chunks c using (doc_id)
where c.chunk_id in (select chunk_id from mentions_matched)
order by de.entity_id, c.chunk_id;
