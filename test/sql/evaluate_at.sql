-- mtdpp_evaluate_at: hit rate, precision, recall and NDCG at any K, with one
-- or several held-out items a basket, checked against the same figures
-- computed in SQL from mtdpp_score over every item of the model, on a
-- choice of kinds (every kind evaluates: conformance.sql).
SELECT t.kind
FROM unnest(ARRAY['itemknn', 'popularity', 'poisson', 'logistic', 'multitask', 'hybrid']) k(kind),
     mtdpp_train('at_' || k.kind, 'train_lines', kind => k.kind, seed => 3,
                 epochs => CASE WHEN k.kind IN ('multitask', 'hybrid', 'logistic') THEN 3 END) t
ORDER BY t.kind;
-- the last two items of each test basket held out
CREATE VIEW test_pairs AS
SELECT order_id, basket, basket[cardinality(basket) - 1:] AS held_out FROM test_baskets;
-- The protocol in SQL: the context is the basket without its held-out
-- items, every other item of the model a candidate; a held-out item's rank
-- is 1 + the candidates scored above it + half those tied with it; a hit at
-- K is a rank of K or better.
CREATE FUNCTION brute_metrics(model text, source text, held text, ks int[])
RETURNS TABLE (k int, baskets bigint, hit_rate float8, "precision" float8, recall float8, ndcg float8)
LANGUAGE plpgsql AS $f$
BEGIN
    RETURN QUERY EXECUTE format($q$
    WITH t AS (SELECT row_number() OVER () AS id, basket,
                      ARRAY(SELECT DISTINCT h FROM unnest(held) h) AS held
               FROM (SELECT basket, %2$s AS held FROM %1$s) x),
         catalog AS (SELECT array_agg(i.item_id) AS items
                     FROM mtdpp.items i JOIN mtdpp.models m USING (model_id)
                     WHERE m.name = %3$L AND m.active),
         c AS (SELECT id, held, ARRAY(SELECT x FROM unnest(basket) x WHERE x <> ALL (held)) AS context FROM t),
         s AS (SELECT c.id, sc.item_id, sc.score
               FROM c, catalog, mtdpp_score(c.context, catalog.items, %3$L) sc
               WHERE sc.score IS NOT NULL),
         r AS (SELECT c.id, h.item_id,
                      1 + count(*) FILTER (WHERE o.item_id <> h.item_id AND o.score > h.score)
                        + 0.5 * count(*) FILTER (WHERE o.item_id <> h.item_id AND o.score = h.score) AS rank
               FROM c JOIN s h ON h.id = c.id AND h.item_id = ANY (c.held) JOIN s o ON o.id = c.id
               GROUP BY c.id, h.item_id),
         per AS (SELECT kk AS k, c.id, cardinality(c.held) AS nh,
                        count(r.item_id) FILTER (WHERE r.rank <= kk) AS hits,
                        coalesce(sum(ln(2::float8) / ln(r.rank::float8 + 1)) FILTER (WHERE r.rank <= kk), 0) AS dcg,
                        (SELECT sum(ln(2::float8) / ln(i + 1::float8))
                         FROM generate_series(1, least(kk, cardinality(c.held))) i) AS ideal
                 FROM unnest(%4$L::int[]) kk, c LEFT JOIN r ON r.id = c.id
                 GROUP BY kk, c.id, c.held)
    SELECT k, count(*),
           100 * avg((hits > 0)::int::float8), 100 * avg(least(hits, k)::float8 / k),
           100 * avg(hits::float8 / nh), 100 * avg(least(1, dcg / ideal))
    FROM per GROUP BY k ORDER BY k
    $q$, source, held, model, ks);
END
$f$;
-- one held-out item (an integer column) and two (an integer[] column), on
-- kinds that score every candidate the one way (ties too: popularity, item-kNN)
SELECT m, src, e.k, e.baskets,
       e.baskets = b.baskets AND abs(e.hit_rate - b.hit_rate) < 1e-9 AND abs(e.precision - b.precision) < 1e-9
       AND abs(e.recall - b.recall) < 1e-9 AND abs(e.ndcg - b.ndcg) < 1e-9 AS same,
       e.hit_rate > 0 AND e.ndcg < 100 AS informative
