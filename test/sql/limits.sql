-- Resource limits that hold for a whole statement.
\set VERBOSITY default
-- A model whose value exceeds what a bytea holds (1 GB) is refused before
-- training starts.
SELECT length(mtdpp_fit(g / 2, g, NULL::int, '{"kind": "multitask", "rank": 1024}')) FROM generate_series(1, 131200) g;
-- So is a kind with neighbour lists whose factors alone do not fit: the
-- hint names the rank, as no cut of the lists would make the value fit.
SELECT length(mtdpp_fit(g / 2, g, NULL::int, '{"kind": "hybrid", "rank": 1024}')) FROM generate_series(1, 131200) g;
-- mtdpp_train stores its model without such a value: maintenance_work_mem
-- bounds it, not a bytea.  The same model is refused before training by
-- what its fit needs (16 GB), the hint naming the setting, not for a
-- bytea's limit (which no setting raises).
CREATE TABLE limit_wide AS SELECT g / 2 AS order_id, g AS item_id FROM generate_series(1, 131200) g;
SELECT items FROM mtdpp_train('limit_wide', 'limit_wide', rank => 1024, kind => 'multitask');
DROP TABLE limit_wide;
-- A model that does not fit a small maintenance_work_mem is refused before
-- its fit, naming the figure to set, and trains once it is set.
SET maintenance_work_mem = '1MB';
SELECT items FROM mtdpp_train('limit_half', 'train_lines', rank => 1024, epochs => 1, kind => 'poisson', params => '{"c": 1}');
SET maintenance_work_mem = '4MB';
SELECT items, kind FROM mtdpp_train('limit_half', 'train_lines', rank => 1024, epochs => 1, kind => 'poisson', params => '{"c": 1}');
RESET maintenance_work_mem;
SELECT rank, n_items FROM mtdpp.models WHERE name = 'limit_half';
SELECT mtdpp_drop('limit_half');
-- A parallel read holds what a serial one does: 300,000 lines (2.4 MB) do
-- not fit in 1 MB, whether one process reads them or three, and 100,000
-- lines (800 kB) fit, however the scan divides them between the three.
CREATE TABLE limit_lines AS SELECT g / 4 AS order_id, g % 500 AS item_id FROM generate_series(1, 300000) g;
ANALYZE limit_lines;
SET maintenance_work_mem = '1MB';
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET parallel_leader_participation = on;
EXPLAIN (COSTS OFF) SELECT length(mtdpp_fit(order_id, item_id, NULL::int, '{"kind": "popularity"}')) FROM limit_lines;
-- (a process that read more than 1 MB of them stops at once, else the
-- merge of the three: the lines counted vary from run to run)
DO $$
BEGIN
    PERFORM length(mtdpp_fit(order_id, item_id, NULL::int, '{"kind": "popularity"}')) FROM limit_lines;
EXCEPTION WHEN program_limit_exceeded THEN
    RAISE NOTICE '%', regexp_replace(SQLERRM, '[0-9]+ order lines needs [0-9]+ kB', 'N order lines needs M kB');
