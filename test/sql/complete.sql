-- Completions come from the basket's own group, best first, never a basket item.
SELECT count(*) AS n, bool_and(item_id <> ALL (ARRAY[1, 2, 3])) AS none_in_basket,
       bool_and((item_id - 1) / 10 = 0) AS same_group, array_agg(rank ORDER BY rank) AS ranks
FROM mtdpp_complete(ARRAY[1, 2, 3], 5);
SELECT bool_and(score >= lead_score) AS best_first
FROM (SELECT score, lead(score, 1, '-infinity') OVER (ORDER BY rank) AS lead_score
      FROM mtdpp_complete(ARRAY[41, 44], 20)) s;
-- Scores computed by hand on a tiny multi-task model of 4 items at rank 2,
-- with values exact in binary: score(t | B) = ln w + ln det K_t[B], with
-- K_t = V diag(R_t)^2 V^T + diag(D^2 + 1e-6) (the jitter every kernel has).
INSERT INTO mtdpp.models (name, version, kind, active, rank, n_items, n_baskets, n_examples, log_w, hyperparams)
VALUES ('tiny', 1, 'multitask', false, 2, 4, 10, 0, ln(0.01), '{}');
INSERT INTO mtdpp.items (model_id, item_id, popularity, bias, factors, task_factors)
SELECT model_id, i, p, d, f, t FROM mtdpp.models, (VALUES
    (1, 4, 0.125, '{1, 0}'::real[], '{1, 1}'::real[]),
    (2, 3, 0.25, '{0.5, 0.5}', '{2, 0.5}'),
    (3, 2, 0.5, '{0, 1}', '{0.5, 2}'),
    (4, 1, 0.25, '{0.25, -0.5}', '{1.5, 0.75}')) AS v(i, p, d, f, t)
WHERE name = 'tiny';
SELECT mtdpp_activate('tiny') > 0 AS activated;
-- by hand: with a = R_t[1]^2 and c = R_t[2]^2, basket {1, 2} gives
-- K = [[a + 1/64, a/2], [a/2, a/4 + c/4 + 1/16]] + 1e-6 I
WITH hand(t, a, c) AS (VALUES (3, 0.25, 4.0), (4, 2.25, 0.5625))
SELECT h.t AS item_id,
       abs(s.score - (ln(0.01) + ln((h.a + 1.0 / 64 + 1e-6) * (h.a / 4 + h.c / 4 + 1.0 / 16 + 1e-6)
                                    - (h.a / 2) ^ 2))) < 1e-12 AS by_hand
FROM hand h JOIN mtdpp_score(ARRAY[1, 2], ARRAY[3, 4], 'tiny') s ON s.item_id = h.t ORDER BY 1;
-- basket {3}: a one-item kernel, V_3 R_t^2 V_3^T + D_3^2 = R_t[2]^2 + 1/4
SELECT item_id, abs(score - (ln(0.01) + ln(r2 + 0.25 + 1e-6))) < 1e-12 AS by_hand
FROM mtdpp_score(ARRAY[3], ARRAY[1, 2, 4], 'tiny') JOIN (VALUES (1, 1.0), (2, 0.25), (4, 0.5625)) v(item_id, r2) USING (item_id)
ORDER BY 1;
-- and the completion ranks them so
SELECT item_id, rank FROM mtdpp_complete(ARRAY[3], 3, 'tiny');
SELECT mtdpp_drop('tiny');
-- joins with a catalog
CREATE TABLE catalog AS SELECT i AS item_id, 'item ' || i AS label FROM generate_series(1, 60) i;
SELECT count(*) AS joined FROM mtdpp_complete(ARRAY[11, 12], 3) c JOIN catalog USING (item_id);
-- a named model answers like the default one
SELECT (SELECT array_agg(item_id ORDER BY rank) FROM mtdpp_complete(ARRAY[21, 22], 5)) =
       (SELECT array_agg(item_id ORDER BY rank) FROM mtdpp_complete(ARRAY[21, 22], 5, 'planted')) AS same;
