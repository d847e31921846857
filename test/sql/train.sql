-- Training with one statement, deterministic for a seed.
SELECT model_id, name, version, kind, items, baskets, examples > 0 AS has_examples,
       final_loss > 0 AS has_loss, best_epoch BETWEEN 1 AND 10 AS best_epoch_ok
FROM mtdpp_train('planted', 'train_lines', position_col => 'pos', rank => 8, epochs => 10, seed => 1, kind => 'multitask');
-- the model's row and its items
SELECT name, version, kind, active, rank, n_items, n_baskets,
       hyperparams ->> 'kind' AS hp_kind, (hyperparams ->> 'rank')::int AS hp_rank,
       cardinality(loss_history) BETWEEN 1 AND 10 AS has_history,
       cardinality(loss_history) = cardinality(val_mpr_history) AS histories_match,
       train_seconds > 0 AS timed, source
FROM mtdpp.models;
SELECT count(*) AS items, bool_and(cardinality(factors) = 8 AND cardinality(task_factors) = 8) AS shapes,
       sum(popularity) AS lines, count(*) FILTER (WHERE bias <> 0) > 0 AS has_bias
FROM mtdpp.items;
-- same seed, same model
SELECT * FROM mtdpp_train('planted_again', 'train_lines', position_col => 'pos', rank => 8, epochs => 10, seed => 1, activate => false, kind => 'multitask') \gset again_
SELECT bool_and(a.factors = b.factors AND a.task_factors = b.task_factors AND a.bias = b.bias) AS same_model
FROM mtdpp.items a JOIN mtdpp.items b USING (item_id)
WHERE a.model_id = 1 AND b.model_id = :again_model_id;
SELECT mtdpp_drop('planted_again');
-- one core or two (max_parallel_maintenance_workers = 0: no helper thread),
-- the same model
SET max_parallel_maintenance_workers = 0;
SELECT * FROM mtdpp_train('planted_one_core', 'train_lines', position_col => 'pos', rank => 8, epochs => 10, seed => 1, activate => false, kind => 'multitask') \gset again_
RESET max_parallel_maintenance_workers;
SELECT bool_and(a.factors = b.factors AND a.task_factors = b.task_factors AND a.bias = b.bias) AS same_model_on_one_core
FROM mtdpp.items a JOIN mtdpp.items b USING (item_id)
WHERE a.model_id = 1 AND b.model_id = :again_model_id;
SELECT mtdpp_drop('planted_one_core');
-- the aggregate directly, then stored
SELECT mtdpp_save('via_aggregate', mtdpp_fit(order_id, item_id, pos, '{"kind": "multitask", "rank": 4, "epochs": 3}'), activate => false)
FROM train_lines;
SELECT name, version, rank, active, n_items FROM mtdpp.models WHERE name = 'via_aggregate';
SELECT length(mtdpp_fit(order_id, item_id)) > 1000 AS two_argument_form FROM train_lines;
SELECT mtdpp_drop('via_aggregate');
-- other order id types: text ids are hashed
CREATE TABLE text_lines AS SELECT 'o' || order_id AS order_code, item_id::smallint AS item, pos FROM train_lines;
SELECT items, baskets FROM mtdpp_train('text_ids', 'text_lines', order_col => 'order_code', item_col => 'item', rank => 4, epochs => 2, activate => false, kind => 'multitask');
SELECT mtdpp_drop('text_ids');
-- multitask without bias and the popularity baseline
SELECT kind, items FROM mtdpp_train('nobias', 'train_lines', kind => 'multitask_nobias', rank => 8, epochs => 5, activate => false);
SELECT bool_and(bias = 0) AS no_bias FROM mtdpp.items JOIN mtdpp.models USING (model_id) WHERE name = 'nobias';
SELECT kind, items, examples FROM mtdpp_train('pop', 'train_lines', kind => 'popularity');
-- a call that names no model: with two models active, none answers until
-- mtdpp.model names one (per session, role or database)
SELECT name FROM mtdpp_models WHERE is_default;
SELECT count(*) AS not_default FROM mtdpp_models WHERE is_default IS FALSE;
SELECT count(*) FROM mtdpp_complete(ARRAY[1, 2], 3);
SELECT mtdpp_activate('planted') AS planted_model_id;
SET mtdpp.model = 'planted';
SELECT name FROM mtdpp_models WHERE is_default;
SELECT count(*) FROM mtdpp_complete(ARRAY[1, 2], 3);
SET mtdpp.model = 'no_such_model';
SELECT count(*) FROM mtdpp_complete(ARRAY[1, 2], 3);
-- the later tests' sessions: the database's setting
DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET mtdpp.model = %L', current_database(), 'planted'); END $$;
RESET mtdpp.model;
-- the gradients of the loss against finite differences
SELECT r, b, softmax, public.gradient_check(r, b, 7, softmax) < 1e-5 AS gradient_ok
FROM (VALUES (1, 1), (4, 3), (8, 6), (16, 9)) v(r, b), (VALUES (true), (false)) l(softmax)
ORDER BY softmax, r;
-- the table of hyperparameters: the keys each kind takes, with its defaults
SELECT key, type, default_value, valid FROM mtdpp_hyperparameters() ORDER BY key;
SELECT key, default_value FROM mtdpp_hyperparameters('logistic')
EXCEPT SELECT key, default_value FROM mtdpp_hyperparameters() ORDER BY key;
SELECT key, default_value FROM mtdpp_hyperparameters('itemknn')
EXCEPT SELECT key, default_value FROM mtdpp_hyperparameters() ORDER BY key;
SELECT key, default_value FROM mtdpp_hyperparameters('ease')
EXCEPT SELECT key, default_value FROM mtdpp_hyperparameters() ORDER BY key;
SELECT count(*) AS keys, bool_and(length(description) > 5) AS described FROM mtdpp_hyperparameters();
-- the stored hyperparameters are the resolved ones, key for key (fits only above 1)
SELECT (SELECT array_agg(k ORDER BY k) FROM mtdpp.models m, jsonb_object_keys(m.hyperparams) k
        WHERE m.model_id = (SELECT min(model_id) FROM mtdpp.models)) =
       (SELECT array_agg(key ORDER BY key)
        FROM mtdpp_hyperparameters((SELECT kind FROM mtdpp.models WHERE model_id = (SELECT min(model_id) FROM mtdpp.models)))
        WHERE key NOT IN ('verbose', 'fits')) AS stored_keys;
