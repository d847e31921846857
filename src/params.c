/*
 * params.c
 *		Hyperparameters: defaults, parsing from jsonb, and back to JSON.
 *
 * Every key is checked against a fixed list with its type and range, so a
 * typo is an error whose hint lists the valid keys rather than a setting
 * silently ignored.  The resolved values (defaults included) are stored with
 * the model, so a model row always says exactly how it was trained.
 */
#include "postgres.h"

#include <math.h>

#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "mtdpp.h"

#define VALID_KEYS "kind, rank, epochs, target, seed, verbose, learning_rate, lr_decay, " \
	"batch_size, negatives, positives, patience, l2, l2_bias, w, init_scale, optimizer, " \
	"momentum, validation_fraction, validation_baskets, validation_candidates, max_context, loss, " \
	"negative_power"

static const char *const kind_names[] = {
	"multitask", "multitask_nobias", "logistic", "lowrank", "itemknn", "popularity"
};

MtdppKind
mtdpp_kind_from_name(const char *name)
{
	for (int k = 0; k < lengthof(kind_names); k++)
		if (strcmp(name, kind_names[k]) == 0)
			return (MtdppKind) k;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown model kind \"%s\"", name),
			 errhint("Valid kinds are multitask, multitask_nobias, logistic, lowrank, itemknn and popularity.")));
	pg_unreachable();
}

const char *
mtdpp_kind_name(MtdppKind kind)
{
	return kind_names[kind];
}

MtdppTarget
mtdpp_target_from_name(const char *name)
{
	if (strcmp(name, "random") == 0)
		return MTDPP_TARGET_RANDOM;
	if (strcmp(name, "last") == 0)
		return MTDPP_TARGET_LAST;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown target \"%s\"", name),
			 errhint("Use target => 'random' (any item of a basket is held out) or 'last' (the last added, with a position column).")));
	pg_unreachable();
}

void
mtdpp_params_defaults(MtdppParams *p, MtdppKind kind)
{
	memset(p, 0, sizeof(*p));
	p->kind = kind;
	p->target = MTDPP_TARGET_RANDOM;
	p->optimizer = MTDPP_OPT_ADAM;
	p->rank = 32;
	p->epochs = 30;
	p->batch_size = 64;
	p->negatives = 5;
	p->positives = 4;
	p->patience = 4;
	p->max_context = 24;
	p->learning_rate = 0.01;
	p->lr_decay = 0.95;
	p->momentum = 0.9;
	p->l2 = 1e-5;
	p->l2_bias = 1e-5;
	p->log_w = log(0.01);
	p->init_scale = 0.1;
	p->validation_fraction = 0.1;
	p->validation_baskets = -1;	/* auto: see train.c */
	p->validation_candidates = 1000;
	p->seed = 0;
	p->verbose = false;
	/* the single-task logistic DPP keeps the paper's loss: see train.c */
	p->loss = (kind == MTDPP_LOGISTIC) ? MTDPP_LOSS_LOGISTIC : MTDPP_LOSS_SOFTMAX;
	if (kind == MTDPP_ITEMKNN || kind == MTDPP_POPULARITY)
		p->rank = 0;			/* no factors */
	/* the single-kernel kinds: best validation MPR on amazon_diaper */
	if (kind == MTDPP_LOWRANK)
		p->learning_rate = 0.005;
	if (kind == MTDPP_LOGISTIC)
	{
		p->learning_rate = 0.02;
		p->l2 = p->l2_bias = 1e-4;
	}
}

static void
bad_value(const char *key, const char *value, const char *expect)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("hyperparameter \"%s\" is %s, expected %s", key, value, expect)));
}

static double
number_value(const char *key, JsonbValue *v, double lo, double hi, const char *expect)
{
	double		d;

	if (v->type != jbvNumeric)
		bad_value(key, "not a number", expect);
	d = DatumGetFloat8(DirectFunctionCall1(numeric_float8, NumericGetDatum(v->val.numeric)));
	if (!(d >= lo && d <= hi))
	{
		char		buf[64];

		snprintf(buf, sizeof(buf), "%g", d);
		bad_value(key, buf, expect);
	}
	return d;
}

