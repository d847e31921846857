-- mtdpp 0.5.0 -> 0.6.0
\echo Use "ALTER EXTENSION mtdpp UPDATE TO '0.6.0'" to load this file. \quit

-- Drivers' lists without casts (doc/reference.md, Drivers): an untyped
-- basket (node-postgres's every parameter, psycopg 3's list of str, an
-- untyped PREPARE parameter, a literal such as '{1,2}') now answers items
-- as text, which every model's keys have, where 0.5.0 answered integer and
-- failed for the models of other keys; psycopg 3's smallint[] lists get
-- forms of their own.  A view or a function of the database's own that
-- uses an untyped form would not expect text, so the update stops and
-- names it rather than drop it; a DBA's grants and revokes of EXECUTE on
-- the recreated forms carry over, and the new smallint forms get those of
-- the integer[] forms of the same function.
DO $$
DECLARE
    users text;
BEGIN
    -- a view by its name, not by its rewrite rule
    SELECT pg_catalog.string_agg(DISTINCT coalesce(
               (SELECT 'view ' OPERATOR(pg_catalog.||) r.ev_class::pg_catalog.regclass::text
                FROM pg_catalog.pg_rewrite r
                WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass
                  AND r.oid OPERATOR(pg_catalog.=) d.objid),
               pg_catalog.pg_describe_object(d.classid, d.objid, 0)), ', ')
    INTO users
    FROM pg_catalog.pg_depend d
    WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
      AND d.refobjid OPERATOR(pg_catalog.=) ANY (ARRAY[
          'mtdpp_complete(text, integer, text, text, text)'::pg_catalog.regprocedure,
          'mtdpp_complete_set(text, integer, text, float8, text, text)'::pg_catalog.regprocedure,
          'mtdpp_score(text, text, text)'::pg_catalog.regprocedure,
          'mtdpp_explain(text, text, text)'::pg_catalog.regprocedure])
      AND d.deptype OPERATOR(pg_catalog.=) 'n';
    IF users IS NOT NULL THEN
        RAISE EXCEPTION 'the forms of mtdpp_complete, mtdpp_complete_set, mtdpp_score and mtdpp_explain taking an untyped basket answer text in 0.6.0, and % use(s) them', users
            USING HINT = 'Drop these objects, run ALTER EXTENSION mtdpp UPDATE, then create them again (with a typed basket, such as ARRAY[...] or $1::integer[], where they need integer items).';
    END IF;
END
$$;

-- the grants to carry over: each recreated form its own former ones, each
-- smallint form those of the form a smallint call took before (integer[],
-- or for mtdpp_similar the anycompatible one)
CREATE TEMPORARY TABLE mtdpp_former_acl AS
SELECT n.fn, p.proacl
FROM (VALUES
       ('mtdpp_complete(text, integer, text, text, text)'::pg_catalog.regprocedure,
        'mtdpp_complete(text, integer, text, text, text)'),
       ('mtdpp_complete_set(text, integer, text, float8, text, text)'::pg_catalog.regprocedure,
        'mtdpp_complete_set(text, integer, text, float8, text, text)'),
       ('mtdpp_score(text, text, text)'::pg_catalog.regprocedure,
        'mtdpp_score(text, text, text)'),
       ('mtdpp_explain(text, text, text)'::pg_catalog.regprocedure,
        'mtdpp_explain(text, text, text)'),
       ('mtdpp_complete(integer[], integer, text, integer[], integer[])'::pg_catalog.regprocedure,
        'mtdpp_complete(smallint[], integer, text, smallint[], smallint[])'),
       ('mtdpp_complete_set(integer[], integer, text, float8, integer[], integer[])'::pg_catalog.regprocedure,
        'mtdpp_complete_set(smallint[], integer, text, float8, smallint[], smallint[])'),
       ('mtdpp_score(integer[], integer[], text)'::pg_catalog.regprocedure,
        'mtdpp_score(smallint[], smallint[], text)'),
       ('mtdpp_explain(integer[], integer[], text)'::pg_catalog.regprocedure,
        'mtdpp_explain(smallint[], smallint[], text)'),
       ('mtdpp_similar(anycompatible, integer, text, "any", "any")'::pg_catalog.regprocedure,
        'mtdpp_similar(smallint, integer, text, "any", "any")')) AS n(former, fn)
JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) n.former
WHERE p.proacl IS NOT NULL;

DROP FUNCTION mtdpp_complete(text, integer, text, text, text);
DROP FUNCTION mtdpp_complete_set(text, integer, text, float8, text, text);
DROP FUNCTION mtdpp_score(text, text, text);
DROP FUNCTION mtdpp_explain(text, text, text);

CREATE FUNCTION mtdpp_complete(basket text, k integer, model text DEFAULT NULL,
                               allowed text DEFAULT NULL, excluded text DEFAULT NULL)
RETURNS TABLE (item_id text, score float8, rank integer, from_basket boolean)
AS 'MODULE_PATHNAME', 'mtdpp_complete' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT ROWS 10;
COMMENT ON FUNCTION mtdpp_complete(text, integer, text, text, text) IS
    'mtdpp_complete for an untyped basket such as ''{1,2}'' or a driver''s untyped parameter, read as the model''s items; answers items as text';

CREATE FUNCTION mtdpp_complete_set(basket text, k integer, model text DEFAULT NULL,
                                   diversity float8 DEFAULT 0.5,
                                   allowed text DEFAULT NULL, excluded text DEFAULT NULL)
RETURNS TABLE (item_id text, score float8, rank integer, from_basket boolean)
AS 'MODULE_PATHNAME', 'mtdpp_complete_set' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT ROWS 10;
COMMENT ON FUNCTION mtdpp_complete_set(text, integer, text, float8, text, text) IS
    'mtdpp_complete_set for an untyped basket such as ''{1,2}'' or a driver''s untyped parameter, read as the model''s items; answers items as text';

CREATE FUNCTION mtdpp_score(basket text, items text, model text DEFAULT NULL)
RETURNS TABLE (item_id text, score float8)
AS 'MODULE_PATHNAME', 'mtdpp_score' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT;
COMMENT ON FUNCTION mtdpp_score(text, text, text) IS
    'mtdpp_score for untyped baskets and items such as ''{1,2}'' or a driver''s untyped parameters, read as the model''s items; answers items as text';

CREATE FUNCTION mtdpp_explain(basket text, items text, model text DEFAULT NULL)
RETURNS TABLE (item_id text, basket_item text, contribution float8, rank integer)
AS 'MODULE_PATHNAME', 'mtdpp_explain' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT;
COMMENT ON FUNCTION mtdpp_explain(text, text, text) IS
    'mtdpp_explain for untyped baskets and items such as ''{1,2}'' or a driver''s untyped parameters, read as the model''s items; answers items as text';

COMMENT ON FUNCTION mtdpp_similar(text, integer, text, text, text) IS
    'mtdpp_similar for an untyped ITEM such as ''85123A'' or a driver''s untyped parameter (and untyped ALLOWED and EXCLUDED), read as the model''s items; answers items as text';

-- smallint[]: lists of small ints as psycopg 3 sends them, answered as
-- bigint (an integer model's items fit, and a bigint model's items are
-- bigint).  ALLOWED, EXCLUDED and ITEMS of the array forms are smallint[]
-- too, so that a call with integer[] among them takes the integer[] form
-- rather than be ambiguous; mtdpp_similar has no integer form.
CREATE FUNCTION mtdpp_complete(basket smallint[], k integer, model text DEFAULT NULL,
                               allowed smallint[] DEFAULT NULL, excluded smallint[] DEFAULT NULL)
RETURNS TABLE (item_id bigint, score float8, rank integer, from_basket boolean)
AS 'MODULE_PATHNAME', 'mtdpp_complete' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT ROWS 10;
COMMENT ON FUNCTION mtdpp_complete(smallint[], integer, text, smallint[], smallint[]) IS
    'mtdpp_complete for a smallint[] basket (psycopg 3''s list of small ints); answers items as bigint';
CREATE FUNCTION mtdpp_complete_set(basket smallint[], k integer, model text DEFAULT NULL,
                                   diversity float8 DEFAULT 0.5,
                                   allowed smallint[] DEFAULT NULL, excluded smallint[] DEFAULT NULL)
