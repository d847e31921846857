/*
 * train/aggregate.c
 *		The training aggregate mtdpp_fit: order lines in, a trained model out.
 *
 * The transition function only gathers order lines (lines.c: 8 bytes each
 * for 32-bit order ids without positions, else 16).  That is what lets
 * PostgreSQL's parallel workers (and engines built on partial aggregation)
 * read the orders side by side: a worker's serial function sorts its lines
 * and sends them as a run, a few bytes a line; the leader's combine function
 * keeps the runs as they come.  A run goes through the query's shared
 * memory area when it can: the tuple queue that carries the state would
 * move it 64 kB at a time, each a wake-up of the other process, and the
 * aggregate that combines copies the first state it reads twice.  The final function makes the result
 * independent of the plan: it sorts the lines, or merges the runs, into
 * baskets (lines.c) and hands them to the trainer.  The hyperparameters come
 * with the rows (the same jsonb on each) and travel in the state.  The
 * model comes out as a bytea, or, to mtdpp_train, in memory (handoff.c).

 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/parallel.h"
#include "catalog/pg_type.h"
#include "executor/execParallel.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/dsa.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "fit/params.h"
#include "fit/progress.h"
#include "model/baskets.h"
#include "model/kinds.h"
#include "numeric/linalg.h"
#include "store/store.h"
#include "train/lines.h"
#include "train/train.h"

/*
 * Where a run's bytes lie: in the query's shared memory area (where a
 * partial aggregate under a Gather left them, read there until the final
 * function frees them), else in this process's memory.
 */
typedef struct RunPlace
{
	dsa_area   *area;			/* NULL: palloc'd, or in a deserialised state's bytes */
	dsa_pointer pointer;
} RunPlace;

typedef struct FitState
{
	MemoryContext ctx;			/* the aggregate's, where the state lives */
	LineArray	lines;			/* this process's */
	bool		consumed;		/* serialised, lines freed: must not be used again */
	Jsonb	   *params;			/* NULL until a row brings some */
	Run		   *runs;			/* sorted runs received from other processes */
	RunPlace   *places;			/* where each lies */
	int			n_runs;
	int			max_runs;
	int64		null_orders;	/* lines skipped: NULL order id */
	int64		null_items;		/* lines skipped: NULL item id */
} FitState;

/*
 * serialised state: this header, the params jsonb (padded to 8), then each
 * run: its RunHeader and its bytes (padded to 8), or, for a run in the
 * query's shared memory area, its SharedRun
 */
typedef struct FitStateHeader
{
	uint32		format;
	int32		params_len;
	int32		n_runs;
	int32		unused;
	int64		null_orders;
	int64		null_items;
} FitStateHeader;

typedef struct RunHeader
{
	int64		n;
	int64		len;
	int32		lo;
	int32		hi;
	int32		positions;
	int32		shared;			/* a SharedRun follows, not the bytes */
} RunHeader;

/*
 * A run left in the query's shared memory area by a partial aggregate under
 * a Gather: the area is that Gather's.
 */
typedef struct SharedRun
{
	uint64		pointer;		/* dsa_pointer */
	int32		plan_node_id;	/* the partial aggregate's */
	int32		unused;
} SharedRun;

PG_FUNCTION_INFO_V1(mtdpp_fit_transfn);
PG_FUNCTION_INFO_V1(mtdpp_fit_combinefn);
PG_FUNCTION_INFO_V1(mtdpp_fit_serialfn);
PG_FUNCTION_INFO_V1(mtdpp_fit_deserialfn);
PG_FUNCTION_INFO_V1(mtdpp_fit_finalfn);

static MemoryContext
aggregate_context(FunctionCallInfo fcinfo, const char *fn)
{
	MemoryContext ctx;

	if (!AggCheckCallContext(fcinfo, &ctx))
		elog(ERROR, "%s called in non-aggregate context", fn);
	return ctx;
}

/*
 * The serial function frees a state's lines once copied (PostgreSQL
 * serialises a partial state once, at the end of its partial aggregation):
 * that halves a parallel participant's peak memory.  Should a state ever be
 * used after that, fail rather than train on missing lines.
 */
