-- servesim results schema version 1 (for the migration test).
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs(
  id INTEGER PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL, policy TEXT NOT NULL,
  seed INTEGER NOT NULL, config_json TEXT NOT NULL, config_hash TEXT NOT NULL,
  version TEXT NOT NULL, started_at TEXT NOT NULL, wall_s REAL NOT NULL,
  status TEXT NOT NULL, duration_s REAL NOT NULL, warmup_s REAL NOT NULL,
  load_scale REAL NOT NULL, offered_rps REAL NOT NULL, ontime_rps REAL NOT NULL,
  bad_rate REAL NOT NULL, slo_met INTEGER NOT NULL, percentile REAL NOT NULL,
  goodput_rps REAL, events INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS model_stats(
  run_id INTEGER NOT NULL REFERENCES runs(id), model TEXT NOT NULL, slo_ms REAL NOT NULL,
  rate_rps REAL NOT NULL, max_batch INTEGER NOT NULL, offered INTEGER NOT NULL,
  on_time INTEGER NOT NULL, late INTEGER NOT NULL, dropped INTEGER NOT NULL,
  p50_ms REAL, p90_ms REAL, p99_ms REAL, p999_ms REAL, mean_ms REAL,
  mean_queue_ms REAL, p99_queue_ms REAL, mean_batch REAL, batches INTEGER NOT NULL,
  ideal_batch_staggered REAL, ideal_batch_uncoord REAL,
  PRIMARY KEY(run_id, model));
CREATE TABLE IF NOT EXISTS executor_stats(
  run_id INTEGER NOT NULL REFERENCES runs(id), executor INTEGER NOT NULL,
  kind TEXT NOT NULL, busy_frac REAL NOT NULL, batches INTEGER NOT NULL,
  requests INTEGER NOT NULL, models_loaded INTEGER NOT NULL, load_events INTEGER NOT NULL,
  PRIMARY KEY(run_id, executor));
CREATE TABLE IF NOT EXISTS timeseries(
  run_id INTEGER NOT NULL REFERENCES runs(id), t_s REAL NOT NULL, series TEXT NOT NULL,
  key TEXT NOT NULL, value REAL NOT NULL);
CREATE INDEX IF NOT EXISTS timeseries_run ON timeseries(run_id, series);
CREATE TABLE IF NOT EXISTS batch_hist(
  run_id INTEGER NOT NULL REFERENCES runs(id), model TEXT NOT NULL,
  batch_size INTEGER NOT NULL, count INTEGER NOT NULL,
  PRIMARY KEY(run_id, model, batch_size));
CREATE TABLE IF NOT EXISTS latency_hist(
  run_id INTEGER NOT NULL REFERENCES runs(id), model TEXT NOT NULL,
  lo_ms REAL NOT NULL, hi_ms REAL NOT NULL, count INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS goodput_search(
  run_id INTEGER NOT NULL REFERENCES runs(id), probe INTEGER NOT NULL,
  scale REAL NOT NULL, offered_rps REAL NOT NULL, pass INTEGER NOT NULL,
  worst_model TEXT NOT NULL, worst_bad_frac REAL NOT NULL, worst_p99_ms REAL,
  PRIMARY KEY(run_id, probe));
CREATE TABLE IF NOT EXISTS profiles(
  id INTEGER PRIMARY KEY, executor_kind TEXT NOT NULL, model TEXT NOT NULL,
  form TEXT NOT NULL, alpha_ms REAL, beta_ms REAL, a_ms REAL, b_ms REAL, c_ms REAL,
  table_json TEXT, source TEXT NOT NULL, measured_at TEXT NOT NULL);

PRAGMA user_version = 1;
