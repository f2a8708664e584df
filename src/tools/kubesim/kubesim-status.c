/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#include "kubesim-status.h"

#include "kubesim-json.h"

KubesimStatus *
kubesim_status_new(guint code, const gchar *reason, const gchar *format, ...)
{
	KubesimStatus *status = g_new0(KubesimStatus, 1);
	va_list args;

	status->code = code;
	status->reason = g_strdup(reason);
	va_start(args, format);
	status->message = g_strdup_vprintf(format, args);
	va_end(args);
	return status;
}

KubesimStatus *
kubesim_status_new_details(guint code, const gchar *reason, const gchar *message)
{
	KubesimStatus *status = kubesim_status_new(code, reason, "%s", message);

	status->details_always = TRUE;
	return status;
}

KubesimStatus *
kubesim_status_details(KubesimStatus *status,
                       const gchar *group,
                       const gchar *kind,
                       const gchar *name)
{
	g_free(status->group);
	g_free(status->kind);
	g_free(status->name);
	status->group = g_strdup(group);
	status->kind = g_strdup(kind);
	status->name = g_strdup(name);
	return status;
}

void
kubesim_status_free(KubesimStatus *status)
{
	if (status == NULL)
		return;
	g_free(status->reason);
	g_free(status->message);
	g_free(status->name);
	g_free(status->group);
	g_free(status->kind);
	g_free(status->cause_field);
	g_free(status->cause_reason);
	g_free(status->cause_message);
	g_free(status);
}

gchar *
kubesim_status_to_json(const KubesimStatus *status)
{
	GString *out = g_string_new("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
	                            "\"status\":\"Failure\",\"message\":");
	gboolean details = status->name != NULL || status->kind != NULL || status->group != NULL ||
	                   status->cause_field != NULL || status->cause_reason != NULL ||
	                   status->retry_after > 0 || status->details_always;

	msd_json_string_append(out, status->message != NULL ? status->message : "", -1,
	                       MSD_JSON_STRING_GO);
	if (status->reason != NULL && status->reason[0] != '\0') {
		g_string_append(out, ",\"reason\":");
		msd_json_string_append(out, status->reason, -1, MSD_JSON_STRING_GO);
	}
	if (details) {
		const gchar *sep = "";
		g_string_append(out, ",\"details\":{");
		if (status->name != NULL && status->name[0] != '\0') {
			g_string_append(out, "\"name\":");
			msd_json_string_append(out, status->name, -1, MSD_JSON_STRING_GO);
			sep = ",";
		}
		if (status->group != NULL && status->group[0] != '\0') {
			g_string_append_printf(out, "%s\"group\":", sep);
			msd_json_string_append(out, status->group, -1, MSD_JSON_STRING_GO);
			sep = ",";
		}
		if (status->kind != NULL) {
			g_string_append_printf(out, "%s\"kind\":", sep);
			msd_json_string_append(out, status->kind, -1, MSD_JSON_STRING_GO);
			sep = ",";
		}
		if (status->cause_field != NULL || status->cause_reason != NULL) {
			g_string_append_printf(out, "%s\"causes\":[{\"reason\":", sep);
			msd_json_string_append(out,
			                       status->cause_reason != NULL ? status->cause_reason
			                                                    : "FieldValueInvalid",
			                       -1, MSD_JSON_STRING_GO);
			g_string_append(out, ",\"message\":");
			msd_json_string_append(out,
			                       status->cause_message != NULL ? status->cause_message
			                                                     : status->message,
			                       -1, MSD_JSON_STRING_GO);
			if (status->cause_field != NULL) {
				g_string_append(out, ",\"field\":");
				msd_json_string_append(out, status->cause_field, -1,
				                       MSD_JSON_STRING_GO);
			}
			g_string_append(out, "}]");
			sep = ",";
		}
		if (status->retry_after > 0)
			g_string_append_printf(out, "%s\"retryAfterSeconds\":%u", sep,
			                       status->retry_after);
		g_string_append_c(out, '}');
	}
	g_string_append_printf(out, ",\"code\":%u}", status->code);
	return g_string_free(out, FALSE);
}

KubesimStatus *
kubesim_status_not_found(const gchar *group, const gchar *resource, const gchar *name)
{
	KubesimStatus *status;

	if (group != NULL && group[0] != '\0')
		status = kubesim_status_new(404, "NotFound", "%s.%s \"%s\" not found", resource,
		                            group, name);
	else
		status = kubesim_status_new(404, "NotFound", "%s \"%s\" not found", resource, name);
	return kubesim_status_details(status, group, resource, name);
}

KubesimStatus *
kubesim_status_invalid(
        const gchar *group, const gchar *kind, const gchar *name, const gchar *format, ...)
{
	KubesimStatus *status = g_new0(KubesimStatus, 1);
	g_autofree gchar *detail = NULL;
	va_list args;

	va_start(args, format);
	detail = g_strdup_vprintf(format, args);
	va_end(args);
	status->code = 422;
	status->reason = g_strdup("Invalid");
	status->message =
	        g_strdup_printf("%s \"%s\" is invalid: %s", kind != NULL ? kind : "object",
	                        name != NULL ? name : "", detail);
	return kubesim_status_details(status, group, kind, name);
}

KubesimStatus *
kubesim_status_new_invalid_list_options(const gchar *field, const gchar *message)
{
	KubesimStatus *status = kubesim_status_new(422, "Invalid",
	                                           "ListOptions.meta.k8s.io \"\" "
	                                           "is invalid: %s: %s",
	                                           field, message);

	kubesim_status_details(status, "meta.k8s.io", "ListOptions", "");
	status->cause_field = g_strdup(field);
	/* field.Error: the cause says the detail alone, and its type as a reason */
	status->cause_message = g_strdup(message);
	if (g_str_has_prefix(message, "Forbidden:"))
		status->cause_reason = g_strdup("FieldValueForbidden");
	else if (g_str_has_prefix(message, "Unsupported value:"))
		status->cause_reason = g_strdup("FieldValueNotSupported");
	else if (g_str_has_prefix(message, "Required value"))
		status->cause_reason = g_strdup("FieldValueRequired");
	return status;
}

KubesimStatus *
kubesim_status_new_too_large_rv(guint64 wanted, guint64 current, guint retry_after)
{
	KubesimStatus *status =
	        kubesim_status_new(504, "Timeout",
	                           "Timeout: Too large resource version: "
	                           "%" G_GUINT64_FORMAT ", current: %" G_GUINT64_FORMAT,
	                           wanted, current);

	status->cause_reason = g_strdup("ResourceVersionTooLarge");
	status->cause_message = g_strdup("Too large resource version");
	status->retry_after = retry_after;
	return status;
}
