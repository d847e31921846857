-- Hostile objects first in search_path: every function, operator and type
-- name the extension's statements use, each raising an error when called.
-- Every SQL-callable function of the extension must behave as without them.
CREATE TABLE sec_big AS SELECT order_id::bigint * 10000000000 AS order_id, item_id, pos FROM lines WHERE order_id <= 500;
CREATE TABLE sec_text AS SELECT 'order ' || order_id AS order_id, item_id, pos FROM lines WHERE order_id <= 500;
CREATE SCHEMA hostile;
CREATE FUNCTION hostile.boom() RETURNS boolean LANGUAGE plpgsql
    AS $$ BEGIN RAISE EXCEPTION 'a hostile object was called'; END $$;
CREATE FUNCTION hostile.hashtextextended(text, integer) RETURNS bigint LANGUAGE plpgsql
    AS $$ BEGIN PERFORM hostile.boom(); RETURN 0; END $$;
CREATE FUNCTION hostile.hashtextextended(text, bigint) RETURNS bigint LANGUAGE plpgsql
    AS $$ BEGIN PERFORM hostile.boom(); RETURN 0; END $$;
CREATE FUNCTION hostile.hashtext(text) RETURNS integer LANGUAGE plpgsql
    AS $$ BEGIN PERFORM hostile.boom(); RETURN 0; END $$;
CREATE FUNCTION hostile.pg_advisory_xact_lock(integer, integer) RETURNS void LANGUAGE plpgsql
    AS $$ BEGIN PERFORM hostile.boom(); END $$;
CREATE FUNCTION hostile.clock_timestamp() RETURNS timestamptz LANGUAGE plpgsql
    AS $$ BEGIN PERFORM hostile.boom(); RETURN NULL; END $$;
CREATE FUNCTION hostile.int_step(integer, integer) RETURNS integer LANGUAGE plpgsql
    AS $$ BEGIN PERFORM hostile.boom(); RETURN 0; END $$;
CREATE AGGREGATE hostile.max(integer) (SFUNC = hostile.int_step, STYPE = integer);
CREATE AGGREGATE hostile.count(integer) (SFUNC = hostile.int_step, STYPE = integer);
CREATE FUNCTION hostile.cmp(text, text) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN RETURN hostile.boom(); END $$;
CREATE FUNCTION hostile.cmp(integer, integer) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN RETURN hostile.boom(); END $$;
CREATE FUNCTION hostile.cmp(bigint, bigint) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN RETURN hostile.boom(); END $$;
CREATE FUNCTION hostile.cmp(timestamptz, timestamptz) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN RETURN hostile.boom(); END $$;
CREATE OPERATOR hostile.= (FUNCTION = hostile.cmp, LEFTARG = text, RIGHTARG = text);
CREATE OPERATOR hostile.= (FUNCTION = hostile.cmp, LEFTARG = integer, RIGHTARG = integer);
CREATE OPERATOR hostile.= (FUNCTION = hostile.cmp, LEFTARG = bigint, RIGHTARG = bigint);
CREATE OPERATOR hostile.= (FUNCTION = hostile.cmp, LEFTARG = timestamptz, RIGHTARG = timestamptz);
CREATE OPERATOR hostile.<> (FUNCTION = hostile.cmp, LEFTARG = integer, RIGHTARG = integer);
CREATE OPERATOR hostile.< (FUNCTION = hostile.cmp, LEFTARG = integer, RIGHTARG = integer);
CREATE OPERATOR hostile.> (FUNCTION = hostile.cmp, LEFTARG = integer, RIGHTARG = integer);
CREATE FUNCTION hostile.plus(integer, integer) RETURNS integer LANGUAGE plpgsql
    AS $$ BEGIN PERFORM hostile.boom(); RETURN 0; END $$;
