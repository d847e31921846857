-- Versions, activation, the default model, renaming, dropping.
SELECT version FROM mtdpp_train('planted', 'train_lines', rank => 4, epochs => 2, seed => 2, activate => false, kind => 'multitask');
SELECT name, version, active FROM mtdpp_models WHERE name = 'planted' ORDER BY version;
-- the active version still answers
SELECT (SELECT rank FROM mtdpp.models m JOIN mtdpp.items USING (model_id) WHERE name = 'planted' AND active LIMIT 1) AS active_rank;
SELECT mtdpp_activate('planted', 2) > 0 AS activated;
SELECT name, version, active FROM mtdpp_models WHERE name = 'planted' ORDER BY version;
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 3, 'planted');
SELECT mtdpp_activate('planted', 1) > 0 AS activated;
-- the default model is the one mtdpp.model names (the database's setting
-- here, 'planted'), whatever was activated last; a session names its own
SELECT mtdpp_activate('pop') > 0 AS activated;
SELECT name FROM mtdpp_models WHERE is_default;
SET mtdpp.model = 'pop';
SELECT name FROM mtdpp_models WHERE is_default;
SELECT (SELECT array_agg(item_id ORDER BY rank) FROM mtdpp_complete(ARRAY[1, 2], 5)) =
       (SELECT array_agg(item_id ORDER BY rank) FROM mtdpp_complete(ARRAY[1, 2], 5, 'pop')) AS default_is_pop;
RESET mtdpp.model;
SELECT mtdpp_activate('planted') > 0 AS activated;
SELECT name, version FROM mtdpp_models WHERE is_default;
-- rename and drop
SELECT mtdpp_rename('planted', 'groups');
SELECT name, version, active FROM mtdpp_models WHERE name IN ('planted', 'groups') ORDER BY name, version;
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 3, 'groups');
SELECT * FROM mtdpp_complete(ARRAY[1, 2], 3, 'planted');
SELECT mtdpp_drop('groups', 2);
SELECT name, version FROM mtdpp_models WHERE name = 'groups';
SELECT mtdpp_drop('groups');
SELECT count(*) AS items_left FROM mtdpp.items JOIN mtdpp.models USING (model_id) WHERE name = 'groups';
SELECT * FROM mtdpp_complete(ARRAY[1, 2], 3, 'groups');
-- the database's setting named the dropped model: the later tests' sessions name pop
DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET mtdpp.model = %L', current_database(), 'pop'); END $$;
-- tables are registered for pg_dump
SELECT count(*) AS dumped FROM pg_extension e, unnest(e.extconfig) c WHERE e.extname = 'mtdpp';
-- retention: mtdpp_prune keeps the newest versions and the active one
SELECT count(*) AS trained FROM generate_series(1, 5) g, mtdpp_train('kept', 'train_lines', kind => 'popularity', seed => g);
SELECT mtdpp_activate('kept', 2) > 0 AS activated;
SELECT mtdpp_prune('kept', 2) AS dropped;
SELECT version, active FROM mtdpp_models WHERE name = 'kept' ORDER BY version;
SELECT mtdpp_prune('kept', 5) AS dropped;
SELECT mtdpp_prune('kept', 0) AS dropped;
SELECT version, active FROM mtdpp_models WHERE name = 'kept' ORDER BY version;
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 3, 'kept');
SELECT mtdpp_prune('kept', -1);
SELECT mtdpp_prune('no_such_model');
-- model => names the model everywhere; name =>, as calls written for
-- 0.4.0 name it, still works with a notice
SELECT mtdpp_activate(model => 'kept') > 0 AS activated;
SELECT mtdpp_activate(name => 'kept') > 0 AS activated;
SELECT mtdpp_prune(name => 'kept', keep => 0) AS dropped;
SELECT mtdpp_rename(name => 'kept', new_name => 'kept2');
SELECT mtdpp_rename(model => 'kept2', new_name => 'kept');
SELECT mtdpp_drop(model => 'kept', name => 'kept');
SELECT mtdpp_drop();
SELECT mtdpp_drop(model => 'kept');
