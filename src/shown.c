/*
 * shown.c
 *		A user's text (a name, a key, a value) as an error message quotes it.
 *		Used by every file that reports bad input, so it depends on nothing
 *		of the extension's.
 */
#include "postgres.h"

#include "mb/pg_wchar.h"

#include "model.h"

/*
 * S as an error quotes it: its first MTDPP_SHOWN_MAX bytes (cut between
 * characters) and "..." when it is longer, so that a name or a value of
 * 100,000 characters does not fill the message and the log.
 */
const char *
mtdpp_shown(const char *s)
{
	int			len = strlen(s);

	if (len <= MTDPP_SHOWN_MAX)
		return s;
	return psprintf("%.*s...", pg_mbcliplen(s, len, MTDPP_SHOWN_MAX), s);
}
