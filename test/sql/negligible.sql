-- No loop runs on subnormal numbers: values too small to carry signal
-- (task factors and biases below 2^-40, factors below 2^-80) are zero,
-- made so by the trainer and when a model is read from the tables.
-- Skewed popularity: the L2 decay of rare items drives many task factors
-- towards zero, where Adam follows them down geometrically.
CREATE TABLE skewed_lines AS
SELECT o AS order_id,
       1 + (floor(exp(((o * 7919 + k * 104729) % 1000) / 1000.0 * ln(200)))::int + o % 3 * 7) % 200 AS item_id
FROM generate_series(1, 3000) o, generate_series(1, 2 + o % 5) k;
SELECT items, baskets FROM mtdpp_train('skewed', 'skewed_lines', rank => 16, epochs => 20, kind => 'multitask');
-- the trained model holds zeros, and no other value below the thresholds
SELECT count(*) FILTER (WHERE x = 0) > 0 AS some_zero,
       count(*) FILTER (WHERE x <> 0 AND abs(x) < 2.0 ^ (-40)) AS negligible
FROM mtdpp.items i JOIN mtdpp.models m USING (model_id), unnest(i.task_factors) x
WHERE m.name = 'skewed';
SELECT count(*) FILTER (WHERE x <> 0 AND abs(x) < 2.0 ^ (-80)) AS negligible_factors,
       count(*) FILTER (WHERE i.bias <> 0 AND abs(i.bias) < 2.0 ^ (-40)) AS negligible_biases
FROM mtdpp.items i JOIN mtdpp.models m USING (model_id), unnest(i.factors) x
WHERE m.name = 'skewed';
-- a model stored with tiny values (by an earlier version, or by hand) is
-- read with them as zero, and scores as the same model holding zeros
UPDATE mtdpp.items SET task_factors[1:3] = '{0, 0, 0}', factors[4] = 0
WHERE model_id = (SELECT model_id FROM mtdpp.models WHERE name = 'skewed') AND item_id IN (1, 50);
CREATE TEMP TABLE skewed_scores AS
SELECT item_id, score FROM mtdpp_score(ARRAY[1, 2, 3], (SELECT array_agg(i) FROM generate_series(1, 200) i), 'skewed');
CREATE TEMP TABLE skewed_top AS SELECT * FROM mtdpp_complete(ARRAY[1, 2, 3], 20, 'skewed');
UPDATE mtdpp.items SET task_factors[1:3] = '{1e-20, -1e-30, 1e-40}', factors[4] = 1e-30
WHERE model_id = (SELECT model_id FROM mtdpp.models WHERE name = 'skewed') AND item_id IN (1, 50);
SELECT item_id, task_factors[1:3], factors[4] FROM mtdpp.items i JOIN mtdpp.models m USING (model_id)
WHERE m.name = 'skewed' AND item_id IN (1, 50) ORDER BY item_id;
SET client_min_messages = debug2;
SELECT count(*) AS scored FROM mtdpp_score(ARRAY[1, 2, 3], ARRAY[50], 'skewed');
RESET client_min_messages;
SELECT count(*) AS compared, bool_and(s.score = t.score) AS same_scores
FROM skewed_scores s JOIN mtdpp_score(ARRAY[1, 2, 3], (SELECT array_agg(i) FROM generate_series(1, 200) i), 'skewed') t
  USING (item_id);
SELECT count(*) AS compared, bool_and(s.item_id = t.item_id AND s.score = t.score) AS same_top
FROM skewed_top s JOIN mtdpp_complete(ARRAY[1, 2, 3], 20, 'skewed') t USING (rank);
SELECT mtdpp_drop('skewed');