static void
state_check_live(const FitState *st)
{
	if (st->consumed)
		elog(ERROR, "mtdpp_fit state used after it was serialised");
}

static FitState *
state_new(MemoryContext ctx)
{
	FitState   *st = MemoryContextAllocZero(ctx, sizeof(FitState));

	st->ctx = ctx;
	st->lines.sorted = true;	/* no line is out of order */
	return st;
}

/*
 * The shared memory area of the Gather that reads this partial aggregate
 * (in a parallel worker, or in the leader running its own share of the
 * plan), else NULL; and the aggregate's plan node, by which the leader finds
 * that Gather again.
 */
static dsa_area *
partial_area(FunctionCallInfo fcinfo, int *plan_node_id)
{
	AggState   *agg;

	if (fcinfo->context == NULL || !IsA(fcinfo->context, AggState))
		return NULL;
	agg = (AggState *) fcinfo->context;
	*plan_node_id = agg->ss.ps.plan->plan_node_id;
	return agg->ss.ps.state->es_query_dsa;
}

static bool
has_plan_node(PlanState *ps, void *arg)
{
	if (ps == NULL)
		return false;
	if (ps->plan->plan_node_id == *(int *) arg)
		return true;
	return planstate_tree_walker(ps, has_plan_node, arg);
}

typedef struct AreaSearch
{
	int			plan_node_id;
	dsa_area   *area;
} AreaSearch;

static bool
find_area(PlanState *ps, void *arg)
{
	AreaSearch *search = (AreaSearch *) arg;
	struct ParallelExecutorInfo *pei = NULL;

	if (ps == NULL)
		return false;
	if (IsA(ps, GatherState))
		pei = ((GatherState *) ps)->pei;
	else if (IsA(ps, GatherMergeState))
		pei = ((GatherMergeState *) ps)->pei;
	if (pei != NULL && pei->area != NULL &&
		has_plan_node(outerPlanState(ps), &search->plan_node_id))
	{
		search->area = pei->area;
		return true;
	}
	return planstate_tree_walker(ps, find_area, arg);
}

/*
 * The shared memory area of the Gather (below the aggregate that combines)
 * that read partial aggregate PLAN_NODE_ID.
 */
static dsa_area *
combining_area(FunctionCallInfo fcinfo, int plan_node_id)
{
	AreaSearch	search = {plan_node_id, NULL};

	if (fcinfo->context != NULL && IsA(fcinfo->context, AggState))
		(void) find_area((PlanState *) fcinfo->context, &search);
	if (search.area == NULL)
		elog(ERROR, "mtdpp_fit state refers to the shared memory of a Gather above plan node %d, which this aggregate does not read",
			 plan_node_id);
	return search.area;
}

Datum
mtdpp_fit_transfn(PG_FUNCTION_ARGS)
{
	FitState   *st = PG_ARGISNULL(0) ? NULL : (FitState *) PG_GETARG_POINTER(0);
	int			nargs = PG_NARGS();
	MemoryContext ctx;

	/* the context is checked once, with the first row: this runs per row */
	if (st == NULL)
	{
		st = state_new(aggregate_context(fcinfo, "mtdpp_fit_transfn"));
		(void) mtdpp_progress_begin(NULL);	/* reported, unless mtdpp_train reports it */
	}
	state_check_live(st);
	ctx = st->ctx;

	if (nargs > 4 && !PG_ARGISNULL(4) && st->params == NULL)
	{
		Jsonb	   *j = PG_GETARG_JSONB_P(4);
		MtdppParams check;

		/* fail on the first row, not after reading the whole table */
		mtdpp_params_resolve(&check, j);
		st->params = MemoryContextAlloc(ctx, VARSIZE(j));
		memcpy(st->params, j, VARSIZE(j));
	}

	/* a line without order or item says nothing about a basket: counted */
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
	{
		if (PG_ARGISNULL(1))
			st->null_orders++;
		else
			st->null_items++;
		PG_RETURN_POINTER(st);
	}

	lines_add(ctx, &st->lines, PG_GETARG_INT64(1), PG_GETARG_INT32(2),
			  (nargs > 3 && !PG_ARGISNULL(3)) ? PG_GETARG_INT32(3) : 0);
	PG_RETURN_POINTER(st);
}

