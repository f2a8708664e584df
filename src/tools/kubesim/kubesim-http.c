/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-server.h"

#include <string.h>
#include <zlib.h>

#include "kubesim-json.h"
#include "util/msd-yaml.h"

/* libsoup 3.2 knows no phrase for some codes Kubernetes uses */
static void
set_status(SoupServerMessage *msg, guint code)
{
	soup_server_message_set_status(msg, code, code == 429 ? "Too Many Requests" : NULL);
}

void
kubesim_respond_json_take(SoupServerMessage *msg, guint code, gchar *json)
{
	gsize len = strlen(json);

	set_status(msg, code);
	/* Go's JSON encoder ends what it writes with a newline */
	json = g_realloc(json, len + 2);
	json[len++] = '\n';
	json[len] = '\0';
	soup_server_message_set_response(msg, "application/json", SOUP_MEMORY_TAKE, json, len);
}

void
kubesim_respond_json(SoupServerMessage *msg, guint code, const gchar *json)
{
	kubesim_respond_json_take(msg, code, g_strdup(json));
}

void
kubesim_respond_status(SoupServerMessage *msg, KubesimStatus *status)
{
	guint code = status->code;

	/* the API server says details.retryAfterSeconds in the header too */
	if (status->retry_after > 0) {
		g_autofree gchar *value = g_strdup_printf("%u", status->retry_after);
		soup_message_headers_replace(soup_server_message_get_response_headers(msg),
		                             "Retry-After", value);
	}
	if (kubesim_negotiate_compact_errors(msg)) {
		kubesim_respond_json_take(msg, code, kubesim_status_to_json(status));
	} else {
		/* no media range the Status encoder can serve: the API server writes it with Go's
		 * json.MarshalIndent, and no newline after it */
		g_autofree gchar *compact = kubesim_status_to_json(status);
		gchar *indented = kubesim_json_indent(compact);

		set_status(msg, code);
		soup_server_message_set_response(msg, "application/json", SOUP_MEMORY_TAKE,
		                                 indented, strlen(indented));
	}
	kubesim_status_free(status);
}

void
kubesim_respond_text(SoupServerMessage *msg, guint code, const gchar *text)
{
	set_status(msg, code);
	soup_server_message_set_response(msg, "text/plain; charset=utf-8", SOUP_MEMORY_COPY, text,
	                                 strlen(text));
}

void
kubesim_respond_http_error(SoupServerMessage *msg, guint code, const gchar *text)
{
	/* what Go's http.Error writes */
	soup_message_headers_replace(soup_server_message_get_response_headers(msg),
	                             "X-Content-Type-Options", "nosniff");
	kubesim_respond_text(msg, code, text);
}

void
kubesim_respond_not_found_page(SoupServerMessage *msg)
{
	kubesim_respond_http_error(msg, 404, "404 page not found\n");
}

/* --no-compression: the API server's APIResponseCompression and WatchListCompression off */
static gboolean compression = TRUE;

void
kubesim_set_compression(gboolean enabled)
{
	compression = enabled;
}

gboolean
kubesim_accepts_gzip(SoupServerMessage *msg)
{
	const gchar *encoding = soup_message_headers_get_list(
	        soup_server_message_get_request_headers(msg), "Accept-Encoding");
	g_auto(GStrv) tokens = NULL;

	if (encoding == NULL || !compression)
		return FALSE;
	/* the API server's negotiation: a token that is exactly "gzip" (a q-value makes it
	 * another token) */
	tokens = g_strsplit(encoding, ",", -1);
	for (guint i = 0; tokens[i] != NULL; i++) {
		if (g_strcmp0(g_strstrip(tokens[i]), "gzip") == 0)
			return TRUE;
	}
	return FALSE;
}

struct _KubesimGzip {
	z_stream z;
};

