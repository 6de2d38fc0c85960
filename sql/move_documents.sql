-- Unchanged documents that now stand elsewhere in the source (or in other bytes) get their new
-- file, line and record hash.
update documents d
set source = p.source, line = p.line, record_hash = p.record_hash
from places p
where d.doc_id = p.doc_id
