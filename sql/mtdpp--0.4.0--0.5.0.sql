-- mtdpp 0.4.0 -> 0.5.0
\echo Use "ALTER EXTENSION mtdpp UPDATE TO '0.5.0'" to load this file. \quit

-- Isolation between roles is a state of the extension, kept in tables that
-- pg_dump keeps, not in policies a DBA writes (pg_dump leaves out the
-- policies and the row-security switch of an extension's tables).  A
-- restore's CREATE EXTENSION makes the tables and the trigger below; as the
-- dumped rows of mtdpp.isolation come back, the trigger makes the policies
-- again.  pg_upgrade carries the policies themselves.
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
CREATE POLICY readers_shown ON mtdpp.model_readers FOR SELECT
    USING (trained_by OPERATOR(pg_catalog.=) CURRENT_USER OR reader OPERATOR(pg_catalog.=) CURRENT_USER
           OR reader IS NULL);
CREATE POLICY readers_added ON mtdpp.model_readers FOR INSERT
    WITH CHECK (trained_by OPERATOR(pg_catalog.=) CURRENT_USER);
CREATE POLICY readers_removed ON mtdpp.model_readers FOR DELETE
    USING (trained_by OPERATOR(pg_catalog.=) CURRENT_USER);
CREATE POLICY readers_renamed ON mtdpp.model_readers FOR UPDATE
    USING (trained_by OPERATOR(pg_catalog.=) CURRENT_USER);
GRANT SELECT, INSERT, UPDATE, DELETE ON mtdpp.model_readers TO PUBLIC;

SELECT pg_catalog.pg_extension_config_dump('mtdpp.isolation', '');
SELECT pg_catalog.pg_extension_config_dump('mtdpp.model_readers', '');

-- Makes the policies of mtdpp.models and mtdpp.items follow mtdpp.isolation.
-- Under isolation by role, a role sees, completes with and changes the
-- models it trained, and sees and completes with those shared with it; the
-- policies on mtdpp.items follow those on mtdpp.models.  Policies of the
-- DBA's own are left as they are, and so is row-level security on a table
-- that still has some.
CREATE FUNCTION mtdpp.apply_isolation() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    p record;
BEGIN
    FOR p IN SELECT polname, polrelid::pg_catalog.regclass AS rel FROM pg_catalog.pg_policy
             WHERE polrelid OPERATOR(pg_catalog.=) ANY (ARRAY['mtdpp.models'::pg_catalog.regclass,
                                                              'mtdpp.items'::pg_catalog.regclass])
               AND polname OPERATOR(pg_catalog.=) ANY (ARRAY['mtdpp_own', 'mtdpp_shared']::name[])
    LOOP
        EXECUTE pg_catalog.format('DROP POLICY %I ON %s', p.polname, p.rel);
    END LOOP;
    IF EXISTS (SELECT FROM mtdpp.isolation) THEN
        ALTER TABLE mtdpp.models ENABLE ROW LEVEL SECURITY;
        ALTER TABLE mtdpp.items ENABLE ROW LEVEL SECURITY;
        CREATE POLICY mtdpp_own ON mtdpp.models
            USING (trained_by OPERATOR(pg_catalog.=) CURRENT_USER);
        CREATE POLICY mtdpp_shared ON mtdpp.models FOR SELECT
            USING (EXISTS (SELECT FROM mtdpp.model_readers r
                           WHERE r.name OPERATOR(pg_catalog.=) models.name
                             AND r.trained_by OPERATOR(pg_catalog.=) models.trained_by
                             AND (r.reader IS NULL OR r.reader OPERATOR(pg_catalog.=) CURRENT_USER)));
        CREATE POLICY mtdpp_own ON mtdpp.items
            USING (EXISTS (SELECT FROM mtdpp.models m
                           WHERE m.model_id OPERATOR(pg_catalog.=) items.model_id
                             AND m.trained_by OPERATOR(pg_catalog.=) CURRENT_USER));
        CREATE POLICY mtdpp_shared ON mtdpp.items FOR SELECT
            USING (EXISTS (SELECT FROM mtdpp.models m WHERE m.model_id OPERATOR(pg_catalog.=) items.model_id));
    ELSE
        IF NOT EXISTS (SELECT FROM pg_catalog.pg_policy
                       WHERE polrelid OPERATOR(pg_catalog.=) 'mtdpp.models'::pg_catalog.regclass) THEN
            ALTER TABLE mtdpp.models DISABLE ROW LEVEL SECURITY;
        END IF;
        IF NOT EXISTS (SELECT FROM pg_catalog.pg_policy
                       WHERE polrelid OPERATOR(pg_catalog.=) 'mtdpp.items'::pg_catalog.regclass) THEN
            ALTER TABLE mtdpp.items DISABLE ROW LEVEL SECURITY;
        END IF;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER isolation_applied AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON mtdpp.isolation
    FOR EACH STATEMENT EXECUTE FUNCTION mtdpp.apply_isolation();
-- also when rows arrive with session_replication_role = replica
-- (pg_restore --disable-triggers); logical replication's apply worker fires
-- row triggers only, those enabled for replicas
ALTER TABLE mtdpp.isolation ENABLE ALWAYS TRIGGER isolation_applied;
CREATE TRIGGER isolation_replicated AFTER INSERT OR UPDATE OR DELETE ON mtdpp.isolation
    FOR EACH ROW EXECUTE FUNCTION mtdpp.apply_isolation();
ALTER TABLE mtdpp.isolation ENABLE REPLICA TRIGGER isolation_replicated;

CREATE FUNCTION mtdpp_isolate("by" text DEFAULT 'role') RETURNS text
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    tables_owner name := (SELECT pg_catalog.pg_get_userbyid(c.relowner) FROM pg_catalog.pg_class c
                          WHERE c.oid OPERATOR(pg_catalog.=) 'mtdpp.models'::pg_catalog.regclass);
BEGIN
    IF "by" IS NULL OR "by" NOT IN ('role', 'none') THEN
        RAISE EXCEPTION 'cannot isolate the models by %', pg_catalog.quote_nullable("by")
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'by => ''role'' keeps each role to the models it trained and those shared with it; by => ''none'' lifts that.';
    END IF;
    IF NOT pg_catalog.pg_has_role(tables_owner, 'USAGE') THEN
        RAISE EXCEPTION 'role "%" cannot change the isolation of the models', CURRENT_USER
            USING ERRCODE = 'insufficient_privilege',
                  HINT = pg_catalog.format('Only the owner of mtdpp.models, role %s, or a member of it can.',
                                           pg_catalog.quote_ident(tables_owner));
    END IF;
    DELETE FROM mtdpp.isolation;
    IF "by" OPERATOR(pg_catalog.=) 'role' THEN
        INSERT INTO mtdpp.isolation (isolated_by) VALUES ('role');
    END IF;
    RETURN "by";
END
$$;
COMMENT ON FUNCTION mtdpp_isolate(text) IS
    'isolates the models by role (BY => ''role''): each role sees, completes with and changes only the models it trained, and sees and completes with those shared with it (mtdpp_share); BY => ''none'' lifts it; pg_dump and pg_upgrade keep the state';

CREATE FUNCTION mtdpp_share(model text, reader text) RETURNS boolean
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    role_name name := CASE WHEN pg_catalog.lower(reader) OPERATOR(pg_catalog.=) 'public' THEN NULL ELSE reader END;
    added integer;
BEGIN
    IF model IS NULL OR reader IS NULL THEN
        RAISE EXCEPTION 'mtdpp_share: model and reader must not be NULL'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'reader => ''public'' shares with every role.';
    END IF;
    IF NOT EXISTS (SELECT FROM mtdpp.models m WHERE m.name OPERATOR(pg_catalog.=) model
                   AND m.trained_by OPERATOR(pg_catalog.=) CURRENT_USER) THEN
        RAISE EXCEPTION 'role "%" has no model "%" to share', CURRENT_USER, model
            USING ERRCODE = 'undefined_object',
                  HINT = 'A role shares the models it trained: SELECT name FROM mtdpp_models lists the models it sees.';
    END IF;
    IF role_name IS NOT NULL AND NOT EXISTS (SELECT FROM pg_catalog.pg_roles r
                                             WHERE r.rolname OPERATOR(pg_catalog.=) role_name) THEN
        RAISE EXCEPTION 'role "%" does not exist', reader
            USING ERRCODE = 'undefined_object', HINT = 'reader => ''public'' shares with every role.';
    END IF;
    INSERT INTO mtdpp.model_readers (name, trained_by, reader) VALUES (model, CURRENT_USER, role_name)
        ON CONFLICT DO NOTHING;
    GET DIAGNOSTICS added = ROW_COUNT;
    RETURN added OPERATOR(pg_catalog.>) 0;
END
$$;
COMMENT ON FUNCTION mtdpp_share(text, text) IS
    'lets READER (a role, or ''public'': every role) see and complete with the caller''s models MODEL while the models are isolated by role, present versions and later ones; returns false if it already could';

CREATE FUNCTION mtdpp_unshare(model text, reader text) RETURNS boolean
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    removed integer;
BEGIN
    IF model IS NULL OR reader IS NULL THEN
        RAISE EXCEPTION 'mtdpp_unshare: model and reader must not be NULL'
            USING ERRCODE = 'null_value_not_allowed', HINT = 'reader => ''public'' takes back a share with every role.';
    END IF;
    DELETE FROM mtdpp.model_readers r
        WHERE r.name OPERATOR(pg_catalog.=) mtdpp_unshare.model
          AND r.trained_by OPERATOR(pg_catalog.=) CURRENT_USER
          AND r.reader IS NOT DISTINCT FROM
              CASE WHEN pg_catalog.lower(mtdpp_unshare.reader) OPERATOR(pg_catalog.=) 'public' THEN NULL
                   ELSE mtdpp_unshare.reader END::name;
    GET DIAGNOSTICS removed = ROW_COUNT;
    RETURN removed OPERATOR(pg_catalog.>) 0;
END
$$;
COMMENT ON FUNCTION mtdpp_unshare(text, text) IS
    'takes back a share of mtdpp_share: READER no longer sees the caller''s models MODEL; returns false if there was none';

-- Isolation made by hand with 0.4.0's recipe (policies on the model
-- tables) works as before, but pg_dump leaves it out: say so (a WARNING, as
-- an extension script's NOTICEs are not shown).
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_class c
               WHERE c.oid OPERATOR(pg_catalog.=) ANY (ARRAY['mtdpp.models'::pg_catalog.regclass,
                                                            'mtdpp.items'::pg_catalog.regclass])
                 AND c.relrowsecurity) THEN
        RAISE WARNING 'row-level security on mtdpp.models or mtdpp.items was enabled by hand: pg_dump does not keep it, nor its policies'
            USING HINT = 'SELECT mtdpp_isolate(''role'') isolates the models by role in a way pg_dump keeps; then drop the hand-made policies (doc/models.md, "Isolation").';
    END IF;