static void
state_add_run(MemoryContext ctx, FitState *st, const Run *run, RunPlace place)
{
	if (st->n_runs == st->max_runs)
	{
		st->max_runs = Max(4, st->max_runs * 2);
		st->runs = st->runs ? repalloc(st->runs, sizeof(Run) * st->max_runs)
			: MemoryContextAlloc(ctx, sizeof(Run) * st->max_runs);
		st->places = st->places ? repalloc(st->places, sizeof(RunPlace) * st->max_runs)
			: MemoryContextAlloc(ctx, sizeof(RunPlace) * st->max_runs);
	}
	st->places[st->n_runs] = place;
	st->runs[st->n_runs++] = *run;
}

static const RunPlace private_place = {NULL, InvalidDsaPointer};

/*
 * The state's own lines, sorted and encoded as one more run (its bytes in
 * the current memory context), their array freed; returns whether there
 * were any.
 */
static bool
state_lines_to_run(MemoryContext ctx, FitState *st)
{
	Run			run;

	if (!lines_to_run(&st->lines, &run, NULL))
		return false;
	state_add_run(ctx, st, &run, private_place);
	return true;
}

Datum
mtdpp_fit_combinefn(PG_FUNCTION_ARGS)
{
	MemoryContext ctx = aggregate_context(fcinfo, "mtdpp_fit_combinefn");
	FitState   *a = PG_ARGISNULL(0) ? NULL : (FitState *) PG_GETARG_POINTER(0);
	FitState   *b = PG_ARGISNULL(1) ? NULL : (FitState *) PG_GETARG_POINTER(1);

	if (b == NULL)
		PG_RETURN_POINTER(a);
	if (a == NULL)
		a = state_new(ctx);
	state_check_live(a);
	state_check_live(b);
	a->null_orders += b->null_orders;
	a->null_items += b->null_items;
	if (a->params == NULL && b->params != NULL)
	{
		a->params = MemoryContextAlloc(ctx, VARSIZE(b->params));
		memcpy(a->params, b->params, VARSIZE(b->params));
	}
	/* lines of a partial state of this process (partitionwise plans) */
	lines_append(ctx, &a->lines, &b->lines);
	/*
	 * Runs from other processes: those in shared memory stay there, the
	 * others are copied into this context (out of the state's bytes).
	 */
	for (int k = 0; k < b->n_runs; k++)
	{
		Run			run = b->runs[k];

		if (b->places[k].area == NULL)
		{
			uint8	   *copy = MemoryContextAllocHuge(ctx, Max(run.len, 1));

			memcpy(copy, run.data, run.len);
			run.data = copy;
		}
		state_add_run(ctx, a, &run, b->places[k]);
	}
	/* its runs now belong to A */
	if (b->n_runs > 0)
		b->consumed = true;
	PG_RETURN_POINTER(a);
}

/*
 * Each parallel participant sorts its own lines and sends them as one run
 * (with any runs it holds): the leader only merges.  Under a Gather the run
 * goes into the query's shared memory area and the state only says where;
 * elsewhere (or if the area has no room) it is encoded straight into the
 * serialised state, which is then shrunk to fit.
 */
