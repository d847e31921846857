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
