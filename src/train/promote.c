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
 *
 * mtdpp_activate (activate.c) applies a rule only when its promote
 * argument names one: an activation by hand, a rollback above all, is the
 * DBA's decision, which the database's setting for scheduled trainings does
 * not overrule.  Its rule compares the version to activate with the active
 * one on the baskets the version's training held out and kept (kept.c),
 * both measured anew, at any cut-off; the decision is recorded with the
 * version as a training's is, with "decided_by": "mtdpp_activate".
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

/* the greatest K of a rule of mtdpp_activate, as mtdpp_evaluate_at takes */
#define ACTIVATE_MAX_K	100000

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
 * Records the decision of RULE (figure METRIC) on version MODEL_ID (number
 * VERSION) of NAME, whose VALUE is compared with ACTIVE_VALUE, that of
 * active version ACTIVE_VERSION (model ACTIVE_ID, 0 for none), on BASKETS
 * baskets; activates it if it is better, else says why.  BY_ACTIVATE: the
 * decision is mtdpp_activate's, on the baskets the version kept.  Returns
 * the model_id of the active version.
 */
static int
decide(const char *name, int model_id, int version, const char *rule, const char *metric,
	   double value, int active_id, int active_version, double active_value, int64 baskets,
	   bool by_activate)
{
	bool		promoted = active_id == 0 || value > active_value;
	StringInfoData j;

	initStringInfo(&j);
	appendStringInfoString(&j, "{\"rule\": ");
	escape_json(&j, rule);
	appendStringInfo(&j, ", \"promoted\": %s, \"metric\": \"%s\", ",
					 promoted ? "true" : "false", metric);
	if (active_id != 0 || !by_activate)
		appendStringInfo(&j, "\"value\": %.4f", value);
	else
		appendStringInfoString(&j, "\"value\": null");
	if (active_id != 0)
		appendStringInfo(&j, ", \"active_version\": %d, \"active_value\": %.4f, \"baskets\": " INT64_FORMAT,
						 active_version, active_value, baskets);
	else
		appendStringInfoString(&j, ", \"active_version\": null");
	if (by_activate)
		appendStringInfoString(&j, ", \"decided_by\": \"mtdpp_activate\"");
	appendStringInfoChar(&j, '}');
	mtdpp_store_promotion(model_id, j.data);
	if (promoted)
	{
		mtdpp_activate_version(name, model_id);
		return model_id;
	}
	if (by_activate)
		ereport(NOTICE,
				(errmsg("version %d of model \"%s\" is not activated: its %s on the %lld baskets its training held out, %.4f, is not above that of active version %d, %.4f",
						version, mtdpp_shown(name), metric, (long long) baskets, value, active_version, active_value),
				 errdetail("Promotion rule \"%s\" (promote of mtdpp_activate); active version %d stays.", rule, active_version),
				 errhint("mtdpp_activate('%s', %d, promote => 'always') activates it all the same.", mtdpp_shown(name), version)));
	else
		ereport(NOTICE,
				(errmsg("version %d of model \"%s\" is not activated: its %s on the %lld held-out baskets, %.4f, is not above that of active version %d, %.4f",
						version, mtdpp_shown(name), metric, (long long) baskets, value, active_version, active_value),
				 errdetail("Promotion rule \"%s\".", rule),
				 errhint("mtdpp_activate('%s', %d) activates it all the same.", mtdpp_shown(name), version)));
	return active_id;
}

/*
 * The active version of NAME and the number of version MODEL_ID, read under
 * a snapshot that sees what this transaction wrote: *ACTIVE_ID (0 for
 * none), *ACTIVE_VERSION, *VERSION, and whether MODEL_ID kept held-out
 * baskets into *KEPT (when asked).  Inside an SPI connection.
 */
