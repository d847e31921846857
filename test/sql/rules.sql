-- The kind rules: association rules mined from the training baskets.
-- Thresholds given: mined as asked, no validation slice needed.
SELECT items, baskets, examples FROM mtdpp_train('rules_given', 'train_lines', kind => 'rules',
    params => '{"min_support": 0.02, "min_confidence": 0.3, "max_antecedent": 3}');
SELECT hyperparams -> 'min_support' AS min_support, hyperparams -> 'min_confidence' AS min_confidence,
       hyperparams -> 'max_antecedent' AS max_antecedent, rank
FROM mtdpp.models WHERE name = 'rules_given';
-- mtdpp_rules: support, confidence and lift recomputed in SQL from the training lines
CREATE TEMP TABLE rule_baskets AS
SELECT order_id, array_agg(DISTINCT item_id) AS items FROM train_lines GROUP BY order_id;
WITH n AS (SELECT count(*)::float8 AS n FROM rule_baskets),
     x AS (SELECT r.*,
                  (SELECT count(*) FROM rule_baskets b WHERE b.items @> (r.antecedent || r.consequent)) AS n_rule,
                  (SELECT count(*) FROM rule_baskets b WHERE b.items @> r.antecedent) AS n_ante,
                  (SELECT count(*) FROM rule_baskets b WHERE r.consequent = ANY (b.items)) AS n_cons
           FROM mtdpp_rules('rules_given') r)
SELECT count(*) > 50 AS many, max(cardinality(antecedent)) AS longest,
       bool_and(abs(support - n_rule / n.n) < 1e-12) AS same_support,
       bool_and(abs(confidence - n_rule::float8 / n_ante) < 1e-12) AS same_confidence,
       bool_and(abs(lift - (n_rule::float8 / n_ante) / (n_cons / n.n)) < 1e-9) AS same_lift,
       bool_and(n_rule >= 0.02 * n.n AND n_rule::float8 / n_ante >= 0.3) AS above_thresholds,
       bool_and(NOT r.consequent = ANY (antecedent)) AS consequent_outside
FROM x r, n;
-- every rule of one item above the thresholds is there (none is dominated)
WITH n AS (SELECT count(*)::float8 AS n FROM rule_baskets),
     f AS (SELECT i, count(*) AS n FROM rule_baskets, unnest(items) i GROUP BY i),
     p AS (SELECT a, c, count(*) AS n FROM rule_baskets, unnest(items) a, unnest(items) c
           WHERE a <> c GROUP BY a, c),
     expected AS (SELECT ARRAY[p.a] AS antecedent, p.c AS consequent FROM p JOIN f ON f.i = p.a, n
                  WHERE p.n >= 0.02 * n.n AND p.n::float8 / f.n >= 0.3)
SELECT (SELECT count(*) FROM expected) AS expected,
       (SELECT count(*) FROM (SELECT antecedent, consequent FROM expected
                              EXCEPT SELECT antecedent, consequent FROM mtdpp_rules('rules_given')) d) AS missing,
       (SELECT count(*) FROM mtdpp_rules('rules_given') WHERE cardinality(antecedent) = 1) AS listed;
-- a longer rule is kept only when more confident than every rule from part of its antecedent
SELECT count(*) AS longer, bool_and(r.confidence > s.best) AS more_confident
FROM mtdpp_rules('rules_given') r,
     LATERAL (SELECT max(q.confidence) AS best FROM mtdpp_rules('rules_given') q
              WHERE q.consequent = r.consequent AND q.antecedent <@ r.antecedent
                AND cardinality(q.antecedent) < cardinality(r.antecedent)) s
WHERE cardinality(r.antecedent) > 1;
-- a score is 1 + the best confidence of a rule that fires, else below 0, by popularity
WITH s AS (SELECT * FROM mtdpp_score(ARRAY[1, 2, 3], ARRAY(SELECT generate_series(1, 60)), 'rules_given')),
     best AS (SELECT consequent, max(confidence) AS conf FROM mtdpp_rules('rules_given')
              WHERE antecedent <@ ARRAY[1, 2, 3] GROUP BY consequent)