-- unknown items are ignored, duplicates count once
SELECT (SELECT array_agg(item_id ORDER BY rank) FROM mtdpp_complete(ARRAY[21, 22], 5)) =
       (SELECT array_agg(item_id ORDER BY rank) FROM mtdpp_complete(ARRAY[21, 9999, 22, 21, -5], 5)) AS ignored;
-- and said: once per statement, for the first basket holding some, however
-- many baskets do; not for a basket the model knows whole, nor for unknown
-- items of the candidate lists, which change no score
SELECT count(*) AS n
FROM (VALUES (ARRAY[21, 22]), (ARRAY[21, 9999]), (ARRAY[31, 8888, 7777, 8888])) b(basket), mtdpp_complete(b.basket, 2) c;
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[21, 22], 2, allowed => ARRAY[23, 24, 9999], excluded => ARRAY[8888]);
SELECT count(*) AS n FROM mtdpp_complete_set(ARRAY[21, 9999], 2, diversity => 0);
-- an empty basket, or one of unknown items only, is completed by popularity
SELECT count(*) AS n FROM mtdpp_complete('{}', 4);
SELECT (SELECT array_agg(item_id ORDER BY rank) FROM mtdpp_complete('{}'::int[], 4)) =
       (SELECT array_agg(item_id ORDER BY rank) FROM mtdpp_complete(ARRAY[1000, 1001], 4)) AS same_fallback;
-- k beyond the catalog returns every other item
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 1000);
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 1);
-- usable per row of a query
SELECT t.order_id, count(c.item_id) AS completions
FROM (SELECT * FROM test_baskets ORDER BY order_id LIMIT 3) t, mtdpp_complete(t.basket, 2) c
GROUP BY t.order_id ORDER BY t.order_id;
-- mtdpp_score: the given candidates, in the given order; NULL for unknown items
SELECT item_id, score IS NULL AS unknown FROM mtdpp_score(ARRAY[1, 2], ARRAY[3, 9999, 55, 3]);
-- an item of the basket is no completion of it: NULL too
SELECT item_id, score IS NULL AS no_score FROM mtdpp_score(ARRAY[1, 2, 2000], ARRAY[2, 3, 1, 2000]);
SELECT abs(s.score - c.score) < 1e-9 AS consistent
FROM mtdpp_complete(ARRAY[31, 32], 1) c JOIN mtdpp_score(ARRAY[31, 32], ARRAY[(SELECT item_id FROM mtdpp_complete(ARRAY[31, 32], 1))]) s USING (item_id);
SELECT count(*) AS n FROM mtdpp_score(ARRAY[1], '{}');
-- baskets of 100 items neither overflow nor underflow
CREATE TABLE big_lines AS
SELECT o AS order_id, ((o * 37 + k * 11) % 300) + 1 AS item_id, k AS pos
FROM generate_series(1, 60) o, generate_series(1, 100) k;
SELECT items, baskets, final_loss = final_loss AS finite_loss
FROM mtdpp_train('big', 'big_lines', rank => 16, epochs => 2, params => '{"positives": 2}', kind => 'multitask');
SELECT count(*) AS n, bool_and(score = score AND score > '-infinity' AND score < 'infinity') AS finite
FROM mtdpp_complete((SELECT array_agg(i) FROM generate_series(1, 100) i), 10, 'big');
SELECT count(*) AS n, bool_and(score = score AND score > '-infinity' AND score < 'infinity') AS finite
FROM mtdpp_complete((SELECT array_agg(i) FROM generate_series(101, 250) i), 10, 'big');
-- the pruned top k (candidates scored a block at a time, by decreasing
-- bound) is exactly the top k of scoring every item, for small and large
-- baskets and k
SELECT n, k, count(*) AS compared,
       bool_and(c.item_id = s.item_id AND abs(c.score - s.score) < 1e-9) AS same_as_brute_force
FROM (VALUES (1), (5), (20), (60)) b(n) CROSS JOIN (VALUES (10), (150)) kk(k)
CROSS JOIN LATERAL (SELECT item_id, score, row_number() OVER (ORDER BY score DESC, item_id) AS rank
                    FROM mtdpp_complete((SELECT array_agg(i) FROM generate_series(1, n) i), k, 'big')) c