static void
read_versions(const char *name, int model_id, int *active_id, int *active_version, int *version,
			  bool *kept)
{
	bool		isnull;

	CommandCounterIncrement();
	PushActiveSnapshot(GetTransactionSnapshot());
	if (SPI_execute_with_args(psprintf("SELECT (SELECT a.model_id FROM mtdpp.models a WHERE a.name OPERATOR(pg_catalog.=) $1 AND a.active), "
									   "(SELECT a.version FROM mtdpp.models a WHERE a.name OPERATOR(pg_catalog.=) $1 AND a.active), "
									   "(SELECT n.version FROM mtdpp.models n WHERE n.model_id OPERATOR(pg_catalog.=) $2), "
									   "(SELECT n.%s IS NOT NULL FROM mtdpp.models n WHERE n.model_id OPERATOR(pg_catalog.=) $2)",
									   kept ? "test_baskets" : "model_id"),
							  2, (Oid[]) {TEXTOID, INT4OID},
							  (Datum[]) {CStringGetTextDatum(name), Int32GetDatum(model_id)},
							  NULL, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read the active version of \"%s\"", name);
	*active_id = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (isnull)
		*active_id = 0;
	else
		*active_version = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	*version = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull));
	if (kept)
		*kept = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4, &isnull));
	PopActiveSnapshot();
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

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	read_versions(name, model_id, &active_id, &active_version, &version, NULL);
	if (active_id != 0)
	{
		int			looked_up;
		const char *active_name;
		MtdppModel *active = mtdpp_lookup_model(name, &looked_up, &active_name);

		active_value = mtdpp_held_out_figure(h, active, mtdpp_model_keys(active), metric, &baskets);
	}
	SPI_finish();
	(void) decide(name, model_id, version, rule, metric, value, active_id, active_version,
				  active_value, baskets, false);
}

/*
 * The rule of mtdpp_activate: its argument ARG, promote; 'always' when it
 * is NULL or left out (a database not yet updated): an activation by hand,
 * such as a rollback, follows no rule unless it names one, whatever the
 * setting mtdpp.promote says.  NULL for 'always'.
 */
const char *
mtdpp_activation_rule(FunctionCallInfo fcinfo, int arg)
{
	char	   *rule;
	const char *metric;

	if (PG_NARGS() <= arg || PG_ARGISNULL(arg))
		return NULL;
	rule = text_to_cstring(PG_GETARG_TEXT_PP(arg));
	metric = rule_metric(rule);
	if (metric == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("promote must be a promotion rule, not \"%s\"", mtdpp_shown(rule)),
				 errhint(RULE_HINT)));
	if (strcmp(metric, "mpr") != 0 && metric[0] != '\0' &&
		atoi(strrchr(metric, '_') + 1) > ACTIVATE_MAX_K)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("promotion rule \"%s\" names a cut-off above %d", mtdpp_shown(rule), ACTIVATE_MAX_K),
				 errhint(RULE_HINT)));
	return metric[0] == '\0' ? NULL : rule;
}

/*
 * Applies RULE to version MODEL_ID of NAME, for mtdpp_activate (the name's
 * lock held): activates it if it is the active one's better on the baskets
 * its training held out and kept, both measured anew, or if NAME has no
 * active version; else the active version stays and a NOTICE says why.
 * Records the decision with the version; returns the model_id now active.
 */
int
mtdpp_promote_version(const char *name, int model_id, const char *rule)
{
	const char *metric = rule_metric(rule);
	int			active_id = 0,
				active_version = 0,
				version;
	double		value = 0.0,
				active_value = 0.0;
	int64		baskets = 0,
				own_baskets = 0;
	bool		kept;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	read_versions(name, model_id, &active_id, &active_version, &version, &kept);
	SPI_finish();
	if (active_id == model_id)
		return model_id;		/* already active: nothing to compare */
	if (active_id != 0 && !kept)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("version %d of model \"%s\" kept no held-out baskets to compare it with active version %d on",
						version, mtdpp_shown(name), active_version),
				 errdetail("Promotion rule \"%s\" compares the two versions on the baskets the training of the version to activate held out; it was trained without test_share or test_by, or before 0.6.0.", rule),
				 errhint("mtdpp_activate('%s', %d, promote => 'always') activates it without comparing.",
						 mtdpp_shown(name), version)));
	if (active_id != 0)
	{
		value = mtdpp_kept_figure(model_id, model_id, metric, &own_baskets);
		active_value = mtdpp_kept_figure(model_id, active_id, metric, &baskets);
	}
	return decide(name, model_id, version, rule, metric, value, active_id, active_version,
				  active_value, baskets, true);
}
