-- The kind fm: a second-order factorization machine over the basket's items
-- and the candidate.  Defaults: rank and l2 chosen on a validation slice.
SELECT items, baskets, examples > 0 AS examples FROM mtdpp_train('fm_default', 'train_lines', kind => 'fm');
SELECT rank IN (32, 128) AS rank_chosen, hyperparams -> 'learning_rate' AS learning_rate,
       hyperparams -> 'capacity' ->> 'chosen' AS chosen, best_epoch >= 1 AS early_stopped
FROM mtdpp.models WHERE name = 'fm_default';
-- one embedding per item (factors, rank long), its weight in bias, no task factors
SELECT count(*) AS items, bool_and(cardinality(i.factors) = m.rank) AS factors,
       bool_and(cardinality(i.task_factors) = 0) AS no_task_factors, bool_or(i.bias <> 0) AS weights
FROM mtdpp.items i JOIN mtdpp.models m USING (model_id) WHERE m.name = 'fm_default';
SELECT * FROM mtdpp_train('fm_pop', 'train_lines', kind => 'popularity') \gset
SELECT f.mpr > p.mpr + 10 AS beats_popularity, f.precision_at_5 > p.precision_at_5 AS sharper
FROM mtdpp_evaluate('fm_default', 'test_baskets') f, mtdpp_evaluate('fm_pop', 'test_baskets') p;

-- A rank given: one fit, deterministic for a seed
SELECT items FROM mtdpp_train('fm_r8', 'train_lines', kind => 'fm', rank => 8, epochs => 6, seed => 7);
SELECT items FROM mtdpp_train('fm_r8_again', 'train_lines', kind => 'fm', rank => 8, epochs => 6, seed => 7);
SELECT count(*) AS differences
FROM (SELECT i.item_id, i.bias, i.factors FROM mtdpp.items i JOIN mtdpp.models m USING (model_id) WHERE m.name = 'fm_r8'
      EXCEPT SELECT i.item_id, i.bias, i.factors FROM mtdpp.items i JOIN mtdpp.models m USING (model_id) WHERE m.name = 'fm_r8_again') d;
SELECT rank, hyperparams -> 'l2' AS l2 FROM mtdpp.models WHERE name = 'fm_r8';

-- score(c | B) = w_c + <v_c, sum_{i in B} v_i / sqrt |B|>, recomputed in SQL from the tables
CREATE TEMP TABLE fm_rows AS
SELECT i.item_id, i.bias, i.factors FROM mtdpp.items i JOIN mtdpp.models m USING (model_id)
WHERE m.name = 'fm_r8' AND m.active;
WITH s AS (SELECT * FROM mtdpp_score(ARRAY[3, 14, 25], ARRAY(SELECT generate_series(1, 60)), 'fm_r8')),
     sql AS (SELECT c.item_id, c.bias + sum(z.xv * z.yv) / sqrt(3) AS score
             FROM fm_rows c, fm_rows b, unnest(c.factors, b.factors) AS z(xv, yv)
             WHERE b.item_id IN (3, 14, 25) GROUP BY c.item_id, c.bias)
SELECT count(*) FILTER (WHERE s.score IS NULL) AS basket_items, count(s.score) AS scored,
       bool_and(abs(s.score - sql.score) < 1e-5 * (1 + abs(sql.score))) AS as_in_sql
FROM s JOIN sql USING (item_id);
-- mtdpp_explain: basket item i contributes <v_c, v_i> / sqrt |B|, the contributions sum to the score less w_c
WITH c AS (SELECT * FROM mtdpp_complete(ARRAY[3, 14, 25], 5, 'fm_r8')),
     e AS (SELECT * FROM mtdpp_explain(ARRAY[3, 14, 25], ARRAY(SELECT item_id FROM c), 'fm_r8'))
SELECT count(*) AS rows, count(DISTINCT e.item_id) AS completions,
       bool_and(abs(c.score - r.bias - t.total) < 1e-9 * (1 + abs(c.score))) AS sums_to_score,
       bool_and(e.rank BETWEEN 1 AND 3) AS ranked
FROM e JOIN c USING (item_id) JOIN fm_rows r USING (item_id),
     LATERAL (SELECT sum(contribution) AS total FROM e e2 WHERE e2.item_id = e.item_id) t;
WITH e AS (SELECT * FROM mtdpp_explain(ARRAY[3, 14, 25], ARRAY[40], 'fm_r8')),
     sql AS (SELECT b.item_id AS basket_item, sum(z.xv * z.yv) / sqrt(3) AS contribution
             FROM fm_rows c, fm_rows b, unnest(c.factors, b.factors) AS z(xv, yv)
             WHERE c.item_id = 40 AND b.item_id IN (3, 14, 25) GROUP BY b.item_id)
SELECT count(*) AS rows, bool_and(abs(e.contribution - sql.contribution) < 1e-5) AS as_in_sql,
       bool_and(e.rank = (SELECT count(*) FROM e e2 WHERE e2.contribution >= e.contribution)) AS by_contribution
FROM e JOIN sql USING (basket_item);