static int
int_value(const char *key, JsonbValue *v, int lo, int hi, const char *expect)
{
	double		d = number_value(key, v, lo, hi, expect);

	if (d != floor(d))
		bad_value(key, "not a whole number", expect);
	return (int) d;
}

static char *
string_value(const char *key, JsonbValue *v, const char *expect)
{
	if (v->type != jbvString)
		bad_value(key, "not a string", expect);
	return pnstrdup(v->val.string.val, v->val.string.len);
}

/* Overlays the keys of JSON (an object) on P, checking each. */
void
mtdpp_params_parse(MtdppParams *p, Jsonb *json)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	char	   *key = NULL;

	if (json == NULL)
		return;
	if (!JB_ROOT_IS_OBJECT(json))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("hyperparameters must be a jsonb object"),
				 errhint("For example '{\"learning_rate\": 0.01, \"negatives\": 5}'.")));

	it = JsonbIteratorInit(&json->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			key = pnstrdup(v.val.string.val, v.val.string.len);
			continue;
		}
		if (tok != WJB_VALUE)
			continue;
		if (v.type == jbvNull)
			continue;			/* null means "the default" */

		if (strcmp(key, "kind") == 0)
			p->kind = mtdpp_kind_from_name(string_value(key, &v, "a model kind"));
		else if (strcmp(key, "target") == 0)
			p->target = mtdpp_target_from_name(string_value(key, &v, "'random' or 'last'"));
		else if (strcmp(key, "optimizer") == 0)
		{
			char	   *s = string_value(key, &v, "'adam' or 'momentum'");

			if (strcmp(s, "adam") == 0)
				p->optimizer = MTDPP_OPT_ADAM;
			else if (strcmp(s, "momentum") == 0)
				p->optimizer = MTDPP_OPT_MOMENTUM;
			else
				bad_value(key, psprintf("\"%s\"", s), "'adam' or 'momentum'");
		}
		else if (strcmp(key, "loss") == 0)
		{
			char	   *s = string_value(key, &v, "'logistic' or 'softmax'");

			if (strcmp(s, "logistic") == 0)
				p->loss = MTDPP_LOSS_LOGISTIC;
			else if (strcmp(s, "softmax") == 0)
				p->loss = MTDPP_LOSS_SOFTMAX;
			else
				bad_value(key, psprintf("\"%s\"", s), "'logistic' or 'softmax'");
		}
		else if (strcmp(key, "rank") == 0)
		{
			p->rank = int_value(key, &v, 1, MTDPP_MAX_RANK, "an integer from 1 to 1024");
			if (p->kind == MTDPP_ITEMKNN || p->kind == MTDPP_POPULARITY)
				p->rank = 0;
		}
		else if (strcmp(key, "epochs") == 0)
			p->epochs = int_value(key, &v, 1, 100000, "an integer from 1 to 100000");
		else if (strcmp(key, "seed") == 0)
			p->seed = (int64) number_value(key, &v, -9.0e15, 9.0e15, "an integer");
		else if (strcmp(key, "verbose") == 0)
		{
			if (v.type != jbvBool)
				bad_value(key, "not a boolean", "true or false");
			p->verbose = v.val.boolean;
		}
		else if (strcmp(key, "learning_rate") == 0)
			p->learning_rate = number_value(key, &v, 1e-9, 10.0, "a number in (0, 10]");
		else if (strcmp(key, "lr_decay") == 0)
			p->lr_decay = number_value(key, &v, 0.01, 1.0, "a number in [0.01, 1]");
		else if (strcmp(key, "batch_size") == 0)
			p->batch_size = int_value(key, &v, 1, 1000000, "an integer from 1 to 1000000");
		else if (strcmp(key, "negatives") == 0)
			p->negatives = int_value(key, &v, 1, 100, "an integer from 1 to 100");
		else if (strcmp(key, "positives") == 0)
			p->positives = int_value(key, &v, 0, 1000, "an integer from 0 (every item) to 1000");
		else if (strcmp(key, "patience") == 0)
			p->patience = int_value(key, &v, 1, 100000, "an integer from 1 to 100000");
		else if (strcmp(key, "negative_power") == 0)
			p->negative_power = number_value(key, &v, 0.0, 2.0, "a number in [0, 2]");
		else if (strcmp(key, "max_context") == 0)
			p->max_context = int_value(key, &v, 1, MTDPP_MAX_CONTEXT, "an integer from 1 to 100");
		else if (strcmp(key, "l2") == 0)
			p->l2 = number_value(key, &v, 0.0, 100.0, "a number in [0, 100]");
		else if (strcmp(key, "l2_bias") == 0)
			p->l2_bias = number_value(key, &v, 0.0, 100.0, "a number in [0, 100]");
		else if (strcmp(key, "w") == 0)
			p->log_w = log(number_value(key, &v, MTDPP_MIN_W, MTDPP_MAX_W, "a number in [1e-12, 1e12]"));
		else if (strcmp(key, "init_scale") == 0)
			p->init_scale = number_value(key, &v, 0.0, 10.0, "a number in [0, 10]");
		else if (strcmp(key, "momentum") == 0)
			p->momentum = number_value(key, &v, 0.0, 0.999, "a number in [0, 0.999]");
		else if (strcmp(key, "validation_fraction") == 0)
			p->validation_fraction = number_value(key, &v, 0.0, 0.5, "a number in [0, 0.5]");
		else if (strcmp(key, "validation_baskets") == 0)
			p->validation_baskets = int_value(key, &v, -1, 1000000, "an integer from 0 to 1000000, or -1 (automatic)");
		else if (strcmp(key, "validation_candidates") == 0)
			p->validation_candidates = int_value(key, &v, 0, PG_INT32_MAX, "an integer, 0 (every item) or more");
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown hyperparameter \"%s\"", key),
					 errhint("Valid keys are " VALID_KEYS ".")));
	}
}