Datum
mtdpp_fit_serialfn(PG_FUNCTION_ARGS)
{
	FitState   *st;
	FitStateHeader h;
	int			plen;
	Size		size;
	bytea	   *out;
	char	   *p;
	bool		own;
	dsa_area   *area;
	int			plan_node_id = 0;
	Run			shared_run;
	dsa_pointer shared = InvalidDsaPointer;

	aggregate_context(fcinfo, "mtdpp_fit_serialfn");
	st = (FitState *) PG_GETARG_POINTER(0);
	state_check_live(st);
	plen = st->params ? VARSIZE(st->params) : 0;
	own = st->lines.n > 0;

	/*
	 * Under a Gather, the run goes into the query's shared memory area (if it
	 * has room): the state itself stays small.
	 */
	if (own && (area = partial_area(fcinfo, &plan_node_id)) != NULL)
	{
		own = false;
		if (lines_to_run(&st->lines, &shared_run, NULL))
		{
			shared = dsa_allocate_extended(area, Max(shared_run.len, 1),
										   DSA_ALLOC_HUGE | DSA_ALLOC_NO_OOM);
			if (DsaPointerIsValid(shared))
			{
				memcpy(dsa_get_address(area, shared), shared_run.data, shared_run.len);
				pfree((void *) shared_run.data);
			}
			else
				state_add_run(st->ctx, st, &shared_run, private_place); /* sent in the state */
		}
	}

	size = VARHDRSZ + sizeof(h) + TYPEALIGN(8, plen);
	for (int k = 0; k < st->n_runs; k++)
		size = add_size(size, sizeof(RunHeader) + TYPEALIGN(8, st->runs[k].len));
	if (own)
		size = add_size(size, sizeof(RunHeader) + TYPEALIGN(8, lines_run_bound(&st->lines)));
	if (DsaPointerIsValid(shared))
		size = add_size(size, sizeof(RunHeader) + sizeof(SharedRun));

	out = palloc_extended(size, MCXT_ALLOC_HUGE);
	h.format = MTDPP_FORMAT_VERSION;
	h.params_len = plen;
	h.n_runs = st->n_runs + own + DsaPointerIsValid(shared);
	h.unused = 0;
	h.null_orders = st->null_orders;
	h.null_items = st->null_items;
	p = VARDATA(out);
	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	memset(p, 0, TYPEALIGN(8, plen));
	if (plen > 0)
		memcpy(p, st->params, plen);
	p += TYPEALIGN(8, plen);
	for (int k = 0; k <= st->n_runs; k++)
	{
		Run			run;
		RunHeader	rh;

		if (k < st->n_runs)
		{
			run = st->runs[k];
			memcpy(p + sizeof(rh), run.data, run.len);
		}
		else if (!own || !lines_to_run(&st->lines, &run, (uint8 *) p + sizeof(rh)))
			break;
		rh = (RunHeader) {run.n, run.len, run.lo, run.hi, run.positions, 0};
		memcpy(p, &rh, sizeof(rh));
		p += sizeof(rh) + run.len;
		memset(p, 0, TYPEALIGN(8, run.len) - run.len);
		p += TYPEALIGN(8, run.len) - run.len;
	}
	if (DsaPointerIsValid(shared))
	{
		RunHeader	rh = {shared_run.n, shared_run.len, shared_run.lo, shared_run.hi,
		shared_run.positions, 1};
		SharedRun	sr = {(uint64) shared, plan_node_id, 0};

		memcpy(p, &rh, sizeof(rh));
		p += sizeof(rh);
		memcpy(p, &sr, sizeof(sr));
		p += sizeof(sr);
	}
	if ((Size) (p - (char *) out) > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the order lines of one parallel participant take %zu bytes encoded, more than a partial aggregate state can hold (%zu)",
						(Size) (p - (char *) out), (Size) MaxAllocSize),
				 errhint("Give the query more parallel workers, or run it without (SET max_parallel_workers_per_gather = 0).")));
	SET_VARSIZE(out, p - (char *) out);
	out = repalloc_huge(out, VARSIZE(out));

	/* PostgreSQL serialises a partial state once, at the end (lines freed) */
	st->consumed = true;
	PG_RETURN_BYTEA_P(out);
}

/*
 * Fits a model of kind p->kind to DATA, the hyperparameters that depend on
 * the data resolved first (and so stored with the model).  The fit runs in
 * the numeric core's reproducible mode (linalg_fixed.c): the same data and
 * seed give the same model under every BLAS and kernel set.  One rule for
 * every kind that learns from items bought together: without a basket of
 * two items there is nothing to learn, nor where every basket holds every
 * item, and both are refused alike, before any fit.
 */
