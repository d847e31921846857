-- mtdpp_similar: the items most like an item, by each kind's own measure,
-- checked against the same measure computed in SQL from mtdpp.items, for a
-- choice of kinds, one of each measure (every kind: conformance.sql).
SELECT t.kind, t.items
FROM unnest(ARRAY['itemknn', 'ease', 'rules', 'popularity', 'multitask', 'lowrank', 'poisson',
                  'fm', 'bayesian_lowrank', 'gru', 'hybrid']) k(kind),
     mtdpp_train('sim_' || k.kind, 'train_lines', kind => k.kind, seed => 3, position_col => 'pos',
                 epochs => CASE WHEN k.kind IN ('itemknn', 'ease', 'rules', 'popularity', 'poisson') THEN NULL ELSE 6 END) t
ORDER BY t.kind;
-- each stored item's row, by model name
CREATE VIEW sim_items AS
SELECT m.name, i.item_id, i.factors, i.neighbors, i.neighbor_weights
FROM mtdpp.models m JOIN mtdpp.items i USING (model_id) WHERE m.active;
-- the neighbour lists (itemknn, ease): the weights of the item's list, best first, ties by item id
CREATE FUNCTION sim_listed(model text, item int) RETURNS TABLE (item_id int, similarity float8)
LANGUAGE sql AS $$
    SELECT n, w::float8 FROM sim_items s, unnest(s.neighbors, s.neighbor_weights) u(n, w)
    WHERE s.name = model AND s.item_id = item AND n <> item
$$;
-- rules: the consequents of the rules {item} -> c, each a positive weight
-- that no antecedent item (a negative weight) precedes in the item's list
CREATE FUNCTION sim_rules(model text, item int) RETURNS TABLE (item_id int, similarity float8)
LANGUAGE sql AS $$
    SELECT n, w FROM (
        SELECT n, w::float8 AS w, lag(w) OVER (ORDER BY o) AS before
        FROM sim_items s, unnest(s.neighbors, s.neighbor_weights) WITH ORDINALITY u(n, w, o)
        WHERE s.name = model AND s.item_id = item) r
    WHERE w > 0 AND (before IS NULL OR before > 0) AND n <> item
$$;
-- the kinds with factors: the cosine of the factors arrays
CREATE FUNCTION sim_cosine(model text, item int) RETURNS TABLE (item_id int, similarity float8)
LANGUAGE sql AS $$
    SELECT o.item_id,
           CASE WHEN ni * nj > 0 THEN dot / sqrt(ni * nj) ELSE 0 END
    FROM sim_items me CROSS JOIN LATERAL (SELECT sum(x * x) AS ni FROM unnest(me.factors) x) a,
         sim_items o CROSS JOIN LATERAL (
            SELECT sum(x::float8 * y) AS dot, sum(y::float8 * y) AS nj
            FROM unnest(me.factors, o.factors) u(x, y)) b
    WHERE me.name = model AND o.name = model AND me.item_id = item AND o.item_id <> item
$$;
-- The list kinds: exactly the list, sorted (ties by item id).
SELECT m, item,
       ARRAY(SELECT item_id FROM mtdpp_similar(item, 8, m) ORDER BY rank)
         = ARRAY(SELECT item_id FROM (SELECT * FROM sim_listed(m, item) WHERE m <> 'sim_rules'
                                      UNION ALL SELECT * FROM sim_rules(m, item) WHERE m = 'sim_rules') e
                 ORDER BY similarity DESC, item_id LIMIT 8) AS same_items,
       (SELECT bool_and(s.similarity = e.similarity)
        FROM mtdpp_similar(item, 8, m) s
        JOIN (SELECT * FROM sim_listed(m, item) WHERE m <> 'sim_rules'
              UNION ALL SELECT * FROM sim_rules(m, item) WHERE m = 'sim_rules') e USING (item_id)) AS same_weights
FROM unnest(ARRAY['sim_itemknn', 'sim_ease', 'sim_rules']) m, unnest(ARRAY[1, 11, 37]) item
ORDER BY m, item;
SELECT * FROM mtdpp_similar(11, 5, 'sim_itemknn');
-- a list shorter than k: only the items it holds
SELECT count(*) AS rows, (SELECT count(*) FROM sim_listed('sim_itemknn', 11)) AS listed
FROM mtdpp_similar(11, 50, 'sim_itemknn');
-- The factor kinds: the cosine of the item factors, best first; no item
-- left out is more alike than the last one returned
SELECT m,
       count(*) AS rows,
       bool_and(abs(s.similarity - e.similarity) < 1e-6) AS same_cosines,
       bool_and(s.similarity BETWEEN -1 - 1e-9 AND 1 + 1e-9) AS cosines,
       min(s.similarity) >= (SELECT max(e2.similarity) - 1e-6 FROM sim_cosine(m, 23) e2
                             WHERE e2.item_id NOT IN (SELECT item_id FROM mtdpp_similar(23, 10, m))) AS the_best,
       bool_and(s.similarity <= coalesce((SELECT p.similarity FROM mtdpp_similar(23, 10, m) p
                                          WHERE p.rank = s.rank - 1 AND (m <> 'sim_hybrid' OR p.rank > (SELECT count(*) FROM sim_listed(m, 23)))),
                                2)) AS ordered
