-- The held-out baskets a training keeps with its version (0.6.0), by their
-- item keys, so that mtdpp_activate can compare it with another version on
-- them (promote => 'if_better:...').
ALTER TABLE mtdpp.models ADD COLUMN test_baskets jsonb;
COMMENT ON COLUMN mtdpp.models.test_baskets IS 'the baskets its training held out, each an array of its item keys as text, the held-out item first: at most 10,000 baskets and 4 MB of them, chosen by a hash of the basket with the seed (test->''kept'' says how many); NULL without a held-out test';
COMMENT ON COLUMN mtdpp.models.promotion IS 'the promotion rule that decided whether the version was activated: rule, promoted, metric, value, and the active version and its value on the same baskets; decided_by, mtdpp_activate when an activation under a rule (promote) decided, on the baskets the version kept, else a training did; NULL without a rule';