static MtdppModel *
fit_kind(MtdppBaskets *data, const MtdppParams *given)
{
	MtdppParams p = *given;
	MtdppModel *volatile m = NULL;
	bool		was;
	bool		pairs = false;

	for (int b = 0; b < data->n_baskets && !pairs; b++)
		pairs = data->start[b + 1] - data->start[b] >= 2;
	if (!pairs && !mtdpp_kind(p.kind)->single_items)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("no basket of the training data has two or more items"),
				 errdetail("%d baskets were read, over %d distinct items.",
						   data->n_baskets, data->n_items),
				 errhint("A basket-completion model learns from baskets of at least two items: check order_col and item_col, or train kind => 'popularity', which counts items alone.")));
	/* a basket that holds the whole catalog has nothing left to complete it */
	if (pairs && !mtdpp_kind(p.kind)->single_items &&
		data->n_lines == (int64) data->n_baskets * data->n_items)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("every one of the %d baskets of the training data holds all %d items",
						data->n_baskets, data->n_items),
				 errdetail("No basket leaves an item out, so there is nothing to learn about completing one."),
				 errhint("Check order_col and item_col (one line per item of an order), or train on orders that differ.")));
	/*
	 * Positions that order no basket: a kind that learns from the order
	 * items were added refuses them (its fit), and so does target 'last', whose last item added would be the highest id;
	 * the other kinds hear it.
	 */
	if (data->positions && !data->ordered && pairs && p.target == MTDPP_TARGET_LAST &&
		!mtdpp_kind(p.kind)->add_order)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("target => 'last' needs the order in which each basket's items were added, and the position column is constant within every basket"),
				 errdetail("Every line of each of the %d baskets has the same position: no item is the last added.", data->n_baskets),
				 errhint("Give a position column that orders the lines of a basket (an add-to-cart rank or time), or use target => 'random'.")));
	if (data->positions && !data->ordered && pairs && !mtdpp_kind(p.kind)->add_order)
		ereport(NOTICE,
				(errmsg("the position column is constant within every basket: the baskets have no add-to-cart order"),
				 errdetail("Every line of a basket has the same position, so the items of each basket are read in item order."),
				 errhint("Give a position column that orders the lines of a basket (an add-to-cart rank or time), or leave position_col out.")));
	mtdpp_params_for_data(&p, data->n_items);
	was = mtdpp_linalg_set_reproducible(true);
	PG_TRY();
	{
		m = mtdpp_kind(p.kind)->fit(data, &p);
	}
	PG_FINALLY();
	{
		mtdpp_linalg_set_reproducible(was);
	}
	PG_END_TRY();
	return m;
}

/*
 * The deserialised state lives in the current (per-input-tuple) memory
 * context and is only read by the combine function that follows: its runs
 * stay where they are in the serialised bytes.
 */
