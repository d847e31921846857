-- The benchmark protocol inside the database.
SELECT baskets, mpr > 85 AS beats_85, precision_at_20 >= precision_at_10 AND precision_at_10 >= precision_at_5 AS ordered,
       precision_at_20 BETWEEN 0 AND 100 AS bounded
FROM mtdpp_evaluate('planted', 'test_baskets');
SELECT metrics ->> 'baskets' AS baskets, metrics ? 'mpr' AS has_mpr, metrics ->> 'evaluated_on' AS evaluated_on
FROM mtdpp.models WHERE name = 'planted';
-- the DPP clearly beats popularity on planted groups
SELECT d.mpr - p.mpr > 10 AS dpp_beats_popularity
FROM mtdpp_evaluate('planted', 'test_baskets') d, mtdpp_evaluate('pop', 'test_baskets') p;
-- a larger catalog: the items the model never saw rank below every known one
SELECT e.mpr > d.mpr AS unseen_items_rank_last
FROM mtdpp_evaluate('planted', 'test_baskets', catalog_size => 100) e,
     mtdpp_evaluate('planted', 'test_baskets') d;
CREATE VIEW unseen_held_out AS SELECT ARRAY[1, 2] AS basket, 5000 AS held_out;
SELECT baskets, mpr, precision_at_5 FROM mtdpp_evaluate('planted', 'unseen_held_out');
SELECT baskets, mpr FROM mtdpp_evaluate('planted', 'unseen_held_out', catalog_size => 62);
-- other column names
CREATE VIEW renamed AS SELECT basket AS items, held_out AS target FROM test_baskets;
SELECT baskets FROM mtdpp_evaluate('planted', 'renamed', basket_col => 'items', held_out_col => 'target');
-- A model in use stays valid while the test query runs, even when that
-- query changes the model tables and completes with another model.
CREATE FUNCTION churn(b int[]) RETURNS int[] LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    UPDATE mtdpp.models SET metrics = metrics WHERE name = 'pop';
    PERFORM count(*) FROM mtdpp_complete(b, 3, 'pop');
    RETURN b;
END $$;
CREATE VIEW churning_baskets AS SELECT churn(basket) AS basket, held_out FROM test_baskets;
SELECT c.baskets = d.baskets AND abs(c.mpr - d.mpr) < 1e-9 AND c.precision_at_5 = d.precision_at_5 AS same
FROM mtdpp_evaluate('planted', 'churning_baskets') c, mtdpp_evaluate('planted', 'test_baskets') d;
-- test baskets of another type than the model's items: an error naming both,
-- raised before any basket is scored, the recorded metrics left alone
CREATE VIEW sku_lines AS SELECT order_id, 'sku-' || item_id AS item_id FROM train_lines;
CREATE VIEW sku_tests AS
SELECT ARRAY(SELECT 'sku-' || i FROM unnest(basket) i) AS basket, 'sku-' || held_out AS held_out FROM test_baskets;
SELECT name, items FROM mtdpp_train('by_text', 'sku_lines', kind => 'itemknn');
SELECT baskets, mpr > 85 AS beats_85 FROM mtdpp_evaluate('by_text', 'sku_tests');
SELECT metrics FROM mtdpp.models WHERE name = 'by_text' \gset
SELECT * FROM mtdpp_evaluate('by_text', 'test_baskets');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_evaluate_at('by_text', 'test_baskets');
SELECT * FROM mtdpp_evaluate('planted', 'sku_tests');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_evaluate_at('planted', 'sku_tests', '{5}');
CREATE VIEW text_held_out AS SELECT basket, held_out::text AS held_out FROM test_baskets;
SELECT * FROM mtdpp_evaluate('planted', 'text_held_out');
CREATE VIEW text_basket AS SELECT basket::text AS basket, held_out FROM test_baskets;
SELECT * FROM mtdpp_evaluate('planted', 'text_basket');
CREATE VIEW held_out_arrays AS SELECT basket, ARRAY[held_out] AS held_out FROM test_baskets;
SELECT * FROM mtdpp_evaluate('planted', 'held_out_arrays');
-- an empty evaluation is an error too, and stores nothing
CREATE VIEW no_sku_tests AS SELECT * FROM sku_tests WHERE false;
SELECT * FROM mtdpp_evaluate('by_text', 'no_sku_tests');
SELECT metrics = :'metrics'::jsonb AS metrics_kept FROM mtdpp.models WHERE name = 'by_text';
-- any integer type reads as an integer model's items
CREATE VIEW bigint_tests AS SELECT basket::bigint[] AS basket, held_out::bigint AS held_out FROM test_baskets;
SELECT (SELECT array_agg(ndcg ORDER BY k) FROM mtdpp_evaluate_at('planted', 'bigint_tests')) =
       (SELECT array_agg(ndcg ORDER BY k) FROM mtdpp_evaluate_at('planted', 'test_baskets')) AS same;
SELECT mtdpp_drop('by_text');
DROP VIEW sku_tests, sku_lines, text_held_out, text_basket, held_out_arrays, no_sku_tests, bigint_tests;
