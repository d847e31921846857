-- Every bad input is an ERROR with its own SQLSTATE, naming the values.
\set VERBOSITY default
-- baskets
SELECT * FROM mtdpp_complete(NULL, 5);
SELECT * FROM mtdpp_complete(ARRAY[[1, 2], [3, 4]], 5);
SELECT * FROM mtdpp_complete(ARRAY[1, NULL, 3], 5);
SELECT * FROM mtdpp_score(ARRAY[1, 2], NULL);
SELECT * FROM mtdpp_score(ARRAY[1, 2], ARRAY[3, NULL]);
-- k
SELECT * FROM mtdpp_complete(ARRAY[1, 2], 0);
SELECT * FROM mtdpp_complete(ARRAY[1, 2], -3);
SELECT * FROM mtdpp_complete(ARRAY[1, 2], NULL);
-- unknown models
SELECT * FROM mtdpp_complete(ARRAY[1, 2], 5, 'no_such_model');
SELECT * FROM mtdpp_evaluate('no_such_model', 'test_baskets');
SELECT mtdpp_activate('no_such_model');
SELECT mtdpp_activate('planted', 99);
SELECT mtdpp_drop('no_such_model');
SELECT mtdpp_rename('no_such_model', 'x');
SELECT mtdpp_rename('planted', 'pop');
-- hyperparameters
SELECT * FROM mtdpp_train('x', 'train_lines', params => '{"learning_rat": 0.1}');
SELECT * FROM mtdpp_train('x', 'train_lines', params => '{"learning_rate": -1}');
SELECT * FROM mtdpp_train('x', 'train_lines', params => '{"negatives": 2.5}');
SELECT * FROM mtdpp_train('x', 'train_lines', params => '{"optimizer": "sgd"}');
SELECT * FROM mtdpp_train('x', 'train_lines', params => '{"l2": "high"}');
SELECT * FROM mtdpp_train('x', 'train_lines', params => '[1, 2]');
SELECT * FROM mtdpp_train('x', 'train_lines', params => '{"rank": 8}');
SELECT * FROM mtdpp_train('x', 'train_lines', rank => 0);
SELECT * FROM mtdpp_train('x', 'train_lines', rank => 5000);
SELECT * FROM mtdpp_train('x', 'train_lines', epochs => 0);
SELECT * FROM mtdpp_train('x', 'train_lines', kind => 'deep');
SELECT * FROM mtdpp_train('x', 'train_lines', target => 'first');
SELECT * FROM mtdpp_train('x', 'train_lines', target => 'last');
SELECT * FROM mtdpp_train('', 'train_lines');
SELECT * FROM mtdpp_train(NULL, 'train_lines');
-- sources
SELECT * FROM mtdpp_train('x', 'no_such_table');
SELECT * FROM mtdpp_train('x', NULL);
SELECT * FROM mtdpp_train('x', 'train_lines', order_col => 'basket');
SELECT * FROM mtdpp_train('x', 'train_lines', item_col => 'nope');
CREATE TABLE empty_lines (order_id int, item_id int);
SELECT * FROM mtdpp_train('x', 'empty_lines');
CREATE TABLE single_lines AS SELECT g AS order_id, g AS item_id FROM generate_series(1, 10) g;
SELECT * FROM mtdpp_train('x', 'single_lines');
CREATE TABLE text_items AS SELECT 1 AS order_id, 'apple'::text AS item_id;
SELECT * FROM mtdpp_train('x', 'text_items');
SELECT * FROM mtdpp_evaluate('planted', 'train_lines');
SELECT * FROM mtdpp_evaluate('planted', 'test_baskets', catalog_size => 10);
CREATE VIEW no_baskets AS SELECT basket, held_out FROM test_baskets WHERE false;
SELECT * FROM mtdpp_evaluate('planted', 'no_baskets');
-- models too large for maintenance_work_mem
SET maintenance_work_mem = '1MB';
SELECT * FROM mtdpp_train('x', 'train_lines', rank => 1024);
-- order lines beyond maintenance_work_mem: 8 bytes each without positions
-- (order ids of 32 bits), 16 with them
SELECT length(mtdpp_fit(g / 10, g % 97, NULL::int)) FROM generate_series(1, 200000) g;
SELECT length(mtdpp_fit(g / 10, g % 97, g % 10)) FROM generate_series(1, 200000) g;
RESET maintenance_work_mem;
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
SELECT mtdpp_save('x', NULL);
-- nothing half-written was left behind
SELECT count(*) AS models_named_x FROM mtdpp.models WHERE name = 'x';
