-- mtdpp 0.5.0 -> 0.6.0
\echo Use "ALTER EXTENSION mtdpp UPDATE TO '0.6.0'" to load this file. \quit

-- The objects of the database's own that use functions FNS, a view by its
-- name rather than by its rewrite rule; NULL for none.  Dropped at the end.
CREATE FUNCTION pg_temp.mtdpp_users_of(fns pg_catalog.oid[]) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT pg_catalog.string_agg(DISTINCT coalesce(
               (SELECT 'view ' OPERATOR(pg_catalog.||) r.ev_class::pg_catalog.regclass::text
                FROM pg_catalog.pg_rewrite r
                WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass
                  AND r.oid OPERATOR(pg_catalog.=) d.objid),
               pg_catalog.pg_describe_object(d.classid, d.objid, 0)), ', ')
    FROM pg_catalog.pg_depend d
    WHERE d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
      AND d.refobjid OPERATOR(pg_catalog.=) ANY (fns)
      AND d.deptype OPERATOR(pg_catalog.=) 'n'
$$;

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
    users text := pg_temp.mtdpp_users_of(ARRAY[
          'mtdpp_complete(text, integer, text, text, text)'::pg_catalog.regprocedure,
          'mtdpp_complete_set(text, integer, text, float8, text, text)'::pg_catalog.regprocedure,
          'mtdpp_score(text, text, text)'::pg_catalog.regprocedure,
          'mtdpp_explain(text, text, text)'::pg_catalog.regprocedure]::pg_catalog.oid[]);
BEGIN
    IF users IS NOT NULL THEN
        RAISE EXCEPTION 'the forms of mtdpp_complete, mtdpp_complete_set, mtdpp_score and mtdpp_explain taking an untyped basket answer text in 0.6.0, and % use(s) them', users
            USING HINT = 'Drop these objects, run ALTER EXTENSION mtdpp UPDATE, then create them again (with a typed basket, such as ARRAY[...] or $1::integer[], where they need integer items).';
    END IF;
END
$$;

-- the grants to carry over, restored at the end of the script: each
-- recreated form its own former ones (mtdpp_train's table form both of its
-- forms), each smallint form those of the form a smallint call took before
-- (integer[], or for mtdpp_similar the anycompatible one)
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
        'mtdpp_complete(smallint[], integer, text, "any", "any")'),
       ('mtdpp_complete_set(integer[], integer, text, float8, integer[], integer[])'::pg_catalog.regprocedure,
        'mtdpp_complete_set(smallint[], integer, text, float8, "any", "any")'),
       ('mtdpp_score(integer[], integer[], text)'::pg_catalog.regprocedure,
        'mtdpp_score(smallint[], smallint[], text)'),
       ('mtdpp_explain(integer[], integer[], text)'::pg_catalog.regprocedure,
        'mtdpp_explain(smallint[], smallint[], text)'),
       ('mtdpp_similar(anycompatible, integer, text, "any", "any")'::pg_catalog.regprocedure,
        'mtdpp_similar(smallint, integer, text, "any", "any")'),
       ('mtdpp_train(text, regclass, text, text, text, integer, integer, text, text, bigint, boolean, boolean, jsonb, boolean)'::pg_catalog.regprocedure,
        'mtdpp_train(text, regclass, text, text, text, integer, integer, text, text, bigint, boolean, boolean, jsonb, boolean, float8, text, integer[], text)'),
       ('mtdpp_train(text, regclass, text, text, text, integer, integer, text, text, bigint, boolean, boolean, jsonb, boolean)'::pg_catalog.regprocedure,
        'mtdpp_train(text, text, text, text, text, integer, integer, text, text, bigint, boolean, boolean, jsonb, boolean, float8, text, integer[], text)'),
       ('mtdpp_activate(text, integer, text)'::pg_catalog.regprocedure,
        'mtdpp_activate(text, integer, text, text)')) AS n(former, fn)
JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) n.former
WHERE p.proacl IS NOT NULL;

DROP FUNCTION mtdpp_complete(text, integer, text, text, text);
DROP FUNCTION mtdpp_complete_set(text, integer, text, float8, text, text);
DROP FUNCTION mtdpp_score(text, text, text);
DROP FUNCTION mtdpp_explain(text, text, text);

\ir parts/query_text_forms.sql

\ir parts/query_smallint_forms.sql

