/*
 * pg_runtime.c
 *		Just enough of the PostgreSQL backend to run the extension's parsers
 *		in a fuzzing harness, outside a server.
 *
 * The harnesses link the extension's real source files (src/train/aggregate.c,
 * src/train/lines.c, src/model/model.c, ...); those call a few backend services, which
 * this file provides with the same contracts, kept simple so that the
 * sanitizers see every byte:
 *
 * - Memory contexts over malloc.  Every chunk is its own malloc block, with
 *   a header in front (poisoned for AddressSanitizer while the chunk lives,
 *   so a write before the chunk is caught like one after it), linked into
 *   its context; resetting or deleting a context frees its chunks and
 *   deletes its children, as in PostgreSQL.  A harness gives each input a
 *   fresh context and frees it afterwards, so an ERROR leaks nothing.
 *   Requests above MaxAllocSize (MaxAllocHugeSize for the huge variants)
 *   fail with an ERROR as in PostgreSQL.  A request above FUZZ_ALLOC_LIMIT
 *   (256 MB, or MTDPP_FUZZ_ALLOC_LIMIT_MB) is a finding: no input a fuzzer
 *   makes is that large, so such a size was read from the input without
 *   being checked against the input's length.
 * - ereport/elog: an ERROR records its SQLSTATE and message in fuzz_error
 *   and jumps (siglongjmp) back to fuzz_try in the harness; lower levels are
 *   dropped; FATAL and PANIC abort (a finding).
 * - dynahash (hash_create ...) as a small chained hash table, pg_qsort,
 *   StringInfo appends, mul_size/add_size, detoasting (a harness's values
 *   are never toasted), interrupts (never pending), and the GUCs read.
 * - AggCheckCallContext accepts fuzz_agg_node as the aggregate's context.
 *   The services of parallel query (dynamic shared memory areas, plan tree
 *   walks) and the trainer and hyperparameter parser are not here: a
 *   harness never reaches them, and a call aborts.
 */
#include "postgres.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "fmgr.h"
#if PG_VERSION_NUM >= 160000
#include "varatt.h"				/* PostgreSQL 16 moved the varlena macros here */
#endif
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/memnodes.h"
#include "nodes/nodeFuncs.h"
#include "utils/dsa.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "pg_runtime.h"

/* the C library's, not PostgreSQL's replacements (port.h) */
#undef vsnprintf
#undef snprintf
#undef fprintf
#undef vfprintf
#undef printf
#undef qsort

struct PlanState;

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#define HEADER_OPEN(h) ASAN_UNPOISON_MEMORY_REGION((h), sizeof(Chunk))
#define HEADER_CLOSE(h) ASAN_POISON_MEMORY_REGION((h), sizeof(Chunk))
#endif
#endif
#ifndef HEADER_OPEN
#define HEADER_OPEN(h) ((void) 0)
#define HEADER_CLOSE(h) ((void) 0)
#endif

/* ---------------------------------------------------------------------
 * Memory contexts
 * --------------------------------------------------------------------- */

#define CHUNK_MAGIC 0x6d74647070636b31ULL

typedef struct Chunk
{
	struct Chunk *prev;
	struct Chunk *next;
	struct FuzzContext *ctx;
	Size		size;			/* requested */
	uint64		magic;
	uint64		padding;
} Chunk;

StaticAssertDecl(sizeof(Chunk) % 16 == 0, "chunks keep their payload aligned as malloc's");

typedef struct FuzzContext
{
	MemoryContextData header;	/* what the extension sees */
	Chunk	   *chunks;
} FuzzContext;

static FuzzContext top_context_data;
MemoryContext TopMemoryContext = (MemoryContext) &top_context_data;
MemoryContext CurrentMemoryContext = (MemoryContext) &top_context_data;
MemoryContext ErrorContext = NULL;

static Size alloc_limit = 0;

static void
context_init(FuzzContext *c, MemoryContext parent, const char *name)
{
	memset(c, 0, sizeof(*c));
	c->header.type = T_AllocSetContext;
	c->header.isReset = true;
	c->header.name = name;
	c->header.parent = parent;
	if (parent)
	{
		c->header.nextchild = parent->firstchild;
		if (parent->firstchild)
			parent->firstchild->prevchild = (MemoryContext) c;
		parent->firstchild = (MemoryContext) c;
	}
}

