-- Every bad input is an ERROR with its own SQLSTATE (echoed after it),
-- naming the values.
\set VERBOSITY default
-- baskets
SELECT * FROM mtdpp_complete(NULL, 5);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_complete(ARRAY[[1, 2], [3, 4]], 5);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_complete(ARRAY[1, NULL, 3], 5);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_score(ARRAY[1, 2], NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_score(ARRAY[1, 2], ARRAY[3, NULL]);
\echo :LAST_ERROR_SQLSTATE
-- k
SELECT * FROM mtdpp_complete(ARRAY[1, 2], 0);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_complete(ARRAY[1, 2], -3);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_complete(ARRAY[1, 2], NULL);
\echo :LAST_ERROR_SQLSTATE
-- unknown models
SELECT * FROM mtdpp_complete(ARRAY[1, 2], 5, 'no_such_model');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_evaluate('no_such_model', 'test_baskets');
\echo :LAST_ERROR_SQLSTATE
SELECT mtdpp_activate('no_such_model');
\echo :LAST_ERROR_SQLSTATE
SELECT mtdpp_activate('planted', 99);
\echo :LAST_ERROR_SQLSTATE
SELECT mtdpp_drop('no_such_model');
\echo :LAST_ERROR_SQLSTATE
SELECT mtdpp_rename('no_such_model', 'x');
\echo :LAST_ERROR_SQLSTATE
SELECT mtdpp_rename('planted', 'pop');
\echo :LAST_ERROR_SQLSTATE
-- hyperparameters
SELECT * FROM mtdpp_train('x', 'train_lines', params => '{"learning_rat": 0.1}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', params => '{"learning_rate": -1}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', params => '{"negatives": 2.5}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', params => '{"optimizer": "sgd"}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', params => '{"l2": "high"}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', params => '[1, 2]');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', params => '{"rank": 8}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', rank => 0);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', rank => 5000);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', epochs => 0);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'deep');
\echo :LAST_ERROR_SQLSTATE
-- NULL is no kind
SELECT * FROM mtdpp_train('x', 'train_lines', kind => NULL);
\echo :LAST_ERROR_SQLSTATE
-- a softmax over the one score of a swapped basket would learn nothing
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'logistic', params => '{"loss": "softmax"}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', target => 'first');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', target => 'last');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('', 'train_lines');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train(NULL, 'train_lines');
\echo :LAST_ERROR_SQLSTATE
-- sources
SELECT * FROM mtdpp_train('x', 'no_such_table');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', NULL);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', order_col => 'basket');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', item_col => 'nope');
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE empty_lines (order_id int, item_id int);
SELECT * FROM mtdpp_train('x', 'empty_lines');
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE single_lines AS SELECT g AS order_id, g AS item_id FROM generate_series(1, 10) g;
SELECT * FROM mtdpp_train('x', 'single_lines');
\echo :LAST_ERROR_SQLSTATE
-- the same refusal for every kind that learns from items bought together;
-- those that count items alone (the trait single_items) train: each kind of
-- the registry as its traits say, a NOTICE for any other outcome
DO $$
DECLARE
    k record;
    outcome text;
    n integer := 0;
BEGIN
    FOR k IN SELECT name, traits FROM mtdpp_kinds() ORDER BY number LOOP
        BEGIN
            PERFORM mtdpp_train('x_single_kind', 'single_lines', kind => k.name, activate => false,
                                position_col => CASE WHEN 'add_order' = ANY (k.traits) THEN 'item_id' END);
            outcome := 'trained';
        EXCEPTION WHEN invalid_parameter_value THEN
            GET STACKED DIAGNOSTICS outcome = MESSAGE_TEXT;
        END;
        IF outcome IS DISTINCT FROM (CASE WHEN 'single_items' = ANY (k.traits) THEN 'trained'
                                          ELSE 'no basket of the training data has two or more items' END) THEN
            RAISE NOTICE '%: %', k.name, outcome;
        END IF;
        n := n + 1;
    END LOOP;
    RAISE NOTICE 'every kind of the registry: %', n = (SELECT count(*) FROM mtdpp_kinds());
    PERFORM mtdpp_drop('x_single_kind') WHERE EXISTS (SELECT FROM mtdpp.models WHERE name = 'x_single_kind');
