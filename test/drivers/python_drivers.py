"""Calls mtdpp's query functions from Python as applications do: with
psycopg 3 and psycopg2 (Debian's python3-psycopg and python3-psycopg2),
passing native lists (list[int], list[str], list[uuid.UUID]) with no cast,
unprepared and prepared, on a model of each item-key type
(test/drivers/setup.sql).  Each answer must hold the rows a typed SQL call
gives, with items of the Python type the model's keys map to.

    python3 test/drivers/python_drivers.py psycopg|psycopg2

Connects with the libpq environment (PGHOST, PGPORT, PGDATABASE, ...).
Prints "ok - ..." or "not ok - ..." per driver, key type and call mode.
(test/drivers/run counts them).
"""

import sys
import uuid

DRIVER = sys.argv[1]
if DRIVER == "psycopg":
    import psycopg

    conn = psycopg.connect("", autocommit=True)
else:
    import psycopg2
    import psycopg2.extras

    psycopg2.extras.register_uuid()  # psycopg2 adapts uuid.UUID only then
    conn = psycopg2.connect("")
    conn.autocommit = True


def fetch(sql, params, prepare=False):
    if DRIVER == "psycopg":
        return conn.execute(sql, params, prepare=prepare).fetchall()
    cur = conn.cursor()
    if not prepare:
        cur.execute(sql, params)
        return cur.fetchall()
    # psycopg2 has no server-side statements of its own: PREPARE with
    # untyped parameters, as an application writes it, then EXECUTE
    name = "p%d" % (abs(hash(sql)) % 10**8)
    cur.execute("DEALLOCATE ALL")
    cur.execute("PREPARE %s AS %s" % (name, sql.replace("%s", "$%d") % tuple(range(1, len(params) + 1))))
    cur.execute("EXECUTE %s(%s)" % (name, ", ".join(["%s"] * len(params))), params)
    return cur.fetchall()


# key type: (model, how a key is made from a demo item id, SQL type, Python type)
KEYS = {
    "integer": ("by_integer", lambda i: i, "integer", int),
    "bigint": ("by_bigint", lambda i: i + 3000000000, "bigint", int),
    "text": ("by_text", lambda i: "sku-%d" % i, "text", str),
    "uuid": ("by_uuid", None, "uuid", uuid.UUID),
}


def uuid_key(i):
    import hashlib

    return uuid.UUID(hashlib.md5(str(i).encode()).hexdigest())


def check(ok, what):
    print("%s - %s %s" % ("ok" if ok else "not ok", DRIVER, what))


for key_type, (model, key, sql_type, py_type) in KEYS.items():
    key = key or uuid_key
    basket = [key(8), key(50)]
    others = [key(3), key(16), key(53)]
    # the answers of typed SQL calls, as text, to compare with
    ref_complete = [r[0] for r in fetch(
        "SELECT item_id::text FROM mtdpp_complete(%%s::%s[], 5, %%s) ORDER BY rank" % sql_type,
        ([str(b) for b in basket], model))]
    ref_similar = [r[0] for r in fetch(
        "SELECT item_id::text FROM mtdpp_similar(%%s::%s, 5, %%s) ORDER BY rank" % sql_type,
        (str(basket[0]), model))]
    for prepare in (False, True):
        mode = "%s %s" % (key_type, "prepared" if prepare else "unprepared")
        try:
            problems = []
            rows = fetch("SELECT item_id, score, rank FROM mtdpp_complete(%s, %s, %s) ORDER BY rank",
                         (basket, 5, model), prepare)
            if [str(r[0]) for r in rows] != ref_complete or len(rows) != 5:
                problems.append("mtdpp_complete answered %r, typed SQL %r" % ([r[0] for r in rows], ref_complete))
            types = {type(r[0]).__name__ for r in rows}
            # a typed list answers items of the model's type; an untyped
            # parameter (psycopg2's PREPARE) answers them as text
            want = str if DRIVER == "psycopg2" and prepare else py_type
            if not all(isinstance(r[0], want) for r in rows):
                problems.append("mtdpp_complete answered items of type %s, not %s" % (types, want.__name__))
            rows = fetch("SELECT item_id FROM mtdpp_complete_set(%s, %s, %s, diversity => 0) ORDER BY rank",
                         (basket, 5, model), prepare)
            if [str(r[0]) for r in rows] != ref_complete or not all(isinstance(r[0], want) for r in rows):
                problems.append("mtdpp_complete_set answered %r" % ([r[0] for r in rows],))
            rows = fetch("SELECT item_id, score FROM mtdpp_score(%s, %s, %s)", (basket, others, model), prepare)
            if [str(r[0]) for r in rows] != [str(o) for o in others] or any(r[1] is None for r in rows) \
                    or not all(isinstance(r[0], want) for r in rows):
                problems.append("mtdpp_score answered %r" % (rows,))
            rows = fetch("SELECT item_id, basket_item FROM mtdpp_explain(%s, %s, %s)", (basket, others, model), prepare)
            if not rows or not all(isinstance(r[0], want) and isinstance(r[1], want) for r in rows) \
                    or {str(r[1]) for r in rows} - {str(b) for b in basket}:
                problems.append("mtdpp_explain answered %r" % (rows,))
            rows = fetch("SELECT item_id FROM mtdpp_similar(%s, %s, %s) ORDER BY rank", (basket[0], 5, model), prepare)
            if [str(r[0]) for r in rows] != ref_similar or not all(isinstance(r[0], want) for r in rows):
                problems.append("mtdpp_similar answered %r, typed SQL %r" % ([r[0] for r in rows], ref_similar))
            rows = fetch("SELECT baskets FROM mtdpp_evaluate(%s, %s)", (model, "tests_" + key_type), prepare)
            if not rows or rows[0][0] < 1000:
                problems.append("mtdpp_evaluate answered %r" % (rows,))
            check(not problems, mode + ("" if not problems else ": " + "; ".join(problems)))
        except Exception as e:  # an error is a failure of this mode, not of the script
            check(False, "%s: %s" % (mode, str(e).strip().replace("\n", " | ")))

# test/drivers/run counts the lines; a non-zero exit means the script itself broke
