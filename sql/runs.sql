-- The run ledger (pipelines.runs): one index_runs row per run and one run_stages row per stage.

-- name: rejected
-- How many records the index holds as rejected.
select count(*) from rejected;

-- name: insert
-- One run's ledger row (its stages go to run_stages in bulk).
insert or replace into index_runs (run_id, started_at, finished_at, status, source, settings, n_rejected)
values ($run_id, $started_at, $finished_at, $status, $source, $settings, $n_rejected);

-- name: history
-- The latest $limit runs, newest first, each with its settings and its stages in order (fields named as in
-- StageResult.row).
select r.run_id, r.started_at, r.finished_at, r.status, r.source, r.settings, r.n_rejected,
       list({'stage': s.stage, 'rows_read': s.rows_read, 'rows_reused': s.rows_reused,
             'rows_recomputed': s.rows_recomputed, 'rows_removed': s.rows_removed, 'detail': s.detail,
             'seconds': round(s.seconds, 3)}
            order by s.ord) as stages
from index_runs r
left join run_stages s using (run_id)
group by all
order by r.started_at desc, r.run_id desc
limit $limit;

-- name: file
-- The file of the connection's index (null for one in memory).
select path from duckdb_databases() where database_name = current_database();
