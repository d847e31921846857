-- Every model kind trains from the same order lines and answers the same queries.
-- (the single-task logistic DPP learns slowly and its validation MPR is
-- noisy at first: it gets 30 epochs without early stopping)
SELECT t.kind, t.items, t.best_epoch IS NOT NULL AS fitted_by_sgd
FROM unnest(ARRAY['multitask_nobias', 'logistic', 'lowrank', 'itemknn', 'popularity']) k(kind),
     mtdpp_train('kind_' || k.kind, 'train_lines', kind => k.kind, rank => 8,
                 epochs => CASE k.kind WHEN 'logistic' THEN 30 ELSE 8 END, seed => 3,
                 params => CASE k.kind WHEN 'logistic' THEN '{"patience": 30}' ELSE '{}' END::jsonb) t
ORDER BY t.kind;
SELECT kind, rank, cardinality(loss_history) BETWEEN 1 AND 30 AS history_recorded
FROM mtdpp.models WHERE name LIKE 'kind\_%' ORDER BY kind;
-- all of them complete a basket, never with its own items
SELECT m.kind, count(*) AS n, bool_and(c.item_id NOT IN (1, 2, 3)) AS none_in_basket
FROM mtdpp.models m, mtdpp_complete(ARRAY[1, 2, 3], 5, m.name) c
WHERE m.name LIKE 'kind\_%'
GROUP BY m.kind ORDER BY m.kind;
-- the strong kinds find the basket's group
SELECT m.kind, count(*) AS n, bool_and((c.item_id - 1) / 10 = 0) AS same_group
FROM mtdpp.models m, mtdpp_complete(ARRAY[6, 9, 2], 5, m.name) c
WHERE m.name IN ('kind_multitask_nobias', 'kind_itemknn')
GROUP BY m.kind ORDER BY m.kind;
-- and beat popularity on the planted test baskets (the single-task
-- logistic DPP, the paper's weakest model, by less)
SELECT m.kind, e.mpr > p.mpr + CASE WHEN m.kind = 'logistic' THEN 5 ELSE 10 END AS beats_popularity
FROM mtdpp.models m, mtdpp_evaluate(m.name, 'test_baskets') e, mtdpp_evaluate('kind_popularity', 'test_baskets') p
WHERE m.name LIKE 'kind\_%' AND m.kind <> 'popularity'
ORDER BY m.kind;
-- item-kNN is the cosine of co-occurrence counts, computed here in SQL
WITH b AS (SELECT DISTINCT order_id, item_id FROM train_lines),
     f AS (SELECT item_id, count(*) AS n FROM b GROUP BY item_id),
     c AS (SELECT x.item_id AS j, y.item_id AS c, count(*) AS n
           FROM b x JOIN b y ON x.order_id = y.order_id AND x.item_id <> y.item_id GROUP BY 1, 2),
     expected AS (SELECT c.c AS item_id, sum(c.n / sqrt(fj.n * fc.n)) AS score
                  FROM c JOIN f fj ON fj.item_id = c.j JOIN f fc ON fc.item_id = c.c
                  WHERE c.j IN (11, 14) AND c.c NOT IN (11, 14) GROUP BY c.c)
SELECT count(*) AS compared, max(abs(e.score - s.score)) < 1e-5 AS same_scores
FROM expected e JOIN mtdpp_score(ARRAY[11, 14], (SELECT array_agg(item_id) FROM expected), 'kind_itemknn') s USING (item_id);
-- neighbour lists and factors are in the items table
SELECT m.kind, bool_and(i.neighbors IS NOT NULL) AS has_neighbors, max(cardinality(i.factors)) AS factors,
       max(cardinality(i.task_factors)) AS task_factors
FROM mtdpp.models m JOIN mtdpp.items i USING (model_id) WHERE m.name LIKE 'kind\_%'
GROUP BY m.kind ORDER BY m.kind;
-- the low-rank DPP conditions on at most rank - 1 basket items
SELECT count(*) AS n, bool_and(score > '-infinity') AS positive
FROM mtdpp_complete((SELECT array_agg(i) FROM generate_series(1, 40) i), 5, 'kind_lowrank');
-- item-kNN: a contribution is the cosine weight of the basket item and the completion
SELECT count(*) AS compared, bool_and(abs(e.contribution - w.weight) < 1e-6) AS cosine_weights
FROM mtdpp_explain(ARRAY[11, 14, 25], ARRAY[12, 13, 15], 'kind_itemknn') e
JOIN (SELECT i.item_id AS basket_item, u.nbr AS item_id, u.w AS weight
      FROM mtdpp.items i JOIN mtdpp.models m USING (model_id),
           unnest(i.neighbors, i.neighbor_weights) AS u(nbr, w)
      WHERE m.name = 'kind_itemknn' AND m.active) w USING (basket_item, item_id);
SELECT count(*) AS n, bool_and(contribution = 0) AS no_cooccurrence_no_weight
FROM mtdpp_explain(ARRAY[11, 14, 25], ARRAY[12, 13, 15], 'kind_itemknn') WHERE basket_item = 25;
SELECT mtdpp_drop(name) FROM mtdpp.models WHERE name LIKE 'kind\_%' ORDER BY name;
