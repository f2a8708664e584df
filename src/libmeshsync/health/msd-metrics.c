/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

/*
 * One file: the registry's families, series, label keys and the text rendering are one data
 * structure with one set of invariants (sorted, escaped, typed), read and written only here.
 */

#define G_LOG_DOMAIN "MeshSyncHealth"

#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "health/msd-metrics.h"

/**
 * MsdMetrics:
 *
 * A registry of counters, gauges and histograms, rendered in the Prometheus text exposition
 * format (version 0.0.4) for `GET /metrics`.
 *
 * A metric family is identified by its name and has one type (counter, gauge or histogram)
 * and one help text (the first one given wins); a histogram family has one set of bucket
 * bounds. Each family holds series told apart by their labels: the
 * label pairs are passed as `name, value` arguments ending with %NULL, in any order
 * (`"kind", "Pod", "type", "ADDED"` and `"type", "ADDED", "kind", "Pod"` are the same series).
 * Gauges and counters may also be read through a callback at scrape time.
 *
 * Rendering is stable: families sorted by name, series by their label text, labels by name.
 *
 * Metric and label names that Prometheus would reject, a family used with two types, a
 * negative counter increment, or an odd number of label arguments are programming errors:
 * they emit a critical warning and change nothing.
 *
 * Threading: the registry is not locked. Use it from the thread that runs the main context
 * it serves on (the loop thread) only; other threads must hand their updates to that
 * context (e.g. with an idle source) rather than calling in directly.
 */

typedef enum {
	MSD_METRICS_KIND_COUNTER,
	MSD_METRICS_KIND_GAUGE,
	MSD_METRICS_KIND_HISTOGRAM,
} MsdMetricsKind;

struct _MsdMetricsHistogram {
	const gdouble *bounds; /* the family's: n_bounds upper bounds, increasing; +Inf implied */
	guint n_bounds;
	guint64 count;
	gdouble sum;
	guint64 buckets[]; /* n_bounds + 1, each counting its own range only (not cumulative) */
};

typedef struct {
	gdouble value;
	MsdMetricsHistogram *histogram; /* (owned) (nullable): for a histogram series only */
	MsdMetricsGaugeFunc func;       /* (nullable): when set, value is unused */
	gpointer user_data;
	GDestroyNotify destroy;
} MsdMetricsSeries;

typedef struct {
	gchar *help; /* (owned) */
	MsdMetricsKind kind;
	GHashTable *series; /* (owned) (element-type utf8 MsdMetricsSeries): key = label text */
	gdouble *bounds;    /* (owned) (nullable): a histogram's bucket bounds */
	guint n_bounds;
} MsdMetricsFamily;

struct _MsdMetrics {
	GObject parent_instance;

	GHashTable *families; /* (owned) (element-type utf8 MsdMetricsFamily) */
};

G_DEFINE_FINAL_TYPE(MsdMetrics, msd_metrics, G_TYPE_OBJECT)

static void
msd_metrics_series_clear_func(MsdMetricsSeries *series)
{
	GDestroyNotify destroy = series->destroy;
	gpointer user_data = series->user_data;

	series->func = NULL;
	series->user_data = NULL;
	series->destroy = NULL;
	if (destroy != NULL)
		destroy(user_data);
}

static void
msd_metrics_series_free(gpointer data)
{
	MsdMetricsSeries *series = data;

	msd_metrics_series_clear_func(series);
	g_free(series->histogram);
	g_free(series);
}

static void
msd_metrics_family_free(gpointer data)
{
	MsdMetricsFamily *family = data;

	g_hash_table_unref(family->series);
	g_free(family->bounds);
	g_free(family->help);
	g_free(family);
}

static const gchar *
msd_metrics_kind_to_string(MsdMetricsKind kind)
{
	switch (kind) {
	case MSD_METRICS_KIND_COUNTER:
		return "counter";
	case MSD_METRICS_KIND_HISTOGRAM:
		return "histogram";
	case MSD_METRICS_KIND_GAUGE:
	default:
		return "gauge";
	}
}

/* [a-zA-Z_:][a-zA-Z0-9_:]* for metric names, the same without ':' for label names. */
static gboolean
msd_metrics_name_valid(const gchar *name, gboolean colon_ok)
{
	if (name == NULL || *name == '\0' || g_ascii_isdigit(*name))
		return FALSE;
	for (const gchar *p = name; *p != '\0'; p++) {
		if (!g_ascii_isalnum(*p) && *p != '_' && !(colon_ok && *p == ':'))
			return FALSE;
	}
	return TRUE;
}

