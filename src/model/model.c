/*
 * model/model.c
 *		A model in memory and as a value: its allocation, the squared
 *		factors scoring reads, and its serialised form.
 *
 * A model being trained or serialised holds V and R in double; a model in a
 * backend's cache holds only what scoring reads, in float (the precision
 * of the tables), R^2 in the panels the bounds of topk_bounded.c read (model.h).
 * mtdpp_model_prepare derives what the numeric core (kernel.c) reads from
 * either: R^2, the kernel diagonal D^2 plus jitter, the squared norms of
 * V's rows.  What a model holds beyond its items depends on its kind
 * (kinds.c).
 */
#include "postgres.h"

#include <math.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "model/kinds.h"
#include "model/model.h"
#include "pg_compat.h"

typedef struct SerialHeader
{
	uint32		magic;
	uint16		format;
	uint16		kind;
	int32		n_items;
	int32		rank;
	double		log_w;
	int32		n_baskets;
	int32		epochs_run;
	int64		n_examples;
	int32		best_epoch;
	int32		json_len;		/* bytes of hyperparameter JSON, padded to 8 */
	double		final_loss;
	double		seconds;
} SerialHeader;

/*
 * A model to be stored in memory that mtdpp_check_model_size found past
 * mtdpp_model_budget(), refused when it is allocated (mtdpp_model_alloc):
 * the fit of every kind with factors holds as much again beside its model
 * and checks that against maintenance_work_mem first, with the figure that
 * lets the fit run, which this one would hide.
 */
typedef struct PendingRefusal
{
	bool		set;
	Size		size;
	Size		fixed;
	MtdppKind	kind;
	int			n_items;
	int			rank;
} PendingRefusal;

static PendingRefusal pending = {false};

static void check_value_size(Size size, Size fixed, Size lists, MtdppKind kind, int n_items, int rank);

/*
 * Gives the memory freed so far back to the system.  glibc keeps freed
 * chunks below its mmap threshold (which rises to 32 MB after a large chunk
 * is freed) inside the process, where the next phase of a training may not
 * find them in one piece: a pass's scratch would stay resident beside the
 * model value built after it, beyond what the budgets count as held.
 */
