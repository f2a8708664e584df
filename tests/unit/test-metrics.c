/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "config.h"

#include <math.h>
#include <string.h>

#include "health/msd-metrics.h"

/* A strict reader of the Prometheus text format 0.0.4, enough to check what the registry
 * writes: HELP/TYPE once per family and before its samples, families contiguous, valid names,
 * label escapes, float syntax, no repeated series. */

typedef struct {
	gchar *family;
	gchar *labels; /* unescaped, sorted by name: `a=x,b=y` */
	gdouble value;
} MsdTestSample;

typedef struct {
	GPtrArray *samples; /* (element-type MsdTestSample) */
	GHashTable *help;   /* family → unescaped help */
	GHashTable *type;   /* family → type */
} MsdTestExposition;

static void
msd_test_sample_free(gpointer data)
{
	MsdTestSample *sample = data;

	g_free(sample->family);
	g_free(sample->labels);
	g_free(sample);
}

static void
msd_test_exposition_free(MsdTestExposition *exp)
{
	g_ptr_array_unref(exp->samples);
	g_hash_table_unref(exp->help);
	g_hash_table_unref(exp->type);
	g_free(exp);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(MsdTestExposition, msd_test_exposition_free)

static gboolean
msd_test_name_char(gchar c, gboolean first, gboolean colon_ok)
{
	if (g_ascii_isalpha(c) || c == '_' || (colon_ok && c == ':'))
		return TRUE;
	return !first && g_ascii_isdigit(c);
}

/* Reads a name at *p; NULL if there is none. */
static gchar *
msd_test_read_name(const gchar **p, gboolean colon_ok)
{
	const gchar *start = *p;

	if (!msd_test_name_char(**p, TRUE, colon_ok))
		return NULL;
	while (**p != '\0' && msd_test_name_char(**p, FALSE, colon_ok))
		(*p)++;
	return g_strndup(start, *p - start);
}

static gboolean
msd_test_parse_value(const gchar *text, gdouble *value)
{
	gchar *end = NULL;

	if (g_str_equal(text, "+Inf")) {
		*value = INFINITY;
		return TRUE;
	}
	if (g_str_equal(text, "-Inf")) {
		*value = -INFINITY;
		return TRUE;
	}
	if (g_str_equal(text, "NaN")) {
		*value = NAN;
		return TRUE;
	}
	if (*text == '\0' || strspn(text, "0123456789.eE+-") != strlen(text))
		return FALSE;
	*value = g_ascii_strtod(text, &end);
	return end != NULL && *end == '\0';
}

/* Unescapes up to the closing quote (label values) or the end (help); NULL on a bad escape. */
static gchar *
msd_test_unescape(const gchar **p, gboolean quoted)
{
	g_autoptr(GString) out = g_string_new(NULL);

	for (;;) {
		gchar c = **p;

		if (c == '\0')
			return quoted ? NULL : g_string_free(g_steal_pointer(&out), FALSE);
		(*p)++;
		if (quoted && c == '"')
			return g_string_free(g_steal_pointer(&out), FALSE);
		if (c == '\n')
			return NULL;
		if (c != '\\') {
			g_string_append_c(out, c);
			continue;
		}
		c = *(*p)++;
		if (c == '\\')
			g_string_append_c(out, '\\');
		else if (c == 'n')
			g_string_append_c(out, '\n');
		else if (quoted && c == '"')
			g_string_append_c(out, '"');
		else
			return NULL;
	}
}

static gint
msd_test_strcmp(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const gchar *const *)a, *(const gchar *const *)b);
}

/* For `x_bucket`, `x_sum` or `x_count` of a family `x` typed histogram: `x`; else NULL. */
static gchar *
msd_test_histogram_family(MsdTestExposition *exp, const gchar *name)
{
	static const gchar *const suffixes[] = {"_bucket", "_sum", "_count"};

	for (guint i = 0; i < G_N_ELEMENTS(suffixes); i++) {
		g_autofree gchar *base = NULL;

		if (!g_str_has_suffix(name, suffixes[i]))
			continue;
		base = g_strndup(name, strlen(name) - strlen(suffixes[i]));
		if (g_strcmp0(g_hash_table_lookup(exp->type, base), "histogram") == 0)
			return g_steal_pointer(&base);
	}
	return NULL;
}

static gboolean
msd_test_histogram_sample(MsdTestExposition *exp, const gchar *name)
{
	g_autofree gchar *family = msd_test_histogram_family(exp, name);

	return family != NULL;
}