static void
msd_metrics_escape(GString *out, const gchar *text, gboolean quote)
{
	for (const gchar *p = text; *p != '\0'; p++) {
		if (*p == '\\')
			g_string_append(out, "\\\\");
		else if (*p == '\n')
			g_string_append(out, "\\n");
		else if (quote && *p == '"')
			g_string_append(out, "\\\"");
		else
			g_string_append_c(out, *p);
	}
}

typedef struct {
	const gchar *name;
	const gchar *value;
} MsdMetricsLabel;

static gint
msd_metrics_label_cmp(gconstpointer a, gconstpointer b)
{
	return strcmp(((const MsdMetricsLabel *)a)->name, ((const MsdMetricsLabel *)b)->name);
}

/* Reads `name, value, …, NULL` and returns the series key, `{a="x",b="y"}` with the labels
 * sorted by name and the values escaped, or "" without labels; NULL (after a critical) when
 * the arguments are wrong. A histogram's series may not have a label of their own named
 * `le`: the buckets use it. */
static gchar *
msd_metrics_labels_key(const gchar *metric, MsdMetricsKind kind, va_list args)
{
	g_autoptr(GArray) labels = g_array_new(FALSE, FALSE, sizeof(MsdMetricsLabel));
	g_autoptr(GString) key = NULL;
	const gchar *name;

	while ((name = va_arg(args, const gchar *)) != NULL) {
		MsdMetricsLabel label = {name, va_arg(args, const gchar *)};

		if (!msd_metrics_name_valid(name, FALSE) || g_str_has_prefix(name, "__") ||
		    (kind == MSD_METRICS_KIND_HISTOGRAM && g_str_equal(name, "le"))) {
			g_critical("metric %s: invalid label name ‘%s’", metric, name);
			return NULL;
		}
		if (label.value == NULL) {
			g_critical("metric %s: label %s has no value", metric, name);
			return NULL;
		}
		g_array_append_val(labels, label);
	}
	if (labels->len == 0)
		return g_strdup("");
	g_array_sort(labels, msd_metrics_label_cmp);
	key = g_string_new("{");
	for (guint i = 0; i < labels->len; i++) {
		const MsdMetricsLabel *label = &g_array_index(labels, MsdMetricsLabel, i);

		if (i > 0 &&
		    g_str_equal(label->name, g_array_index(labels, MsdMetricsLabel, i - 1).name)) {
			g_critical("metric %s: label %s given twice", metric, label->name);
			return NULL;
		}
		if (i > 0)
			g_string_append_c(key, ',');
		g_string_append_printf(key, "%s=\"", label->name);
		msd_metrics_escape(key, label->value, TRUE);
		g_string_append_c(key, '"');
	}
	g_string_append_c(key, '}');
	return g_string_free(g_steal_pointer(&key), FALSE);
}

/* The family @name if it exists with @kind; NULL (after a critical) if it has another type. */
static MsdMetricsFamily *
msd_metrics_family_lookup(MsdMetrics *self, const gchar *name, MsdMetricsKind kind, gboolean *clash)
{
	MsdMetricsFamily *family = g_hash_table_lookup(self->families, name);

	*clash = family != NULL && family->kind != kind;
	if (*clash) {
		g_critical("metric %s is a %s, not a %s", name,
		           msd_metrics_kind_to_string(family->kind),
		           msd_metrics_kind_to_string(kind));
		return NULL;
	}
	return family;
}

/* Finds or creates the series; NULL (after a critical) on a programming error. */
static MsdMetricsSeries *
msd_metrics_series_ensure(
        MsdMetrics *self, const gchar *name, const gchar *help, MsdMetricsKind kind, va_list args)
{
	g_autofree gchar *key = NULL;
	MsdMetricsFamily *family;
	MsdMetricsSeries *series;
	gboolean clash;

	if (!msd_metrics_name_valid(name, TRUE)) {
		g_critical("invalid metric name ‘%s’", name != NULL ? name : "(null)");
		return NULL;
	}
	family = msd_metrics_family_lookup(self, name, kind, &clash);
	if (clash)
		return NULL;
	key = msd_metrics_labels_key(name, kind, args);
	if (key == NULL)
		return NULL;
	if (family == NULL) {
		family = g_new0(MsdMetricsFamily, 1);
		family->help = g_strdup(help != NULL ? help : "");
		family->kind = kind;
		family->series = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
		                                       msd_metrics_series_free);
		g_hash_table_insert(self->families, g_strdup(name), family);
	}
	series = g_hash_table_lookup(family->series, key);
	if (series == NULL) {
		series = g_new0(MsdMetricsSeries, 1);
		g_hash_table_insert(family->series, g_steal_pointer(&key), series);
	}
	return series;
}

