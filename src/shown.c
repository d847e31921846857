/*
 * shown.c
 *		A user's text (a name, a key, a value) or number as an error message
 *		quotes it.
 *		Used by every file that reports bad input, so it depends on nothing
 *		of the extension's.
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

#include "shown.h"


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

/*
 * A number of jsonb as an error shows it: as written when short, else in
 * scientific notation (1e+400, not 401 digits).
 */
char *
mtdpp_numeric_shown(Numeric num)
{
	char	   *s = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(num)));
	char	   *e,
			   *z;

	if (strlen(s) <= 24)
		return s;
	s = numeric_out_sci(num, 6);
	/* the mantissa's trailing zeros, and its point if nothing follows it */
	e = strchr(s, 'e');
	if (e == NULL || strchr(s, '.') == NULL)
		return s;
	z = e;
	while (z[-1] == '0')
		z--;
	if (z[-1] == '.')
		z--;
	memmove(z, e, strlen(e) + 1);
	return s;
}
