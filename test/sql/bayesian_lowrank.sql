-- The kind bayesian_lowrank: samples of the low-rank DPP's posterior by
-- Langevin dynamics, side by side in the item factors, scored by their mean.
SELECT items, baskets FROM mtdpp_train('bayes', 'train_lines', kind => 'bayesian_lowrank', rank => 6, seed => 7,
    params => '{"samples": 4}');
-- stored: rank = samples x rank, each item's factors its samples side by side
SELECT m.rank, m.hyperparams -> 'rank' AS sample_rank, m.hyperparams -> 'samples' AS samples,
       m.hyperparams -> 'sampler' ->> 'step_size' AS step_size,
       jsonb_array_length(m.hyperparams -> 'sampler' -> 'candidates') AS tried,
       (m.hyperparams -> 'thinning')::int > 0 AS thinning,
       bool_and(cardinality(i.factors) = 24) AS every_item
FROM mtdpp.models m JOIN mtdpp.items i USING (model_id) WHERE m.name = 'bayes'
GROUP BY m.rank, m.hyperparams;
-- a score is the mean over the samples of ln det L_s[B + c] - ln det L_s[B],
-- recomputed in SQL for an empty basket and for a basket of one item
CREATE TEMP TABLE bayes_v AS
SELECT i.item_id, s, ARRAY(SELECT i.factors[s * 6 + j] FROM generate_series(1, 6) j) AS v
FROM mtdpp.items i JOIN mtdpp.models m USING (model_id), generate_series(0, 3) s WHERE m.name = 'bayes';
CREATE FUNCTION bayes_dot(a real[], b real[]) RETURNS float8 LANGUAGE sql IMMUTABLE AS
$$ SELECT sum(x::float8 * y::float8) FROM unnest(a, b) u(x, y) $$;
WITH expected AS (SELECT c.item_id, avg(ln(bayes_dot(c.v, c.v) + 1e-6)) AS score FROM bayes_v c GROUP BY c.item_id)
SELECT count(*) AS items, bool_and(abs(s.score - e.score) < 1e-6) AS empty_basket
FROM mtdpp_score('{}', ARRAY(SELECT generate_series(1, 60)), 'bayes') s JOIN expected e USING (item_id);
WITH expected AS (
    SELECT c.item_id, avg(ln(bayes_dot(c.v, c.v) + 1e-6 - bayes_dot(b.v, c.v) ^ 2 / (bayes_dot(b.v, b.v) + 1e-6))) AS score
    FROM bayes_v c JOIN bayes_v b ON b.s = c.s AND b.item_id = 5 WHERE c.item_id <> 5 GROUP BY c.item_id)
SELECT count(*) AS items, bool_and(abs(s.score - e.score) < 1e-6) AS one_item
FROM mtdpp_score(ARRAY[5], ARRAY(SELECT generate_series(1, 60)), 'bayes') s JOIN expected e USING (item_id);
-- each sample of rank 6 conditions on the last 5 items of a basket
SELECT count(*) AS differences FROM (
    SELECT item_id, score FROM mtdpp_score(ARRAY[1, 2, 3, 4, 5, 6, 7, 8], ARRAY(SELECT generate_series(9, 60)), 'bayes')
    EXCEPT SELECT item_id, score FROM mtdpp_score(ARRAY[4, 5, 6, 7, 8], ARRAY(SELECT generate_series(9, 60)), 'bayes')) d;
-- the same seed makes the same samples
SELECT items FROM mtdpp_train('bayes_again', 'train_lines', kind => 'bayesian_lowrank', rank => 6, seed => 7,
    params => '{"samples": 4}');
SELECT count(*) AS differences FROM (
    SELECT i.item_id, i.factors FROM mtdpp.items i JOIN mtdpp.models m USING (model_id) WHERE m.name = 'bayes'
    EXCEPT SELECT i.item_id, i.factors FROM mtdpp.items i JOIN mtdpp.models m USING (model_id) WHERE m.name = 'bayes_again') d;

