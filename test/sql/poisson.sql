-- The kind poisson: Poisson factorisation of the baskets x items matrix.
-- A rank given: fitted as asked, no validation slice needed.
SELECT items, baskets, examples, final_loss, best_epoch
FROM mtdpp_train('pf_given', 'train_lines', kind => 'poisson', rank => 6, epochs => 50);
SELECT rank, hyperparams -> 'a' AS a, hyperparams -> 'c' AS c, hyperparams -> 'epochs' AS passes
FROM mtdpp.models WHERE name = 'pf_given';
-- the item factors are E[beta]: finite, nonnegative, rank of them; no task factors
SELECT count(*) AS items, bool_and(cardinality(i.factors) = 6) AS rank_factors,
       bool_and(0 <= ALL (i.factors)) AS nonnegative,
       bool_and(NOT 'Infinity'::real = ANY (i.factors) AND NOT 'NaN'::real = ANY (i.factors)) AS finite,
       bool_and(cardinality(i.task_factors) = 0) AS no_task_factors
FROM mtdpp.items i JOIN mtdpp.models m USING (model_id) WHERE m.name = 'pf_given';
-- the same seed gives the same factors; another seed others
SELECT 1 FROM mtdpp_train('pf_again', 'train_lines', kind => 'poisson', rank => 6, epochs => 50);
SELECT 1 FROM mtdpp_train('pf_seed', 'train_lines', kind => 'poisson', rank => 6, epochs => 50, seed => 7);
SELECT bool_and(a.factors = b.factors) AS same_seed_same, bool_or(a.factors <> c.factors) AS other_seed_differs
FROM (SELECT i.* FROM mtdpp.items i JOIN mtdpp.models m USING (model_id) WHERE m.name = 'pf_given') a
JOIN (SELECT i.* FROM mtdpp.items i JOIN mtdpp.models m USING (model_id) WHERE m.name = 'pf_again') b USING (item_id)
JOIN (SELECT i.* FROM mtdpp.items i JOIN mtdpp.models m USING (model_id) WHERE m.name = 'pf_seed') c USING (item_id);
-- a score is the expected rate: positive and finite; a basket's own items score null;
-- the items of the basket's group rank first
SELECT count(*) FILTER (WHERE score IS NULL) AS basket_items,
       bool_and(score > 0 AND score < 'Infinity') FILTER (WHERE score IS NOT NULL) AS positive_finite
FROM mtdpp_score(ARRAY[11, 14, 17], ARRAY(SELECT generate_series(1, 60)), 'pf_given');
SELECT count(*) FILTER (WHERE item_id BETWEEN 11 AND 20) AS same_group
FROM mtdpp_complete(ARRAY[11, 14, 17], 5, 'pf_given');
-- explain: a contribution is the fall of the score without that basket item
SELECT count(*) AS compared,
       max(abs(e.contribution - (f.score - w.score))) < 1e-6 AS leave_one_out
FROM mtdpp_explain(ARRAY[11, 14, 25], ARRAY[12, 13, 15], 'pf_given') e
JOIN mtdpp_score(ARRAY[11, 14, 25], ARRAY[12, 13, 15], 'pf_given') f USING (item_id)
JOIN LATERAL mtdpp_score(array_remove(ARRAY[11, 14, 25], e.basket_item), ARRAY[e.item_id], 'pf_given') w
  ON w.item_id = e.item_id;

-- Defaults: the rank chosen on a validation slice of the training baskets, and stored
SELECT items, baskets FROM mtdpp_train('pf_default', 'train_lines', kind => 'poisson');
SELECT rank IN (16, 32, 64, 128) AS chosen, (hyperparams ->> 'rank')::int = rank AS stored
FROM mtdpp.models WHERE name = 'pf_default';
SELECT 1 FROM mtdpp_train('pf_pop', 'train_lines', kind => 'popularity');
SELECT r.mpr > p.mpr + 10 AS beats_popularity, r.precision_at_5 > p.precision_at_5 AS sharper, r.baskets
FROM mtdpp_evaluate('pf_default', 'test_baskets') r, mtdpp_evaluate('pf_pop', 'test_baskets') p;
-- the top k is the full ranking by mtdpp_score (ties by item id), on 250 baskets, with and without filters
CREATE TEMP TABLE rank_baskets AS
SELECT order_id, array_agg(item_id ORDER BY pos) AS basket FROM lines WHERE order_id <= 250 GROUP BY order_id;
CREATE TEMP TABLE full_ranking AS
SELECT b.order_id, s.item_id, s.score,
       row_number() OVER (PARTITION BY b.order_id ORDER BY s.score DESC, s.item_id) AS rank