static gboolean
msd_test_parse_sample(MsdTestExposition *exp, const gchar *line, GString *why)
{
	g_autoptr(GPtrArray) labels = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GHashTable) label_names =
	        g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autofree gchar *name = NULL;
	g_autofree gchar *joined = NULL;
	MsdTestSample *sample;
	const gchar *p = line;
	gdouble value;

	name = msd_test_read_name(&p, TRUE);
	if (name == NULL)
		return g_string_append(why, "bad metric name"), FALSE;
	if (*p == '{') {
		p++;
		while (*p != '}') {
			g_autofree gchar *label = msd_test_read_name(&p, FALSE);
			g_autofree gchar *text = NULL;

			if (label == NULL || *p != '=' || p[1] != '"')
				return g_string_append(why, "bad label"), FALSE;
			p += 2;
			text = msd_test_unescape(&p, TRUE);
			if (text == NULL)
				return g_string_append(why, "bad label value"), FALSE;
			if (!g_hash_table_add(label_names, g_strdup(label)))
				return g_string_append(why, "repeated label"), FALSE;
			g_ptr_array_add(labels, g_strdup_printf("%s=%s", label, text));
			if (*p == ',')
				p++;
			else if (*p != '}')
				return g_string_append(why, "expected , or }"), FALSE;
		}
		p++;
	}
	if (*p != ' ')
		return g_string_append(why, "expected a space before the value"), FALSE;
	p++;
	if (strchr(p, ' ') != NULL)
		return g_string_append(why, "unexpected timestamp or trailing text"), FALSE;
	if (!msd_test_parse_value(p, &value))
		return g_string_append(why, "bad value"), FALSE;
	if (!g_hash_table_contains(exp->type, name) && !msd_test_histogram_sample(exp, name))
		return g_string_append(why, "sample without # TYPE"), FALSE;
	g_ptr_array_sort(labels, msd_test_strcmp);
	g_ptr_array_add(labels, NULL);
	joined = g_strjoinv(",", (gchar **)labels->pdata);
	for (guint i = 0; i < exp->samples->len; i++) {
		MsdTestSample *other = g_ptr_array_index(exp->samples, i);

		if (g_str_equal(other->family, name) && g_str_equal(other->labels, joined))
			return g_string_append(why, "repeated series"), FALSE;
	}
	sample = g_new0(MsdTestSample, 1);
	sample->family = g_steal_pointer(&name);
	sample->labels = g_steal_pointer(&joined);
	sample->value = value;
	g_ptr_array_add(exp->samples, sample);
	return TRUE;
}

static gboolean
msd_test_parse_comment(MsdTestExposition *exp, const gchar *line, GString *why)
{
	const gchar *p = line + 2;
	gboolean help = g_str_has_prefix(line, "# HELP ");
	g_autofree gchar *name = NULL;

	if (!help && !g_str_has_prefix(line, "# TYPE "))
		return TRUE; /* a plain comment */
	p = line + strlen("# HELP ");
	name = msd_test_read_name(&p, TRUE);
	if (name == NULL || *p != ' ')
		return g_string_append(why, "bad family name"), FALSE;
	p++;
	for (guint i = 0; i < exp->samples->len; i++) {
		MsdTestSample *sample = g_ptr_array_index(exp->samples, i);

		if (g_str_equal(sample->family, name))
			return g_string_append(why, "HELP/TYPE after samples"), FALSE;
	}
	if (help) {
		gchar *text = msd_test_unescape(&p, FALSE);

		if (text == NULL)
			return g_string_append(why, "bad help escape"), FALSE;
		if (!g_hash_table_insert(exp->help, g_strdup(name), text))
			return g_string_append(why, "second HELP"), FALSE;
		return TRUE;
	}
	if (!g_strv_contains((const gchar *const[]){"counter", "gauge", "histogram", "summary",
	                                            "untyped", NULL},
	                     p))
		return g_string_append(why, "unknown type"), FALSE;
	if (!g_hash_table_insert(exp->type, g_strdup(name), g_strdup(p)))
		return g_string_append(why, "second TYPE"), FALSE;
	return TRUE;
}