Datum
mtdpp_fit_deserialfn(PG_FUNCTION_ARGS)
{
	bytea	   *in;
	const char *p,
			   *end;
	FitStateHeader h;
	FitState   *st;

	aggregate_context(fcinfo, "mtdpp_fit_deserialfn");
	in = PG_GETARG_BYTEA_PP(0);
	p = VARDATA_ANY(in);
	end = p + VARSIZE_ANY_EXHDR(in);
	st = palloc0(sizeof(FitState));
	st->lines.sorted = true;
	if (end - p < (ptrdiff_t) sizeof(h))
		elog(ERROR, "mtdpp_fit state is truncated");
	memcpy(&h, p, sizeof(h));
	p += sizeof(h);
	st->null_orders = h.null_orders;
	st->null_items = h.null_items;
	/* every run takes at least its header: the runs are counted before room is made for them */
	if (h.format != MTDPP_FORMAT_VERSION || h.params_len < 0 || h.n_runs < 0 ||
		end - p < (ptrdiff_t) TYPEALIGN(8, h.params_len) ||
		h.n_runs > (end - p - TYPEALIGN(8, h.params_len)) / (ptrdiff_t) sizeof(RunHeader))
		elog(ERROR, "mtdpp_fit state has format %u and %zu bytes, which do not match",
			 h.format, (Size) VARSIZE_ANY_EXHDR(in));
	if (h.params_len > 0)
	{
		st->params = palloc(h.params_len);
		memcpy(st->params, p, h.params_len);
		/* the jsonb's own length is what the other functions read */
		if (h.params_len < (int32) (VARHDRSZ + sizeof(uint32)) ||
			VARATT_IS_SHORT(st->params) || VARSIZE(st->params) != h.params_len)
			elog(ERROR, "mtdpp_fit state holds hyperparameters of %d bytes whose length word disagrees",
				 h.params_len);
	}
	p += TYPEALIGN(8, h.params_len);
	st->runs = palloc(sizeof(Run) * Max(h.n_runs, 1));
	st->max_runs = Max(h.n_runs, 1);
	st->places = palloc(sizeof(RunPlace) * Max(h.n_runs, 1));
	for (int k = 0; k < h.n_runs; k++)
	{
		RunHeader	rh;
		const uint8 *data;

		if (end - p < (ptrdiff_t) sizeof(rh))
			elog(ERROR, "mtdpp_fit state is truncated");
		memcpy(&rh, p, sizeof(rh));
		p += sizeof(rh);
		/* a line takes at least a byte of its run */
		if (rh.n < 0 || rh.len < 0 || rh.n > rh.len || rh.lo > rh.hi)
			elog(ERROR, "mtdpp_fit state is truncated");
		st->places[k] = private_place;
		if (rh.shared)
		{
			SharedRun	sr;

			if (end - p < (ptrdiff_t) sizeof(sr))
				elog(ERROR, "mtdpp_fit state is truncated");
			memcpy(&sr, p, sizeof(sr));
			p += sizeof(sr);
			st->places[k].area = combining_area(fcinfo, sr.plan_node_id);
			st->places[k].pointer = (dsa_pointer) sr.pointer;
			data = dsa_get_address(st->places[k].area, st->places[k].pointer);
		}
		else
		{
			/* compared before it is aligned, which could wrap it */
			if (rh.len > end - p || end - p < (ptrdiff_t) TYPEALIGN(8, rh.len))
				elog(ERROR, "mtdpp_fit state is truncated");
			data = (const uint8 *) p;
			p += TYPEALIGN(8, rh.len);
		}
		st->runs[st->n_runs++] = (Run) {rh.n, rh.len, rh.lo, rh.hi, rh.positions != 0, data};
	}
	PG_RETURN_POINTER(st);
}

/*
 * The model of the lines of ST, fitted in the current memory context (the
 * fit's), START when the final function began.  The baskets' lines are
 * freed once it is fitted: the model goes on alone.
 */
static MtdppModel *
fit_state(FitState *st, instr_time start)
{
	MtdppParams p;
	MtdppBaskets *data;
	MtdppModel *m;
	int64		lines;
	int			runs = 0,
				threads = 1;

	(void) mtdpp_progress_begin(NULL);	/* if no row of this process began it */
	mtdpp_params_resolve(&p, st->params);
	mtdpp_progress_kind(mtdpp_kind_name(p.kind));
	if (p.warm_start[0] != '\0')
		p.warm = mtdpp_warm_start(&p);
	lines = st->lines.n;
	mtdpp_progress_phase(MTDPP_PHASE_BASKETS);
	if (st->n_runs == 0)
		data = lines_to_baskets(&st->lines);
	else
	{
		bool		positions = false;

		/* lines of this process too (mixed plans): one more run, counted there */
		state_lines_to_run(CurrentMemoryContext, st);
		lines = 0;
		for (int k = 0; k < st->n_runs; k++)
		{
			lines += st->runs[k].n;
			positions |= st->runs[k].positions;
		}
		/* what a serial read of these lines would have held */
		lines_check_budget(lines, positions ? sizeof(OrderLine) : sizeof(uint64));
		runs = st->n_runs;
		data = runs_to_baskets(st->runs, st->n_runs, &threads);
		for (int k = 0; k < st->n_runs; k++)
			if (st->places[k].area)
				dsa_free(st->places[k].area, st->places[k].pointer);
			else
				pfree((void *) st->runs[k].data);
		st->n_runs = 0;
	}

	if (p.verbose)
	{
		if (runs > 0)
			ereport(NOTICE,
					(errmsg("gathered " INT64_FORMAT " order lines into %d baskets of %d items, merging %d sorted runs on %d thread%s",
							lines, data->n_baskets, data->n_items, runs, threads, threads > 1 ? "s" : "")));
		else
			ereport(NOTICE,
					(errmsg("gathered " INT64_FORMAT " order lines into %d baskets of %d items",
							lines, data->n_baskets, data->n_items)));
	}
	/* the lines' sort and merge buffers are free: the fit starts from the baskets */
	mtdpp_release_freed();
	mtdpp_progress_data(lines, data->n_baskets, data->n_items);
	mtdpp_progress_phase(MTDPP_PHASE_EVIDENCE); /* the DPP kinds' fit says otherwise */
	mtdpp_check_model_size(p.kind, data->n_items,
						   mtdpp_kind(p.kind)->factors ? mtdpp_capacity_value_rank(&p, data->n_items) : 0,
						   p.epochs, strlen(mtdpp_params_to_json(&p)));
	m = fit_kind(data, &p);
	/*
	 * The seconds of every kind alike, timed here rather than by each fit:
	 * the lines sorted into baskets, then the fit (a kind that times only
	 * part of its work, or none, reports the whole).
	 */
	m->seconds = mtdpp_seconds_since(start);
	mtdpp_progress_phase(MTDPP_PHASE_SAVING);
	mtdpp_model_validate(m, MTDPP_FROM_TRAINING);
	/* a model copies what it keeps of the baskets: their lines go */
	pfree(data->items);
	pfree(data->start);
	return m;
}