CREATE OPERATOR hostile.+ (FUNCTION = hostile.plus, LEFTARG = integer, RIGHTARG = integer);
CREATE FUNCTION hostile.concat(jsonb, jsonb) RETURNS jsonb LANGUAGE plpgsql
    AS $$ BEGIN PERFORM hostile.boom(); RETURN NULL; END $$;
CREATE OPERATOR hostile.|| (FUNCTION = hostile.concat, LEFTARG = jsonb, RIGHTARG = jsonb);
CREATE FUNCTION hostile.arrow(jsonb, text) RETURNS text LANGUAGE plpgsql
    AS $$ BEGIN PERFORM hostile.boom(); RETURN NULL; END $$;
CREATE OPERATOR hostile.->> (FUNCTION = hostile.arrow, LEFTARG = jsonb, RIGHTARG = text);
CREATE DOMAIN hostile.text AS pg_catalog.text CHECK (hostile.boom());
CREATE DOMAIN hostile.int8 AS pg_catalog.int8 CHECK (hostile.boom());
CREATE DOMAIN hostile.float8 AS pg_catalog.float8 CHECK (hostile.boom());
CREATE DOMAIN hostile.jsonb AS pg_catalog.jsonb CHECK (hostile.boom());
SET search_path = hostile, public, pg_catalog;
-- the trap works
SELECT 'a'::text OPERATOR(hostile.=) 'a'::text;
-- training: integer, bigint and text order ids, with and without positions
SELECT version FROM mtdpp_train('sec', 'train_lines', rank => 4, epochs => 2, kind => 'multitask');
SELECT version FROM mtdpp_train('sec', 'train_lines', position_col => 'pos', target => 'last', rank => 4, epochs => 2, kind => 'multitask');
SELECT version FROM mtdpp_train('sec', 'sec_big', rank => 4, epochs => 2, kind => 'multitask');
SELECT version FROM mtdpp_train('sec', 'sec_big', position_col => 'pos', rank => 4, epochs => 2, kind => 'multitask');
SELECT version FROM mtdpp_train('sec', 'sec_text', rank => 4, epochs => 2, kind => 'multitask');
SELECT version FROM mtdpp_train('sec', 'sec_text', position_col => 'pos', rank => 4, epochs => 2, params => '{"l2": 1e-4}', kind => 'multitask');
SELECT version FROM mtdpp_train('sec_knn', 'sec_text', kind => 'itemknn', activate => false);
SELECT mtdpp_save('sec_fit', mtdpp_fit(order_id, item_id, pos, '{"kind": "popularity"}')) IS NOT NULL AS saved FROM train_lines;
-- completion, scoring, evaluation
SELECT pg_catalog.count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 5, 'sec');
SET mtdpp.model = 'sec';
SELECT pg_catalog.count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 5);
SELECT pg_catalog.count(*) AS n FROM mtdpp_complete_set(ARRAY[1, 2], 5, 'sec', 0.5);
SELECT pg_catalog.count(score) AS n FROM mtdpp_score(ARRAY[1, 2], ARRAY[3, 4, 5], 'sec');
SELECT pg_catalog.count(*) AS n FROM mtdpp_explain(ARRAY[1, 2], ARRAY[3, 4], 'sec');
SELECT baskets FROM mtdpp_evaluate('sec', 'test_baskets');
-- model management
SELECT mtdpp_activate('sec', 1) IS NOT NULL AS activated;
SELECT mtdpp_activate('sec_knn') IS NOT NULL AS activated;
SELECT mtdpp_rename('sec_knn', 'sec_knn2');
SELECT mtdpp_drop('sec_knn2');
SELECT mtdpp_drop('sec', 2);
SELECT mtdpp_prune('sec', 10);
SELECT name, version, active, is_default FROM mtdpp_models
WHERE name OPERATOR(pg_catalog.=) ANY (ARRAY['sec', 'sec_fit']) ORDER BY 1, 2;
SELECT public.gradient_check(3, 4) OPERATOR(pg_catalog.<) 1e-4 AS gradients_agree;
RESET search_path;
SET client_min_messages = warning;
DROP SCHEMA hostile CASCADE;
RESET client_min_messages;

