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
