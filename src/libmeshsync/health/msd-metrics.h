/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

/* The content type of [method@Msd.Metrics.render] output (Prometheus text format 0.0.4). */
#define MSD_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

#define MSD_TYPE_METRICS (msd_metrics_get_type())
G_DECLARE_FINAL_TYPE(MsdMetrics, msd_metrics, MSD, METRICS, GObject)

/**
 * MsdMetricsGaugeFunc:
 * @user_data: the data given when the gauge was registered
 *
 * Reads the current value of a gauge; called on the loop thread, at scrape time.
 *
 * Returns: the value
 */
typedef gdouble (*MsdMetricsGaugeFunc)(gpointer user_data);

/**
 * MsdMetricsHistogram:
 *
 * One histogram series, owned by its registry: valid until the series is removed or the
 * registry finalized. Observing into it costs a few comparisons and never allocates.
 */
typedef struct _MsdMetricsHistogram MsdMetricsHistogram;

MsdMetrics *msd_metrics_new(void);

void msd_metrics_counter_add(MsdMetrics *self,
                             const gchar *name,
                             const gchar *help,
                             gdouble value,
                             ...) G_GNUC_NULL_TERMINATED;
void msd_metrics_gauge_set(MsdMetrics *self,
                           const gchar *name,
                           const gchar *help,
                           gdouble value,
                           ...) G_GNUC_NULL_TERMINATED;
void msd_metrics_gauge_add(MsdMetrics *self,
                           const gchar *name,
                           const gchar *help,
                           gdouble value,
                           ...) G_GNUC_NULL_TERMINATED;
void msd_metrics_gauge_set_func(MsdMetrics *self,
                                const gchar *name,
                                const gchar *help,
                                MsdMetricsGaugeFunc func,
                                gpointer user_data,
                                GDestroyNotify destroy,
                                ...) G_GNUC_NULL_TERMINATED;
void msd_metrics_counter_set_func(MsdMetrics *self,
                                  const gchar *name,
                                  const gchar *help,
                                  MsdMetricsGaugeFunc func,
                                  gpointer user_data,
                                  GDestroyNotify destroy,
                                  ...) G_GNUC_NULL_TERMINATED;
gdouble *msd_metrics_counter_slot(MsdMetrics *self, const gchar *name, const gchar *help, ...)
        G_GNUC_NULL_TERMINATED;
MsdMetricsHistogram *msd_metrics_histogram_ensure(MsdMetrics *self,
                                                  const gchar *name,
                                                  const gchar *help,
                                                  const gdouble *bounds,
                                                  guint n_bounds,
                                                  ...) G_GNUC_NULL_TERMINATED;
void msd_metrics_histogram_observe(MsdMetricsHistogram *histogram, gdouble value);
guint64 msd_metrics_histogram_get_count(const MsdMetricsHistogram *histogram);
gdouble msd_metrics_histogram_get_sum(const MsdMetricsHistogram *histogram);
guint64 msd_metrics_histogram_get_bucket(const MsdMetricsHistogram *histogram, guint index);

gboolean
msd_metrics_lookup(MsdMetrics *self, const gchar *name, gdouble *value, ...) G_GNUC_NULL_TERMINATED;
gboolean msd_metrics_remove(MsdMetrics *self, const gchar *name, ...) G_GNUC_NULL_TERMINATED;
gchar *msd_metrics_render(MsdMetrics *self);

gchar *msd_metrics_format_value(gdouble value);

G_END_DECLS