RETURNS TABLE (item_id bigint, score float8, rank integer, from_basket boolean)
AS 'MODULE_PATHNAME', 'mtdpp_complete_set' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT ROWS 10;
COMMENT ON FUNCTION mtdpp_complete_set(smallint[], integer, text, float8, smallint[], smallint[]) IS
    'mtdpp_complete_set for a smallint[] basket (psycopg 3''s list of small ints); answers items as bigint';
CREATE FUNCTION mtdpp_score(basket smallint[], items smallint[], model text DEFAULT NULL)
RETURNS TABLE (item_id bigint, score float8)
AS 'MODULE_PATHNAME', 'mtdpp_score' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT;
COMMENT ON FUNCTION mtdpp_score(smallint[], smallint[], text) IS
    'mtdpp_score for smallint[] baskets and items (psycopg 3''s lists of small ints); answers items as bigint';
CREATE FUNCTION mtdpp_explain(basket smallint[], items smallint[], model text DEFAULT NULL)
RETURNS TABLE (item_id bigint, basket_item bigint, contribution float8, rank integer)
AS 'MODULE_PATHNAME', 'mtdpp_explain' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT;
COMMENT ON FUNCTION mtdpp_explain(smallint[], smallint[], text) IS
    'mtdpp_explain for smallint[] baskets and items (psycopg 3''s lists of small ints); answers items as bigint';
CREATE FUNCTION mtdpp_similar(item smallint, k integer, model text DEFAULT NULL,
                              allowed "any" DEFAULT NULL, excluded "any" DEFAULT NULL)
RETURNS TABLE (item_id bigint, similarity float8, rank integer)
AS 'MODULE_PATHNAME', 'mtdpp_similar' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT ROWS 10;
COMMENT ON FUNCTION mtdpp_similar(smallint, integer, text, "any", "any") IS
    'mtdpp_similar for a smallint ITEM (psycopg 3''s small int); answers items as bigint';

DO $$
DECLARE
    f record;
    g record;
BEGIN
    FOR f IN SELECT a.fn, a.proacl FROM pg_temp.mtdpp_former_acl a LOOP
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

-- The foreign key from mtdpp.items to mtdpp.models goes: CREATE EXTENSION
-- made it before a restore's data, and pg_restore -j loads the two tables'
-- data in parallel, in an order pg_dump cannot give an extension's tables.
-- What the key did is done here instead: a model's items go with it (a
-- DELETE or TRUNCATE of models), and its model_id cannot change under
-- them; as the tables' owner, so that no policy hides an item.  The read
-- path checks that a model has every item it counts.  Citus fires it on
-- the copies of the table it keeps on each node (doc/scaling.md), where it
-- does nothing: mtdpp_drop and mtdpp_prune delete the items themselves.
ALTER TABLE mtdpp.items DROP CONSTRAINT items_model_id_fkey;
CREATE FUNCTION mtdpp.items_follow_models() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    orphaned integer;
BEGIN
    IF TG_RELID OPERATOR(pg_catalog.<>) 'mtdpp.models'::pg_catalog.regclass THEN
        RETURN NULL;
    END IF;
    IF TG_OP OPERATOR(pg_catalog.=) 'TRUNCATE' THEN
        TRUNCATE mtdpp.items;
    ELSIF TG_OP OPERATOR(pg_catalog.=) 'DELETE' THEN
        DELETE FROM mtdpp.items i USING gone g WHERE i.model_id OPERATOR(pg_catalog.=) g.model_id;
    ELSE
        SELECT o.model_id INTO orphaned FROM gone o
        WHERE EXISTS (SELECT FROM mtdpp.items i WHERE i.model_id OPERATOR(pg_catalog.=) o.model_id)
          AND NOT EXISTS (SELECT FROM mtdpp.models m WHERE m.model_id OPERATOR(pg_catalog.=) o.model_id)
        LIMIT 1;
        IF FOUND THEN
            RAISE EXCEPTION 'model_id % of mtdpp.models cannot change: mtdpp.items holds items of it', orphaned
                USING ERRCODE = 'foreign_key_violation',
                      HINT = 'A model keeps its model_id; train a new version instead.';
        END IF;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER items_deleted AFTER DELETE ON mtdpp.models
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION mtdpp.items_follow_models();
CREATE TRIGGER items_kept AFTER UPDATE ON mtdpp.models
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION mtdpp.items_follow_models();
CREATE TRIGGER items_truncated AFTER TRUNCATE ON mtdpp.models
    FOR EACH STATEMENT EXECUTE FUNCTION mtdpp.items_follow_models();