static MsdTestExposition *
msd_test_parse(const gchar *text, gchar **why_out)
{
	g_autoptr(MsdTestExposition) exp = g_new0(MsdTestExposition, 1);
	g_autoptr(GString) why = g_string_new(NULL);
	g_auto(GStrv) lines = NULL;
	g_autoptr(GHashTable) finished =
	        g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	g_autofree gchar *current = NULL;
	guint n_lines;

	exp->samples = g_ptr_array_new_with_free_func(msd_test_sample_free);
	exp->help = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	exp->type = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	if (*text != '\0' && !g_str_has_suffix(text, "\n")) {
		*why_out = g_strdup("no final newline");
		return NULL;
	}
	lines = g_strsplit(text, "\n", -1);
	n_lines = g_strv_length(lines);
	for (guint i = 0; i + 1 < n_lines; i++) {
		const gchar *line = lines[i];
		const gchar *p = line;
		g_autofree gchar *family = NULL;
		gboolean ok;

		if (*line == '#') {
			if (g_str_has_prefix(line, "# HELP ") ||
			    g_str_has_prefix(line, "# TYPE ")) {
				p = line + strlen("# HELP ");
				family = msd_test_read_name(&p, TRUE);
			}
			ok = msd_test_parse_comment(exp, line, why);
		} else {
			family = msd_test_read_name(&p, TRUE);
			ok = msd_test_parse_sample(exp, line, why);
			if (ok) {
				gchar *base = msd_test_histogram_family(exp, family);

				/* a histogram's lines belong to its family */
				if (base != NULL) {
					g_free(family);
					family = base;
				}
			}
		}
		if (ok && family != NULL && g_strcmp0(family, current) != 0) {
			if (g_hash_table_contains(finished, family)) {
				g_string_append(why, "family not contiguous");
				ok = FALSE;
			} else {
				if (current != NULL)
					g_hash_table_add(finished, g_steal_pointer(&current));
				current = g_strdup(family);
			}
		}
		if (!ok) {
			*why_out = g_strdup_printf("line %u ‘%s’: %s", i + 1, line, why->str);
			return NULL;
		}
	}
	return g_steal_pointer(&exp);
}

static MsdTestExposition *
msd_test_parse_ok(const gchar *text)
{
	g_autofree gchar *why = NULL;
	MsdTestExposition *exp = msd_test_parse(text, &why);

	if (exp == NULL)
		g_error("exposition does not parse: %s\n%s", why, text);
	return exp;
}

static gdouble
msd_test_sample_value(MsdTestExposition *exp, const gchar *family, const gchar *labels)
{
	for (guint i = 0; i < exp->samples->len; i++) {
		MsdTestSample *sample = g_ptr_array_index(exp->samples, i);

		if (g_str_equal(sample->family, family) && g_str_equal(sample->labels, labels))
			return sample->value;
	}
	g_error("no sample %s{%s}", family, labels);
	return 0;
}

static void
test_metrics_parser_rejects(void)
{
	const gchar *bad[] = {
	        "x 1",                                             /* no final newline */
	        "x 1\n",                                           /* no TYPE */
	        "# TYPE x counter\nx{a=\"1\"} 1\nx{a=\"1\"} 2\n",  /* repeated series */
	        "# TYPE x gauge\n# TYPE x gauge\nx 1\n",           /* second TYPE */
	        "# TYPE x gauge\nx 1\n# HELP x late\n",            /* HELP after samples */
	        "# TYPE x meter\nx 1\n",                           /* unknown type */
	        "# TYPE x gauge\nx{a=\"\\t\"} 1\n",                /* bad escape */
	        "# TYPE x gauge\nx{a=\"1\",a=\"2\"} 1\n",          /* repeated label */
	        "# TYPE x gauge\nx{1a=\"1\"} 1\n",                 /* bad label name */
	        "# TYPE x gauge\nx 1e\n",                          /* bad value */
	        "# TYPE x gauge\nx inf\n",                         /* Go spells it +Inf */
	        "# TYPE x gauge\nx 0x10\n",                        /* hex */
	        "# TYPE x gauge\nx  1\n",                          /* two spaces */
	        "# TYPE x gauge\n# TYPE y gauge\nx 1\ny 1\nx 2\n", /* not contiguous */
	        "# HELP x a\\qb\n# TYPE x gauge\nx 1\n",           /* bad help escape */
	        "# TYPE 9x gauge\n9x 1\n",                         /* bad family name */
	};

	for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
		g_autofree gchar *why = NULL;
		MsdTestExposition *exp = msd_test_parse(bad[i], &why);

		if (exp != NULL) {
			msd_test_exposition_free(exp);
			g_test_fail_printf("accepted: %s", bad[i]);
			continue;
		}
		g_assert_nonnull(why);
	}
	/* and the grammar it accepts */
	{
		g_autoptr(MsdTestExposition) exp =
		        msd_test_parse_ok("# a comment\n# HELP x the \\\\ and \\n\n# TYPE x gauge\n"
		                          "x{b=\"2\",a=\"q\\\"\\n\",} -1.5e-3\nx NaN\n");

		g_assert_cmpuint(exp->samples->len, ==, 2);
		g_assert_cmpstr(g_hash_table_lookup(exp->help, "x"), ==, "the \\ and \n");
		g_assert_cmpfloat(msd_test_sample_value(exp, "x", "a=q\"\n,b=2"), ==, -1.5e-3);
	}
}

