/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <libsoup/soup.h>

#include "kubesim-store.h"

G_BEGIN_DECLS

/*
 * Faults armed from the admin endpoint for the next list or watch requests: HTTP errors as a
 * real server (or what stands in front of it) sends them, a connection reset in the middle of
 * a list, and hostile bodies for the bounded-input limits of clients. Each fault answers a
 * given number of matching requests and counts those it answered, so that a test can check
 * that its faults were consumed.
 */

typedef enum {
	KUBESIM_FAULT_ON_LIST = 1 << 0,
	KUBESIM_FAULT_ON_WATCH = 1 << 1,
} KubesimFaultOn;

typedef enum {
	KUBESIM_FAULT_STATUS,    /* an HTTP error with its Status (429: plain text, Retry-After) */
	KUBESIM_FAULT_TOO_LARGE, /* 504 "Too large resource version", as an HTTP answer */
	KUBESIM_FAULT_RESET,     /* part of the response, then a TCP reset */
	KUBESIM_FAULT_TRUNCATED, /* a complete HTTP response whose JSON stops short */
	KUBESIM_FAULT_GARBAGE,   /* binary garbage for a body (list) or a stream (watch) */
	KUBESIM_FAULT_ENDLESS,   /* a list whose items never end */
	KUBESIM_FAULT_DEEP,      /* one object nested deeper than parsers should accept */
	KUBESIM_FAULT_HUGE,      /* one object of a chosen size */
	KUBESIM_FAULT_LABELS,    /* one object with a chosen number of labels */
} KubesimFaultKind;

typedef struct {
	gint ref_count;
	guint id;
	KubesimFaultKind kind;
	guint on;        /* KubesimFaultOn */
	gchar *path;     /* (nullable): only requests for this path */
	gchar *resource; /* (nullable): only this resource, "pods" or "deployments.apps" */
	guint count;     /* requests to answer */
	guint consumed;  /* requests answered so far */
	/* STATUS */
	guint code;
	gchar *reason;  /* (nullable): the code's usual reason */
	gchar *message; /* (nullable): the usual message */
	guint retry_after;
	/* RESET, TRUNCATED: bytes of the body sent (G_MAXUINT64: half); GARBAGE, HUGE: size */
	guint64 bytes;
	guint depth;  /* DEEP */
	guint labels; /* LABELS */
	gdouble rate; /* ENDLESS: items per second, 0 as fast as the client reads */
} KubesimFault;

KubesimFault *kubesim_fault_ref(KubesimFault *fault);
void kubesim_fault_unref(KubesimFault *fault);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(KubesimFault, kubesim_fault_unref)

/* The armed faults of a server, oldest first; consumed ones stay listed until cleared. */
typedef struct {
	GPtrArray *all; /* KubesimFault */
	guint next_id;
} KubesimFaults;

void kubesim_faults_init(KubesimFaults *faults);
void kubesim_faults_clear(KubesimFaults *faults);

/* Arms a fault from the admin query; NULL and a 400 Status when the query is wrong. */
KubesimFault *
kubesim_faults_arm(KubesimFaults *faults, GHashTable *query, KubesimStatus **status_out);
/* Forgets fault @id, or every fault when @id is 0; FALSE when there is no such fault. */
gboolean kubesim_faults_forget(KubesimFaults *faults, guint id);
/* {"faults":[{"id":..,"fault":..,"on":..,"count":..,"consumed":..,"remaining":..},...]} */
gchar *kubesim_faults_to_json(KubesimFaults *faults);
guint kubesim_faults_count_armed(KubesimFaults *faults);

/*
 * The first armed fault for a request @on a list or a watch of @res at @path, counted as
 * consumed; NULL when none matches.
 */
KubesimFault *kubesim_faults_take(KubesimFaults *faults,
                                  KubesimFaultOn on,
                                  const gchar *path,
                                  KubesimResource *res);

/* Whether @fault adds an object to the response rather than replacing it. */
gboolean kubesim_fault_injects_object(const KubesimFault *fault);

/*
 * Appends the object a DEEP, HUGE or LABELS fault adds, of resource @res in @ns, at @rv: with
 * kind and apiVersion when @typed_item is FALSE. Its bytes go to @body as several chunks
 * (a huge object is mostly one static buffer repeated), so it costs little memory here.
 * Returns the bytes appended.
 */
gsize kubesim_fault_append_object(const KubesimFault *fault,
                                  SoupMessageBody *body,
                                  KubesimResource *res,
                                  const gchar *ns,
                                  guint64 rv,
                                  gboolean typed_item);

/* Answers with the Status (or APF's plain 429) of a STATUS or TOO_LARGE fault; @rv: the
 * request's. */
void kubesim_fault_respond_status(const KubesimFault *fault,
                                  SoupServerMessage *msg,
                                  gboolean watch,
                                  const gchar *rv,
                                  guint64 current_rv,
                                  guint64 history_floor);
/* Answers with garbage: a body of a list, or a watch stream that then ends. */
void
kubesim_fault_respond_garbage(const KubesimFault *fault, SoupServerMessage *msg, gboolean watch);
/* Sends the 200 headers of a watch stream, then resets the connection. */
void kubesim_fault_reset_watch(const KubesimFault *fault, SoupServerMessage *msg);
/* Turns the complete list response in @msg into what a RESET or TRUNCATED fault sends. */
void kubesim_fault_finish_list(const KubesimFault *fault, SoupServerMessage *msg);

G_END_DECLS
