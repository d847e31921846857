-- The hyperparameter fits of the multi-task kinds: independent fits from
-- seeds seed, seed + 1, ... side by side, scored by the mean of their scores.
SELECT items, baskets FROM mtdpp_train('ens_a', 'train_lines', kind => 'multitask', rank => 6, seed => 11);
SELECT items, baskets FROM mtdpp_train('ens_b', 'train_lines', kind => 'multitask', rank => 6, seed => 12);
SELECT items, baskets, examples = (SELECT sum(n_examples) FROM mtdpp.models WHERE name IN ('ens_a', 'ens_b')) AS examples
FROM mtdpp_train('ens', 'train_lines', kind => 'multitask', rank => 6, seed => 11, params => '{"fits": 2}');
-- stored: rank = fits x rank, each fit's record
SELECT m.rank, m.hyperparams -> 'rank' AS fit_rank, m.hyperparams -> 'fits' AS fits,
       jsonb_path_query_array(m.hyperparams, '$.ensemble.members[*].seed') AS seeds,
       jsonb_path_query_array(m.hyperparams, '$.ensemble.members[*].rank') AS ranks,
       bool_and(cardinality(i.factors) = 12 AND cardinality(i.task_factors) = 12) AS every_item
FROM mtdpp.models m JOIN mtdpp.items i USING (model_id) WHERE m.name = 'ens'
GROUP BY m.rank, m.hyperparams;
-- fit f is the model of one fit of seed 11 + f: its task factors as they are
-- (its factors scaled to the fits' shared bias)
SELECT count(*) AS items,
       count(*) FILTER (WHERE e.task_factors[1:6] = a.task_factors AND e.task_factors[7:12] = b.task_factors) AS same_task_factors
FROM (SELECT i.* FROM mtdpp.items i JOIN mtdpp.models m USING (model_id) WHERE m.name = 'ens') e
JOIN (SELECT i.* FROM mtdpp.items i JOIN mtdpp.models m USING (model_id) WHERE m.name = 'ens_a') a USING (item_id)
JOIN (SELECT i.* FROM mtdpp.items i JOIN mtdpp.models m USING (model_id) WHERE m.name = 'ens_b') b USING (item_id);
-- a score is the mean of the two fits' scores, on 40 baskets of 1 to 6 items
CREATE TEMP TABLE ens_baskets AS
SELECT order_id, basket[1:1 + order_id % 6] AS basket FROM test_baskets ORDER BY order_id LIMIT 40;
SELECT count(*) AS scores, max(abs(e.score - (a.score + b.score) / 2)) < 1e-4 AS mean_of_fits
FROM ens_baskets t,
     LATERAL mtdpp_score(t.basket, ARRAY(SELECT generate_series(1, 60)), 'ens') e
JOIN LATERAL mtdpp_score(t.basket, ARRAY(SELECT generate_series(1, 60)), 'ens_a') a USING (item_id)
JOIN LATERAL mtdpp_score(t.basket, ARRAY(SELECT generate_series(1, 60)), 'ens_b') b USING (item_id);
-- the top k (pruned by the fits' bounds) is the full ranking by mtdpp_score, ties by item id
SELECT count(*) AS baskets, count(*) FILTER (WHERE top = full_ranking) AS same_top_5
FROM (SELECT t.order_id,
             ARRAY(SELECT item_id FROM mtdpp_complete(t.basket, 5, model => 'ens') ORDER BY rank) AS top,
             ARRAY(SELECT s.item_id FROM mtdpp_score(t.basket, ARRAY(SELECT generate_series(1, 60)), 'ens') s
                   WHERE s.item_id <> ALL (t.basket) ORDER BY s.score DESC, s.item_id LIMIT 5) AS full_ranking
      FROM ens_baskets t) x;
-- mtdpp_evaluate's ranks (pruned too) are those of the full ranking
WITH r AS (
    SELECT t.order_id, t.held_out, s.item_id, s.score,
           count(*) OVER (PARTITION BY t.order_id) AS n
    FROM test_baskets t, LATERAL mtdpp_score(array_remove(t.basket, t.held_out), ARRAY(SELECT generate_series(1, 60)), 'ens') s
    WHERE s.item_id <> ALL (array_remove(t.basket, t.held_out))),
pr AS (
    SELECT h.order_id, 100.0 * (h.n - (1 + count(*) FILTER (WHERE o.score > h.score)
                                      + 0.5 * count(*) FILTER (WHERE o.score = h.score AND o.item_id <> h.item_id))) / (h.n - 1) AS pr
    FROM r h JOIN r o USING (order_id) WHERE h.item_id = h.held_out GROUP BY h.order_id, h.n)
SELECT abs((SELECT avg(pr) FROM pr) - e.mpr) < 1e-9 AS same_mpr FROM mtdpp_evaluate('ens', 'test_baskets') e;
-- as a value: mtdpp_fit makes the same model (without positions, as mtdpp_train
-- was called), which mtdpp_save stores
SELECT mtdpp_save('ens_value', mtdpp_fit(order_id, item_id, NULL::int, '{"kind": "multitask", "rank": 6, "seed": 11, "fits": 2}'))
    IS NOT NULL AS saved FROM train_lines;
SELECT count(*) AS differences FROM (
    SELECT i.item_id, i.factors, i.task_factors, i.bias FROM mtdpp.items i JOIN mtdpp.models m USING (model_id) WHERE m.name = 'ens'
    EXCEPT SELECT i.item_id, i.factors, i.task_factors, i.bias FROM mtdpp.items i JOIN mtdpp.models m USING (model_id) WHERE m.name = 'ens_value') d;
-- fits 1, given or left out, is one fit, stored as before (no "fits" key)
SELECT items FROM mtdpp_train('ens_one', 'train_lines', kind => 'multitask', rank => 6, seed => 11, params => '{"fits": 1}');
SELECT (SELECT hyperparams FROM mtdpp.models WHERE name = 'ens_one') = (SELECT hyperparams FROM mtdpp.models WHERE name = 'ens_a') AS same_hyperparams,
       (SELECT hyperparams ? 'fits' FROM mtdpp.models WHERE name = 'ens_a') AS fits_stored;
SELECT count(*) AS differences FROM (
    SELECT i.item_id, i.factors, i.task_factors, i.bias FROM mtdpp.items i JOIN mtdpp.models m USING (model_id) WHERE m.name = 'ens_a'
    EXCEPT SELECT i.item_id, i.factors, i.task_factors, i.bias FROM mtdpp.items i JOIN mtdpp.models m USING (model_id) WHERE m.name = 'ens_one') d;
-- the rank chosen once, by the first fit; the others train at its choice
SELECT items FROM mtdpp_train('ens_chosen', 'train_lines', kind => 'multitask_nobias', params => '{"fits": 2}');
SELECT rank = 2 * (hyperparams ->> 'rank')::int AS side_by_side, hyperparams -> 'capacity' ->> 'chosen' AS chosen,
       jsonb_array_length(hyperparams -> 'capacity' -> 'candidates') AS candidates,
       jsonb_path_query_array(hyperparams, '$.ensemble.members[*].rank') = jsonb_build_array(hyperparams -> 'rank', hyperparams -> 'rank') AS same_rank
FROM mtdpp.models WHERE name = 'ens_chosen';
SELECT mpr > 50 AS above_chance FROM mtdpp_evaluate('ens_chosen', 'test_baskets');
SELECT key, type, default_value, valid FROM mtdpp_hyperparameters('multitask') WHERE key = 'fits';
-- mtdpp_complete_set: diversity 0 is the ensemble's ranking; with diversity,
-- k distinct items outside the basket, the first the best, each scored as by
-- mtdpp_score (the similarities are the cosines of the fits' factors side by side)
SELECT (SELECT array_agg(ARRAY[item_id, rank] ORDER BY rank) FROM mtdpp_complete(ARRAY[1, 2, 3], 8, 'ens')) =
       (SELECT array_agg(ARRAY[item_id, rank] ORDER BY rank) FROM mtdpp_complete_set(ARRAY[1, 2, 3], 8, 'ens', 0)) AS same_ranking;
SELECT count(*) AS n, count(DISTINCT c.item_id) AS distinct_items, bool_and(c.item_id NOT IN (1, 2, 3)) AS none_in_basket,
       bool_and(c.rank <> 1 OR c.item_id = (SELECT item_id FROM mtdpp_complete(ARRAY[1, 2, 3], 1, 'ens'))) AS best_first,
       bool_and(abs(c.score - s.score) < 1e-9) AS scores
FROM mtdpp_complete_set(ARRAY[1, 2, 3], 8, 'ens', 0.8) c
JOIN mtdpp_score(ARRAY[1, 2, 3], ARRAY(SELECT generate_series(1, 60)), 'ens') s USING (item_id);
-- mtdpp_explain: contributions are score(t | B) - score(t | B without i) of the ensemble
SELECT count(*) AS n, bool_and(abs(e.contribution - (f.score - w.score)) < 1e-9) AS loo
FROM mtdpp_explain(ARRAY[1, 2, 25], ARRAY[3, 4, 26], 'ens') e
JOIN mtdpp_score(ARRAY[1, 2, 25], ARRAY[3, 4, 26], 'ens') f USING (item_id)
JOIN LATERAL mtdpp_score(array_remove(ARRAY[1, 2, 25], e.basket_item), ARRAY[e.item_id], 'ens') w USING (item_id);

-- Bad values
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'multitask', rank => 6, params => '{"fits": 0}');
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'multitask', rank => 6, params => '{"fits": 33}');
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'multitask', rank => 6, params => '{"fits": 2.5}');
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'multitask', rank => 6, params => '{"fits": "two"}');
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'multitask', params => '{"fits": 9}');
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'multitask', rank => 600, params => '{"fits": 2}');
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'hybrid', params => '{"fits": 2}');
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'logistic', params => '{"fits": 2}');
-- warm starts: an ensemble neither starts warm nor is a starting point
SELECT * FROM mtdpp_train('ens_a', 'train_lines', kind => 'multitask', warm_start => true, params => '{"fits": 2}');
SELECT * FROM mtdpp_train('ens', 'train_lines', kind => 'multitask', warm_start => true);
-- a count of fits changed by hand is refused when the model is read
UPDATE mtdpp.models SET hyperparams = jsonb_set(hyperparams, '{fits}', '5') WHERE name = 'ens';
SELECT * FROM mtdpp_complete(ARRAY[1, 2], 3, model => 'ens');
UPDATE mtdpp.models SET hyperparams = jsonb_set(hyperparams, '{fits}', '2') WHERE name = 'ens';
SELECT count(*) AS completions FROM mtdpp_complete(ARRAY[1, 2], 3, model => 'ens');
SELECT mtdpp_drop(name) FROM (SELECT DISTINCT name FROM mtdpp.models WHERE name LIKE 'ens%') n ORDER BY name;