MemoryContext
AllocSetContextCreateInternal(MemoryContext parent, const char *name,
							  Size minContextSize, Size initBlockSize, Size maxBlockSize)
{
	FuzzContext *c = malloc(sizeof(FuzzContext));

	if (c == NULL)
		fuzz_fail("out of memory creating a context");
	context_init(c, parent, name);
	return (MemoryContext) c;
}

static void
unlink_chunk(Chunk *h)
{
	Chunk	   *prev = h->prev,
			   *next = h->next;

	if (prev)
	{
		HEADER_OPEN(prev);
		prev->next = next;
		HEADER_CLOSE(prev);
	}
	else
		h->ctx->chunks = next;
	if (next)
	{
		HEADER_OPEN(next);
		next->prev = prev;
		HEADER_CLOSE(next);
	}
}

static void
run_callbacks(MemoryContext context)
{
	MemoryContextCallback *cb;

	while ((cb = context->reset_cbs) != NULL)
	{
		context->reset_cbs = cb->next;
		cb->func(cb->arg);
	}
}

static void context_delete(MemoryContext context);

/* frees every chunk and deletes every child, as MemoryContextReset does */
static void
context_reset(MemoryContext context)
{
	FuzzContext *c = (FuzzContext *) context;
	Chunk	   *h = c->chunks;

	while (context->firstchild)
		context_delete(context->firstchild);
	run_callbacks(context);
	while (h)
	{
		Chunk	   *next;

		HEADER_OPEN(h);
		if (h->magic != CHUNK_MAGIC)
			fuzz_fail("the header of a chunk of context \"%s\" was overwritten", context->name);
		next = h->next;
		free(h);
		h = next;
	}
	c->chunks = NULL;
	context->isReset = true;
}

static void
context_delete(MemoryContext context)
{
	context_reset(context);
	if (context->parent)
	{
		if (context->prevchild)
			context->prevchild->nextchild = context->nextchild;
		else
			context->parent->firstchild = context->nextchild;
		if (context->nextchild)
			context->nextchild->prevchild = context->prevchild;
	}
	if (CurrentMemoryContext == context)
		CurrentMemoryContext = context->parent ? context->parent : TopMemoryContext;
	if (context != TopMemoryContext)
		free(context);
}

void
MemoryContextDelete(MemoryContext context)
{
	context_delete(context);
}

void
MemoryContextReset(MemoryContext context)
{
	context_reset(context);
}

void
MemoryContextSetIdentifier(MemoryContext context, const char *id)
{
	context->ident = id;
}

void
MemoryContextRegisterResetCallback(MemoryContext context, MemoryContextCallback *cb)
{
	cb->next = context->reset_cbs;
	context->reset_cbs = cb;
}

static void *
chunk_alloc(MemoryContext context, Size size, int flags)
{
	FuzzContext *c = (FuzzContext *) context;
	Chunk	   *h;

	if (alloc_limit == 0)
	{
		const char *mb = getenv("MTDPP_FUZZ_ALLOC_LIMIT_MB");

		alloc_limit = (Size) (mb ? atol(mb) : 256) * 1024 * 1024;
	}
	if ((flags & MCXT_ALLOC_HUGE) ? !AllocHugeSizeIsValid(size) : !AllocSizeIsValid(size))
		elog(ERROR, "invalid memory alloc request size %zu", size);
	if (size > alloc_limit)
		fuzz_fail("allocation of %zu bytes (more than %zu): a size read from the input was not checked against its length",
				  size, alloc_limit);
	h = malloc(sizeof(Chunk) + Max(size, 1));
	if (h == NULL)
	{
		if (flags & MCXT_ALLOC_NO_OOM)
			return NULL;
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("Failed on request of size %zu.", size)));
	}
	h->prev = NULL;
	h->next = c->chunks;
	h->ctx = c;
	h->size = size;
	h->magic = CHUNK_MAGIC;
	if (c->chunks)
	{
		HEADER_OPEN(c->chunks);
		c->chunks->prev = h;
		HEADER_CLOSE(c->chunks);
	}
	c->chunks = h;
	HEADER_CLOSE(h);
	context->isReset = false;
	if (flags & MCXT_ALLOC_ZERO)
		memset(h + 1, 0, size);
	return h + 1;
}

