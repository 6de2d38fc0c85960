-- Which of the ids $ids (a list) name documents of the index.
select doc_id
from documents
where doc_id in (select unnest($ids::varchar[]))
order by doc_id