/* Finds an existing series of any type; NULL if there is none. */
static MsdMetricsSeries *
msd_metrics_series_find(MsdMetrics *self,
                        const gchar *name,
                        va_list args,
                        MsdMetricsFamily **family_out,
                        gchar **key_out)
{
	MsdMetricsFamily *family = g_hash_table_lookup(self->families, name);
	g_autofree gchar *key = msd_metrics_labels_key(name, MSD_METRICS_KIND_GAUGE, args);
	MsdMetricsSeries *series;

	if (family == NULL || key == NULL)
		return NULL;
	series = g_hash_table_lookup(family->series, key);
	if (family_out != NULL)
		*family_out = family;
	if (key_out != NULL)
		*key_out = g_steal_pointer(&key);
	return series;
}

/**
 * msd_metrics_new:
 *
 * Creates an empty registry; it renders as an empty document.
 *
 * Returns: (transfer full): a new registry
 */
MsdMetrics *
msd_metrics_new(void)
{
	return g_object_new(MSD_TYPE_METRICS, NULL);
}

/**
 * msd_metrics_counter_add:
 * @self: a registry
 * @name: the metric name, conventionally ending in `_total`
 * @help: (nullable): the help text, used when the family is created
 * @value: the increment, zero or more
 * @...: label name and value pairs, then %NULL
 *
 * Adds @value to a counter, creating it (at zero, before adding) when needed. Adding zero
 * makes the series visible without counting anything.
 */
void
msd_metrics_counter_add(MsdMetrics *self, const gchar *name, const gchar *help, gdouble value, ...)
{
	MsdMetricsSeries *series;
	va_list args;

	g_return_if_fail(MSD_IS_METRICS(self));
	g_return_if_fail(value >= 0);

	va_start(args, value);
	series = msd_metrics_series_ensure(self, name, help, MSD_METRICS_KIND_COUNTER, args);
	va_end(args);
	if (series == NULL)
		return;
	if (series->func != NULL) {
		g_critical("counter %s is read through a callback; remove it before adding to it",
		           name);
		return;
	}
	series->value += value;
}

static void
msd_metrics_gauge_update(MsdMetrics *self,
                         const gchar *name,
                         const gchar *help,
                         gdouble value,
                         gboolean add,
                         va_list args)
{
	MsdMetricsSeries *series =
	        msd_metrics_series_ensure(self, name, help, MSD_METRICS_KIND_GAUGE, args);

	if (series == NULL)
		return;
	if (series->func != NULL) {
		g_critical("gauge %s is read through a callback; remove it before setting it",
		           name);
		return;
	}
	series->value = add ? series->value + value : value;
}

/**
 * msd_metrics_gauge_set:
 * @self: a registry
 * @name: the metric name
 * @help: (nullable): the help text, used when the family is created
 * @value: the new value; any double, including infinities and NaN
 * @...: label name and value pairs, then %NULL
 *
 * Sets a gauge, creating it when needed.
 */
void
msd_metrics_gauge_set(MsdMetrics *self, const gchar *name, const gchar *help, gdouble value, ...)
{
	va_list args;

	g_return_if_fail(MSD_IS_METRICS(self));

	va_start(args, value);
	msd_metrics_gauge_update(self, name, help, value, FALSE, args);
	va_end(args);
}

/**
 * msd_metrics_gauge_add:
 * @self: a registry
 * @name: the metric name
 * @help: (nullable): the help text, used when the family is created
 * @value: the amount to add; negative to subtract
 * @...: label name and value pairs, then %NULL
 *
 * Adds to a gauge, creating it at zero when needed.
 */
