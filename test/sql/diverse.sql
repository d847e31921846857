-- Diverse set completion (mtdpp_complete_set): greedy MAP in a DPP whose
-- qualities are the model's scores and whose similarities its item factors.
-- Diversity 0 is mtdpp_complete's ranking, exactly.
SELECT (SELECT array_agg(ARRAY[item_id, rank] ORDER BY rank) FROM mtdpp_complete(ARRAY[1, 2, 3], 10)) =
       (SELECT array_agg(ARRAY[item_id, rank] ORDER BY rank) FROM mtdpp_complete_set(ARRAY[1, 2, 3], 10, diversity => 0)) AS same_items,
       (SELECT array_agg(score ORDER BY rank) FROM mtdpp_complete(ARRAY[1, 2, 3], 10)) =
       (SELECT array_agg(score ORDER BY rank) FROM mtdpp_complete_set(ARRAY[1, 2, 3], 10, diversity => 0)) AS same_scores;
SELECT (SELECT array_agg(item_id ORDER BY rank) FROM mtdpp_complete(ARRAY[41, 44], 7, 'planted', excluded => ARRAY[42, 43])) =
       (SELECT array_agg(item_id ORDER BY rank) FROM mtdpp_complete_set(ARRAY[41, 44], 7, 'planted', 0, excluded => ARRAY[42, 43])) AS same_filtered;
-- the planted items come in groups of 10 (a basket draws from one group):
-- the more diversity, the more groups among 10 completions of a basket
SELECT d AS diversity, count(*) AS n, count(DISTINCT (item_id - 1) / 10) AS groups,
       bool_and(item_id NOT IN (11, 12, 13)) AS none_in_basket, array_agg(rank ORDER BY rank) = '{1,2,3,4,5,6,7,8,9,10}' AS ranks
FROM unnest(ARRAY[0, 0.5, 1]::float8[]) d, mtdpp_complete_set(ARRAY[11, 12, 13], 10, 'planted', d)
GROUP BY d ORDER BY d;
-- over the test baskets, on average
SELECT d AS diversity, round(avg(groups), 1) > 1.5 * d AS grows_with_diversity, avg(groups) >= 1 AS sane
FROM (SELECT d, t.order_id, count(DISTINCT (c.item_id - 1) / 10) AS groups
      FROM unnest(ARRAY[0, 0.5, 0.9]::float8[]) d, test_baskets t, mtdpp_complete_set(t.basket, 10, 'planted', d) c
      GROUP BY d, t.order_id) s
GROUP BY d ORDER BY d;
SELECT avg(g) FILTER (WHERE d = 0) < avg(g) FILTER (WHERE d = 0.5) AS more_groups,
       avg(g) FILTER (WHERE d = 0.5) <= avg(g) FILTER (WHERE d = 1) AS most_groups
FROM (SELECT d, t.order_id, count(DISTINCT (c.item_id - 1) / 10) AS g
      FROM unnest(ARRAY[0, 0.5, 1]::float8[]) d, test_baskets t, mtdpp_complete_set(t.basket, 10, 'planted', d) c
      GROUP BY d, t.order_id) s;
-- the first item chosen is always the best one; every item is scored as by mtdpp_score
SELECT bool_and(c.rank <> 1 OR c.item_id = (SELECT item_id FROM mtdpp_complete(ARRAY[51, 52], 1))) AS best_first,
       bool_and(abs(c.score - s.score) < 1e-9) AS scores
FROM mtdpp_complete_set(ARRAY[51, 52], 10, 'planted', 0.7) c
JOIN mtdpp_score(ARRAY[51, 52], ARRAY(SELECT item_id FROM mtdpp_complete_set(ARRAY[51, 52], 10, 'planted', 0.7))) s USING (item_id);
-- By hand: a model of rank 2 where items 2 and 3 are the same item to the
-- model (factors (1, 0)) and item 4 another one (factors (0, 1)).  After
-- basket {1} (factors (1, 0)), score(t) = ln w + ln(R_t[1]^2 + 1e-6): item 2
-- (ln 4) before 3 (ln 2.25) before 4 (ln 1).  The ranking takes 2 and 3; a
-- set takes 2 and then 4, since 3 adds next to nothing to what 2 spans.
INSERT INTO mtdpp.models (name, version, kind, active, rank, n_items, n_baskets, n_examples, log_w, hyperparams)
VALUES ('twins', 1, 'multitask', false, 2, 4, 10, 0, ln(0.01), '{}');
INSERT INTO mtdpp.items (model_id, item_id, popularity, bias, factors, task_factors)
SELECT model_id, i, 3, 0, f, t FROM mtdpp.models, (VALUES
    (1, '{1, 0}'::real[], '{1, 1}'::real[]),
    (2, '{1, 0}', '{2, 1}'),
    (3, '{1, 0}', '{1.5, 1}'),
    (4, '{0, 1}', '{1, 1}')) AS v(i, f, t)