KubesimGzip *
kubesim_gzip_new(void)
{
	KubesimGzip *gz = g_new0(KubesimGzip, 1);

	/* level 1, the API server's defaultGzipContentEncodingLevel; 16 + 15: a gzip wrapper */
	if (deflateInit2(&gz->z, 1, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		g_error("zlib: cannot start a gzip stream");
	return gz;
}

void
kubesim_gzip_free(KubesimGzip *gz)
{
	if (gz == NULL)
		return;
	deflateEnd(&gz->z);
	g_free(gz);
}

GBytes *
kubesim_gzip_write(KubesimGzip *gz, const void *data, gsize len, gboolean finish)
{
	GByteArray *out = g_byte_array_sized_new(finish ? len / 2 + 64 : len / 2);
	int ret;

	gz->z.next_in = (Bytef *)data;
	gz->z.avail_in = (uInt)len;
	do {
		gsize used = out->len;

		g_byte_array_set_size(out, used + MAX(len / 2, 16384));
		gz->z.next_out = out->data + used;
		gz->z.avail_out = (uInt)(out->len - used);
		ret = deflate(&gz->z, finish ? Z_FINISH : Z_NO_FLUSH);
		g_byte_array_set_size(out, out->len - gz->z.avail_out);
		g_assert(ret == Z_OK || ret == Z_STREAM_END || ret == Z_BUF_ERROR);
	} while (finish ? ret != Z_STREAM_END : gz->z.avail_in > 0 || gz->z.avail_out == 0);
	if (finish)
		deflateReset(&gz->z);
	return g_byte_array_free_to_bytes(out);
}

void
kubesim_maybe_gzip(SoupServerMessage *msg)
{
	SoupMessageBody *body = soup_server_message_get_response_body(msg);
	SoupMessageHeaders *headers = soup_server_message_get_response_headers(msg);
	g_autoptr(GPtrArray) out = NULL;
	KubesimGzip *gz;
	goffset offset = 0;
	GBytes *chunk;

	if (body->length <= KUBESIM_GZIP_THRESHOLD || !kubesim_accepts_gzip(msg))
		return;
	out = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
	gz = kubesim_gzip_new();
	while ((chunk = soup_message_body_get_chunk(body, offset)) != NULL) {
		gsize size;
		const guint8 *data = g_bytes_get_data(chunk, &size);

		offset += size;
		g_ptr_array_add(out, kubesim_gzip_write(gz, data, size, offset >= body->length));
		g_bytes_unref(chunk);
	}
	kubesim_gzip_free(gz);
	soup_message_body_truncate(body);
	for (guint i = 0; i < out->len; i++) {
		if (g_bytes_get_size(g_ptr_array_index(out, i)) > 0)
			soup_message_body_append_bytes(body, g_ptr_array_index(out, i));
	}
	soup_message_headers_replace(headers, "Content-Encoding", "gzip");
	soup_message_headers_replace(headers, "Vary", "Accept-Encoding");
}

const gchar *
kubesim_query_get(GHashTable *query, const gchar *key)
{
	return query != NULL ? g_hash_table_lookup(query, key) : NULL;
}

gboolean
kubesim_query_bool(GHashTable *query, const gchar *key, gboolean fallback)
{
	static const gchar *const yes[] = {"1", "t", "T", "true", "TRUE", "True", NULL};
	static const gchar *const no[] = {"0", "f", "F", "false", "FALSE", "False", NULL};
	const gchar *value = kubesim_query_get(query, key);

	if (value == NULL)
		return fallback;
	if (g_strv_contains(yes, value))
		return TRUE;
	if (g_strv_contains(no, value))
		return FALSE;
	return fallback;
}

/* Whether one media range of Accept has all the given parameters. */
static gboolean
accept_has(SoupServerMessage *msg, const gchar *const *params)
{
	const gchar *accept = soup_message_headers_get_list(
	        soup_server_message_get_request_headers(msg), "Accept");
	g_auto(GStrv) ranges = NULL;
	guint i, j;

	if (accept == NULL)
		return FALSE;
	ranges = g_strsplit(accept, ",", -1);
	for (i = 0; ranges[i] != NULL; i++) {
		g_auto(GStrv) parts = g_strsplit(ranges[i], ";", -1);
		gboolean all = TRUE;
		for (j = 0; params[j] != NULL && all; j++) {
			guint k;
			gboolean found = FALSE;
			for (k = 1; parts[k] != NULL; k++) {
				g_autofree gchar *p = g_strstrip(g_strdup(parts[k]));
				if (g_strcmp0(p, params[j]) == 0)
					found = TRUE;
			}
			all = found;
		}
		if (all)
			return TRUE;
	}
	return FALSE;
}

gboolean
kubesim_wants_table(SoupServerMessage *msg)
{
	static const gchar *const params[] = {"as=Table", "g=meta.k8s.io", NULL};

	return accept_has(msg, params);
}

gboolean
kubesim_wants_aggregated(SoupServerMessage *msg)
{
	static const gchar *const params[] = {"as=APIGroupDiscoveryList", "g=apidiscovery.k8s.io",
	                                      "v=v2", NULL};

	return accept_has(msg, params);
}

GBytes *
kubesim_request_body(SoupServerMessage *msg)
{
	SoupMessageBody *body = soup_server_message_get_request_body(msg);

	return soup_message_body_flatten(body);
}

GBytes *
kubesim_body_to_json(GBytes *body, gboolean yaml_ok, KubesimStatus **status_out)
{
	gsize len = 0;
	const gchar *data = body != NULL ? g_bytes_get_data(body, &len) : NULL;
	g_autoptr(JsonNode) node = NULL;
	g_autoptr(GError) error = NULL;
	gsize i = 0;

	while (i < len && g_ascii_isspace(data[i]))
		i++;
	if (i == len) {
		*status_out = kubesim_status_new(400, "BadRequest", "the request body is empty");
		return NULL;
	}
	if (data[i] == '{' || !yaml_ok)
		node = kubesim_json_parse(data, len, &error);
	else
		node = msd_yaml_parse_document(data, len, "request body", &error);
	if (node == NULL) {
		*status_out = kubesim_status_new(400, "BadRequest", "%s", error->message);
		return NULL;
	}
	if (!JSON_NODE_HOLDS_OBJECT(node)) {
		*status_out =
		        kubesim_status_new(422, "Invalid", "the request body is not a JSON object");
		return NULL;
	}
	return kubesim_json_node_to_bytes(node);
}

/* Repeated query parameters, which libsoup's decoded table collapses: every value of @key. */
GPtrArray *
kubesim_query_get_all(SoupServerMessage *msg, const gchar *key)
{
	GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
	const gchar *query = g_uri_get_query(soup_server_message_get_uri(msg));
	g_auto(GStrv) pairs = NULL;

	if (query == NULL)
		return out;
	pairs = g_strsplit(query, "&", -1);
	for (guint i = 0; pairs[i] != NULL; i++) {
		gchar *eq = strchr(pairs[i], '=');
		g_autofree gchar *name = NULL;
		g_autofree gchar *value = NULL;

		/* form encoding: '+' is a space, as Go's url.ParseQuery reads it */
		g_strdelimit(pairs[i], "+", ' ');
		name = g_uri_unescape_segment(pairs[i], eq, NULL);
		if (name == NULL || g_strcmp0(name, key) != 0)
			continue;
		value = g_uri_unescape_string(eq != NULL ? eq + 1 : "", NULL);
		if (value != NULL)
			g_ptr_array_add(out, g_steal_pointer(&value));
	}
	return out;
}
