-- Stage written_reports (pipelines.written_reports): a language model's summary of each community report,
-- every sentence citing chunks of the report's own inputs.

-- name: read
-- How many community reports the index holds.
select count(*) from community_reports;

-- name: todo
-- Into the scratch relation written_report_todo: the reports whose written summary must be made again, with
-- what its prompt shows (the stored report and its lines, by place) and its hash under $setting (version,
-- model and prompt version): the extractive report's input_hash, which covers everything the prompt shows.
-- Every report is compared (one hash each): the report stage logs no change.
create or replace temp table written_report_todo as
with lines as (
    select community_id, list_transform(list_sort(list({'ord': ord, 'ref': evidence_ref})), x -> x.ref) as refs
    from report_lines
    group by community_id
),
hashed as (
    select r.community_id, r.report, r.evidence_refs, l.refs as line_refs,
           sha256(to_json({'setting': $setting::varchar, 'extractive': r.input_hash})) as input_hash
    from community_reports r
    join lines l using (community_id)
)
select h.community_id, h.report, h.evidence_refs, h.line_refs, h.input_hash
from hashed h
left join written_reports w using (community_id)
where w.input_hash is distinct from h.input_hash;

-- name: todo_rows
-- The reports of written_report_todo with what their prompt shows, in id order.
select community_id, report, evidence_refs, line_refs, input_hash from written_report_todo order by community_id;

-- name: delete_all
-- Without a model: delete every written report, returning their ids.
delete from written_reports returning community_id;
