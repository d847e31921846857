-- Every kind the registry lists (mtdpp_kinds()) keeps the contract of a kind
-- (src/kinds/README.md): it trains on the planted baskets with small
-- settings, reports its examples and time, stores the keys of every kind
-- and its own but no other kind's, completes, scores as it completes,
-- explains, makes a valid model value, measures similarity or refuses to,
-- and evaluates.  The test names no kind: a new kind is covered by its
-- line in the registry.  Each failing property is one row, so the output
-- is the same whatever kinds there are.
-- the registry itself: a name and a number per kind, each once, the default among them
SELECT count(*) > 0 AS kinds_listed, count(DISTINCT name) = count(*) AS names_distinct,
       count(DISTINCT number) = count(*) AS numbers_distinct, bool_and(number >= 0) AS numbers_nonnegative,
       count(*) FILTER (WHERE name = (SELECT default_value::jsonb #>> '{}' FROM mtdpp_hyperparameters()
                                      WHERE key = 'kind')) AS default_listed
FROM mtdpp_kinds();
-- a kind's own keys are among those mtdpp_hyperparameters(kind) lists
SELECT k.name AS kind, o AS key
FROM mtdpp_kinds() k, unnest(k.keys) o
WHERE o NOT IN (SELECT key FROM mtdpp_hyperparameters(k.name));

-- The properties of one kind: a row per failing one, then 'checked'.
CREATE FUNCTION conformance_of(kind_name text, traits text[], own_keys text[])
RETURNS TABLE (property text, problem text) LANGUAGE plpgsql AS $$
DECLARE
    model constant text := 'conformance_' || kind_name;
    copy constant text := 'conformance_value_' || kind_name;
    basket constant integer[] := ARRAY[1, 2, 3];
    taken text[];
    examples bigint;
    seconds float8;
    n integer;
    bad integer;
