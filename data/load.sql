-- Loads one benchmark dataset (the layout of data/README.md: orders.csv,
-- split.csv and, where the source has names, items.csv) into
--
--   orders(order_id bigint, item_id int, position int)   every order line
--   items(item_id int primary key, name text)            the catalog
--   split(order_id bigint, role text, held_out int)      the train/test split
--   train_lines                                          order lines of train baskets
--   test_baskets(order_id, basket int[], held_out int)   test baskets, whole (held_out
--                                                        included), in position order
--
-- Usage:
--   psql -v dir=data/amazon_diaper -f data/load.sql
--   psql -v dir=/path/to/instacart_sample -v schema=instacart -v split=split_random.csv -f data/load.sql
--
-- Variables: dir (required), schema (default public; created if missing),
-- split (default split.csv).  psql reads the files (\copy), so the server
-- needs no access to them.  Without items.csv, items lists every item of
-- orders.csv with a NULL name.  Re-running replaces the dataset.

\set ON_ERROR_STOP on
\if :{?dir}
\else
DO $$ BEGIN RAISE EXCEPTION 'data/load.sql needs the dataset directory'
  USING HINT = 'Run psql -v dir=data/amazon_diaper -f data/load.sql'; END $$;
\endif
\if :{?schema}
\else
\set schema public
\endif
\if :{?split}
\else
\set split split.csv
\endif

\set QUIET on
BEGIN;
SET LOCAL client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS :"schema";
SET LOCAL search_path = :"schema";

DROP VIEW IF EXISTS test_baskets, train_lines;
DROP TABLE IF EXISTS orders, items, split;

CREATE TABLE orders (
    order_id bigint NOT NULL,
    item_id  int NOT NULL,
    position int NOT NULL,
    PRIMARY KEY (order_id, item_id)
);
CREATE TABLE items (
    item_id int PRIMARY KEY,
    name    text
);
CREATE TABLE split (
    order_id bigint PRIMARY KEY,
    role     text NOT NULL CHECK (role IN ('train', 'test')),
    held_out int,
    CHECK ((role = 'test') = (held_out IS NOT NULL))
);

-- \copy does not expand variables: build each command, then run it.
\set cmd '\\copy orders (order_id, item_id, position) FROM ''' :dir '/orders.csv'' WITH (FORMAT csv, HEADER true)'
:cmd
\set cmd '\\copy split (order_id, role, held_out) FROM ''' :dir '/' :split ''' WITH (FORMAT csv, HEADER true)'
:cmd
\set cmd '\\copy items (item_id, name) FROM PROGRAM ''f="' :dir '/items.csv"; if [ -f "$f" ]; then cat "$f"; fi'' WITH (FORMAT csv, HEADER true)'
:cmd
\unset cmd
INSERT INTO items (item_id) SELECT DISTINCT item_id FROM orders ON CONFLICT DO NOTHING;

CREATE VIEW train_lines AS
SELECT o.order_id, o.item_id, o.position
FROM orders o JOIN split s USING (order_id)
WHERE s.role = 'train';
COMMENT ON VIEW train_lines IS 'order lines of the training baskets';

CREATE VIEW test_baskets AS
SELECT s.order_id, array_agg(o.item_id ORDER BY o.position, o.item_id) AS basket, s.held_out
FROM split s JOIN orders o USING (order_id)
WHERE s.role = 'test'
GROUP BY s.order_id, s.held_out;
COMMENT ON VIEW test_baskets IS 'test baskets, whole (held_out included), items in position order';
COMMIT;

ANALYZE :"schema".orders;
ANALYZE :"schema".items;
ANALYZE :"schema".split;

SELECT (SELECT count(*) FROM :"schema".orders) AS order_lines,
       (SELECT count(DISTINCT item_id) FROM :"schema".orders) AS catalog,
       (SELECT count(*) FROM :"schema".split WHERE role = 'train') AS train_baskets,
       (SELECT count(*) FROM :"schema".split WHERE role = 'test') AS test_baskets;
