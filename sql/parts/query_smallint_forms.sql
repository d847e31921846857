-- smallint[]: lists of small ints as psycopg 3 sends them, answered as
-- bigint (an integer model's items fit, and a bigint model's items are
-- bigint) where the array form would answer smallint.  ALLOWED and
-- EXCLUDED take any list, as the array form's do, so that a larger list
-- among them (integer[]) does not send the call to the array form; ITEMS
-- of another type than smallint[] does, which answers their common type.
CREATE FUNCTION mtdpp_complete(basket smallint[], k integer, model text DEFAULT NULL,
                               allowed "any" DEFAULT NULL, excluded "any" DEFAULT NULL)
RETURNS TABLE (item_id bigint, score float8, rank integer, from_basket boolean)
AS 'MODULE_PATHNAME', 'mtdpp_complete' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT ROWS 10;
COMMENT ON FUNCTION mtdpp_complete(smallint[], integer, text, "any", "any") IS
    'mtdpp_complete for a smallint[] basket (psycopg 3''s list of small ints); answers items as bigint';
CREATE FUNCTION mtdpp_complete_set(basket smallint[], k integer, model text DEFAULT NULL,
                                   diversity float8 DEFAULT 0.5,
                                   allowed "any" DEFAULT NULL, excluded "any" DEFAULT NULL)
RETURNS TABLE (item_id bigint, score float8, rank integer, from_basket boolean)
AS 'MODULE_PATHNAME', 'mtdpp_complete_set' LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT ROWS 10;
COMMENT ON FUNCTION mtdpp_complete_set(smallint[], integer, text, float8, "any", "any") IS
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
