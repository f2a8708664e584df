/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-kubelet.h"

#include <stdlib.h>
#include <string.h>

#include "kubesim-fields.h"
#include "kubesim-workload.h"
#include "kubesim-write.h"

/*
 * Only the status is tokenized (it is the object's last member, a fifth of a pod) and the
 * kubelet's managedFields entry is found by its fixed opening: a status update then costs a
 * few microseconds, where parsing the whole pod would cost several times that.
 */

#define STATUS_MEMBER ",\"status\":{"

void
kubesim_edits_init(KubesimEdits *edits)
{
	edits->splices = g_array_sized_new(FALSE, FALSE, sizeof(KubesimSplice), 16);
	edits->text = g_string_sized_new(1024);
	msd_json_tokens_init(&edits->tokens);
}

void
kubesim_edits_clear(KubesimEdits *edits)
{
	g_array_unref(edits->splices);
	g_string_free(edits->text, TRUE);
	msd_json_tokens_clear(&edits->tokens);
}

void
kubesim_edits_reset(KubesimEdits *edits)
{
	g_array_set_size(edits->splices, 0);
	g_string_truncate(edits->text, 0);
}

/* Starts a splice replacing @length bytes at @offset; the caller appends its text to
 * edits->text and then calls edit_close(). */
static void
edit_open(KubesimEdits *edits, gsize offset, gsize length)
{
	KubesimSplice sp = {offset, length, edits->text->len, 0};

	g_array_append_val(edits->splices, sp);
}

static void
edit_close(KubesimEdits *edits)
{
	KubesimSplice *sp = &g_array_index(edits->splices, KubesimSplice, edits->splices->len - 1);

	sp->text_len = edits->text->len - sp->text_off;
}

static void
edit_literal(KubesimEdits *edits, gsize offset, gsize length, const gchar *text)
{
	edit_open(edits, offset, length);
	g_string_append(edits->text, text);
	edit_close(edits);
}

