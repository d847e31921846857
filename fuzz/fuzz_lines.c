/*
 * fuzz_lines.c
 *		libFuzzer harness: order lines gathered serially and in parallel give
 *		the same baskets.
 *
 * The input is decoded into order lines (order id, item id, position) and
 * a plan: one to three partial states.  Each partial state gathers its
 * share through the real transition function; all but (optionally) one are
 * serialised and deserialised as a parallel worker's would be, then all are
 * combined and finished by the real final function, which merges the runs.
 * The baskets the trainer receives must be exactly those that gathering
 * every line in one state gives (lines_to_baskets): the README promises
 * that a parallel plan and a serial plan train the same model.  Any ERROR
 * is a finding too, these being valid lines, but the refusal of lines with
 * no basket of two items.
 *
 * Input: a flags byte, then 4 bytes a line.
 *	flags bits 0-1: partial states - 1 (3 means 3); bit 2: lines have
 *	positions; bits 3-4: the scale of order ids (1, 1000003, 2^33, 2^57);
 *	bits 5-6: the scale of item ids (1, 7, 65599, 2^20, wrapped to 32 bits);
 *	bit 7: the first partial state stays in this process (not serialised).
 *	line: [order: bits 0-5 the order id / scale + 8, 63 = NULL; bits 6-7 the
 *	partial state] [item: 16 bits, signed] [position: 8 bits, signed]
 */
#include "../src/train/aggregate.c"

#include "pg_runtime.h"
#include "mtdpp_stubs.h"

typedef struct Input
{
	const uint8 *data;
	size_t		size;
} Input;

static const int64 order_scale[] = {1, 1000003, INT64CONST(1) << 33, INT64CONST(1) << 57};
static const int64 item_scale[] = {1, 7, 65599, 1 << 20};

static MtdppBaskets *expected;
static bool received;

static void
compare_baskets(const MtdppBaskets *got)
{
	const MtdppBaskets *e = expected;

	received = true;
	if (got->n_baskets != e->n_baskets || got->n_items != e->n_items || got->n_lines != e->n_lines)
		fuzz_fail("merged: %d baskets, %d items, " INT64_FORMAT " lines; serial: %d, %d, " INT64_FORMAT,
				  got->n_baskets, got->n_items, got->n_lines, e->n_baskets, e->n_items, e->n_lines);
	if (memcmp(got->item_ids, e->item_ids, sizeof(int32) * e->n_items) != 0 ||
		memcmp(got->popularity, e->popularity, sizeof(int32) * e->n_items) != 0)
		fuzz_fail("merged and serial baskets differ in their items or popularity");
	if (memcmp(got->start, e->start, sizeof(int64) * (e->n_baskets + 1)) != 0 ||
		memcmp(got->items, e->items, sizeof(int32) * e->n_lines) != 0)
		fuzz_fail("merged and serial baskets differ");
}

static Datum
call(PGFunction fn, int nargs, NullableDatum *args)
{
	LOCAL_FCINFO(fc, 4);
	Datum		d;

	InitFunctionCallInfoData(*fc, NULL, nargs, InvalidOid, &fuzz_agg_node, NULL);
	for (int i = 0; i < nargs; i++)
		fc->args[i] = args[i];
	d = fn(fc);
	if (fc->isnull)
		fuzz_fail("an aggregate support function returned NULL");
	return d;
}

static void
run(void *arg)
{
	Input	   *in = arg;
	uint8		flags = in->data[0];
	int			parts = Min((flags & 3) + 1, 3);
	bool		positions = (flags & 4) != 0;
	int64		oscale = order_scale[(flags >> 3) & 3];
	int64		iscale = item_scale[(flags >> 5) & 3];
	bool		local = (flags & 0x80) != 0;
	Datum		state[3] = {0, 0, 0};
	bool		has[3] = {false, false, false};
	LineArray	all;
	Datum		combined = (Datum) 0;
	bool		combined_null = true;

	memset(&all, 0, sizeof(all));
	all.sorted = true;
	for (size_t off = 1; off + 4 <= in->size; off += 4)
	{
		const uint8 *r = in->data + off;
		int			part = (r[0] >> 6) % parts;
		bool		null_order = (r[0] & 63) == 63;
		int64		order_id = ((int64) (r[0] & 63) - 8) * oscale;
		int32		item_id = (int32) (uint32) (uint64) ((int64) (int16) (r[1] | (r[2] << 8)) * iscale);
		int32		position = positions ? (int8) r[3] : 0;
		NullableDatum args[4] = {
			{state[part], !has[part]},
			{Int64GetDatum(order_id), null_order},
			{Int32GetDatum(item_id), false},
			{Int32GetDatum(position), !positions}
		};

		state[part] = call(mtdpp_fit_transfn, 4, args);
		has[part] = true;
		if (!null_order)
			lines_add(CurrentMemoryContext, &all, order_id, item_id, position);
	}
	if (all.n == 0)
		return;
	expected = lines_to_baskets(&all);
	fuzz_check_baskets(expected);

	for (int part = 0; part < parts; part++)
	{
		NullableDatum args[2];

		if (!has[part])
			continue;
		if (!(local && part == 0))
		{
			/* a worker's: serialised, sent, deserialised */
			NullableDatum one[1] = {{state[part], false}};
			Datum		bytes = call(mtdpp_fit_serialfn, 1, one);
			NullableDatum two[2] = {{bytes, false}, {(Datum) 0, true}};

			state[part] = call(mtdpp_fit_deserialfn, 2, two);
		}
		args[0] = (NullableDatum) {combined, combined_null};
		args[1] = (NullableDatum) {state[part], false};
		combined = call(mtdpp_fit_combinefn, 2, args);
		combined_null = false;
	}
	{
		NullableDatum args[1] = {{combined, combined_null}};
		Datum		model;

		received = false;
		model = call(mtdpp_fit_finalfn, 1, args);
		if (!received)
			fuzz_fail("the final function trained without going through the trainer");
		(void) mtdpp_model_deserialize(DatumGetByteaPP(model));
	}
}

/*
 * The refusals valid lines may meet (mtdpp_kind_fit), where the lines
 * gathered serially call for them: no basket of two items, or every basket
 * holding every item; nothing to learn either way.
 */
static bool
refused_as_expected(void)
{
	bool		pairs = false;

	if (fuzz_error.sqlerrcode != ERRCODE_INVALID_PARAMETER_VALUE || expected == NULL)
		return false;
	for (int b = 0; b < expected->n_baskets; b++)
		pairs |= expected->start[b + 1] - expected->start[b] >= 2;
	if (strcmp(fuzz_error.message, "no basket of the training data has two or more items") == 0)
		return !pairs;
	return strncmp(fuzz_error.message, "every one of the ", 17) == 0 && pairs &&
		expected->n_lines == (int64) expected->n_baskets * expected->n_items;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Input		in = {data, size};

	if (size < 1)
		return 0;
	fuzz_input_begin();
	fuzz_baskets_hook = compare_baskets;
	expected = NULL;
	if (!fuzz_try(run, &in) && !refused_as_expected())
		fuzz_fail("valid order lines raised an ERROR at %s:%d: %s",
				  fuzz_error.filename, fuzz_error.lineno, fuzz_error.message);
	fuzz_baskets_hook = NULL;
	fuzz_input_end();
	return 0;
}
