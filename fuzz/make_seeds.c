/*
 * make_seeds.c
 *		Writes the seed corpora of the harnesses (fuzz/corpus/<harness>/)
 *		with the extension's real encoders: aggregate states made by the
 *		transition and serial functions, models by mtdpp_model_serialize.
 *
 *     fuzz/build/make_seeds fuzz/corpus
 */
#include "../src/train/aggregate.c"

#include <stdio.h>

#include "pg_runtime.h"
#include "mtdpp_stubs.h"

#undef fopen
#undef fprintf
#undef snprintf

static const char *dir;

static void
write_seed(const char *harness, const char *name, const void *data, size_t size)
{
	char		path[1024];
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, harness, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		fuzz_fail("could not write %s", path);
}

static Datum
call(PGFunction fn, int nargs, NullableDatum *args)
{
	LOCAL_FCINFO(fc, 5);

	InitFunctionCallInfoData(*fc, NULL, nargs, InvalidOid, &fuzz_agg_node, NULL);
	for (int i = 0; i < nargs; i++)
		fc->args[i] = args[i];
	return fn(fc);
}

/* '{}'::jsonb: a varlena holding an empty object container */
static Jsonb *
empty_object(void)
{
	Jsonb	   *j = palloc0(VARHDRSZ + sizeof(uint32));

	SET_VARSIZE(j, VARHDRSZ + sizeof(uint32));
	j->root.header = JB_FOBJECT;
	return j;
}

/* a partial state of N lines drawn from SEED, serialised */
static bytea *
state_of(int n, uint32 seed, bool positions, bool wide, bool params)
{
	Datum		st = (Datum) 0;
	bool		isnull = true;

	for (int k = 0; k < n; k++)
	{
		int64		order_id = (int64) (k / 4 + (seed % 7)) * (wide ? INT64CONST(10000000019) : 3);
		int32		item_id = (int32) ((k * 2654435761u + seed) % (seed % 2 ? 40 : 70000));
		NullableDatum args[5] = {
			{st, isnull},
			{Int64GetDatum(order_id), false},
			{Int32GetDatum(item_id), false},
			{Int32GetDatum(k % 5), !positions},
			{JsonbPGetDatum(params ? empty_object() : NULL), !params}
		};

		st = call(mtdpp_fit_transfn, params ? 5 : 4, args);
		isnull = false;
	}
	{
		NullableDatum one[1] = {{st, false}};

		return DatumGetByteaP(call(mtdpp_fit_serialfn, 1, one));
	}
}

/* a state holding the runs of two others (as a combining worker sends) */
static bytea *
two_runs(void)
{
	Datum		combined = (Datum) 0;
	bool		isnull = true;

	for (int i = 0; i < 2; i++)
	{
		NullableDatum two[2] = {{PointerGetDatum(state_of(12, 11 + i, false, false, false)), false},
		{(Datum) 0, true}};
		Datum		st = call(mtdpp_fit_deserialfn, 2, two);
		NullableDatum args[2] = {{combined, isnull}, {st, false}};

		combined = call(mtdpp_fit_combinefn, 2, args);
		isnull = false;
	}
	{
		NullableDatum one[1] = {{combined, false}};

		return DatumGetByteaP(call(mtdpp_fit_serialfn, 1, one));
	}
}

static void
fit_state_seeds(void *arg)
{
	struct
	{
		const char *name;
		bytea	   *b;
	}			seeds[] = {
		{"keys", state_of(20, 1, false, false, false)},
		{"keys_wide_items", state_of(30, 2, false, false, false)},
		{"positions", state_of(20, 3, true, false, false)},
		{"wide_orders", state_of(16, 4, false, true, false)},
		{"params", state_of(10, 5, true, false, true)},
		{"two_runs", two_runs()},
	};

	for (int i = 0; i < lengthof(seeds); i++)
		write_seed("fit_state", seeds[i].name, VARDATA(seeds[i].b), VARSIZE(seeds[i].b) - VARHDRSZ);
}

static void
lines_seeds(void *arg)
{
	for (int s = 0; s < 6; s++)
	{
		uint8		buf[1 + 4 * 24];
		char		name[32];

		buf[0] = (uint8) (s * 0x2b);
		for (int k = 0; k < 24; k++)
		{
			buf[1 + 4 * k] = (uint8) ((k / 3 + s) % 20 | ((k % 3) << 6));
			buf[2 + 4 * k] = (uint8) (k * 37 + s);
			buf[3 + 4 * k] = (uint8) (s > 3 ? k : 0);
			buf[4 + 4 * k] = (uint8) (k % 4);
		}
		snprintf(name, sizeof(name), "lines_%d", s);
		write_seed("lines", name, buf, sizeof(buf));
	}
}