static gint
splice_compare(gconstpointer a, gconstpointer b)
{
	const KubesimSplice *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Offset in the pod's JSON of token @tok (quotes included) and its length. */
static gsize
token_offset(const MsdJsonTokens *doc, const gchar *js, gint tok, gsize *length)
{
	const gchar *span = msd_json_tokens_span(doc, tok, length);

	return (gsize)(span - js);
}

static void
edit_token(KubesimEdits *edits, const MsdJsonTokens *doc, const gchar *js, gint tok)
{
	gsize length;
	gsize offset = token_offset(doc, js, tok, &length);

	edit_open(edits, offset, length);
}

static void
edit_token_literal(
        KubesimEdits *edits, const MsdJsonTokens *doc, const gchar *js, gint tok, const gchar *text)
{
	edit_token(edits, doc, js, tok);
	g_string_append(edits->text, text);
	edit_close(edits);
}

static void
append_condition(GString *s, const gchar *type, gint64 now, const gchar *unready)
{
	g_string_append(s, "{\"type\":");
	kubesim_append_plain(s, type);
	g_string_append(s, unready == NULL ? ",\"status\":\"True\"" : ",\"status\":\"False\"");
	g_string_append(s, ",\"lastProbeTime\":null,\"lastTransitionTime\":");
	kubesim_append_time(s, now);
	if (unready != NULL) {
		g_string_append(s,
		                ",\"reason\":\"ContainersNotReady\",\"message\":\"containers with "
		                "unready status: [");
		g_string_append(s, unready);
		g_string_append(s, "]\"");
	}
	g_string_append_c(s, '}');
}

/* Sets the Ready and ContainersReady conditions; @unready names the containers that are not. */
static void
edit_conditions(KubesimEdits *edits,
                const MsdJsonTokens *st,
                const gchar *js,
                gint conditions,
                gint64 now,
                const gchar *unready)
{
	gint i, n = msd_json_tokens_size(st, conditions);
	gint el = conditions + 1;

	for (i = 0; i < n; i++, el = msd_json_tokens_skip(st, el)) {
		gint type = msd_json_tokens_member(st, el, "type");
		const gchar *name = NULL;
		if (msd_json_tokens_string_equals(st, type, "Ready"))
			name = "Ready";
		else if (msd_json_tokens_string_equals(st, type, "ContainersReady"))
			name = "ContainersReady";
		if (name == NULL)
			continue;
		edit_token(edits, st, js, el);
		append_condition(edits->text, name, now, unready);
		edit_close(edits);
	}
}

/* The kubelet's managedFields entry: its time, and whether it owns reason and message of the
 * two conditions (it does while they are False). */
static void
edit_kubelet_entry(KubesimEdits *edits, const gchar *js, gsize end, gint64 now, gboolean ready)
{
	static const gchar *const conditions[] = {KUBESIM_FIELDS_CONDITION("ContainersReady"),
	                                          KUBESIM_FIELDS_CONDITION("Ready")};
	const gchar *entry = kubesim_find(js, end, KUBESIM_FIELDS_KUBELET_ENTRY);
	gsize at, rm_len = strlen(KUBESIM_FIELDS_REASON_MESSAGE);
	gchar text[KUBESIM_TIME_LEN + 1];
	guint i;

	if (entry == NULL)
		return;
	at = (gsize)(entry - js) + strlen(KUBESIM_FIELDS_KUBELET_ENTRY);
	/* a time as the server writes it, to the second, or the entry is left alone */
	if (at + KUBESIM_TIME_LEN >= end || js[at + KUBESIM_TIME_LEN - 1] != 'Z' ||
	    js[at + KUBESIM_TIME_LEN] != '"')
		return;
	kubesim_format_time(text, now);
	edit_literal(edits, at, KUBESIM_TIME_LEN, text);
	for (i = 0; i < G_N_ELEMENTS(conditions); i++) {
		const gchar *cond = kubesim_find(js + at, end - at, conditions[i]);
		gsize pos;
		gboolean owned;
		if (cond == NULL)
			continue;
		pos = (gsize)(cond - js) + strlen(conditions[i]);
		owned = pos + rm_len <= end &&
		        memcmp(js + pos, KUBESIM_FIELDS_REASON_MESSAGE, rm_len) == 0;
		if (ready && owned)
			edit_literal(edits, pos, rm_len, "");
		else if (!ready && !owned)
			edit_literal(edits, pos, 0, KUBESIM_FIELDS_REASON_MESSAGE);
	}
}

static void
append_container_id(GString *s, GRand *rand)
{
	gchar id[65];

	kubesim_random_hex(rand, id, 64);
	g_string_append(s, "\"containerd://");
	g_string_append(s, id);
	g_string_append_c(s, '"');
}

static void
append_running(GString *s, gint64 now)
{
	g_string_append(s, "{\"running\":{\"startedAt\":");
	kubesim_append_time(s, now);
	g_string_append(s, "}}");
}

/* A container status goes (back) to running and ready under a new container ID. */
static gboolean
edit_start_container(KubesimEdits *edits,
                     const MsdJsonTokens *st,
                     const gchar *js,
                     gint cs,
                     gint64 now,
                     GRand *rand)
{
	gint state = msd_json_tokens_member(st, cs, "state");
	gint ready = msd_json_tokens_member(st, cs, "ready");
	gint started = msd_json_tokens_member(st, cs, "started");
	gint image = msd_json_tokens_member(st, cs, "image");
	gint image_id = msd_json_tokens_member(st, cs, "imageID");
	gint container_id = msd_json_tokens_member(st, cs, "containerID");

	if (state < 0 || ready < 0 || started < 0 || image_id < 0 ||
	    !msd_json_tokens_is_string(st, image_id))
		return FALSE;
	edit_token(edits, st, js, state);
	append_running(edits->text, now);
	edit_close(edits);
	edit_token_literal(edits, st, js, ready, "true");
	if (msd_json_tokens_string_equals(st, image_id, "") || container_id < 0) {
		/* containers being created have neither yet */
		g_autofree gchar *name = msd_json_tokens_dup_string(st, image);
		g_autofree gchar *id = NULL;
		if (name == NULL)
			return FALSE;
		id = kubesim_workload_image_id(name);
		edit_token(edits, st, js, image_id);
		kubesim_append_plain(edits->text, id);
		if (container_id < 0) {
			g_string_append(edits->text, ",\"containerID\":");
			append_container_id(edits->text, rand);
		}
		edit_close(edits);
	}
	if (container_id >= 0) {
		edit_token(edits, st, js, container_id);
		append_container_id(edits->text, rand);
		edit_close(edits);
	}
	edit_token_literal(edits, st, js, started, "true");
	return TRUE;
}

/* The application container exits; the kubelet backs off before restarting it. */
static gboolean
edit_crash_container(KubesimEdits *edits,
                     const MsdJsonTokens *st,
                     const gchar *js,
                     gint cs,
                     KubesimObject *pod,
                     gint64 now,
                     GRand *rand)
{
	gint name = msd_json_tokens_member(st, cs, "name");
	gint state = msd_json_tokens_member(st, cs, "state");
	gint running = msd_json_tokens_member(st, state, "running");
	gint started_at = msd_json_tokens_member(st, running, "startedAt");
	gint last_state = msd_json_tokens_member(st, cs, "lastState");
	gint ready = msd_json_tokens_member(st, cs, "ready");
	gint restarts = msd_json_tokens_member(st, cs, "restartCount");
	gint started = msd_json_tokens_member(st, cs, "started");
	gint container_id = msd_json_tokens_member(st, cs, "containerID");
	gboolean oom = g_rand_int_range(rand, 0, 4) == 0;
	g_autofree gchar *restart_text = NULL;
	gsize length;
	const gchar *raw;

	if (!msd_json_tokens_is_string(st, name) || started_at < 0 || last_state < 0 || ready < 0 ||
	    restarts < 0 || started < 0 || msd_json_tokens_type(st, restarts) != MSD_JSON_NUMBER)
		return FALSE;
	edit_token(edits, st, js, state);
	g_string_append(edits->text, "{\"waiting\":{\"reason\":\"CrashLoopBackOff\",\"message\":"
	                             "\"back-off 10s restarting failed container=");
	raw = msd_json_tokens_raw(st, name, &length);
	g_string_append_len(edits->text, raw, (gssize)length);
	g_string_append(edits->text, " pod=");
	g_string_append(edits->text, pod->name);
	g_string_append_c(edits->text, '_');
	g_string_append(edits->text, pod->namespace_ != NULL ? pod->namespace_ : "");
	g_string_append_c(edits->text, '(');
	g_string_append(edits->text, pod->uid != NULL ? pod->uid : "");
	g_string_append(edits->text, ")\"}}");
	edit_close(edits);

	edit_token(edits, st, js, last_state);
	g_string_append(edits->text,
	                oom ? "{\"terminated\":{\"exitCode\":137,\"reason\":\"OOMKilled\""
	                    : "{\"terminated\":{\"exitCode\":1,\"reason\":\"Error\"");
	g_string_append(edits->text, ",\"startedAt\":");
	raw = msd_json_tokens_span(st, started_at, &length);
	g_string_append_len(edits->text, raw, (gssize)length);
	g_string_append(edits->text, ",\"finishedAt\":");
	kubesim_append_time(edits->text, now);
	if (container_id >= 0) {
		g_string_append(edits->text, ",\"containerID\":");
		raw = msd_json_tokens_span(st, container_id, &length);
		g_string_append_len(edits->text, raw, (gssize)length);
	}
	g_string_append(edits->text, "}}");
	edit_close(edits);

	edit_token_literal(edits, st, js, ready, "false");
	raw = msd_json_tokens_raw(st, restarts, &length);
	restart_text = g_strdup_printf("%" G_GUINT64_FORMAT, g_ascii_strtoull(raw, NULL, 10) + 1);
	edit_token_literal(edits, st, js, restarts, restart_text);
	edit_token_literal(edits, st, js, started, "false");
	return TRUE;
}

gboolean
kubesim_kubelet_update(KubesimObject *pod, gint64 now, GRand *rand, KubesimEdits *edits)
{
	MsdJsonTokens *st = &edits->tokens;
	g_autoptr(GBytes) json = kubesim_object_get_json(pod);
	gsize len;
	const gchar *js = g_bytes_get_data(json, &len);
	const gchar *member =
	        len > 0 && js[len - 1] == '}' ? kubesim_find_last(js, len, STATUS_MEMBER) : NULL;
	gsize status_off;
	gint phase, conditions, statuses, first;
	gboolean ready_after;

	kubesim_edits_reset(edits);
	if (member == NULL)
		return FALSE;
	status_off = (gsize)(member - js) + strlen(STATUS_MEMBER) - 1;
	/* the status is the last member: it ends right before the object's closing brace */
	if (!msd_json_tokens_parse(st, js + status_off, len - 1 - status_off, NULL) ||
	    !msd_json_tokens_is_object(st, 0))
		return FALSE;
	phase = msd_json_tokens_member(st, 0, "phase");
	conditions = msd_json_tokens_member(st, 0, "conditions");
	statuses = msd_json_tokens_member(st, 0, "containerStatuses");
	if (!msd_json_tokens_is_array(st, conditions) || !msd_json_tokens_is_array(st, statuses) ||
	    msd_json_tokens_size(st, statuses) == 0)
		return FALSE;
	first = statuses + 1;

	if (msd_json_tokens_string_equals(st, phase, "Pending")) {
		gint i, cs = first;
		for (i = 0; i < msd_json_tokens_size(st, statuses);
		     i++, cs = msd_json_tokens_skip(st, cs)) {
			if (!edit_start_container(edits, st, js, cs, now, rand))
				return FALSE;
		}
		edit_token_literal(edits, st, js, phase, "\"Running\"");
		edit_conditions(edits, st, js, conditions, now, NULL);
		ready_after = TRUE;
	} else if (msd_json_tokens_string_equals(st, phase, "Running")) {
		gint ready = msd_json_tokens_member(st, first, "ready");
		if (msd_json_tokens_type(st, ready) == MSD_JSON_TRUE) {
			g_autofree gchar *name = msd_json_tokens_dup_string(
			        st, msd_json_tokens_member(st, first, "name"));
			if (name == NULL || strpbrk(name, "\"\\") != NULL ||
			    !edit_crash_container(edits, st, js, first, pod, now, rand))
				return FALSE;
			edit_conditions(edits, st, js, conditions, now, name);
			ready_after = FALSE;
		} else {
			if (!edit_start_container(edits, st, js, first, now, rand))
				return FALSE;
			edit_conditions(edits, st, js, conditions, now, NULL);
			ready_after = TRUE;
		}
	} else {
		return FALSE;
	}
	edit_kubelet_entry(edits, js, status_off, now, ready_after);
	g_array_sort(edits->splices, splice_compare);
	return TRUE;
}