END
$$;

-- A call that names no model answers with the model mtdpp.model names, or
-- the only model with an active version; no longer the most recently
-- activated of several.  A database with several keeps its answers: its
-- default is set to the model that was the default, where the updating role
-- may set it.

-- Items known by keys of another type than integer (see below).
ALTER TABLE mtdpp.models ADD COLUMN item_type text
    CONSTRAINT models_item_type_check CHECK (item_type OPERATOR(pg_catalog.=) ANY (ARRAY['bigint', 'text', 'uuid']));
ALTER TABLE mtdpp.items ADD COLUMN item_key text;
COMMENT ON COLUMN mtdpp.models.item_type IS 'the type of the keys of its items when they are not integers (bigint, text or uuid), else NULL';
COMMENT ON COLUMN mtdpp.items.item_key IS 'the key of the item in the orders table, in text form, when the model''s items are not integers (item_id then numbers the keys in their order)';
-- A role granted SELECT on the model tables column by column (0.4.0's
-- documented alternative to table privileges) gets the new columns too:
-- query time checks that a role may read every column.
DO $$
DECLARE
    g record;
BEGIN
    FOR g IN SELECT DISTINCT a.attrelid::pg_catalog.regclass AS rel, x.grantee
             FROM pg_catalog.pg_attribute a, pg_catalog.aclexplode(a.attacl) x
             WHERE a.attrelid OPERATOR(pg_catalog.=) ANY (ARRAY['mtdpp.models'::pg_catalog.regclass,
                                                                 'mtdpp.items'::pg_catalog.regclass])
               AND a.attname OPERATOR(pg_catalog.=) 'model_id'
               AND x.privilege_type OPERATOR(pg_catalog.=) 'SELECT' LOOP
        EXECUTE pg_catalog.format('GRANT SELECT (%I) ON %s TO %s',
            CASE WHEN g.rel OPERATOR(pg_catalog.=) 'mtdpp.models'::pg_catalog.regclass THEN 'item_type' ELSE 'item_key' END,
            g.rel,
            CASE WHEN g.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                 ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(g.grantee)) END);
    END LOOP;