static void
test_metrics_empty(void)
{
	g_autoptr(MsdMetrics) metrics = msd_metrics_new();
	g_autofree gchar *text = msd_metrics_render(metrics);
	g_autoptr(MsdTestExposition) exp = msd_test_parse_ok(text);
	gdouble value = 0;

	g_assert_cmpstr(text, ==, "");
	g_assert_cmpuint(exp->samples->len, ==, 0);
	g_assert_false(msd_metrics_lookup(metrics, "meshsync_objects", &value, NULL));
	g_assert_false(msd_metrics_remove(metrics, "meshsync_objects", NULL));
}

static void
test_metrics_render(void)
{
	g_autoptr(MsdMetrics) metrics = msd_metrics_new();
	g_autofree gchar *text = NULL;
	g_autoptr(MsdTestExposition) exp = NULL;
	const gchar *expected =
	        "# HELP meshsync_buffered_bytes Bytes held while the broker is not writable\n"
	        "# TYPE meshsync_buffered_bytes gauge\n"
	        "meshsync_buffered_bytes 0.25\n"
	        "# HELP meshsync_events_total Resource events emitted\n"
	        "# TYPE meshsync_events_total counter\n"
	        "meshsync_events_total{kind=\"Pod\",type=\"ADDED\"} 3\n"
	        "meshsync_events_total{kind=\"Pod\",type=\"DELETED\"} 1\n"
	        "meshsync_events_total{kind=\"Service\",type=\"ADDED\"} 0\n"
	        "# HELP meshsync_objects Objects in the informer stores\\nby kind \\\\ "
	        "\"namespace\"\n"
	        "# TYPE meshsync_objects gauge\n"
	        "meshsync_objects 42\n"
	        "meshsync_objects{kind=\"odd \\\\ \\\"kind\\\"\\nline\"} -7\n";

	/* Registered out of order; labels in either order name the same series. */
	msd_metrics_gauge_set(metrics, "meshsync_objects",
	                      "Objects in the informer stores\nby kind \\ \"namespace\"", 42.0,
	                      NULL);
	msd_metrics_counter_add(metrics, "meshsync_events_total", "Resource events emitted", 1,
	                        "type", "DELETED", "kind", "Pod", NULL);
	msd_metrics_counter_add(metrics, "meshsync_events_total", "Resource events emitted", 1,
	                        "kind", "Pod", "type", "ADDED", NULL);
	msd_metrics_counter_add(metrics, "meshsync_events_total", "ignored: first help wins", 2,
	                        "type", "ADDED", "kind", "Pod", NULL);
	msd_metrics_counter_add(metrics, "meshsync_events_total", NULL, 0, "kind", "Service",
	                        "type", "ADDED", NULL);
	msd_metrics_gauge_set(metrics, "meshsync_buffered_bytes",
	                      "Bytes held while the broker is not writable", 1.0, NULL);
	msd_metrics_gauge_add(metrics, "meshsync_buffered_bytes", NULL, -0.75, NULL);
	msd_metrics_gauge_add(metrics, "meshsync_objects", NULL, -7, "kind",
	                      "odd \\ \"kind\"\nline", NULL);

	text = msd_metrics_render(metrics);
	g_assert_cmpstr(text, ==, expected);

	/* The strict reader agrees, and label values read back unchanged. */
	exp = msd_test_parse_ok(text);
	g_assert_cmpuint(exp->samples->len, ==, 6);
	g_assert_cmpstr(g_hash_table_lookup(exp->type, "meshsync_events_total"), ==, "counter");
	g_assert_cmpstr(g_hash_table_lookup(exp->help, "meshsync_objects"), ==,
	                "Objects in the informer stores\nby kind \\ \"namespace\"");
	g_assert_cmpfloat(
	        msd_test_sample_value(exp, "meshsync_events_total", "kind=Pod,type=ADDED"), ==, 3);
	g_assert_cmpfloat(
	        msd_test_sample_value(exp, "meshsync_objects", "kind=odd \\ \"kind\"\nline"), ==,
	        -7);
	g_assert_cmpfloat(msd_test_sample_value(exp, "meshsync_buffered_bytes", ""), ==, 0.25);
}

static void
test_metrics_numbers(void)
{
	const struct {
		gdouble value;
		const gchar *text;
	} cases[] = {
	        {0.0, "0"},
	        {-0.0, "0"},
	        {1.0, "1"},
	        {-3.0, "-3"},
	        {1234567.0, "1234567"},
	        {9007199254740992.0, "9007199254740992"},
	        {18446744073709551616.0, "18446744073709551616"},
	        {1e20, "100000000000000000000"},
	        {1e21, "1e+21"},
	        {0.1, "0.1"},
	        {-2.5, "-2.5"},
	        {1.0 / 3.0, "0.3333333333333333"},
	        {0.1 + 0.2, "0.30000000000000004"},
	        {1e-7, "1e-07"},
	        {123456.789, "123456.789"},
	        {5e-324, "5e-324"},
	        {1.7976931348623157e308, "1.7976931348623157e+308"},
	        {INFINITY, "+Inf"},
	        {-INFINITY, "-Inf"},
	        {NAN, "NaN"},
	};

	for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree gchar *text = msd_metrics_format_value(cases[i].value);
		gdouble back = 0;

		g_assert_cmpstr(text, ==, cases[i].text);
		g_assert_true(msd_test_parse_value(text, &back));
		if (isnan(cases[i].value))
			g_assert_true(isnan(back));
		else
			g_assert_cmpfloat(back, ==, cases[i].value);
	}
}

