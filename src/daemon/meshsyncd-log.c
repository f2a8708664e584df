/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#define G_LOG_DOMAIN "MeshSyncDaemon"

#include "config.h"

#include "meshsyncd-log.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <string.h>
#include <unistd.h>

#include <libmeshsync/meshsync-error.h>

typedef struct {
	MeshsyncdLogFormat format;
	MeshsyncdLogLevel level;
	gboolean journal;
	gboolean color;
} MeshsyncdLog;

/* Until meshsyncd_log_install(): what the writer would print without options. */
static MeshsyncdLog meshsyncd_log = {MESHSYNCD_LOG_FORMAT_TEXT, MESHSYNCD_LOG_LEVEL_INFO, FALSE,
                                     FALSE};

gboolean
meshsyncd_log_parse_format(const gchar *text, MeshsyncdLogFormat *format, GError **error)
{
	if (text == NULL || g_strcmp0(text, "text") == 0) {
		*format = MESHSYNCD_LOG_FORMAT_TEXT;
		return TRUE;
	}
	if (g_strcmp0(text, "json") == 0) {
		*format = MESHSYNCD_LOG_FORMAT_JSON;
		return TRUE;
	}
	g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
	            _("--log-format must be text or json, not \"%s\""), text);
	return FALSE;
}

gboolean
meshsyncd_log_parse_level(const gchar *text, MeshsyncdLogLevel *level, GError **error)
{
	static const gchar *const names[] = {"error", "warning", "info", "debug"};

	if (text == NULL) {
		*level = MESHSYNCD_LOG_LEVEL_INFO;
		return TRUE;
	}
	for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
		if (g_ascii_strcasecmp(text, names[i]) == 0) {
			*level = (MeshsyncdLogLevel)i;
			return TRUE;
		}
	}
	g_set_error(error, MESHSYNC_ERROR, MESHSYNC_ERROR_INVALID_CONFIG,
	            _("--log-level must be error, warning, info or debug, not \"%s\""), text);
	return FALSE;
}

/* The level option that shows a message of @log_level. */
static MeshsyncdLogLevel
meshsyncd_log_level_of(GLogLevelFlags log_level)
{
	if (log_level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL))
		return MESHSYNCD_LOG_LEVEL_ERROR;
	if (log_level & G_LOG_LEVEL_WARNING)
		return MESHSYNCD_LOG_LEVEL_WARNING;
	if (log_level & (G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO))
		return MESHSYNCD_LOG_LEVEL_INFO;
	return MESHSYNCD_LOG_LEVEL_DEBUG;
}

static gboolean
meshsyncd_log_own_domain(const gchar *domain)
{
	return domain != NULL &&
	       (g_str_has_prefix(domain, "MeshSync") || g_str_has_prefix(domain, "Msd"));
}

gboolean
meshsyncd_log_wants(GLogLevelFlags log_level, const gchar *domain)
{
	MeshsyncdLogLevel level = meshsyncd_log_level_of(log_level);

	/* another library's info and debug lines are its own business, as with GLib's writer */
	if (level <= meshsyncd_log.level && (meshsyncd_log_own_domain(domain) ||
	                                     !(log_level & (G_LOG_LEVEL_INFO | G_LOG_LEVEL_DEBUG))))
		return TRUE;
	/* G_MESSAGES_DEBUG keeps its meaning for every domain, ours included */
	return (log_level & (G_LOG_LEVEL_INFO | G_LOG_LEVEL_DEBUG)) != 0 &&
	       !g_log_writer_default_would_drop(log_level & G_LOG_LEVEL_MASK, domain);
}

/* The names collectors know, after syslog's: PRIORITY says the same in numbers. */
static const gchar *
meshsyncd_log_level_name(GLogLevelFlags log_level)
{
	if (log_level & G_LOG_LEVEL_ERROR)
		return "error";
	if (log_level & G_LOG_LEVEL_CRITICAL)
		return "critical";
	if (log_level & G_LOG_LEVEL_WARNING)
		return "warning";
	if (log_level & G_LOG_LEVEL_MESSAGE)
		return "notice";
	if (log_level & G_LOG_LEVEL_INFO)
		return "info";
	return "debug";
}

/* @value (valid UTF-8) as a JSON string: only what RFC 8259 requires is escaped. */
static void
meshsyncd_log_append_json_string(GString *line, const gchar *value, gsize length)
{
	static const gchar hex[] = "0123456789abcdef";

	g_string_append_c(line, '"');
	for (gsize i = 0; i < length; i++) {
		guchar c = (guchar)value[i];

		switch (c) {
		case '"':
			g_string_append(line, "\\\"");
			break;
		case '\\':
			g_string_append(line, "\\\\");
			break;
		case '\b':
			g_string_append(line, "\\b");
			break;
		case '\f':
			g_string_append(line, "\\f");
			break;
		case '\n':
			g_string_append(line, "\\n");
			break;
		case '\r':
			g_string_append(line, "\\r");
			break;
		case '\t':
			g_string_append(line, "\\t");
			break;
		default:
			if (c < 0x20) {
				g_string_append(line, "\\u00");
				g_string_append_c(line, hex[c >> 4]);
				g_string_append_c(line, hex[c & 0xf]);
			} else {
				g_string_append_c(line, (gchar)c);
			}
		}
	}
	g_string_append_c(line, '"');
}