void
mtdpp_release_freed(void)
{
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

/* zeroed memory that may exceed 1 GB (large catalogs at high rank) */
void *
mtdpp_alloc_huge(Size size)
{
	return MemoryContextAllocExtended(CurrentMemoryContext, size,
									  MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
}

/* what every model has: its items, their popularity and bias */
static MtdppModel *
model_items(MtdppKind kind, int n_items, int rank)
{
	MtdppModel *m = palloc0(sizeof(MtdppModel));

	m->kind = kind;
	m->n_items = n_items;
	m->rank = rank;
	m->blocks = 1;
	m->item_ids = palloc0(mul_size(Max(n_items, 1), sizeof(int32)));
	m->popularity = palloc0(mul_size(Max(n_items, 1), sizeof(int32)));
	m->D = palloc0(mul_size(Max(n_items, 1), sizeof(double)));
	return m;
}

/* A model to train or serialise: V and R in double. */
MtdppModel *
mtdpp_model_alloc(MtdppKind kind, int n_items, int rank)
{
	MtdppModel *m;
	Size		cells = mul_size(n_items, rank);

	if (pending.set)
	{
		pending.set = false;
		check_value_size(pending.size, pending.fixed, 0, pending.kind, pending.n_items, pending.rank);
	}
	m = model_items(kind, n_items, rank);

	m->V = mtdpp_alloc_huge(mul_size(cells, sizeof(double)));
	m->R = mtdpp_alloc_huge(mul_size(cells, sizeof(double)));
	return m;
}

/*
 * A model in a backend's cache keeps only what scoring reads, in float: V and
 * R^2 (half the memory of double, the precision the tables store), R^2 in
 * panels (see MTDPP_PANEL), zero past the last item; or, for a kind whose
 * task factors have a sign that matters (signed_task_factors), R itself in
 * rows (Rf).
 */
MtdppModel *
mtdpp_model_alloc_cached(MtdppKind kind, int n_items, int rank)
{
	MtdppModel *m = model_items(kind, n_items, rank);
	Size		cells = mul_size(Max(n_items, 1), Max(rank, 1));
	Size		panels = (Max(n_items, 1) + MTDPP_PANEL - 1) / MTDPP_PANEL;

	m->Vf = MemoryContextAllocHuge(CurrentMemoryContext, mul_size(cells, sizeof(float)));
	if (mtdpp_kind(kind)->signed_task_factors)
	{
		m->Rf = MemoryContextAllocHuge(CurrentMemoryContext, mul_size(cells, sizeof(float)));
		return m;
	}
	m->R2f = MemoryContextAllocExtended(CurrentMemoryContext,
										mul_size(mul_size(panels, MTDPP_PANEL * sizeof(float)), Max(rank, 1)),
										MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	return m;
}

/* qsort and bsearch order of int32 */
int
mtdpp_cmp_int32(const void *a, const void *b)
{
	int32		x = *(const int32 *) a,
				y = *(const int32 *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/*
 * qsort_arg order of item indexes: decreasing key (ARG, by index), then
 * index, so that the order is defined (the scan order here, the top k's
 * candidates by bound)
 */
int
mtdpp_cmp_by_key_desc(const void *a, const void *b, void *arg)
{
	const double *key = arg;
	int32		x = *(const int32 *) a,
				y = *(const int32 *) b;

	if (key[x] != key[y])
		return key[x] > key[y] ? -1 : 1;
	return (x > y) - (x < y);
}

/*
 * The scan order of a large cached model of one bounded fit (topk_scan.c):
 * its items by decreasing sum of their squared task factors, summed in
 * double from the floats its bounds read, a copy of R^2 in that order (the
 * model's memory grows by a third at rank 32, less above), and the
 * envelope of each group of MTDPP_SCAN_GROUP of them.
 */
static void
model_scan_order(MtdppModel *m)
{
	int			n = m->n_items;
	double	   *key;

	if (m->R2f == NULL || m->rank <= 0 || Max(m->blocks, 1) > 1 || n < MTDPP_SCAN_MIN_ITEMS ||
		!mtdpp_kind(m->kind)->bounded || m->scan_order != NULL)
		return;
	key = palloc(sizeof(double) * n);
	m->scan_order = palloc(sizeof(int32) * n);
	m->scan_key = palloc(sizeof(double) * n);
	for (int i = 0; i < n; i++)
	{
		double		t = 0.0;

		for (int j = 0; j < m->rank; j++)
			t += mtdpp_r2f(m, i, j);
		key[i] = t;
		m->scan_order[i] = i;
	}
	qsort_arg(m->scan_order, n, sizeof(int32), mtdpp_cmp_by_key_desc, key);
	/* and R^2 in panels in that order, whole groups, which the scan reads straight through */
	m->scan_R2f = MemoryContextAllocExtended(CurrentMemoryContext,
											 mul_size(mul_size((n + MTDPP_SCAN_GROUP - 1) / MTDPP_SCAN_GROUP,
															   MTDPP_SCAN_GROUP * sizeof(float)), m->rank),
											 MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	/* the envelopes, one per group, in panels as items are (a group a lane) */
	m->scan_env = palloc0(mul_size(mul_size(mtdpp_scan_groups(n), MTDPP_PANEL * sizeof(float)),
								   m->rank));
	for (int i = 0; i < n; i++)
	{
		m->scan_key[i] = key[m->scan_order[i]];
		for (int j = 0; j < m->rank; j++)
		{
			float		v = mtdpp_r2f(m, m->scan_order[i], j);
			float	   *env = m->scan_env + mtdpp_panel_cell(m->rank, i / MTDPP_SCAN_GROUP, j);

			m->scan_R2f[mtdpp_panel_cell(m->rank, i, j)] = v;
			*env = Max(*env, v);
		}
	}
	pfree(key);
}

/* Builds the squared factors that scoring reads; call after any change. */
void
mtdpp_model_prepare(MtdppModel *m)
{
	Size		cells = (Size) m->n_items * m->rank;
	bool		bias = mtdpp_kind(m->kind)->bias;

	if (m->R != NULL)
	{
		if (m->R2 == NULL)
			m->R2 = mtdpp_alloc_huge(mul_size(cells, sizeof(double)));
		for (Size i = 0; i < cells; i++)
			m->R2[i] = m->R[i] * m->R[i];
	}
	if (m->D2 == NULL)
		m->D2 = palloc0(mul_size(Max(m->n_items, 1), sizeof(double)));
	for (int i = 0; i < m->n_items; i++)
		m->D2[i] = (bias ? m->D[i] * m->D[i] : 0.0) + MTDPP_JITTER;
	if (m->Vnorm2 == NULL)
		m->Vnorm2 = palloc0(mul_size(Max(m->n_items, 1), sizeof(double)));
	for (int i = 0; i < m->n_items; i++)
	{
		double		s = 0.0;

		for (int j = 0; j < m->rank; j++)
		{
			double		v = m->V ? m->V[(size_t) i * m->rank + j] : m->Vf[(size_t) i * m->rank + j];

			s += v * v;
		}
		m->Vnorm2[i] = s;
	}
	model_scan_order(m);
}

/* dense index of ITEM_ID, or -1 if the model has never seen it */
int
mtdpp_model_index(const MtdppModel *m, int32 item_id)
{
	int			lo = 0,
				hi = m->n_items - 1;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (m->item_ids[mid] == item_id)
			return mid;
		if (m->item_ids[mid] < item_id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/*
 * Serialised form (bytea): a header, the resolved hyperparameters as JSON,
 * the training history, then the per-item arrays.  The format word lets a
 * later version read an older model or refuse it clearly.
 *
 * A bytea holds at most MaxAllocSize bytes (1 GB): about 16 bytes per item
 * and rank unit, so items x rank up to about 67 million.  The size is known
 * before training (but for the neighbour lists of item-kNN), and checked
 * then; the value is built in one allocation of its exact size.  A model
 * that mtdpp_train stores is built as no value (train/handoff.c): its size,
 * counted the same way, is bounded by maintenance_work_mem alone.
 */
static Size
serialized_size(MtdppKind kind, int n_items, int rank, int epochs, int json_padded,
				int64 neighbors)
{
	Size		s = VARHDRSZ + sizeof(SerialHeader) + json_padded;

	s = add_size(s, mul_size(Max(epochs, 0), 2 * sizeof(double)));
	s = add_size(s, mul_size(n_items, 2 * sizeof(int32) + sizeof(double)));
	s = add_size(s, mul_size(mul_size(n_items, rank), 2 * sizeof(double)));
	if (mtdpp_kind(kind)->neighbors)
		s = add_size(s, add_size(mul_size(n_items + 1, sizeof(int64)),
								 mul_size(neighbors, sizeof(int32) + sizeof(float4))));
	/* a kind with shared weights: their count (8 bytes), then the weights */
	if (mtdpp_kind(kind)->weights)
		s = add_size(s, add_size(sizeof(int64), mul_size(6 * rank * rank + 3 * rank, sizeof(double))));
	return s;
}

/*
 * Whether the model being fitted goes to storage in memory (mtdpp_train,
 * train/handoff.c) rather than as a value: then maintenance_work_mem alone
 * bounds it, not a bytea's gigabyte.  Set by the final function of
 * mtdpp_fit for the time of its fit.
 */
static bool model_in_memory = false;

/* Sets whether the model being fitted goes to storage in memory; returns what was set. */
bool
mtdpp_model_set_in_memory(bool in_memory)
{
	bool		was = model_in_memory;

	model_in_memory = in_memory;
	pending.set = false;
	return was;
}

/*
 * Refuses a model of SIZE bytes counted as its value (FIXED of them without
 * the factors, LISTS the neighbour lists') past what it may take: a
 * bytea's limit for a value, mtdpp_model_budget() for a model mtdpp_train
 * stores.  The hint names what to set: maintenance_work_mem where it is
 * the bound, the rank where the factors alone do not fit, max_neighbors
 * where the lists make the difference.
 */
static void
check_value_size(Size size, Size fixed, Size lists, MtdppKind kind, int n_items, int rank)
{
	Size		limit = model_in_memory ? mtdpp_model_budget() : (Size) MaxAllocSize;
	/* the megabytes of maintenance_work_mem whose half holds SIZE, 0 past its range */
	double		mb = ceil(2.0 * (double) size / (1024.0 * 1024.0));
	Size		setting = mb * 1024.0 <= (double) MAX_KILOBYTES ? (Size) mb : 0;
	int			max_rank = fixed < limit && n_items > 0 && rank > 0 ?
		(int) Min((limit - fixed) / ((Size) n_items * 2 * sizeof(double)), MTDPP_MAX_RANK) : 0;

	if (size <= limit)
		return;
	if (model_in_memory && mtdpp_kind(kind)->neighbors && size - lists <= limit)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("an %s model of %d items takes %zu bytes, more than half of maintenance_work_mem (%d kB)",
						mtdpp_kind_name(kind), n_items, size, maintenance_work_mem),
				 errdetail("A model holds 8 bytes per pair of items in its neighbour lists, and 16 per item and rank unit; storing it takes the other half."),
				 setting > 0 ?
				 errhint("SET maintenance_work_mem = '%zuMB' for this session, or give a smaller max_neighbors, or leave it out to keep the strongest pairs that fit.",
						 setting) :
				 errhint("Give a smaller max_neighbors, or leave it out to keep the strongest pairs that fit.")));
	if (model_in_memory)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a %s model of %d items at rank %d takes %zu bytes, more than half of maintenance_work_mem (%d kB)",
						mtdpp_kind_name(kind), n_items, rank, size, maintenance_work_mem),
				 errdetail("A model holds 16 bytes per item and rank unit; storing it takes the other half."),
				 setting > 0 && max_rank > 0 ?
				 errhint("SET maintenance_work_mem = '%zuMB' for this session, or train at a rank of at most %d for %d items.",
						 setting, max_rank, n_items) :
				 setting > 0 ?
				 errhint("SET maintenance_work_mem = '%zuMB' for this session, or train on fewer items.", setting) :
				 errhint("Train on fewer items.")));
	if (mtdpp_kind(kind)->neighbors && size - lists <= limit)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("an %s model of %d items takes %zu bytes as a value, more than the %zu bytes a bytea can hold",
						mtdpp_kind_name(kind), n_items, size, (Size) MaxAllocSize),
				 errdetail("The value of a model holds 8 bytes per pair of items in its neighbour lists, and 16 per item and rank unit."),
				 errhint("Give a smaller max_neighbors, or leave it out to keep the strongest pairs that fit.")));
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("a %s model of %d items at rank %d takes %zu bytes as a value, more than the %zu bytes a bytea can hold",
					mtdpp_kind_name(kind), n_items, rank, size, (Size) MaxAllocSize),
			 errdetail("The value of a model holds 16 bytes per item and rank unit."),
			 max_rank > 0 ?
			 errhint("Train at a rank of at most %d for %d items.", max_rank, n_items) :
			 errhint("Train on fewer items.")));
}