void
msd_metrics_gauge_add(MsdMetrics *self, const gchar *name, const gchar *help, gdouble value, ...)
{
	va_list args;

	g_return_if_fail(MSD_IS_METRICS(self));

	va_start(args, value);
	msd_metrics_gauge_update(self, name, help, value, TRUE, args);
	va_end(args);
}

static void
msd_metrics_set_func(MsdMetrics *self,
                     const gchar *name,
                     const gchar *help,
                     MsdMetricsKind kind,
                     MsdMetricsGaugeFunc func,
                     gpointer user_data,
                     GDestroyNotify destroy,
                     va_list args)
{
	MsdMetricsSeries *series = msd_metrics_series_ensure(self, name, help, kind, args);

	if (series == NULL) {
		if (destroy != NULL)
			destroy(user_data);
		return;
	}
	msd_metrics_series_clear_func(series);
	series->func = func;
	series->user_data = user_data;
	series->destroy = destroy;
}

/**
 * msd_metrics_gauge_set_func:
 * @self: a registry
 * @name: the metric name
 * @help: (nullable): the help text, used when the family is created
 * @func: (scope notified): reads the value
 * @user_data: (closure func): data for @func
 * @destroy: (nullable): frees @user_data when the series is removed or replaced, or the
 *   registry finalized
 * @...: label name and value pairs, then %NULL
 *
 * Makes a gauge read its value from @func each time it is rendered or looked up, e.g. the
 * bytes buffered for a broker. A callback set earlier for the same series is replaced.
 * Until [method@Msd.Metrics.remove] is called for the series, @user_data must stay valid.
 */
void
msd_metrics_gauge_set_func(MsdMetrics *self,
                           const gchar *name,
                           const gchar *help,
                           MsdMetricsGaugeFunc func,
                           gpointer user_data,
                           GDestroyNotify destroy,
                           ...)
{
	va_list args;

	g_return_if_fail(MSD_IS_METRICS(self));
	g_return_if_fail(func != NULL);

	va_start(args, destroy);
	msd_metrics_set_func(self, name, help, MSD_METRICS_KIND_GAUGE, func, user_data, destroy,
	                     args);
	va_end(args);
}

/**
 * msd_metrics_counter_slot:
 * @self: a registry
 * @name: the metric name, conventionally ending in `_total`
 * @help: (nullable): the help text, used when the family is created
 * @...: label name and value pairs, then %NULL
 *
 * Finds or creates a plain counter and returns where its value is kept, so that a hot path
 * adds to it without building and looking up the series key each time. The slot belongs to
 * the registry: it stays valid until the series is removed or the registry finalized, and
 * whoever asks again for the same series gets the same slot and goes on from its count.
 *
 * Returns: (nullable): the counter's value, to add to (never subtract); %NULL on a
 *   programming error (invalid name, a family of another type, a counter read through a
 *   callback)
 */
gdouble *
msd_metrics_counter_slot(MsdMetrics *self, const gchar *name, const gchar *help, ...)
{
	MsdMetricsSeries *series;
	va_list args;

	g_return_val_if_fail(MSD_IS_METRICS(self), NULL);

	va_start(args, help);
	series = msd_metrics_series_ensure(self, name, help, MSD_METRICS_KIND_COUNTER, args);
	va_end(args);
	if (series == NULL)
		return NULL;
	if (series->func != NULL) {
		g_critical("counter %s is read through a callback; it has no slot", name);
		return NULL;
	}
	return &series->value;
}

/**
 * msd_metrics_counter_set_func:
 * @self: a registry
 * @name: the metric name, conventionally ending in `_total`
 * @help: (nullable): the help text, used when the family is created
 * @func: (scope notified): reads the count; it must never go down
 * @user_data: (closure func): data for @func
 * @destroy: (nullable): frees @user_data when the series is removed or replaced, or the
 *   registry finalized
 * @...: label name and value pairs, then %NULL
 *
 * Makes a counter read its value from @func each time it is rendered or looked up, for a
 * count another object keeps (e.g. messages a broker sent again). Otherwise as
 * [method@Msd.Metrics.gauge_set_func].
 */
void
msd_metrics_counter_set_func(MsdMetrics *self,
                             const gchar *name,
                             const gchar *help,
                             MsdMetricsGaugeFunc func,
                             gpointer user_data,
                             GDestroyNotify destroy,
                             ...)
{
	va_list args;

	g_return_if_fail(MSD_IS_METRICS(self));
	g_return_if_fail(func != NULL);

	va_start(args, destroy);
	msd_metrics_set_func(self, name, help, MSD_METRICS_KIND_COUNTER, func, user_data, destroy,
	                     args);
	va_end(args);
}