-- Isolation no longer waits for a trigger to make its policies: they
-- always exist and read mtdpp.isolation, so that every way a database is
-- restored (pg_restore -a --disable-triggers skips the trigger, and its
-- ENABLE TRIGGER ALL undid the trigger's ENABLE ALWAYS) is isolated as the
-- dumped one was.  The state, the rows of mtdpp.isolation and
-- mtdpp.model_readers, stays as it is; policies of the DBA's own stay too.
-- A share with a role now reaches its members, and only 'public' itself
-- names every role.
DROP TRIGGER isolation_applied ON mtdpp.isolation;
DROP TRIGGER isolation_replicated ON mtdpp.isolation;
DROP FUNCTION mtdpp.apply_isolation();
DROP POLICY IF EXISTS mtdpp_own ON mtdpp.models;
DROP POLICY IF EXISTS mtdpp_shared ON mtdpp.models;
DROP POLICY IF EXISTS mtdpp_own ON mtdpp.items;
DROP POLICY IF EXISTS mtdpp_shared ON mtdpp.items;
-- Whether the current role is READER or a member of it, as GRANT reaches
-- the members of a role; false for a role that no longer exists.
CREATE FUNCTION mtdpp.is_member(reader name) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    SELECT reader OPERATOR(pg_catalog.=) CURRENT_USER
        OR EXISTS (SELECT FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) reader
                   AND pg_catalog.pg_has_role(r.oid, 'MEMBER'))
$$;

ALTER POLICY readers_shown ON mtdpp.model_readers
    USING (trained_by OPERATOR(pg_catalog.=) CURRENT_USER OR reader IS NULL OR mtdpp.is_member(reader));

-- Under isolation by role (a row in mtdpp.isolation), a role sees,
-- completes with and changes the models it trained, and sees and completes
-- with those shared with it; the policies on mtdpp.items follow those on
-- mtdpp.models.  Without it, they show every row, unless the DBA has
-- permissive policies of their own on the table: those then decide alone,
-- as they would on a table with no policies of mtdpp's.  Each EXISTS on
-- mtdpp.isolation or pg_policy runs once per query, not per row; query time
-- reads no model under these policies while they show every row
-- (storage/cache.c).
ALTER TABLE mtdpp.models ENABLE ROW LEVEL SECURITY;
ALTER TABLE mtdpp.items ENABLE ROW LEVEL SECURITY;
CREATE POLICY mtdpp_own ON mtdpp.models
    USING (CASE WHEN EXISTS (SELECT FROM mtdpp.isolation)
                THEN trained_by OPERATOR(pg_catalog.=) CURRENT_USER
                ELSE NOT EXISTS (SELECT FROM pg_catalog.pg_policy p
                                 WHERE p.polrelid OPERATOR(pg_catalog.=) 'mtdpp.models'::pg_catalog.regclass
                                   AND p.polpermissive
                                   AND p.polname OPERATOR(pg_catalog.<>) ALL (ARRAY['mtdpp_own', 'mtdpp_shared']::pg_catalog.name[]))
           END);
CREATE POLICY mtdpp_shared ON mtdpp.models FOR SELECT
    USING (EXISTS (SELECT FROM mtdpp.isolation)
           AND EXISTS (SELECT FROM mtdpp.model_readers r
                       WHERE r.name OPERATOR(pg_catalog.=) models.name
                         AND r.trained_by OPERATOR(pg_catalog.=) models.trained_by
                         AND (r.reader IS NULL OR mtdpp.is_member(r.reader))));
