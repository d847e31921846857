-- A model's life: training from a query, test baskets held out by the
-- training itself, and the rule that promotes a new version.
-- A source given as text is a query when its first word is SELECT, WITH,
-- VALUES or TABLE, else the name of a table or view, as before.
SELECT name, version, kind, items, baskets FROM mtdpp_train('life', 'SELECT order_id, item_id FROM lines WHERE order_id <= 250', kind => 'itemknn');
SELECT version, source, lines_read, baskets_read, test, promotion FROM mtdpp.models WHERE name = 'life';
SELECT items FROM mtdpp_train('life', '  (select order_id, item_id from lines where order_id <= 500) -- the training orders', kind => 'popularity');
SELECT items FROM mtdpp_train('life', 'WITH l AS (SELECT * FROM lines) SELECT order_id, item_id FROM l;', kind => 'popularity');
SELECT items FROM mtdpp_train('life', 'VALUES (1, 1), (1, 2), (2, 2), (2, 3)', order_col => 'column1', item_col => 'column2', kind => 'popularity');
SELECT items FROM mtdpp_train('life', 'TABLE train_lines', kind => 'popularity');
SELECT items FROM mtdpp_train('life', 'train_lines', kind => 'popularity');
SELECT items FROM mtdpp_train('life', 'public.train_lines'::text, kind => 'popularity');
SELECT items FROM mtdpp_train('life', 'train_lines'::regclass, kind => 'popularity');
SELECT version, source, lines_read FROM mtdpp.models WHERE name = 'life' ORDER BY version;
-- any key type, as from a table
SELECT items FROM mtdpp_train('life_text', 'SELECT order_id, ''sku-'' || item_id AS item_id FROM train_lines', kind => 'itemknn');
SELECT item_type FROM mtdpp_models WHERE name = 'life_text';
SELECT item_id FROM mtdpp_complete(ARRAY['sku-1', 'sku-2'], 3, 'life_text');
-- what a source query may not be
SELECT * FROM mtdpp_train('life', 'SELECT 1; SELECT 2');
SELECT * FROM mtdpp_train('life', 'SELECT * INTO lines_copy FROM lines');
SELECT * FROM mtdpp_train('life', 'SELECT * FROM lines FOR UPDATE');
SELECT * FROM mtdpp_train('life', 'WITH d AS (DELETE FROM lines RETURNING *) SELECT * FROM d');
SELECT * FROM mtdpp_train('life', 'SELECT order_id AS o, item_id FROM lines');
SELECT * FROM mtdpp_train('life', 'SELECT order_id, item_id, item_id AS item_id FROM lines');
SELECT * FROM mtdpp_train('life', 'SELECT order_id FROM nowhere');
SELECT * FROM mtdpp_train('life', 'no_such_table');
SELECT count(*) AS lines_left FROM lines;
-- the query runs as the caller: its privileges, its row-level security
CREATE ROLE regress_mtdpp_analyst;
GRANT SELECT, INSERT, UPDATE, DELETE ON mtdpp.models, mtdpp.items TO regress_mtdpp_analyst;
GRANT USAGE ON SCHEMA mtdpp TO regress_mtdpp_analyst;
GRANT USAGE ON SEQUENCE mtdpp.models_model_id_seq TO regress_mtdpp_analyst;
CREATE TABLE store_lines AS SELECT *, order_id % 2 AS store FROM lines;
ALTER TABLE store_lines ENABLE ROW LEVEL SECURITY;
CREATE POLICY one_store ON store_lines TO regress_mtdpp_analyst USING (store = 0);
SET ROLE regress_mtdpp_analyst;
SELECT * FROM mtdpp_train('life_rls', 'SELECT order_id, item_id FROM store_lines', kind => 'popularity');
RESET ROLE;
GRANT SELECT ON store_lines TO regress_mtdpp_analyst;
SET ROLE regress_mtdpp_analyst;
SELECT baskets FROM mtdpp_train('life_rls', 'SELECT order_id, item_id FROM store_lines', kind => 'popularity');
RESET ROLE;
SELECT lines_read, (SELECT count(*) FROM store_lines WHERE store = 0) AS visible FROM mtdpp.models WHERE name = 'life_rls';
-- a query runs once, into a temporary table every statement of the
-- training reads: a volatile query gives one set of lines (each call of
-- nextval here is one line read)
CREATE SEQUENCE source_reads;
CREATE TABLE once_lines AS SELECT * FROM train_lines;
SELECT baskets FROM mtdpp_train('once', 'SELECT order_id, item_id, pos FROM once_lines WHERE nextval(''source_reads'') > 0',
                                kind => 'itemknn', position_col => 'pos', test_share => 0.2, promote => 'if_better:mpr');
