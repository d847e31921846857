-- The kinds of model, as the registry of the module lists them.
CREATE FUNCTION mtdpp_kinds()
RETURNS TABLE (name text, number integer, traits text[], keys text[])
AS 'MODULE_PATHNAME', 'mtdpp_kinds' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION mtdpp_kinds() IS
    'every model kind: its NAME (mtdpp_train''s kind), its NUMBER in the stored model format, its TRAITS (what its models hold and which routines it defines: factors, neighbors, explain, similar, ...) and the hyperparameter KEYS it owns';