SELECT * FROM mtdpp_hyperparameters('nope');
-- warm start: from the active version of the model, the items it knows keep
-- their parameters (so a step too small to move them returns them)
SELECT version, best_epoch FROM mtdpp_train('warm', 'train_lines', rank => 4, epochs => 3, seed => 1, kind => 'multitask');
SELECT version, best_epoch, items FROM mtdpp_train('warm', 'train_lines', rank => 4, epochs => 1, seed => 2,
    warm_start => true, params => '{"learning_rate": 1e-9}', kind => 'multitask');
SELECT hyperparams ->> 'warm_start' AS warm_start FROM mtdpp.models WHERE name = 'warm' ORDER BY version;
SELECT count(*) AS items,
       bool_and((SELECT max(abs(a - b)) FROM unnest(i1.factors, i2.factors) u(a, b)) < 1e-5) AS same_factors,
       bool_and((SELECT max(abs(abs(a) - abs(b))) FROM unnest(i1.task_factors, i2.task_factors) u(a, b)) < 1e-5) AS same_task_factors,
       bool_and(abs(i1.bias - i2.bias) < 1e-5) AS same_bias
FROM mtdpp.items i1 JOIN mtdpp.models m1 USING (model_id)
JOIN mtdpp.items i2 USING (item_id) JOIN mtdpp.models m2 ON m2.model_id = i2.model_id
WHERE m1.name = 'warm' AND m1.version = 1 AND m2.name = 'warm' AND m2.version = 2;
-- new items start fresh, items gone are dropped
CREATE TABLE more_lines AS SELECT * FROM lines WHERE order_id <= 500 AND item_id <> 7
UNION ALL SELECT 10000 + o, 100 + o % 3, 1 FROM generate_series(1, 30) o
UNION ALL SELECT 10000 + o, 1 + o % 5, 2 FROM generate_series(1, 30) o;
SELECT version, items FROM mtdpp_train('warm', 'more_lines', position_col => 'pos', rank => 4, epochs => 2, warm_start => true, kind => 'multitask');
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[100, 1], 5, 'warm');
-- a warm start needs a model of the same kind and rank
SELECT * FROM mtdpp_train('warm', 'train_lines', rank => 8, warm_start => true, kind => 'multitask');
SELECT * FROM mtdpp_train('no_such_model', 'train_lines', warm_start => true, kind => 'multitask');
SELECT * FROM mtdpp_train('warm', 'train_lines', params => '{"warm_start": 3}', kind => 'multitask');
SELECT mtdpp_drop('warm');
-- epoch_baskets: each epoch samples about that many of the 450 training
-- baskets (500 less 50 for validation), so about a fifth of the examples
SELECT examples AS sampled FROM mtdpp_train('sampled', 'train_lines', rank => 4, epochs => 4, activate => false,
                                            params => '{"epoch_baskets": 90, "patience": 100}', kind => 'multitask') \gset
SELECT examples AS whole FROM mtdpp_train('sampled', 'train_lines', rank => 4, epochs => 4, activate => false,
                                          params => '{"epoch_baskets": 0, "patience": 100}', kind => 'multitask') \gset
SELECT :sampled::float8 / :whole BETWEEN 0.14 AND 0.26 AS fifth_of_the_examples;
SELECT mtdpp_drop('sampled');
-- where epochs sample the baskets, the capacity search's rank-128 candidate
-- races the rank-32 one: it stops once its epochs left cannot reach the
-- other's validation MPR at its mean gain per epoch; where an epoch is a
-- pass over every basket, it runs all its epochs
SELECT kind FROM mtdpp_train('raced', 'train_lines', epochs => 12, activate => false,
                             params => '{"epoch_baskets": 90}', kind => 'multitask');
SELECT kind FROM mtdpp_train('raced', 'train_lines', epochs => 12, activate => false,
                             params => '{"epoch_baskets": 0}', kind => 'multitask');
SELECT version, (c->>'epochs')::int < (c->>'max_epochs')::int AS stopped,
       (c->>'validation_mpr')::float8 < (hyperparams->'capacity'->'candidates'->0->>'validation_mpr')::float8 AS behind,
       rank AS kept
FROM mtdpp.models, jsonb_array_elements(hyperparams->'capacity'->'candidates') c
WHERE name = 'raced' AND c->>'rank' = '128' ORDER BY version;
SELECT mtdpp_drop('raced');
