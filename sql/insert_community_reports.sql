-- Bulk rows for community_reports, read back from the file pipelines.db.insert wrote: one JSON object
-- of column lists per line.
insert into community_reports by name
select unnest(community_id) as community_id, unnest(report) as report, unnest(evidence_refs) as evidence_refs,
       unnest(input_hash) as input_hash
from read_json($path, format = 'newline_delimited', maximum_object_size = $longest,
    columns = {community_id: 'varchar[]', report: 'varchar[]', evidence_refs: 'varchar[][]',
               input_hash: 'varchar[]'})