-- Every call is checked against the current role, cached model or not.
CREATE ROLE regress_mtdpp_app;
SELECT pg_catalog.count(*) AS cached FROM mtdpp_complete(ARRAY[1, 2], 5, 'sec');
SET ROLE regress_mtdpp_app;
SELECT * FROM mtdpp_complete(ARRAY[1, 2], 5, 'sec');
\echo :LAST_ERROR_SQLSTATE
SELECT * FROM mtdpp_score(ARRAY[1, 2], ARRAY[3], 'sec');
SELECT * FROM mtdpp_evaluate('sec', 'test_baskets');
RESET ROLE;
GRANT USAGE ON SCHEMA mtdpp TO regress_mtdpp_app;
SET ROLE regress_mtdpp_app;
SELECT * FROM mtdpp_complete(ARRAY[1, 2], 5, 'sec');
RESET ROLE;
GRANT SELECT ON mtdpp.models, mtdpp.items TO regress_mtdpp_app;
SET ROLE regress_mtdpp_app;
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 5, 'sec');
-- an application role completes, but cannot train, activate or drop
SELECT mtdpp_activate('sec', 3);
SELECT mtdpp_drop('sec');
SELECT * FROM mtdpp_train('sec', 'train_lines', kind => 'popularity');
RESET ROLE;
REVOKE SELECT ON mtdpp.items FROM regress_mtdpp_app;
SET ROLE regress_mtdpp_app;
SELECT * FROM mtdpp_complete(ARRAY[1, 2], 5, 'sec');
RESET ROLE;
-- column privileges on every column are as good as table privileges
GRANT SELECT (model_id, item_id, popularity, bias, factors, task_factors, neighbors, neighbor_weights, item_key)
    ON mtdpp.items TO regress_mtdpp_app;
SET ROLE regress_mtdpp_app;
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 5, 'sec');
RESET ROLE;
-- row-level security on the model tables: a model the role may not see
-- does not answer it, even when another role has it cached
ALTER TABLE mtdpp.models ENABLE ROW LEVEL SECURITY;
CREATE POLICY regress_not_sec ON mtdpp.models TO regress_mtdpp_app USING (name OPERATOR(pg_catalog.<>) 'sec');
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 5, 'sec');
SET ROLE regress_mtdpp_app;
SELECT * FROM mtdpp_complete(ARRAY[1, 2], 5, 'sec');
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 5, 'sec_fit');
RESET ROLE;
DROP POLICY regress_not_sec ON mtdpp.models;
-- a policy that reads a setting decides every statement, cached model or not
CREATE POLICY regress_by_setting ON mtdpp.models TO regress_mtdpp_app
    USING (name OPERATOR(pg_catalog.=) pg_catalog.current_setting('regress.model', true));
SET ROLE regress_mtdpp_app;
SET regress.model = 'sec';
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 5, 'sec');
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 5, 'sec');
SET regress.model = 'sec_fit';
SELECT * FROM mtdpp_complete(ARRAY[1, 2], 5, 'sec');
-- with mtdpp.model empty, the only model the role sees answers
SET mtdpp.model = '';
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 5);
RESET mtdpp.model;
SET regress.model = 'sec';
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 5, 'sec');
-- a policy on mtdpp.items hiding some items of a model the role sees
RESET ROLE;
ALTER TABLE mtdpp.items ENABLE ROW LEVEL SECURITY;
CREATE POLICY regress_items ON mtdpp.items TO regress_mtdpp_app
    USING (pg_catalog.current_setting('regress.hide', true) IS DISTINCT FROM 'on'
           OR item_id OPERATOR(pg_catalog.%) 2 OPERATOR(pg_catalog.=) 0);