WHERE name = 'twins';
SELECT mtdpp_activate('twins') > 0 AS activated;
SELECT d AS diversity, array_agg(item_id ORDER BY rank) AS items
FROM unnest(ARRAY[0, 0.05, 0.5, 1]::float8[]) d, mtdpp_complete_set(ARRAY[1], 2, 'twins', d)
GROUP BY d ORDER BY d;
SELECT item_id, rank, abs(score - (ln(0.01) + ln(r2 + 1e-6))) < 1e-12 AS by_hand
FROM mtdpp_complete_set(ARRAY[1], 3, 'twins', 0.5) JOIN (VALUES (2, 4.0), (3, 2.25), (4, 1.0)) v(item_id, r2) USING (item_id)
ORDER BY rank;
SELECT mtdpp_drop('twins');
-- the candidate filters act as for mtdpp_complete
SELECT bool_and(item_id = ANY (ARRAY[1, 2, 3, 4, 5, 21, 22, 23, 31, 32])) AS only_allowed, count(*) AS n
FROM mtdpp_complete_set(ARRAY[1, 2], 5, 'planted', 0.8, allowed => ARRAY[1, 2, 3, 4, 5, 21, 22, 23, 31, 32, 9999]);
SELECT bool_and(item_id NOT IN (3, 4, 5, 6, 7)) AS none_excluded, count(*) AS n
FROM mtdpp_complete_set(ARRAY[1, 2], 10, 'planted', 0.8, excluded => ARRAY[3, 4, 5, 6, 7]);
SELECT count(*) AS n FROM mtdpp_complete_set(ARRAY[1, 2], 10, 'planted', 0.8, allowed => '{}');
-- k beyond the catalog: every other item; an empty basket: by popularity
SELECT count(*) AS n, count(DISTINCT item_id) AS distinct_items FROM mtdpp_complete_set(ARRAY[1, 2], 500, 'planted', 0.5);
SELECT count(*) AS n FROM mtdpp_complete_set('{}', 5, 'planted', 0.5);
-- kinds without item factors rank, and refuse diversity
SELECT count(*) AS knn FROM mtdpp_train('div_knn', 'train_lines', kind => 'itemknn');
SELECT (SELECT array_agg(item_id ORDER BY rank) FROM mtdpp_complete(ARRAY[1, 2], 5, 'div_knn')) =
       (SELECT array_agg(item_id ORDER BY rank) FROM mtdpp_complete_set(ARRAY[1, 2], 5, 'div_knn', 0)) AS same;
SELECT * FROM mtdpp_complete_set(ARRAY[1, 2], 5, 'div_knn', 0.5);
SELECT mtdpp_drop('div_knn');
-- bad input
SELECT * FROM mtdpp_complete_set(ARRAY[1, 2], 5, 'planted', -0.1);
SELECT * FROM mtdpp_complete_set(ARRAY[1, 2], 5, 'planted', 1.5);
SELECT * FROM mtdpp_complete_set(ARRAY[1, 2], 5, 'planted', 'NaN');
SELECT * FROM mtdpp_complete_set(ARRAY[1, 2], 5, 'planted', NULL);
SELECT * FROM mtdpp_complete_set(ARRAY[1, 2], 0, 'planted');
SELECT * FROM mtdpp_complete_set(ARRAY[1, 2], NULL, 'planted');
SELECT * FROM mtdpp_complete_set(NULL, 5, 'planted');
SELECT * FROM mtdpp_complete_set(ARRAY[1, NULL], 5, 'planted');
SELECT * FROM mtdpp_complete_set(ARRAY[1, 2], 5, 'no_such_model');
SELECT * FROM mtdpp_complete_set(ARRAY[1, 2], 5, 'planted', 0.5, allowed => ARRAY[[1, 2], [3, 4]]);
