-- mtdpp_train's two forms: a source as regclass (a table or view), and as
-- text, the type an untyped literal takes (a query, or else a name).
CREATE FUNCTION mtdpp_train(
    name text,
    source regclass,
    order_col text DEFAULT 'order_id',
    item_col text DEFAULT 'item_id',
    position_col text DEFAULT NULL,
    rank integer DEFAULT NULL,
    epochs integer DEFAULT NULL,
    kind text DEFAULT 'hybrid',
    target text DEFAULT 'random',
    seed bigint DEFAULT 0,
    verbose boolean DEFAULT false,
    activate boolean DEFAULT true,
    params jsonb DEFAULT '{}',
    warm_start boolean DEFAULT false,
    test_share float8 DEFAULT NULL,
    test_by text DEFAULT NULL,
    test_k integer[] DEFAULT NULL,
    promote text DEFAULT NULL)
RETURNS TABLE (model_id integer, name text, version integer, kind text, items integer,
               baskets integer, examples bigint, final_loss float8, best_epoch integer, seconds float8)
AS 'MODULE_PATHNAME', 'mtdpp_train' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION mtdpp_train(text, regclass, text, text, text, integer, integer, text, text, bigint, boolean, boolean, jsonb, boolean, float8, text, integer[], text) IS
    'trains a model of NAME from the order lines of SOURCE (a table or view) and stores it as its next version; WARM_START starts from its active version; TEST_SHARE holds out a share of the baskets (random, or the latest by column TEST_BY) and records their metrics at TEST_K; PROMOTE (default: the setting mtdpp.promote) says when the new version becomes the active one';

-- A source given as text, as an untyped literal is: a query, or else the
-- name of a table or view, read as the regclass form reads it (PostgreSQL
-- resolves an untyped argument to text rather than regclass).
CREATE FUNCTION mtdpp_train(
    name text,
    source text,
    order_col text DEFAULT 'order_id',
    item_col text DEFAULT 'item_id',
    position_col text DEFAULT NULL,
    rank integer DEFAULT NULL,
    epochs integer DEFAULT NULL,
    kind text DEFAULT 'hybrid',
    target text DEFAULT 'random',
    seed bigint DEFAULT 0,
    verbose boolean DEFAULT false,
    activate boolean DEFAULT true,
    params jsonb DEFAULT '{}',
    warm_start boolean DEFAULT false,
    test_share float8 DEFAULT NULL,
    test_by text DEFAULT NULL,
    test_k integer[] DEFAULT NULL,
    promote text DEFAULT NULL)
RETURNS TABLE (model_id integer, name text, version integer, kind text, items integer,
               baskets integer, examples bigint, final_loss float8, best_epoch integer, seconds float8)
AS 'MODULE_PATHNAME', 'mtdpp_train' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION mtdpp_train(text, text, text, text, text, integer, integer, text, text, bigint, boolean, boolean, jsonb, boolean, float8, text, integer[], text) IS
    'mtdpp_train from SOURCE given as text: a query (its first word SELECT, WITH, VALUES or TABLE), run with the caller''s rights, or else the name of a table or view';