/*
 * The bytes a model may take: half of maintenance_work_mem, since storing
 * it holds as much beside it (mtdpp_train: the scores of its held-out
 * test, the rows; mtdpp_fit: its value); and a bytea's limit for a model
 * returned as a value.
 */
Size
mtdpp_model_budget(void)
{
	Size		half = (Size) maintenance_work_mem * 1024 / 2;

	return model_in_memory ? half : Min((Size) MaxAllocSize, half);
}

/*
 * Whether mtdpp_model_budget() is half of maintenance_work_mem, which a
 * SET raises, rather than a bytea's limit, which nothing does.
 */
bool
mtdpp_model_budget_settable(void)
{
	return model_in_memory || (Size) maintenance_work_mem * 1024 / 2 < MaxAllocSize;
}

/*
 * The pairs of neighbour lists a model value of KIND, N_ITEMS and RANK,
 * trained for at most EPOCHS, has room for beside the rest (its
 * hyperparameters given 64 kB, far more than they take) within
 * mtdpp_model_budget().
 */
int64
mtdpp_neighbor_room(MtdppKind kind, int n_items, int rank, int epochs)
{
	Size		fixed = serialized_size(kind, n_items, rank, epochs, 65536, 0);
	Size		budget = mtdpp_model_budget();

	if (fixed >= budget)
		return 0;
	return (int64) ((budget - fixed) / (sizeof(int32) + sizeof(float4)));
}

