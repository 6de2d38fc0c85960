-- One run's ledger row.
insert or replace into index_runs (run_id, started_at, finished_at, status, source, settings, n_rejected)
values ($run_id, $started_at, $finished_at, $status, $source, $settings, $n_rejected)
