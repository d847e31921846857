/*
 * fuzz_fit_state.c
 *		libFuzzer harness: the serialised state of the mtdpp_fit aggregate.
 *
 * The input is taken as the bytes a parallel worker's serial function sent:
 * it goes through the real deserial function, the combine function (which
 * copies its runs), and the final function, which merges the runs of coded
 * order lines (src/train/lines.c) into baskets; the trainer is replaced by the
 * exact baselines after the baskets are checked (mtdpp_stubs.c), and the
 * model that comes out must deserialise.  The state is internal to
 * PostgreSQL's parallel aggregation, so refusing an input with elog (an
 * internal error) is fine; reading outside the input, allocating what it
 * does not hold, or handing the trainer malformed baskets is a finding.
 *
 * aggregate.c is included, not linked, so that the harness sees its state
 * struct (static to it); it is compiled as in the extension.
 */
#include "../src/train/aggregate.c"

#include "pg_runtime.h"
#include "mtdpp_stubs.h"

typedef struct Input
{
	const uint8 *data;
	size_t		size;
} Input;

static Datum
call(PGFunction fn, int nargs, Datum a0, bool n0, Datum a1, bool n1)
{
	LOCAL_FCINFO(fc, 2);
	Datum		d;

	InitFunctionCallInfoData(*fc, NULL, nargs, InvalidOid, &fuzz_agg_node, NULL);
	fc->args[0].value = a0;
	fc->args[0].isnull = n0;
	fc->args[1].value = a1;
	fc->args[1].isnull = n1;
	d = fn(fc);
	if (fc->isnull)
		fuzz_fail("an aggregate support function returned NULL");
	return d;
}

static void
run(void *arg)
{
	Input	   *in = arg;
	bytea	   *b = fuzz_bytea(in->data, in->size);
	Datum		st,
				combined,
				model;

	st = call(mtdpp_fit_deserialfn, 2, PointerGetDatum(b), false, (Datum) 0, true);
	combined = call(mtdpp_fit_combinefn, 2, (Datum) 0, true, st, false);
	model = call(mtdpp_fit_finalfn, 1, combined, false, (Datum) 0, true);
	(void) mtdpp_model_deserialize(DatumGetByteaPP(model));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Input		in = {data, size};

	fuzz_input_begin();
	if (!fuzz_try(run, &in))
	{
		/* refused: fine, unless the model made of accepted runs is refused */
		if (strstr(fuzz_error.filename, "model.c"))
			fuzz_fail("the model trained from an accepted state does not deserialise: %s",
					  fuzz_error.message);
	}
	fuzz_input_end();
	return 0;
}
