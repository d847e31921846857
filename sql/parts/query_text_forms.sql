-- The text forms: an untyped basket or item (a literal such as '{1,2}', a
-- driver's untyped parameter) read as the model's items, answered as text.
-- mtdpp_similar's text form, unchanged since 0.5.0, is created beside its
-- other forms; its comment is here.
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