END
$$;
SELECT length(mtdpp_fit(order_id, item_id, NULL::int, '{"kind": "popularity"}')) > 0 AS trained
FROM limit_lines WHERE order_id < 25000;
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
SELECT items FROM mtdpp_train('limit_scratch', 'train_lines', rank => 256, epochs => 1, kind => 'multitask');
\set VERBOSITY default
RESET maintenance_work_mem;
SELECT count(*) AS limit_scratch_models FROM mtdpp.models WHERE name = 'limit_scratch';
-- Where the smaller rank the choice starts from does not fit, the largest
-- of its halves down to rank 8 that does is trained alone, with a NOTICE
-- naming the figure that lets the choice run; where none does, the training
-- is refused with the starting rank's figure, with no NOTICE that it trains
-- it (400 items: rank 128's value would pass half of 1 MB too).
SET maintenance_work_mem = '3MB';
SELECT length(mtdpp_fit(g / 2, g % 400, NULL::int, '{}')) > 0 AS trained FROM generate_series(1, 4000) g;
SET maintenance_work_mem = '1MB';
SELECT length(mtdpp_fit(g / 2, g % 400, NULL::int, '{}')) FROM generate_series(1, 4000) g;
RESET maintenance_work_mem;
-- item-kNN counts its co-occurrence lists a round of items at a time on two
-- threads, into a buffer of a sixteenth of maintenance_work_mem: many rounds
-- (in 1 MB) give the lists of one round.
CREATE TABLE cooc_lines AS SELECT g / 8 AS order_id, (g * 7919) % 150 AS item_id FROM generate_series(0, 39999) g;
SET maintenance_work_mem = '1MB';
SELECT items FROM mtdpp_train('cooc_rounds', 'cooc_lines', kind => 'itemknn');
RESET maintenance_work_mem;
SELECT items FROM mtdpp_train('cooc_one_round', 'cooc_lines', kind => 'itemknn');
-- and without parallel maintenance workers, rounds on one thread
SET max_parallel_maintenance_workers = 0;
SET maintenance_work_mem = '1MB';
SELECT items FROM mtdpp_train('cooc_one_thread', 'cooc_lines', kind => 'itemknn');
RESET maintenance_work_mem;
RESET max_parallel_maintenance_workers;
SELECT count(*) AS items,
       count(*) FILTER (WHERE a.neighbors = b.neighbors AND a.neighbor_weights = b.neighbor_weights) AS same_lists,
       count(*) FILTER (WHERE c.neighbors = b.neighbors AND c.neighbor_weights = b.neighbor_weights) AS same_on_one_thread,
       sum(cardinality(a.neighbors)) AS pairs
FROM mtdpp.items a JOIN mtdpp.items b USING (item_id) JOIN mtdpp.items c USING (item_id)
WHERE a.model_id = (SELECT model_id FROM mtdpp.models WHERE name = 'cooc_rounds')
  AND b.model_id = (SELECT model_id FROM mtdpp.models WHERE name = 'cooc_one_round')
  AND c.model_id = (SELECT model_id FROM mtdpp.models WHERE name = 'cooc_one_thread');
-- max_neighbors keeps each item's heaviest pairs (equal weights: the first
-- items), in item order, and the model records it; without it every pair
-- is kept (null: all, unless the lists outgrow a model value).
SELECT items FROM mtdpp_train('cooc_cut', 'cooc_lines', kind => 'itemknn', params => '{"max_neighbors": 5}');
WITH ranked AS (
  SELECT item_id, nbr, row_number() OVER (PARTITION BY item_id ORDER BY w DESC, nbr) AS r
  FROM mtdpp.items, unnest(neighbors, neighbor_weights) u(nbr, w)
  WHERE model_id = (SELECT model_id FROM mtdpp.models WHERE name = 'cooc_one_round')),
heaviest AS (SELECT item_id, array_agg(nbr ORDER BY nbr) AS top FROM ranked WHERE r <= 5 GROUP BY item_id)
SELECT count(*) AS items, count(*) FILTER (WHERE c.neighbors = h.top) AS heaviest_kept,
       max(cardinality(c.neighbors)) AS longest,
       (SELECT max(cardinality(neighbors)) FROM mtdpp.items
        WHERE model_id = (SELECT model_id FROM mtdpp.models WHERE name = 'cooc_one_round')) AS longest_uncut
FROM mtdpp.items c JOIN heaviest h USING (item_id)
WHERE c.model_id = (SELECT model_id FROM mtdpp.models WHERE name = 'cooc_cut');
SELECT name, hyperparams->'max_neighbors' AS max_neighbors FROM mtdpp.models
WHERE name IN ('cooc_cut', 'cooc_one_round') ORDER BY name;
-- What must fit is the distinct pairs, 8 bytes each, in half of
-- maintenance_work_mem (storing a model holds as much beside it): 12,000
-- baskets of 8 of 1,000 items have too many for 1 MB, so each item keeps
-- its strongest, with a NOTICE; a max_neighbors given that does not fit is
-- refused.
SET maintenance_work_mem = '1MB';
SELECT length(mtdpp_fit(g / 8, (hashint4(g) & 1023) % 1000, NULL::int, '{"kind": "itemknn"}')) FROM generate_series(0, 95999) g;
SELECT length(mtdpp_fit(g / 8, (hashint4(g) & 1023) % 1000, NULL::int, '{"kind": "itemknn", "max_neighbors": 500}')) FROM generate_series(0, 95999) g;
RESET maintenance_work_mem;
SELECT mtdpp_drop('cooc_rounds'), mtdpp_drop('cooc_one_round'), mtdpp_drop('cooc_one_thread'), mtdpp_drop('cooc_cut');
DROP TABLE cooc_lines;