/*
 * The model, as a value; or, for the aggregate mtdpp_train runs, handed to
 * it in memory (handoff.c), with a marker for a value, so that what
 * mtdpp_train stores is bounded by maintenance_work_mem, not by a bytea's
 * limit, and never held twice.
 */
Datum
mtdpp_fit_finalfn(PG_FUNCTION_ARGS)
{
	FitState   *st = PG_ARGISNULL(0) ? NULL : (FitState *) PG_GETARG_POINTER(0);
	MtdppModel *volatile m = NULL;
	MemoryContext caller,
				fit;
	bytea	   *value;
	instr_time	start;
	bool		handoff,
				was;

	INSTR_TIME_SET_CURRENT(start);
	aggregate_context(fcinfo, "mtdpp_fit_finalfn");
	if (st != NULL)
		state_check_live(st);
	if (st != NULL && (st->null_orders > 0 || st->null_items > 0))
		ereport(NOTICE,
				(errmsg("skipped " INT64_FORMAT " order lines with a NULL order id and " INT64_FORMAT " with a NULL item id",
						st->null_orders, st->null_items),
				 errdetail("A line without an order or an item says nothing about a basket."),
				 errhint("Filter such lines out of the source to train without this notice.")));
	if (st == NULL || (st->lines.n == 0 && st->n_runs == 0))
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("mtdpp_fit received no order lines"),
				 errhint("The source is empty, or every row has a NULL order id or item id.")));

	/*
	 * The baskets and the fitted model live in a context of their own: gone
	 * once the value is built, which is all the caller copies out (a large
	 * model would otherwise be held three times: model, value, copy), or
	 * handed to mtdpp_train whole.
	 */
	handoff = mtdpp_handoff_wanted(fcinfo);
	fit = AllocSetContextCreate(CurrentMemoryContext, "mtdpp fit", ALLOCSET_DEFAULT_SIZES);
	caller = MemoryContextSwitchTo(fit);
	was = mtdpp_model_set_in_memory(handoff);
	PG_TRY();
	{
		m = fit_state(st, start);
		if (handoff)
			mtdpp_check_fitted_size(m);
	}
	PG_FINALLY();
	{
		mtdpp_model_set_in_memory(was);
	}
	PG_END_TRY();
	MemoryContextSwitchTo(caller);
	/* the fit's scratch is free: the value is built beside the model alone */
	mtdpp_release_freed();
	if (handoff)
		value = mtdpp_handoff_give(m, fit);
	else
	{
		value = mtdpp_model_serialize(m);
		MemoryContextDelete(fit);
	}
	mtdpp_progress_end_fit();
	PG_RETURN_BYTEA_P(value);
}