END
$$;

CREATE OR REPLACE VIEW mtdpp_models WITH (security_invoker = true) AS
SELECT m.name, m.version, m.kind, m.active,
       (m.active AND m.name OPERATOR(pg_catalog.=)
           CASE WHEN pg_catalog.current_setting('mtdpp.model', true) OPERATOR(pg_catalog.<>) ''
                THEN pg_catalog.current_setting('mtdpp.model', true)
                ELSE (SELECT pg_catalog.min(a.name) FROM mtdpp.models a WHERE a.active
                      HAVING pg_catalog.count(*) OPERATOR(pg_catalog.=) 1) END) IS TRUE AS is_default,
       m.rank, m.n_items AS items, m.n_baskets AS baskets, m.n_examples AS examples,
       m.final_loss, m.best_epoch, m.train_seconds,
       (m.metrics OPERATOR(pg_catalog.->>) 'mpr'::pg_catalog.text)::pg_catalog.float8 AS mpr,
       (m.metrics OPERATOR(pg_catalog.->>) 'precision_at_20'::pg_catalog.text)::pg_catalog.float8 AS precision_at_20,
       m.trained_at, m.model_id, COALESCE(m.item_type, 'integer') AS item_type
FROM mtdpp.models m
ORDER BY m.name, m.version;
COMMENT ON VIEW mtdpp_models IS 'every stored model, with the default one marked: the active version of the model mtdpp.model names, or of the only model with an active version when it names none (it answers calls that name no model)';
DO $$
DECLARE
    default_name text;
