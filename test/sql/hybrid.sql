-- The hybrid kind: the multi-task DPP plus co-occurrence evidence, its form
-- and weight chosen on a validation slice of the training baskets.
SELECT kind, items, best_epoch IS NOT NULL AS fitted_by_sgd
FROM mtdpp_train('hyb', 'train_lines', kind => 'hybrid', rank => 8, epochs => 8, seed => 3);
SELECT kind, rank, hyperparams->>'kind' AS recorded_kind,
       hyperparams->>'evidence' IN ('cosine', 'log_cosine', 'confidence', 'ease', 'cosine+ease') AS form_recorded,
       (hyperparams->>'evidence_weight')::float8 >= 0 AS weight_recorded,
       (hyperparams->'evidence_validation'->>'baskets')::int AS validation_baskets
FROM mtdpp.models WHERE name = 'hyb';
-- verbose reports the search (its NOTICEs hold timings, so not shown) and
-- changes nothing of the model
SET client_min_messages = warning;
SELECT items FROM mtdpp_train('hyb_verbose', 'train_lines', kind => 'hybrid', rank => 8, epochs => 8, seed => 3, verbose => true);
RESET client_min_messages;
SELECT (SELECT hyperparams - 'verbose' FROM mtdpp.models WHERE name = 'hyb') =
       (SELECT hyperparams - 'verbose' FROM mtdpp.models WHERE name = 'hyb_verbose') AS same_choice,
       (SELECT count(*) FROM (SELECT item_id, factors, task_factors, bias, neighbors, neighbor_weights FROM mtdpp.items JOIN mtdpp.models USING (model_id) WHERE name = 'hyb'
                              EXCEPT SELECT item_id, factors, task_factors, bias, neighbors, neighbor_weights FROM mtdpp.items JOIN mtdpp.models USING (model_id) WHERE name = 'hyb_verbose') d) AS differences;
SELECT mtdpp_drop('hyb_verbose');
-- without a kind, mtdpp_train trains the hybrid (the default since 0.4.0);
-- ease_solver 'neighborhood' fits EASE's weights item by item, as above
-- 3,000 items
SELECT kind FROM mtdpp_train('hyb_default', 'train_lines', rank => 8, epochs => 8, seed => 3,
                             params => '{"ease_solver": "neighborhood"}');
SELECT hyperparams->>'kind' AS recorded_kind, hyperparams->>'ease_solver' AS ease_solver,
       hyperparams->>'evidence' AS form, hyperparams->>'evidence_ease_solver' AS evidence_ease_solver,
       hyperparams->>'ease_dropout' AS ease_dropout, hyperparams->>'evidence_ease_dropout' AS evidence_ease_dropout
FROM mtdpp.models WHERE name IN ('hyb', 'hyb_default') ORDER BY name;
SELECT mtdpp_drop('hyb_default');
-- the items' systems are solved on two threads (max_parallel_maintenance_workers
-- above 0, a catalog of over 2,048 items) or on one: the same weights to the bit
CREATE TEMP TABLE wide_lines AS
SELECT g / 6 AS order_id, (g * 7919 + (g / 6) % 13) % 3000 AS item_id FROM generate_series(1, 60000) g;
SET max_parallel_maintenance_workers = 0;
SELECT items FROM mtdpp_train('ease_one', 'wide_lines', kind => 'ease',
                              params => '{"lambda": 10, "ease_solver": "neighborhood"}');
SET max_parallel_maintenance_workers = 2;
SELECT items FROM mtdpp_train('ease_two', 'wide_lines', kind => 'ease',
                              params => '{"lambda": 10, "ease_solver": "neighborhood"}');
RESET max_parallel_maintenance_workers;
SELECT count(*) AS items, sum(cardinality(i.neighbors)) > 10000 AS has_weights,
       bool_and(i.neighbors IS NOT DISTINCT FROM j.neighbors
                AND i.neighbor_weights IS NOT DISTINCT FROM j.neighbor_weights) AS same_weights
FROM mtdpp.items i JOIN mtdpp.models m ON m.model_id = i.model_id AND m.name = 'ease_one'
JOIN mtdpp.items j ON j.item_id = i.item_id
JOIN mtdpp.models n ON n.model_id = j.model_id AND n.name = 'ease_two';
SELECT mtdpp_drop('ease_one'), mtdpp_drop('ease_two');
-- on neighbourhoods the hybrid's cosine lists are counted in the pass of
-- EASE's neighbourhoods: its lists are still beta * cosine + ease_beta *
-- EASE's weight, computed here from the order lines and an ease model of the
-- hybrid's lambda
SELECT kind FROM mtdpp_train('hyb_wide', 'wide_lines', rank => 8, epochs => 4, seed => 3,
                             params => '{"ease_solver": "neighborhood"}');
