/*
 * train/promote.c
 *		Whether a new version becomes the active one: the promotion rule.
 *
 * 'always' (the default) activates every training, as before 0.6.0.
 * 'if_better:METRIC' activates a training only when its figure METRIC (mpr,
 * or precision_at_K, recall_at_K, ndcg_at_K for a K of test_k) on the
 * baskets it held out is above the active version's on the same baskets,
 * measured anew here; otherwise the active version stays and a NOTICE gives
 * both figures.  A name with no active version takes its new version.  The
 * rule is mtdpp_train's promote argument or, without it, the setting
 * mtdpp.promote, which a database or a role can carry (ALTER DATABASE ...
 * SET), so that a scheduled retraining needs no logic of its own.  What was
 * decided is recorded with the version (mtdpp.models.promotion).
 */
#include "postgres.h"

#include <ctype.h>

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/json.h"
#include "utils/snapmgr.h"

#include "shown.h"
#include "train/train.h"

#define RULE_HINT "A rule is 'always', or 'if_better:' and a metric of the test: 'if_better:mpr', 'if_better:precision_at_20', 'if_better:recall_at_10', 'if_better:ndcg_at_10'."

/* mtdpp.promote */
static char *promote_setting = NULL;

/* the metric of rule RULE, "" for 'always', NULL for no rule */
static const char *
rule_metric(const char *rule)
{
	const char *m;
	const char *prefixes[] = {"precision_at_", "recall_at_", "ndcg_at_"};

	if (strcmp(rule, "always") == 0)
		return "";
	if (strncmp(rule, "if_better:", 10) != 0)
		return NULL;
	m = rule + 10;
	if (strcmp(m, "mpr") == 0)
		return m;
	for (int p = 0; p < lengthof(prefixes); p++)
		if (strncmp(m, prefixes[p], strlen(prefixes[p])) == 0)
		{
			const char *d = m + strlen(prefixes[p]);

			if (*d < '1' || *d > '9' || strlen(d) > 6)
				return NULL;
			for (const char *c = d; *c; c++)
				if (!isdigit((unsigned char) *c))
					return NULL;
			return m;
		}
	return NULL;
}

static bool
check_promote(char **newval, void **extra, GucSource source)
{
	if (rule_metric(*newval) != NULL)
		return true;
	GUC_check_errdetail("\"%s\" is no promotion rule.", mtdpp_shown(*newval));
	GUC_check_errhint(RULE_HINT);
	return false;
}

void
mtdpp_promote_init(void)
{
	DefineCustomStringVariable("mtdpp.promote",
							   "When a training activates its new version.",
							   "'always', or 'if_better:METRIC': only when the new version is better than the active one on the baskets the training held out.",
							   &promote_setting, "always", PGC_USERSET, 0, check_promote, NULL, NULL);
}

/*
 * The promotion rule of a training: argument ARG of the call, or the
 * setting; checked against its test H.  NULL when the new version is to be
 * activated, or not, as ACTIVATE says, with no rule: 'always', or
 * activate => false.
 */
char *
mtdpp_promote_rule(FunctionCallInfo fcinfo, int arg, const HeldOut *h, bool activate)
{
	bool		given = !PG_ARGISNULL(arg);
	char	   *rule = given ? text_to_cstring(PG_GETARG_TEXT_PP(arg)) :
		pstrdup(promote_setting ? promote_setting : "always");
	const char *metric = rule_metric(rule);
	const char *from = given ? "promote" : "the setting mtdpp.promote";

	if (metric == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("promote must be a promotion rule, not \"%s\"", mtdpp_shown(rule)),
				 errhint(RULE_HINT)));
	if (metric[0] == '\0' || !activate)
		return NULL;
	if (h->share == 0.0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("promotion rule \"%s\" (%s) needs held-out test baskets", rule, from),
				 errdetail("The rule compares the new version with the active one on the baskets the training holds out."),
				 errhint("Hold out baskets with test_share => 0.1 (or test_by => '...'), or pass promote => 'always'.")));
	if (!mtdpp_held_out_has(h, metric))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("promotion rule \"%s\" (%s) names a cut-off the test does not measure", rule, from),
				 errhint("Measure it with test_k, such as test_k => ARRAY[%s], or name mpr or a metric at 5, 10 or 20.",
						 strrchr(metric, '_') + 1)));
	return rule;
}

/*
 * Applies RULE to version MODEL_ID of NAME, stored inactive, whose test H
 * measured: activates it if it is better than the active version on the
 * same baskets, or if there is none; else says why.  Records the decision.
 */
void
mtdpp_promote(const char *name, int model_id, const char *rule, const HeldOut *h)
{
	const char *metric = rule_metric(rule);
	double		value = mtdpp_held_out_own(h, metric),
				active_value = 0.0;
	int			active_id = 0,
				active_version = 0,
				version;
	int64		baskets = 0;
	bool		promoted,
				isnull;
	StringInfoData j;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* a snapshot that sees the version just stored */
	CommandCounterIncrement();
	PushActiveSnapshot(GetTransactionSnapshot());
	if (SPI_execute_with_args("SELECT (SELECT a.model_id FROM mtdpp.models a WHERE a.name OPERATOR(pg_catalog.=) $1 AND a.active), "
							  "(SELECT a.version FROM mtdpp.models a WHERE a.name OPERATOR(pg_catalog.=) $1 AND a.active), "
							  "(SELECT n.version FROM mtdpp.models n WHERE n.model_id OPERATOR(pg_catalog.=) $2)",
							  2, (Oid[]) {TEXTOID, INT4OID},
							  (Datum[]) {CStringGetTextDatum(name), Int32GetDatum(model_id)},
							  NULL, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read the active version of \"%s\"", name);
	active_id = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (isnull)
		active_id = 0;
	else
		active_version = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	version = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull));
	PopActiveSnapshot();
	if (active_id != 0)
	{
		int			looked_up;
		const char *active_name;
		MtdppModel *active = mtdpp_lookup_model(name, &looked_up, &active_name);

		active_value = mtdpp_held_out_figure(h, active, mtdpp_model_keys(active), metric, &baskets);
	}
	SPI_finish();

	promoted = active_id == 0 || value > active_value;
	initStringInfo(&j);
	appendStringInfoString(&j, "{\"rule\": ");
	escape_json(&j, rule);
	appendStringInfo(&j, ", \"promoted\": %s, \"metric\": \"%s\", \"value\": %.4f",
					 promoted ? "true" : "false", metric, value);
	if (active_id != 0)
		appendStringInfo(&j, ", \"active_version\": %d, \"active_value\": %.4f, \"baskets\": " INT64_FORMAT,
						 active_version, active_value, baskets);
	else
		appendStringInfoString(&j, ", \"active_version\": null");
	appendStringInfoChar(&j, '}');
	mtdpp_store_promotion(model_id, j.data);
	if (promoted)
	{
		mtdpp_activate_version(name, model_id);
		return;
	}
	ereport(NOTICE,
			(errmsg("version %d of model \"%s\" is not activated: its %s on the %lld held-out baskets, %.4f, is not above that of active version %d, %.4f",
					version, mtdpp_shown(name), metric, (long long) baskets, value, active_version, active_value),
			 errdetail("Promotion rule \"%s\".", rule),
			 errhint("mtdpp_activate('%s', %d) activates it all the same.", mtdpp_shown(name), version)));
}