static gboolean
msd_metrics_bounds_valid(const gdouble *bounds, guint n_bounds)
{
	if (bounds == NULL || n_bounds == 0)
		return FALSE;
	for (guint i = 0; i < n_bounds; i++) {
		if (!isfinite(bounds[i]) || (i > 0 && bounds[i] <= bounds[i - 1]))
			return FALSE;
	}
	return TRUE;
}

/**
 * msd_metrics_histogram_ensure:
 * @self: a registry
 * @name: the metric name, conventionally ending in the unit (`_seconds`)
 * @help: (nullable): the help text, used when the family is created
 * @bounds: (array length=n_bounds): the buckets' upper bounds, finite and increasing; the
 *   `+Inf` bucket is implied
 * @n_bounds: the number of bounds, one or more
 * @...: label name and value pairs (not `le`), then %NULL
 *
 * Finds or creates a histogram series, empty when new. Every series of a family has the
 * bounds given when the family was created: other bounds are a programming error.
 *
 * Returns: (transfer none) (nullable): the series, owned by @self; %NULL after a critical
 */
MsdMetricsHistogram *
msd_metrics_histogram_ensure(MsdMetrics *self,
                             const gchar *name,
                             const gchar *help,
                             const gdouble *bounds,
                             guint n_bounds,
                             ...)
{
	MsdMetricsFamily *family;
	MsdMetricsSeries *series;
	va_list args;

	g_return_val_if_fail(MSD_IS_METRICS(self), NULL);
	g_return_val_if_fail(msd_metrics_bounds_valid(bounds, n_bounds), NULL);

	family = g_hash_table_lookup(self->families, name != NULL ? name : "");
	if (family != NULL && family->kind == MSD_METRICS_KIND_HISTOGRAM &&
	    (family->n_bounds != n_bounds ||
	     memcmp(family->bounds, bounds, n_bounds * sizeof(gdouble)) != 0)) {
		g_critical("histogram %s has other bucket bounds", name);
		return NULL;
	}
	va_start(args, n_bounds);
	series = msd_metrics_series_ensure(self, name, help, MSD_METRICS_KIND_HISTOGRAM, args);
	va_end(args);
	if (series == NULL)
		return NULL;
	family = g_hash_table_lookup(self->families, name);
	if (family->bounds == NULL) {
		family->bounds = g_memdup2(bounds, n_bounds * sizeof(gdouble));
		family->n_bounds = n_bounds;
	}
	if (series->histogram == NULL) {
		series->histogram =
		        g_malloc0(sizeof(MsdMetricsHistogram) + (n_bounds + 1) * sizeof(guint64));
		series->histogram->bounds = family->bounds;
		series->histogram->n_bounds = n_bounds;
	}
	return series->histogram;
}

/**
 * msd_metrics_histogram_observe:
 * @histogram: a histogram series
 * @value: the observation; NaN is counted in the `+Inf` bucket and makes the sum NaN, as
 *   Prometheus clients do
 *
 * Counts one observation. Cheap enough for every event: no allocation, no lookup by name.
 */
void
msd_metrics_histogram_observe(MsdMetricsHistogram *histogram, gdouble value)
{
	guint i = 0;

	g_return_if_fail(histogram != NULL);

	while (i < histogram->n_bounds && !(value <= histogram->bounds[i]))
		i++;
	histogram->buckets[i]++;
	histogram->count++;
	histogram->sum += value;
}

/**
 * msd_metrics_histogram_get_count:
 * @histogram: a histogram series
 *
 * Returns: the number of observations
 */
guint64
msd_metrics_histogram_get_count(const MsdMetricsHistogram *histogram)
{
	g_return_val_if_fail(histogram != NULL, 0);
	return histogram->count;
}

/**
 * msd_metrics_histogram_get_sum:
 * @histogram: a histogram series
 *
 * Returns: the sum of the observations
 */
gdouble
msd_metrics_histogram_get_sum(const MsdMetricsHistogram *histogram)
{
	g_return_val_if_fail(histogram != NULL, 0);
	return histogram->sum;
}

