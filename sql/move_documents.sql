-- Unchanged documents that now stand elsewhere in the source get their new file and line.
update documents d
set source = p.source, line = p.line
from places p
where d.doc_id = p.doc_id
