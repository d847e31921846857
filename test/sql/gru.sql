-- The kind gru: a GRU over a basket's items in add-to-cart order (GRU4Rec).
-- The planted baskets add items in a fixed cycle (each the one 3 after the
-- last, within its group): an order a recurrent model can learn.
-- Without positions: refused, with a hint
SELECT * FROM mtdpp_train('gru_bad', 'train_lines', kind => 'gru');
SELECT mtdpp_fit(order_id, item_id, 0, '{"kind": "gru"}') FROM train_lines;
-- A position constant within every basket (here the order id) orders no
-- basket: refused for gru and for target 'last', said in a NOTICE for
-- another kind; a position that orders some basket is neither
SELECT mtdpp_fit(order_id, item_id, order_id::int, '{"kind": "gru"}') FROM train_lines;
SELECT length(mtdpp_fit(order_id, item_id, order_id::int, '{"kind": "popularity"}')) > 0 AS trained FROM train_lines;
SELECT mtdpp_fit(order_id, item_id, order_id::int, '{"kind": "multitask", "target": "last", "epochs": 1}') FROM train_lines;
SELECT length(mtdpp_fit(order_id, item_id, (order_id + (item_id = 1)::int)::int, '{"kind": "popularity"}')) > 0 AS trained
FROM train_lines;
-- The directed task (target => 'last'), hidden size and step given
SELECT items, baskets FROM mtdpp_train('gru_last', 'train_lines', position_col => 'pos', kind => 'gru',
    target => 'last', rank => 8, params => '{"learning_rate": 0.1}');
SELECT kind, rank, cardinality(weights) AS weights, hyperparams -> 'target' AS target,
       best_epoch BETWEEN 1 AND 20 AS stopped, cardinality(val_mpr_history) = cardinality(loss_history) AS history
FROM mtdpp.models WHERE name = 'gru_last';
SELECT count(*) AS items, bool_and(cardinality(factors) = 8 AND cardinality(task_factors) = 8) AS shapes
FROM mtdpp.items i JOIN mtdpp.models m USING (model_id) WHERE m.name = 'gru_last';
SELECT * FROM mtdpp_train('gru_pop', 'train_lines', kind => 'popularity') \gset
SELECT g.mpr > p.mpr + 20 AS beats_popularity, g.precision_at_5 > p.precision_at_5 AS sharper
FROM mtdpp_evaluate('gru_last', 'test_baskets') g, mtdpp_evaluate('gru_pop', 'test_baskets') p;
-- the order of the basket matters: the same items read in another order score otherwise
SELECT (SELECT array_agg(round(score::numeric, 6) ORDER BY item_id) FROM mtdpp_score(ARRAY[1, 4, 7], ARRAY[2, 3, 10], 'gru_last')) <>
       (SELECT array_agg(round(score::numeric, 6) ORDER BY item_id) FROM mtdpp_score(ARRAY[7, 4, 1], ARRAY[2, 3, 10], 'gru_last'))
       AS order_matters;
-- after 1, 4, 7 comes 10 (the planted cycle)
SELECT item_id FROM mtdpp_complete(ARRAY[1, 4, 7], 1, 'gru_last');
-- the top k is the full ranking by mtdpp_score (ties by item id), on 250 baskets, with and without filters
CREATE TEMP TABLE gru_baskets AS
SELECT order_id, array_agg(item_id ORDER BY pos) AS basket FROM lines WHERE order_id <= 250 GROUP BY order_id;
CREATE TEMP TABLE gru_ranking AS
SELECT b.order_id, s.item_id, s.score,
       row_number() OVER (PARTITION BY b.order_id ORDER BY s.score DESC, s.item_id) AS rank
FROM gru_baskets b, mtdpp_score(b.basket, ARRAY(SELECT generate_series(1, 60)), 'gru_last') s
WHERE s.score IS NOT NULL;
SELECT count(DISTINCT order_id) AS baskets,
       bool_and(score > '-Infinity' AND score < 'Infinity') AS finite FROM gru_ranking;
SELECT count(*) AS differences FROM (
    (SELECT b.order_id, c.item_id, c.rank FROM gru_baskets b, mtdpp_complete(b.basket, 10, 'gru_last') c
     EXCEPT SELECT order_id, item_id, rank FROM gru_ranking WHERE rank <= 10)
    UNION ALL
    (SELECT order_id, item_id, rank FROM gru_ranking WHERE rank <= 10
     EXCEPT SELECT b.order_id, c.item_id, c.rank FROM gru_baskets b, mtdpp_complete(b.basket, 10, 'gru_last') c)) d;
SELECT count(*) AS differences FROM (
    (SELECT b.order_id, c.item_id, c.rank
     FROM gru_baskets b, mtdpp_complete(b.basket, 5, 'gru_last', excluded => ARRAY[1, 11, 21, 31, 41, 51]) c
     EXCEPT SELECT order_id, item_id, row_number() OVER (PARTITION BY order_id ORDER BY rank)
            FROM gru_ranking WHERE item_id <> ALL (ARRAY[1, 11, 21, 31, 41, 51]))
    UNION ALL
    (SELECT b.order_id, c.item_id, c.rank
     FROM gru_baskets b, mtdpp_complete(b.basket, 3, 'gru_last', allowed => ARRAY[2, 12, 22, 32, 42, 52, 5]) c
     EXCEPT SELECT order_id, item_id, row_number() OVER (PARTITION BY order_id ORDER BY rank)
            FROM gru_ranking WHERE item_id = ANY (ARRAY[2, 12, 22, 32, 42, 52, 5]))) d;