BEGIN
    SELECT array_agg(key) INTO taken FROM mtdpp_hyperparameters(kind_name);
    BEGIN
        SELECT t.items, t.examples, t.seconds INTO n, examples, seconds
        FROM mtdpp_train(model, 'train_lines', position_col => 'pos', kind => kind_name, rank => 4, epochs => 3, seed => 1) t;
        IF n IS DISTINCT FROM (SELECT count(DISTINCT item_id) FROM train_lines) THEN
            property := 'trains'; problem := format('%s items', n); RETURN NEXT;
        END IF;
        -- the examples it sampled or the lines it counted, and the time it took
        IF NOT (examples > 0 AND seconds > 0) OR
           NOT (SELECT m.n_examples = examples AND m.train_seconds > 0 FROM mtdpp.models m WHERE m.name = model AND m.active) THEN
            property := 'reports examples and seconds'; problem := format('%s examples in %s s', examples, seconds); RETURN NEXT;
        END IF;
    EXCEPTION WHEN OTHERS THEN
        property := 'trains'; problem := SQLERRM; RETURN NEXT;
        RETURN;
    END;
    -- what it stored: its kind, its own keys, no key it does not take
    SELECT count(*) INTO bad FROM mtdpp.models m
    WHERE m.name = model AND m.active AND m.kind = kind_name;
    IF bad <> 1 THEN
        property := 'stores its kind'; problem := format('%s rows', bad); RETURN NEXT;
    END IF;
    SELECT string_agg(o, ', ') INTO problem
    FROM unnest(own_keys) o
    WHERE NOT (SELECT m.hyperparams ? o FROM mtdpp.models m WHERE m.name = model AND m.active);
    IF problem IS NOT NULL THEN
        property := 'stores its own keys'; RETURN NEXT;
    END IF;
    SELECT string_agg(h, ', ') INTO problem
    FROM mtdpp.models m, jsonb_object_keys(m.hyperparams) h
    WHERE m.name = model AND m.active AND h <> ALL (taken)
      AND h IN (SELECT unnest(x.keys) FROM mtdpp_kinds() x);
    IF problem IS NOT NULL THEN
        property := 'stores no other kind''s keys'; RETURN NEXT;
    END IF;
    -- it completes, never with the basket's items, and scores as it completes
    BEGIN
        SELECT count(*), count(*) FILTER (WHERE c.item_id = ANY (basket) OR c.score = 'NaN' OR c.rank NOT BETWEEN 1 AND 5)
        INTO n, bad FROM mtdpp_complete(basket, 5, model) c;
        IF n <> 5 OR bad <> 0 THEN
            property := 'completes'; problem := format('%s items, %s wrong', n, bad); RETURN NEXT;
        END IF;
        SELECT count(*) INTO bad
        FROM mtdpp_complete(basket, 5, model) c
        LEFT JOIN mtdpp_score(basket, (SELECT array_agg(item_id) FROM mtdpp_complete(basket, 5, model)), model) s
            USING (item_id)
        WHERE s.score IS NULL OR NOT (c.score = s.score OR abs(c.score - s.score) <= 1e-6 * (1 + abs(c.score)));
        IF bad <> 0 THEN
            property := 'scores as it completes'; problem := format('%s items differ', bad); RETURN NEXT;
        END IF;
    EXCEPTION WHEN OTHERS THEN
        property := 'completes'; problem := SQLERRM; RETURN NEXT;
    END;
    -- it explains each candidate by the basket's items
    BEGIN
        SELECT count(*) FILTER (WHERE e.basket_item <> ALL (basket) OR e.item_id NOT IN (11, 12) OR e.contribution = 'NaN')
        INTO bad FROM mtdpp_explain(basket, ARRAY[11, 12], model) e;
        IF bad <> 0 THEN
            property := 'explains'; problem := format('%s wrong rows', bad); RETURN NEXT;
        END IF;
    EXCEPTION WHEN OTHERS THEN
        property := 'explains'; problem := SQLERRM; RETURN NEXT;
    END;
    -- its model value, made by the aggregate, is valid: saved, read back, completing
    BEGIN
        PERFORM mtdpp_save(copy, (SELECT mtdpp_fit(order_id, item_id, pos,
                                      jsonb_build_object('kind', kind_name, 'rank', 4, 'epochs', 3, 'seed', 1))
                                  FROM train_lines));
        SELECT count(*) INTO n FROM mtdpp_complete(basket, 5, copy);
        IF n <> 5 THEN
            property := 'makes a valid value'; problem := format('%s items', n); RETURN NEXT;
        END IF;
    EXCEPTION WHEN OTHERS THEN
        property := 'makes a valid value'; problem := SQLERRM; RETURN NEXT;
    END;
    -- similar: the kind's own measure, or a refusal that says so
    BEGIN
        SELECT count(*), count(*) FILTER (WHERE s.item_id = 1 OR s.similarity = 'NaN')
        INTO n, bad FROM mtdpp_similar(1, 5, model) s;
        IF 'similar' <> ALL (traits) THEN
            property := 'similar'; problem := 'answers without a measure'; RETURN NEXT;
        ELSIF n NOT BETWEEN 1 AND 5 OR bad <> 0 THEN
            property := 'similar'; problem := format('%s items, %s wrong', n, bad); RETURN NEXT;
        END IF;
    EXCEPTION
        WHEN feature_not_supported THEN
            IF 'similar' = ANY (traits) THEN
                property := 'similar'; problem := SQLERRM; RETURN NEXT;
            END IF;
        WHEN OTHERS THEN
            property := 'similar'; problem := SQLERRM; RETURN NEXT;
    END;
    -- it evaluates on the held-out baskets
    BEGIN
        SELECT count(*) FILTER (WHERE e.baskets = 100 AND e.mpr BETWEEN 0 AND 100) INTO n
        FROM mtdpp_evaluate(model, 'test_baskets') e;
        IF n <> 1 THEN
            property := 'evaluates'; problem := 'no valid row'; RETURN NEXT;
        END IF;
    EXCEPTION WHEN OTHERS THEN
        property := 'evaluates'; problem := SQLERRM; RETURN NEXT;
    END;
    property := 'checked'; problem := NULL; RETURN NEXT;
END
$$;
CREATE TABLE conformance AS
SELECT k.name AS kind, c.property, c.problem
FROM mtdpp_kinds() k, LATERAL conformance_of(k.name, k.traits, k.keys) c;
-- no failing property, and every kind of the registry checked
SELECT kind, property, problem FROM conformance WHERE property <> 'checked' ORDER BY kind, property;
SELECT (SELECT count(*) FROM conformance WHERE property = 'checked') = (SELECT count(*) FROM mtdpp_kinds())
       AS every_kind_checked;
-- A model row of a kind the registry does not list is refused where it is read.
SELECT items FROM mtdpp_train('conformance_unknown', 'train_lines', rank => 4, epochs => 1,
                              kind => (SELECT name FROM mtdpp_kinds() ORDER BY number LIMIT 1));
UPDATE mtdpp.models SET kind = 'no_such_kind' WHERE name = 'conformance_unknown';
\set VERBOSITY default
SELECT count(*) FROM mtdpp_complete(ARRAY[1, 2, 3], 5, 'conformance_unknown');
\set VERBOSITY terse
-- two models of each kind, and the one above
SELECT count(*) = 2 * (SELECT count(*) FROM mtdpp_kinds()) + 1 AS every_model_dropped
FROM (SELECT mtdpp_drop(m.name) FROM (SELECT DISTINCT name FROM mtdpp.models WHERE name LIKE 'conformance\_%') m) d;
DROP TABLE conformance;
DROP FUNCTION conformance_of(text, text[], text[]);