/* Every double rendered reads back to itself, whatever its magnitude. */
static void
test_metrics_numbers_round_trip(void)
{
	g_autoptr(GRand) rand = g_rand_new_with_seed(20240611);

	for (guint i = 0; i < 20000; i++) {
		union {
			guint64 bits;
			gdouble value;
		} u;
		g_autofree gchar *text = NULL;
		gdouble back = 0;

		u.bits = ((guint64)g_rand_int(rand) << 32) | g_rand_int(rand);
		if (isnan(u.value) || isinf(u.value))
			continue;
		text = msd_metrics_format_value(u.value);
		if (!msd_test_parse_value(text, &back) || back != u.value)
			g_test_fail_printf("%.17g rendered as %s", u.value, text);
		if (u.value == (gdouble)(gint64)u.value && fabs(u.value) < 1e15)
			g_assert_null(strpbrk(text, "e."));
	}
}

typedef struct {
	gdouble value;
	guint calls;
	guint destroyed;
} MsdTestGauge;

static gdouble
msd_test_gauge_read(gpointer user_data)
{
	MsdTestGauge *gauge = user_data;

	gauge->calls++;
	return gauge->value;
}

static void
msd_test_gauge_destroy(gpointer user_data)
{
	MsdTestGauge *gauge = user_data;

	gauge->destroyed++;
}

static void
test_metrics_callback(void)
{
	g_autoptr(MsdMetrics) metrics = msd_metrics_new();
	MsdTestGauge first = {1024, 0, 0};
	MsdTestGauge second = {2048, 0, 0};
	MsdTestGauge kept = {7, 0, 0};
	gdouble value = 0;

	msd_metrics_gauge_set_func(metrics, "meshsync_broker_buffered_bytes", "Buffered bytes",
	                           msd_test_gauge_read, &first, msd_test_gauge_destroy, "broker",
	                           "nats", NULL);
	g_assert_cmpuint(first.calls, ==, 0);
	{
		g_autofree gchar *text = msd_metrics_render(metrics);

		g_assert_cmpstr(text, ==,
		                "# HELP meshsync_broker_buffered_bytes Buffered bytes\n"
		                "# TYPE meshsync_broker_buffered_bytes gauge\n"
		                "meshsync_broker_buffered_bytes{broker=\"nats\"} 1024\n");
	}
	g_assert_cmpuint(first.calls, ==, 1);

	/* Read at scrape time, not at registration. */
	first.value = 1.5;
	{
		g_autofree gchar *text = msd_metrics_render(metrics);

		g_assert_nonnull(strstr(text, "{broker=\"nats\"} 1.5\n"));
	}
	g_assert_true(msd_metrics_lookup(metrics, "meshsync_broker_buffered_bytes", &value,
	                                 "broker", "nats", NULL));
	g_assert_cmpfloat(value, ==, 1.5);
	g_assert_cmpuint(first.calls, ==, 3);

	/* Replacing the callback frees the old data; remove frees the new one. */
	msd_metrics_gauge_set_func(metrics, "meshsync_broker_buffered_bytes", NULL,
	                           msd_test_gauge_read, &second, msd_test_gauge_destroy, "broker",
	                           "nats", NULL);
	g_assert_cmpuint(first.destroyed, ==, 1);
	g_assert_true(msd_metrics_lookup(metrics, "meshsync_broker_buffered_bytes", &value,
	                                 "broker", "nats", NULL));
	g_assert_cmpfloat(value, ==, 2048);
	g_assert_true(msd_metrics_remove(metrics, "meshsync_broker_buffered_bytes", "broker",
	                                 "nats", NULL));
	g_assert_cmpuint(second.destroyed, ==, 1);
	g_assert_false(msd_metrics_lookup(metrics, "meshsync_broker_buffered_bytes", NULL, "broker",
	                                  "nats", NULL));
	{
		g_autofree gchar *text = msd_metrics_render(metrics);

		g_assert_cmpstr(text, ==, "");
	}

	/* Finalizing the registry frees what it still holds. */
	msd_metrics_gauge_set_func(metrics, "meshsync_kept", "Kept", msd_test_gauge_read, &kept,
	                           msd_test_gauge_destroy, NULL);
	g_clear_object(&metrics);
	g_assert_cmpuint(kept.destroyed, ==, 1);
	g_assert_cmpuint(first.destroyed, ==, 1);
	g_assert_cmpuint(second.destroyed, ==, 1);
}

