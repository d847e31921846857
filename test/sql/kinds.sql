-- A choice of kinds compared on the same order lines (every kind trains and
-- completes: conformance.sql); the strong ones find the planted groups.
-- (the single-task logistic DPP learns slowly and its validation MPR is
-- noisy at first: it gets 30 epochs without early stopping)
SELECT t.kind, t.items, t.best_epoch IS NOT NULL AS fitted_by_sgd
FROM unnest(ARRAY['multitask_nobias', 'logistic', 'lowrank', 'itemknn', 'popularity', 'ease']) k(kind),
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
WHERE m.name IN ('kind_multitask_nobias', 'kind_itemknn', 'kind_ease')
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
-- EASE: lambda was chosen on validation baskets, as a multiple of the mean
-- popularity, and stored; each item keeps at most max_neighbors positive weights
SELECT abs(alpha / 2 ^ round(log(2, alpha)) - 1) < 1e-12 AND round(log(2, alpha)) BETWEEN -12 AND 8
       AS lambda_on_the_ladder, max_neighbors
FROM (SELECT (hyperparams ->> 'lambda')::numeric / (SELECT count(*) FROM train_lines) * 60 AS alpha,
             hyperparams -> 'max_neighbors' AS max_neighbors
      FROM mtdpp.models WHERE name = 'kind_ease') h;
SELECT max(cardinality(i.neighbors)) <= 59 AS capped, bool_and(w > 0) AS positive
FROM mtdpp.items i JOIN mtdpp.models m USING (model_id), unnest(i.neighbor_weights) w
WHERE m.name = 'kind_ease';
-- EASE by hand on three items.  Baskets {1,2} {1,2} {2,3} {2,3} {1} {3}:
-- G = X^T X = [[3,2,0],[2,4,2],[0,2,3]]; with lambda = 1,
-- G + I = [[4,2,0],[2,5,2],[0,2,4]], whose adjugate is
-- [[16,-8,4],[-8,16,-8],[4,-8,16]] (det 48), so P = adj / 48 and
-- B[j][c] = -P[j][c] / P[c][c] = -adj[j][c] / 16:
-- B[1][2] = B[2][1] = B[2][3] = B[3][2] = 0.5; B[1][3] = B[3][1] = -0.25,
-- a negative weight, not kept.
CREATE TABLE ease_lines (order_id int, item_id int);
INSERT INTO ease_lines VALUES (1, 1), (1, 2), (2, 1), (2, 2), (3, 2), (3, 3), (4, 2), (4, 3), (5, 1), (6, 3);
SELECT items, baskets, final_loss, best_epoch FROM mtdpp_train('ease3', 'ease_lines', kind => 'ease', params => '{"lambda": 1}');
SELECT i.item_id, u.nbr, round(u.w::numeric, 6) AS weight
FROM mtdpp.items i JOIN mtdpp.models m USING (model_id), unnest(i.neighbors, i.neighbor_weights) u(nbr, w)
WHERE m.name = 'ease3' ORDER BY 1, 2;
-- the same weights from the data, by cofactors in SQL
WITH g AS (SELECT x.k AS i, y.k AS j,
                  (SELECT count(*) FROM ease_lines a JOIN ease_lines b USING (order_id)
                   WHERE a.item_id = x.k + 1 AND b.item_id = y.k + 1) + CASE WHEN x.k = y.k THEN 1 ELSE 0 END AS a
           FROM generate_series(0, 2) x(k), generate_series(0, 2) y(k)),
     adj AS (SELECT r.k AS i, c.k AS j,
                    (SELECT a FROM g WHERE i = (c.k + 1) % 3 AND j = (r.k + 1) % 3) *
                    (SELECT a FROM g WHERE i = (c.k + 2) % 3 AND j = (r.k + 2) % 3) -
                    (SELECT a FROM g WHERE i = (c.k + 1) % 3 AND j = (r.k + 2) % 3) *
                    (SELECT a FROM g WHERE i = (c.k + 2) % 3 AND j = (r.k + 1) % 3) AS v
             FROM generate_series(0, 2) r(k), generate_series(0, 2) c(k)),
     b AS (SELECT x.i + 1 AS item_id, x.j + 1 AS nbr, -x.v::float8 / d.v AS w
           FROM adj x JOIN adj d ON d.i = x.j AND d.j = x.j WHERE x.i <> x.j),
     stored AS (SELECT i.item_id, u.nbr, u.w
                FROM mtdpp.items i JOIN mtdpp.models m USING (model_id), unnest(i.neighbors, i.neighbor_weights) u(nbr, w)
                WHERE m.name = 'ease3')
SELECT count(*) FILTER (WHERE b.w > 0) AS positive, count(s.w) AS stored,
       bool_and(CASE WHEN b.w > 0 THEN abs(s.w - b.w) < 1e-6 ELSE s.w IS NULL END) AS same_weights