BEGIN
    -- Under row-level security made by hand (0.4.0's isolation recipe),
    -- the setting, which every role reads, would publish one role's model
    -- name to all: none is set, and none is named.
    IF (SELECT pg_catalog.count(*) FROM mtdpp.models WHERE active) OPERATOR(pg_catalog.>) 1
       AND EXISTS (SELECT FROM pg_catalog.pg_class c
                   WHERE c.oid OPERATOR(pg_catalog.=) ANY (ARRAY['mtdpp.models'::pg_catalog.regclass,
                                                                'mtdpp.items'::pg_catalog.regclass])
                     AND c.relrowsecurity) THEN
        RAISE WARNING 'calls that name no model will fail while several models are active and mtdpp.model is not set'
            USING HINT = 'Row-level security is on for the model tables, so no model is set for the whole database: ALTER ROLE ... SET mtdpp.model gives each role its own default.';
    ELSIF (SELECT pg_catalog.count(*) FROM mtdpp.models WHERE active) OPERATOR(pg_catalog.>) 1 THEN
        SELECT name INTO default_name FROM mtdpp.models WHERE active
        ORDER BY activated_at DESC NULLS LAST, model_id DESC LIMIT 1;
        IF pg_catalog.pg_has_role((SELECT datdba FROM pg_catalog.pg_database
                                   WHERE datname OPERATOR(pg_catalog.=) pg_catalog.current_database()), 'USAGE') THEN
            EXECUTE pg_catalog.format('ALTER DATABASE %I SET mtdpp.model = %L',
                                      pg_catalog.current_database(), default_name);
            RAISE WARNING 'mtdpp.model is set to % for database %: calls that name no model answer with it, as they did', pg_catalog.quote_literal(default_name), pg_catalog.quote_ident(pg_catalog.current_database())
                USING HINT = 'New sessions read it. A call that names no model answers with the model mtdpp.model names, or with the only model with an active version; ALTER DATABASE ... RESET mtdpp.model undoes this.';
        ELSE
            RAISE WARNING 'calls that name no model will fail while several models are active and mtdpp.model is not set'
                USING HINT = pg_catalog.format('ALTER DATABASE %I SET mtdpp.model = %L keeps the default as it was (for the database''s owner or a superuser).', pg_catalog.current_database(), default_name);
        END IF;
    END IF;
END
$$;

-- Functions this update recreates (the completions, which gain a column;
-- the management functions, which take the model as model): a DBA's grants
-- and revokes of EXECUTE on them carry over to the new forms (at the end).
CREATE TEMPORARY TABLE mtdpp_former_acl AS
SELECT p.proname, p.proacl FROM pg_catalog.pg_proc p
WHERE p.oid OPERATOR(pg_catalog.=) ANY (ARRAY['mtdpp_complete(integer[], integer, text, integer[], integer[])'::pg_catalog.regprocedure,
                                               'mtdpp_complete_set(integer[], integer, text, float8, integer[], integer[])'::pg_catalog.regprocedure,
                                               'mtdpp_activate(text, integer)'::pg_catalog.regprocedure,
                                               'mtdpp_drop(text, integer)'::pg_catalog.regprocedure,
                                               'mtdpp_rename(text, text)'::pg_catalog.regprocedure,
                                               'mtdpp_prune(text, integer)'::pg_catalog.regprocedure])
  AND p.proacl IS NOT NULL;

-- A completion's rows say whether each item comes from the basket or from
-- the fallback (from_basket): the integer[] forms gain the column, which a
-- view or a function of the database's own that uses them would not
-- expect, so the update stops and names it rather than drop it.
DO $$
DECLARE
    users text;
BEGIN
    SELECT pg_catalog.string_agg(DISTINCT pg_catalog.pg_describe_object(d.classid, d.objid, 0), ', ')
    INTO users
    FROM pg_catalog.pg_depend d
    WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
      AND d.refobjid OPERATOR(pg_catalog.=) ANY (ARRAY[
          'mtdpp_complete(integer[], integer, text, integer[], integer[])'::pg_catalog.regprocedure,
          'mtdpp_complete_set(integer[], integer, text, float8, integer[], integer[])'::pg_catalog.regprocedure])
      AND d.deptype OPERATOR(pg_catalog.=) 'n';
    IF users IS NOT NULL THEN
        RAISE EXCEPTION 'mtdpp_complete and mtdpp_complete_set gain a column in 0.5.0, and % use(s) them', users
            USING HINT = 'Drop these objects, run ALTER EXTENSION mtdpp UPDATE, then create them again.';
    END IF;
END
$$;
DROP FUNCTION mtdpp_complete(integer[], integer, text, integer[], integer[]);
DROP FUNCTION mtdpp_complete_set(integer[], integer, text, float8, integer[], integer[]);
CREATE FUNCTION mtdpp_complete(basket integer[], k integer, model text DEFAULT NULL,
                               allowed integer[] DEFAULT NULL, excluded integer[] DEFAULT NULL)
RETURNS TABLE (item_id integer, score float8, rank integer, from_basket boolean)
AS 'MODULE_PATHNAME', 'mtdpp_complete' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT ROWS 10;
COMMENT ON FUNCTION mtdpp_complete(integer[], integer, text, integer[], integer[]) IS
    'the K items that best complete BASKET, best first, never one of its items, only ALLOWED ones (NULL: any) and never EXCLUDED ones; for the DPP kinds score = ln(w det K), so P(y=1 | basket, item) = 1 - exp(-exp(score)); FROM_BASKET: the score comes from the basket''s items, not from the fallback (popularity)';

-- A diverse set of completions, by greedy MAP in a DPP over the best ones.
CREATE FUNCTION mtdpp_complete_set(basket integer[], k integer, model text DEFAULT NULL,
                                   diversity float8 DEFAULT 0.5,
                                   allowed integer[] DEFAULT NULL, excluded integer[] DEFAULT NULL)
RETURNS TABLE (item_id integer, score float8, rank integer, from_basket boolean)
AS 'MODULE_PATHNAME', 'mtdpp_complete_set' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT ROWS 10;
COMMENT ON FUNCTION mtdpp_complete_set(integer[], integer, text, float8, integer[], integer[]) IS
    'K items that complete BASKET together, in the order chosen: greedy MAP in a DPP whose qualities are the model''s scores and whose similarities the cosines of its item factors; DIVERSITY 0 is mtdpp_complete''s ranking, 1 as diverse as its best max(10K, 100) candidates allow; ALLOWED and EXCLUDED as for mtdpp_complete';


-- Items of any type the orders table keys them by: integer, bigint, text or
-- uuid.  A model trained from keys that are not integers records their type
-- and each item's key (in text form); the forms below take the basket and
-- the item lists in the caller's type and answer items in that type.  The
-- forms taking text read an untyped literal such as '{1,2}' as an array of
-- the model's items, as the integer[] forms did before keys existed.

CREATE FUNCTION mtdpp_complete(basket anycompatiblearray, k integer, model text DEFAULT NULL,
                               allowed "any" DEFAULT NULL, excluded "any" DEFAULT NULL)
RETURNS TABLE (item_id anycompatible, score float8, rank integer, from_basket boolean)
AS 'MODULE_PATHNAME', 'mtdpp_complete' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT ROWS 10;
COMMENT ON FUNCTION mtdpp_complete(anycompatiblearray, integer, text, "any", "any") IS
    'mtdpp_complete for items of any type (integer, bigint, text, uuid): BASKET, ALLOWED and EXCLUDED hold items of the type the model was trained on, and items come back in the type of BASKET';
CREATE FUNCTION mtdpp_complete(basket text, k integer, model text DEFAULT NULL,
                               allowed text DEFAULT NULL, excluded text DEFAULT NULL)
RETURNS TABLE (item_id integer, score float8, rank integer, from_basket boolean)
AS 'MODULE_PATHNAME', 'mtdpp_complete' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT ROWS 10;
COMMENT ON FUNCTION mtdpp_complete(text, integer, text, text, text) IS
    'mtdpp_complete for an untyped array literal such as ''{1,2}'', read as the model''s items; answers integer items';

CREATE FUNCTION mtdpp_complete_set(basket anycompatiblearray, k integer, model text DEFAULT NULL,
                                   diversity float8 DEFAULT 0.5,
                                   allowed "any" DEFAULT NULL, excluded "any" DEFAULT NULL)
RETURNS TABLE (item_id anycompatible, score float8, rank integer, from_basket boolean)
AS 'MODULE_PATHNAME', 'mtdpp_complete_set' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT ROWS 10;
COMMENT ON FUNCTION mtdpp_complete_set(anycompatiblearray, integer, text, float8, "any", "any") IS
    'mtdpp_complete_set for items of any type, answered in the type of BASKET';
CREATE FUNCTION mtdpp_complete_set(basket text, k integer, model text DEFAULT NULL,
                                   diversity float8 DEFAULT 0.5,
                                   allowed text DEFAULT NULL, excluded text DEFAULT NULL)
RETURNS TABLE (item_id integer, score float8, rank integer, from_basket boolean)
AS 'MODULE_PATHNAME', 'mtdpp_complete_set' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT ROWS 10;
COMMENT ON FUNCTION mtdpp_complete_set(text, integer, text, float8, text, text) IS
    'mtdpp_complete_set for an untyped array literal such as ''{1,2}'', read as the model''s items; answers integer items';

CREATE FUNCTION mtdpp_score(basket anycompatiblearray, items anycompatiblearray, model text DEFAULT NULL)
RETURNS TABLE (item_id anycompatible, score float8)
AS 'MODULE_PATHNAME', 'mtdpp_score' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT;
COMMENT ON FUNCTION mtdpp_score(anycompatiblearray, anycompatiblearray, text) IS
    'mtdpp_score for items of any type, answered in the type of ITEMS';
CREATE FUNCTION mtdpp_score(basket text, items text, model text DEFAULT NULL)
RETURNS TABLE (item_id integer, score float8)
AS 'MODULE_PATHNAME', 'mtdpp_score' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT;
COMMENT ON FUNCTION mtdpp_score(text, text, text) IS
    'mtdpp_score for untyped array literals such as ''{1,2}'', read as the model''s items; answers integer items';

CREATE FUNCTION mtdpp_explain(basket anycompatiblearray, items anycompatiblearray, model text DEFAULT NULL)
RETURNS TABLE (item_id anycompatible, basket_item anycompatible, contribution float8, rank integer)
AS 'MODULE_PATHNAME', 'mtdpp_explain' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT;
COMMENT ON FUNCTION mtdpp_explain(anycompatiblearray, anycompatiblearray, text) IS
    'mtdpp_explain for items of any type, answered in the type of BASKET and ITEMS';
CREATE FUNCTION mtdpp_explain(basket text, items text, model text DEFAULT NULL)
RETURNS TABLE (item_id integer, basket_item integer, contribution float8, rank integer)
AS 'MODULE_PATHNAME', 'mtdpp_explain' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT;
COMMENT ON FUNCTION mtdpp_explain(text, text, text) IS
    'mtdpp_explain for untyped array literals such as ''{1,2}'', read as the model''s items; answers integer items';

CREATE FUNCTION mtdpp_rules(model text, item_type anycompatible)
RETURNS TABLE (antecedent anycompatiblearray, consequent anycompatible, support float8, confidence float8, lift float8)
AS 'MODULE_PATHNAME', 'mtdpp_rules' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT;
COMMENT ON FUNCTION mtdpp_rules(text, anycompatible) IS
    'mtdpp_rules with items in the type of ITEM_TYPE, a NULL of that type: mtdpp_rules(''m'', NULL::text) for a model trained on text keys';

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
COMMENT ON FUNCTION mtdpp_similar(text, integer, text, text, text) IS
    'mtdpp_similar for an untyped literal ITEM such as ''85123A'' (and array literals for ALLOWED and EXCLUDED), read as the model''s items; answers items as text';

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

DROP FUNCTION mtdpp_activate(text, integer);
DROP FUNCTION mtdpp_drop(text, integer);
DROP FUNCTION mtdpp_rename(text, text);
DROP FUNCTION mtdpp_prune(text, integer);
-- Model management.  The model is the argument model, as everywhere a
-- model that exists is named; name, its name until 0.4.0, still works in
-- this release, with a notice.
CREATE FUNCTION mtdpp_activate(model text DEFAULT NULL, version integer DEFAULT NULL, name text DEFAULT NULL)
RETURNS integer
    AS 'MODULE_PATHNAME', 'mtdpp_activate' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION mtdpp_activate(text, integer, text) IS
    'makes VERSION (default: the newest) the active version of MODEL; returns its model_id (NAME: MODEL''s former argument name, deprecated)';

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

DO $$
DECLARE
    f record;
    g record;
BEGIN
    FOR f IN SELECT a.proacl, pg_catalog.format('%I.%I(%s)', n.nspname, p.proname,
                                                 pg_catalog.pg_get_function_identity_arguments(p.oid)) AS fn
             FROM pg_temp.mtdpp_former_acl a
             JOIN pg_catalog.pg_proc p ON p.proname OPERATOR(pg_catalog.=) a.proname
             JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) p.pronamespace
             JOIN pg_catalog.pg_depend d ON d.objid OPERATOR(pg_catalog.=) p.oid
                  AND d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
                  AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
                  AND d.refobjid OPERATOR(pg_catalog.=) (SELECT e.oid FROM pg_catalog.pg_extension e
                                                         WHERE e.extname OPERATOR(pg_catalog.=) 'mtdpp') LOOP
        EXECUTE pg_catalog.format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f.fn);
        FOR g IN SELECT x.grantee FROM pg_catalog.aclexplode(f.proacl) x
                 WHERE x.privilege_type OPERATOR(pg_catalog.=) 'EXECUTE' LOOP
            EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO %s', f.fn,
                CASE WHEN g.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                     ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(g.grantee)) END);
        END LOOP;
    END LOOP;
END
$$;
DROP TABLE pg_temp.mtdpp_former_acl;

-- A test helper is no part of what users get: the tests declare it.
DROP FUNCTION mtdpp.gradient_check(integer, integer, bigint, boolean);