static void
meshsyncd_log_append_value(GString *line, const gchar *value, gssize length)
{
	gsize n = length < 0 ? strlen(value) : (gsize)length;

	if (g_utf8_validate(value, (gssize)n, NULL)) {
		meshsyncd_log_append_json_string(line, value, n);
	} else {
		g_autofree gchar *valid = g_utf8_make_valid(value, (gssize)n);

		meshsyncd_log_append_json_string(line, valid, strlen(valid));
	}
}

/* Fields the JSON line spells as its own keys, or that only GLib reads. */
static gboolean
meshsyncd_log_field_is_builtin(const gchar *key)
{
	return g_strcmp0(key, "MESSAGE") == 0 || g_strcmp0(key, "GLIB_DOMAIN") == 0 ||
	       g_strcmp0(key, "PRIORITY") == 0 || g_strcmp0(key, "GLIB_OLD_LOG_API") == 0;
}

static gchar *
meshsyncd_log_format_json(GLogLevelFlags log_level, const GLogField *fields, gsize n_fields)
{
	GString *line = g_string_sized_new(256);
	gint64 now = g_get_real_time();
	g_autoptr(GDateTime) time = g_date_time_new_from_unix_utc(now / G_USEC_PER_SEC);
	g_autofree gchar *stamp = g_date_time_format(time, "%Y-%m-%dT%H:%M:%S");
	const gchar *message = "";
	gssize message_length = 0;
	const gchar *domain = NULL;

	for (gsize i = 0; i < n_fields; i++) {
		if (g_strcmp0(fields[i].key, "MESSAGE") == 0) {
			message = fields[i].value;
			message_length = fields[i].length;
		} else if (g_strcmp0(fields[i].key, "GLIB_DOMAIN") == 0) {
			domain = fields[i].value;
		}
	}
	g_string_append_printf(
	        line, "{\"timestamp\":\"%s.%03dZ\",\"level\":\"%s\",\"domain\":", stamp,
	        (gint)(now % G_USEC_PER_SEC / 1000), meshsyncd_log_level_name(log_level));
	meshsyncd_log_append_value(line, domain != NULL ? domain : "", -1);
	g_string_append(line, ",\"message\":");
	meshsyncd_log_append_value(line, message != NULL ? message : "", message_length);
	for (gsize i = 0; i < n_fields; i++) {
		if (meshsyncd_log_field_is_builtin(fields[i].key) || fields[i].value == NULL)
			continue;
		g_string_append_c(line, ',');
		meshsyncd_log_append_value(line, fields[i].key, -1);
		g_string_append_c(line, ':');
		meshsyncd_log_append_value(line, fields[i].value, fields[i].length);
	}
	g_string_append(line, "}\n");
	return g_string_free(line, FALSE);
}

/* One write(2) a line, so that lines of several threads never interleave. */
static gboolean
meshsyncd_log_write_stderr(const gchar *line)
{
	gsize left = strlen(line);

	while (left > 0) {
		gssize n = write(STDERR_FILENO, line, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return FALSE;
		line += n;
		left -= (gsize)n;
	}
	return TRUE;
}

static GLogWriterOutput
meshsyncd_log_writer(GLogLevelFlags log_level,
                     const GLogField *fields,
                     gsize n_fields,
                     gpointer user_data)
{
	const gchar *domain = NULL;
	g_autofree gchar *line = NULL;

	(void)user_data;
	for (gsize i = 0; i < n_fields; i++) {
		if (g_strcmp0(fields[i].key, "GLIB_DOMAIN") == 0) {
			domain = fields[i].value;
			break;
		}
	}
	if (!meshsyncd_log_wants(log_level, domain))
		return G_LOG_WRITER_HANDLED;
	if (meshsyncd_log.format == MESHSYNCD_LOG_FORMAT_JSON) {
		line = meshsyncd_log_format_json(log_level, fields, n_fields);
	} else {
		gchar *text = NULL;

		if (meshsyncd_log.journal && g_log_writer_journald(log_level, fields, n_fields,
		                                                   NULL) == G_LOG_WRITER_HANDLED)
			return G_LOG_WRITER_HANDLED;
		text = g_log_writer_format_fields(log_level, fields, n_fields, meshsyncd_log.color);
		line = g_strconcat(text, "\n", NULL);
		g_free(text);
	}
	return meshsyncd_log_write_stderr(line) ? G_LOG_WRITER_HANDLED : G_LOG_WRITER_UNHANDLED;
}

void
meshsyncd_log_install(MeshsyncdLogFormat format, MeshsyncdLogLevel level)
{
	meshsyncd_log.format = format;
	meshsyncd_log.level = level;
	meshsyncd_log.journal =
	        format == MESHSYNCD_LOG_FORMAT_TEXT && g_log_writer_is_journald(STDERR_FILENO);
	meshsyncd_log.color =
	        format == MESHSYNCD_LOG_FORMAT_TEXT && g_log_writer_supports_color(STDERR_FILENO);
	g_log_set_writer_func(meshsyncd_log_writer, NULL, NULL);
}

void
meshsyncd_log_set_level(MeshsyncdLogLevel level)
{
	meshsyncd_log.level = level;
}
