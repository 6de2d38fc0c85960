-- Stage community_reports (pipelines.reports): per community, a summary of what its members share, with
-- its evidence, and its lines as rows.

-- name: read
-- How many communities the index holds.
select count(*) from communities;

-- name: scope
-- The scratch relation report_scope: the communities whose report may have to be written again. Every
-- community with $full; otherwise those whose rows were rewritten, those with a member whose mentions,
-- names or answer changed, and those with a member in a chunk whose boilerplate changed (the run's change
-- log). report_todo keeps those whose hash changed.
create or replace temp table report_scope as
select community_id
from communities
where $full
   or community_id in (select id from changed where kind = 'community')
   or community_id in (select community_id from community_members
                       where entity_id in (select id from changed where kind in ('entity', 'answer')))
   or community_id in (select cm.community_id from community_members cm
                       join mentions m using (entity_id)
                       join changed c on c.kind = 'boilerplate' and c.id = m.chunk_id);

-- name: inputs
-- The table macro report_inputs: the communities of report_scope with ids after `after` (null: from the first) up
-- to `last` whose report must be written again: the hash of exactly what the report shows (its members' labels,
-- answers and evidence, most central first, at most `max_lines`; its first `k` supporting chunks with their
-- content hashes and boilerplate sentence keys; `version`) differs from the stored report's, or there is none.
-- Lists are aggregated unordered and then sorted (list_sort on structs whose first field is the
-- order), and the top k evidence comes from min_by: DuckDB's ordered aggregates and windows cost
-- several times more on these small groups.
create or replace temp macro report_inputs(after, last, k, version, max_lines) as table
with counts as (
    select cm.community_id, m.chunk_id, count(*) as n_members
    from community_members cm
    join mentions m using (entity_id)
    where cm.community_id in (select community_id from report_scope
                              where (after is null or community_id > after) and community_id <= last)
    group by all
),
evidence as (
    select community_id, [b.ref for b in best] as refs, [b.hash for b in best] as hashes,
           [b.boilerplate for b in best] as boilerplate
    from (
        select x.community_id,
               min_by({'ref': x.chunk_id, 'hash': c.content_hash, 'boilerplate': coalesce(bp.sentences, [])},
                      {'n': -x.n_members, 'ref': x.chunk_id}, k::integer) as best
        from counts x
        join chunks c using (chunk_id)
        left join chunk_boilerplate bp using (chunk_id)
        group by x.community_id
    )
),
lines as (
    select cm.community_id,
           list_transform(list_sort(list({'c': cm.centrality, 'entity_id': cm.entity_id, 'label': e.label,
                                          'answer': a.answer, 'ref': a.evidence_ref})),
                          x -> {'entity_id': x.entity_id, 'label': x.label, 'answer': x.answer, 'ref': x.ref})
               as lines
    from community_members cm
    join entities e using (entity_id)
    join entity_answers a using (entity_id)
    where cm.centrality <= max_lines
      and cm.community_id in (select community_id from report_scope
                              where (after is null or community_id > after) and community_id <= last)
    group by cm.community_id
),
hashed as (
    select l.community_id, ev.refs, ev.boilerplate, l.lines,
           sha256(to_json({'version': version::varchar, 'max_lines': max_lines::integer, 'k': k::integer,
                           'refs': ev.refs, 'hashes': ev.hashes, 'boilerplate': ev.boilerplate,
                           'lines': l.lines})) as input_hash
    from lines l
    join evidence ev using (community_id)
)
select h.community_id, h.refs, h.boilerplate, h.lines, h.input_hash
from hashed h
left join community_reports r using (community_id)
where r.input_hash is distinct from h.input_hash;

-- name: todo
-- The scratch relation report_todo, empty, with report_inputs' columns: todo_range fills it.
create or replace temp table report_todo as
from report_inputs(null, null, $k, $version, $max_lines)
limit 0;

-- name: ranges
-- The last community id of each range of $n communities of report_scope, in id order (the last may be shorter).
select community_id
from (select community_id, row_number() over (order by community_id) as n, count(*) over () as total
      from report_scope)
where n % $n = 0 or n = total
order by community_id;

-- name: todo_range
-- Add to report_todo the communities of report_scope after the id $after (null: from the first) up to $last
-- whose report must be written again (report_inputs): one range's inputs are aggregated at a time.
insert into report_todo
from report_inputs($after, $last, $k, $version, $max_lines);

-- name: lines_delete
-- Delete the lines of reports about to be written again (report_todo) or gone.
delete from report_lines
where community_id in (select community_id from report_todo)
   or community_id not in (select community_id from communities);

-- name: todo_batch
-- The next $n communities of report_todo after the id $after (null: from the first), in id order, with what
-- their report shows.
select community_id, refs, boilerplate, lines, input_hash
from report_todo
where $after::varchar is null or community_id > $after
order by community_id
limit $n;

-- name: batch_texts
-- The text of every supporting chunk (report_todo.refs) of the communities after the id $after (null: from
-- the first) up to $last, from which their key evidence sentences are taken.
select c.chunk_id, c.text
from chunks c
where c.chunk_id in (select unnest(refs) from report_todo
                     where ($after::varchar is null or community_id > $after) and community_id <= $last);