SET ROLE regress_mtdpp_app;
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 5, 'sec');
SET regress.hide = 'on';
SELECT * FROM mtdpp_complete(ARRAY[1, 2], 5, 'sec');
SET regress.hide = 'off';
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 5, 'sec');
-- mtdpp_models shows what the role's policies show (security_invoker)
RESET ROLE;
GRANT SELECT ON mtdpp_models TO regress_mtdpp_app;
SET ROLE regress_mtdpp_app;
SELECT name, version FROM mtdpp_models;
RESET ROLE;
REVOKE SELECT ON mtdpp_models FROM regress_mtdpp_app;
RESET regress.model;
RESET regress.hide;
DROP POLICY regress_by_setting ON mtdpp.models;
DROP POLICY regress_items ON mtdpp.items;
REVOKE ALL ON mtdpp.models, mtdpp.items FROM regress_mtdpp_app;
REVOKE ALL ON SCHEMA mtdpp FROM regress_mtdpp_app;
DROP ROLE regress_mtdpp_app;
-- the recipe of doc/models.md for an analyst role: trains, evaluates, manages models
CREATE ROLE regress_mtdpp_analyst;
GRANT USAGE ON SCHEMA mtdpp TO regress_mtdpp_analyst;
GRANT SELECT, INSERT, UPDATE, DELETE ON mtdpp.models, mtdpp.items TO regress_mtdpp_analyst;
GRANT USAGE ON SEQUENCE mtdpp.models_model_id_seq TO regress_mtdpp_analyst;
GRANT SELECT ON lines, train_lines, test_baskets TO regress_mtdpp_analyst;
SET ROLE regress_mtdpp_analyst;
SELECT version, kind FROM mtdpp_train('sec_analyst', 'train_lines', rank => 4, epochs => 2, kind => 'multitask');
SELECT version, kind FROM mtdpp_train('sec_analyst', 'train_lines', kind => 'popularity');
SELECT baskets FROM mtdpp_evaluate('sec_analyst', 'test_baskets');
SELECT mtdpp_activate('sec_analyst', 1) IS NOT NULL AS activated;
SELECT mtdpp_rename('sec_analyst', 'sec_analyst2');
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 5, 'sec_analyst2');
SELECT trained_by FROM mtdpp.models WHERE name = 'sec_analyst2' ORDER BY version;
SELECT mtdpp_drop('sec_analyst2');
RESET ROLE;
-- a name held by models that the role's policies hide is not available
ALTER TABLE mtdpp.models ENABLE ROW LEVEL SECURITY;
CREATE POLICY regress_own ON mtdpp.models USING (trained_by OPERATOR(pg_catalog.=) CURRENT_USER);
SET ROLE regress_mtdpp_analyst;
SELECT version FROM mtdpp_train('sec', 'train_lines', kind => 'popularity');
SELECT mtdpp_save('sec', mtdpp_fit(order_id, item_id, NULL::integer, '{"kind": "popularity"}')) FROM train_lines;
SELECT version FROM mtdpp_train('sec_mine', 'train_lines', kind => 'popularity');
SELECT mtdpp_rename('sec_mine', 'sec');
SELECT mtdpp_drop('sec_mine');
RESET ROLE;
DROP POLICY regress_own ON mtdpp.models;
REVOKE ALL ON mtdpp.models, mtdpp.items, mtdpp.models_model_id_seq, lines, train_lines, test_baskets
    FROM regress_mtdpp_analyst;