/* Defaults of the kind JSON names (multitask if none), then its keys. */
void
mtdpp_params_resolve(MtdppParams *p, Jsonb *json)
{
	mtdpp_params_defaults(p, MTDPP_MULTITASK);
	mtdpp_params_parse(p, json);
	if (p->kind != MTDPP_MULTITASK)
	{
		MtdppKind	kind = p->kind;

		mtdpp_params_defaults(p, kind);
		mtdpp_params_parse(p, json);
	}
}

char *
mtdpp_params_to_json(const MtdppParams *p)
{
	StringInfoData s;

	initStringInfo(&s);
	appendStringInfo(&s,
					 "{\"kind\": \"%s\", \"rank\": %d, \"epochs\": %d, \"target\": \"%s\", "
					 "\"seed\": " INT64_FORMAT ", \"learning_rate\": %.15g, \"lr_decay\": %.15g, "
					 "\"batch_size\": %d, \"negatives\": %d, \"positives\": %d, \"patience\": %d, "
					 "\"l2\": %.15g, \"l2_bias\": %.15g, \"w\": %.15g, \"init_scale\": %.15g, "
					 "\"optimizer\": \"%s\", \"momentum\": %.15g, "
					 "\"validation_fraction\": %.15g, \"validation_baskets\": %d, \"validation_candidates\": %d, "
					 "\"max_context\": %d, "
					 "\"loss\": \"%s\", \"negative_power\": %.15g}",
					 mtdpp_kind_name(p->kind), p->rank, p->epochs,
					 p->target == MTDPP_TARGET_LAST ? "last" : "random",
					 p->seed, p->learning_rate, p->lr_decay, p->batch_size,
					 p->negatives, p->positives, p->patience, p->l2, p->l2_bias,
					 exp(p->log_w), p->init_scale,
					 p->optimizer == MTDPP_OPT_ADAM ? "adam" : "momentum",
					 p->momentum, p->validation_fraction, p->validation_baskets, p->validation_candidates,
					 p->max_context,
					 p->loss == MTDPP_LOSS_SOFTMAX ? "softmax" : "logistic", p->negative_power);
	return s.data;
}
