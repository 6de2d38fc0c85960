-- Given mode: every chunk of a document mentions each entity label the document lists.
select de.doc_id, de.label, c.chunk_id
from document_entities de
join chunks c using (doc_id)
order by de.doc_id, de.label, c.chunk_id
