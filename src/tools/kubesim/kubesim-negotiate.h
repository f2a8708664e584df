/*
 * Copyright the meshsync authors
 * SPDX-License-Identifier: Apache-2.0
 */

#pragma once

#include <libsoup/soup.h>

#include "kubesim-status.h"
#include "kubesim-store.h"

G_BEGIN_DECLS

/*
 * The form a read is answered in, as the API server chooses it from the Accept header of a
 * get, list or watch: the object itself, a Table, or its metadata alone
 * (PartialObjectMetadata, PartialObjectMetadataList). kubesim writes every form as JSON,
 * whichever serialization (YAML, protobuf) the header puts first.
 */
typedef enum {
	KUBESIM_FORM_OBJECT,
	KUBESIM_FORM_TABLE,
	KUBESIM_FORM_METADATA,
	KUBESIM_FORM_METADATA_LIST,
} KubesimFormKind;

typedef struct {
	KubesimFormKind kind;
	const gchar *version; /* meta.k8s.io's version of the metadata forms: "v1" or "v1beta1" */
} KubesimForm;

/*
 * Negotiates the form of a get (@collection FALSE) or a list or watch (@collection TRUE):
 * NULL with @form set, or the 406 Status the API server answers when nothing in the header
 * can be served (go-restful's "Available representations", then the API server's own "only
 * the following media types are accepted").
 */
KubesimStatus *kubesim_negotiate(SoupServerMessage *msg, gboolean collection, KubesimForm *form);

/*
 * Whether an error can be written by the negotiated Status encoder (compact, a newline at the
 * end). FALSE when every media range of the header asks for a conversion (as=...) or none is
 * served: the API server then falls back to Go's indented JSON, with no newline.
 */
gboolean kubesim_negotiate_compact_errors(SoupServerMessage *msg);

/*
 * The 406 a real server answers when the negotiated metadata form does not fit what was read
 * (PartialObjectMetadata of a list, PartialObjectMetadataList of one object; for one custom
 * resource the 500 its unstructured form gets instead), or NULL.
 */
KubesimStatus *
kubesim_form_check(const KubesimForm *form, const KubesimResource *res, gboolean list);

G_END_DECLS
