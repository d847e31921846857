/*
 * pg_runtime.h
 *		The few PostgreSQL backend services the fuzzed parsers need, outside
 *		a server (pg_runtime.c), and what the harnesses use of them.
 */
#ifndef MTDPP_PG_RUNTIME_H
#define MTDPP_PG_RUNTIME_H

#include "postgres.h"

#include "fmgr.h"
#include "nodes/nodes.h"

/* the last error raised (by ereport/elog at ERROR) */
typedef struct FuzzError
{
	int			sqlerrcode;
	const char *filename;
	int			lineno;
	char		message[512];
} FuzzError;

extern FuzzError fuzz_error;

/*
 * fcinfo->context of an aggregate support function called by a harness:
 * AggCheckCallContext accepts it and answers fuzz_agg_context.
 */
extern Node fuzz_agg_node;
extern MemoryContext fuzz_agg_context;

/*
 * Runs FN(ARG) with an error handler in place; returns true if it returned,
 * false if it raised an ERROR (then described by fuzz_error).
 */
extern bool fuzz_try(void (*fn) (void *), void *arg);

/* a fresh per-input memory context (current), and the aggregate's; then freed */
extern void fuzz_input_begin(void);
extern void fuzz_input_end(void);

/* reports a finding (a broken invariant) and aborts */
#if PG_VERSION_NUM >= 180000
/* PostgreSQL 18 replaced the postfix pg_attribute_noreturn() by pg_noreturn */
pg_noreturn extern void fuzz_fail(const char *fmt,...) pg_attribute_printf(1, 2);
#else
extern void fuzz_fail(const char *fmt,...) pg_attribute_printf(1, 2) pg_attribute_noreturn();
#endif

/* a varlena (4-byte header) holding DATA, in the current memory context */
extern bytea *fuzz_bytea(const uint8 *data, size_t size);

#endif							/* MTDPP_PG_RUNTIME_H */