-- mtdpp_explain: each basket item's leave-one-out contribution, the others kept in order
SELECT count(*) AS rows,
       bool_and(abs(e.contribution - (s.score - w.score)) < 1e-9) AS leave_one_out
FROM mtdpp_explain(ARRAY[1, 4, 7], ARRAY[10, 2], 'gru_last') e
JOIN mtdpp_score(ARRAY[1, 4, 7], ARRAY[10, 2], 'gru_last') s USING (item_id)
JOIN LATERAL mtdpp_score(array_remove(ARRAY[1, 4, 7], e.basket_item), ARRAY[e.item_id], 'gru_last') w USING (item_id);
-- an empty basket: the output biases, finite
SELECT count(*) AS completions FROM mtdpp_complete('{}', 5, 'gru_last');

-- Defaults: the hidden size and the step chosen on the validation slice, and stored
SELECT items FROM mtdpp_train('gru_default', 'train_lines', position_col => 'pos', kind => 'gru');
SELECT rank IN (32, 64) AS hidden_size, (hyperparams ->> 'learning_rate')::float8 IN (0.05, 0.2) AS step,
       cardinality(weights) = 6 * rank * rank + 3 * rank AS weights
FROM mtdpp.models WHERE name = 'gru_default';
SELECT g.mpr > p.mpr AS beats_popularity
FROM mtdpp_evaluate('gru_default', 'test_baskets') g, mtdpp_evaluate('gru_pop', 'test_baskets') p;
-- the value of mtdpp_fit: the same model as mtdpp_train's for the same seed, read back alike
SELECT mtdpp_save('gru_copy', mtdpp_fit(order_id, item_id, pos,
    '{"kind": "gru", "target": "last", "rank": 8, "learning_rate": 0.1}')) IS NOT NULL AS saved FROM train_lines;
SELECT bool_and(abs(a.score - b.score) < 1e-9) AS same_scores
FROM mtdpp_score(ARRAY[3, 6], ARRAY(SELECT generate_series(1, 60)), 'gru_copy') a
JOIN mtdpp_score(ARRAY[3, 6], ARRAY(SELECT generate_series(1, 60)), 'gru_last') b USING (item_id);
-- given hidden size and step, no validation slice is needed
SELECT items FROM mtdpp_train('gru_noslice', 'train_lines', position_col => 'pos', kind => 'gru', rank => 4,
    epochs => 2, params => '{"learning_rate": 0.1, "validation_fraction": 0}');
-- a basket longer than max_context + 1 items: its last ones are read
CREATE TEMP TABLE gru_long_lines AS
SELECT order_id, item_id, pos FROM train_lines
UNION ALL SELECT 100000, i, i FROM generate_series(1, 400) i;
SELECT items, baskets FROM mtdpp_train('gru_long', 'gru_long_lines', position_col => 'pos', kind => 'gru', rank => 4,
    epochs => 1, target => 'last', params => '{"learning_rate": 0.1}');
SELECT items, baskets FROM mtdpp_train('gru_long', 'gru_long_lines', position_col => 'pos', kind => 'gru', rank => 4,
    epochs => 1, params => '{"learning_rate": 0.1}');
SELECT count(*) AS completions FROM mtdpp_complete(ARRAY(SELECT generate_series(1, 300)), 5, 'gru_long');

-- Bad input: clear errors
SELECT * FROM mtdpp_train('gru_bad', 'train_lines', position_col => 'pos', kind => 'gru', params => '{"w": 1}');
SELECT * FROM mtdpp_train('gru_bad', 'train_lines', position_col => 'pos', kind => 'gru', params => '{"negatives": 0}');
SELECT * FROM mtdpp_train('gru_bad', 'train_lines', position_col => 'pos', kind => 'gru', params => '{"warm_start": "gru_last"}');
SELECT * FROM mtdpp_train('gru_bad', 'train_lines', position_col => 'pos', kind => 'gru', params => '{"validation_fraction": 0}');
SELECT * FROM mtdpp_train('gru_bad', 'train_lines', position_col => 'pos', kind => 'gru', target => 'first');
-- more than maintenance_work_mem: refused, with a hint
SET maintenance_work_mem = '1MB';
SELECT * FROM mtdpp_train('gru_big', 'train_lines', position_col => 'pos', kind => 'gru', rank => 1024,
    params => '{"learning_rate": 0.1}');
RESET maintenance_work_mem;
-- more than about 20 minutes of work: refused before it starts, with a hint
SELECT * FROM mtdpp_train('gru_long_fit', 'train_lines', position_col => 'pos', kind => 'gru', epochs => 100000,
    params => '{"patience": 100000}');
SELECT count(*) FROM mtdpp.models WHERE name = 'gru_long_fit';
-- weights changed by hand: refused when read
UPDATE mtdpp.models SET weights = weights[1:10] WHERE name = 'gru_copy';
SELECT * FROM mtdpp_complete(ARRAY[1], 3, 'gru_copy');
SELECT mtdpp_drop('gru_copy');
