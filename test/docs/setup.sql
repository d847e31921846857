-- What the README's getting started leaves, before each document's blocks
-- (test/docs/run): the extension, order lines under the names the
-- documents use, and the model shop trained on them.
\set QUIET on
SET client_min_messages = warning;
CREATE EXTENSION mtdpp;
CREATE VIEW order_lines AS
SELECT order_id, item_id, position FROM train_lines;
SELECT count(*) AS trained FROM mtdpp_train('shop', 'order_lines', position_col => 'position') \gset
-- the roles doc/models.md grants to (roles belong to the cluster: made once)
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'app') THEN CREATE ROLE app; END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'analyst') THEN CREATE ROLE analyst; END IF;
END $$;
