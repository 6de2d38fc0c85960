-- Row counts of the index tables an assembler reads.
select 'documents' as table_name, count(*) as n_rows from documents
union all select 'chunks', count(*) from chunks
union all select 'entities', count(*) from entities
union all select 'mentions', count(*) from mentions
union all select 'edges', count(*) from edges
union all select 'communities', count(*) from communities
union all select 'community_members', count(*) from community_members
union all select 'community_reports', count(*) from community_reports
union all select 'entity_answers', count(*) from entity_answers
union all select 'rejected', count(*) from rejected
union all select 'index_runs', count(*) from index_runs