/*
 * Refuses, before training, a model past what it may take
 * (check_value_size): a model of KIND of N_ITEMS items at RANK (the
 * largest its fit may keep), trained for at most EPOCHS, whose
 * hyperparameters take JSON_LEN bytes.  A model mtdpp_train stores is
 * refused when its fit allocates it (PendingRefusal), after the fit's own
 * check of its memory.
 */
void
mtdpp_check_model_size(MtdppKind kind, int n_items, int rank, int epochs, int json_len)
{
	int			json_padded = TYPEALIGN(8, json_len + 1);
	Size		size = serialized_size(kind, n_items, rank, epochs, json_padded, 0);
	Size		fixed = serialized_size(kind, n_items, 0, epochs, json_padded, 0);

	if (model_in_memory && size > mtdpp_model_budget())
	{
		pending = (PendingRefusal) {true, size, fixed, kind, n_items, rank};
		return;
	}
	check_value_size(size, fixed, 0, kind, n_items, rank);
}

/*
 * Refuses the fitted model M past what it may take, its neighbour lists
 * counted (check_value_size): before it is built into a value, or handed
 * to storage in memory.
 */
void
mtdpp_check_fitted_size(const MtdppModel *m)
{
	int			padded = TYPEALIGN(8, m->hyperparams ? strlen(m->hyperparams) + 1 : 1);
	int64		nn = mtdpp_kind(m->kind)->neighbors ? m->nbr_start[m->n_items] : 0;

	check_value_size(serialized_size(m->kind, m->n_items, m->rank, m->epochs_run, padded, nn),
					 serialized_size(m->kind, m->n_items, 0, m->epochs_run, padded, nn),
					 mul_size(nn, sizeof(int32) + sizeof(float4)), m->kind, m->n_items, m->rank);
}