static void
test_metrics_lookup_remove(void)
{
	g_autoptr(MsdMetrics) metrics = msd_metrics_new();
	gdouble value = 0;

	msd_metrics_counter_add(metrics, "meshsync_events_total", "Events", 1, "kind", "Pod", NULL);
	msd_metrics_counter_add(metrics, "meshsync_events_total", "Events", 2.5, "kind", "Pod",
	                        NULL);
	msd_metrics_counter_add(metrics, "meshsync_events_total", "Events", 1, "kind", "Node",
	                        NULL);
	g_assert_true(
	        msd_metrics_lookup(metrics, "meshsync_events_total", &value, "kind", "Pod", NULL));
	g_assert_cmpfloat(value, ==, 3.5);
	/* No labels is a series of its own. */
	g_assert_false(msd_metrics_lookup(metrics, "meshsync_events_total", &value, NULL));

	g_assert_true(msd_metrics_remove(metrics, "meshsync_events_total", "kind", "Pod", NULL));
	g_assert_false(msd_metrics_remove(metrics, "meshsync_events_total", "kind", "Pod", NULL));
	{
		g_autofree gchar *text = msd_metrics_render(metrics);

		g_assert_cmpstr(text, ==,
		                "# HELP meshsync_events_total Events\n"
		                "# TYPE meshsync_events_total counter\n"
		                "meshsync_events_total{kind=\"Node\"} 1\n");
	}
	/* A family created again after its last series went takes the new help. */
	g_assert_true(msd_metrics_remove(metrics, "meshsync_events_total", "kind", "Node", NULL));
	msd_metrics_gauge_set(metrics, "meshsync_events_total", "Now a gauge", 2, NULL);
	{
		g_autofree gchar *text = msd_metrics_render(metrics);

		g_assert_cmpstr(text, ==,
		                "# HELP meshsync_events_total Now a gauge\n"
		                "# TYPE meshsync_events_total gauge\n"
		                "meshsync_events_total 2\n");
	}
}

static void
test_metrics_misuse(void)
{
	g_autoptr(MsdMetrics) metrics = msd_metrics_new();
	g_autofree gchar *text = NULL;
	gdouble value = 0;

	msd_metrics_counter_add(metrics, "meshsync_events_total", "Events", 1, NULL);

	g_test_expect_message("MeshSyncHealth", G_LOG_LEVEL_CRITICAL, "*invalid metric name*");
	msd_metrics_gauge_set(metrics, "meshsync-objects", "dash", 1, NULL);
	g_test_expect_message("MeshSyncHealth", G_LOG_LEVEL_CRITICAL, "*invalid label name*");
	msd_metrics_gauge_set(metrics, "meshsync_objects", "bad label", 1, "0kind", "Pod", NULL);
	g_test_expect_message("MeshSyncHealth", G_LOG_LEVEL_CRITICAL,
	                      "*invalid label name*__name__*");
	msd_metrics_gauge_set(metrics, "meshsync_objects", "reserved", 1, "__name__", "x", NULL);
	g_test_expect_message("MeshSyncHealth", G_LOG_LEVEL_CRITICAL, "*given twice*");
	msd_metrics_gauge_set(metrics, "meshsync_objects", "twice", 1, "a", "1", "a", "2", NULL);
	g_test_expect_message("MeshSyncHealth", G_LOG_LEVEL_CRITICAL,
	                      "*is a counter, not a gauge*");
	msd_metrics_gauge_set(metrics, "meshsync_events_total", "clash", 5, NULL);
	g_test_expect_message("MeshSyncHealth", G_LOG_LEVEL_CRITICAL, "*value >= 0*");
	msd_metrics_counter_add(metrics, "meshsync_events_total", "down", -1, NULL);
	g_test_expect_message("MeshSyncHealth", G_LOG_LEVEL_CRITICAL, "*value >= 0*");
	msd_metrics_counter_add(metrics, "meshsync_events_total", "nan", NAN, NULL);
	g_test_assert_expected_messages();

	g_assert_true(msd_metrics_lookup(metrics, "meshsync_events_total", &value, NULL));
	g_assert_cmpfloat(value, ==, 1);
	text = msd_metrics_render(metrics);
	g_assert_cmpstr(text, ==,
	                "# HELP meshsync_events_total Events\n"
	                "# TYPE meshsync_events_total counter\n"
	                "meshsync_events_total 1\n");
}

