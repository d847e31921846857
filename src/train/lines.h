/*
 * train/lines.h
 *		Order lines as the training aggregate gathers them, the sorted runs
 *		parallel workers send, and the baskets both become.
 */
#ifndef MTDPP_LINES_H
#define MTDPP_LINES_H

#include "model/baskets.h"

/* one order line, as held when lines have positions or 64-bit order ids */
typedef struct OrderLine
{
	int64		order_id;
	int32		item_id;
	int32		position;
} OrderLine;

/*
 * Gathered lines.  Most order tables have 32-bit order ids and no positions:
 * such lines are held as one 64-bit key each, (order, item) with their sign
 * bits flipped so that the keys sort as the lines do (8 bytes a line).  The
 * first line that does not fit makes every line an OrderLine (16 bytes).
 */
typedef struct LineArray
{
	int64		n;
	int64		cap;
	bool		wide;			/* data holds OrderLines, else keys */
	bool		sorted;			/* in (order, item, position) order */
	bool		shuffled;		/* some order id came after a greater one */
	int64		last_order;		/* the last line's order id */
	void	   *data;
} LineArray;

/* sorted order lines, encoded by lines_to_run */
typedef struct Run
{
	int64		n;				/* lines */
	int64		len;			/* bytes */
	int32		lo,				/* least and greatest item id */
				hi;
	bool		positions;		/* some line has a position other than 0 */
	const uint8 *data;
} Run;

#define LINE_KEY_SIGN	UINT64CONST(0x8000000080000000)

static inline bool
line_fits_key(int64 order_id, int32 position)
{
	return position == 0 && order_id >= PG_INT32_MIN && order_id <= PG_INT32_MAX;
}

static inline uint64
line_key(int64 order_id, int32 item_id)
{
	return (((uint64) (uint32) order_id << 32) | (uint32) item_id) ^ LINE_KEY_SIGN;
}

extern void lines_add_slow(MemoryContext ctx, LineArray *la, int64 order_id, int32 item_id,
						   int32 position);

/* appends one line (the transition function's path: keys inline) */
static inline void
lines_add(MemoryContext ctx, LineArray *la, int64 order_id, int32 item_id, int32 position)
{
	if (!la->wide && la->n < la->cap && line_fits_key(order_id, position))
	{
		/* tables are often stored order by order: then no sort is needed */
		if (order_id < la->last_order && la->n > 0)
			la->shuffled = true;
		la->last_order = order_id;
		((uint64 *) la->data)[la->n++] = line_key(order_id, item_id);
		la->sorted = false;
	}
	else
		lines_add_slow(ctx, la, order_id, item_id, position);
}

extern void lines_append(MemoryContext ctx, LineArray *dst, const LineArray *src);
extern void lines_check_budget(int64 need, Size size);
extern Size lines_run_bound(const LineArray *la);
extern bool lines_to_run(LineArray *la, Run *run, uint8 *dest);
extern MtdppBaskets *lines_to_baskets(LineArray *la);
extern MtdppBaskets *runs_to_baskets(const Run *runs, int n_runs, int *threads);

#endif							/* MTDPP_LINES_H */