static Chunk *
chunk_of(void *pointer, const char *fn)
{
	Chunk	   *h = (Chunk *) pointer - 1;

	HEADER_OPEN(h);
	if (h->magic != CHUNK_MAGIC)
		fuzz_fail("%s of a pointer that is not a live chunk (or whose header was overwritten)", fn);
	return h;
}

void *
MemoryContextAlloc(MemoryContext context, Size size)
{
	return chunk_alloc(context, size, 0);
}

void *
MemoryContextAllocZero(MemoryContext context, Size size)
{
	return chunk_alloc(context, size, MCXT_ALLOC_ZERO);
}

void *
MemoryContextAllocZeroAligned(MemoryContext context, Size size)
{
	return chunk_alloc(context, size, MCXT_ALLOC_ZERO);
}

void *
MemoryContextAllocExtended(MemoryContext context, Size size, int flags)
{
	return chunk_alloc(context, size, flags);
}

void *
MemoryContextAllocHuge(MemoryContext context, Size size)
{
	return chunk_alloc(context, size, MCXT_ALLOC_HUGE);
}

void *
palloc(Size size)
{
	return chunk_alloc(CurrentMemoryContext, size, 0);
}

void *
palloc0(Size size)
{
	return chunk_alloc(CurrentMemoryContext, size, MCXT_ALLOC_ZERO);
}

void *
palloc_extended(Size size, int flags)
{
	return chunk_alloc(CurrentMemoryContext, size, flags);
}

char *
MemoryContextStrdup(MemoryContext context, const char *string)
{
	Size		len = strlen(string) + 1;
	char	   *s = chunk_alloc(context, len, 0);

	memcpy(s, string, len);
	return s;
}

char *
pstrdup(const char *in)
{
	return MemoryContextStrdup(CurrentMemoryContext, in);
}

void
pfree(void *pointer)
{
	Chunk	   *h = chunk_of(pointer, "pfree");

	unlink_chunk(h);
	h->magic = 0;
	free(h);
}

/* a new chunk in the same context, the old one freed: every move is seen */
static void *
chunk_realloc(void *pointer, Size size, int flags, const char *fn)
{
	Chunk	   *h = chunk_of(pointer, fn);
	FuzzContext *c = h->ctx;
	void	   *q;
	Size		old;

	HEADER_CLOSE(h);
	q = chunk_alloc((MemoryContext) c, size, flags);
	HEADER_OPEN(h);
	old = h->size;
	HEADER_CLOSE(h);
	memcpy(q, pointer, Min(old, size));
	pfree(pointer);
	return q;
}

void *
repalloc(void *pointer, Size size)
{
	return chunk_realloc(pointer, size, 0, "repalloc");
}

void *
repalloc_huge(void *pointer, Size size)
{
	return chunk_realloc(pointer, size, MCXT_ALLOC_HUGE, "repalloc_huge");
}

Size
add_size(Size s1, Size s2)
{
	Size		result = s1 + s2;

	if (result < s1 || result < s2)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("requested shared memory size overflows size_t")));
	return result;
}

Size
mul_size(Size s1, Size s2)
{
	Size		result;

	if (s1 == 0 || s2 == 0)
		return 0;
	result = s1 * s2;
	if (result / s2 != s1)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("requested shared memory size overflows size_t")));
	return result;
}

/* ---------------------------------------------------------------------
 * Errors
 * --------------------------------------------------------------------- */

sigjmp_buf *PG_exception_stack = NULL;
ErrorContextCallback *error_context_stack = NULL;
FuzzError	fuzz_error;

static int	error_level;