SELECT hyperparams->>'evidence' AS form, hyperparams->>'evidence_ease_solver' AS ease_solver
FROM mtdpp.models WHERE name = 'hyb_wide';
SELECT kind FROM mtdpp_train('hyb_wide_ease', 'wide_lines', kind => 'ease',
                             params => (SELECT jsonb_build_object('lambda', (hyperparams->>'evidence_lambda')::float8,
                                                                  'ease_dropout', (hyperparams->>'evidence_ease_dropout')::float8,
                                                                  'ease_solver', 'neighborhood')
                                        FROM mtdpp.models WHERE name = 'hyb_wide'));
WITH h AS (SELECT (hyperparams->>'evidence_weight')::float8 AS beta,
                  (hyperparams->>'evidence_ease_weight')::float8 AS ease_beta
           FROM mtdpp.models WHERE name = 'hyb_wide'),
     b AS (SELECT DISTINCT order_id, item_id FROM wide_lines),
     f AS (SELECT item_id, count(*) AS n FROM b GROUP BY item_id),
     pairs AS (SELECT x.item_id AS j, y.item_id AS c, count(*) AS n
               FROM b x JOIN b y ON x.order_id = y.order_id AND x.item_id <> y.item_id GROUP BY 1, 2),
     cosine AS (SELECT p.j, p.c, p.n / sqrt(fj.n * fc.n) AS w
                FROM pairs p JOIN f fj ON fj.item_id = p.j JOIN f fc ON fc.item_id = p.c),
     ease AS (SELECT i.item_id AS j, l.c, l.w
              FROM mtdpp.items i JOIN mtdpp.models m USING (model_id), unnest(i.neighbors, i.neighbor_weights) l(c, w)
              WHERE m.name = 'hyb_wide_ease'),
     want AS (SELECT j, c, h.beta * coalesce(cosine.w, 0) + h.ease_beta * coalesce(ease.w, 0) AS w
              FROM cosine FULL JOIN ease USING (j, c), h),
     got AS (SELECT i.item_id AS j, l.c, l.w
             FROM mtdpp.items i JOIN mtdpp.models m USING (model_id), unnest(i.neighbors, i.neighbor_weights) l(c, w)
             WHERE m.name = 'hyb_wide')
SELECT count(*) > 10000 AS many_pairs, count(*) FILTER (WHERE want.j IS NULL OR got.j IS NULL) AS unmatched,
       max(abs(want.w - got.w) / (1e-3 + abs(want.w))) < 1e-5 AS same_weights
FROM want FULL JOIN got USING (j, c);
SELECT mtdpp_drop('hyb_wide'), mtdpp_drop('hyb_wide_ease');
DROP TABLE wide_lines;
-- factors and neighbour lists side by side, weights beta * g(j, c)
SELECT count(*) AS items, bool_and(cardinality(factors) = 8 AND cardinality(task_factors) = 8) AS factors,
       bool_and(cardinality(neighbors) = cardinality(neighbor_weights)) AS neighbors
