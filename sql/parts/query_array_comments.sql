-- What the array forms of the query functions do, integer[] baskets
-- among them.
COMMENT ON FUNCTION mtdpp_complete(anycompatiblearray, integer, text, "any", "any") IS
    'the K items that best complete BASKET, best first, never one of its items, only ALLOWED ones (NULL: any) and never EXCLUDED ones; for the DPP kinds score = ln(w det K), so P(y=1 | basket, item) = 1 - exp(-exp(score)); FROM_BASKET: the score comes from the basket''s items, not from the fallback (popularity); BASKET, ALLOWED and EXCLUDED are arrays of the items'' type (integer, bigint, text, uuid, or a domain over one), and items come back in the type of BASKET';
COMMENT ON FUNCTION mtdpp_complete_set(anycompatiblearray, integer, text, float8, "any", "any") IS
    'K items that complete BASKET together, in the order chosen: greedy MAP in a DPP whose qualities are the model''s scores and whose similarities the cosines of its item factors; DIVERSITY 0 is mtdpp_complete''s ranking, 1 as diverse as its best max(10K, 100) candidates allow; ALLOWED and EXCLUDED as for mtdpp_complete; items come back in the type of BASKET';
COMMENT ON FUNCTION mtdpp_score(anycompatiblearray, anycompatiblearray, text) IS
    'score of each of ITEMS as the completion of BASKET, in the order given; NULL for items the model does not know and for items of BASKET; items come back in the type of ITEMS';
COMMENT ON FUNCTION mtdpp_explain(anycompatiblearray, anycompatiblearray, text) IS
    'for each of ITEMS as a completion of BASKET, each basket item with how much the item''s score falls when that basket item is left out, largest first; items come back in the type of BASKET and ITEMS';