void
fuzz_fail(const char *fmt,...)
{
	va_list		ap;

	fprintf(stderr, "\n==== mtdpp fuzz finding: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	abort();
}

bool
errstart(int elevel, const char *domain)
{
	if (elevel < ERROR)
		return false;			/* NOTICE and below: nobody reads them here */
	error_level = elevel;
	memset(&fuzz_error, 0, sizeof(fuzz_error));
	fuzz_error.sqlerrcode = ERRCODE_INTERNAL_ERROR;	/* elog's */
	return true;
}

bool
errstart_cold(int elevel, const char *domain)
{
	return errstart(elevel, domain);
}

void
errfinish(const char *filename, int lineno, const char *funcname)
{
	fuzz_error.filename = filename;
	fuzz_error.lineno = lineno;
	if (error_level > ERROR)
		fuzz_fail("FATAL or PANIC at %s:%d: %s", filename, lineno, fuzz_error.message);
	if (PG_exception_stack == NULL)
		fuzz_fail("ERROR outside fuzz_try at %s:%d: %s", filename, lineno, fuzz_error.message);
	siglongjmp(*PG_exception_stack, 1);
}

void
pg_re_throw(void)
{
	if (PG_exception_stack == NULL)
		fuzz_fail("error re-thrown outside fuzz_try: %s", fuzz_error.message);
	siglongjmp(*PG_exception_stack, 1);
}

int
errcode(int sqlerrcode)
{
	fuzz_error.sqlerrcode = sqlerrcode;
	return 0;
}

static void
set_message(const char *fmt, va_list ap)
{
	vsnprintf(fuzz_error.message, sizeof(fuzz_error.message), fmt, ap);
}

int
errmsg(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	set_message(fmt, ap);
	va_end(ap);
	return 0;
}

int
errmsg_internal(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	set_message(fmt, ap);
	va_end(ap);
	return 0;
}

int
errdetail(const char *fmt,...)
{
	return 0;
}

int
errhint(const char *fmt,...)
{
	return 0;
}

bool
fuzz_try(void (*fn) (void *), void *arg)
{
	sigjmp_buf	jb;
	sigjmp_buf *volatile save = PG_exception_stack;

	if (sigsetjmp(jb, 0) == 0)
	{
		PG_exception_stack = &jb;
		fn(arg);
		PG_exception_stack = save;
		return true;
	}
	PG_exception_stack = save;
	return false;
}

/* ---------------------------------------------------------------------
 * Per-input contexts and values
 * --------------------------------------------------------------------- */

Node		fuzz_agg_node = {T_Invalid};
MemoryContext fuzz_agg_context = NULL;
static MemoryContext input_context = NULL;

void
fuzz_input_begin(void)
{
	if (input_context == NULL)
	{
		input_context = AllocSetContextCreate(TopMemoryContext, "fuzz input", ALLOCSET_DEFAULT_SIZES);
		fuzz_agg_context = AllocSetContextCreate(TopMemoryContext, "fuzz aggregate", ALLOCSET_DEFAULT_SIZES);
	}
	CurrentMemoryContext = input_context;
	InterruptPending = false;
}

void
fuzz_input_end(void)
{
	CurrentMemoryContext = TopMemoryContext;
	MemoryContextReset(input_context);
	MemoryContextReset(fuzz_agg_context);
}

bytea *
fuzz_bytea(const uint8 *data, size_t size)
{
	bytea	   *b = palloc(VARHDRSZ + size);

	SET_VARSIZE(b, VARHDRSZ + size);
	if (size > 0)
		memcpy(VARDATA(b), data, size);
	return b;
}

/* ---------------------------------------------------------------------
 * fmgr, aggregates, interrupts, settings
 * --------------------------------------------------------------------- */

struct varlena *
pg_detoast_datum(struct varlena *datum)
{
	if (VARATT_IS_EXTENDED(datum))
		fuzz_fail("a harness passed a toasted value");
	return datum;
}

struct varlena *
pg_detoast_datum_packed(struct varlena *datum)
{
	if (VARATT_IS_COMPRESSED(datum) || VARATT_IS_EXTERNAL(datum))
		fuzz_fail("a harness passed a toasted value");
	return datum;
}

int
AggCheckCallContext(FunctionCallInfo fcinfo, MemoryContext *aggcontext)
{
	if (fcinfo->context == &fuzz_agg_node)
	{
		if (aggcontext)
			*aggcontext = fuzz_agg_context;
		return 1;				/* AGG_CONTEXT_AGGREGATE */
	}
	if (aggcontext)
		*aggcontext = NULL;
	return 0;
}

volatile sig_atomic_t InterruptPending = false;

void
ProcessInterrupts(void)
{
}

int			maintenance_work_mem = 65536;	/* kB: PostgreSQL's default */
int			max_parallel_workers_per_gather = 2;	/* PostgreSQL's defaults */
bool		parallel_leader_participation = true;
int			ParallelWorkerNumber = -1;	/* not a parallel worker */
int			max_parallel_maintenance_workers = 0;	/* no helper thread */

/* not reached by any harness: reaching them is a finding */

#if PG_VERSION_NUM >= 160000
/* PostgreSQL 16 made planstate_tree_walker a macro over this function */
bool
planstate_tree_walker_impl(struct PlanState *planstate,
						   planstate_tree_walker_callback walker, void *context)
#else
bool
planstate_tree_walker(struct PlanState *planstate, bool (*walker) (), void *context)
#endif
{
	fuzz_fail("planstate_tree_walker called");
}

void *
dsa_get_address(dsa_area *area, dsa_pointer dp)
{
	fuzz_fail("dsa_get_address called");
}

/* the settings are defined when the library loads, which no harness does */
void
DefineCustomIntVariable(const char *name, const char *short_desc, const char *long_desc,
						int *valueAddr, int bootValue, int minValue, int maxValue,
						GucContext context, int flags, GucIntCheckHook check_hook,
						GucIntAssignHook assign_hook, GucShowHook show_hook)
{
	fuzz_fail("DefineCustomIntVariable called");
}

dsa_pointer
dsa_allocate_extended(dsa_area *area, size_t size, int flags)
{
	fuzz_fail("dsa_allocate_extended called");
}

void
dsa_free(dsa_area *area, dsa_pointer dp)
{
	fuzz_fail("dsa_free called");
}

/* ---------------------------------------------------------------------
 * Sorting, strings
 * --------------------------------------------------------------------- */

void
pg_qsort(void *base, size_t nel, size_t elsize, int (*cmp) (const void *, const void *))
{
	qsort(base, nel, elsize, cmp);
}

char *
psprintf(const char *fmt,...)
{
	va_list		ap;
	int			n;
	char	   *s;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	s = palloc(n + 1);
	va_start(ap, fmt);
	vsnprintf(s, n + 1, fmt, ap);
	va_end(ap);
	return s;
}

void
initStringInfo(StringInfo str)
{
	str->maxlen = 1024;
	str->data = palloc(str->maxlen);
	str->len = 0;
	str->data[0] = '\0';
	str->cursor = 0;
}

void
enlargeStringInfo(StringInfo str, int needed)
{
	int			newlen;

	if (needed < 0 || ((Size) needed) >= (MaxAllocSize - (Size) str->len))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("out of memory"),
				 errdetail("Cannot enlarge string buffer containing %d bytes by %d more bytes.",
						   str->len, needed)));
	needed += str->len + 1;
	if (needed <= str->maxlen)
		return;
	newlen = 2 * str->maxlen;
	while (needed > newlen)
		newlen = 2 * newlen;
	if (newlen > (int) MaxAllocSize)
		newlen = (int) MaxAllocSize;
	str->data = repalloc(str->data, newlen);
	str->maxlen = newlen;
}