FROM unnest(ARRAY['sim_multitask', 'sim_lowrank', 'sim_poisson', 'sim_fm', 'sim_bayesian_lowrank', 'sim_gru', 'sim_hybrid']) m,
     mtdpp_similar(23, 10, m) s JOIN sim_cosine(m, 23) e USING (item_id)
WHERE m <> 'sim_hybrid' OR s.rank > (SELECT count(*) FROM sim_listed('sim_hybrid', 23))
GROUP BY m ORDER BY m;
-- the hybrid: the items with evidence first, by their evidence, then the
-- others by the cosine of the DPP's factors
WITH listed AS (SELECT * FROM sim_listed('sim_hybrid', 23)),
     s AS (SELECT * FROM mtdpp_similar(23, 60, 'sim_hybrid'))
SELECT (SELECT count(*) FROM listed) > 0 AS has_evidence,
       ARRAY(SELECT item_id FROM s WHERE rank <= (SELECT count(*) FROM listed) ORDER BY rank)
         = ARRAY(SELECT item_id FROM listed ORDER BY similarity DESC, item_id) AS evidence_first,
       (SELECT bool_and(s.similarity = l.similarity) FROM s JOIN listed l USING (item_id)) AS evidence_weights,
       (SELECT count(*) FROM s) AS every_other_item;
-- Filters, as for mtdpp_complete: only allowed items, never excluded ones;
-- the answer is the unfiltered ranking with them applied
SELECT m,
       ARRAY(SELECT item_id FROM mtdpp_similar(11, 4, m, allowed => ARRAY[11, 12, 15, 17, 18, 20, 33, 999]) ORDER BY rank)
         = ARRAY(SELECT item_id FROM mtdpp_similar(11, 60, m)
                 WHERE item_id = ANY (ARRAY[12, 15, 17, 18, 20, 33]) ORDER BY rank LIMIT 4) AS allowed_ok,
       ARRAY(SELECT item_id FROM mtdpp_similar(11, 4, m, excluded => ARRAY[14, 15, 999]) ORDER BY rank)
         = ARRAY(SELECT item_id FROM mtdpp_similar(11, 60, m)
                 WHERE item_id NOT IN (14, 15) ORDER BY rank LIMIT 4) AS excluded_ok,
       ARRAY(SELECT item_id FROM mtdpp_similar(11, 4, m, allowed => ARRAY[14, 15, 16, 33], excluded => ARRAY[15]) ORDER BY rank)
         = ARRAY(SELECT item_id FROM mtdpp_similar(11, 60, m)
                 WHERE item_id IN (14, 16, 33) ORDER BY rank LIMIT 4) AS both_ok,
       (SELECT count(*) FROM mtdpp_similar(11, 4, m, allowed => '{}')) AS none_allowed
FROM unnest(ARRAY['sim_itemknn', 'sim_rules', 'sim_multitask', 'sim_hybrid']) m ORDER BY m;
-- never the item itself, whatever the kind
SELECT bool_and(s.item_id <> 7) AS never_the_item, count(DISTINCT m) AS kinds
FROM unnest(ARRAY['sim_itemknn', 'sim_ease', 'sim_rules', 'sim_multitask', 'sim_lowrank', 'sim_poisson', 'sim_fm',
                  'sim_bayesian_lowrank', 'sim_gru', 'sim_hybrid']) m, mtdpp_similar(7, 60, m) s;
-- ranks run from 1; the default model answers when none is named
SELECT array_agg(rank ORDER BY rank) AS ranks FROM mtdpp_similar(11, 3, 'sim_fm');
SET mtdpp.model = 'sim_itemknn';
SELECT array_agg(item_id ORDER BY rank) = ARRAY(SELECT item_id FROM mtdpp_similar(11, 3, 'sim_itemknn') ORDER BY rank) AS default_model
FROM mtdpp_similar(11, 3);
RESET mtdpp.model;
-- Errors: a kind without a measure, an item the model does not know, k, NULLs
SELECT * FROM mtdpp_similar(11, 5, 'sim_popularity');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_similar(999, 5, 'sim_itemknn');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_similar(11, 0, 'sim_itemknn');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_similar(11, NULL, 'sim_itemknn');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_similar(NULL, 5, 'sim_itemknn');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_similar(11, 5, 'no_such_model');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_similar(11, 5, 'sim_itemknn', allowed => ARRAY[1, NULL]);
\echo :LAST_ERROR_SQLSTATE
SELECT mtdpp_drop(name) FROM mtdpp.models WHERE name LIKE 'sim\_%' GROUP BY name ORDER BY name;