-- the top k is the full ranking by mtdpp_score (ties by item id), on 250 baskets, with and without filters
CREATE TEMP TABLE fm_baskets AS
SELECT order_id, array_agg(item_id ORDER BY pos) AS basket FROM lines WHERE order_id <= 250 GROUP BY order_id;
CREATE TEMP TABLE fm_ranking AS
SELECT b.order_id, s.item_id, s.score,
       row_number() OVER (PARTITION BY b.order_id ORDER BY s.score DESC, s.item_id) AS rank
FROM fm_baskets b, mtdpp_score(b.basket, ARRAY(SELECT generate_series(1, 60)), 'fm_default') s
WHERE s.score IS NOT NULL;
SELECT count(DISTINCT order_id) AS baskets, bool_and(score > -1e6 AND score < 1e6) AS finite FROM fm_ranking;
SELECT count(*) AS differences FROM (
    (SELECT b.order_id, c.item_id, c.rank FROM fm_baskets b, mtdpp_complete(b.basket, 10, 'fm_default') c
     EXCEPT SELECT order_id, item_id, rank FROM fm_ranking WHERE rank <= 10)
    UNION ALL
    (SELECT order_id, item_id, rank FROM fm_ranking WHERE rank <= 10
     EXCEPT SELECT b.order_id, c.item_id, c.rank FROM fm_baskets b, mtdpp_complete(b.basket, 10, 'fm_default') c)) d;
SELECT count(*) AS differences FROM (
    (SELECT b.order_id, c.item_id, c.rank
     FROM fm_baskets b, mtdpp_complete(b.basket, 5, 'fm_default', excluded => ARRAY[1, 11, 21, 31, 41, 51]) c
     EXCEPT SELECT order_id, item_id, row_number() OVER (PARTITION BY order_id ORDER BY rank)
            FROM fm_ranking WHERE item_id <> ALL (ARRAY[1, 11, 21, 31, 41, 51]))
    UNION ALL
    (SELECT b.order_id, c.item_id, c.rank
     FROM fm_baskets b, mtdpp_complete(b.basket, 3, 'fm_default', allowed => ARRAY[2, 12, 22, 32, 42, 52, 5]) c
     EXCEPT SELECT order_id, item_id, row_number() OVER (PARTITION BY order_id ORDER BY rank)
            FROM fm_ranking WHERE item_id = ANY (ARRAY[2, 12, 22, 32, 42, 52, 5]))) d;
-- an empty basket is completed by popularity
SELECT array_agg(c.item_id ORDER BY c.rank) = array_agg(p.item_id ORDER BY p.rank) AS by_popularity
FROM mtdpp_complete('{}', 5, 'fm_default') c JOIN mtdpp_complete('{}', 5, 'fm_pop') p USING (rank);
-- mtdpp_evaluate, as for every kind
SELECT baskets, mpr > 50 AS above_chance, precision_at_20 >= precision_at_5 AS p20_above_p5
FROM mtdpp_evaluate('fm_default', 'test_baskets');
-- the model travels as a value (the aggregate), and completes from the tables
SELECT mtdpp_save('fm_copy', mtdpp_fit(order_id, item_id, pos, '{"kind": "fm", "rank": 8, "seed": 7, "epochs": 6}'))
       IS NOT NULL AS saved FROM train_lines;
SELECT count(*) AS completions, bool_and(item_id <> ALL (ARRAY[3, 14, 25])) AS outside_basket
FROM mtdpp_complete(ARRAY[3, 14, 25], 10, 'fm_copy');
SELECT c.mpr > p.mpr + 10 AS beats_popularity
FROM mtdpp_evaluate('fm_copy', 'test_baskets') c, mtdpp_evaluate('fm_pop', 'test_baskets') p;

-- Bad input: clear errors
SELECT * FROM mtdpp_train('fm_bad', 'train_lines', kind => 'fm', params => '{"learning_rate": 0}');
SELECT * FROM mtdpp_train('fm_bad', 'train_lines', kind => 'fm', params => '{"negatives": 0}');
SELECT * FROM mtdpp_train('fm_bad', 'train_lines', kind => 'fm', rank => 0);
SELECT * FROM mtdpp_train('fm_bad', 'train_lines', kind => 'fm', params => '{"lambda": 1}');
SELECT * FROM mtdpp_train('fm_bad', 'train_lines', kind => 'fm', params => '{"min_support": 0.1}');
SELECT * FROM mtdpp_train('fm_bad', 'train_lines', kind => 'fm', params => '{"validation_fraction": 0}');
-- without a validation slice, a rank given trains
SELECT items FROM mtdpp_train('fm_noval', 'train_lines', kind => 'fm', rank => 4, epochs => 3, params => '{"validation_fraction": 0}');
SELECT best_epoch, cardinality(val_mpr_history) AS epochs FROM mtdpp.models WHERE name = 'fm_noval';
-- more than maintenance_work_mem holds: refused, with a hint
SET maintenance_work_mem = '1MB';
SELECT * FROM mtdpp_train('fm_big', 'train_lines', kind => 'fm', rank => 1024);
RESET maintenance_work_mem;
