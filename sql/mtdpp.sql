-- mtdpp: multi-task determinantal point processes for basket completion.
-- Every function and operator below is named by schema where it is not
-- bound by its argument types alone, so that no object in a schema of the
-- installing role's search_path can stand in for it.
\echo Use "CREATE EXTENSION mtdpp" to load this file. \quit

-- Models live in ordinary tables of schema mtdpp, so analysts can read and
-- join them and pg_dump keeps them (pg_extension_config_dump below).
CREATE SCHEMA mtdpp;

CREATE TABLE mtdpp.models (
    model_id        serial PRIMARY KEY,
    name            text NOT NULL,
    version         integer NOT NULL,
    kind            text NOT NULL,
    active          boolean NOT NULL DEFAULT false,
    rank            integer NOT NULL,
    n_items         integer NOT NULL,
    n_baskets       integer NOT NULL,
    n_examples      bigint NOT NULL,
    log_w           float8 NOT NULL,
    hyperparams     jsonb NOT NULL,
    loss_history    float8[] NOT NULL DEFAULT '{}',
    val_mpr_history float8[] NOT NULL DEFAULT '{}',
    final_loss      float8,
    best_epoch      integer,
    train_seconds   float8,
    source          text,
    metrics         jsonb NOT NULL DEFAULT '{}',
    trained_at      timestamptz NOT NULL DEFAULT pg_catalog.now(),
    trained_by      name NOT NULL DEFAULT current_user,
    activated_at    timestamptz,
    weights         real[],
    UNIQUE (name, version)
);
CREATE UNIQUE INDEX models_one_active_per_name ON mtdpp.models (name) WHERE active;
COMMENT ON TABLE mtdpp.models IS 'one row per trained mtdpp model: hyperparameters, training history, timings and metrics';
COMMENT ON COLUMN mtdpp.models.weights IS 'the weights every item of the model shares, NULL for kinds without (gru: its recurrent weights W_x, W_h and b, 6 d^2 + 3 d of them at hidden size d = rank)';

CREATE TABLE mtdpp.items (
    model_id     integer NOT NULL,
    item_id      integer NOT NULL,
    popularity   integer NOT NULL,
    bias         real NOT NULL,
    factors      real[] NOT NULL,
    task_factors real[] NOT NULL,
    neighbors    integer[],
    neighbor_weights real[],
    PRIMARY KEY (model_id, item_id)
);
COMMENT ON TABLE mtdpp.items IS 'one row per item of a model: popularity (training baskets holding it), bias D_i (gru: output bias), factors V_i (poisson: the expected item factors E[beta_i]; bayesian_lowrank: its samples of V_i side by side, samples x rank values; gru: input embedding), task factors R_i (multi-task kinds; gru: output embedding), co-occurring items and their weights (itemknn: cosine; ease: the closed-form item-item weights; hybrid: co-occurrence evidence beside the DPP factors; rules: the rules whose antecedent starts with the item, each its other antecedent items of weight minus the baskets holding the antecedent, then its consequent of weight its confidence; fm: the bias is the item''s weight w_i and the factors its embedding v_i)';