JOIN LATERAL (SELECT item_id, score, row_number() OVER (ORDER BY score DESC, item_id) AS rank
              FROM mtdpp_score((SELECT array_agg(i) FROM generate_series(1, n) i),
                               (SELECT array_agg(i) FROM generate_series(n + 1, 300) i), 'big')) s
  ON s.rank = c.rank
GROUP BY n, k ORDER BY n, k;
SELECT mtdpp_drop('big');
-- the same over 2,000 items, where hundreds of candidates reach the first
-- threshold and are scored over several blocks
CREATE TABLE many_lines AS
SELECT o AS order_id, ((o * 7919 + k * k * 104729) % 2000) + 1 AS item_id
FROM generate_series(1, 4000) o, generate_series(1, 8) k;
SELECT items, baskets FROM mtdpp_train('many', 'many_lines', rank => 16, epochs => 1, kind => 'multitask');
-- item 13 with near-zero factors: every candidate's bound given basket {13}
-- is then within float precision of 1, yet they still tell the top k apart
UPDATE mtdpp.items it SET factors = (SELECT array_agg(f * 1e-6 ORDER BY j) FROM unnest(it.factors) WITH ORDINALITY u(f, j))
WHERE model_id = (SELECT model_id FROM mtdpp.models WHERE name = 'many') AND item_id = 13;
SELECT mtdpp_activate('many') > 0 AS reloaded;
SELECT n, k, count(*) AS compared,
       bool_and(c.item_id = s.item_id AND abs(c.score - s.score) < 1e-9) AS same_as_brute_force
FROM (VALUES (1), (3), (10), (30)) b(n) CROSS JOIN (VALUES (5), (50)) kk(k)
CROSS JOIN LATERAL (SELECT item_id, score, row_number() OVER (ORDER BY score DESC, item_id) AS rank
                    FROM mtdpp_complete((SELECT array_agg(i * 13) FROM generate_series(1, n) i), k, 'many')) c
JOIN LATERAL (SELECT item_id, score, row_number() OVER (ORDER BY score DESC, item_id) AS rank
              FROM mtdpp_score((SELECT array_agg(i * 13) FROM generate_series(1, n) i),
                               (SELECT array_agg(i) FROM generate_series(1, 2000) i WHERE i % 13 <> 0 OR i > 13 * n), 'many')) s
  ON s.rank = c.rank
GROUP BY n, k ORDER BY n, k;
SELECT mtdpp_drop('many');
SELECT mtdpp_activate('planted') AS planted_model_id;
-- the pruned top k is exactly the top k of scoring every item
SELECT bool_and(c.item_id = s.item_id AND abs(c.score - s.score) < 1e-9) AS same_as_brute_force
FROM (SELECT item_id, score, rank FROM mtdpp_complete(ARRAY[3, 5, 7], 12)) c
JOIN (SELECT item_id, score, row_number() OVER (ORDER BY score DESC, item_id) AS rank
      FROM mtdpp_score(ARRAY[3, 5, 7], (SELECT array_agg(i) FROM generate_series(1, 60) i WHERE i NOT IN (3, 5, 7)))) s
  USING (rank);
-- mtdpp_explain: for a completion from basket {1, 2, 25} (items 1 and 2 of
-- group 0, item 25 of group 2), the group-0 items drive a group-0 item
SELECT item_id, basket_item, rank FROM mtdpp_explain(ARRAY[1, 2, 25], ARRAY[3], 'planted') ORDER BY rank;
-- contributions are score(t | B) - score(t | B without i), exactly
SELECT bool_and(abs(e.contribution - (f.score - w.score)) < 1e-12) AS loo
FROM mtdpp_explain(ARRAY[1, 2, 25], ARRAY[3, 4, 26], 'planted') e
JOIN mtdpp_score(ARRAY[1, 2, 25], ARRAY[3, 4, 26], 'planted') f USING (item_id)
JOIN LATERAL mtdpp_score(array_remove(ARRAY[1, 2, 25], e.basket_item), ARRAY[e.item_id], 'planted') w USING (item_id);
-- items unknown to the model or of the basket have no rows; unknown basket items neither
SELECT count(*) AS n FROM mtdpp_explain(ARRAY[1, 2, 9999], ARRAY[1, 8888, 3], 'planted');
SELECT count(DISTINCT item_id) AS items, count(*) AS n FROM mtdpp_explain(ARRAY[1, 2, 25], ARRAY[3, 4, 5, 26], 'planted');
-- a one-item basket: leaving its item out leaves the empty basket
SELECT abs(e.contribution - (f.score - z.score)) < 1e-12 AS to_empty
FROM mtdpp_explain(ARRAY[1], ARRAY[3], 'planted') e, mtdpp_score(ARRAY[1], ARRAY[3], 'planted') f,
     mtdpp_score('{}', ARRAY[3], 'planted') z;