-- Defaults: rank 32, 8 samples, the step size chosen on the validation slice, the
-- prior's precision from the mode's factors
SELECT items, baskets FROM mtdpp_train('bayes_default', 'train_lines', kind => 'bayesian_lowrank');
SELECT rank, hyperparams -> 'samples' AS samples, (hyperparams ->> 'prior_precision')::float8 > 1 AS prior_precision,
       hyperparams -> 'burn_in' AS burn_in, hyperparams -> 'sampler' ->> 'step_size' AS step_size,
       (hyperparams -> 'step_size')::float8 IN (0.001, 0.0001, 0.00001) AS step_of_the_candidates,
       (hyperparams -> 'sampler' ->> 'validation_baskets')::int > 0 AS validated
FROM mtdpp.models WHERE name = 'bayes_default';
SELECT * FROM mtdpp_train('bayes_pop', 'train_lines', kind => 'popularity') \gset
SELECT b.baskets, b.mpr > 50 AS above_chance, b.mpr > p.mpr AS beats_popularity
FROM mtdpp_evaluate('bayes_default', 'test_baskets') b, mtdpp_evaluate('bayes_pop', 'test_baskets') p;
-- the top k is the full ranking by mtdpp_score (ties by item id), on 250 baskets, with and without filters
CREATE TEMP TABLE rank_baskets AS
SELECT order_id, array_agg(item_id ORDER BY pos) AS basket FROM lines WHERE order_id <= 250 GROUP BY order_id;
CREATE TEMP TABLE full_ranking AS
SELECT b.order_id, s.item_id, s.score,
       row_number() OVER (PARTITION BY b.order_id ORDER BY s.score DESC, s.item_id) AS rank
FROM rank_baskets b, mtdpp_score(b.basket, ARRAY(SELECT generate_series(1, 60)), 'bayes_default') s
WHERE s.score IS NOT NULL;
SELECT count(DISTINCT order_id) AS baskets, bool_and(score > -1e6 AND score < 1e6) AS finite FROM full_ranking;
SELECT count(*) AS differences FROM (
    (SELECT b.order_id, c.item_id, c.rank FROM rank_baskets b, mtdpp_complete(b.basket, 10, 'bayes_default') c
     EXCEPT SELECT order_id, item_id, rank FROM full_ranking WHERE rank <= 10)
    UNION ALL
    (SELECT order_id, item_id, rank FROM full_ranking WHERE rank <= 10
     EXCEPT SELECT b.order_id, c.item_id, c.rank FROM rank_baskets b, mtdpp_complete(b.basket, 10, 'bayes_default') c)) d;
SELECT count(*) AS differences FROM (
    (SELECT b.order_id, c.item_id, c.rank
     FROM rank_baskets b, mtdpp_complete(b.basket, 5, 'bayes_default', excluded => ARRAY[1, 11, 21, 31, 41, 51]) c
     EXCEPT SELECT order_id, item_id, row_number() OVER (PARTITION BY order_id ORDER BY rank)
            FROM full_ranking WHERE item_id <> ALL (ARRAY[1, 11, 21, 31, 41, 51]))
    UNION ALL
    (SELECT b.order_id, c.item_id, c.rank
     FROM rank_baskets b, mtdpp_complete(b.basket, 3, 'bayes_default', allowed => ARRAY[2, 12, 22, 32, 42, 52, 5]) c
     EXCEPT SELECT order_id, item_id, row_number() OVER (PARTITION BY order_id ORDER BY rank)
            FROM full_ranking WHERE item_id = ANY (ARRAY[2, 12, 22, 32, 42, 52, 5]))) d;
-- mtdpp_explain: a finite contribution of each basket item to each completion
SELECT count(*) AS rows, count(DISTINCT item_id) AS completions,
       bool_and(contribution > -1e6 AND contribution < 1e6) AS finite