-- The arrays are stored as they are and left out of ANALYZE: their numbers
-- do not compress (pglz tried in vain on every value over 2 kB, a third of
-- the time item-kNN took to store 100 million lines' lists), and no query
-- filters on them.
ALTER TABLE mtdpp.items
    ALTER COLUMN factors SET STORAGE EXTERNAL, ALTER COLUMN factors SET STATISTICS 0,
    ALTER COLUMN task_factors SET STORAGE EXTERNAL, ALTER COLUMN task_factors SET STATISTICS 0,
    ALTER COLUMN neighbors SET STORAGE EXTERNAL, ALTER COLUMN neighbors SET STATISTICS 0,
    ALTER COLUMN neighbor_weights SET STORAGE EXTERNAL, ALTER COLUMN neighbor_weights SET STATISTICS 0;
ALTER TABLE mtdpp.models
    ALTER COLUMN weights SET STORAGE EXTERNAL, ALTER COLUMN weights SET STATISTICS 0;

SELECT pg_catalog.pg_extension_config_dump('mtdpp.models', '');
SELECT pg_catalog.pg_extension_config_dump('mtdpp.models_model_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('mtdpp.items', '');

-- No foreign key from mtdpp.items to mtdpp.models: CREATE EXTENSION would
-- make it before a restore's data, and pg_restore -j loads the two tables'
-- data in parallel, in an order pg_dump cannot give an extension's tables.
-- What the key did is done here instead: a model's items go with it (a
-- DELETE or TRUNCATE of models), and its model_id cannot change under
-- them; as the tables' owner, so that no policy hides an item.  The read
-- path checks that a model has every item it counts.  Citus fires it on
-- the copies of the table it keeps on each node (doc/scaling.md), where it
-- does nothing: mtdpp_drop and mtdpp_prune delete the items themselves.
\ir parts/items_follow_models.sql

-- Any change to the model tables, by mtdpp's functions or by hand, tells
-- every backend to drop its cached models at its next statement.
CREATE FUNCTION mtdpp.models_changed() RETURNS trigger
    AS 'MODULE_PATHNAME', 'mtdpp_models_changed' LANGUAGE C;
CREATE TRIGGER models_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON mtdpp.models
    FOR EACH STATEMENT EXECUTE FUNCTION mtdpp.models_changed();
CREATE TRIGGER items_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON mtdpp.items
    FOR EACH STATEMENT EXECUTE FUNCTION mtdpp.models_changed();
-- Logical replication's apply worker fires row triggers, not statement
-- triggers, and only those enabled for replicas: these tell a subscriber's
-- sessions of every change it applies.
CREATE TRIGGER models_applied AFTER INSERT OR UPDATE OR DELETE ON mtdpp.models
    FOR EACH ROW EXECUTE FUNCTION mtdpp.models_changed();
CREATE TRIGGER items_applied AFTER INSERT OR UPDATE OR DELETE ON mtdpp.items
    FOR EACH ROW EXECUTE FUNCTION mtdpp.models_changed();
CREATE TRIGGER models_truncate_applied AFTER TRUNCATE ON mtdpp.models
    FOR EACH STATEMENT EXECUTE FUNCTION mtdpp.models_changed();
CREATE TRIGGER items_truncate_applied AFTER TRUNCATE ON mtdpp.items
    FOR EACH STATEMENT EXECUTE FUNCTION mtdpp.models_changed();
ALTER TABLE mtdpp.models ENABLE REPLICA TRIGGER models_applied;
ALTER TABLE mtdpp.items ENABLE REPLICA TRIGGER items_applied;
ALTER TABLE mtdpp.models ENABLE REPLICA TRIGGER models_truncate_applied;
ALTER TABLE mtdpp.items ENABLE REPLICA TRIGGER items_truncate_applied;
\ir parts/keep_trigger_modes.sql

-- The training aggregate: order lines in, a trained model (bytea) out.
-- Partial aggregation only gathers order lines (8 or 16 bytes each), so parallel
-- workers and distributed engines can read the orders; the final function
-- sorts them into baskets and fits the model.
CREATE FUNCTION mtdpp_fit_transfn(internal, bigint, integer, integer, jsonb) RETURNS internal
    AS 'MODULE_PATHNAME', 'mtdpp_fit_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION mtdpp_fit_transfn(internal, bigint, integer, integer) RETURNS internal
    AS 'MODULE_PATHNAME', 'mtdpp_fit_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION mtdpp_fit_transfn(internal, bigint, integer) RETURNS internal
    AS 'MODULE_PATHNAME', 'mtdpp_fit_transfn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION mtdpp_fit_combinefn(internal, internal) RETURNS internal
    AS 'MODULE_PATHNAME', 'mtdpp_fit_combinefn' LANGUAGE C CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION mtdpp_fit_serialfn(internal) RETURNS bytea
    AS 'MODULE_PATHNAME', 'mtdpp_fit_serialfn' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION mtdpp_fit_deserialfn(bytea, internal) RETURNS internal
    AS 'MODULE_PATHNAME', 'mtdpp_fit_deserialfn' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION mtdpp_fit_finalfn(internal, bigint, integer, integer, jsonb) RETURNS bytea
    AS 'MODULE_PATHNAME', 'mtdpp_fit_finalfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION mtdpp_fit_finalfn(internal, bigint, integer, integer) RETURNS bytea
    AS 'MODULE_PATHNAME', 'mtdpp_fit_finalfn' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION mtdpp_fit_finalfn(internal, bigint, integer) RETURNS bytea
    AS 'MODULE_PATHNAME', 'mtdpp_fit_finalfn' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE mtdpp_fit(order_id bigint, item_id integer, item_position integer, params jsonb) (
    SFUNC = mtdpp_fit_transfn, STYPE = internal,
    FINALFUNC = mtdpp_fit_finalfn, FINALFUNC_EXTRA, FINALFUNC_MODIFY = READ_WRITE,
    COMBINEFUNC = mtdpp_fit_combinefn,
    SERIALFUNC = mtdpp_fit_serialfn, DESERIALFUNC = mtdpp_fit_deserialfn,
    PARALLEL = SAFE
);
CREATE AGGREGATE mtdpp_fit(order_id bigint, item_id integer, item_position integer) (
    SFUNC = mtdpp_fit_transfn, STYPE = internal,
    FINALFUNC = mtdpp_fit_finalfn, FINALFUNC_EXTRA, FINALFUNC_MODIFY = READ_WRITE,
    COMBINEFUNC = mtdpp_fit_combinefn,
    SERIALFUNC = mtdpp_fit_serialfn, DESERIALFUNC = mtdpp_fit_deserialfn,
    PARALLEL = SAFE
);
CREATE AGGREGATE mtdpp_fit(order_id bigint, item_id integer) (
    SFUNC = mtdpp_fit_transfn, STYPE = internal,
    FINALFUNC = mtdpp_fit_finalfn, FINALFUNC_EXTRA, FINALFUNC_MODIFY = READ_WRITE,
    COMBINEFUNC = mtdpp_fit_combinefn,
    SERIALFUNC = mtdpp_fit_serialfn, DESERIALFUNC = mtdpp_fit_deserialfn,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE mtdpp_fit(bigint, integer, integer, jsonb) IS
    'fits an mtdpp model to order lines (order id, item id, position, hyperparameters); returns the model as bytea for mtdpp_save';
COMMENT ON AGGREGATE mtdpp_fit(bigint, integer, integer) IS
    'fits an mtdpp model with default hyperparameters to order lines (order id, item id, position)';
COMMENT ON AGGREGATE mtdpp_fit(bigint, integer) IS
    'fits an mtdpp model with default hyperparameters to order lines (order id, item id)';

-- Stores a model produced by mtdpp_fit as a new version of NAME.
CREATE FUNCTION mtdpp_save(name text, model bytea, activate boolean DEFAULT true, source text DEFAULT NULL)
    RETURNS integer
    AS 'MODULE_PATHNAME', 'mtdpp_save' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION mtdpp_save(text, bytea, boolean, text) IS
    'stores a model produced by the mtdpp_fit aggregate as the next version of NAME; returns its model_id';

\ir parts/train_forms.sql

\ir parts/kinds.sql

-- The hyperparameter keys of mtdpp_train's params and of mtdpp_fit.
CREATE FUNCTION mtdpp_hyperparameters(kind text DEFAULT 'hybrid')
RETURNS TABLE (key text, type text, default_value text, valid text, description text)
AS 'MODULE_PATHNAME', 'mtdpp_hyperparameters' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION mtdpp_hyperparameters(text) IS
    'the hyperparameter keys KIND takes (those of every kind, and its own), with their type, their default for KIND (as JSON), their valid values and what they do';

-- The association rules of a model of kind rules.
CREATE FUNCTION mtdpp_rules(model text DEFAULT NULL)
RETURNS TABLE (antecedent integer[], consequent integer, support float8, confidence float8, lift float8)
AS 'MODULE_PATHNAME', 'mtdpp_rules' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT;
COMMENT ON FUNCTION mtdpp_rules(text) IS
    'the association rules of MODEL (kind rules; default: the default model): ANTECEDENT (item ids) -> CONSEQUENT, SUPPORT (share of training baskets holding both), CONFIDENCE (share of the baskets holding the antecedent that hold the consequent) and LIFT (confidence over the consequent''s share of baskets); only the rules more confident than every rule from part of their antecedent are kept';

-- Query time.  STABLE: answers depend on the model tables.
--
-- Items of any type the orders table keys them by: integer, bigint, text or
-- uuid, or a domain over one.  A model trained from keys that are not
-- integers records their type and each item's key (in text form); these
-- forms take the basket and the item lists as arrays of the caller's type
-- and answer items in that type.  One array form serves integer[] too: a
-- form of its own would make an array of a domain over integer fit two
-- forms, which PostgreSQL does not choose between.
--
-- Drivers send lists as they are (doc/reference.md, Drivers): psycopg 3 a
-- list of small ints as smallint[], whose forms answer bigint (the items of
-- a bigint model too; an integer model's fit) where the array form would
-- answer smallint; node-postgres every parameter, and psycopg 3 a list of
-- str, untyped.  PostgreSQL fixes a call's answer type before it reads the
-- model's name, so the forms taking text read an untyped basket such as
-- '{1,2}' or '{85123A}' as an array of the model's items and answer items
-- as text, whatever the model's type: the one answer type every model's
-- keys have.

CREATE FUNCTION mtdpp_complete(basket anycompatiblearray, k integer, model text DEFAULT NULL,
                               allowed "any" DEFAULT NULL, excluded "any" DEFAULT NULL)
RETURNS TABLE (item_id anycompatible, score float8, rank integer, from_basket boolean)
AS 'MODULE_PATHNAME', 'mtdpp_complete' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT ROWS 10;

CREATE FUNCTION mtdpp_complete_set(basket anycompatiblearray, k integer, model text DEFAULT NULL,
                                   diversity float8 DEFAULT 0.5,
                                   allowed "any" DEFAULT NULL, excluded "any" DEFAULT NULL)
RETURNS TABLE (item_id anycompatible, score float8, rank integer, from_basket boolean)
AS 'MODULE_PATHNAME', 'mtdpp_complete_set' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT ROWS 10;

CREATE FUNCTION mtdpp_score(basket anycompatiblearray, items anycompatiblearray, model text DEFAULT NULL)
RETURNS TABLE (item_id anycompatible, score float8)
AS 'MODULE_PATHNAME', 'mtdpp_score' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT;

CREATE FUNCTION mtdpp_explain(basket anycompatiblearray, items anycompatiblearray, model text DEFAULT NULL)
RETURNS TABLE (item_id anycompatible, basket_item anycompatible, contribution float8, rank integer)
AS 'MODULE_PATHNAME', 'mtdpp_explain' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT;

CREATE FUNCTION mtdpp_rules(model text, item_type anycompatible)
RETURNS TABLE (antecedent anycompatiblearray, consequent anycompatible, support float8, confidence float8, lift float8)
AS 'MODULE_PATHNAME', 'mtdpp_rules' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT;
COMMENT ON FUNCTION mtdpp_rules(text, anycompatible) IS
    'mtdpp_rules with items in the type of ITEM_TYPE, a NULL of that type: mtdpp_rules(''m'', NULL::text) for a model trained on text keys';

\ir parts/query_array_comments.sql

-- The items most like an item, by the model's own measure.
CREATE FUNCTION mtdpp_similar(item anycompatible, k integer, model text DEFAULT NULL,
                              allowed "any" DEFAULT NULL, excluded "any" DEFAULT NULL)
RETURNS TABLE (item_id anycompatible, similarity float8, rank integer)
AS 'MODULE_PATHNAME', 'mtdpp_similar' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT ROWS 10;
COMMENT ON FUNCTION mtdpp_similar(anycompatible, integer, text, "any", "any") IS
    'the K items most like ITEM by the model''s own measure, best first, never ITEM itself, only ALLOWED ones (NULL: any) and never EXCLUDED ones: the weight of a neighbour list (itemknn, ease), the confidence of the rule {ITEM} -> item (rules), the cosine of the item factors (kinds with factors), the evidence of the lists and then that cosine (hybrid)';
CREATE FUNCTION mtdpp_similar(item text, k integer, model text DEFAULT NULL,
                              allowed text DEFAULT NULL, excluded text DEFAULT NULL)
RETURNS TABLE (item_id text, similarity float8, rank integer)
AS 'MODULE_PATHNAME', 'mtdpp_similar' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT ROWS 10;
\ir parts/query_text_forms.sql

\ir parts/query_smallint_forms.sql

CREATE FUNCTION mtdpp_evaluate(
    model text,
    source regclass,
    basket_col text DEFAULT 'basket',
    held_out_col text DEFAULT 'held_out',
    catalog_size integer DEFAULT NULL)
RETURNS TABLE (baskets integer, mpr float8, precision_at_5 float8, precision_at_10 float8,
               precision_at_20 float8, seconds float8)
AS 'MODULE_PATHNAME', 'mtdpp_evaluate' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION mtdpp_evaluate(text, regclass, text, text, integer) IS
    'mean percentile rank and precision@5/10/20 of MODEL on the test baskets of SOURCE (basket int[], held-out item); stores them in the model''s metrics';

CREATE FUNCTION mtdpp_evaluate_at(
    model text,
    source regclass,
    k integer[] DEFAULT '{5,10,20}',
    basket_col text DEFAULT 'basket',
    held_out_col text DEFAULT 'held_out',
    catalog_size integer DEFAULT NULL)
RETURNS TABLE (k integer, baskets bigint, hit_rate float8, "precision" float8, recall float8,
               ndcg float8)
AS 'MODULE_PATHNAME', 'mtdpp_evaluate_at' LANGUAGE C STABLE PARALLEL UNSAFE;
COMMENT ON FUNCTION mtdpp_evaluate_at(text, regclass, integer[], text, text, integer) IS
    'for each K of the array K, in increasing order: the test baskets of SOURCE (basket int[], held-out item int or items int[]) and, as percentages of them, the hit rate (baskets with a held-out item in the top K), precision@K, recall@K and NDCG@K of MODEL; stores nothing';

-- Model management.  The model is the argument model, as everywhere a
-- model that exists is named; name, its name until 0.4.0, still works in
-- this release, with a notice.
\ir parts/activate.sql

CREATE FUNCTION mtdpp_drop(model text DEFAULT NULL, version integer DEFAULT NULL, name text DEFAULT NULL)
RETURNS integer
    AS 'MODULE_PATHNAME', 'mtdpp_drop' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION mtdpp_drop(text, integer, text) IS
    'drops VERSION of MODEL, or every version when VERSION is NULL; returns the number of versions dropped (NAME: MODEL''s former argument name, deprecated)';

CREATE FUNCTION mtdpp_rename(model text DEFAULT NULL, new_name text DEFAULT NULL, name text DEFAULT NULL)
RETURNS integer
    AS 'MODULE_PATHNAME', 'mtdpp_rename' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION mtdpp_rename(text, text, text) IS
    'renames every version of MODEL to NEW_NAME; returns the number of versions renamed (NAME: MODEL''s former argument name, deprecated)';

CREATE FUNCTION mtdpp_prune(model text DEFAULT NULL, keep integer DEFAULT 3, name text DEFAULT NULL)
RETURNS integer
    AS 'MODULE_PATHNAME', 'mtdpp_prune' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION mtdpp_prune(text, integer, text) IS
    'drops the versions of MODEL but its KEEP newest and its active one; returns the number of versions dropped (NAME: MODEL''s former argument name, deprecated)';

-- security_invoker: the caller's privileges and row-level security apply
-- to the tables below, as if the caller queried them
-- Items known by keys of another type than integer (see mtdpp_complete's forms).
ALTER TABLE mtdpp.models ADD COLUMN item_type text
    CONSTRAINT models_item_type_check CHECK (item_type OPERATOR(pg_catalog.=) ANY (ARRAY['bigint', 'text', 'uuid']));
ALTER TABLE mtdpp.items ADD COLUMN item_key text;
COMMENT ON COLUMN mtdpp.models.item_type IS 'the type of the keys of its items when they are not integers (bigint, text or uuid), else NULL';
COMMENT ON COLUMN mtdpp.items.item_key IS 'the key of the item in the orders table, in text form, when the model''s items are not integers (item_id then numbers the keys in their order)';

-- A model's life (0.6.0): what a training read, the test baskets it held
-- out with their figures, and whether its promotion rule activated it.
ALTER TABLE mtdpp.models ADD COLUMN lines_read bigint, ADD COLUMN baskets_read bigint,
    ADD COLUMN test jsonb, ADD COLUMN promotion jsonb;
COMMENT ON COLUMN mtdpp.models.source IS 'what the training read: a table or view, or the text of its query';
COMMENT ON COLUMN mtdpp.models.lines_read IS 'the order lines the training read from its source, held-out ones included; NULL for mtdpp_save and before 0.6.0';
COMMENT ON COLUMN mtdpp.models.baskets_read IS 'the baskets it read: those it trained on and those it was tested on';
COMMENT ON COLUMN mtdpp.models.test IS 'the test baskets the training held out (how many, how they were chosen) and the figures of the model on them: mpr, precision_at_K, recall_at_K, ndcg_at_K; NULL without a held-out test';
COMMENT ON COLUMN mtdpp.models.promotion IS 'the promotion rule that decided whether the training activated it: rule, promoted, metric, value, and the active version and its value on the same baskets; NULL without a rule';

\ir parts/test_baskets.sql

\ir parts/models_view.sql

-- Isolation between roles is a state of the extension, kept in tables that
-- pg_dump keeps, not in policies a DBA writes (pg_dump leaves out the
-- policies and the row-security switch of an extension's tables).  The
-- policies below always exist, as CREATE EXTENSION makes them, and read
-- that state: a restore is isolated as soon as the dumped rows of
-- mtdpp.isolation are back, by whatever path they come (pg_restore -j, -a,
-- --disable-triggers, psql), with no trigger to run.
CREATE TABLE mtdpp.isolation (
    isolated_by text NOT NULL CONSTRAINT isolation_by_check CHECK (isolated_by OPERATOR(pg_catalog.=) 'role'),
    since       timestamptz NOT NULL DEFAULT pg_catalog.now(),
    one_row     boolean NOT NULL DEFAULT true PRIMARY KEY CONSTRAINT isolation_one_row CHECK (one_row)
);
COMMENT ON TABLE mtdpp.isolation IS 'one row while the models are isolated by role (mtdpp_isolate), none otherwise';
GRANT SELECT ON mtdpp.isolation TO PUBLIC;

-- The roles a role lets complete with its models of one name (NULL: every
-- role).  A row applies to the models of that name that its role trained,
-- and only while the models are isolated.
CREATE TABLE mtdpp.model_readers (
    name       text NOT NULL,
    trained_by name NOT NULL DEFAULT CURRENT_USER,
    reader     name,
    CONSTRAINT model_readers_key UNIQUE NULLS NOT DISTINCT (name, trained_by, reader)
);
COMMENT ON TABLE mtdpp.model_readers IS 'the roles (NULL: every role) that may complete with the models NAME trained by TRAINED_BY while the models are isolated (mtdpp_share)';
ALTER TABLE mtdpp.model_readers ENABLE ROW LEVEL SECURITY;
GRANT SELECT, INSERT, UPDATE, DELETE ON mtdpp.model_readers TO PUBLIC;

SELECT pg_catalog.pg_extension_config_dump('mtdpp.isolation', '');
SELECT pg_catalog.pg_extension_config_dump('mtdpp.model_readers', '');

\ir parts/role_ids.sql

\ir parts/is_member.sql

\ir parts/isolation_policies.sql

\ir parts/isolate.sql

\ir parts/share.sql

-- The models every backend of the server shares (mtdpp in
-- shared_preload_libraries): one row per copy in shared memory.  Like the
-- statistics views, for monitoring roles: it shows every database's.
CREATE FUNCTION mtdpp_shared_models()
RETURNS TABLE (database name, model_id integer, items integer, rank integer,
               bytes bigint, backends integer, state text)
AS 'MODULE_PATHNAME', 'mtdpp_shared_models' LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION mtdpp_shared_models() IS
    'the models held once in the server''s shared memory for every backend: database, model_id, items, rank, bytes, backends that map the copy, and whether it is ready or still being read; no rows unless mtdpp is in shared_preload_libraries';
REVOKE ALL ON FUNCTION mtdpp_shared_models() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mtdpp_shared_models() TO pg_monitor;

-- Trainings in progress on the server, one row each, readable from any
-- session as pg_stat_progress_create_index is (mtdpp in
-- shared_preload_libraries; otherwise no rows, and a NOTICE says why).
-- Every role sees the pid and database of a training, its details only if
-- it may see the session's in pg_stat_activity.
CREATE FUNCTION mtdpp_progress_info(OUT pid integer, OUT datid oid, OUT model text, OUT kind text,
                                    OUT phase text, OUT rank integer, OUT epoch integer,
                                    OUT max_epochs integer, OUT validation_mpr float8,
                                    OUT lines bigint, OUT baskets integer, OUT items integer,
                                    OUT seconds float8, OUT seconds_left float8,
                                    OUT started timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'mtdpp_progress_info' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION mtdpp_progress_info() IS
    'the rows of the view mtdpp_progress: one per training in progress on the server';
CREATE FUNCTION mtdpp_progress_available()
RETURNS boolean
AS 'MODULE_PATHNAME', 'mtdpp_progress_available' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION mtdpp_progress_available() IS
    'whether this server reports its trainings in mtdpp_progress: true when mtdpp is in shared_preload_libraries';
CREATE VIEW mtdpp_progress AS
SELECT p.pid, p.datid, d.datname, p.model, p.kind, p.phase, p.rank, p.epoch, p.max_epochs,
       p.validation_mpr, p.lines, p.baskets, p.items, p.seconds, p.seconds_left, p.started
FROM mtdpp_progress_info() p
LEFT JOIN pg_catalog.pg_database d ON d.oid OPERATOR(pg_catalog.=) p.datid;
COMMENT ON VIEW mtdpp_progress IS
    'one row per training in progress on the server: pid, database, model, kind, phase, rank, epoch of max_epochs, last validation MPR, lines, baskets, items, seconds so far and left (the current fit''s remaining epochs at their pace so far); needs mtdpp in shared_preload_libraries';
GRANT SELECT ON mtdpp_progress TO PUBLIC;