FROM unnest(ARRAY['at_itemknn', 'at_popularity', 'at_poisson', 'at_logistic']) m,
     (VALUES ('test_baskets', 'ARRAY[held_out]'), ('test_pairs', 'held_out')) v(src, held),
     mtdpp_evaluate_at(m, src::regclass, ARRAY[1, 2, 5, 10, 20]) e
     JOIN brute_metrics(m, src, held, ARRAY[1, 2, 5, 10, 20]) b USING (k)
ORDER BY m, src, e.k;
-- With one held-out item the hit rate is mtdpp_evaluate's precision_at_K
-- (the share of baskets whose item ranks K or better), recall is the hit
-- rate and precision the hit rate / K: every kind, catalog_size too.
SELECT m, c.catalog_size,
       e5.hit_rate = p.precision_at_5 AND e10.hit_rate = p.precision_at_10 AND e20.hit_rate = p.precision_at_20 AS hit_rate_is_precision_at_k,
       e5.baskets = p.baskets AND e5.recall = e5.hit_rate AND abs(e5.precision - e5.hit_rate / 5) < 1e-9 AS one_item
FROM unnest(ARRAY['at_itemknn', 'at_popularity', 'at_poisson', 'at_logistic', 'at_multitask', 'at_hybrid']) m,
     (VALUES (NULL::int), (100)) c(catalog_size),
     mtdpp_evaluate(m, 'test_baskets', catalog_size => c.catalog_size) p,
     mtdpp_evaluate_at(m, 'test_baskets', catalog_size => c.catalog_size) e5,
     mtdpp_evaluate_at(m, 'test_baskets', catalog_size => c.catalog_size) e10,
     mtdpp_evaluate_at(m, 'test_baskets', catalog_size => c.catalog_size) e20
WHERE e5.k = 5 AND e10.k = 10 AND e20.k = 20
ORDER BY m, c.catalog_size;
-- the values of K: in increasing order, each once
SELECT k, baskets FROM mtdpp_evaluate_at('at_itemknn', 'test_baskets', ARRAY[20, 1, 5, 5]);
-- Items the model never saw rank below every item it knows, tied with one
-- another (catalog_size: the items it never saw); repeated held-out items
-- count once, and a row with none held out counts for nothing.
CREATE VIEW odd_held AS
SELECT * FROM (VALUES (ARRAY[11, 14, 5000], ARRAY[14, 5000, 14]), (ARRAY[11], '{}'::int[]),
                      (ARRAY[11], NULL)) v(basket, held_out);
SELECT k, baskets, hit_rate, precision, recall, ndcg
FROM mtdpp_evaluate_at('at_itemknn', 'odd_held', ARRAY[1, 58, 59]);
SELECT k, baskets, recall FROM mtdpp_evaluate_at('at_itemknn', 'odd_held', ARRAY[59, 60, 100], catalog_size => 100);
-- other column names
CREATE VIEW renamed_pairs AS SELECT basket AS items, held_out AS targets FROM test_pairs;
SELECT k, baskets FROM mtdpp_evaluate_at('at_itemknn', 'renamed_pairs', ARRAY[5], basket_col => 'items', held_out_col => 'targets');
-- Errors: the values of K, the held-out items, the arguments
SELECT * FROM mtdpp_evaluate_at('at_itemknn', 'test_baskets', '{}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_evaluate_at('at_itemknn', 'test_baskets', ARRAY[5, 0]);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_evaluate_at('at_itemknn', 'test_baskets', ARRAY[100001]);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_evaluate_at('at_itemknn', 'test_baskets', ARRAY[5, NULL]);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_evaluate_at('at_itemknn', 'test_baskets', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_evaluate_at('at_itemknn', 'test_baskets', '{{5},{10}}');
\echo :LAST_ERROR_SQLSTATE
CREATE VIEW null_held AS SELECT ARRAY[1, 2] AS basket, ARRAY[3, NULL] AS held_out;
SELECT * FROM mtdpp_evaluate_at('at_itemknn', 'null_held');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_evaluate_at('at_itemknn', 'test_baskets', held_out_col => 'nothing');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_evaluate_at('at_itemknn', 'test_baskets', catalog_size => 10);
\echo :LAST_ERROR_SQLSTATE
CREATE VIEW at_no_baskets AS SELECT basket, held_out FROM test_baskets WHERE false;
SELECT * FROM mtdpp_evaluate_at('at_itemknn', 'at_no_baskets');
\echo :LAST_ERROR_SQLSTATE
SELECT mtdpp_drop(name) FROM mtdpp.models WHERE name LIKE 'at\_%' GROUP BY name ORDER BY name;