SELECT count(*) FILTER (WHERE s.score IS NULL) AS basket_items,
       count(*) FILTER (WHERE b.conf IS NOT NULL) AS fired,
       bool_and(abs(s.score - 1 - b.conf) < 1e-6) FILTER (WHERE b.conf IS NOT NULL) AS one_plus_confidence,
       bool_and(s.score < 0 AND s.score > -1) FILTER (WHERE b.conf IS NULL AND s.score IS NOT NULL) AS unfired_below
FROM s LEFT JOIN best b ON b.consequent = s.item_id;
-- mtdpp_explain: the rule that fired, its confidence as the contribution
SELECT e.item_id, array_agg(e.basket_item ORDER BY e.basket_item) AS antecedent,
       round(min(e.contribution)::numeric, 4) AS confidence,
       bool_and(abs(e.contribution - r.confidence) < 1e-6) AS as_listed
FROM mtdpp_explain(ARRAY[11, 14, 17], ARRAY(SELECT item_id FROM mtdpp_complete(ARRAY[11, 14, 17], 3, 'rules_given')),
                   'rules_given') e
JOIN LATERAL (SELECT max(q.confidence) AS confidence FROM mtdpp_rules('rules_given') q
              WHERE q.consequent = e.item_id AND q.antecedent <@ ARRAY[11, 14, 17]) r ON true
GROUP BY e.item_id ORDER BY e.item_id;
-- no rule fires: no row
SELECT count(*) AS rows FROM mtdpp_explain(ARRAY[1], ARRAY[59], 'rules_given');

-- Defaults: the thresholds chosen on a validation slice of the training baskets, and stored
SELECT items, baskets FROM mtdpp_train('rules_default', 'train_lines', kind => 'rules');
SELECT (hyperparams ->> 'min_support')::float8 > 0 AS support, (hyperparams ->> 'min_confidence')::float8 >= 0 AS confidence,
       (hyperparams ->> 'max_antecedent')::int BETWEEN 1 AND 3 AS antecedent
FROM mtdpp.models WHERE name = 'rules_default';
SELECT * FROM mtdpp_train('rules_pop', 'train_lines', kind => 'popularity') \gset
SELECT r.mpr > p.mpr + 10 AS beats_popularity, r.precision_at_5 > p.precision_at_5 AS sharper
FROM mtdpp_evaluate('rules_default', 'test_baskets') r, mtdpp_evaluate('rules_pop', 'test_baskets') p;
-- the top k is the full ranking by mtdpp_score (ties by item id), on 250 baskets, with and without filters
CREATE TEMP TABLE rank_baskets AS
SELECT order_id, array_agg(item_id ORDER BY pos) AS basket FROM lines WHERE order_id <= 250 GROUP BY order_id;
CREATE TEMP TABLE full_ranking AS
SELECT b.order_id, s.item_id, s.score,
       row_number() OVER (PARTITION BY b.order_id ORDER BY s.score DESC, s.item_id) AS rank
FROM rank_baskets b, mtdpp_score(b.basket, ARRAY(SELECT generate_series(1, 60)), 'rules_default') s
WHERE s.score IS NOT NULL;
SELECT count(DISTINCT order_id) AS baskets, bool_and(score > -1 AND score < 3) AS finite FROM full_ranking;
SELECT count(*) AS differences FROM (
    (SELECT b.order_id, c.item_id, c.rank FROM rank_baskets b, mtdpp_complete(b.basket, 10, 'rules_default') c
     EXCEPT SELECT order_id, item_id, rank FROM full_ranking WHERE rank <= 10)
    UNION ALL
    (SELECT order_id, item_id, rank FROM full_ranking WHERE rank <= 10
     EXCEPT SELECT b.order_id, c.item_id, c.rank FROM rank_baskets b, mtdpp_complete(b.basket, 10, 'rules_default') c)) d;
