-- Resource limits that hold for a whole statement.
\set VERBOSITY default
-- A model whose value exceeds what a bytea holds (1 GB) is refused before
-- training starts.
SELECT length(mtdpp_fit(g / 2, g, NULL::int, '{"rank": 1024}')) FROM generate_series(1, 131200) g;
-- The participants of a parallel read share maintenance_work_mem: 300,000
-- lines (2.4 MB) do not fit in 1 MB, whether one process reads them or three.
CREATE TABLE limit_lines AS SELECT g / 4 AS order_id, g % 500 AS item_id FROM generate_series(1, 300000) g;
ANALYZE limit_lines;
SET maintenance_work_mem = '1MB';
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = on;
EXPLAIN (COSTS OFF) SELECT length(mtdpp_fit(order_id, item_id, NULL::int, '{"kind": "popularity"}')) FROM limit_lines;
-- (how many lines each process read varies from run to run)
DO $$
BEGIN
    PERFORM length(mtdpp_fit(order_id, item_id, NULL::int, '{"kind": "popularity"}')) FROM limit_lines;
EXCEPTION WHEN program_limit_exceeded THEN
    RAISE NOTICE '%', regexp_replace(SQLERRM, '[0-9]+ order lines in one of 3 parallel participants needs [0-9]+ kB', 'N order lines in one of 3 parallel participants needs M kB');
END
$$;
SET max_parallel_workers_per_gather = 0;
SELECT length(mtdpp_fit(order_id, item_id, NULL::int, '{"kind": "popularity"}')) FROM limit_lines;
RESET maintenance_work_mem;
SELECT length(mtdpp_fit(order_id, item_id, NULL::int, '{"kind": "popularity"}')) > 0 AS trained FROM limit_lines;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET parallel_leader_participation;
DROP TABLE limit_lines;
-- A training's budget counts what the statement holds besides the factors:
-- the baskets, each shard's scratch, the scorer's blocks during validation.
SET maintenance_work_mem = '2MB';
\set VERBOSITY terse
SELECT items FROM mtdpp_train('limit_scratch', 'train_lines', rank => 256, epochs => 1);
\set VERBOSITY default
RESET maintenance_work_mem;
SELECT count(*) AS limit_scratch_models FROM mtdpp.models WHERE name = 'limit_scratch';