/* Many families and series in random order render sorted and parse. */
static void
test_metrics_many(void)
{
	g_autoptr(MsdMetrics) metrics = msd_metrics_new();
	g_autoptr(GRand) rand = g_rand_new_with_seed(7);
	g_autofree gchar *text = NULL;
	g_autoptr(MsdTestExposition) exp = NULL;
	g_autofree gchar *previous = NULL;

	for (guint i = 0; i < 500; i++) {
		g_autofree gchar *name = g_strdup_printf("m_%02d", g_rand_int_range(rand, 0, 30));
		g_autofree gchar *kind = g_strdup_printf("k%d", g_rand_int_range(rand, 0, 20));
		g_autofree gchar *ns = g_strdup_printf("n%d", g_rand_int_range(rand, 0, 3));

		msd_metrics_gauge_add(metrics, name, "random", g_rand_double(rand), "ns", ns,
		                      "kind", kind, NULL);
	}
	text = msd_metrics_render(metrics);
	exp = msd_test_parse_ok(text);
	g_assert_cmpuint(exp->samples->len, >, 100);
	for (guint i = 0; i < exp->samples->len; i++) {
		MsdTestSample *sample = g_ptr_array_index(exp->samples, i);
		g_autofree gchar *key = g_strdup_printf("%s %s", sample->family, sample->labels);

		/* `kind=` sorts before `ns=` in both the key and the rendered label text. */
		if (previous != NULL)
			g_assert_cmpstr(previous, <, key);
		g_free(previous);
		previous = g_steal_pointer(&key);
	}
}

/* Buckets count at-or-below their bound, render cumulatively with le last among the labels,
 * then _sum and _count; a second ensure finds the same series. */
static void
test_metrics_histogram(void)
{
	static const gdouble bounds[] = {0.001, 0.5, 2};
	g_autoptr(MsdMetrics) metrics = msd_metrics_new();
	MsdMetricsHistogram *pods;
	MsdMetricsHistogram *plain;
	g_autofree gchar *text = NULL;
	g_autoptr(MsdTestExposition) exp = NULL;
	gdouble value = 0;

	pods = msd_metrics_histogram_ensure(metrics, "meshsync_sync_seconds", "Sync time", bounds,
	                                    G_N_ELEMENTS(bounds), "resource", "pods.v1.", NULL);
	plain = msd_metrics_histogram_ensure(metrics, "meshsync_sync_seconds", NULL, bounds,
	                                     G_N_ELEMENTS(bounds), NULL);
	g_assert_nonnull(pods);
	g_assert_nonnull(plain);
	g_assert_true(pods != plain);
	g_assert_true(msd_metrics_histogram_ensure(metrics, "meshsync_sync_seconds", NULL, bounds,
	                                           G_N_ELEMENTS(bounds), "resource", "pods.v1.",
	                                           NULL) == pods);
	msd_metrics_histogram_observe(pods, 0.001); /* on the bound: in its bucket */
	msd_metrics_histogram_observe(pods, 0.25);
	msd_metrics_histogram_observe(pods, 0.5);
	msd_metrics_histogram_observe(pods, 3); /* past the last bound: +Inf only */

	g_assert_cmpuint(msd_metrics_histogram_get_count(pods), ==, 4);
	g_assert_cmpfloat(msd_metrics_histogram_get_sum(pods), ==, 3.751);
	g_assert_cmpuint(msd_metrics_histogram_get_bucket(pods, 0), ==, 1);
	g_assert_cmpuint(msd_metrics_histogram_get_bucket(pods, 1), ==, 3);
	g_assert_cmpuint(msd_metrics_histogram_get_bucket(pods, 2), ==, 3);
	g_assert_cmpuint(msd_metrics_histogram_get_bucket(pods, 3), ==, 4);
	g_assert_true(msd_metrics_lookup(metrics, "meshsync_sync_seconds", &value, "resource",
	                                 "pods.v1.", NULL));
	g_assert_cmpfloat(value, ==, 4);

	text = msd_metrics_render(metrics);
	g_assert_cmpstr(text, ==,
	                "# HELP meshsync_sync_seconds Sync time\n"
	                "# TYPE meshsync_sync_seconds histogram\n"
	                "meshsync_sync_seconds_bucket{le=\"0.001\"} 0\n"
	                "meshsync_sync_seconds_bucket{le=\"0.5\"} 0\n"
	                "meshsync_sync_seconds_bucket{le=\"2\"} 0\n"
	                "meshsync_sync_seconds_bucket{le=\"+Inf\"} 0\n"
	                "meshsync_sync_seconds_sum 0\n"
	                "meshsync_sync_seconds_count 0\n"
	                "meshsync_sync_seconds_bucket{resource=\"pods.v1.\",le=\"0.001\"} 1\n"
	                "meshsync_sync_seconds_bucket{resource=\"pods.v1.\",le=\"0.5\"} 3\n"
	                "meshsync_sync_seconds_bucket{resource=\"pods.v1.\",le=\"2\"} 3\n"
	                "meshsync_sync_seconds_bucket{resource=\"pods.v1.\",le=\"+Inf\"} 4\n"
	                "meshsync_sync_seconds_sum{resource=\"pods.v1.\"} 3.751\n"
	                "meshsync_sync_seconds_count{resource=\"pods.v1.\"} 4\n");
	exp = msd_test_parse_ok(text);
	g_assert_cmpstr(g_hash_table_lookup(exp->type, "meshsync_sync_seconds"), ==, "histogram");

	g_assert_true(msd_metrics_remove(metrics, "meshsync_sync_seconds", NULL));
	g_assert_true(
	        msd_metrics_remove(metrics, "meshsync_sync_seconds", "resource", "pods.v1.", NULL));
	g_free(text);
	text = msd_metrics_render(metrics);
	g_assert_cmpstr(text, ==, "");
}