/*
 * The bytes of the value of a model of KIND, N_ITEMS and RANK trained for
 * at most EPOCHS, without neighbour lists (hyperparameters given 64 kB):
 * what the choice of a rank compares with mtdpp_model_budget().
 */
Size
mtdpp_model_value_size(MtdppKind kind, int n_items, int rank, int epochs)
{
	return serialized_size(kind, n_items, rank, epochs, 65536, 0);
}

bytea *
mtdpp_model_serialize(const MtdppModel *m)
{
	SerialHeader h;
	int			json_len = m->hyperparams ? strlen(m->hyperparams) + 1 : 1;
	int			padded = TYPEALIGN(8, json_len);
	Size		cells = (Size) m->n_items * m->rank;
	int64		nn = mtdpp_kind(m->kind)->neighbors ? m->nbr_start[m->n_items] : 0;
	Size		size = serialized_size(m->kind, m->n_items, m->rank, m->epochs_run, padded, nn);
	char	   *out;
	char	   *p;

	Assert(!model_in_memory);
	mtdpp_check_fitted_size(m);

	memset(&h, 0, sizeof(h));
	h.magic = MTDPP_MODEL_MAGIC;
	h.format = MTDPP_FORMAT_VERSION;
	h.kind = m->kind;
	h.n_items = m->n_items;
	h.rank = m->rank;
	h.log_w = m->log_w;
	h.n_baskets = m->n_baskets;
	h.epochs_run = m->epochs_run;
	h.n_examples = m->n_examples;
	h.best_epoch = m->best_epoch;
	h.json_len = padded;
	h.final_loss = m->final_loss;
	h.seconds = m->seconds;

	out = palloc0(size);
	p = out + VARHDRSZ;
#define PUT(src, len) do { memcpy(p, (src), (len)); p += (len); } while (0)
	PUT(&h, sizeof(h));
	PUT(m->hyperparams ? m->hyperparams : "", json_len);
	p += padded - json_len;		/* zeros */
	if (m->epochs_run > 0)
	{
		PUT(m->loss_history, sizeof(double) * m->epochs_run);
		PUT(m->val_history, sizeof(double) * m->epochs_run);
	}
	PUT(m->item_ids, sizeof(int32) * m->n_items);
	PUT(m->popularity, sizeof(int32) * m->n_items);
	PUT(m->D, sizeof(double) * m->n_items);
	PUT(m->V, sizeof(double) * cells);
	PUT(m->R, sizeof(double) * cells);
	if (mtdpp_kind(m->kind)->neighbors)
	{
		PUT(m->nbr_start, sizeof(int64) * (m->n_items + 1));
		PUT(m->nbr_index, sizeof(int32) * nn);
		PUT(m->nbr_weight, sizeof(float4) * nn);
	}
	if (mtdpp_kind(m->kind)->weights)
	{
		int64		nw = m->n_weights;

		Assert(nw == 6 * m->rank * m->rank + 3 * m->rank);
		PUT(&nw, sizeof(int64));
		PUT(m->weights, sizeof(double) * nw);
	}
#undef PUT
	Assert((Size) (p - out) == size);
	SET_VARSIZE(out, size);
	return (bytea *) out;
}