SELECT last_value = (SELECT count(*) FROM once_lines) AS read_once FROM source_reads;
SELECT baskets FROM mtdpp_train('once', 'SELECT order_id, item_id, pos FROM once_lines WHERE nextval(''source_reads'') > 0',
                                kind => 'itemknn', position_col => 'pos', test_by => 'pos', promote => 'if_better:mpr');
SELECT last_value = 2 * (SELECT count(*) FROM once_lines) AS read_once_again FROM source_reads;
SELECT count(*) AS temporary_tables_left FROM pg_class WHERE relname LIKE 'mtdpp_train_source%';
-- the query's columns the training does not read are not kept, and may repeat
SELECT items FROM mtdpp_train('once', 'SELECT l.*, l.item_id AS x, l.item_id AS x FROM train_lines l', kind => 'popularity');
DROP SEQUENCE source_reads;
DROP TABLE once_lines;
-- held-out test baskets: random by the order id's hash, or the latest
SELECT baskets FROM mtdpp_train('held', 'train_lines', kind => 'itemknn', test_share => 0.2);
SELECT test->>'baskets' AS baskets, test->>'chosen' AS chosen, test->>'held_out' AS held_out, round((test->>'mpr')::numeric, 2) AS mpr,
       round((test->>'precision_at_5')::numeric, 2) AS p5, round((test->>'ndcg_at_20')::numeric, 2) AS ndcg20, lines_read, baskets_read
FROM mtdpp.models WHERE name = 'held' ORDER BY version;
SELECT baskets FROM mtdpp_train('held', 'train_lines', kind => 'itemknn', test_by => 'order_id', test_k => ARRAY[10, 1],
                                position_col => 'pos', target => 'last');
SELECT test - 'mpr' - 'precision_at_1' - 'recall_at_1' - 'ndcg_at_1' - 'precision_at_10' - 'recall_at_10' - 'ndcg_at_10' AS test,
       (test->>'mpr')::float8 > 50 AS better_than_random FROM mtdpp.models WHERE name = 'held' AND version = 2;
-- the latest tenth of the orders, by order id: orders 451 to 500, each of three items or more
SELECT (test->>'baskets')::int AS baskets FROM mtdpp.models WHERE name = 'held' AND version = 2;
SELECT test_mpr > 50 AS measured FROM mtdpp_models WHERE name = 'held' AND version = 2;
-- the same held-out baskets in mtdpp_evaluate's protocol (last item held out), by hand
CREATE VIEW latest_tests AS
SELECT order_id, array_agg(item_id ORDER BY pos) AS basket, (array_agg(item_id ORDER BY pos DESC))[1] AS held_out
FROM train_lines WHERE order_id > 450 GROUP BY order_id;
SELECT abs(e.mpr - (SELECT (test->>'mpr')::float8 FROM mtdpp.models WHERE name = 'held' AND version = 2)) < 1e-3 AS same_mpr
FROM mtdpp_evaluate('held', 'latest_tests') e;
SELECT metrics->>'evaluated_on' AS evaluated_on, metrics->>'evaluated_relation' AS relation, metrics->>'basket_col' AS basket_col,
       metrics->>'held_out_col' AS held_out_col, metrics->'catalog_size' AS catalog_size, test IS NOT NULL AS test_kept