CREATE POLICY mtdpp_own ON mtdpp.items
    USING (CASE WHEN EXISTS (SELECT FROM mtdpp.isolation)
                THEN EXISTS (SELECT FROM mtdpp.models m
                             WHERE m.model_id OPERATOR(pg_catalog.=) items.model_id
                               AND m.trained_by OPERATOR(pg_catalog.=) CURRENT_USER)
                ELSE NOT EXISTS (SELECT FROM pg_catalog.pg_policy p
                                 WHERE p.polrelid OPERATOR(pg_catalog.=) 'mtdpp.items'::pg_catalog.regclass
                                   AND p.polpermissive
                                   AND p.polname OPERATOR(pg_catalog.<>) ALL (ARRAY['mtdpp_own', 'mtdpp_shared']::pg_catalog.name[]))
           END);
CREATE POLICY mtdpp_shared ON mtdpp.items FOR SELECT
    USING (EXISTS (SELECT FROM mtdpp.isolation)
           AND EXISTS (SELECT FROM mtdpp.models m WHERE m.model_id OPERATOR(pg_catalog.=) items.model_id));

-- While the models are isolated, a role that row-level security filters
-- may not write a row of a name another role's models hold, by mtdpp's
-- functions or by hand (storage/isolation.c).
CREATE FUNCTION mtdpp.models_name_check() RETURNS trigger
    AS 'MODULE_PATHNAME', 'mtdpp_models_name_check' LANGUAGE C;
CREATE TRIGGER models_name_check BEFORE INSERT OR UPDATE ON mtdpp.models
    FOR EACH ROW EXECUTE FUNCTION mtdpp.models_name_check();

CREATE OR REPLACE FUNCTION mtdpp_share(model text, reader text) RETURNS boolean
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    role_name name := CASE WHEN reader OPERATOR(pg_catalog.=) 'public' THEN NULL ELSE reader END;
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

CREATE OR REPLACE FUNCTION mtdpp_unshare(model text, reader text) RETURNS boolean
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
              CASE WHEN mtdpp_unshare.reader OPERATOR(pg_catalog.=) 'public' THEN NULL
                   ELSE mtdpp_unshare.reader END::name;
    GET DIAGNOSTICS removed = ROW_COUNT;
    RETURN removed OPERATOR(pg_catalog.>) 0;
END
$$;
COMMENT ON FUNCTION mtdpp_unshare(text, text) IS
    'takes back a share of mtdpp_share: READER no longer sees the caller''s models MODEL; returns false if there was none';

-- The four triggers above fire for replicas only, a mode that ALTER TABLE
-- ... ENABLE TRIGGER ALL resets to the default for good (pg_restore -a
-- --disable-triggers runs it), leaving a subscriber's sessions deaf to the
-- changes it applies.  After any ALTER TABLE of a model table, this puts
-- back the mode of those it finds reset; a disabled one stays disabled.
CREATE FUNCTION mtdpp.keep_trigger_modes() RETURNS event_trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    t record;
BEGIN
    FOR t IN
        SELECT DISTINCT c.relname, tg.tgname
        FROM pg_catalog.pg_event_trigger_ddl_commands() d
        JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) d.objid
        JOIN pg_catalog.pg_trigger tg ON tg.tgrelid OPERATOR(pg_catalog.=) c.oid
        WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
          AND c.relnamespace OPERATOR(pg_catalog.=) 'mtdpp'::pg_catalog.regnamespace
          AND tg.tgname OPERATOR(pg_catalog.=) ANY (ARRAY['models_applied', 'items_applied',
              'models_truncate_applied', 'items_truncate_applied']::pg_catalog.name[])
          AND tg.tgenabled OPERATOR(pg_catalog.=) 'O'
    LOOP
        EXECUTE pg_catalog.format('ALTER TABLE mtdpp.%I ENABLE REPLICA TRIGGER %I', t.relname, t.tgname);
    END LOOP;
END
$$;
CREATE EVENT TRIGGER mtdpp_keep_trigger_modes ON ddl_command_end WHEN TAG IN ('ALTER TABLE')
    EXECUTE FUNCTION mtdpp.keep_trigger_modes();