SELECT * FROM mtdpp_explain(ARRAY[1], NULL);
-- candidate filters inside the top k: k rows whenever k candidates pass
SELECT array_agg(item_id ORDER BY rank) AS allowed_only
FROM mtdpp_complete(ARRAY[1, 2], 3, 'planted', allowed => ARRAY[5, 55, 9999, 1, 6, 7, 5]);
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 10, 'planted', allowed => ARRAY[1, 2, 3]);
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 10, 'planted', allowed => '{}');
SELECT count(*) AS n, bool_and(item_id NOT IN (3, 4, 5)) AS none_excluded
FROM mtdpp_complete(ARRAY[1, 2], 10, 'planted', excluded => ARRAY[3, 4, 5]);
-- the same as the unfiltered ranking with the others removed, for small and
-- large allowed lists and every kind of path (k below and above the list)
SELECT a.n_allowed, k, bool_and(f.item_id = u.item_id AND abs(f.score - u.score) < 1e-9) AS same_as_filtering_after,
       count(*) AS compared
FROM (VALUES (3), (12), (40)) a(n_allowed) CROSS JOIN (VALUES (2), (10)) kk(k)
CROSS JOIN LATERAL (SELECT item_id, score, rank FROM mtdpp_complete(ARRAY[1, 2, 33], k, 'planted',
        allowed => (SELECT array_agg(i) FROM generate_series(60, 61 - a.n_allowed, -1) i),
        excluded => ARRAY[60])) f
JOIN LATERAL (SELECT item_id, score, row_number() OVER (ORDER BY score DESC, item_id) AS rank
              FROM mtdpp_complete(ARRAY[1, 2, 33], 60, 'planted')
              WHERE item_id BETWEEN 61 - a.n_allowed AND 59) u ON u.rank = f.rank
GROUP BY a.n_allowed, k ORDER BY 1, 2;
SELECT * FROM mtdpp_complete(ARRAY[1], 3, allowed => ARRAY[2, NULL]);
-- from_basket: whether a row's score comes from the basket or from the
-- fallback.  item-kNN: the items on the lists of the basket's items, then
-- the rest; the multi-task DPP: every row once it knows a basket item;
-- popularity: none; an unknown basket: none.
SELECT name, kind FROM mtdpp_train('fb_knn', 'train_lines', kind => 'itemknn');
SELECT name FROM mtdpp_train('fb_pop', 'train_lines', kind => 'popularity');
SELECT from_basket, count(*), min(rank), max(rank),
       bool_and(item_id IN (SELECT unnest(neighbors) FROM mtdpp.items i JOIN mtdpp.models m USING (model_id)
                            WHERE m.name = 'fb_knn' AND m.active AND i.item_id IN (1, 2))) AS on_the_lists