/**
 * msd_metrics_histogram_get_bucket:
 * @histogram: a histogram series
 * @index: a bucket, 0 to the number of bounds (the last is `+Inf`)
 *
 * Returns: the observations at or below bound @index, as the `le` bucket reports them
 *   (cumulative)
 */
guint64
msd_metrics_histogram_get_bucket(const MsdMetricsHistogram *histogram, guint index)
{
	guint64 total = 0;

	g_return_val_if_fail(histogram != NULL, 0);
	g_return_val_if_fail(index <= histogram->n_bounds, 0);

	for (guint i = 0; i <= index; i++)
		total += histogram->buckets[i];
	return total;
}

/**
 * msd_metrics_lookup:
 * @self: a registry
 * @name: the metric name
 * @value: (out) (optional): the current value
 * @...: label name and value pairs, then %NULL
 *
 * Reads the current value of a series (calling its callback, for a callback gauge; the
 * number of observations, for a histogram).
 *
 * Returns: %TRUE if the series exists
 */
gboolean
msd_metrics_lookup(MsdMetrics *self, const gchar *name, gdouble *value, ...)
{
	MsdMetricsSeries *series;
	va_list args;

	g_return_val_if_fail(MSD_IS_METRICS(self), FALSE);
	g_return_val_if_fail(name != NULL, FALSE);

	va_start(args, value);
	series = msd_metrics_series_find(self, name, args, NULL, NULL);
	va_end(args);
	if (series == NULL)
		return FALSE;
	if (value == NULL)
		return TRUE;
	if (series->histogram != NULL)
		*value = (gdouble)series->histogram->count;
	else
		*value = series->func != NULL ? series->func(series->user_data) : series->value;
	return TRUE;
}

/**
 * msd_metrics_remove:
 * @self: a registry
 * @name: the metric name
 * @...: label name and value pairs, then %NULL
 *
 * Removes one series (dropping its callback, if any); the family goes with its last series.
 *
 * Returns: %TRUE if the series existed
 */
gboolean
msd_metrics_remove(MsdMetrics *self, const gchar *name, ...)
{
	g_autofree gchar *key = NULL;
	MsdMetricsFamily *family = NULL;
	MsdMetricsSeries *series;
	va_list args;

	g_return_val_if_fail(MSD_IS_METRICS(self), FALSE);
	g_return_val_if_fail(name != NULL, FALSE);

	va_start(args, name);
	series = msd_metrics_series_find(self, name, args, &family, &key);
	va_end(args);
	if (series == NULL)
		return FALSE;
	g_hash_table_remove(family->series, key);
	if (g_hash_table_size(family->series) == 0)
		g_hash_table_remove(self->families, name);
	return TRUE;
}

/**
 * msd_metrics_format_value:
 * @value: a sample value
 *
 * Formats a sample value the way Prometheus parses it: integral values below 1e21 as plain
 * integers, other finite values in the shortest form that reads back to the same double,
 * and `+Inf`, `-Inf`, `NaN`.
 *
 * Returns: (transfer full): the text
 */
gchar *
msd_metrics_format_value(gdouble value)
{
	gchar buf[G_ASCII_DTOSTR_BUF_SIZE];
	gdouble magnitude = fabs(value);

	if (isnan(value))
		return g_strdup("NaN");
	if (isinf(value))
		return g_strdup(value > 0 ? "+Inf" : "-Inf");
	if (value == 0)
		return g_strdup("0");
	/* Every double of 2^52 or more is integral. */
	if (magnitude < 1e21 &&
	    (magnitude >= 4503599627370496.0 || value == (gdouble)(gint64)value))
		return g_strdup(g_ascii_formatd(buf, sizeof(buf), "%.0f", value));
	for (gint precision = 1; precision < 17; precision++) {
		gchar format[8];

		g_snprintf(format, sizeof(format), "%%.%dg", precision);
		g_ascii_formatd(buf, sizeof(buf), format, value);
		if (g_ascii_strtod(buf, NULL) == value)
			return g_strdup(buf);
	}
	return g_strdup(g_ascii_formatd(buf, sizeof(buf), "%.17g", value));
}

static gint
msd_metrics_strcmp(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const gchar *const *)a, *(const gchar *const *)b);
}