REVOKE ALL ON SCHEMA mtdpp FROM regress_mtdpp_analyst;
DROP ROLE regress_mtdpp_analyst;
-- the models shared in the server's memory: for monitoring roles only, and
-- none in a server that does not preload mtdpp
CREATE ROLE regress_mtdpp_monitor;
SET ROLE regress_mtdpp_monitor;
SELECT count(*) FROM mtdpp_shared_models();
-- trainings in progress: any role may read the view; a server that does
-- not preload mtdpp reports none, and says why
SELECT mtdpp_progress_available();
SELECT count(*) FROM mtdpp_progress;
RESET ROLE;
GRANT pg_monitor TO regress_mtdpp_monitor;
SET ROLE regress_mtdpp_monitor;
SELECT count(*) FROM mtdpp_shared_models();
RESET ROLE;
DROP ROLE regress_mtdpp_monitor;
-- isolation by role: what mtdpp_isolate and mtdpp_share accept
SELECT mtdpp_isolate('department');
SELECT mtdpp_isolate(NULL);
SELECT count(*) FROM mtdpp.isolation;
CREATE ROLE regress_mtdpp_tenant;
GRANT USAGE ON SCHEMA mtdpp TO regress_mtdpp_tenant;
GRANT SELECT ON mtdpp.models TO regress_mtdpp_tenant;
SET ROLE regress_mtdpp_tenant;
-- (terse: the hint names the tables' owner, which differs between servers)
\set VERBOSITY terse
SELECT mtdpp_isolate('role');
\set VERBOSITY default
SELECT mtdpp_share(NULL, 'public');
SELECT mtdpp_share('no_such_model', 'public');
SELECT mtdpp_unshare('no_such_model', 'public');
RESET ROLE;
REVOKE ALL ON mtdpp.models FROM regress_mtdpp_tenant;
REVOKE ALL ON SCHEMA mtdpp FROM regress_mtdpp_tenant;
DROP ROLE regress_mtdpp_tenant;
SELECT mtdpp_isolate('role');
SELECT isolated_by FROM mtdpp.isolation;
SELECT relname, relrowsecurity FROM pg_class
WHERE oid IN ('mtdpp.models'::regclass, 'mtdpp.items'::regclass) ORDER BY relname;
-- a model, and a share, is its role's by OID: a rename keeps them, a new
-- role of a dropped role's name gets none of them
CREATE ROLE regress_mtdpp_owner;
CREATE ROLE regress_mtdpp_readers;
CREATE ROLE regress_mtdpp_member IN ROLE regress_mtdpp_readers;
GRANT USAGE ON SCHEMA mtdpp TO regress_mtdpp_owner, regress_mtdpp_member;
GRANT SELECT, INSERT, UPDATE, DELETE ON mtdpp.models, mtdpp.items TO regress_mtdpp_owner;
GRANT USAGE ON SEQUENCE mtdpp.models_model_id_seq TO regress_mtdpp_owner;
GRANT SELECT ON mtdpp.models, mtdpp.items TO regress_mtdpp_member;
GRANT SELECT ON train_lines TO regress_mtdpp_owner;
SET ROLE regress_mtdpp_owner;
SELECT version FROM mtdpp_train('sec_owned', 'train_lines', kind => 'popularity');
SELECT mtdpp_share('sec_owned', 'regress_mtdpp_readers');
RESET ROLE;
SELECT trained_by, trained_by_oid = 'regress_mtdpp_owner'::regrole AS by_oid,
       role_cluster = mtdpp.cluster_id() AS this_cluster
FROM mtdpp.models WHERE name = 'sec_owned';
SELECT trained_by, reader, trained_by_oid = 'regress_mtdpp_owner'::regrole AS by_oid,
       reader_oid = 'regress_mtdpp_readers'::regrole AS reader_by_oid
FROM mtdpp.model_readers WHERE name = 'sec_owned';
ALTER ROLE regress_mtdpp_owner RENAME TO regress_mtdpp_renamed;
SET ROLE regress_mtdpp_renamed;
SELECT name, version FROM mtdpp.models ORDER BY version;
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 3, 'sec_owned');
SELECT version FROM mtdpp_train('sec_owned', 'train_lines', kind => 'popularity');
SELECT mtdpp_prune('sec_owned', 0);
SELECT mtdpp_share('sec_owned', 'regress_mtdpp_readers');
RESET ROLE;
SELECT trained_by, version FROM mtdpp.models WHERE name = 'sec_owned';
SELECT trained_by, reader FROM mtdpp.model_readers WHERE name = 'sec_owned';
SET ROLE regress_mtdpp_member;
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 3, 'sec_owned');
RESET ROLE;
-- dropped, and made again under the same name: none of it is the new role's
DROP OWNED BY regress_mtdpp_renamed;
DROP ROLE regress_mtdpp_renamed;
CREATE ROLE regress_mtdpp_renamed;
GRANT USAGE ON SCHEMA mtdpp TO regress_mtdpp_renamed;
GRANT SELECT, INSERT, UPDATE, DELETE ON mtdpp.models, mtdpp.items TO regress_mtdpp_renamed;
GRANT USAGE ON SEQUENCE mtdpp.models_model_id_seq TO regress_mtdpp_renamed;
GRANT SELECT ON train_lines TO regress_mtdpp_renamed;
SET ROLE regress_mtdpp_renamed;
SELECT count(*) AS models FROM mtdpp.models;
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 3, 'sec_owned');
SELECT version FROM mtdpp_train('sec_owned', 'train_lines', kind => 'popularity');
WITH changed AS (UPDATE mtdpp.models SET active = true WHERE name = 'sec_owned' RETURNING 1)
SELECT count(*) AS changed FROM changed;
SELECT mtdpp_share('sec_owned', 'public');
RESET ROLE;
-- a row of another cluster is the role's of its name, and is mapped to
-- its OID when written; so is a name the tables' owner writes
UPDATE mtdpp.models SET role_cluster = 0 WHERE name = 'sec_owned';
SELECT trained_by_oid = 'regress_mtdpp_renamed'::regrole AS by_new_oid,
       role_cluster = mtdpp.cluster_id() AS this_cluster