void
#if PG_VERSION_NUM >= 160000
appendBinaryStringInfo(StringInfo str, const void *data, int datalen)	/* 16: void */
#else
appendBinaryStringInfo(StringInfo str, const char *data, int datalen)
#endif
{
	enlargeStringInfo(str, datalen);
	memcpy(str->data + str->len, data, datalen);
	str->len += datalen;
	str->data[str->len] = '\0';
}

void
appendStringInfoString(StringInfo str, const char *s)
{
	appendBinaryStringInfo(str, s, strlen(s));
}

void
appendStringInfo(StringInfo str, const char *fmt,...)
{
	for (;;)
	{
		va_list		args;
		int			avail = str->maxlen - str->len,
					n;

		va_start(args, fmt);
		n = vsnprintf(str->data + str->len, avail, fmt, args);
		va_end(args);
		if (n >= 0 && n < avail)
		{
			str->len += n;
			return;
		}
		enlargeStringInfo(str, n >= 0 ? n : str->maxlen);
	}
}

/* ---------------------------------------------------------------------
 * Hash tables: what lines.c uses of dynahash (fixed-size binary keys)
 * --------------------------------------------------------------------- */

struct HTAB
{
	MemoryContext cxt;			/* holds the table and its entries */
	Size		keysize;
	Size		entrysize;
	long		n;
	uint32		n_buckets;
	HASHELEMENT **buckets;
	HASHELEMENT *freelist;
};

#define ELEMENT_KEY(e) ((char *) (e) + MAXALIGN(sizeof(HASHELEMENT)))