static void
test_metrics_histogram_misuse(void)
{
	static const gdouble bounds[] = {1, 2};
	static const gdouble other[] = {1, 3};
	static const gdouble unsorted[] = {2, 1};
	g_autoptr(MsdMetrics) metrics = msd_metrics_new();
	g_autofree gchar *text = NULL;

	g_assert_nonnull(msd_metrics_histogram_ensure(metrics, "meshsync_h_seconds", "H", bounds,
	                                              G_N_ELEMENTS(bounds), NULL));
	g_test_expect_message("MeshSyncHealth", G_LOG_LEVEL_CRITICAL, "*other bucket bounds*");
	g_assert_null(msd_metrics_histogram_ensure(metrics, "meshsync_h_seconds", "H", other,
	                                           G_N_ELEMENTS(other), "a", "b", NULL));
	g_test_expect_message("MeshSyncHealth", G_LOG_LEVEL_CRITICAL, "*invalid label name*le*");
	g_assert_null(msd_metrics_histogram_ensure(metrics, "meshsync_h_seconds", "H", bounds,
	                                           G_N_ELEMENTS(bounds), "le", "1", NULL));
	g_test_expect_message("MeshSyncHealth", G_LOG_LEVEL_CRITICAL, "*bounds_valid*");
	g_assert_null(msd_metrics_histogram_ensure(metrics, "meshsync_u_seconds", "U", unsorted,
	                                           G_N_ELEMENTS(unsorted), NULL));
	g_test_expect_message("MeshSyncHealth", G_LOG_LEVEL_CRITICAL,
	                      "*is a histogram, not a counter*");
	msd_metrics_counter_add(metrics, "meshsync_h_seconds", "clash", 1, NULL);
	g_test_expect_message("MeshSyncHealth", G_LOG_LEVEL_CRITICAL,
	                      "*is a gauge, not a histogram*");
	msd_metrics_gauge_set(metrics, "meshsync_g", "G", 1, NULL);
	g_assert_null(msd_metrics_histogram_ensure(metrics, "meshsync_g", "G", bounds,
	                                           G_N_ELEMENTS(bounds), NULL));
	g_test_assert_expected_messages();

	/* nothing of the refused calls shows */
	msd_metrics_remove(metrics, "meshsync_g", NULL);
	text = msd_metrics_render(metrics);
	g_assert_cmpstr(text, ==,
	                "# HELP meshsync_h_seconds H\n"
	                "# TYPE meshsync_h_seconds histogram\n"
	                "meshsync_h_seconds_bucket{le=\"1\"} 0\n"
	                "meshsync_h_seconds_bucket{le=\"2\"} 0\n"
	                "meshsync_h_seconds_bucket{le=\"+Inf\"} 0\n"
	                "meshsync_h_seconds_sum 0\n"
	                "meshsync_h_seconds_count 0\n");
}

int
main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);

	g_test_add_func("/metrics/parser-rejects", test_metrics_parser_rejects);
	g_test_add_func("/metrics/empty", test_metrics_empty);
	g_test_add_func("/metrics/render", test_metrics_render);
	g_test_add_func("/metrics/numbers", test_metrics_numbers);
	g_test_add_func("/metrics/numbers-round-trip", test_metrics_numbers_round_trip);
	g_test_add_func("/metrics/callback", test_metrics_callback);
	g_test_add_func("/metrics/lookup-remove", test_metrics_lookup_remove);
	g_test_add_func("/metrics/misuse", test_metrics_misuse);
	g_test_add_func("/metrics/many", test_metrics_many);
	g_test_add_func("/metrics/histogram", test_metrics_histogram);
	g_test_add_func("/metrics/histogram-misuse", test_metrics_histogram_misuse);

	return g_test_run();
}
