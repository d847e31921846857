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
