-- mtdpp_activate, with the promotion rule an activation may name (0.6.0).
-- The model is the argument model, as everywhere a model that exists is
-- named; name, its name until 0.4.0, still works in this release, with a
-- notice.  Without promote, or with 'always', it activates the version, a
-- rollback included, whatever the setting mtdpp.promote (which is for
-- trainings).
CREATE FUNCTION mtdpp_activate(model text DEFAULT NULL, version integer DEFAULT NULL, name text DEFAULT NULL,
                               promote text DEFAULT NULL)
RETURNS integer
    AS 'MODULE_PATHNAME', 'mtdpp_activate' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION mtdpp_activate(text, integer, text, text) IS
    'makes VERSION (default: the newest) the active version of MODEL; returns its model_id.  PROMOTE: ''always'' (the default, also with the setting mtdpp.promote set) or ''if_better:METRIC'', which activates it only if it beats the active version on the baskets its training held out and kept, else keeps the active one (whose model_id it returns) and says why in a NOTICE (NAME: MODEL''s former argument name, deprecated)';