END
$$;
SELECT name, kind, items, baskets FROM mtdpp_train('x_single', 'single_lines', kind => 'popularity');
SELECT mtdpp_drop('x_single');
CREATE TABLE numeric_items AS SELECT 1 AS order_id, 1.5::numeric AS item_id;
SELECT * FROM mtdpp_train('x', 'numeric_items');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_evaluate('planted', 'train_lines');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_evaluate('planted', 'test_baskets', catalog_size => 10);
\echo :LAST_ERROR_SQLSTATE
CREATE VIEW no_baskets AS SELECT basket, held_out FROM test_baskets WHERE false;
SELECT * FROM mtdpp_evaluate('planted', 'no_baskets');
\echo :LAST_ERROR_SQLSTATE
-- models too large for maintenance_work_mem
SET maintenance_work_mem = '1MB';
SELECT * FROM mtdpp_train('x', 'train_lines', rank => 1024);
\echo :LAST_ERROR_SQLSTATE
-- order lines beyond maintenance_work_mem: 8 bytes each without positions
-- (order ids of 32 bits), 16 with them
SELECT length(mtdpp_fit(g / 10, g % 97, NULL::int)) FROM generate_series(1, 200000) g;
\echo :LAST_ERROR_SQLSTATE
SELECT length(mtdpp_fit(g / 10, g % 97, g % 10)) FROM generate_series(1, 200000) g;
\echo :LAST_ERROR_SQLSTATE
-- ease: an items x items matrix of reals, 700 items in 1 MB
SELECT length(mtdpp_fit(g / 3, g % 700, NULL::int, '{"kind": "ease"}')) FROM generate_series(1, 3000) g;
\echo :LAST_ERROR_SQLSTATE
-- on neighbourhoods: 8 bytes for each item and each of its co-occurring items kept
SELECT length(mtdpp_fit(g / 3, g % 700, NULL::int, '{"kind": "ease", "ease_solver": "neighborhood"}')) FROM generate_series(1, 3000) g;
\echo :LAST_ERROR_SQLSTATE
RESET maintenance_work_mem;
-- ease: lambda below 0, a lambda that leaves X^T X + lambda I singular
-- (items 1 and 2 always bought together), no neighbours kept
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'ease', params => '{"lambda": -1}');
\echo :LAST_ERROR_SQLSTATE
SELECT length(mtdpp_fit(o, i, NULL::int, '{"kind": "ease", "lambda": 0}')) FROM (VALUES (1, 1), (1, 2), (2, 3)) v(o, i);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'ease', params => '{"max_neighbors": 0}');
\echo :LAST_ERROR_SQLSTATE
-- ease_solver: one of three, for the kinds that fit EASE's weights; the
-- exact fit refuses a catalog above 40,000 items
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'ease', params => '{"ease_solver": "fast"}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'itemknn', params => '{"ease_solver": "exact"}');
\echo :LAST_ERROR_SQLSTATE
SELECT length(mtdpp_fit(g / 2, g % 40001, NULL::int, '{"kind": "ease", "ease_solver": "exact"}')) FROM generate_series(1, 80002) g;
\echo :LAST_ERROR_SQLSTATE
-- ease_dropout: a probability up to 0.9, for the kinds that fit EASE's weights
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'ease', params => '{"ease_dropout": 0.95}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'hybrid', params => '{"ease_dropout": -0.1}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'multitask', params => '{"ease_dropout": 0.5}');
\echo :LAST_ERROR_SQLSTATE
-- a diverging fit
-- (the figures in its message vary with the machine's floating point: show the SQLSTATE)
DO $$
BEGIN
    PERFORM * FROM mtdpp_train('x', 'train_lines', epochs => 3,
        params => '{"loss": "logistic", "optimizer": "momentum", "learning_rate": 10, "w": 1e12, "init_scale": 10}');
EXCEPTION WHEN numeric_value_out_of_range THEN
    RAISE NOTICE 'diverged: SQLSTATE %, %', SQLSTATE, split_part(SQLERRM, ':', 1);
END
$$;
-- values that are not models
SELECT mtdpp_save('x', '\x00'::bytea);
\echo :LAST_ERROR_SQLSTATE
SELECT mtdpp_save('x', NULL);
\echo :LAST_ERROR_SQLSTATE
-- model values with bytes after their end, a best epoch outside 0 to the
-- epochs run, a training time that is not a finite non-negative number
-- (header: best_epoch at bytes 41-44, seconds at 57-64, little-endian)
CREATE TABLE bad_blob AS SELECT mtdpp_fit(order_id, item_id, NULL::int, '{"kind": "multitask", "rank": 2, "epochs": 2}') AS b FROM train_lines;
SELECT mtdpp_save('x', b || '\x00'::bytea) FROM bad_blob;
\echo :LAST_ERROR_SQLSTATE
SELECT mtdpp_save('x', overlay(b placing '\x00000080'::bytea from 41 for 4)) FROM bad_blob;
\echo :LAST_ERROR_SQLSTATE
SELECT mtdpp_save('x', overlay(b placing '\x03000000'::bytea from 41 for 4)) FROM bad_blob;
\echo :LAST_ERROR_SQLSTATE
SELECT mtdpp_save('x', overlay(b placing '\x000000000000f0ff'::bytea from 57 for 8)) FROM bad_blob;
\echo :LAST_ERROR_SQLSTATE
SELECT mtdpp_save('x', overlay(b placing '\x000000000000f0bf'::bytea from 57 for 8)) FROM bad_blob;
\echo :LAST_ERROR_SQLSTATE
DROP TABLE bad_blob;
-- a diverse set holds at most 500 items; a ranking (diversity 0) any number
SELECT count(*) FROM mtdpp_complete_set(ARRAY[1, 2], 501, 'planted');
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) FROM mtdpp_complete_set(ARRAY[1, 2], 100000, 'planted', diversity => 1);
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS ranked FROM mtdpp_complete_set(ARRAY[1, 2], 100000, 'planted', diversity => 0);
SELECT count(*) AS chosen FROM mtdpp_complete_set(ARRAY[1, 2], 500, 'planted');
-- numbers beyond double precision: the key, its range and the number in
-- short; seeds over the whole bigint range
SELECT * FROM mtdpp_train('x', 'train_lines', params => '{"learning_rate": 1e400}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', params => '{"l2": -12345678901234567890123456789e300}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', params => '{"learning_rate": 1e-400}');
\echo :LAST_ERROR_SQLSTATE
SELECT length(mtdpp_fit(order_id, item_id, NULL::int, '{"kind": "popularity", "seed": 9223372036854775808}')) FROM train_lines;
\echo :LAST_ERROR_SQLSTATE
SELECT length(mtdpp_fit(order_id, item_id, NULL::int, '{"kind": "popularity", "seed": 1.5}')) FROM train_lines;
\echo :LAST_ERROR_SQLSTATE
SELECT kind, items FROM mtdpp_train('seed_max', 'train_lines', kind => 'popularity', seed => 9223372036854775807);
SELECT kind, items FROM mtdpp_train('seed_min', 'train_lines', kind => 'popularity', seed => -9223372036854775808);
SELECT name, hyperparams->'seed' AS seed FROM mtdpp.models WHERE name LIKE 'seed\_%' ORDER BY name;
SELECT mtdpp_drop('seed_max'), mtdpp_drop('seed_min');
-- keys that do not apply to the kind; no validation slice for a kind that
-- chooses on one
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'itemknn', params => '{"lambda": 10}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'popularity', params => '{"learning_rate": 0.1}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'ease', warm_start => true);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'multitask', params => '{"max_neighbors": 10}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'hybrid', params => '{"validation_fraction": 0}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', params => '{"validation_baskets": 0}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'multitask', params => '{"validation_baskets": 0}');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'ease', params => '{"validation_fraction": 0}');
\echo :LAST_ERROR_SQLSTATE
-- (a rank given trains every epoch without a slice; ease with a lambda
-- given needs none; the kinds without factors ignore rank and epochs)
SELECT items, best_epoch FROM mtdpp_train('noslice', 'train_lines', rank => 2, epochs => 2, kind => 'multitask', params => '{"validation_fraction": 0}');
SELECT items FROM mtdpp_train('noslice', 'train_lines', kind => 'ease', params => '{"lambda": 10, "validation_fraction": 0}');
SELECT items FROM mtdpp_train('noslice', 'train_lines', kind => 'popularity', rank => 8, epochs => 3);
SELECT mtdpp_drop('noslice');
-- item columns: a domain over an integer type is its base type; a bigint
-- beyond integer is named
CREATE DOMAIN item_number AS int CHECK (VALUE > 0);
CREATE TABLE domain_lines AS SELECT order_id, item_id::item_number AS item_id FROM train_lines;
SELECT kind, items FROM mtdpp_train('domain_items', 'domain_lines', kind => 'popularity');
SELECT mtdpp_drop('domain_items');
CREATE TABLE wide_lines AS SELECT order_id, item_id::bigint AS item_id, pos::bigint AS pos FROM train_lines;
SELECT kind, items FROM mtdpp_train('wide_items', 'wide_lines', kind => 'popularity', position_col => 'pos');
SELECT mtdpp_drop('wide_items');
-- bigint keys beyond integer: the model's items are bigint
INSERT INTO wide_lines VALUES (1, 3000000000, 1);
SELECT kind, items FROM mtdpp_train('x', 'wide_lines', kind => 'popularity');
SELECT item_id FROM mtdpp_complete(ARRAY[]::bigint[], 1, 'x');
SELECT item_type FROM mtdpp_models WHERE name = 'x';
SELECT mtdpp_drop('x');
UPDATE wide_lines SET item_id = 1, pos = -2147483649 WHERE item_id = 3000000000;
SELECT kind, items FROM mtdpp_train('x', 'wide_lines', kind => 'popularity', position_col => 'pos');
\echo :LAST_ERROR_SQLSTATE
DROP TABLE domain_lines, wide_lines;
DROP DOMAIN item_number;
-- names, keys and values of 100,000 characters are quoted in part
SELECT * FROM mtdpp_complete(ARRAY[1, 2], 5, repeat('m', 100000));
\echo :LAST_ERROR_SQLSTATE
SELECT mtdpp_activate(repeat('m', 100000), 2);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train(repeat('n', 100000), 'train_lines');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', kind => repeat('k', 100000));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', target => repeat('t', 100000));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', item_col => repeat('c', 100000));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', params => jsonb_build_object(repeat('p', 100000), 1));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', params => jsonb_build_object('optimizer', repeat('o', 100000)));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', params => jsonb_build_object('l2', ('1' || repeat('0', 100000))::numeric));
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_evaluate('planted', 'test_baskets', basket_col => repeat('b', 100000));
\echo :LAST_ERROR_SQLSTATE
-- nothing half-written was left behind
SELECT count(*) AS models_named_x FROM mtdpp.models WHERE name = 'x';
-- every basket holds every item: nothing to complete, refused before any fit
CREATE TABLE whole_catalog_lines AS
SELECT o AS order_id, i AS item_id FROM generate_series(1, 300) o, generate_series(1, 3) i;
SELECT * FROM mtdpp_train('x', 'whole_catalog_lines');
SELECT * FROM mtdpp_train('x', 'whole_catalog_lines', kind => 'fm');
SELECT kind, items, baskets FROM mtdpp_train('x_whole', 'whole_catalog_lines', kind => 'popularity');
SELECT mtdpp_drop('x_whole');
DROP TABLE whole_catalog_lines;
-- the kind decides every other key: null is no default there
SELECT length(mtdpp_fit(o, i, NULL::int, '{"kind": null}')) FROM (VALUES (1, 1), (1, 2), (2, 3)) v(o, i);
-- text keys under a nondeterministic collation would be one item in
-- training and two when completing: refused (such collations need ICU,
-- which a server may be built without)
DO $$
BEGIN
    BEGIN
        CREATE COLLATION case_blind (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
    EXCEPTION WHEN feature_not_supported THEN
        RAISE NOTICE 'a nondeterministic item column: refused, or no such collation on this server';
        RETURN;
    END;
    CREATE TABLE blind_lines (order_id int, sku text COLLATE case_blind);
    INSERT INTO blind_lines VALUES (1, 'a'), (1, 'B'), (2, 'A'), (2, 'c');
    BEGIN
        PERFORM mtdpp_train('x', 'blind_lines', item_col => 'sku');
        RAISE NOTICE 'a nondeterministic item column: trained';
    EXCEPTION WHEN feature_not_supported THEN
        RAISE NOTICE 'a nondeterministic item column: refused, or no such collation on this server';
    END;
    DROP TABLE blind_lines;
    DROP COLLATION case_blind;
END
$$;
-- NULL keys of any type are counted, as NULL integer items are
CREATE TABLE null_key_lines (order_id int, sku text);
INSERT INTO null_key_lines VALUES (1, 'a'), (1, 'b'), (2, 'a'), (2, 'c'), (3, NULL), (3, 'd');
SELECT kind, items, baskets FROM mtdpp_train('x_null_keys', 'null_key_lines', item_col => 'sku', kind => 'itemknn');
SELECT mtdpp_drop('x_null_keys');
DROP TABLE null_key_lines;