FROM mtdpp_explain(ARRAY[11, 14, 17], ARRAY(SELECT item_id FROM mtdpp_complete(ARRAY[11, 14, 17], 3, 'bayes_default')),
                   'bayes_default');
-- the model travels as a value, and scores alike from the value and from the tables
SELECT mtdpp_save('bayes_copy', mtdpp_fit(order_id, item_id, pos, '{"kind": "bayesian_lowrank", "rank": 6, "samples": 4, "seed": 7}'))
       IS NOT NULL AS saved FROM train_lines;
SELECT count(*) AS differences FROM (
    SELECT item_id, round(score::numeric, 4) FROM mtdpp_score(ARRAY[3, 9], ARRAY(SELECT generate_series(1, 60)), 'bayes_copy')
    EXCEPT SELECT item_id, round(score::numeric, 4) FROM mtdpp_score(ARRAY[3, 9], ARRAY(SELECT generate_series(1, 60)), 'bayes')) d;

-- Bad input: clear errors
SELECT * FROM mtdpp_train('bayes_bad', 'train_lines', kind => 'bayesian_lowrank', params => '{"samples": 0}');
SELECT * FROM mtdpp_train('bayes_bad', 'train_lines', kind => 'bayesian_lowrank', params => '{"samples": 65}');
SELECT * FROM mtdpp_train('bayes_bad', 'train_lines', kind => 'bayesian_lowrank', rank => 200, params => '{"samples": 8}');
SELECT * FROM mtdpp_train('bayes_bad', 'train_lines', kind => 'bayesian_lowrank', params => '{"step_size": 2}');
SELECT * FROM mtdpp_train('bayes_bad', 'train_lines', kind => 'bayesian_lowrank', params => '{"prior_precision": 0}');
SELECT * FROM mtdpp_train('bayes_bad', 'train_lines', kind => 'bayesian_lowrank', params => '{"thinning": 0}');
SELECT * FROM mtdpp_train('bayes_bad', 'train_lines', kind => 'bayesian_lowrank', params => '{"burn_in": -1}');
SELECT * FROM mtdpp_train('bayes_bad', 'train_lines', kind => 'lowrank', params => '{"samples": 4}');
SELECT * FROM mtdpp_train('bayes_bad', 'train_lines', kind => 'bayesian_lowrank', params => '{"lambda": 1}');
SELECT * FROM mtdpp_train('bayes_bad', 'train_lines', kind => 'bayesian_lowrank', params => '{"warm_start": "bayes"}');
-- a stored model whose samples do not divide its rank is refused when read
UPDATE mtdpp.models SET hyperparams = jsonb_set(hyperparams, '{samples}', '5') WHERE name = 'bayes';
SELECT * FROM mtdpp_complete(ARRAY[1], 3, 'bayes');
-- more than maintenance_work_mem holds: refused, with a hint
SET maintenance_work_mem = '1MB';
SELECT * FROM mtdpp_train('bayes_big', 'train_lines', kind => 'bayesian_lowrank', rank => 128, params => '{"samples": 8}');
-- samples not given, and even one does not fit: refused with one's figure
SELECT * FROM mtdpp_train('bayes_big', 'train_lines', kind => 'bayesian_lowrank', rank => 128);
-- samples not given: the most that fit, with a NOTICE
SET maintenance_work_mem = '5MB';
SELECT version FROM mtdpp_train('bayes_fewer', 'train_lines', kind => 'bayesian_lowrank', rank => 128, epochs => 2);
SELECT hyperparams->'samples' AS samples, rank FROM mtdpp.models WHERE name = 'bayes_fewer';
SELECT count(*) FROM mtdpp_complete('{1,2}', 5, 'bayes_fewer');
SELECT mtdpp_drop('bayes_fewer');
RESET maintenance_work_mem;
DROP FUNCTION bayes_dot(real[], real[]);
