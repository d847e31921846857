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
CREATE TABLE text_items AS SELECT 1 AS order_id, 'apple'::text AS item_id;
SELECT * FROM mtdpp_train('x', 'text_items');
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
RESET maintenance_work_mem;
-- ease: lambda below 0, a lambda that leaves X^T X + lambda I singular
-- (items 1 and 2 always bought together), no neighbours kept
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'ease', params => '{"lambda": -1}');
\echo :LAST_ERROR_SQLSTATE
SELECT length(mtdpp_fit(o, i, NULL::int, '{"kind": "ease", "lambda": 0}')) FROM (VALUES (1, 1), (1, 2)) v(o, i);
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'ease', params => '{"max_neighbors": 0}');
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
-- nothing half-written was left behind
SELECT count(*) AS models_named_x FROM mtdpp.models WHERE name = 'x';
