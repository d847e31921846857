-- The four *_applied triggers of mtdpp.models and mtdpp.items fire for
-- replicas only, a mode that ALTER TABLE ... ENABLE TRIGGER ALL resets to
-- the default for good (pg_restore -a --disable-triggers runs it), leaving a
-- subscriber's sessions deaf to the changes it applies.  After any ALTER
-- TABLE of a model table, this puts back the mode of those it finds reset;
-- a disabled one stays disabled.
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