FROM mtdpp.models WHERE name = 'held' AND version = 2;
-- bad held-out arguments
SELECT * FROM mtdpp_train('held', 'train_lines', test_share => 0);
SELECT * FROM mtdpp_train('held', 'train_lines', test_share => 1);
SELECT * FROM mtdpp_train('held', 'train_lines', test_share => 'NaN');
SELECT * FROM mtdpp_train('held', 'train_lines', test_share => 0.0000001);
SELECT * FROM mtdpp_train('held', 'train_lines', test_by => 'ordered_at');
SELECT * FROM mtdpp_train('held', 'train_lines', test_by => '');
SELECT * FROM mtdpp_train('held', 'train_lines', test_k => ARRAY[5]);
SELECT * FROM mtdpp_train('held', 'train_lines', test_share => 0.1, test_k => ARRAY[0]);
SELECT * FROM mtdpp_train('held', 'train_lines', test_share => 0.1, test_k => ARRAY[NULL]::int[]);
SELECT * FROM mtdpp_train('held', 'SELECT order_id, item_id, point(1, 1) AS at FROM train_lines', test_by => 'at');
SELECT * FROM mtdpp_train('held', 'SELECT order_id, item_id FROM train_lines WHERE item_id = 1', kind => 'popularity', test_share => 0.5);
-- promotion: a version becomes active only when it beats the active one
-- on the baskets it held out
SET mtdpp.promote = 'if_better:mpr';
SELECT version FROM mtdpp_train('nightly', 'SELECT * FROM train_lines WHERE order_id <= 100', kind => 'itemknn', test_share => 0.3);
SELECT version FROM mtdpp_train('nightly', 'train_lines', kind => 'itemknn', test_share => 0.3);
SELECT version FROM mtdpp_train('nightly', 'SELECT * FROM train_lines WHERE order_id <= 40', kind => 'itemknn', test_share => 0.3);
SELECT version, active, promoted, promotion->>'rule' AS rule, round((promotion->>'value')::numeric, 2) AS value,
       promotion->>'active_version' AS against, round((promotion->>'active_value')::numeric, 2) AS its_value
FROM mtdpp_models WHERE name = 'nightly' ORDER BY version;
-- each tested version keeps its held-out baskets by their keys, the
-- held-out item first
SELECT version, (test->>'kept')::int AS kept, jsonb_array_length(test_baskets) AS baskets_kept,
       (test->>'kept')::int = (test->>'baskets')::int AS all_kept,
       (SELECT bool_and(jsonb_typeof(b) = 'array' AND jsonb_array_length(b) >= 2) FROM jsonb_array_elements(test_baskets) b) AS shaped
FROM mtdpp.models WHERE name = 'nightly' ORDER BY version;
-- an activation names its rule, or follows none: a rollback to version 1,
-- worse than the active version 2 on the baskets version 1 held out, is
-- refused under 'if_better', with a NOTICE, the active version kept
SELECT version FROM mtdpp.models WHERE model_id = (SELECT mtdpp_activate('nightly', 1, promote => 'if_better:mpr'));
SELECT version, active, promotion->>'promoted' AS promoted, promotion->>'decided_by' AS decided_by,
       promotion->>'active_version' AS against, (promotion->>'value')::float8 < (promotion->>'active_value')::float8 AS worse,
       (promotion->>'baskets')::int = jsonb_array_length(test_baskets) AS on_its_baskets