SELECT count(*) AS differences FROM (
    (SELECT b.order_id, c.item_id, c.rank
     FROM rank_baskets b, mtdpp_complete(b.basket, 5, 'rules_default', excluded => ARRAY[1, 11, 21, 31, 41, 51]) c
     EXCEPT SELECT order_id, item_id, row_number() OVER (PARTITION BY order_id ORDER BY rank)
            FROM full_ranking WHERE item_id <> ALL (ARRAY[1, 11, 21, 31, 41, 51]))
    UNION ALL
    (SELECT b.order_id, c.item_id, c.rank
     FROM rank_baskets b, mtdpp_complete(b.basket, 3, 'rules_default', allowed => ARRAY[2, 12, 22, 32, 42, 52, 5]) c
     EXCEPT SELECT order_id, item_id, row_number() OVER (PARTITION BY order_id ORDER BY rank)
            FROM full_ranking WHERE item_id = ANY (ARRAY[2, 12, 22, 32, 42, 52, 5]))) d;
-- an empty basket is completed by popularity
SELECT array_agg(c.item_id ORDER BY c.rank) = array_agg(p.item_id ORDER BY p.rank) AS by_popularity
FROM mtdpp_complete('{}', 5, 'rules_default') c JOIN mtdpp_complete('{}', 5, 'rules_pop') p USING (rank);
-- the model travels as a value, and is read back from the tables alike
SELECT mtdpp_save('rules_copy', mtdpp_fit(order_id, item_id, pos, '{"kind": "rules", "min_support": 0.02, "min_confidence": 0.3, "max_antecedent": 3}'))
       IS NOT NULL AS saved FROM train_lines;
SELECT (SELECT count(*) FROM mtdpp_rules('rules_copy')) = (SELECT count(*) FROM mtdpp_rules('rules_given')) AS same_count,
       (SELECT count(*) FROM (SELECT * FROM mtdpp_rules('rules_copy') EXCEPT SELECT * FROM mtdpp_rules('rules_given')) d) AS differences;

-- Bad input: clear errors
SELECT * FROM mtdpp_train('rules_bad', 'train_lines', kind => 'rules', params => '{"min_support": 0}');
SELECT * FROM mtdpp_train('rules_bad', 'train_lines', kind => 'rules', params => '{"min_confidence": 1.5}');
SELECT * FROM mtdpp_train('rules_bad', 'train_lines', kind => 'rules', params => '{"max_antecedent": 4}');
SELECT * FROM mtdpp_train('rules_bad', 'train_lines', kind => 'rules', params => '{"max_antecedent": 1.5}');
SELECT * FROM mtdpp_train('rules_bad', 'train_lines', kind => 'rules', params => '{"lambda": 1}');
SELECT * FROM mtdpp_train('rules_bad', 'train_lines', kind => 'itemknn', params => '{"min_support": 0.1}');
SELECT * FROM mtdpp_train('rules_bad', 'train_lines', kind => 'rules', params => '{"validation_fraction": 0}');
SELECT * FROM mtdpp_rules('rules_pop');
SELECT * FROM mtdpp_rules('no_such_model');
-- more than maintenance_work_mem holds: refused, with a hint
CREATE TABLE many_lines AS
SELECT o AS order_id, (o * 37 + k * k * 101) % 100 AS item_id FROM generate_series(1, 3000) o, generate_series(1, 12) k;
SET maintenance_work_mem = '1MB';
SELECT * FROM mtdpp_train('rules_big', 'many_lines', kind => 'rules',
    params => '{"min_support": 1e-9, "min_confidence": 0, "max_antecedent": 3}');
-- chosen, the thresholds fit
SELECT items FROM mtdpp_train('rules_big', 'many_lines', kind => 'rules');
RESET maintenance_work_mem;
SELECT count(*) > 0 AS some_rules FROM mtdpp_rules('rules_big');
DROP TABLE many_lines;