static void
read_bytes(const char **pos, const char *end, void *dst, Size len)
{
	if (len > (Size) (end - *pos))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("mtdpp model value is truncated"),
				 errhint("Pass the value returned by the mtdpp_fit aggregate unchanged.")));
	memcpy(dst, *pos, len);
	*pos += len;
}

/* a kind with shared weights: their count, then the weights, into M */
static void
read_weights(const char **pos, const char *end, MtdppModel *m)
{
	int64		nw;

	read_bytes(pos, end, &nw, sizeof(int64));
	if (nw != 6 * (int64) m->rank * m->rank + 3 * m->rank)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("mtdpp model has " INT64_FORMAT " weights, not the %d of rank %d",
						nw, 6 * m->rank * m->rank + 3 * m->rank, m->rank)));
	m->n_weights = (int) nw;
	m->weights = palloc(sizeof(double) * Max(nw, 1));
	read_bytes(pos, end, m->weights, sizeof(double) * nw);
}

/*
 * The fits side by side (MtdppModel.blocks) of a model of KIND whose stored
 * hyperparameters give TEXT for the kind's blocks key (NULL: none): 1 for a
 * kind without one, and for an ensemble whose hyperparameters name no count
 * (its "fits" is stored only above 1); 0, which validation refuses, where
 * the count is missing or out of range.
 */
int
mtdpp_model_blocks(MtdppKind kind, const char *text)
{
	const MtdppKindRoutine *routine = mtdpp_kind(kind);
	char	   *end;
	long		v;

	if (routine->blocks_key == NULL)
		return 1;
	if (text == NULL)
		return routine->ensemble ? 1 : 0;
	v = strtol(text, &end, 10);
	if (end == text || v < 1 || v > MTDPP_MAX_RANK)
		return 0;
	return (int) v;
}

/*
 * The fits side by side of model M, from its stored hyperparameters: the
 * number after its kind's blocks key ("key": value, as params.c writes it; a
 * quote inside a string value is escaped, so the pattern matches keys only).
 */
static int
stored_blocks(const MtdppModel *m)
{
	const char *key = mtdpp_kind(m->kind)->blocks_key;
	char		pattern[64];
	const char *at;

	if (key == NULL)
		return 1;
	snprintf(pattern, sizeof(pattern), "\"%s\": ", key);
	at = m->hyperparams ? strstr(m->hyperparams, pattern) : NULL;
	return mtdpp_model_blocks(m->kind, at ? at + strlen(pattern) : NULL);
}

/*
 * The text of KEY's value in the stored hyperparameters ARG (a model's
 * JSON, as params.c writes it), or NULL: for a kind's restore.
 */
