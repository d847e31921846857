/*
 * numeric/radix_sort.h
 *		An in-place most-significant-digit radix sort on a 64-bit key,
 *		instantiated per element type like PostgreSQL's lib/sort_template.h.
 *
 * Each pass splits the elements by the top 8 bits in which their keys still
 * differ, moving every element once (cycle by cycle, no second array), then
 * sorts each part the same way.  Parts of at most RS_SMALL elements, or
 * whose keys are all equal, go to RS_FINISH, which must sort them by the
 * full order (the key may be only its first part).
 *
 * Define before including:
 *	RS_SORT			the function's name
 *	RS_ELEMENT		the element type
 *	RS_KEY(p)		the key of the element at p (uint64, ascending)
 *	RS_FINISH(a, n)	sorts a small or equal-keyed part
 *	RS_SMALL		the size below which parts go to RS_FINISH
 *	RS_QUIET		(optional) never checks for interrupts: for a helper thread
 */

static void
RS_SORT(RS_ELEMENT *a, int64 n)
{
	int64		count[256],
				next[256],
				end[256];
	uint64		first,
				diff = 0;
	int			bits,
				shift;

	if (n <= RS_SMALL)
	{
		RS_FINISH(a, n);
		return;
	}
#ifndef RS_QUIET
	if (n > 65536)
		CHECK_FOR_INTERRUPTS();
#endif

	/* the bits in which the keys differ: the digit is the top 8 of them */
	first = RS_KEY(&a[0]);
	for (int64 i = 1; i < n; i++)
		diff |= RS_KEY(&a[i]) ^ first;
	if (diff == 0)
	{
		RS_FINISH(a, n);
		return;
	}
	bits = 64 - __builtin_clzll(diff);
	shift = Max(bits - 8, 0);

	memset(count, 0, sizeof(count));
	for (int64 i = 0; i < n; i++)
		count[(RS_KEY(&a[i]) >> shift) & 0xff]++;
	for (int d = 0, at = 0; d < 256; d++)
	{
		next[d] = at;
		at += count[d];
		end[d] = at;
	}

	/* each element goes straight to its part, displacing one not yet placed */
	for (int d = 0; d < 256; d++)
		while (next[d] < end[d])
		{
			RS_ELEMENT	x = a[next[d]];
			int			xd = (RS_KEY(&x) >> shift) & 0xff;

			while (xd != d)
			{
				RS_ELEMENT	y = a[next[xd]];

				a[next[xd]++] = x;
				x = y;
				xd = (RS_KEY(&x) >> shift) & 0xff;
			}
			a[next[d]++] = x;
		}

	for (int d = 0, at = 0; d < 256; at += count[d], d++)
		if (count[d] > 1)
			RS_SORT(a + at, count[d]);
}

#undef RS_SORT
#undef RS_ELEMENT
#undef RS_KEY
#undef RS_FINISH
#undef RS_SMALL
#undef RS_QUIET
