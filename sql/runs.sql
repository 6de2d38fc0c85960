-- The latest $limit runs, newest first, each with its settings and its stages in order.
select r.run_id, r.started_at, r.finished_at, r.status, r.source, r.settings, r.n_rejected,
       list({'stage': s.stage, 'read': s.rows_read, 'reused': s.rows_reused, 'recomputed': s.rows_recomputed,
             'removed': s.rows_removed, 'detail': s.detail, 'seconds': round(s.seconds, 4)}
            order by s.ord) as stages
from index_runs r
left join run_stages s using (run_id)
group by all
order by r.started_at desc, r.run_id desc
limit $limit