/* The keys of @table, sorted; free the container only. */
static const gchar **
msd_metrics_sorted_keys(GHashTable *table, guint *n_keys)
{
	const gchar **keys = (const gchar **)g_hash_table_get_keys_as_array(table, n_keys);

	qsort(keys, *n_keys, sizeof(gchar *), msd_metrics_strcmp);
	return keys;
}

/* `{a="x",le="0.5"}` from `{a="x"}` (or "") and the bound. */
static void
msd_metrics_append_bucket_labels(GString *out, const gchar *key, const gchar *le)
{
	gsize len = strlen(key);

	if (len == 0) {
		g_string_append_printf(out, "{le=\"%s\"}", le);
		return;
	}
	g_string_append_len(out, key, (gssize)len - 1);
	g_string_append_printf(out, ",le=\"%s\"}", le);
}

static void
msd_metrics_render_histogram(GString *out,
                             const gchar *name,
                             const gchar *key,
                             const MsdMetricsHistogram *histogram)
{
	g_autofree gchar *sum = msd_metrics_format_value(histogram->sum);
	guint64 cumulative = 0;

	for (guint i = 0; i <= histogram->n_bounds; i++) {
		g_autofree gchar *le = i < histogram->n_bounds
		                               ? msd_metrics_format_value(histogram->bounds[i])
		                               : g_strdup("+Inf");

		cumulative += histogram->buckets[i];
		g_string_append_printf(out, "%s_bucket", name);
		msd_metrics_append_bucket_labels(out, key, le);
		g_string_append_printf(out, " %" G_GUINT64_FORMAT "\n", cumulative);
	}
	g_string_append_printf(out, "%s_sum%s %s\n", name, key, sum);
	g_string_append_printf(out, "%s_count%s %" G_GUINT64_FORMAT "\n", name, key,
	                       histogram->count);
}

/**
 * msd_metrics_render:
 * @self: a registry
 *
 * Renders every family in the Prometheus text exposition format 0.0.4: `# HELP` and `# TYPE`
 * once per family, then one line per series (a histogram's `_bucket` lines, cumulative and
 * ending with `le="+Inf"`, then `_sum` and `_count`). Callback gauges are read now.
 *
 * Returns: (transfer full): the document; empty for an empty registry, otherwise ending in a
 *   newline
 */
gchar *
msd_metrics_render(MsdMetrics *self)
{
	g_autoptr(GString) out = g_string_new(NULL);
	g_autofree const gchar **names = NULL;
	guint n_names = 0;

	g_return_val_if_fail(MSD_IS_METRICS(self), NULL);

	names = msd_metrics_sorted_keys(self->families, &n_names);
	for (guint i = 0; i < n_names; i++) {
		MsdMetricsFamily *family = g_hash_table_lookup(self->families, names[i]);
		g_autofree const gchar **keys = NULL;
		guint n_keys = 0;

		g_string_append_printf(out, "# HELP %s ", names[i]);
		msd_metrics_escape(out, family->help, FALSE);
		g_string_append_printf(out, "\n# TYPE %s %s\n", names[i],
		                       msd_metrics_kind_to_string(family->kind));
		keys = msd_metrics_sorted_keys(family->series, &n_keys);
		for (guint j = 0; j < n_keys; j++) {
			MsdMetricsSeries *series = g_hash_table_lookup(family->series, keys[j]);
			g_autofree gchar *text = NULL;

			if (series->histogram != NULL) {
				msd_metrics_render_histogram(out, names[i], keys[j],
				                             series->histogram);
				continue;
			}
			text = msd_metrics_format_value(series->func != NULL
			                                        ? series->func(series->user_data)
			                                        : series->value);
			g_string_append_printf(out, "%s%s %s\n", names[i], keys[j], text);
		}
	}
	return g_string_free(g_steal_pointer(&out), FALSE);
}

static void
msd_metrics_finalize(GObject *object)
{
	MsdMetrics *self = MSD_METRICS(object);

	g_hash_table_unref(self->families);

	G_OBJECT_CLASS(msd_metrics_parent_class)->finalize(object);
}

static void
msd_metrics_class_init(MsdMetricsClass *klass)
{
	GObjectClass *object_class = G_OBJECT_CLASS(klass);

	object_class->finalize = msd_metrics_finalize;
}

static void
msd_metrics_init(MsdMetrics *self)
{
	self->families =
	        g_hash_table_new_full(g_str_hash, g_str_equal, g_free, msd_metrics_family_free);
}