/* a model of every kind: 5 items at rank 3 (none for the baselines), 2 epochs */
static void
model_seeds(void *arg)
{
	for (int kind = 0; kind < MTDPP_N_KINDS; kind++)
	{
		/* bayesian_lowrank: two samples of rank 3 side by side */
		int			rank = !mtdpp_kind_exists(kind) ? 0 :
			kind == MTDPP_BAYESIAN_LOWRANK ? 6 : mtdpp_kind((MtdppKind) kind)->factors ? 3 : 0;
		MtdppModel *m;
		bytea	   *b;
		char		name[32];

		/* every kind of the registry (kinds/list.h), through the table of kinds */
		if (!mtdpp_kind_exists(kind))
			continue;
		m = mtdpp_model_alloc((MtdppKind) kind, 5, rank);

		/* poisson: ln of its prior shape a, 0.3 */
		m->log_w = kind == MTDPP_POISSON ? -1.2 : -4.6;
		m->n_baskets = 9;
		m->epochs_run = rank ? 2 : 0;
		m->n_examples = 100;
		m->best_epoch = 1;
		m->final_loss = 0.5;
		m->seconds = 0.01;
		m->loss_history = palloc(sizeof(double) * 2);
		m->val_history = palloc(sizeof(double) * 2);
		m->loss_history[0] = 0.7;
		m->loss_history[1] = 0.5;
		m->val_history[0] = 60;
		m->val_history[1] = 70;
		m->hyperparams = kind == MTDPP_BAYESIAN_LOWRANK ?
			psprintf("{\"kind\": \"%s\", \"rank\": %d, \"samples\": 2}", mtdpp_kind_name((MtdppKind) kind), rank / 2) :
			psprintf("{\"kind\": \"%s\", \"rank\": %d}", mtdpp_kind_name((MtdppKind) kind), rank);
		for (int i = 0; i < 5; i++)
		{
			m->item_ids[i] = 10 * i + 1;
			m->popularity[i] = 5 - i;
			m->D[i] = 0.1 * i;
			for (int j = 0; j < rank; j++)
			{
				m->V[i * rank + j] = 0.1 * (i + 1) - 0.05 * j;
				m->R[i * rank + j] = 1.0 - 0.1 * j;
			}
		}
		if (kind == MTDPP_RULES)
		{
			/* each item's rules: {i} -> i + 1, and {i, i + 1} -> i + 2 (mod 5) */
			m->nbr_start = palloc(sizeof(int64) * 6);
			m->nbr_index = palloc(sizeof(int32) * 15);
			m->nbr_weight = palloc(sizeof(float4) * 15);
			for (int i = 0, n = 0; i < 5; i++)
			{
				m->nbr_start[i] = n;
				m->nbr_index[n] = (i + 1) % 5;
				m->nbr_weight[n++] = 0.5f;
				if (i < 4)
				{
					m->nbr_index[n] = i + 1;
					m->nbr_weight[n++] = -2.0f;
					m->nbr_index[n] = (i + 2) % 5;
					m->nbr_weight[n++] = 0.8f;
				}
				m->nbr_start[i + 1] = n;
			}
		}
		else if (mtdpp_kind((MtdppKind) kind)->neighbors)
		{
			/* each item's neighbours: the others */
			m->nbr_start = palloc(sizeof(int64) * 6);
			m->nbr_index = palloc(sizeof(int32) * 20);
			m->nbr_weight = palloc(sizeof(float4) * 20);
			for (int i = 0, n = 0; i < 5; i++)
			{
				m->nbr_start[i] = n;
				for (int j = 0; j < 5; j++)
					if (j != i)
					{
						m->nbr_index[n] = j;
						m->nbr_weight[n++] = 0.2f * (i + j) / 8 -
							(mtdpp_kind((MtdppKind) kind)->signed_weights ? 0.3f : 0.0f);
					}
				m->nbr_start[i + 1] = n;
			}
		}
		if (mtdpp_kind((MtdppKind) kind)->weights)
		{
			/* gru: its recurrent weights, small and of both signs */
			m->n_weights = 6 * rank * rank + 3 * rank;
			m->weights = palloc(sizeof(double) * m->n_weights);
			for (int k = 0; k < m->n_weights; k++)
				m->weights[k] = 0.05 * ((k * 7) % 11 - 5);
		}
		b = mtdpp_model_serialize(m);
		snprintf(name, sizeof(name), "kind_%d", kind);
		write_seed("model", name, VARDATA(b), VARSIZE(b) - VARHDRSZ);
	}
}

int
main(int argc, char **argv)
{
	if (argc != 2)
	{
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	dir = argv[1];
	fuzz_input_begin();
	if (!fuzz_try(fit_state_seeds, NULL) || !fuzz_try(lines_seeds, NULL) || !fuzz_try(model_seeds, NULL))
		fuzz_fail("ERROR at %s:%d: %s", fuzz_error.filename, fuzz_error.lineno, fuzz_error.message);
	fuzz_input_end();
	return 0;
}