FROM b LEFT JOIN stored s USING (item_id, nbr);
-- a score is the sum of the basket's weights, plus 1e-6 ln((popularity + 1/2) / (baskets + 1)),
-- which orders the candidates of no weight by popularity
SELECT item_id, round(score::numeric, 6) AS score,
       abs(score - CASE item_id WHEN 1 THEN 1e-6 * ln(3.5 / 7) ELSE 0.5 + 1e-6 * ln(4.5 / 7) END) < 1e-6 AS by_hand
FROM mtdpp_score(ARRAY[3], ARRAY[1, 2], 'ease3');
SELECT item_id, round(score::numeric, 6) AS score, abs(score - 1e-6 * ln(3.5 / 7)) < 1e-12 AS prior_alone
FROM mtdpp_score(ARRAY[3], ARRAY[1], 'ease3');
SELECT item_id, round(score::numeric, 6) AS score, abs(score - (1 + 1e-6 * ln(4.5 / 7))) < 1e-6 AS by_hand
FROM mtdpp_score(ARRAY[1, 3], ARRAY[2], 'ease3');
SELECT item_id, rank FROM mtdpp_complete(ARRAY[2], 2, 'ease3') ORDER BY rank;
SELECT item_id, basket_item, round(contribution::numeric, 6) AS contribution
FROM mtdpp_explain(ARRAY[1, 3], ARRAY[2], 'ease3') ORDER BY rank;
-- the empty basket: popularity
SELECT item_id, rank FROM mtdpp_complete(ARRAY[]::int[], 3, 'ease3') ORDER BY rank;
-- a set of one or more items takes the ranking; diversity needs item factors
SELECT item_id FROM mtdpp_complete_set(ARRAY[1], 2, 'ease3', diversity => 0) ORDER BY rank;
-- On neighbourhoods (ease_solver 'neighborhood'), each item's column is a
-- ridge regression on the items it was bought with: item 2 met items 1 and
-- 3, so B[1][2] = B[3][2] = 0.5 as above; items 1 and 3 met item 2 alone,
-- B[2][1] = B[2][3] = cooc / (f(2) + lambda) = 2 / 5.
SELECT items FROM mtdpp_train('ease3n', 'ease_lines', kind => 'ease', params => '{"lambda": 1, "ease_solver": "neighborhood"}');
SELECT i.item_id, u.nbr, round(u.w::numeric, 6) AS weight
FROM mtdpp.items i JOIN mtdpp.models m USING (model_id), unnest(i.neighbors, i.neighbor_weights) u(nbr, w)
WHERE m.name = 'ease3n' ORDER BY 1, 2;
SELECT name, hyperparams->>'ease_solver' AS ease_solver FROM mtdpp.models WHERE name IN ('ease3', 'ease3n') ORDER BY name;
SELECT item_id, rank FROM mtdpp_complete(ARRAY[2], 2, 'ease3n') ORDER BY rank;
-- ease_dropout 0.5 fits as if each item of a basket were dropped with
-- probability 0.5: dropout / (1 - dropout) = 1 times each item's popularity
-- joins lambda on its diagonal, G + I + diag(G) = [[7,2,0],[2,9,2],[0,2,7]],
-- adjugate diagonal 59, 49, 59 and -14 between items bought together, so
-- B[1][2] = B[3][2] = 14/49 and B[2][1] = B[2][3] = 14/59; on
-- neighbourhoods items 1 and 3 met item 2 alone, B[2][1] = 2 / (4 + 4 + 1).
SELECT items FROM mtdpp_train('ease3d', 'ease_lines', kind => 'ease', params => '{"lambda": 1, "ease_dropout": 0.5}');
SELECT items FROM mtdpp_train('ease3dn', 'ease_lines', kind => 'ease',
                              params => '{"lambda": 1, "ease_dropout": 0.5, "ease_solver": "neighborhood"}');
SELECT name, i.item_id, u.nbr, round(u.w::numeric, 6) AS weight,
       round(CASE WHEN i.item_id = 2 AND name = 'ease3d' THEN 14 / 59.0
                  WHEN i.item_id = 2 THEN 2 / 9.0 ELSE 14 / 49.0 END, 6) AS by_hand
FROM mtdpp.items i JOIN mtdpp.models m USING (model_id), unnest(i.neighbors, i.neighbor_weights) u(nbr, w)
WHERE m.name IN ('ease3d', 'ease3dn') AND m.active ORDER BY 1, 2, 3;
SELECT name, hyperparams->>'ease_dropout' AS ease_dropout FROM mtdpp.models WHERE name IN ('ease3', 'ease3d') ORDER BY name;
SELECT mtdpp_drop('ease3'), mtdpp_drop('ease3n'), mtdpp_drop('ease3d'), mtdpp_drop('ease3dn');
DROP TABLE ease_lines;
SELECT mtdpp_drop(name) FROM mtdpp.models WHERE name LIKE 'kind\_%' ORDER BY name;