FROM rank_baskets b, mtdpp_score(b.basket, ARRAY(SELECT generate_series(1, 60)), 'pf_default') s
WHERE s.score IS NOT NULL;
SELECT count(DISTINCT order_id) AS baskets, bool_and(score > 0 AND score < 'Infinity') AS finite FROM full_ranking;
SELECT count(*) AS differences FROM (
    (SELECT b.order_id, c.item_id, c.rank FROM rank_baskets b, mtdpp_complete(b.basket, 10, 'pf_default') c
     EXCEPT SELECT order_id, item_id, rank FROM full_ranking WHERE rank <= 10)
    UNION ALL
    (SELECT order_id, item_id, rank FROM full_ranking WHERE rank <= 10
     EXCEPT SELECT b.order_id, c.item_id, c.rank FROM rank_baskets b, mtdpp_complete(b.basket, 10, 'pf_default') c)) d;
SELECT count(*) AS differences FROM (
    (SELECT b.order_id, c.item_id, c.rank
     FROM rank_baskets b, mtdpp_complete(b.basket, 5, 'pf_default', excluded => ARRAY[1, 11, 21, 31, 41, 51]) c
     EXCEPT SELECT order_id, item_id, row_number() OVER (PARTITION BY order_id ORDER BY rank)
            FROM full_ranking WHERE item_id <> ALL (ARRAY[1, 11, 21, 31, 41, 51]))
    UNION ALL
    (SELECT b.order_id, c.item_id, c.rank
     FROM rank_baskets b, mtdpp_complete(b.basket, 3, 'pf_default', allowed => ARRAY[2, 12, 22, 32, 42, 52, 5]) c
     EXCEPT SELECT order_id, item_id, row_number() OVER (PARTITION BY order_id ORDER BY rank)
            FROM full_ranking WHERE item_id = ANY (ARRAY[2, 12, 22, 32, 42, 52, 5]))) d;
-- an empty basket is completed by popularity
SELECT array_agg(c.item_id ORDER BY c.rank) = array_agg(p.item_id ORDER BY p.rank) AS by_popularity
FROM mtdpp_complete('{}', 5, 'pf_default') c JOIN mtdpp_complete('{}', 5, 'pf_pop') p USING (rank);
-- the model travels as a value, and completes as the trained one read from the tables
SELECT mtdpp_save('pf_copy', mtdpp_fit(order_id, item_id, pos, '{"kind": "poisson", "rank": 6, "epochs": 50}'))
       IS NOT NULL AS saved FROM train_lines;
SELECT max(abs(a.score - b.score) / a.score) < 1e-5 AS same_scores
FROM mtdpp_score(ARRAY[11, 14], ARRAY(SELECT generate_series(1, 60)), 'pf_given') a
JOIN mtdpp_score(ARRAY[11, 14], ARRAY(SELECT generate_series(1, 60)), 'pf_copy') b USING (item_id)
WHERE a.score IS NOT NULL;

-- Bad input: clear errors
SELECT * FROM mtdpp_train('pf_bad', 'train_lines', kind => 'poisson', params => '{"a": 0}');
SELECT * FROM mtdpp_train('pf_bad', 'train_lines', kind => 'poisson', params => '{"c": 1000}');
SELECT * FROM mtdpp_train('pf_bad', 'train_lines', kind => 'poisson', params => '{"c": "big"}');
SELECT * FROM mtdpp_train('pf_bad', 'train_lines', kind => 'poisson', params => '{"learning_rate": 0.1}');
SELECT * FROM mtdpp_train('pf_bad', 'train_lines', kind => 'multitask', params => '{"a": 1}');
SELECT * FROM mtdpp_train('pf_bad', 'train_lines', kind => 'poisson', params => '{"validation_fraction": 0}');
SELECT * FROM mtdpp_train('pf_bad', 'train_lines', kind => 'poisson', rank => 0);
-- rank and c given: no validation slice needed
SELECT items, baskets FROM mtdpp_train('pf_noslice', 'train_lines', kind => 'poisson', rank => 4,
    params => '{"c": 1, "validation_fraction": 0}');
-- too long a fit: refused, with a hint
SELECT * FROM mtdpp_train('pf_long', 'train_lines', kind => 'poisson', rank => 1024, epochs => 100000);
-- more than maintenance_work_mem holds: refused, with a hint
SET maintenance_work_mem = '1MB';
SELECT * FROM mtdpp_train('pf_big', 'train_lines', kind => 'poisson', rank => 1024);
RESET maintenance_work_mem;
