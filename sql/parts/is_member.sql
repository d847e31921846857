-- Whether the current role is READER or a member of it, as GRANT reaches
-- the members of a role; false for a role that no longer exists.
CREATE FUNCTION mtdpp.is_member(reader name) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
    SELECT reader OPERATOR(pg_catalog.=) CURRENT_USER
        OR EXISTS (SELECT FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) reader
                   AND pg_catalog.pg_has_role(r.oid, 'MEMBER'))
$$;

