/*
 * train/source.c
 *		What mtdpp_train reads its order lines from: a table or view, or a
 *		query.
 *
 * A query is one SELECT (VALUES, TABLE, WITH ... SELECT) that reads and
 * writes nothing else: it is parsed here first, and refused when it is
 * anything else (several statements, SELECT INTO, FOR UPDATE, a WITH that
 * changes rows).  mtdpp_train then reads it as a subquery, in place of a
 * table, through SPI as the calling role, with that role's privileges and
 * the row-level security it is under, as a view with security_invoker would
 * be read: mtdpp_train is no SECURITY DEFINER function, so no query runs
 * with more rights than its caller has.  Its columns are those a LIMIT 0
 * run of it answers (which calls nothing per row), read as a table's would
 * be.
 *
 * A training reads its source several times (the item keys, the lines the
 * aggregate fits, the test baskets it holds out, the latest baskets by a
 * column, the active version's test under a promotion rule): a query is
 * run once, into a temporary table of the columns the training reads, which
 * every later statement reads instead, so that a query calling volatile
 * functions (random(), now(), nextval()) gives one set of lines, and is
 * dropped when the training ends (or with its transaction).  A temporary
 * table holds its rows in temp_buffers and on disk, not in memory; it is
 * made by the calling role, which needs the TEMPORARY privilege on the
 * database (PUBLIC has it by default), and parallel workers cannot read it,
 * so the fit over a query source is read by one process (a table or view
 * is read as before, by parallel workers where the plan says so).
 */
#include "postgres.h"

#include <ctype.h>

#include "access/tupdesc.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "parser/parser.h"
#include "parser/scansup.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/snapmgr.h"

#include "pg_compat.h"
#include "shown.h"
#include "train/train.h"

/*
 * Whether TEXT, mtdpp_train's source, is a query rather than the name of a
 * table or view: its first word, past blanks, comments and opening
 * parentheses, is SELECT, WITH, VALUES or TABLE (reserved words, which no
 * relation is named unquoted).
 */
bool
mtdpp_source_is_query(const char *text)
{
	const char *p = text;
	const char *words[] = {"select", "with", "values", "table"};

	for (;;)
	{
		while (isspace((unsigned char) *p) || *p == '(')
			p++;
		if (p[0] == '-' && p[1] == '-')
		{
			while (*p && *p != '\n')
				p++;
		}
		else if (p[0] == '/' && p[1] == '*')
		{
			const char *end = strstr(p + 2, "*/");

			if (end == NULL)
				return false;
			p = end + 2;
		}
		else
			break;
	}
	for (int w = 0; w < lengthof(words); w++)
	{
		size_t		n = strlen(words[w]);

		if (pg_strncasecmp(p, words[w], n) == 0 &&
			!(isalnum((unsigned char) p[n]) || p[n] == '_' || p[n] == '$' || IS_HIGHBIT_SET(p[n])))
			return true;
	}
	return false;
}

static void
refuse_query(const char *why, const char *hint)
{
	ereport(ERROR,
			(errcode(ERRCODE_WRONG_OBJECT_TYPE),
			 errmsg("the source query of mtdpp_train %s", why),
			 errdetail("A source is a table, a view, or one query that only reads: SELECT, VALUES, TABLE or WITH ... SELECT."),
			 errhint("%s", hint)));
}

/*
 * The one read-only SELECT of TEXT, without its closing semicolon; an error
 * for anything else.
 */
static char *
checked_query(const char *text)
{
	List	   *stmts = raw_parser(text, RAW_PARSE_DEFAULT);
	RawStmt    *raw;
	SelectStmt *sel;
	ListCell   *lc;
	const char *start;
	int			len;

	if (list_length(stmts) != 1)
		refuse_query(psprintf("holds %d statements", list_length(stmts)),
					 "Pass one query, without a semicolon between statements.");
	raw = linitial_node(RawStmt, stmts);
	if (!IsA(raw->stmt, SelectStmt))
		refuse_query("is not a SELECT", "Write the query as a SELECT of the order lines.");
	sel = (SelectStmt *) raw->stmt;
	if (sel->intoClause != NULL)
		refuse_query("creates a table (SELECT INTO)", "Leave out INTO: mtdpp_train reads the rows itself.");
	if (sel->lockingClause != NIL)
		refuse_query("locks rows (FOR UPDATE or FOR SHARE)", "Leave out the locking clause: the lines are only read.");
	if (sel->withClause != NULL)
		foreach(lc, sel->withClause->ctes)
		{
			CommonTableExpr *cte = lfirst_node(CommonTableExpr, lc);

			if (!IsA(cte->ctequery, SelectStmt))
				refuse_query(psprintf("changes rows (WITH %s AS (... %s ...))", mtdpp_shown(cte->ctename),
									  IsA(cte->ctequery, InsertStmt) ? "INSERT" :
									  IsA(cte->ctequery, UpdateStmt) ? "UPDATE" :
									  IsA(cte->ctequery, DeleteStmt) ? "DELETE" : "a command"),
							 "Change the rows in a statement of its own, then train.");
		}
	/* from its first character on, as every server's parser places it */
	start = text + raw->stmt_location;
	len = raw->stmt_len > 0 ? raw->stmt_len : (int) strlen(start);
	while (len > 0 && scanner_isspace(*start))
		start++, len--;
	return pnstrdup(start, len);
}

/*
 * SRC for the relation RELID, or for QUERY (when RELID is invalid): for a
 * query, it is checked and its columns read, as the calling role.
 */
