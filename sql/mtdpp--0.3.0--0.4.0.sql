-- mtdpp 0.3.0 -> 0.4.0
\echo Use "ALTER EXTENSION mtdpp UPDATE TO '0.4.0'" to load this file. \quit

-- mtdpp_models reads mtdpp.models as the caller, not as its owner, so that
-- the caller's privileges and row-level security policies apply to it.
ALTER VIEW mtdpp_models SET (security_invoker = true);
