/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncHealth"

#include "config.h"

#include <math.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "health/msd-process-metrics.h"

/* The fields of /proc/self/stat that are read, counted from the one after the command
 * name (field 3, the state): see proc(5). */
enum {
	MSD_STAT_UTIME = 14 - 3,
	MSD_STAT_STIME = 15 - 3,
	MSD_STAT_STARTTIME = 22 - 3,
	MSD_STAT_VSIZE = 23 - 3,
	MSD_STAT_RSS = 24 - 3,
	MSD_STAT_N_FIELDS,
};

/* Reads the numeric fields of /proc/self/stat up to rss; FALSE when it cannot be read. The
 * command name may hold spaces and parentheses, so the fields start after its last ')'. */
static gboolean
msd_process_read_stat(guint64 fields[MSD_STAT_N_FIELDS])
{
	g_autofree gchar *text = NULL;
	const gchar *p;

	if (!g_file_get_contents("/proc/self/stat", &text, NULL, NULL))
		return FALSE;
	p = strrchr(text, ')');
	if (p == NULL || p[1] != ' ')
		return FALSE;
	p += 2;
	for (guint i = 0; i < MSD_STAT_N_FIELDS; i++) {
		gchar *end = NULL;

		while (*p == ' ')
			p++;
		if (i == 0) {
			/* the state, a letter */
			fields[i] = 0;
			while (*p != '\0' && *p != ' ')
				p++;
			continue;
		}
		fields[i] = g_ascii_strtoull(p, &end, 10);
		if (end == p)
			return FALSE;
		p = end;
	}
	return TRUE;
}

static gdouble
msd_process_stat_field(guint field)
{
	guint64 fields[MSD_STAT_N_FIELDS];

	if (!msd_process_read_stat(fields))
		return NAN;
	return (gdouble)fields[field];
}

static gdouble
msd_process_resident_bytes(gpointer data)
{
	return msd_process_stat_field(MSD_STAT_RSS) * (gdouble)sysconf(_SC_PAGESIZE);
}

static gdouble
msd_process_virtual_bytes(gpointer data)
{
	return msd_process_stat_field(MSD_STAT_VSIZE);
}

static gdouble
msd_process_cpu_seconds(gpointer data)
{
	guint64 fields[MSD_STAT_N_FIELDS];

	if (!msd_process_read_stat(fields))
		return NAN;
	return (gdouble)(fields[MSD_STAT_UTIME] + fields[MSD_STAT_STIME]) /
	       (gdouble)sysconf(_SC_CLK_TCK);
}

static gdouble
msd_process_open_fds(gpointer data)
{
	g_autoptr(GDir) dir = g_dir_open("/proc/self/fd", 0, NULL);
	guint n = 0;

	if (dir == NULL)
		return NAN;
	while (g_dir_read_name(dir) != NULL)
		n++;
	/* less the descriptor the listing itself holds open */
	return n > 0 ? n - 1 : 0;
}

static gdouble
msd_process_max_fds(gpointer data)
{
	struct rlimit limit;

	if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
		return NAN;
	return limit.rlim_cur == RLIM_INFINITY ? INFINITY : (gdouble)limit.rlim_cur;
}

/* The boot time from /proc/stat's btime line, in seconds since the epoch; 0 if unknown. */
static guint64
msd_process_boot_time(void)
{
	g_autofree gchar *text = NULL;
	const gchar *line;

	if (!g_file_get_contents("/proc/stat", &text, NULL, NULL))
		return 0;
	line = strstr(text, "\nbtime ");
	return line != NULL ? g_ascii_strtoull(line + 7, NULL, 10) : 0;
}

void
msd_process_metrics_register(MsdMetrics *metrics)
{
	guint64 fields[MSD_STAT_N_FIELDS];
	guint64 boot;

	g_return_if_fail(MSD_IS_METRICS(metrics));

	if (!msd_process_read_stat(fields)) {
		g_debug("/proc/self/stat cannot be read: no process_* metrics");
		return;
	}
	msd_metrics_gauge_set_func(metrics, "process_resident_memory_bytes",
	                           "Resident memory size in bytes", msd_process_resident_bytes,
	                           NULL, NULL, NULL);
	msd_metrics_gauge_set_func(metrics, "process_virtual_memory_bytes",
	                           "Virtual memory size in bytes", msd_process_virtual_bytes, NULL,
	                           NULL, NULL);
	msd_metrics_counter_set_func(metrics, "process_cpu_seconds_total",
	                             "Total user and system CPU time spent in seconds",
	                             msd_process_cpu_seconds, NULL, NULL, NULL);
	msd_metrics_gauge_set_func(metrics, "process_open_fds", "Number of open file descriptors",
	                           msd_process_open_fds, NULL, NULL, NULL);
	msd_metrics_gauge_set_func(metrics, "process_max_fds",
	                           "Maximum number of open file descriptors", msd_process_max_fds,
	                           NULL, NULL, NULL);
	boot = msd_process_boot_time();
	/* the start time does not change: read once */
	if (boot != 0)
		msd_metrics_gauge_set(metrics, "process_start_time_seconds",
		                      "Start time of the process since unix epoch in seconds",
		                      (gdouble)boot + (gdouble)fields[MSD_STAT_STARTTIME] /
		                                              (gdouble)sysconf(_SC_CLK_TCK),
		                      NULL);
}