static const char *
json_value_of(const char *key, void *arg)
{
	const char *json = arg;
	char		pattern[80];
	const char *at;

	snprintf(pattern, sizeof(pattern), "\"%s\": ", key);
	at = json ? strstr(json, pattern) : NULL;
	return at ? at + strlen(pattern) : NULL;
}

/* M's own values, which its kind reads back from the hyperparameters M holds */
void
mtdpp_model_restore(MtdppModel *m, const char *(*value_of) (const char *key, void *arg),
					void *arg)
{
	const MtdppKindRoutine *kind = mtdpp_kind(m->kind);

	if (kind->restore != NULL)
		kind->restore(m, value_of, arg);
}

MtdppModel *
mtdpp_model_deserialize(bytea *blob)
{
	const char *pos = VARDATA_ANY(blob);
	const char *end = pos + VARSIZE_ANY_EXHDR(blob);
	SerialHeader h;
	MtdppModel *m;
	Size		cells;

	read_bytes(&pos, end, &h, sizeof(h));
	if (h.magic != MTDPP_MODEL_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("value is not an mtdpp model"),
				 errhint("Pass the value returned by the mtdpp_fit aggregate.")));
	if (h.format != MTDPP_FORMAT_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("mtdpp model has format %d, this version reads format %d",
						h.format, MTDPP_FORMAT_VERSION),
				 errhint("Train the model again with this version of mtdpp.")));
	/* the DPP kinds have factors (rank 1 or more), the baselines none */
	if (!mtdpp_kind_exists(h.kind) || h.n_items < 0 || h.rank < 0 ||
		h.rank > MTDPP_MAX_RANK || h.epochs_run < 0 || h.json_len < 0 || !isfinite(h.log_w) ||
		mtdpp_kind(h.kind)->factors != (h.rank > 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("mtdpp model header is corrupt")));

	/* the sizes the header claims must fit in the value before anything is allocated */
	if ((double) h.json_len + 16.0 * h.epochs_run + 16.0 * h.n_items +
		16.0 * (double) h.n_items * h.rank > (double) (end - pos))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("mtdpp model value is truncated"),
				 errdetail("Its header describes %d items at rank %d, more than its %zu bytes hold.",
						   h.n_items, h.rank, (Size) (end - pos)),
				 errhint("Pass the value returned by the mtdpp_fit aggregate unchanged.")));
	m = mtdpp_model_alloc((MtdppKind) h.kind, h.n_items, h.rank);
	m->log_w = h.log_w;
	m->n_baskets = h.n_baskets;
	m->epochs_run = h.epochs_run;
	m->n_examples = h.n_examples;
	m->best_epoch = h.best_epoch;
	m->final_loss = h.final_loss;
	m->seconds = h.seconds;
	m->hyperparams = palloc0(h.json_len + 1);
	read_bytes(&pos, end, m->hyperparams, h.json_len);
	m->blocks = stored_blocks(m);
	mtdpp_model_restore(m, json_value_of, m->hyperparams);
	m->loss_history = palloc0(sizeof(double) * Max(1, h.epochs_run));
	m->val_history = palloc0(sizeof(double) * Max(1, h.epochs_run));
	read_bytes(&pos, end, m->loss_history, sizeof(double) * h.epochs_run);
	read_bytes(&pos, end, m->val_history, sizeof(double) * h.epochs_run);
	cells = (Size) h.n_items * h.rank;
	read_bytes(&pos, end, m->item_ids, sizeof(int32) * h.n_items);
	read_bytes(&pos, end, m->popularity, sizeof(int32) * h.n_items);
	read_bytes(&pos, end, m->D, sizeof(double) * h.n_items);
	read_bytes(&pos, end, m->V, sizeof(double) * cells);
	read_bytes(&pos, end, m->R, sizeof(double) * cells);
	if (mtdpp_kind(m->kind)->neighbors)
	{
		int64		nn;

		m->nbr_start = mtdpp_alloc_huge(sizeof(int64) * (m->n_items + 1));
		read_bytes(&pos, end, m->nbr_start, sizeof(int64) * (m->n_items + 1));
		nn = m->nbr_start[m->n_items];
		if (m->nbr_start[0] != 0 || nn < 0 || nn > (int64) (end - pos))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
					 errmsg("mtdpp model neighbour lists are corrupt")));
		m->nbr_index = mtdpp_alloc_huge(sizeof(int32) * Max(nn, 1));
		m->nbr_weight = mtdpp_alloc_huge(sizeof(float4) * Max(nn, 1));
		read_bytes(&pos, end, m->nbr_index, sizeof(int32) * nn);
		read_bytes(&pos, end, m->nbr_weight, sizeof(float4) * nn);
		for (int i = 0; i < m->n_items; i++)
			if (m->nbr_start[i] > m->nbr_start[i + 1])
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
						 errmsg("mtdpp model neighbour lists are corrupt")));
		for (int64 k = 0; k < nn; k++)
			if (m->nbr_index[k] < 0 || m->nbr_index[k] >= m->n_items)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
						 errmsg("mtdpp model neighbour lists are corrupt")));
	}
	if (mtdpp_kind(m->kind)->weights)
		read_weights(&pos, end, m);
	if (pos != end)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("mtdpp model value has %zu bytes after its end", (Size) (end - pos)),
				 errdetail("Its header describes %d items at rank %d, which take %zu bytes of its %zu.",
						   h.n_items, h.rank, (Size) (pos - (const char *) VARDATA_ANY(blob)),
						   (Size) VARSIZE_ANY_EXHDR(blob)),
				 errhint("Pass the value returned by the mtdpp_fit aggregate unchanged.")));
	for (int i = 1; i < m->n_items; i++)
		if (m->item_ids[i] <= m->item_ids[i - 1])
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
					 errmsg("mtdpp model item ids are not ascending")));
	for (Size c = 0; c < cells; c++)
		if (!isfinite(m->V[c]) || !isfinite(m->R[c]))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
					 errmsg("mtdpp model factors of item %d are not finite", m->item_ids[c / Max(m->rank, 1)])));
	for (int i = 0; i < m->n_items; i++)
		if (!isfinite(m->D[i]))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
					 errmsg("mtdpp model bias of item %d is not finite", m->item_ids[i])));
	mtdpp_model_validate(m, MTDPP_FROM_VALUE);
	return m;
}