static uint32
hash_bytes_fnv(const void *key, Size len)
{
	const unsigned char *p = key;
	uint32		h = 2166136261u;

	for (Size i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h ^ (h >> 15);
}

HTAB *
hash_create(const char *tabname, long nelem, const HASHCTL *info, int flags)
{
	MemoryContext parent = (flags & HASH_CONTEXT) ? info->hcxt : TopMemoryContext;
	MemoryContext cxt = AllocSetContextCreateInternal(parent, "fuzz hash table", ALLOCSET_DEFAULT_SIZES);
	HTAB	   *t;

	if (!(flags & HASH_ELEM) || !(flags & HASH_BLOBS) ||
		(flags & ~(HASH_ELEM | HASH_BLOBS | HASH_CONTEXT)))
		fuzz_fail("hash_create with flags %x: only HASH_ELEM | HASH_BLOBS [| HASH_CONTEXT] are provided", flags);
	t = MemoryContextAllocZero(cxt, sizeof(HTAB));
	t->cxt = cxt;
	t->keysize = info->keysize;
	t->entrysize = info->entrysize;
	t->n_buckets = 64;
	t->buckets = MemoryContextAllocZero(cxt, sizeof(HASHELEMENT *) * t->n_buckets);
	return t;
}

void
hash_destroy(HTAB *hashp)
{
	if (hashp)
		MemoryContextDelete(hashp->cxt);
}

static void
hash_grow(HTAB *t)
{
	uint32		nb = t->n_buckets * 2;
	HASHELEMENT **b = MemoryContextAllocZero(t->cxt, sizeof(HASHELEMENT *) * nb);

	for (uint32 i = 0; i < t->n_buckets; i++)
	{
		HASHELEMENT *e = t->buckets[i];

		while (e)
		{
			HASHELEMENT *next = e->link;
			uint32		k = e->hashvalue & (nb - 1);

			e->link = b[k];
			b[k] = e;
			e = next;
		}
	}
	pfree(t->buckets);
	t->buckets = b;
	t->n_buckets = nb;
}

void *
hash_search(HTAB *t, const void *key, HASHACTION action, bool *foundPtr)
{
	uint32		hv = hash_bytes_fnv(key, t->keysize);
	HASHELEMENT **prev = &t->buckets[hv & (t->n_buckets - 1)];
	HASHELEMENT *e;

	for (e = *prev; e; prev = &e->link, e = e->link)
		if (e->hashvalue == hv && memcmp(ELEMENT_KEY(e), key, t->keysize) == 0)
			break;
	if (foundPtr)
		*foundPtr = (e != NULL);
	switch (action)
	{
		case HASH_FIND:
			return e ? ELEMENT_KEY(e) : NULL;
		case HASH_REMOVE:
			if (e == NULL)
				return NULL;
			*prev = e->link;
			e->link = t->freelist;
			t->freelist = e;
			t->n--;
			return ELEMENT_KEY(e);
		case HASH_ENTER:
		case HASH_ENTER_NULL:
			if (e)
				return ELEMENT_KEY(e);
			if (t->freelist)
			{
				e = t->freelist;
				t->freelist = e->link;
			}
			else
				e = MemoryContextAlloc(t->cxt, MAXALIGN(sizeof(HASHELEMENT)) + t->entrysize);
			e->hashvalue = hv;
			memcpy(ELEMENT_KEY(e), key, t->keysize);
			e->link = t->buckets[hv & (t->n_buckets - 1)];
			t->buckets[hv & (t->n_buckets - 1)] = e;
			if (++t->n > (long) t->n_buckets * 2)
				hash_grow(t);
			return ELEMENT_KEY(e);
	}
	return NULL;
}

long
hash_get_num_entries(HTAB *hashp)
{
	return hashp->n;
}

void
hash_seq_init(HASH_SEQ_STATUS *status, HTAB *hashp)
{
	status->hashp = hashp;
	status->curBucket = 0;
	status->curEntry = NULL;
}

void *
hash_seq_search(HASH_SEQ_STATUS *status)
{
	HTAB	   *t = status->hashp;

	if (status->curEntry)
		status->curEntry = status->curEntry->link;
	while (status->curEntry == NULL)
	{
		if (status->curBucket >= t->n_buckets)
			return NULL;
		status->curEntry = t->buckets[status->curBucket++];
	}
	return ELEMENT_KEY(status->curEntry);
}

void
hash_seq_term(HASH_SEQ_STATUS *status)
{
}