FROM mtdpp_complete(ARRAY[1, 2], 60, 'fb_knn') GROUP BY from_basket ORDER BY from_basket;
SELECT count(*) FILTER (WHERE from_basket) AS from_basket, count(*) AS rows
FROM mtdpp_complete(ARRAY[1, 2], 20, 'planted');
SELECT count(*) FILTER (WHERE from_basket) AS from_basket, count(*) AS rows
FROM mtdpp_complete(ARRAY[1, 2], 20, 'fb_pop');
SELECT count(*) FILTER (WHERE from_basket) AS from_basket, count(*) AS rows
FROM mtdpp_complete(ARRAY[1000, 1001], 5, 'planted');
SELECT count(*) FILTER (WHERE from_basket) AS from_basket, count(*) AS rows
FROM mtdpp_complete_set(ARRAY[1, 2], 5, 'planted', 0.5);
SELECT mtdpp_drop('fb_knn'), mtdpp_drop('fb_pop');
-- A catalog of 8,192 items or more is scanned by decreasing task factors, a
-- chunk at a time, until no later item can enter the top k: the answer is
-- the top k of every item's score (ties by item id), for the DPP alone and
-- with the evidence of the basket's neighbours, which goes first.
CREATE TABLE scan_lines AS
SELECT g / 5 AS order_id, ((hashint4(g / 5) & 65535) % 200 * 50 + (hashint4(g) & 65535) % 50) % 10000 AS item_id
FROM generate_series(0, 199999) g;
SELECT items, kind FROM mtdpp_train('scan_mt', 'scan_lines', kind => 'multitask', rank => 8, epochs => 1);
SELECT items, kind FROM mtdpp_train('scan_hy', 'scan_lines', kind => 'hybrid', rank => 8, epochs => 1);
WITH b AS (SELECT i, ARRAY[(i * 37) % 10000, (i * 101 + 7) % 10000, (i * 13 + 3) % 10000] AS basket FROM generate_series(1, 20) i),
m AS (SELECT unnest(ARRAY['scan_mt', 'scan_hy']) AS model),
every AS (SELECT array_agg(item_id) AS items FROM generate_series(0, 9999) item_id)
SELECT m.model, count(*) AS baskets,
       count(*) FILTER (WHERE (SELECT array_agg(c.item_id ORDER BY c.rank) FROM mtdpp_complete(b.basket, 10, m.model) c) =
                              (SELECT array_agg(s.item_id ORDER BY s.score DESC, s.item_id)
                               FROM (SELECT * FROM mtdpp_score(b.basket, every.items, m.model) s
                                     WHERE s.score IS NOT NULL ORDER BY s.score DESC, s.item_id LIMIT 10) s)) AS same_top_10
FROM b, m, every GROUP BY m.model ORDER BY m.model;
-- The hybrid there answers from candidates, the DPP's top M
-- (mtdpp.candidates) and the basket's neighbours: the same top 10 as every
-- item's score at any M, and with 0, the full scan; at 1, M starts at k.
CREATE FUNCTION scan_same_top_10(p_model text) RETURNS bigint LANGUAGE sql AS $$
    WITH b AS (SELECT i, ARRAY[(i * 37) % 10000, (i * 101 + 7) % 10000, (i * 13 + 3) % 10000] AS basket
               FROM generate_series(1, 20) i),
    every AS (SELECT array_agg(item_id) AS items FROM generate_series(0, 9999) item_id)
    SELECT count(*) FILTER (WHERE (SELECT array_agg(c.item_id ORDER BY c.rank) FROM mtdpp_complete(b.basket, 10, p_model) c) =
                                  (SELECT array_agg(s.item_id ORDER BY s.score DESC, s.item_id)
                                   FROM (SELECT * FROM mtdpp_score(b.basket, every.items, p_model) s
                                         WHERE s.score IS NOT NULL ORDER BY s.score DESC, s.item_id LIMIT 10) s))
    FROM b, every
$$;
SHOW mtdpp.candidates;
SET mtdpp.candidates = 0;
SELECT scan_same_top_10('scan_hy') AS full_scan;
SET mtdpp.candidates = 1;
SELECT scan_same_top_10('scan_hy') AS from_top_k;
SET mtdpp.candidates = 1000;
SELECT scan_same_top_10('scan_hy') AS from_top_1000;
SET mtdpp.candidates = -1;
RESET mtdpp.candidates;
DROP FUNCTION scan_same_top_10(text);
-- The figure scan_hy's NOTICE names counts the DPP that the hybrid holds
-- beside EASE's fit: at it, EASE's weights are fitted (no NOTICE).
SET maintenance_work_mem = '111MB';
SELECT items, kind FROM mtdpp_train('scan_hy_ease', 'scan_lines', kind => 'hybrid', rank => 8, epochs => 1);
RESET maintenance_work_mem;
SELECT mtdpp_drop('scan_mt'), mtdpp_drop('scan_hy'), mtdpp_drop('scan_hy_ease');
DROP TABLE scan_lines;