FROM mtdpp.models WHERE name = 'nightly' AND version = 1;
-- by default (the setting mtdpp.promote is for trainings) and with 'always'
-- the rollback works
SELECT current_setting('mtdpp.promote') AS setting;
SELECT version FROM mtdpp.models WHERE model_id = (SELECT mtdpp_activate('nightly', 1));
SELECT version FROM mtdpp_models WHERE name = 'nightly' AND active;
SELECT version FROM mtdpp.models WHERE model_id = (SELECT mtdpp_activate('nightly', 2, promote => 'always'));
SELECT version FROM mtdpp.models WHERE model_id = (SELECT mtdpp_activate('nightly', 1, promote => 'always'));
-- forward again under the rule, at a cut-off no training measured
SELECT version FROM mtdpp.models WHERE model_id = (SELECT mtdpp_activate('nightly', 2, promote => 'if_better:recall_at_3'));
SELECT promoted, promotion->>'metric' AS metric, promotion->>'active_version' AS against FROM mtdpp_models WHERE name = 'nightly' AND version = 2;
-- the active version itself: nothing to compare
SELECT version FROM mtdpp.models WHERE model_id = (SELECT mtdpp_activate('nightly', 2, promote => 'if_better:mpr'));
-- baskets are kept by their keys: a model of text keys compared the same way
SELECT version FROM mtdpp_train('keys', 'SELECT order_id, ''sku-'' || item_id AS sku FROM train_lines WHERE order_id <= 100', item_col => 'sku',
                                kind => 'itemknn', test_share => 0.3, promote => 'always');
SELECT version FROM mtdpp_train('keys', 'SELECT order_id, ''sku-'' || item_id AS sku FROM train_lines', item_col => 'sku',
                                kind => 'itemknn', test_share => 0.3, promote => 'always');
SELECT test_baskets->0 AS first_kept FROM mtdpp.models WHERE name = 'keys' AND version = 1;
SELECT version FROM mtdpp.models WHERE model_id = (SELECT mtdpp_activate('keys', 1, promote => 'if_better:mpr'));
SELECT mtdpp_drop('keys');
-- promote => 'always' overrides the setting; activate => false stores only
SELECT version FROM mtdpp_train('nightly', 'SELECT * FROM train_lines WHERE order_id <= 40', kind => 'itemknn', promote => 'always');
SELECT version FROM mtdpp_train('nightly', 'train_lines', kind => 'itemknn', activate => false);
SELECT version, active, promoted FROM mtdpp_models WHERE name = 'nightly' AND version > 3 ORDER BY version;
-- a version that kept no baskets cannot be compared; bad rules of an activation
SELECT * FROM mtdpp_activate('nightly', 5, promote => 'if_better:mpr');
SELECT * FROM mtdpp_activate('nightly', 1, promote => 'best');
SELECT * FROM mtdpp_activate('nightly', 1, promote => 'if_better:ndcg_at_100001');
SELECT * FROM mtdpp_activate('nightly', 9, promote => 'if_better:mpr');
SELECT version FROM mtdpp_models WHERE name = 'nightly' AND active;
-- bad rules
SELECT * FROM mtdpp_train('nightly', 'train_lines', kind => 'itemknn');
SELECT * FROM mtdpp_train('nightly', 'train_lines', kind => 'itemknn', test_share => 0.3, promote => 'if_better:ndcg_at_7');
SELECT * FROM mtdpp_train('nightly', 'train_lines', kind => 'itemknn', test_share => 0.3, promote => 'if_better');
SELECT * FROM mtdpp_train('nightly', 'train_lines', kind => 'itemknn', test_share => 0.3, promote => 'best');
SET mtdpp.promote = 'sometimes';
SET mtdpp.promote = 'if_better:recall_at_0';
RESET mtdpp.promote;
SHOW mtdpp.promote;
DROP TABLE store_lines;
DROP VIEW latest_tests;
SELECT mtdpp_drop(n) FROM unnest(ARRAY['life', 'life_text', 'life_rls', 'held', 'nightly', 'once']) n;
DROP OWNED BY regress_mtdpp_analyst;
DROP ROLE regress_mtdpp_analyst;
