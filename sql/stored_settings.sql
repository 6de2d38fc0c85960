-- The settings of the index's last run (a failed run publishes nothing, so every row is a successful one).
select settings
from index_runs
where status = 'ok'
order by started_at desc, run_id desc
limit 1