FROM mtdpp.items JOIN mtdpp.models USING (model_id) WHERE name = 'hyb';
-- The same factors as a multitask model, copied by hand: the DPP part alone.
INSERT INTO mtdpp.models (name, version, kind, active, rank, n_items, n_baskets, n_examples, log_w, hyperparams)
SELECT 'hyb_dpp', 1, 'multitask', true, rank, n_items, n_baskets, n_examples, log_w, '{}'
FROM mtdpp.models WHERE name = 'hyb';
INSERT INTO mtdpp.items (model_id, item_id, popularity, bias, factors, task_factors)
SELECT (SELECT model_id FROM mtdpp.models WHERE name = 'hyb_dpp'), item_id, popularity, bias, factors, task_factors
FROM mtdpp.items JOIN mtdpp.models USING (model_id) WHERE name = 'hyb';
-- hybrid score = DPP score + beta * sum over the basket of g(j, c), the
-- evidence computed here in SQL from the order lines
-- (cosine+ease: beta * cosine + evidence_ease_weight * EASE's weight; this
-- basket data chooses ease alone, the pair's merged lists are checked above)
SELECT hyperparams->>'evidence' AS form FROM mtdpp.models WHERE name = 'hyb';
CREATE TEMP TABLE hyb_choice AS
SELECT CASE f WHEN 'cosine+ease' THEN 'cosine' ELSE f END AS form,
       CASE f WHEN 'ease' THEN 0 ELSE w END AS beta,
       CASE f WHEN 'ease' THEN w ELSE coalesce((hyperparams->>'evidence_ease_weight')::float8, 0) END AS ease_beta
FROM mtdpp.models, LATERAL (SELECT hyperparams->>'evidence' AS f, (hyperparams->>'evidence_weight')::float8 AS w) e
WHERE name = 'hyb';
-- EASE's weights: those of an ease model with the lambda the hybrid chose
-- and its dropout
SELECT 1 FROM hyb_choice WHERE ease_beta > 0
  AND EXISTS (SELECT 1 FROM mtdpp_train('hyb_ease', 'train_lines', kind => 'ease',
                params => (SELECT jsonb_build_object('lambda', (hyperparams->>'evidence_lambda')::float8,
                                                     'ease_dropout', (hyperparams->>'evidence_ease_dropout')::float8)
                           FROM mtdpp.models WHERE name = 'hyb')));
CREATE TEMP VIEW evidence AS
SELECT i.item_id AS j, n.c, h.ease_beta * n.w AS g
FROM mtdpp.items i JOIN mtdpp.models m USING (model_id), unnest(i.neighbors, i.neighbor_weights) n(c, w), hyb_choice h
WHERE m.name = 'hyb_ease' AND m.active AND h.ease_beta > 0
UNION ALL
SELECT * FROM (
WITH b AS (SELECT DISTINCT order_id, item_id FROM train_lines),
     f AS (SELECT item_id, count(*) AS n FROM b GROUP BY item_id),
     c AS (SELECT x.item_id AS j, y.item_id AS c, count(*) AS n
           FROM b x JOIN b y ON x.order_id = y.order_id AND x.item_id <> y.item_id GROUP BY 1, 2)
SELECT c.j, c.c, h.beta * CASE h.form WHEN 'cosine' THEN c.n / sqrt(fj.n * fc.n)
                                      WHEN 'log_cosine' THEN ln(1 + c.n / sqrt(fj.n * fc.n) / 0.01)
                                      ELSE c.n::float8 / fj.n END AS g
FROM c JOIN f fj ON fj.item_id = c.j JOIN f fc ON fc.item_id = c.c, hyb_choice h WHERE h.beta > 0) cooc;
WITH basket(items) AS (VALUES (ARRAY[11, 14, 2])),
     cands AS (SELECT array_agg(i) AS items FROM generate_series(1, 60) i WHERE i NOT IN (11, 14, 2)),
     ev AS (SELECT c AS item_id, sum(g) AS e FROM evidence WHERE j IN (11, 14, 2) GROUP BY c)
SELECT count(*) AS compared, count(*) FILTER (WHERE coalesce(ev.e, 0) > 0) AS with_evidence,
       max(abs(h.score - (d.score + coalesce(ev.e, 0))) / (1 + abs(h.score))) < 1e-5 AS dpp_plus_evidence
FROM basket, cands, mtdpp_score(basket.items, cands.items, 'hyb') h
JOIN mtdpp_score(ARRAY[11, 14, 2], (SELECT items FROM cands), 'hyb_dpp') d USING (item_id)
LEFT JOIN ev USING (item_id);
-- the pruned top k is the ranking of every score, for baskets of 1 to 5 items
CREATE TEMP TABLE hyb_baskets AS
SELECT o AS id, (SELECT array_agg(((o * 13 + k * 7) % 60) + 1) FROM generate_series(1, 1 + o % 5) k) AS items
FROM generate_series(1, 12) o;
SELECT count(*) AS baskets, bool_and(pruned = brute) AS same_top_10
FROM (SELECT b.id,
             (SELECT array_agg(item_id ORDER BY rank) FROM mtdpp_complete(b.items, 10, 'hyb')) AS pruned,
             (SELECT (array_agg(item_id ORDER BY score DESC, item_id))[1:10]
              FROM mtdpp_score(b.items, (SELECT array_agg(i) FROM generate_series(1, 60) i), 'hyb')
              WHERE score IS NOT NULL) AS brute
      FROM hyb_baskets b) t;
-- with filters: an allowed list and an excluded list
SELECT count(*) AS baskets, bool_and(pruned = brute) AS same_filtered_top_5
FROM (SELECT b.id,
             (SELECT array_agg(item_id ORDER BY rank)
              FROM mtdpp_complete(b.items, 5, 'hyb', allowed => (SELECT array_agg(i) FROM generate_series(1, 60, 2) i),
                                  excluded => ARRAY[1, 3, 5, 7])) AS pruned,
             (SELECT (array_agg(item_id ORDER BY score DESC, item_id))[1:5]
              FROM mtdpp_score(b.items, (SELECT array_agg(i) FROM generate_series(9, 60, 2) i), 'hyb')
              WHERE score IS NOT NULL) AS brute
      FROM hyb_baskets b) t;
-- mtdpp_evaluate ranks each held-out item as every score does (ties count half)
WITH t AS (SELECT order_id, array_remove(basket, held_out) AS ctx, held_out FROM test_baskets),
     s AS (SELECT t.order_id, t.held_out, x.item_id, x.score
           FROM t, mtdpp_score(t.ctx, (SELECT array_agg(i) FROM generate_series(1, 60) i), 'hyb') x
           WHERE x.score IS NOT NULL),
     r AS (SELECT order_id, count(*) AS n,
                  1 + count(*) FILTER (WHERE score > h.hs) + 0.5 * (count(*) FILTER (WHERE score = h.hs) - 1) AS rank
           FROM s JOIN (SELECT order_id, score AS hs FROM s WHERE item_id = held_out) h USING (order_id)
           GROUP BY order_id, h.hs)
SELECT abs(e.mpr - (SELECT avg(100 * (n - rank) / (n - 1)) FROM r)) < 1e-9 AS same_mpr,
       abs(e.precision_at_5 - (SELECT 100.0 * count(*) FILTER (WHERE rank <= 5) / count(*) FROM r)) < 1e-9 AS same_p5
FROM mtdpp_evaluate('hyb', 'test_baskets') e;
-- diverse sets: diversity 0 is the ranking; otherwise k items outside the basket
SELECT (SELECT array_agg(item_id ORDER BY rank) FROM mtdpp_complete_set(ARRAY[11, 14], 6, 'hyb', 0)) =
       (SELECT array_agg(item_id ORDER BY rank) FROM mtdpp_complete(ARRAY[11, 14], 6, 'hyb')) AS diversity_0_is_ranking;
SELECT count(DISTINCT item_id) AS n, bool_and(item_id NOT IN (11, 14)) AS none_in_basket
FROM mtdpp_complete_set(ARRAY[11, 14], 6, 'hyb', 0.7);
-- explain: a contribution is the fall of the score without that basket item
SELECT count(*) AS compared,
       max(abs(e.contribution - (f.score - w.score))) < 1e-6 AS leave_one_out
FROM mtdpp_explain(ARRAY[11, 14, 25], ARRAY[12, 13, 15], 'hyb') e
JOIN mtdpp_score(ARRAY[11, 14, 25], ARRAY[12, 13, 15], 'hyb') f USING (item_id)
JOIN LATERAL mtdpp_score(array_remove(ARRAY[11, 14, 25], e.basket_item), ARRAY[e.item_id], 'hyb') w
  ON w.item_id = e.item_id;
-- the value the aggregate returns completes as the trained model does
SELECT mtdpp_save('hyb_value', mtdpp_fit(order_id, item_id, NULL::int,
       '{"kind": "hybrid", "rank": 8, "epochs": 8, "seed": 3}')) > 0 AS saved
FROM train_lines;
SELECT bool_and(a.item_id = b.item_id AND abs(a.score - b.score) < 1e-5) AS same_completions
FROM mtdpp_complete(ARRAY[11, 14], 10, 'hyb') a JOIN mtdpp_complete(ARRAY[11, 14], 10, 'hyb_value') b USING (rank);
-- weights outside 0 .. 1e6 are refused when the model is read
UPDATE mtdpp.items SET neighbor_weights[1] = 2e6
WHERE model_id = (SELECT model_id FROM mtdpp.models WHERE name = 'hyb_value') AND item_id = 11;
SELECT count(*) FROM mtdpp_complete(ARRAY[11], 3, 'hyb_value');
-- where an epoch is a sample of the baskets (more of them than epoch_baskets),
-- the DPP runs at most 10 epochs unless epochs is given
SELECT kind FROM mtdpp_train('hyb_sampled', 'train_lines', rank => 8, seed => 3,
                             params => '{"epoch_baskets": 100}');
SELECT (hyperparams->>'epochs')::int AS epochs, cardinality(val_mpr_history) <= 10 AS within
FROM mtdpp.models WHERE name = 'hyb_sampled' AND active;
SELECT kind FROM mtdpp_train('hyb_given', 'train_lines', rank => 8, seed => 3, epochs => 12,
                             params => '{"epoch_baskets": 100}');
SELECT (hyperparams->>'epochs')::int AS epochs FROM mtdpp.models WHERE name = 'hyb_given';
SELECT mtdpp_drop(name) FROM mtdpp.models WHERE name LIKE 'hyb%' GROUP BY name ORDER BY name;
