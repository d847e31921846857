-- Synthetic order lines at any size, with the shape of a grocer's history:
--
--   psql -v lines=10000000 [-v items=50000] [-v seed=0.42] [-v schema=scale] -f bench/scale/generate.sql
--
-- makes schema.orders(order_id bigint, item_id int, position int), the
-- training lines, and schema.test_baskets(order_id, basket int[], held_out):
-- the last 1% of orders (at most 5,000), each hiding a random item, as the
-- test baskets of shared/data.  Seeded (setseed): the same arguments give the
-- same tables.
--
-- The structure a model can learn:
--   * items fall into aisles of 100 (items / 100 aisles); aisle popularity
--     and item popularity within an aisle are Zipf-like (1/rank);
--   * an order makes 1 + Geometric trips (mean 2) to aisles drawn by their
--     popularity, and has 1 + Geometric(mean 9) draws, capped at 100 (mean
--     size about 10, as Instacart's orders);
--   * four draws in five come from the order's aisles, one from the whole
--     catalog by popularity; each draw brings its item's companion (an item
--     of another aisle, fixed per item) with probability 0.3.
-- An item drawn twice in an order is one line (the first position).  The
-- scrambling products (item * 7919) are bigint: in int they overflow above
-- 271,000 items.
\set ON_ERROR_STOP on
\if :{?lines}
\else
\set lines 1000000
\endif
\if :{?items}
\else
\set items 50000
\endif
\if :{?seed}
\else
\set seed 0.42
\endif
\if :{?schema}
\else
\set schema scale
\endif

DROP SCHEMA IF EXISTS :"schema" CASCADE;
CREATE SCHEMA :"schema";
SET search_path = :"schema";
SELECT setseed(:seed);

-- Zipf-like over ranks 0 .. n-1: P(r) roughly proportional to 1 / (r + 1)
CREATE FUNCTION zipf(n int) RETURNS int LANGUAGE sql VOLATILE
    RETURN least(n - 1, floor(exp(random() * ln(n + 1.0)))::int - 1);
CREATE FUNCTION geometric(mean float8) RETURNS int LANGUAGE sql VOLATILE
    RETURN floor(-ln(1.0 - random()) * mean)::int;

CREATE UNLOGGED TABLE draws (order_id bigint, k int, item_id int);

-- Orders of about 10.9 lines each (measured); stop at the number of lines asked.
INSERT INTO draws
SELECT o, 2 * d.k + d.companion::int,
       CASE WHEN d.companion THEN ((d.item::bigint * 7919 + 104729) % :items)::int ELSE d.item END
FROM generate_series(1, ceil(:lines / 10.9)::bigint) o,
     -- (each LATERAL names o, so that it is drawn again for every order)
     LATERAL (SELECT 1 + geometric(1.0 + 0 * o) AS trips, least(100, 1 + geometric(9.0 + 0 * o)) AS size) s,
     LATERAL (SELECT array_agg(zipf(:items / 100)) AS aisles
              FROM generate_series(1, s.trips + 0 * o)) a,
     LATERAL (SELECT k, x.item, x.companion
              FROM generate_series(1, s.size) k,
                   LATERAL (SELECT CASE WHEN random() + 0 * k < 0.8
                                        THEN a.aisles[1 + floor(random() * s.trips)::int] * 100 + zipf(100)
                                        ELSE ((zipf(:items)::bigint * 7919) % :items)::int END AS item) i,
                   LATERAL (VALUES (i.item, false), (i.item, true)) x(item, companion)
              WHERE NOT x.companion OR random() < 0.3) d;

CREATE TABLE orders AS
SELECT DISTINCT ON (order_id, item_id) order_id, item_id, k AS position
FROM draws
ORDER BY order_id, item_id, k;
DROP TABLE draws;

-- The last 1% of the orders of two lines or more (at most 5,000) are test
-- baskets, each hiding a random item; the others stay in orders to train on.
CREATE TABLE test_baskets AS
SELECT order_id, basket, basket[1 + floor(random() * cardinality(basket))::int] AS held_out
FROM (SELECT order_id, array_agg(item_id ORDER BY position) AS basket
      FROM orders
      WHERE order_id > (SELECT max(order_id) FROM orders) - 2 * least(5000, (SELECT max(order_id) FROM orders) / 100)
      GROUP BY order_id HAVING count(*) >= 2
      ORDER BY order_id DESC
      LIMIT least(5000, (SELECT max(order_id) FROM orders) / 100)) t;
DELETE FROM orders o USING test_baskets t WHERE o.order_id = t.order_id;

ANALYZE orders;
ANALYZE test_baskets;
SELECT count(*) AS training_lines, count(DISTINCT order_id) AS orders,
       count(DISTINCT item_id) AS items, (SELECT count(*) FROM test_baskets) AS test_baskets
FROM orders;