-- integer[] baskets take the array forms, as every other type's do: with a
-- form of their own, an array of a domain over integer fits two forms,
-- which PostgreSQL does not choose between.  Each answers integer items
-- through the array form as before.  A form a view or a function of the
-- database's own uses (the object holds it by its OID), or on which a DBA
-- granted or revoked EXECUTE otherwise than on the array form, is kept,
-- with a WARNING (an extension script's NOTICEs are not shown): nothing
-- that works before the update stops working.
DO $$
DECLARE
    f record;
    users text;
BEGIN
    FOR f IN
        SELECT p.oid AS int_form, p.oid::pg_catalog.regprocedure::text AS name, p.proacl, a.proacl AS array_acl
        FROM (VALUES
               ('mtdpp_complete(integer[], integer, text, integer[], integer[])'::pg_catalog.regprocedure,
                'mtdpp_complete(anycompatiblearray, integer, text, "any", "any")'::pg_catalog.regprocedure),
               ('mtdpp_complete_set(integer[], integer, text, float8, integer[], integer[])'::pg_catalog.regprocedure,
                'mtdpp_complete_set(anycompatiblearray, integer, text, float8, "any", "any")'::pg_catalog.regprocedure),
               ('mtdpp_score(integer[], integer[], text)'::pg_catalog.regprocedure,
                'mtdpp_score(anycompatiblearray, anycompatiblearray, text)'::pg_catalog.regprocedure),
               ('mtdpp_explain(integer[], integer[], text)'::pg_catalog.regprocedure,
                'mtdpp_explain(anycompatiblearray, anycompatiblearray, text)'::pg_catalog.regprocedure)) AS n(int_form, array_form)
        JOIN pg_catalog.pg_proc p ON p.oid OPERATOR(pg_catalog.=) n.int_form
        JOIN pg_catalog.pg_proc a ON a.oid OPERATOR(pg_catalog.=) n.array_form
    LOOP
        users := pg_temp.mtdpp_users_of(ARRAY[f.int_form]);
        IF users IS NOT NULL THEN
            RAISE WARNING '% is kept: % use(s) it', f.name, users
                USING DETAIL = 'Until it is dropped, an array of a domain over integer passed to it needs a cast to integer[].',
                      HINT = 'To remove it, drop those objects, run ALTER EXTENSION mtdpp DROP FUNCTION and DROP FUNCTION on it, and create them again: integer[] calls then take the array form.';
        ELSIF f.proacl::text IS DISTINCT FROM f.array_acl::text THEN
            RAISE WARNING '% is kept: its EXECUTE grants differ from those of the array form integer[] calls would take', f.name
                USING DETAIL = 'Until it is dropped, an array of a domain over integer passed to it needs a cast to integer[].',
                      HINT = 'Grant EXECUTE on both forms alike, then ALTER EXTENSION mtdpp DROP FUNCTION and DROP FUNCTION remove it.';
        ELSE
            EXECUTE pg_catalog.format('DROP FUNCTION %s', f.name);
        END IF;
    END LOOP;
END
$$;

\ir parts/query_array_comments.sql

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
\ir parts/items_follow_models.sql

-- Isolation no longer waits for a trigger to make its policies: they
-- always exist and read mtdpp.isolation, so that every way a database is
-- restored (pg_restore -a --disable-triggers skips the trigger, and its
-- ENABLE TRIGGER ALL undid the trigger's ENABLE ALWAYS) is isolated as the
-- dumped one was.  The state, the rows of mtdpp.isolation and
-- mtdpp.model_readers, stays as it is; policies of the DBA's own stay too.
-- A share with a role now reaches its members, and only 'public' itself
-- names every role.  The policies are made again below, once the model
-- tables have their roles' OIDs.
DROP TRIGGER isolation_applied ON mtdpp.isolation;
DROP TRIGGER isolation_replicated ON mtdpp.isolation;
DROP FUNCTION mtdpp.apply_isolation();
DROP POLICY IF EXISTS mtdpp_own ON mtdpp.models;
DROP POLICY IF EXISTS mtdpp_shared ON mtdpp.models;
DROP POLICY IF EXISTS mtdpp_own ON mtdpp.items;
DROP POLICY IF EXISTS mtdpp_shared ON mtdpp.items;
DROP POLICY readers_shown ON mtdpp.model_readers;
DROP POLICY readers_added ON mtdpp.model_readers;
DROP POLICY readers_removed ON mtdpp.model_readers;
DROP POLICY readers_renamed ON mtdpp.model_readers;

-- A model's life: mtdpp_train holds out test baskets by itself (test_share,
-- test_by, test_k), activates its version by a promotion rule (promote, or
-- the setting mtdpp.promote), and reads a query as well as a table or view
-- (a form taking the source as text).  The regclass form gains the new
-- arguments, so it is made again; a DBA's grants and revokes of EXECUTE on
-- it carry over to both forms.
DROP FUNCTION mtdpp_train(text, regclass, text, text, text, integer, integer, text, text, bigint, boolean, boolean, jsonb, boolean);

\ir parts/train_forms.sql

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

-- A model, and a share, belongs to a role by its OID, the cluster that
-- wrote it beside it; the rows there are now belong to the roles of their
-- names that exist, and the others to their names until a role of that
-- name exists and a mapping point (sql/parts/role_ids.sql) maps them.  The
-- policies, the shares and mtdpp_isolate read and write the OIDs.
\ir parts/role_ids.sql
SELECT mtdpp.map_roles();

\ir parts/is_member.sql

\ir parts/isolation_policies.sql

\ir parts/isolate.sql

\ir parts/share.sql

-- mtdpp_activate gains promote, the rule an activation may name: made
-- again, a DBA's grants and revokes of EXECUTE on it carried over.
DROP FUNCTION mtdpp_activate(text, integer, text);

\ir parts/activate.sql

-- The kinds of model come from one registry (src/kinds/list.h): the code
-- that reads a model refuses a kind it does not know, so the table no longer
-- keeps its own list of them.
ALTER TABLE mtdpp.models DROP CONSTRAINT models_kind_check;

\ir parts/kinds.sql

-- A kind's keys are its own: the hyperparameters a model stores and those
-- mtdpp_hyperparameters(kind) lists are the keys of every kind and the kind's.
COMMENT ON FUNCTION mtdpp_hyperparameters(text) IS
    'the hyperparameter keys KIND takes (those of every kind, and its own), with their type, their default for KIND (as JSON), their valid values and what they do';

\ir parts/keep_trigger_modes.sql

-- The grants captured at the start, onto the forms made again above.
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
DROP FUNCTION pg_temp.mtdpp_users_of(pg_catalog.oid[]);