/* A copy of the trained model M, its record included, in the current memory context. */
MtdppModel *
mtdpp_model_copy(const MtdppModel *m)
{
	Size		cells = (Size) m->n_items * m->rank;
	MtdppModel *result = mtdpp_model_alloc(m->kind, m->n_items, m->rank);

	result->log_w = m->log_w;
	result->blocks = m->blocks;
	result->own = m->own;
	result->n_baskets = m->n_baskets;
	result->n_examples = m->n_examples;
	result->epochs_run = m->epochs_run;
	result->best_epoch = m->best_epoch;
	result->final_loss = m->loss_history[Max(m->best_epoch, 1) - 1];
	result->seconds = m->seconds;
	result->hyperparams = pstrdup(m->hyperparams);
	result->loss_history = palloc0(sizeof(double) * Max(m->epochs_run, 1));
	result->val_history = palloc0(sizeof(double) * Max(m->epochs_run, 1));
	memcpy(result->loss_history, m->loss_history, sizeof(double) * m->epochs_run);
	memcpy(result->val_history, m->val_history, sizeof(double) * m->epochs_run);
	memcpy(result->item_ids, m->item_ids, sizeof(int32) * m->n_items);
	memcpy(result->popularity, m->popularity, sizeof(int32) * m->n_items);
	memcpy(result->D, m->D, sizeof(double) * m->n_items);
	memcpy(result->V, m->V, sizeof(double) * cells);
	memcpy(result->R, m->R, sizeof(double) * cells);
	if (m->weights != NULL)
	{
		result->n_weights = m->n_weights;
		result->weights = palloc(sizeof(double) * Max(m->n_weights, 1));
		memcpy(result->weights, m->weights, sizeof(double) * m->n_weights);
	}
	return result;
}