FROM mtdpp.models WHERE name = 'sec_owned';
SET ROLE regress_mtdpp_renamed;
SELECT count(*) AS n FROM mtdpp_complete(ARRAY[1, 2], 3, 'sec_owned');
-- the new role's share takes the place of the dropped one's
SELECT mtdpp_share('sec_owned', 'regress_mtdpp_readers');
RESET ROLE;
SELECT count(*) AS shares, bool_and(trained_by_oid = 'regress_mtdpp_renamed'::regrole) AS new_role
FROM mtdpp.model_readers WHERE name = 'sec_owned';
-- by hand: a row's role is its OID's, whatever name it is given
SET ROLE regress_mtdpp_renamed;
INSERT INTO mtdpp.models (name, version, kind, rank, n_items, n_baskets, n_examples, log_w,
                          hyperparams, trained_by, trained_by_oid, role_cluster)
SELECT 'sec_forged', 1, 'popularity', 0, 0, 0, 0, 0, '{}', 'regress_mtdpp_member',
       'regress_mtdpp_renamed'::regrole, mtdpp.cluster_id();
SELECT trained_by FROM mtdpp.models WHERE name = 'sec_forged';
INSERT INTO mtdpp.models (name, version, kind, rank, n_items, n_baskets, n_examples, log_w,
                          hyperparams, trained_by, trained_by_oid, role_cluster)
SELECT 'sec_forged', 2, 'popularity', 0, 0, 0, 0, 0, '{}', 'regress_mtdpp_renamed',
       'regress_mtdpp_member'::regrole, mtdpp.cluster_id();
RESET ROLE;
SELECT mtdpp_drop('sec_owned');
SELECT mtdpp_drop('sec_forged');
DELETE FROM mtdpp.model_readers WHERE name = 'sec_owned';
DROP OWNED BY regress_mtdpp_renamed, regress_mtdpp_member;
DROP ROLE regress_mtdpp_renamed, regress_mtdpp_member, regress_mtdpp_readers;
-- lifted: row-level security stays on, and mtdpp's policies show every row
SELECT mtdpp_isolate('none');
SELECT count(*) FROM mtdpp.isolation;
SELECT relname, relrowsecurity FROM pg_class
WHERE oid IN ('mtdpp.models'::regclass, 'mtdpp.items'::regclass) ORDER BY relname;
