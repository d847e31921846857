/*
 * fuzz_model.c
 *		libFuzzer harness: the model value (bytea) that mtdpp_save takes.
 *
 * The input goes through mtdpp_model_deserialize, as the argument of
 * mtdpp_save does.  mtdpp_save is callable by any user with any bytea, so
 * a refusal must be a clean ERROR with a SQLSTATE of its own (an internal
 * error, XX000, is a finding), and whatever is accepted must be usable:
 *
 * - serialising it and deserialising that gives back the same value
 *   (serialise, deserialise, serialise: the two serialisations are equal);
 * - scoring it (mtdpp_score_all for a context of its first items, and
 *   mtdpp_score_some) reads nothing outside the model.
 *
 * - every score it gives a candidate (an item not in the context) is finite:
 *   a model that loads gives a finite score for every item, so mtdpp_save
 *   refuses the values that would break that (MTDPP_FUZZ_STRICT=0 turns
 *   this check off).
 */
#include "postgres.h"

#include <math.h>
#include <stdlib.h>

#include "pg_runtime.h"
#include "mtdpp_stubs.h"

typedef struct Input
{
	const uint8 *data;
	size_t		size;
} Input;

static int	strict = -1;
static int	stage;				/* 0: deserialising the input; 1: using what it gave */

/* SCORES of N candidates; the first SKIP of them are context items */
static void
check_scores(const MtdppModel *m, const double *scores, int n, int skip, const char *what)
{
	if (!strict)
		return;
	for (int i = skip; i < n; i++)
		if (!isfinite(scores[i]))
			fuzz_fail("%s: an accepted model of kind %d scores %g", what, m->kind, scores[i]);
}

static void
run(void *arg)
{
	Input	   *in = arg;
	MtdppModel *m;
	bytea	   *again,
			   *third;
	int32		ctx[4];
	int			b;
	double	   *scores;

	stage = 0;
	m = mtdpp_model_deserialize(fuzz_bytea(in->data, in->size));
	stage = 1;

	/* what was accepted serialises to a value that is accepted, unchanged */
	again = mtdpp_model_serialize(m);
	third = mtdpp_model_serialize(mtdpp_model_deserialize(again));
	if (VARSIZE(again) != VARSIZE(third) || memcmp(again, third, VARSIZE(again)) != 0)
		fuzz_fail("an accepted model does not serialise back to itself");

	/* scored with a context of its first items */
	mtdpp_model_prepare(m);
	b = Min(Min(m->n_items, 3), mtdpp_context_limit(m));
	for (int i = 0; i < b; i++)
		ctx[i] = i;
	scores = palloc(sizeof(double) * Max(m->n_items, 2));
	mtdpp_score_all(m, ctx, b, scores);
	check_scores(m, scores, m->n_items, b, "mtdpp_score_all");
	if (m->n_items > 0)
	{
		int32		cands[2] = {m->n_items - 1, 0};

		mtdpp_score_some(m, ctx, b, cands, 2, scores);
		/* the candidates outside the context: ctx holds items 0 .. b - 1 */
		check_scores(m, scores, cands[0] >= b ? 1 : 0, 0, "mtdpp_score_some");
		check_scores(m, scores, b == 0 ? 2 : 0, 1, "mtdpp_score_some");
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Input		in = {data, size};

	if (strict < 0)
		strict = !(getenv("MTDPP_FUZZ_STRICT") && atoi(getenv("MTDPP_FUZZ_STRICT")) == 0);
	fuzz_input_begin();
	if (!fuzz_try(run, &in))
	{
		if (stage > 0)
			fuzz_fail("an accepted model raised an ERROR when used, at %s:%d: %s",
					  fuzz_error.filename, fuzz_error.lineno, fuzz_error.message);
		if (fuzz_error.sqlerrcode == ERRCODE_INTERNAL_ERROR)
			fuzz_fail("mtdpp_save's model value refused with an internal error at %s:%d: %s",
					  fuzz_error.filename, fuzz_error.lineno, fuzz_error.message);
	}
	fuzz_input_end();
	return 0;
}