void
mtdpp_source_open(TrainSource *src, Oid relid, const char *query)
{
	MemoryContext caller = CurrentMemoryContext;
	char	   *sql;

	memset(src, 0, sizeof(*src));
	src->relid = relid;
	if (OidIsValid(relid))
	{
		src->from = psprintf("%s AS l", mtdpp_qualified_relation(relid));
		src->shown = get_rel_name(relid);
		return;
	}
	src->query = checked_query(query);
	/* a line break before the parenthesis: the query may end in a -- comment */
	src->from = psprintf("(%s\n) AS l", src->query);
	src->shown = "the source query";
	sql = psprintf("SELECT * FROM %s LIMIT 0", src->from);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute(sql, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not run %s", sql);
	{
		MemoryContext spi = MemoryContextSwitchTo(caller);

		src->desc = CreateTupleDescCopy(SPI_tuptable->tupdesc);
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();
}

/*
 * Whether SRC has column COL; its type into *TYPE, its collation into
 * *COLLATION (either may be NULL).
 */
bool
mtdpp_source_column(const TrainSource *src, const char *col, Oid *type, Oid *collation)
{
	Oid			t = InvalidOid,
				c = InvalidOid;

	if (OidIsValid(src->relid))
	{
		AttrNumber	att = get_attnum(src->relid, col);
		int32		typmod;

		if (att == InvalidAttrNumber)
			return false;
		get_atttypetypmodcoll(src->relid, att, &t, &typmod, &c);
	}
	else
	{
		int			found = 0;

		for (int i = 0; i < src->desc->natts; i++)
		{
			Form_pg_attribute a = TupleDescAttr(src->desc, i);

			if (!a->attisdropped && strcmp(NameStr(a->attname), col) == 0)
			{
				t = a->atttypid;
				c = a->attcollation;
				found++;
			}
		}
		if (found > 1)
			ereport(ERROR,
					(errcode(ERRCODE_AMBIGUOUS_COLUMN),
					 errmsg("the source query has %d columns named \"%s\"", found, mtdpp_shown(col)),
					 errhint("Name each column of the query once, with AS.")));
		if (found == 0)
			return false;
	}
	if (type)
		*type = t;
	if (collation)
		*collation = c;
	return true;
}

/* what the version records as its source: the relation's name, or the query */
const char *
mtdpp_source_recorded(const TrainSource *src)
{
	if (src->query == NULL)
		return DatumGetCString(DirectFunctionCall1(regclassout, ObjectIdGetDatum(src->relid)));
	return src->query;
}

/*
 * Runs the query of SRC once, into a temporary table of its NCOLS columns
 * COLS (NULL ones left out, as are those the query lacks: the training
 * then names them in its error), which SRC then reads as its relation.
 * Nothing for a table or view.
 */
void
mtdpp_source_materialize(TrainSource *src, const char **cols, int ncols)
{
	static int	made = 0;
	StringInfoData sql;
	char	   *table;
	int			taken = 0;

	if (src->query == NULL)
		return;
	if (mtdpp_database_aclcheck(MyDatabaseId, GetUserId(), ACL_CREATE_TEMP) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("role \"%s\" may not create temporary tables, which training from a query needs",
						GetUserNameFromId(GetUserId(), false)),
				 errdetail("The query is run once, into a temporary table that the training reads, so that every statement of the training reads the same lines."),
				 errhint("GRANT TEMPORARY ON DATABASE %s TO %s, or train from a view of the query.",
						 quote_identifier(get_database_name(MyDatabaseId)),
						 quote_identifier(GetUserNameFromId(GetUserId(), false)))));
	table = psprintf("mtdpp_train_source_%d", ++made);
	initStringInfo(&sql);
	appendStringInfo(&sql, "CREATE TEMPORARY TABLE %s AS SELECT ", quote_identifier(table));
	for (int i = 0; i < ncols; i++)
	{
		bool		again = false;

		/* each column once (test_by may name the order or position column) */
		for (int j = 0; j < i; j++)
			again = again || (cols[j] != NULL && cols[i] != NULL && strcmp(cols[i], cols[j]) == 0);
		if (cols[i] == NULL || again || !mtdpp_source_column(src, cols[i], NULL, NULL))
			continue;
		appendStringInfo(&sql, "%sl.%s", taken++ > 0 ? ", " : "", quote_identifier(cols[i]));
	}
	appendStringInfo(&sql, " FROM %s", src->from);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute(sql.data, false, 0) < 0)
		elog(ERROR, "could not run %s", sql.data);
	SPI_finish();
	/*
	 * The training's reads are read-only, under the active snapshot, which
	 * was taken before the table was filled: they read under a copy of it
	 * that sees the rows, until mtdpp_source_close.
	 */
	CommandCounterIncrement();
	PushCopiedSnapshot(ActiveSnapshotSet() ? GetActiveSnapshot() : GetTransactionSnapshot());
	UpdateActiveSnapshotCommandId();
	src->relid = get_relname_relid(table, LookupCreationNamespace("pg_temp"));
	if (!OidIsValid(src->relid))
		elog(ERROR, "could not find the temporary table %s", table);
	src->from = psprintf("pg_temp.%s AS l", quote_identifier(table));
}

/* Drops the temporary table of SRC's query, if any. */
void
mtdpp_source_close(TrainSource *src)
{
	if (src->query == NULL || !OidIsValid(src->relid))
		return;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute(psprintf("DROP TABLE pg_temp.%s", quote_identifier(get_rel_name(src->relid))),
					false, 0) < 0)
		elog(ERROR, "could not drop the temporary table of the source query");
	SPI_finish();
	PopActiveSnapshot();
	src->relid = InvalidOid;
}
