-- What the README's getting started leaves, before each document's blocks
-- (test/docs/run): the extension, order lines under the names the
-- documents use, and the model shop trained on them.
\set QUIET on
SET client_min_messages = warning;
CREATE EXTENSION mtdpp;
CREATE VIEW order_lines AS
SELECT order_id, item_id, position FROM train_lines;
SELECT FROM mtdpp_train('shop', 'order_lines', position_col => 'position');
