-- Delete the chunks of documents being split again (keys 'doc') or no longer present; return their ids.
delete from chunks
where doc_id in (select id from keys where kind = 'doc')
   or doc_id not in (select doc_id from documents)
returning chunk_id
