-- Every chunk of an in-memory BM25 index (pipelines.lexical.searcher) with its document, for the
-- question router's word statistics: how many of the readable documents use each word.
select doc_id, text
from search_chunks
order by chunk_id
