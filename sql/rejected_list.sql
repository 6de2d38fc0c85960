-- Rejected records by file, line and reason, for reporting.
select source, line, doc_id, reason, detail
from rejected
order by source, line, reason, detail
